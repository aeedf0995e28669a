#include "base/blob.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace gpuu {

void Blob::drop_file_pages() const {
  if (!file_pages_ || size_ == 0) return;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data_) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data_) + size_ + page - 1) & ~(page - 1);
  // Advice only: a failure leaves the pages where they were.
  (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace gpuu

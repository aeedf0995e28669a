#include "base/blob.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

namespace gpuu {

Blob Blob::derived(std::vector<Blob> sources, std::string how, size_t size, Make make) {
  auto d = std::make_shared<Derived>();
  d->sources = std::move(sources);
  d->how = std::move(how);
  d->size = size;
  d->make = std::move(make);
  Blob b;
  b.size_ = size;
  b.derived_ = d.get();
  b.owner_ = std::move(d);
  return b;
}

const uint8_t* Blob::Derived::made() const {
  std::call_once(once, [this] {
    bytes.resize(size);
    make(sources, bytes.data());
  });
  return bytes.data();
}

void Blob::write_to(uint8_t* out) const {
  if (size_ == 0) return;
  if (derived_) {
    derived_->make(derived_->sources, out);
  } else {
    std::memcpy(out, data_, size_);
  }
}

std::string Blob::name() const {
  if (!derived_) {
    char stored[48];
    std::snprintf(stored, sizeof stored, "%p+%zu", static_cast<const void*>(data_), size_);
    return stored;
  }
  std::string out = derived_->how + "(";
  for (size_t i = 0; i < derived_->sources.size(); ++i) out += (i ? "," : "") + derived_->sources[i].name();
  return out + ")";
}

Blob Blob::without_made_bytes() const {
  if (!derived_) return *this;
  std::vector<Blob> sources;
  for (const Blob& s : derived_->sources) sources.push_back(s.without_made_bytes());
  return derived(std::move(sources), derived_->how, derived_->size, derived_->make);
}

void Blob::drop_file_pages() const {
  if (derived_) {
    for (const Blob& s : derived_->sources) s.drop_file_pages();
    return;
  }
  if (!file_pages_ || size_ == 0) return;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data_) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data_) + size_ + page - 1) & ~(page - 1);
  // Advice only: a failure leaves the pages where they were.
  (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace gpuu

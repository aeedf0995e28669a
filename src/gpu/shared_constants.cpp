// The process-wide table of shared constants: weak entries by device, address and size.
#include "gpu/shared_constants.h"

#include <map>
#include <mutex>
#include <tuple>

#include "gpu/submission.h"

namespace gpuu::gpu {
namespace {

using Key = std::tuple<VkDevice, const void*, size_t>;

struct Table {
  std::mutex mutex;
  std::map<Key, std::weak_ptr<const SharedConstant>> entries;
};

Table& table() {
  static Table* t = new Table();  // never destroyed: holders may outlive static teardown
  return *t;
}

}  // namespace

Result<std::shared_ptr<const SharedConstant>> share_constant(const SharedGpuContextPtr& ctx, VkCommandPool pool,
                                                             const Blob& data) {
  Table& t = table();
  const Key key{ctx->device(), data.data(), data.size()};
  // Held across the upload: two delegates asking at once get one copy.
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(key);
  if (it != t.entries.end()) {
    if (std::shared_ptr<const SharedConstant> held = it->second.lock()) return held;
  }
  GPUU_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::create(*ctx, data.size(), MemoryKind::kDevice, "weight"));
  GPUU_RETURN_IF_ERROR(upload_once(*ctx, pool, buffer, 0, data.data(), data.size()));
  auto shared = std::make_shared<const SharedConstant>(ctx, data, std::move(buffer));
  for (auto e = t.entries.begin(); e != t.entries.end();) e = e->second.expired() ? t.entries.erase(e) : std::next(e);
  t.entries[key] = shared;
  return std::shared_ptr<const SharedConstant>(shared);
}

size_t shared_constant_count() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  size_t held = 0;
  for (const auto& [key, entry] : t.entries) held += entry.expired() ? 0 : 1;
  return held;
}

}  // namespace gpuu::gpu

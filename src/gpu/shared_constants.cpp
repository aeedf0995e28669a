// The process-wide table of shared constants: weak entries by device, address and size.
#include "gpu/shared_constants.h"

#include <tuple>

#include "base/weak_table.h"
#include "gpu/submission.h"

namespace gpuu::gpu {
namespace {

using Table = WeakTable<std::tuple<VkDevice, const void*, size_t>, const SharedConstant>;

Table& table() {
  static Table* t = new Table();  // never destroyed: holders may outlive static teardown
  return *t;
}

}  // namespace

Result<std::shared_ptr<const SharedConstant>> share_constant(const SharedGpuContextPtr& ctx, VkCommandPool pool,
                                                             const Blob& data) {
  // Made under the table's lock: two delegates asking at once get one copy.
  return table().find_or_make({ctx->device(), data.data(), data.size()},
                              [&]() -> Result<std::shared_ptr<const SharedConstant>> {
                                GPUU_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::create(*ctx, data.size(),
                                                                                                MemoryKind::kDevice,
                                                                                                "weight"));
                                GPUU_RETURN_IF_ERROR(upload_once(*ctx, pool, buffer, 0, data.data(), data.size()));
                                data.drop_file_pages();  // the device has them now
                                return std::make_shared<const SharedConstant>(ctx, data, std::move(buffer));
                              });
}

size_t shared_constant_count() { return table().held(); }

bool shared_constant_held(const Blob& data) {
  return table().held_any(
      [&](const auto& key) { return std::get<1>(key) == data.data() && std::get<2>(key) == data.size(); });
}

}  // namespace gpuu::gpu

// The process-wide table of shared constants: weak entries by device and the bytes' Blob::name().
#include "gpu/shared_constants.h"

#include <string>
#include <utility>
#include <vector>

#include "base/weak_table.h"
#include "gpu/submission.h"

namespace gpuu::gpu {
namespace {

using Table = WeakTable<std::pair<VkDevice, std::string>, const SharedConstant>;

Table& table() {
  static Table* t = new Table();  // never destroyed: holders may outlive static teardown
  return *t;
}

}  // namespace

Result<std::shared_ptr<const SharedConstant>> share_constant(const SharedGpuContextPtr& ctx, VkCommandPool pool,
                                                             const Blob& data) {
  // Made under the table's lock: two delegates asking at once get one copy.
  return table().find_or_make(
      {ctx->device(), data.name()}, [&]() -> Result<std::shared_ptr<const SharedConstant>> {
        GPUU_ASSIGN_OR_RETURN(DeviceBuffer buffer,
                              DeviceBuffer::create(*ctx, data.size(), MemoryKind::kDevice, "weight"));
        if (buffer.host_writable()) {
          data.write_to(static_cast<uint8_t*>(buffer.mapped()));  // unified memory: made in place
        } else if (data.is_derived()) {
          std::vector<uint8_t> made(data.size());  // one weight's bytes, for the upload only
          data.write_to(made.data());
          GPUU_RETURN_IF_ERROR(upload_once(*ctx, pool, buffer, 0, made.data(), made.size()));
        } else {
          GPUU_RETURN_IF_ERROR(upload_once(*ctx, pool, buffer, 0, data.data(), data.size()));
        }
        data.drop_file_pages();  // the device has them now
        return std::make_shared<const SharedConstant>(ctx, data.without_made_bytes(), std::move(buffer));
      });
}

size_t shared_constant_count() { return table().held(); }

bool shared_constant_held(const Blob& data) {
  const std::string name = data.name();
  return table().held_any([&](const auto& key) { return key.second == name; });
}

}  // namespace gpuu::gpu

// C ABI: the list of registered backends and the loading of plugins.
#include "capi/capi_common.h"
#include "runtime/builtin_backends.h"

using namespace gpuu;
using namespace gpuu::capi;

namespace {

const backends::Backend* backend_at(size_t index) {
  std::vector<backends::Backend*> all = runtime::backend_registry().backends();
  return index < all.size() ? all[index] : nullptr;
}

}  // namespace

extern "C" {

GPUU_API gpuu_status gpuu_backends_load(const char* path_list, size_t* out_loaded) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (out_loaded) *out_loaded = 0;
    if (!path_list) return fail_invalid("gpuu_backends_load: path_list is NULL");
    plugins::LoadReport report = runtime::plugin_loader().load(path_list);
    if (out_loaded) *out_loaded = report.loaded.size();
    if (report.refused.empty()) return GPUU_OK;
    std::string message = "gpuu_backends_load refused " + std::to_string(report.refused.size()) + " of the paths:";
    for (const std::string& line : report.refused) message += "\n" + line;
    return fail(err(StatusCode::kInvalidArgument, message));
  });
}

GPUU_API size_t gpuu_backends_count(void) { return runtime::backend_registry().backends().size(); }

GPUU_API const char* gpuu_backends_id(size_t index) {
  const backends::Backend* b = backend_at(index);
  return b ? b->id() : nullptr;
}

GPUU_API uint32_t gpuu_backends_version(size_t index) {
  const backends::Backend* b = backend_at(index);
  return b ? b->version() : 0;
}

GPUU_API const char* gpuu_backends_plugin_path(size_t index) {
  const backends::Backend* b = backend_at(index);
  return b ? b->plugin_path() : nullptr;
}

}  // extern "C"

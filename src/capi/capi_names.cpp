// C ABI: the names of the public enums, and parsing them back. Each name has
// one home, where gpuu reads it from text (compile specs, graph attributes,
// GPUU_LOG); the VGF paths, a C-API-only option, have theirs here. The
// bindings and tools list and parse names through these functions.
#include <cstring>
#include <string>

#include "base/log.h"
#include "capi/capi_common.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "graph/graph.h"

using namespace gpuu;
using namespace gpuu::capi;

namespace gpuu::capi {
namespace {

// gpuu_vgf_path's values, in order: gpuu-run's --vgf_path and Python's vgf_path= take these.
const char* const kVgfPathNames[] = {"auto", "native", "executor"};
static_assert(sizeof(kVgfPathNames) / sizeof(kVgfPathNames[0]) == GPUU_VGF_PATH_EXECUTOR + 1,
              "a gpuu_vgf_path without a name");
static_assert(graph::kDTypeCount == GPUU_DTYPE_I16 + 1, "gpuu_dtype and graph::DType drifted");

// The value named `name` among those `name_of` gives for 0, 1, ... (until it
// gives NULL), into *out; else an error listing the names there are.
template <typename CEnum>
gpuu_status value_named(const char* function, const char* what, const char* name, CEnum* out,
                        const char* (*name_of)(CEnum)) {
  return guarded(function, [&]() -> gpuu_status {
    if (!name) return fail_invalid(function, ": `name` is NULL");
    if (!out) return fail_invalid(function, ": `out` is NULL");
    std::string known;
    for (int32_t v = 0; const char* n = name_of(static_cast<CEnum>(v)); ++v) {
      if (std::strcmp(n, name) == 0) {
        *out = static_cast<CEnum>(v);
        return GPUU_OK;
      }
      known += (known.empty() ? "" : ", ") + std::string(n);
    }
    return fail_invalid(function, ": unknown ", what, " '", name, "' (known: ", known, ")");
  });
}

}  // namespace
}  // namespace gpuu::capi

extern "C" {

GPUU_API const char* gpuu_log_level_name(gpuu_log_level level) {
  return log_level_name(static_cast<LogLevel>(level));
}

GPUU_API gpuu_status gpuu_log_level_from_name(const char* name, gpuu_log_level* out) {
  return value_named(__func__, "log level", name, out, &gpuu_log_level_name);
}

GPUU_API const char* gpuu_context_mode_name(gpuu_context_mode mode) { return to_string(static_cast<ContextMode>(mode)); }

GPUU_API gpuu_status gpuu_context_mode_from_name(const char* name, gpuu_context_mode* out) {
  return value_named(__func__, "context mode", name, out, &gpuu_context_mode_name);
}

GPUU_API const char* gpuu_sync_mode_name(gpuu_sync_mode mode) { return to_string(static_cast<SyncMode>(mode)); }

GPUU_API gpuu_status gpuu_sync_mode_from_name(const char* name, gpuu_sync_mode* out) {
  return value_named(__func__, "sync mode", name, out, &gpuu_sync_mode_name);
}

GPUU_API const char* gpuu_prefer_name(gpuu_prefer prefer) { return to_string(static_cast<Prefer>(prefer)); }

GPUU_API gpuu_status gpuu_prefer_from_name(const char* name, gpuu_prefer* out) {
  return value_named(__func__, "prefer policy", name, out, &gpuu_prefer_name);
}

GPUU_API const char* gpuu_dtype_name(gpuu_dtype dtype) {
  // graph::DType is 8 bits wide: check the range before narrowing.
  const int32_t value = static_cast<int32_t>(dtype);
  return value >= 0 && value < graph::kDTypeCount ? graph::dtype_name(static_cast<graph::DType>(value)) : nullptr;
}

GPUU_API gpuu_status gpuu_dtype_from_name(const char* name, gpuu_dtype* out) {
  return value_named(__func__, "dtype", name, out, &gpuu_dtype_name);
}

GPUU_API const char* gpuu_vgf_path_name(gpuu_vgf_path path) {
  const int32_t value = static_cast<int32_t>(path);
  return value >= GPUU_VGF_PATH_AUTO && value <= GPUU_VGF_PATH_EXECUTOR ? kVgfPathNames[value] : nullptr;
}

GPUU_API gpuu_status gpuu_vgf_path_from_name(const char* name, gpuu_vgf_path* out) {
  return value_named(__func__, "VGF path", name, out, &gpuu_vgf_path_name);
}

}  // extern "C"

// C ABI: versions, status strings, the per-thread last error, logging, and the
// shared compile-spec parser.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/log.h"
#include "capi/capi_common.h"
#include "compile_spec/shared_gpu_compile_spec.h"

using namespace gpuu;
using namespace gpuu::capi;

namespace gpuu::capi {
namespace {
thread_local std::string t_last_error;

// The C callback travels as the sink's user data. Boxes are kept for the life
// of the process: a message may still be in flight through an old sink.
struct LogCallbackBox {
  gpuu_log_callback callback;
  void* user_data;
};

void* keep_log_callback(gpuu_log_callback callback, void* user_data) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<LogCallbackBox>> boxes;
  std::lock_guard<std::mutex> lock(mutex);
  boxes.push_back(std::make_unique<LogCallbackBox>(LogCallbackBox{callback, user_data}));
  return boxes.back().get();
}

void forward_log(void* box, LogLevel level, const char* component, const char* message) {
  auto* b = static_cast<LogCallbackBox*>(box);
  b->callback(b->user_data, static_cast<gpuu_log_level>(level), component, message);
}

static_assert(static_cast<int>(StatusCode::kInternal) == GPUU_ERROR_INTERNAL, "status codes drifted");
static_assert(static_cast<int>(ContextMode::kCreateOnly) == GPUU_CONTEXT_CREATE_ONLY, "modes drifted");
static_assert(static_cast<int>(SyncMode::kNone) == GPUU_SYNC_NONE, "sync modes drifted");
static_assert(static_cast<int>(Prefer::kVulkanFirst) == GPUU_PREFER_VULKAN_FIRST, "prefer drifted");
static_assert(static_cast<int>(LogLevel::kTrace) == GPUU_LOG_TRACE, "log levels drifted");
static_assert(GPUU_MAX_TOKEN_LENGTH == kMaxTokenLength, "token length drifted");
}  // namespace

gpuu_status to_overrides(const char* function, const gpuu_context_overrides& o, ContextOverrides* out) {
  if (o.token) out->token = std::string(o.token);
  if (o.has_group_id) out->group_id = o.group_id;
  if (o.has_mode) {
    if (o.mode < GPUU_CONTEXT_DISABLED || o.mode > GPUU_CONTEXT_CREATE_ONLY) {
      return fail_invalid(function, ": unknown context mode value ", static_cast<int>(o.mode));
    }
    out->context_mode = static_cast<ContextMode>(o.mode);
  }
  if (o.has_sync_mode) {
    if (o.sync_mode < GPUU_SYNC_TIMELINE || o.sync_mode > GPUU_SYNC_NONE) {
      return fail_invalid(function, ": unknown sync mode value ", static_cast<int>(o.sync_mode));
    }
    out->sync_mode = static_cast<SyncMode>(o.sync_mode);
  }
  return GPUU_OK;
}

gpuu_status read_compile_specs(const char* function, const std::string& what, const gpuu_compile_spec* specs,
                               size_t count, std::vector<CompileSpecEntry>* out) {
  std::vector<gpuu_compile_spec> given;
  std::string why;
  if (!read_sized_array(specs, count, &gpuu_compile_spec_init_sized, &given, &why)) {
    return fail_invalid(function, ": ", what, ": ", why);
  }
  out->clear();
  for (size_t i = 0; i < given.size(); ++i) {
    if (!given[i].key) return fail_invalid(function, ": ", what, "[", i, "].key is NULL");
    if (given[i].value_size && !given[i].value) {
      return fail_invalid(function, ": ", what, "[", i, "] ('", given[i].key, "') has NULL value");
    }
    const uint8_t* v = static_cast<const uint8_t*>(given[i].value);
    out->push_back(CompileSpecEntry{given[i].key, std::vector<uint8_t>(v, v + given[i].value_size)});
  }
  return GPUU_OK;
}

gpuu_status fail(const Status& status) {
  t_last_error = status.message();
  log(LogLevel::kDebug, "api", status.to_string());
  return static_cast<gpuu_status>(status.code());
}

}  // namespace gpuu::capi

extern "C" {

GPUU_API uint32_t gpuu_version(void) { return GPUU_VERSION; }

GPUU_API const char* gpuu_version_string(void) {
#define GPUU_STR2(x) #x
#define GPUU_STR(x) GPUU_STR2(x)
  return GPUU_STR(GPUU_VERSION_MAJOR) "." GPUU_STR(GPUU_VERSION_MINOR) "." GPUU_STR(GPUU_VERSION_PATCH);
}

GPUU_API const char* gpuu_status_string(gpuu_status status) {
  if (status < GPUU_OK || status > GPUU_ERROR_INTERNAL) return "unknown status";
  return status_code_name(static_cast<StatusCode>(status));
}

GPUU_API const char* gpuu_last_error(void) { return t_last_error.c_str(); }

GPUU_API void gpuu_set_log_callback(gpuu_log_callback callback, void* user_data, gpuu_log_level max_level) {
  int level = static_cast<int>(max_level);
  if (level < GPUU_LOG_ERROR) level = GPUU_LOG_ERROR;
  if (level > GPUU_LOG_TRACE) level = GPUU_LOG_TRACE;
  if (!callback) {
    set_log_sink(nullptr, nullptr, LogLevel::kWarn);
    return;
  }
  set_log_sink(&forward_log, keep_log_callback(callback, user_data), static_cast<LogLevel>(level));
}

GPUU_API void gpuu_context_overrides_init_sized(gpuu_context_overrides* overrides, size_t struct_size) {
  init_sized(overrides, struct_size, [](gpuu_context_overrides* overrides) {
    // Read only where has_mode / has_sync_mode is set; the defaults keep them valid values.
    overrides->mode = static_cast<gpuu_context_mode>(kDefaultContextMode);
    overrides->sync_mode = static_cast<gpuu_sync_mode>(kDefaultSyncMode);
  });
}

GPUU_API void gpuu_compile_spec_init_sized(gpuu_compile_spec* spec, size_t struct_size) {
  init_sized(spec, struct_size, [](gpuu_compile_spec*) {});
}

GPUU_API void gpuu_shared_spec_init_sized(gpuu_shared_spec* spec, size_t struct_size) {
  init_sized(spec, struct_size, [](gpuu_shared_spec* spec) {
    SharedGpuCompileSpec defaults;
    copy_string(spec->token, sizeof(spec->token), defaults.token);
    spec->group_id = defaults.group_id;
    spec->mode = static_cast<gpuu_context_mode>(defaults.context_mode);
    spec->sync_mode = static_cast<gpuu_sync_mode>(defaults.sync_mode);
    spec->min_partition_size = defaults.min_partition_size;
    spec->prefer = static_cast<gpuu_prefer>(defaults.prefer);
  });
}

GPUU_API gpuu_status gpuu_shared_spec_parse(const gpuu_compile_spec* specs, size_t count,
                                            const gpuu_context_overrides* overrides, gpuu_shared_spec* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!struct_size_ok(out, FirstRelease<gpuu_shared_spec>::size)) {
      return fail_struct_size("gpuu_shared_spec_parse", "out", out);
    }
    std::vector<CompileSpecEntry> entries;
    if (gpuu_status s = read_compile_specs("gpuu_shared_spec_parse", "specs", specs, count, &entries)) return s;
    ContextOverrides ov;
    if (overrides) {
      gpuu_context_overrides o;
      if (!read_sized(overrides, &gpuu_context_overrides_init_sized, &o)) {
        return fail_struct_size("gpuu_shared_spec_parse", "overrides", overrides);
      }
      if (gpuu_status s = to_overrides("gpuu_shared_spec_parse", o, &ov)) return s;
    }
    Result<SharedGpuCompileSpec> parsed = parse_shared_gpu_compile_spec(entries, overrides ? &ov : nullptr);
    if (!parsed.ok()) return fail(parsed.status());
    const SharedGpuCompileSpec& s = parsed.value();
    gpuu_shared_spec result;
    gpuu_shared_spec_init(&result);
    copy_string(result.token, sizeof(result.token), s.token);
    result.group_id = s.group_id;
    result.mode = static_cast<gpuu_context_mode>(s.context_mode);
    result.sync_mode = static_cast<gpuu_sync_mode>(s.sync_mode);
    result.min_partition_size = s.min_partition_size;
    result.prefer = static_cast<gpuu_prefer>(s.prefer);
    result.present = s.present ? 1 : 0;
    write_sized(result, out);
    return GPUU_OK;
  });
}

}  // extern "C"

// C ABI: writing program files (to a path or to memory) from a graph and its
// partition, with the shared-context settings baked into every delegate.
#include <cstdlib>
#include <cstring>

#include "capi/capi_common.h"
#include "runtime/builtin_backends.h"
#include "capi/handles.h"
#include "program/program_writer.h"

using namespace gpuu;
using namespace gpuu::capi;

namespace gpuu::capi {
namespace {

// An enum field as the int a C caller stored: any 32-bit value may arrive, and
// loading an out-of-range value as the C++ enum type would be undefined.
template <typename Enum>
int32_t raw_enum(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int32_t), "gpuu enums are 32-bit");
  int32_t v = 0;
  std::memcpy(&v, &field, sizeof(v));
  return v;
}

// The caller's extra compile specs: for every delegate, and per backend id
// (each id registered, and given once).
gpuu_status read_caller_specs(const char* function, const gpuu_program_write_options& o,
                              program::CallerCompileSpecs* out) {
  if (gpuu_status s = read_compile_specs(function, "options->extra_shared_compile_specs",
                                         o.extra_shared_compile_specs, o.extra_shared_compile_spec_count, &out->shared)) {
    return s;
  }
  std::vector<gpuu_backend_compile_specs> given;
  std::string why;
  if (!read_sized_array(o.backend_compile_specs, o.backend_compile_specs_count, &gpuu_backend_compile_specs_init_sized,
                        &given, &why)) {
    return fail_invalid(function, ": options->backend_compile_specs: ", why);
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const std::string what = str_cat("options->backend_compile_specs[", i, "]");
    if (!given[i].backend) return fail_invalid(function, ": ", what, ".backend is NULL");
    const std::string id = given[i].backend;
    if (!runtime::backend_registry().find(id)) {
      std::string known;
      for (const std::string& k : runtime::backend_registry().ids()) known += (known.empty() ? "" : ", ") + k;
      return fail_invalid(function, ": ", what, ": unknown backend id '", id, "' (registered: ", known, ")");
    }
    if (out->by_backend.count(id)) return fail_invalid(function, ": ", what, ": backend id '", id, "' is given twice");
    if (gpuu_status s = read_compile_specs(function, what + ".specs", given[i].specs, given[i].count,
                                           &out->by_backend[id])) {
      return s;
    }
  }
  return GPUU_OK;
}

gpuu_status build(const char* function, const gpuu_graph* graph, const gpuu_partition* partition,
                  const gpuu_program_write_options* options, std::vector<uint8_t>* out) {
  gpuu_program_write_options o;
  if (gpuu_status s = read_program_write_options(function, options, &o)) return s;
  if (!graph) return fail_invalid(function, ": `graph` is NULL");
  if (!partition) return fail_invalid(function, ": `partition` is NULL");
  // The partition's policy (prefer, minimum partition size) plus the context settings.
  SharedGpuCompileSpec spec = partition->shared_spec;
  spec.token = o.token;
  spec.group_id = o.group_id;
  spec.context_mode = static_cast<ContextMode>(o.mode);
  spec.sync_mode = static_cast<SyncMode>(o.sync_mode);
  spec.present = true;
  program::CallerCompileSpecs caller_specs;
  if (gpuu_status s = read_caller_specs(function, o, &caller_specs)) return s;
  Result<std::vector<uint8_t>> bytes = program::build_program(graph->graph, partition->result, spec,
                                                              runtime::builtin_program_preprocessors(), caller_specs);
  if (!bytes.ok()) return fail(Status(bytes.status().code(), str_cat(function, ": ", bytes.status().message())));
  *out = std::move(bytes).value();
  return GPUU_OK;
}

}  // namespace

gpuu_status read_program_write_options(const char* function, const gpuu_program_write_options* options,
                                       gpuu_program_write_options* out) {
  gpuu_program_write_options_init(out);
  if (!options) return GPUU_OK;
  if (!read_sized(options, &gpuu_program_write_options_init_sized, out)) return fail_struct_size(function, "options", options);
  if (!out->token || !*out->token) return fail_invalid(function, ": options->token is NULL or empty");
  if (std::strlen(out->token) > GPUU_MAX_TOKEN_LENGTH) {
    return fail_invalid(function, ": options->token is longer than ", GPUU_MAX_TOKEN_LENGTH, " bytes");
  }
  if (out->group_id < 0) return fail_invalid(function, ": options->group_id ", out->group_id, " is < 0");
  int32_t mode = raw_enum(out->mode);
  if (mode < GPUU_CONTEXT_DISABLED || mode > GPUU_CONTEXT_CREATE_ONLY) {
    return fail_invalid(function, ": options->mode ", mode, " is not a gpuu_context_mode");
  }
  int32_t sync_mode = raw_enum(out->sync_mode);
  if (sync_mode < GPUU_SYNC_TIMELINE || sync_mode > GPUU_SYNC_NONE) {
    return fail_invalid(function, ": options->sync_mode ", sync_mode, " is not a gpuu_sync_mode");
  }
  return GPUU_OK;
}
}  // namespace gpuu::capi

extern "C" {

GPUU_API void gpuu_backend_compile_specs_init_sized(gpuu_backend_compile_specs* p, size_t struct_size) {
  init_sized(p, struct_size, [](gpuu_backend_compile_specs*) {});
}

GPUU_API void gpuu_program_write_options_init_sized(gpuu_program_write_options* options, size_t struct_size) {
  init_sized(options, struct_size, [](gpuu_program_write_options* options) {
    set_context_defaults(options);
    options->sync_mode = static_cast<gpuu_sync_mode>(kDefaultSyncMode);
  });
}

GPUU_API gpuu_status gpuu_program_write(const gpuu_graph* graph, const gpuu_partition* partition,
                                        const gpuu_program_write_options* options, const char* path) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!path || !*path) return fail_invalid("gpuu_program_write: `path` is NULL or empty");
    std::vector<uint8_t> bytes;
    if (gpuu_status s = build("gpuu_program_write", graph, partition, options, &bytes)) return s;
    return to_c(program::write_file_atomically(path, bytes));
  });
}

GPUU_API gpuu_status gpuu_program_write_to_memory(const gpuu_graph* graph, const gpuu_partition* partition,
                                                  const gpuu_program_write_options* options, void** out_data,
                                                  size_t* out_size) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out_data || !out_size) return fail_invalid("gpuu_program_write_to_memory: `out_data` or `out_size` is NULL");
    *out_data = nullptr;
    *out_size = 0;
    std::vector<uint8_t> bytes;
    if (gpuu_status s = build("gpuu_program_write_to_memory", graph, partition, options, &bytes)) return s;
    void* data = std::malloc(bytes.empty() ? 1 : bytes.size());
    if (!data)
      return fail(
          err(StatusCode::kOutOfMemory, "gpuu_program_write_to_memory: cannot allocate ", bytes.size(), " bytes"));
    std::memcpy(data, bytes.data(), bytes.size());
    *out_data = data;
    *out_size = bytes.size();
    return GPUU_OK;
  });
}

GPUU_API void gpuu_program_bytes_free(void* data) { std::free(data); }

}  // extern "C"

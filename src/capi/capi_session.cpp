// C ABI: loading programs and running them in sessions.
#include <atomic>
#include <cstddef>
#include <functional>
#include <string>

#include "capi/capi_common.h"
#include "capi/handles.h"
#include "partition/backend_capability.h"
#include "program/program_loader.h"
#include "runtime/builtin_backends.h"
#include "runtime/session.h"

struct gpuu_session {
  std::unique_ptr<gpuu::runtime::Session> session;
  gpuu::runtime::ExecuteStats last_stats;
  // The last execute's profile as the gpuu_session_profile_* functions gave
  // it (borrowed by the caller), made on request; each execute clears them.
  mutable std::string profile_json, profile_trace, profile_text;
};

using namespace gpuu;
using namespace gpuu::capi;

namespace gpuu::capi {
namespace {

gpuu_status check_session(const gpuu_session* s, const char* function) {
  if (!s || !s->session) return fail_invalid(function, ": session is NULL");
  return GPUU_OK;
}

gpuu_status fill_info(const runtime::TensorDesc& d, gpuu_tensor_info* out, const char* function) {
  gpuu_tensor_info info{};
  info.struct_size = sizeof(info);
  info.name = d.name.c_str();
  info.dtype = static_cast<gpuu_dtype>(d.dtype);
  info.rank = static_cast<uint32_t>(d.shape.size());
  info.shape = d.shape.data();
  info.byte_size = d.bytes;
  if (!write_sized(info, out)) return fail_struct_size(function, "out", out);
  return GPUU_OK;
}

// gpuu_session_input_info/output_info/state_info: entry `index` of the
// session's `list` (inputs, outputs or states, which `what` names).
using DescList = const std::vector<runtime::TensorDesc>& (runtime::Session::*)() const;
gpuu_status info_at(const gpuu_session* session, DescList list, const char* what, size_t index,
                    gpuu_tensor_info* out, const char* function) {
  if (gpuu_status s = check_session(session, function)) return s;
  const std::vector<runtime::TensorDesc>& descs = ((*session->session).*list)();
  if (index >= descs.size()) {
    return fail_invalid(function, ": index ", index, " is out of range (", descs.size(), " ", what, ")");
  }
  return fill_info(descs[index], out, function);
}

// The session's last profile rendered by `render` into `*cache` (kept until
// the next execute), borrowed through `out`.
gpuu_status profile_as(const gpuu_session* s, const char** out, const char* function, std::string* cache,
                       const std::function<std::string(const runtime::ExecuteProfile&)>& render, bool reuse) {
  if (!out) return fail_invalid(function, ": `out` is NULL");
  *out = nullptr;
  if (gpuu_status status = check_session(s, function)) return status;
  if (!s->session->profiling()) {
    return fail(err(StatusCode::kFailedPrecondition, function,
                    ": the session does not profile (create it with gpuu_session_options.profile set)"));
  }
  Result<const runtime::ExecuteProfile*> profile = s->session->last_profile();
  if (!profile.ok()) return fail(Status(profile.status().code(), str_cat(function, ": ", profile.status().message())));
  if (!reuse || cache->empty()) *cache = render(*profile.value());
  *out = cache->c_str();
  return GPUU_OK;
}

gpuu_status wrap_program(Result<std::shared_ptr<const program::Program>> loaded, gpuu_program** out) {
  if (!loaded.ok()) return fail(loaded.status());
  *out = new gpuu_program{std::move(loaded).value()};
  return GPUU_OK;
}

// gpuu_session_options.vgf_path (0.x) is VgfBackend's option data_graph_path
// (backends/vgf/vgf_options.h, which the C API does not include), its values
// gpuu_vgf_path_name's.
constexpr const char* kDataGraphPathKey = "data_graph_path";

// The backend options of `o` (vgf_path among them) into `out`, checked
// against the registered backends' declarations: every problem in one
// message. `o.vgf_path` is a known value.
gpuu_status read_backend_options(const char* function, const gpuu_session_options& o,
                                 std::vector<backends::BackendOption>* out) {
  std::vector<std::string> problems;
  std::vector<gpuu_backend_option> given;
  std::string why;
  if (!read_sized_array(o.backend_options, o.backend_option_count, &gpuu_backend_option_init_sized, &given, &why)) {
    problems.push_back("options->backend_options: " + why);
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const gpuu_backend_option& g = given[i];
    if (!g.backend || !g.key || !g.value) {
      problems.push_back(str_cat("backend_options[", i, "].", !g.backend ? "backend" : !g.key ? "key" : "value",
                                 " is NULL"));
      continue;
    }
    out->push_back({g.backend, g.key, g.value});
  }
  if (o.vgf_path != GPUU_VGF_PATH_AUTO) {
    backends::BackendOption legacy{partition::kVgfId, kDataGraphPathKey, gpuu_vgf_path_name(o.vgf_path)};
    bool set = false;
    for (const backends::BackendOption& b : *out) {
      if (b.backend != legacy.backend || b.key != legacy.key) continue;
      set = true;
      if (b.value != legacy.value) {
        problems.push_back(str_cat("vgf_path ", legacy.value, " conflicts with '", backends::describe_option(b),
                                   "' (vgf_path is the 0.x spelling of that option: set one, or both alike)"));
      }
    }
    if (!set) out->push_back(std::move(legacy));
  }
  for (std::string& p : backends::option_problems(runtime::backend_registry().backends(), *out)) {
    problems.push_back(std::move(p));
  }
  Status status = backends::options_status(problems);
  return status.ok() ? GPUU_OK : fail(Status(status.code(), str_cat(function, ": ", status.message())));
}

// What gpuu_session_bind_input_buffer and _output_buffer share: the buffer
// is bound for the copy its direction needs (read from, or written to).
gpuu_status bind_directed(gpuu_session* session, const char* function, bool output, size_t index,
                          gpuu_vk_buffer buffer, uint64_t offset, uint64_t size) {
  if (gpuu_status s = check_session(session, function)) return s;
  runtime::Session& rt = *session->session;
  VkBuffer vk_buffer = reinterpret_cast<VkBuffer>(buffer);
  return to_c(output ? rt.bind_output_buffer(index, vk_buffer, offset, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT)
                     : rt.bind_input_buffer(index, vk_buffer, offset, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT));
}

}  // namespace
}  // namespace gpuu::capi

extern "C" {

GPUU_API gpuu_status gpuu_program_load_file(const char* path, gpuu_program** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid("gpuu_program_load_file: `out` is NULL");
    *out = nullptr;
    if (!path || !*path) return fail_invalid("gpuu_program_load_file: path is NULL or empty");
    return wrap_program(program::load_program_file(path), out);
  });
}

GPUU_API gpuu_status gpuu_program_load_memory(const void* data, size_t size, gpuu_program** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid("gpuu_program_load_memory: `out` is NULL");
    *out = nullptr;
    if (!data && size) return fail_invalid("gpuu_program_load_memory: data is NULL but size is ", size);
    return wrap_program(program::load_program_bytes(data, size), out);
  });
}

GPUU_API gpuu_status gpuu_program_load_mapped(const void* data, size_t size, void (*release)(void* user), void* user,
                                              gpuu_program** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid("gpuu_program_load_mapped: `out` is NULL");
    *out = nullptr;
    if (!data || !size) return fail_invalid("gpuu_program_load_mapped: data is NULL or size is 0");
    if (reinterpret_cast<uintptr_t>(data) % program::kSegmentAlignment != 0) {
      return fail_invalid("gpuu_program_load_mapped: data must be ", program::kSegmentAlignment,
                          "-byte aligned to be used in place (gpuu_program_load_memory copies unaligned bytes)");
    }
    // The owner calls `release` when the last view of the bytes goes, once the
    // program exists: a refused file leaves them the caller's, unreleased.
    struct Lender {
      void (*release)(void*);
      void* user;
      bool lent = false;
    };
    auto lender = std::make_shared<Lender>(Lender{release, user});
    std::shared_ptr<const void> owner(data, [lender](const void*) {
      if (lender->lent && lender->release) lender->release(lender->user);
    });
    Result<std::shared_ptr<const program::Program>> loaded = program::load_program_blob(Blob::view(data, size, owner));
    owner.reset();
    if (loaded.ok()) lender->lent = true;
    return wrap_program(std::move(loaded), out);
  });
}

GPUU_API void gpuu_program_release(gpuu_program* program) { delete program; }

GPUU_API size_t gpuu_program_delegate_count(const gpuu_program* program) {
  return program ? program->program->delegates().size() : 0;
}

GPUU_API const char* gpuu_program_delegate_backend(const gpuu_program* program, size_t index) {
  if (!program || index >= program->program->delegates().size()) return nullptr;
  return program->program->delegates()[index].backend_id.c_str();
}

GPUU_API size_t gpuu_program_dim_count(const gpuu_program* program) {
  return program ? program->program->dims().size() : 0;
}

GPUU_API gpuu_status gpuu_program_dim_info(const gpuu_program* program, size_t index, const char** out,
                                           int64_t* dim_min, int64_t* dim_max, int64_t* dim_example) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!program) return fail_invalid("gpuu_program_dim_info: `program` is NULL");
    const std::vector<graph::SymbolicDim>& dims = program->program->dims();
    if (index >= dims.size()) {
      return fail_invalid("gpuu_program_dim_info: index ", index, " is out of range (", dims.size(), " dims)");
    }
    const graph::SymbolicDim& d = dims[index];
    if (out) *out = d.name.c_str();
    if (dim_min) *dim_min = d.min;
    if (dim_max) *dim_max = d.max;
    if (dim_example) *dim_example = d.example;
    return GPUU_OK;
  });
}

GPUU_API void gpuu_session_options_init_sized(gpuu_session_options* options, size_t struct_size) {
  init_sized(options, struct_size, [](gpuu_session_options* options) {
    options->vgf_path = GPUU_VGF_PATH_AUTO;
    options->gpu_timing = 0;
    options->wait_spin_us = -1;
  });
}

GPUU_API void gpuu_backend_option_init_sized(gpuu_backend_option* option, size_t struct_size) {
  init_sized(option, struct_size, [](gpuu_backend_option*) {});
}

GPUU_API gpuu_status gpuu_session_create(const gpuu_program* program, const gpuu_session_options* options,
                                         gpuu_session** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    constexpr const char* kFn = "gpuu_session_create";
    if (!out) return fail_invalid(kFn, ": `out` is NULL");
    *out = nullptr;
    if (!program) return fail_invalid(kFn, ": program is NULL");
    runtime::SessionOptions opts;
    gpuu_session_options o;
    gpuu_session_options_init(&o);
    if (options && !read_sized(options, &gpuu_session_options_init_sized, &o)) return fail_struct_size(kFn, "options", options);
    if (o.vgf_path < GPUU_VGF_PATH_AUTO || o.vgf_path > GPUU_VGF_PATH_EXECUTOR) {
      return fail_invalid(kFn, ": unknown vgf_path value ", static_cast<int>(o.vgf_path));
    }
    if (gpuu_status s = read_backend_options(kFn, o, &opts.backend_options)) return s;
    opts.gpu_timing = o.gpu_timing != 0;
    opts.profile_steps = o.profile != 0;
    opts.wait_spin_us = o.wait_spin_us;
    if (o.max_shape_variants) opts.max_shape_variants = o.max_shape_variants;
    opts.device_memory_limit = o.device_memory_limit;
    if (o.pipeline_cache_path) opts.pipeline_cache_path = o.pipeline_cache_path;
    if (o.overrides) {
      gpuu_context_overrides ov;
      if (!read_sized(o.overrides, &gpuu_context_overrides_init_sized, &ov)) {
        return fail_struct_size(kFn, "options->overrides", o.overrides);
      }
      if (gpuu_status s = to_overrides(kFn, ov, &opts.overrides)) return s;
    }
    if (o.device) {
      gpuu_device_options d;
      if (!read_sized(o.device, &gpuu_device_options_init_sized, &d)) return fail_struct_size(kFn, "options->device", o.device);
      if (d.device) opts.device.device = d.device;
      opts.device.validation = d.enable_validation != 0;
    }
    Result<std::unique_ptr<runtime::Session>> session = runtime::Session::create(program->program, opts);
    if (!session.ok()) return fail(session.status());
    *out = new gpuu_session{std::move(session).value(), {}, {}, {}, {}};
    return GPUU_OK;
  });
}

GPUU_API void gpuu_session_destroy(gpuu_session* session) { delete session; }

GPUU_API size_t gpuu_session_input_count(const gpuu_session* session) {
  return session ? session->session->inputs().size() : 0;
}

GPUU_API size_t gpuu_session_output_count(const gpuu_session* session) {
  return session ? session->session->outputs().size() : 0;
}

GPUU_API gpuu_status gpuu_session_input_info(const gpuu_session* session, size_t index, gpuu_tensor_info* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    return info_at(session, &runtime::Session::inputs, "inputs", index, out, "gpuu_session_input_info");
  });
}

GPUU_API gpuu_status gpuu_session_output_info(const gpuu_session* session, size_t index, gpuu_tensor_info* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    return info_at(session, &runtime::Session::outputs, "outputs", index, out, "gpuu_session_output_info");
  });
}

GPUU_API gpuu_status gpuu_session_set_input_shapes(gpuu_session* session, const int64_t* shapes, size_t count) {
  return guarded(__func__, [&]() -> gpuu_status {
    constexpr const char* kFn = "gpuu_session_set_input_shapes";
    if (gpuu_status s = check_session(session, kFn)) return s;
    const std::vector<runtime::TensorDesc>& inputs = session->session->inputs();
    size_t total = 0;
    for (const runtime::TensorDesc& d : inputs) total += d.shape.size();
    if (count != total) {
      return fail_invalid(kFn, ": ", count, " sizes, but the inputs' ranks add up to ", total);
    }
    if (count && !shapes) return fail_invalid(kFn, ": `shapes` is NULL but count is ", count);
    std::vector<std::optional<graph::Shape>> per_input;
    size_t at = 0;
    for (const runtime::TensorDesc& d : inputs) {
      per_input.emplace_back(graph::Shape(shapes + at, shapes + at + d.shape.size()));
      at += d.shape.size();
    }
    return to_c(session->session->set_input_shapes(per_input));
  });
}

GPUU_API gpuu_status gpuu_session_dim(const gpuu_session* session, size_t index, int64_t* size) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_dim")) return s;
    const std::vector<int64_t>& dims = session->session->dims();
    if (index >= dims.size()) {
      return fail_invalid("gpuu_session_dim: index ", index, " is out of range (", dims.size(), " dims)");
    }
    if (!size) return fail_invalid("gpuu_session_dim: `size` is NULL");
    *size = dims[index];
    return GPUU_OK;
  });
}

GPUU_API size_t gpuu_session_shape_variant_count(const gpuu_session* session) {
  return session && session->session ? session->session->shape_variant_count() : 0;
}

GPUU_API gpuu_status gpuu_session_set_input(gpuu_session* session, size_t index, const void* data, size_t size) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_set_input")) return s;
    return to_c(session->session->set_input(index, data, size));
  });
}

GPUU_API size_t gpuu_session_state_count(const gpuu_session* session) {
  return session && session->session ? session->session->states().size() : 0;
}

GPUU_API gpuu_status gpuu_session_state_info(const gpuu_session* session, size_t index, gpuu_tensor_info* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    return info_at(session, &runtime::Session::states, "states", index, out, "gpuu_session_state_info");
  });
}

GPUU_API gpuu_status gpuu_session_state_index(const gpuu_session* session, const char* name, size_t* index) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_state_index")) return s;
    if (!name) return fail_invalid("gpuu_session_state_index: `name` is NULL");
    if (!index) return fail_invalid("gpuu_session_state_index: `index` is NULL");
    Result<size_t> found = session->session->state_index(name);
    if (!found.ok()) return fail(found.status());
    *index = found.value();
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_session_get_state(const gpuu_session* session, size_t index, void* data, size_t size) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_get_state")) return s;
    return to_c(session->session->get_state(index, data, size));
  });
}

GPUU_API gpuu_status gpuu_session_set_state(gpuu_session* session, size_t index, const void* data, size_t size) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_set_state")) return s;
    return to_c(session->session->set_state(index, data, size));
  });
}

GPUU_API gpuu_status gpuu_session_reset_state(gpuu_session* session) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_reset_state")) return s;
    session->session->reset_state();
    return GPUU_OK;
  });
}

GPUU_API int gpuu_session_state_in_place(const gpuu_session* session, size_t index) {
  return session && session->session && session->session->state_updated_in_place(index) ? 1 : 0;
}

GPUU_API gpuu_status gpuu_session_bind_input_buffer(gpuu_session* session, size_t index, gpuu_vk_buffer buffer,
                                                    uint64_t offset, uint64_t size) {
  return guarded(__func__, [&]() -> gpuu_status {
    return bind_directed(session, "gpuu_session_bind_input_buffer", false, index, buffer, offset, size);
  });
}

GPUU_API gpuu_status gpuu_session_bind_output_buffer(gpuu_session* session, size_t index, gpuu_vk_buffer buffer,
                                                     uint64_t offset, uint64_t size) {
  return guarded(__func__, [&]() -> gpuu_status {
    return bind_directed(session, "gpuu_session_bind_output_buffer", true, index, buffer, offset, size);
  });
}

GPUU_API gpuu_status gpuu_session_bind_buffer(gpuu_session* session, gpuu_io io, size_t index, gpuu_vk_buffer buffer,
                                              uint64_t offset, uint64_t size, uint32_t usage) {
  return guarded(__func__, [&]() -> gpuu_status {
    constexpr const char* kFn = "gpuu_session_bind_buffer";
    if (gpuu_status s = check_session(session, kFn)) return s;
    auto* vk_buffer = reinterpret_cast<VkBuffer>(buffer);
    if (io == GPUU_IO_INPUT) return to_c(session->session->bind_input_buffer(index, vk_buffer, offset, size, usage));
    if (io == GPUU_IO_OUTPUT) return to_c(session->session->bind_output_buffer(index, vk_buffer, offset, size, usage));
    return fail_invalid(kFn, ": unknown io value ", static_cast<int>(io), " (GPUU_IO_INPUT or GPUU_IO_OUTPUT)");
  });
}

GPUU_API int gpuu_session_binding_in_place(const gpuu_session* session, gpuu_io io, size_t index) {
  if (!session || !session->session) return 0;
  if (io == GPUU_IO_INPUT) return session->session->input_bound_zero_copy(index) ? 1 : 0;
  if (io == GPUU_IO_OUTPUT) return session->session->output_bound_zero_copy(index) ? 1 : 0;
  return 0;
}

GPUU_API gpuu_status gpuu_session_execute(gpuu_session* session) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_execute")) return s;
    session->last_stats = runtime::ExecuteStats{};
    session->profile_json.clear();
    session->profile_trace.clear();
    session->profile_text.clear();
    return to_c(session->session->execute(&session->last_stats));
  });
}

GPUU_API gpuu_status gpuu_session_get_output(const gpuu_session* session, size_t index, void* data, size_t size) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_get_output")) return s;
    return to_c(session->session->get_output(index, data, size));
  });
}

GPUU_API gpuu_status gpuu_session_last_execute_stats(const gpuu_session* session, gpuu_execute_stats* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_last_execute_stats")) return s;
    gpuu_execute_stats stats{};
    stats.struct_size = sizeof(stats);
    stats.delegate_submits = session->last_stats.delegate_submits;
    stats.host_waits = session->last_stats.host_waits;
    stats.host_copies = session->last_stats.host_copies;
    stats.queue_submits = session->last_stats.queue_submits;
    stats.gpu_time_us = session->last_stats.gpu_time_us > 0 ? session->last_stats.gpu_time_us : -1;
    if (!write_sized(stats, out)) return fail_struct_size("gpuu_session_last_execute_stats", "out", out);
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_session_memory_info(const gpuu_session* session, gpuu_session_memory* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_session(session, "gpuu_session_memory_info")) return s;
    const runtime::SessionMemoryBytes bytes = session->session->memory();
    gpuu_session_memory memory{};
    memory.struct_size = sizeof(memory);
    memory.tensor_bytes = bytes.tensors;
    memory.state_bytes = bytes.states;
    memory.workspace_bytes = bytes.workspaces;
    memory.weight_bytes = bytes.weights;
    memory.staging_bytes = bytes.staging;
    memory.backend_private_bytes = bytes.backend_private;
    if (!write_sized(memory, out)) return fail_struct_size("gpuu_session_memory_info", "out", out);
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_session_profile_json(const gpuu_session* session, const char** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    return profile_as(session, out, "gpuu_session_profile_json", session ? &session->profile_json : nullptr,
                      runtime::profile_json, true);
  });
}

GPUU_API gpuu_status gpuu_session_profile_trace(const gpuu_session* session, const char** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    return profile_as(session, out, "gpuu_session_profile_trace", session ? &session->profile_trace : nullptr,
                      runtime::profile_trace_json, true);
  });
}

GPUU_API gpuu_status gpuu_session_profile_text(const gpuu_session* session, size_t top, const char** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    return profile_as(
        session, out, "gpuu_session_profile_text", session ? &session->profile_text : nullptr,
        [top](const runtime::ExecuteProfile& p) { return runtime::profile_text(p, top); }, false);
  });
}

GPUU_API gpuu_sync_mode gpuu_session_sync_mode(const gpuu_session* session) {
  return session ? static_cast<gpuu_sync_mode>(session->session->sync_mode()) : GPUU_SYNC_TIMELINE;
}

GPUU_API gpuu_status gpuu_session_get_context(const gpuu_session* session, gpuu_context** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid("gpuu_session_get_context: `out` is NULL");
    *out = nullptr;
    if (gpuu_status s = check_session(session, "gpuu_session_get_context")) return s;
    SharedGpuContextPtr ctx = session->session->primary_context();
    if (!ctx) return fail(err(StatusCode::kNotFound, "the session's program has no GPU delegate"));
    *out = wrap_context(std::move(ctx));
    return GPUU_OK;
  });
}

}  // extern "C"

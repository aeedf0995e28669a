// The backend registry and what both GPU backends share: context resolution,
// init log text and the submit of a recorded delegate.
#include "backends/backend.h"

#include <sstream>

#include "context/vulkan_bootstrap.h"

namespace gpuu::backends {
namespace {

Backend* find_locked(const std::vector<std::unique_ptr<Backend>>& backends, const std::string& id) {
  for (const auto& b : backends) {
    if (id == b->id()) return b.get();
  }
  return nullptr;
}

}  // namespace

Status BackendRegistry::register_backend(std::unique_ptr<Backend> backend) {
  if (!backend) return err(StatusCode::kInvalidArgument, "register_backend: null backend");
  std::lock_guard<std::mutex> lock(mutex_);
  if (find_locked(backends_, backend->id())) {
    return err(StatusCode::kAlreadyExists, "a backend with id '", backend->id(), "' is already registered");
  }
  backends_.push_back(std::move(backend));
  return Status::Ok();
}

Backend* BackendRegistry::find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return find_locked(backends_, id);
}

std::vector<Backend*> BackendRegistry::backends() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Backend*> out;
  for (const auto& b : backends_) out.push_back(b.get());
  return out;
}

std::vector<std::string> BackendRegistry::ids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& b : backends_) out.emplace_back(b->id());
  return out;
}

Result<SharedGpuContextPtr> resolve_delegate_context(const std::vector<CompileSpecEntry>& compile_specs,
                                                     const BackendInitContext& context, const char* backend_name) {
  Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec(compile_specs, &context.overrides);
  if (!spec.ok()) {
    return err(spec.status().code(), backend_name, " delegate ", context.delegate_index, ": ",
               spec.status().message());
  }
  SharedGpuCompileSpec s = spec.value();
  if (!s.enabled()) s.token = std::string(backend_name) + "-local";  // a private context (RFC: "vgf-local")
  Result<SharedGpuContextPtr> ctx = resolve_shared_context(s, vulkan_context_factory(context.device));
  if (!ctx.ok()) {
    return err(ctx.status().code(), backend_name, " delegate ", context.delegate_index, ": ", ctx.status().message());
  }
  return ctx;
}

Result<graph::Graph> region_graph(const graph::Graph& graph, const partition::Region& region) {
  GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, program::serialize_region(graph, region));
  program::ConstantLookup from_graph = [&graph](const std::string& name, graph::DType dtype,
                                                const graph::Shape& shape) -> Result<Blob> {
    for (const graph::Constant& c : graph.constants()) {
      const graph::Value& v = graph.value(c.value);
      if (c.name == name && v.dtype == dtype && v.shape == shape) return c.data;
    }
    return err(StatusCode::kNotFound, "no constant '", name, "' in the graph");
  };
  return program::parse_subgraph(bytes.data(), bytes.size(), from_graph);
}

std::string describe_init(const Blob& processed, const std::vector<CompileSpecEntry>& compile_specs) {
  std::ostringstream out;
  out << "processed=" << processed.size() << "B compile_specs=";
  for (size_t i = 0; i < compile_specs.size(); ++i) {
    out << (i ? "," : "") << compile_specs[i].key << '=';
    for (uint8_t b : compile_specs[i].value) out << (b >= 0x20 && b < 0x7f ? static_cast<char>(b) : '?');
  }
  return out.str();
}

Status submit_delegate(const SharedGpuContext& ctx, VkCommandBuffer command_buffer, const ExecuteArgs& args) {
  if (args.sync_mode == SyncMode::kTimeline) {
    Result<uint64_t> value = ctx.submit_timeline(command_buffer, args.fence);
    if (!value.ok()) {
      return err(value.status().code(), "sync mode timeline: ", value.status().message(), " (use queue_wait_idle)");
    }
    if (args.signaled_value) *args.signaled_value = value.value();
    return Status::Ok();
  }
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &command_buffer;
  GPUU_VK_RETURN_IF_ERROR(ctx.submit(1, &submit, args.fence), "vkQueueSubmit");
  return Status::Ok();
}

}  // namespace gpuu::backends

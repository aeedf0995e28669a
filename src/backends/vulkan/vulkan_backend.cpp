// VulkanBackend: init resolves the shared context, decodes the SubGraph,
// binds the runtime's buffers and builds a kernels::KernelGraph (the kernel
// library); execute is one submit.
#include "backends/vulkan/vulkan_backend.h"

#include "base/log.h"
#include "kernels/custom_shader.h"
#include "kernels/kernel_graph.h"
#include "kernels/op_table.h"

namespace gpuu::vulkan {
namespace {

// A KernelGraph's memory as the contract counts it: an arena of its own and
// unit scratch are private; a planned arena is the runtime's workspace.
backends::DelegateMemory delegate_memory(const kernels::KernelGraphMemory& m, bool planned = false) {
  backends::DelegateMemory d;
  d.shared_constants = m.weights;
  d.constant_bytes = m.constant_bytes;
  (planned ? d.workspace_bytes : d.private_bytes) = m.arena_bytes;
  d.private_bytes += m.scratch_bytes;
  return d;
}

class VulkanHandle final : public backends::DelegateHandle {
 public:
  explicit VulkanHandle(std::unique_ptr<kernels::KernelGraph> delegate) : delegate_(std::move(delegate)) {}
  ~VulkanHandle() override { log(LogLevel::kInfo, "Vulkan", "destroy: handle=", static_cast<const void*>(this)); }
  const SharedGpuContextPtr& context() const override { return delegate_->context(); }
  VkCommandPool command_pool() const override { return delegate_->command_pool(); }
  double last_gpu_time_us() const override { return delegate_->last_gpu_time_us(); }
  size_t dispatch_count() const override { return delegate_->dispatch_count(); }
  std::vector<gpu::TimedStep> step_times() const override { return delegate_->step_times(); }
  Status rebind_io(const std::vector<backends::BufferRange>& inputs,
                   const std::vector<backends::BufferRange>& outputs) override {
    return delegate_->rebind(inputs, outputs);
  }
  backends::DelegateMemory memory() const override { return delegate_memory(delegate_->memory()); }
  kernels::KernelGraph& delegate() { return *delegate_; }

 private:
  std::unique_ptr<kernels::KernelGraph> delegate_;
};

}  // namespace

bool VulkanBackend::is_available() const { return vk::system_loader().ok(); }

namespace {
constexpr const char* kGemmKernelKey = "gemm_kernel";
constexpr const char* kGemmCoopMat2 = "coopmat2";
}  // namespace

const std::vector<backends::OptionDecl>& VulkanBackend::declared_options() const {
  static const std::vector<backends::OptionDecl> options = {
      {kGemmKernelKey,
       {"auto", kGemmCoopMat2},
       "auto",
       "f16 GEMM kernels: auto (the selector's pick) or coopmat2 (matmul and linear on workgroup-scope matrices, "
       "VK_NV_cooperative_matrix2, wherever the device and the GEMM allow)"},
  };
  return options;
}

Result<std::unique_ptr<backends::DelegateHandle>> VulkanBackend::init(
    backends::BackendInitContext& context, const Blob& processed, const std::vector<CompileSpecEntry>& compile_specs) {
  log(LogLevel::kInfo, "Vulkan", "init: ", backends::describe_init(processed, compile_specs));
  GPUU_ASSIGN_OR_RETURN(SharedGpuContextPtr ctx, backends::resolve_delegate_context(context, "Vulkan"));
  Result<graph::Graph> region = program::parse_subgraph(processed.data(), processed.size(), context.constants);
  if (!region.ok()) {
    return err(region.status().code(), "Vulkan delegate ", context.delegate_index, ": ", region.status().message());
  }
  if (!context.bind_io) return err(StatusCode::kInvalidArgument, "Vulkan delegate: the runtime bound no buffers");
  kernels::KernelGraphOptions options;
  options.gpu_timing = context.gpu_timing;
  options.host_visible_results = !context.runtime_makes_host_visible;
  options.profile_steps = context.profile_steps;
  auto gemm_kernel = context.options.find(kGemmKernelKey);
  options.gemm_coopmat2 = gemm_kernel != context.options.end() && gemm_kernel->second == kGemmCoopMat2;
  // The state updates the kernels can write over the state itself.
  std::vector<backends::InPlaceUpdate> in_place;
  for (const backends::InPlaceUpdate& offer : context.in_place_offers) {
    graph::ValueId input = graph::kNone, output = graph::kNone;
    for (size_t v = 0; v < region->values().size(); ++v) {
      if (region->values()[v].name == offer.input) input = static_cast<graph::ValueId>(v);
      if (region->values()[v].name == offer.output) output = static_cast<graph::ValueId>(v);
    }
    if (kernels::KernelGraph::can_update_in_place(region.value(), input, output, options)) in_place.push_back(offer);
    log(LogLevel::kDebug, "Vulkan", "init: state '", offer.input, "' updated as '", offer.output, "' ",
        in_place.size() && in_place.back() == offer ? "in place" : "through a copy (a kernel reads it after)");
  }
  GPUU_ASSIGN_OR_RETURN(auto io, context.bind_io(ctx, region.value(), in_place));
  if (context.workspace) {
    options.arena = [&context, ctx](VkDeviceSize bytes) { return context.workspace(ctx, bytes); };
  }
  Result<std::unique_ptr<kernels::KernelGraph>> delegate =
      kernels::KernelGraph::create(ctx, region.value(), io.first, io.second, options);
  if (!delegate.ok()) {
    return err(delegate.status().code(), "Vulkan delegate ", context.delegate_index, ": ",
               delegate.status().message());
  }
  auto handle = std::make_unique<VulkanHandle>(std::move(delegate).value());
  log(LogLevel::kDebug, "Vulkan", "init: handle=", static_cast<const void*>(handle.get()), " dispatches=",
      handle->delegate().dispatch_count(), " on '", ctx->device_name(), "'");
  return std::unique_ptr<backends::DelegateHandle>(std::move(handle));
}

Result<backends::DelegateMemory> VulkanBackend::plan_memory(const Blob& processed,
                                                             const std::vector<CompileSpecEntry>&,
                                                             const program::ConstantLookup& constants) const {
  GPUU_ASSIGN_OR_RETURN(graph::Graph region, program::parse_subgraph(processed.data(), processed.size(), constants));
  return delegate_memory(kernels::KernelGraph::plan_memory(region), /*planned=*/true);
}

Status VulkanBackend::execute(backends::DelegateHandle& handle, const backends::ExecuteArgs& args) {
  auto& h = static_cast<VulkanHandle&>(handle);
  log(LogLevel::kInfo, "Vulkan", "execute: handle=", static_cast<const void*>(&handle),
      " args=", h.delegate().dispatch_count(), " dispatches");
  return gpu::submit_recorded(*h.context(), h.delegate().command_buffer(), args);
}

std::string VulkanBackend::check(const graph::Graph& graph, const graph::Node& node) const {
  return kernels::vulkan_supports(graph, node);
}

Result<std::vector<uint8_t>> VulkanBackend::preprocess(const graph::Graph& graph, const partition::Region& region,
                                                       const std::vector<CompileSpecEntry>& compile_specs) const {
  log(LogLevel::kInfo, "Vulkan", "preprocess: ", region.nodes.size(), " nodes ",
      backends::describe_compile_specs(compile_specs));
  for (graph::NodeId id : region.nodes) {
    std::string why = check(graph, graph.node(id));
    if (!why.empty()) {
      return err(StatusCode::kUnsupported, "VulkanBackend cannot take node '", graph.node(id).name, "': ", why);
    }
  }
  bool has_custom = false;
  for (graph::NodeId id : region.nodes) has_custom |= graph.node(id).op == "custom_shader";
  if (!has_custom) return program::serialize_region(graph, region);
  // A custom shader's GLSL becomes SPIR-V here: no compiler exists at run time.
  GPUU_ASSIGN_OR_RETURN(graph::Graph sub, backends::region_graph(graph, region));
  partition::Region all{region.backend, {}};
  for (size_t i = 0; i < sub.nodes().size(); ++i) {
    all.nodes.push_back(static_cast<graph::NodeId>(i));
    if (sub.node(static_cast<graph::NodeId>(i)).op != "custom_shader") continue;
    GPUU_ASSIGN_OR_RETURN(sub.mutable_node(static_cast<graph::NodeId>(i)).attrs,
                          kernels::attrs_with_spirv(sub.node(static_cast<graph::NodeId>(i))));
  }
  return program::serialize_region(sub, all);
}

}  // namespace gpuu::vulkan

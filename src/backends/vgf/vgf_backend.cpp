// VgfBackend: export (region -> VGF) and run (VGF -> executor on the shared context).
#include "backends/vgf/vgf_backend.h"

#include "backends/vgf/vgf_region.h"
#include "backends/vulkan/vulkan_delegate.h"
#include "backends/vulkan/vulkan_ops.h"
#include "base/log.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf {
namespace {

constexpr const char* kDataGraphExtension = "VK_ARM_data_graph";

class VgfHandle final : public backends::DelegateHandle {
 public:
  explicit VgfHandle(std::unique_ptr<vulkan::VulkanDelegate> executor) : executor_(std::move(executor)) {}
  ~VgfHandle() override { log(LogLevel::kInfo, "VGF", "destroy: handle=", static_cast<const void*>(this)); }
  const SharedGpuContextPtr& context() const override { return executor_->context(); }
  VkCommandPool command_pool() const override { return executor_->command_pool(); }
  double last_gpu_time_us() const override { return executor_->last_gpu_time_us(); }
  size_t dispatch_count() const override { return executor_->dispatch_count(); }
  vulkan::VulkanDelegate& executor() { return *executor_; }

 private:
  std::unique_ptr<vulkan::VulkanDelegate> executor_;
};

// RFC phase 4: a device that claims the data-graph extension must provide its
// entry points, or init fails with a clear error instead of crashing later.
Status check_native_path(const SharedGpuContext& ctx) {
  if (!ctx.has_extension(kDataGraphExtension)) return Status::Ok();
  for (const char* name : data_graph_entry_points()) {
    if (!ctx.vki().vkGetDeviceProcAddr(ctx.device(), name)) {
      return err(StatusCode::kUnsupported, "device '", ctx.device_name(), "' has ", kDataGraphExtension,
                 " enabled but its entry point ", name, " is unavailable");
    }
  }
  log(LogLevel::kInfo, "VGF", kDataGraphExtension, " is present; running the graph on gpuu's TOSA executor");
  return Status::Ok();
}

}  // namespace

const std::vector<const char*>& data_graph_entry_points() {
  static const std::vector<const char*> names = {
      "vkCreateDataGraphPipelinesARM", "vkCreateDataGraphPipelineSessionARM",
      "vkGetDataGraphPipelineSessionMemoryRequirementsARM", "vkBindDataGraphPipelineSessionMemoryARM",
      "vkDestroyDataGraphPipelineSessionARM", "vkCmdDispatchDataGraphARM"};
  return names;
}

bool VgfBackend::is_available() const { return vk::system_loader().ok(); }

Result<std::unique_ptr<backends::DelegateHandle>> VgfBackend::init(backends::BackendInitContext& context,
                                                                   const Blob& processed,
                                                                   const std::vector<CompileSpecEntry>& compile_specs) {
  log(LogLevel::kInfo, "VGF", "init: ", backends::describe_init(processed, compile_specs));
  GPUU_ASSIGN_OR_RETURN(SharedGpuContextPtr ctx, backends::resolve_delegate_context(compile_specs, context, "VGF"));
  auto fail = [&](const Status& s) {
    return err(s.code(), "VGF delegate ", context.delegate_index, ": ", s.message());
  };
  if (Status s = check_native_path(*ctx); !s.ok()) return fail(s);
  Result<VgfFile> file = decode_vgf(processed);
  if (!file.ok()) return fail(file.status());
  Result<graph::Graph> graph = graph_from_vgf(file.value());
  if (!graph.ok()) return fail(graph.status());
  if (!context.bind_io) return err(StatusCode::kInvalidArgument, "VGF delegate: the runtime bound no buffers");
  GPUU_ASSIGN_OR_RETURN(auto io, context.bind_io(ctx, graph.value()));
  vulkan::DelegateOptions options;  // the executor fuses elementwise chains and reuses memory
  Result<std::unique_ptr<vulkan::VulkanDelegate>> executor =
      vulkan::VulkanDelegate::create(ctx, graph.value(), io.first, io.second, options);
  if (!executor.ok()) return fail(executor.status());
  auto handle = std::make_unique<VgfHandle>(std::move(executor).value());
  log(LogLevel::kDebug, "VGF", "init: handle=", static_cast<const void*>(handle.get()), " dispatches=",
      handle->dispatch_count(), " on '", ctx->device_name(), "'");
  return std::unique_ptr<backends::DelegateHandle>(std::move(handle));
}

Status VgfBackend::execute(backends::DelegateHandle& handle, const backends::ExecuteArgs& args) {
  auto& h = static_cast<VgfHandle&>(handle);
  log(LogLevel::kInfo, "VGF", "execute: handle=", static_cast<const void*>(&handle), " args=", h.dispatch_count(),
      " dispatches");
  return backends::submit_delegate(*h.context(), h.executor().command_buffer(), args);
}

std::string VgfBackend::check(const graph::Graph& graph, const graph::Node& node) const {
  // The executor runs the TOSA graph on the Vulkan kernels: what they cannot
  // run, this backend cannot take either (TOSA's own limits are the
  // partitioner's VGF table).
  std::string why = vulkan::vulkan_supports(graph, node);
  return why.empty() ? why : "gpuu's TOSA executor runs on the Vulkan kernels, and " + why;
}

Result<std::vector<uint8_t>> VgfBackend::preprocess(const graph::Graph& graph, const partition::Region& region,
                                                    const std::vector<CompileSpecEntry>&) const {
  GPUU_ASSIGN_OR_RETURN(graph::Graph sub, backends::region_graph(graph, region));
  GPUU_ASSIGN_OR_RETURN(VgfFile file, vgf_from_region(sub));
  return encode_vgf(file);
}

}  // namespace gpuu::vgf

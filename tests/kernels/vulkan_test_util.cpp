// The Vulkan kernel harness: real device, real delegate, CPU oracle.
#include "kernels/vulkan_test_util.h"

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "context/shared_gpu_context_registry.h"
#include "context/vulkan_bootstrap.h"

namespace gpuu::vulkan_test {

using cpu::HostTensor;
using graph::DType;
using gpu::BufferRange;
using gpu::DeviceBuffer;
using gpu::MemoryKind;

SharedGpuContextPtr test_context() {
  static SharedGpuContextPtr ctx = [] {
    Result<SharedGpuContextPtr> c = create_vulkan_context("vulkan-tests", 0, DeviceOptions{});
    if (!c.ok()) {
      ADD_FAILURE() << "no Vulkan context: " << c.status().message();
      return SharedGpuContextPtr();
    }
    return c.value();
  }();
  return ctx;
}

Result<SharedGpuContextPtr> register_app_device(const gpuu_test::AppDevice& app, const std::string& token,
                                                int64_t group, std::vector<std::string> extensions) {
  SharedGpuContextCreateInfo info;
  info.token = token;
  info.group_id = group;
  info.instance = app.instance;
  info.physical_device = app.physical_device;
  info.device = app.device;
  info.queue = app.queue;
  info.queue_family_index = app.queue_family_index;
  info.enabled_features = app.timeline_enabled ? kFeatureTimelineSemaphore : 0u;
  info.enabled_device_extensions = std::move(extensions);
  GPUU_ASSIGN_OR_RETURN(SharedGpuContextPtr ctx, SharedGpuContext::create(std::move(info)));
  GPUU_RETURN_IF_ERROR(SharedGpuContextRegistry::get().register_context({token, group}, ctx));
  return ctx;
}

std::vector<std::string> step_labels(const graph::Graph& graph, const std::vector<HostTensor>& inputs, double atol,
                                     double rtol, kernels::KernelGraphOptions options) {
  options.profile_steps = true;
  RunStats stats;
  Result<std::vector<HostTensor>> got = run_on_vulkan(graph, inputs, &stats, options);
  Result<std::vector<HostTensor>> want = cpu::run_graph(graph, inputs);
  EXPECT_TRUE(got.ok() && want.ok()) << (got.ok() ? want.status().message() : got.status().message());
  if (!got.ok() || !want.ok()) return {};
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_TRUE(all_close((*got)[i], (*want)[i], atol, rtol)) << "output " << i;
  }
  std::vector<std::string> labels;
  for (const gpu::TimedStep& step : stats.steps) labels.push_back(step.label);
  return labels;
}

std::string joined(const std::vector<std::string>& labels) {
  std::string out;
  for (const std::string& l : labels) out += (out.empty() ? "" : " ") + l;
  return out;
}

testing::AssertionResult graph_matches_cpu(const graph::Graph& graph, const std::vector<HostTensor>& inputs,
                                           OutputComparison compare, RunStats* stats) {
  Result<std::vector<HostTensor>> want = cpu::run_graph(graph, inputs);
  if (!want.ok()) return testing::AssertionFailure() << "CPU reference: " << want.status().message();
  Result<std::vector<HostTensor>> got = run_on_vulkan(graph, inputs, stats);
  if (!got.ok()) return testing::AssertionFailure() << "Vulkan: " << got.status().message();
  for (size_t i = 0; i < want.value().size(); ++i) {
    testing::AssertionResult r = compare(got.value()[i], want.value()[i]);
    if (!r) {
      return testing::AssertionFailure() << "output '" << graph.value(graph.outputs()[i]).name << "': " << r.message();
    }
  }
  return testing::AssertionSuccess();
}

HostTensor exact_values(graph::DType dtype, const graph::Shape& shape, uint32_t seed) {
  return dtype == graph::DType::kBool ? random_tensor(dtype, shape, seed, 0, 2)
                                      : random_tensor(dtype, shape, seed, -100, 100);
}

bool device_has_f16() {
  SharedGpuContextPtr ctx = test_context();
  return ctx && ctx->has_feature(kFeatureShaderFloat16) && ctx->has_feature(kFeatureStorageBuffer16Bit);
}

bool f16_kernels_or_refused() {
  if (device_has_f16()) return true;
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", DType::kF16, {4}).value();
  graph::ValueId sum = graph::add_op(g, "add", "add_0", {a, a}, {}).value()[0];
  g.mark_output(sum);
  Result<std::vector<HostTensor>> got = run_on_vulkan(g, {random_tensor(DType::kF16, {4}, 1, -1, 1)});
  EXPECT_FALSE(got.ok()) << "an f16 node ran on a device without f16 kernels";
  if (!got.ok()) {
    EXPECT_EQ(got.status().code(), StatusCode::kUnsupported) << got.status().message();
    EXPECT_NE(got.status().message().find("f16"), std::string::npos) << got.status().message();
  }
  return false;
}

Result<std::vector<HostTensor>> run_on_vulkan(const graph::Graph& graph, const std::vector<HostTensor>& inputs,
                                              RunStats* stats, const kernels::KernelGraphOptions& options) {
  SharedGpuContextPtr ctx = test_context();
  if (!ctx) return err(StatusCode::kUnsupported, "no test context");
  if (inputs.size() != graph.inputs().size()) return err(StatusCode::kInvalidArgument, "input count mismatch");
  std::vector<DeviceBuffer> in_buffers, out_buffers;
  std::vector<BufferRange> in_ranges, out_ranges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    GPUU_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::create(*ctx, inputs[i].bytes.size(), MemoryKind::kUpload, "test input"));
    if (!inputs[i].bytes.empty()) std::memcpy(b.mapped(), inputs[i].bytes.data(), inputs[i].bytes.size());
    in_ranges.push_back(BufferRange{b.buffer(), 0, b.size()});
    in_buffers.push_back(std::move(b));
  }
  for (graph::ValueId out : graph.outputs()) {
    const graph::Value& v = graph.value(out);
    size_t bytes = static_cast<size_t>(graph::shape_numel(v.shape)) * graph::dtype_size(v.dtype);
    GPUU_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::create(*ctx, bytes, MemoryKind::kReadback, "test output"));
    std::memset(b.mapped(), 0xCD, b.size());  // poison: every element must be written
    out_ranges.push_back(BufferRange{b.buffer(), 0, b.size()});
    out_buffers.push_back(std::move(b));
  }
  GPUU_ASSIGN_OR_RETURN(std::unique_ptr<kernels::KernelGraph> delegate,
                        kernels::KernelGraph::create(ctx, graph, in_ranges, out_ranges, options));
  if (stats) {
    stats->dispatches = delegate->dispatch_count();
    stats->barriers = delegate->barrier_count();
    stats->pipelines = delegate->pipeline_count();
    stats->arena_bytes = delegate->arena_bytes();
    stats->scratch_bytes = delegate->scratch_bytes();
  }
  GPUU_RETURN_IF_ERROR(submit_and_wait(*delegate));
  if (stats) stats->steps = delegate->step_times();
  std::vector<HostTensor> outputs;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const graph::Value& v = graph.value(graph.outputs()[i]);
    size_t bytes = static_cast<size_t>(graph::shape_numel(v.shape)) * graph::dtype_size(v.dtype);
    GPUU_ASSIGN_OR_RETURN(HostTensor t, HostTensor::from_bytes(v.dtype, v.shape, out_buffers[i].mapped(), bytes));
    outputs.push_back(std::move(t));
  }
  return outputs;
}

Status submit_and_wait(const kernels::KernelGraph& region) {
  VkCommandBuffer cb = region.command_buffer();
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cb;
  GPUU_VK_RETURN_IF_ERROR(region.context()->submit(1, &submit, VK_NULL_HANDLE), "vkQueueSubmit");
  GPUU_VK_RETURN_IF_ERROR(region.context()->queue_wait_idle(), "vkQueueWaitIdle");
  return Status::Ok();
}

HostTensor random_tensor(graph::DType dtype, const graph::Shape& shape, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(static_cast<size_t>(graph::shape_numel(shape)));
  bool integral = !(dtype == graph::DType::kF32 || dtype == graph::DType::kF16);
  for (double& v : values) v = integral ? std::floor(dist(rng)) : dist(rng);
  return HostTensor::from_doubles(dtype, shape, values).value();
}

testing::AssertionResult all_close(const HostTensor& got, const HostTensor& want, double atol, double rtol) {
  if (got.dtype != want.dtype || got.shape != want.shape) {
    return testing::AssertionFailure() << "got " << got.type_string() << ", want " << want.type_string();
  }
  std::vector<double> g = got.to_doubles(), w = want.to_doubles();
  std::ostringstream bad;
  size_t mismatches = 0;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    // Equal values (infinities included) match; NaN matches only NaN.
    bool ok = g[i] == w[i] || (std::isnan(w[i]) && std::isnan(g[i])) ||
              std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]);
    if (!ok) {
      if (mismatches < 5) bad << "\n  [" << i << "] got " << g[i] << " want " << w[i];
      ++mismatches;
      worst = std::max(worst, std::fabs(g[i] - w[i]));
    }
  }
  if (mismatches == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << mismatches << " of " << g.size() << " elements differ (worst " << worst
                                     << ", atol " << atol << ", rtol " << rtol << ")" << bad.str();
}

testing::AssertionResult node_matches_cpu(const std::string& op, const std::vector<HostTensor>& inputs,
                                          const graph::AttrMap& attrs, double atol, double rtol,
                                          const std::vector<bool>& constant_inputs,
                                          const kernels::KernelGraphOptions& options) {
  graph::Graph g;
  std::vector<graph::ValueId> ids;
  std::vector<HostTensor> runtime_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    bool constant = i < constant_inputs.size() && constant_inputs[i];
    Result<graph::ValueId> id =
        constant ? graph::add_graph_constant(g, name, inputs[i].dtype, inputs[i].shape, inputs[i].to_blob())
                 : graph::add_graph_input(g, name, inputs[i].dtype, inputs[i].shape);
    if (!id.ok()) return testing::AssertionFailure() << id.status().message();
    ids.push_back(id.value());
    if (!constant) runtime_inputs.push_back(inputs[i]);
  }
  Result<std::vector<graph::ValueId>> outs = graph::add_op(g, op, op + "_0", ids, attrs);
  if (!outs.ok()) return testing::AssertionFailure() << "building the node: " << outs.status().message();
  for (graph::ValueId o : outs.value()) g.mark_output(o);
  Result<std::vector<HostTensor>> want = cpu::run_graph(g, runtime_inputs);
  if (!want.ok()) return testing::AssertionFailure() << "CPU reference: " << want.status().message();
  Result<std::vector<HostTensor>> got = run_on_vulkan(g, runtime_inputs, nullptr, options);
  if (!got.ok()) return testing::AssertionFailure() << "Vulkan: " << got.status().message();
  for (size_t i = 0; i < want.value().size(); ++i) {
    testing::AssertionResult r = all_close(got.value()[i], want.value()[i], atol, rtol);
    if (!r) return testing::AssertionFailure() << op << " output " << i << ": " << r.message();
  }
  return testing::AssertionSuccess();
}

}  // namespace gpuu::vulkan_test

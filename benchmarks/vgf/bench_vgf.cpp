// VGF executor benchmark: the RFC model's VGF suffix (sin, cos, reciprocal,
// mul, transpose) and a long elementwise chain, each exported to a VGF file,
// decoded and run by gpuu's TOSA executor with and without elementwise
// fusion: dispatches per execute and GPU time (timestamps), medians after
// warm-up. Prints one JSON object. Run by benchmarks/vgf/run.sh.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/vgf/vgf_region.h"
#include "context/vulkan_bootstrap.h"
#include "graph/builder.h"
#include "kernels/kernel_graph.h"
#include "vgf/vgf_file.h"

namespace {

using namespace gpuu;

graph::Graph rfc_suffix(int64_t c, int64_t h, int64_t w) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", graph::DType::kF32, {1, c, h, w}).value();
  graph::ValueId s = graph::add_op(g, "sin", "sin_0", {x}, {}).value()[0];
  graph::ValueId co = graph::add_op(g, "cos", "cos_0", {x}, {}).value()[0];
  graph::ValueId r = graph::add_op(g, "reciprocal", "reciprocal_0", {co}, {}).value()[0];
  graph::ValueId m = graph::add_op(g, "mul", "mul_0", {s, r}, {}).value()[0];
  graph::ValueId t =
      graph::add_op(g, "transpose", "transpose_1", {m}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}).value()[0];
  g.mark_output(t);
  return g;
}

graph::Graph long_chain(int ops, int64_t elements) {
  graph::Graph g;
  graph::ValueId v = graph::add_graph_input(g, "x", graph::DType::kF32, {elements}).value();
  const char* cycle[] = {"sin", "cos", "tanh", "sigmoid"};
  for (int i = 0; i < ops; ++i) v = graph::add_op(g, cycle[i % 4], "op" + std::to_string(i), {v}, {}).value()[0];
  g.mark_output(v);
  return g;
}

struct Measured {
  size_t dispatches = 0;
  double gpu_median_us = -1;
};

Result<Measured> run(const SharedGpuContextPtr& ctx, const graph::Graph& region, bool fuse, int warmup, int runs) {
  // Through a real VGF file, as a VGF delegate sees it.
  GPUU_ASSIGN_OR_RETURN(vgf::VgfFile file, vgf::vgf_from_region(region));
  GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, vgf::encode_vgf(file));
  GPUU_ASSIGN_OR_RETURN(vgf::VgfFile decoded, vgf::decode_vgf(bytes.data(), bytes.size()));
  GPUU_ASSIGN_OR_RETURN(graph::Graph g, vgf::graph_from_vgf(decoded));
  std::vector<gpu::DeviceBuffer> buffers;
  std::vector<gpu::BufferRange> ins, outs;
  for (int pass = 0; pass < 2; ++pass) {
    for (graph::ValueId id : pass == 0 ? g.inputs() : g.outputs()) {
      const graph::Value& v = g.value(id);
      size_t n = static_cast<size_t>(graph::shape_numel(v.shape)) * graph::dtype_size(v.dtype);
      GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer b,
                            gpu::DeviceBuffer::create(*ctx, n, gpu::MemoryKind::kShared, "bench io"));
      if (pass == 0) std::memset(b.mapped(), 0x3c, n);  // finite, non-zero floats
      (pass == 0 ? ins : outs).push_back(gpu::BufferRange{b.buffer(), 0, b.size()});
      buffers.push_back(std::move(b));
    }
  }
  kernels::KernelGraphOptions options;
  options.fuse_elementwise = fuse;
  GPUU_ASSIGN_OR_RETURN(auto delegate, kernels::KernelGraph::create(ctx, g, ins, outs, options));
  std::vector<double> gpu;
  VkCommandBuffer cb = delegate->command_buffer();
  for (int i = 0; i < warmup + runs; ++i) {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    GPUU_VK_RETURN_IF_ERROR(ctx->submit(1, &submit, VK_NULL_HANDLE), "vkQueueSubmit");
    GPUU_VK_RETURN_IF_ERROR(ctx->queue_wait_idle(), "vkQueueWaitIdle");
    if (i >= warmup) gpu.push_back(delegate->last_gpu_time_us());
  }
  std::sort(gpu.begin(), gpu.end());
  return Measured{delegate->dispatch_count(), gpu.empty() ? -1 : gpu[gpu.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 100, warmup = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
  }
  Result<SharedGpuContextPtr> ctx = create_vulkan_context("bench-vgf", 0, DeviceOptions{});
  if (!ctx.ok()) {
    std::fprintf(stderr, "bench_vgf: %s\n", ctx.status().message().c_str());
    return 1;
  }
  struct Case {
    std::string name;
    graph::Graph g;
  };
  std::vector<Case> cases;
  cases.push_back({"rfc_suffix_1x3x4x4", rfc_suffix(3, 4, 4)});
  cases.push_back({"rfc_suffix_1x64x256x256", rfc_suffix(64, 256, 256)});
  cases.push_back({"chain_24_ops_1M", long_chain(24, 1 << 20)});
  cases.push_back({"chain_96_ops_1M", long_chain(96, 1 << 20)});
  std::printf("{\n  \"device\": \"%s\",\n  \"runs\": %d,\n  \"warmup\": %d,\n  \"cases\": [\n",
              ctx.value()->device_name().c_str(), runs, warmup);
  for (size_t k = 0; k < cases.size(); ++k) {
    Result<Measured> fused = run(ctx.value(), cases[k].g, true, warmup, runs);
    Result<Measured> unfused = run(ctx.value(), cases[k].g, false, warmup, runs);
    if (!fused.ok() || !unfused.ok()) {
      std::fprintf(stderr, "bench_vgf: %s: %s%s\n", cases[k].name.c_str(), fused.status().message().c_str(),
                   unfused.status().message().c_str());
      return 1;
    }
    std::printf("    {\"case\": \"%s\", \"fused_dispatches\": %zu, \"unfused_dispatches\": %zu, "
                "\"fused_gpu_median_us\": %.2f, \"unfused_gpu_median_us\": %.2f, \"speedup\": %.2f}%s\n",
                cases[k].name.c_str(), fused->dispatches, unfused->dispatches, fused->gpu_median_us,
                unfused->gpu_median_us,
                fused->gpu_median_us > 0 ? unfused->gpu_median_us / fused->gpu_median_us : -1.0,
                k + 1 == cases.size() ? "" : ",");
  }
  std::printf("  ]\n}\n");
  return 0;
}

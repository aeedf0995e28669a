// int8 GEMM benchmark: conv2d_int and matmul_int (resnet- and
// transformer-sized by default), each one node in a KernelGraph on the
// default Vulkan device, run on each int8 GEMM kernel (direct, tiled with
// multiply-adds, tiled with dot products where the device has them, matrix
// cores where it multiplies i8 cooperative matrices). Per case and kernel:
// the selector's choice as the dispatch records it, GPU time from the
// command buffer's timestamps (median and min after warm-up), integer TOP/s
// from the median, and whether the output is bit-identical to the direct
// kernel's (a wrong kernel must not look fast).
// Prints one JSON object. Run by benchmarks/gemm/run_int8.sh.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "context/vulkan_bootstrap.h"
#include "gpu/device_buffer.h"
#include "gpu/submission.h"
#include "graph/builder.h"
#include "kernels/gemm_select.h"
#include "kernels/kernel_cache.h"
#include "kernels/kernel_graph.h"
#include "bench_device.h"
#include "spirv_file.h"
#include "stats.h"

namespace {

using namespace gpuu;
using bench::median;
using graph::DType;
using gpu::BufferRange;
using gpu::DeviceBuffer;
using gpu::MemoryKind;
using kernels::IntGemmKernel;
using kernels::int_gemm_kernel_name;

struct Case {
  std::string name;
  std::string op;                    // conv2d_int | matmul_int
  std::vector<graph::Shape> inputs;  // conv2d_int: x, w, bias; matmul_int: a, b
  graph::AttrMap attrs;
  double ops = 0;  // 2 per multiply-add
};

Status run_case(const SharedGpuContextPtr& ctx, VkCommandPool pool, const Case& c, int runs, int warmup, bool first) {
  graph::Graph g;
  std::vector<graph::ValueId> ids;
  std::vector<DeviceBuffer> buffers;
  std::vector<BufferRange> in_ranges;
  std::mt19937 rng(7);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const bool bias = c.op == "conv2d_int" && i == 2;
    const DType dtype = bias ? DType::kI32 : DType::kI8;
    GPUU_ASSIGN_OR_RETURN(graph::ValueId id, graph::add_graph_input(g, "in" + std::to_string(i), dtype, c.inputs[i]));
    ids.push_back(id);
    std::vector<uint8_t> bytes(static_cast<size_t>(graph::shape_numel(c.inputs[i])) * graph::dtype_size(dtype));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    GPUU_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::create(*ctx, bytes.size(), MemoryKind::kDevice, "in"));
    GPUU_RETURN_IF_ERROR(gpu::upload_once(*ctx, pool, b, 0, bytes.data(), bytes.size()));
    in_ranges.push_back(BufferRange{b.buffer(), 0, b.size()});
    buffers.push_back(std::move(b));
  }
  GPUU_ASSIGN_OR_RETURN(std::vector<graph::ValueId> outs, graph::add_op(g, c.op, c.name, ids, c.attrs));
  g.mark_output(outs[0]);
  const size_t y_bytes = static_cast<size_t>(graph::shape_numel(g.value(outs[0]).shape)) * 4;

  std::vector<uint8_t> direct;
  bool first_kernel = true;
  // The matrix cores three times: as the selector splits K, with K whole
  // (is the split's reduction repaid?), and a convolution's im2col view
  // gathered in the tiles instead of materialized first (is the view repaid?).
  struct Run {
    IntGemmKernel kernel;
    bool whole_k;
    bool gathered = false;
  };
  for (const Run& run : {Run{IntGemmKernel::kDirect, false}, Run{IntGemmKernel::kTiled, false},
                         Run{IntGemmKernel::kTiledDot, false}, Run{IntGemmKernel::kCoopMat, false},
                         Run{IntGemmKernel::kCoopMat, true}, Run{IntGemmKernel::kCoopMat, false, true}}) {
    if (run.gathered && c.op != "conv2d_int") continue;
    const IntGemmKernel k = run.kernel;
    if (k == IntGemmKernel::kTiledDot && !ctx->has_feature(kFeatureShaderIntegerDotProduct)) continue;
    if (k == IntGemmKernel::kCoopMat && !ctx->has_feature(kFeatureCooperativeMatrix)) continue;
    GPUU_ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::create(*ctx, y_bytes, MemoryKind::kDevice, "out"));
    GPUU_ASSIGN_OR_RETURN(DeviceBuffer readback, DeviceBuffer::create(*ctx, y_bytes, MemoryKind::kReadback, "readback"));
    kernels::KernelGraphOptions options;
    options.int_gemm_kernel = k;
    if (run.whole_k) options.gemm_splits = 1;
    if (run.gathered) options.conv_im2col = false;
    GPUU_ASSIGN_OR_RETURN(std::unique_ptr<kernels::KernelGraph> kg,
                          kernels::KernelGraph::create(ctx, g, in_ranges, {BufferRange{out.buffer(), 0, out.size()}},
                                                       options));
    VkCommandBuffer cb = kg->command_buffer();
    std::vector<double> gpu;
    // By time too, as bench_gemm does: with a count alone a case after the
    // long direct kernels and the pipelines' compiles may run at idle clocks
    // (suspected: H100, 6753b8f, the batch-8 pointwise case 193 us on every
    // GEMM kernel when run ninth, 45 when run third).
    GPUU_RETURN_IF_ERROR(bench::warm_up(*ctx, cb, 0.3));
    for (int i = 0; i < warmup + runs; ++i) {
      GPUU_RETURN_IF_ERROR(bench::submit_and_wait(*ctx, cb).status());
      if (i >= warmup) gpu.push_back(kg->last_gpu_time_us());
    }
    GPUU_RETURN_IF_ERROR(bench::read_back(*ctx, pool, out, readback));
    const uint8_t* got = static_cast<const uint8_t*>(readback.mapped());
    if (k == IntGemmKernel::kDirect) direct.assign(got, got + y_bytes);
    const bool exact = std::memcmp(direct.data(), got, y_bytes) == 0;
    const double med = median(gpu);
    // What ran: the GEMM dispatch's recorded choice (a forced kernel the
    // device lacks falls back), from one run of the same graph with a
    // timestamp per dispatch (kept out of the timed runs).
    std::string choice;
    options.profile_steps = true;
    GPUU_ASSIGN_OR_RETURN(std::unique_ptr<kernels::KernelGraph> profiled,
                          kernels::KernelGraph::create(ctx, g, in_ranges, {BufferRange{out.buffer(), 0, out.size()}},
                                                       options));
    GPUU_RETURN_IF_ERROR(bench::submit_and_wait(*ctx, profiled->command_buffer()).status());
    for (const gpu::TimedStep& step : profiled->step_times()) {
      if (!step.work.choice.empty()) choice = step.work.choice;
    }
    std::printf("%s    {\"case\": \"%s\", \"kernel\": \"%s\", \"choice\": \"%s\", \"dispatches\": %zu, "
                "\"gpu_us_median\": %.1f, \"gpu_us_min\": %.1f, \"tops\": %.4f, \"equals_direct\": %s}",
                first && first_kernel ? "" : ",\n", c.name.c_str(),
                (std::string(int_gemm_kernel_name(k)) + (run.whole_k ? "_whole_k" : "") + (run.gathered ? "_gathered" : ""))
                    .c_str(),
                choice.c_str(),
                kg->dispatch_count(), med,
                *std::min_element(gpu.begin(), gpu.end()), c.ops / med * 1e-6, exact ? "true" : "false");
    first_kernel = false;
  }
  return Status::Ok();
}

double conv_ops(const graph::Shape& x, const graph::Shape& w, int64_t oh, int64_t ow) {
  return 2.0 * double(x[0]) * double(w[0]) * double(oh * ow) * double(w[1] * w[2] * w[3]);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 10, warmup = 2;
  std::string only;
  // --spirv NAME=FILE (repeatable): FILE's SPIR-V runs in place of the
  // built-in kernel NAME (a variant under measurement).
  std::vector<std::pair<std::string, std::string>> spirv;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];  // cases whose name contains it
    else if (!std::strcmp(argv[i], "--spirv") && i + 1 < argc) {
      if (!bench::take_spirv_variant(argv[++i], spirv, "bench_int8_gemm")) return 2;
    } else {
      std::fprintf(stderr, "usage: bench_int8_gemm [--runs N] [--warmup N] [--only TEXT] [--spirv NAME=FILE]...\n");
      return 2;
    }
  }
  const std::unique_ptr<bench::BenchDevice> device = bench::open_bench_device("bench_int8_gemm");
  if (!device) return 1;
  const SharedGpuContextPtr& c = device->ctx;
  // The context's kernel cache (it lives as long as the context), for the variants.
  const std::shared_ptr<kernels::KernelCache> kernel_cache = kernels::KernelCache::shared(c);
  if (!bench::add_spirv_variants(*kernel_cache, spirv, "bench_int8_gemm")) return 2;
  VkCommandPool pool = device->pool;
  const graph::AttrMap pad1 = {{"padding", std::vector<int64_t>{1, 1, 1, 1}},
                               {"input_zp", int64_t{-3}},
                               {"weight_zp", int64_t{0}}};
  const graph::AttrMap pad1_s2 = {{"padding", std::vector<int64_t>{1, 1, 1, 1}},
                                  {"stride", std::vector<int64_t>{2, 2}},
                                  {"input_zp", int64_t{-3}},
                                  {"weight_zp", int64_t{0}}};
  const graph::AttrMap pointwise = {{"input_zp", int64_t{-3}}, {"weight_zp", int64_t{0}}};
  const std::vector<Case> cases = {
      // resnet50's stage-3 3x3 (batch 1): 256 -> 256 at 14x14.
      {"res_3x3_256_14", "conv2d_int", {{1, 256, 14, 14}, {256, 256, 3, 3}, {256}}, pad1,
       conv_ops({1, 256, 14, 14}, {256, 256, 3, 3}, 14, 14)},
      // stage 1: 64 -> 64 at 56x56.
      {"res_3x3_64_56", "conv2d_int", {{1, 64, 56, 56}, {64, 64, 3, 3}, {64}}, pad1,
       conv_ops({1, 64, 56, 56}, {64, 64, 3, 3}, 56, 56)},
      // A strided 3x3 and a pointwise expansion.
      {"res_3x3_128_s2_28", "conv2d_int", {{1, 128, 56, 56}, {128, 128, 3, 3}, {128}}, pad1_s2,
       conv_ops({1, 128, 56, 56}, {128, 128, 3, 3}, 28, 28)},
      {"res_1x1_256to1024_14", "conv2d_int", {{1, 256, 14, 14}, {1024, 256, 1, 1}, {1024}}, pointwise,
       conv_ops({1, 256, 14, 14}, {1024, 256, 1, 1}, 14, 14)},
      // stage 4 at 7x7: 8 tiles of 64x64, K in shares on a large GPU.
      {"res_3x3_512_7", "conv2d_int", {{1, 512, 7, 7}, {512, 512, 3, 3}, {512}}, pad1,
       conv_ops({1, 512, 7, 7}, {512, 512, 3, 3}, 7, 7)},
      // A pointwise convolution at 56x56 (pixels a multiple of 16: read as it lies), batch 2.
      {"res_1x1_64to256_56_b2", "conv2d_int", {{2, 64, 56, 56}, {256, 64, 1, 1}, {256}}, pointwise,
       conv_ops({2, 64, 56, 56}, {256, 64, 1, 1}, 56, 56)},
      // resnet50 at batch 8 (int8 is furthest behind f16 there): 8 images' pixels as columns.
      {"res8_3x3_256_14", "conv2d_int", {{8, 256, 14, 14}, {256, 256, 3, 3}, {256}}, pad1,
       conv_ops({8, 256, 14, 14}, {256, 256, 3, 3}, 14, 14)},
      {"res8_3x3_512_7", "conv2d_int", {{8, 512, 7, 7}, {512, 512, 3, 3}, {512}}, pad1,
       conv_ops({8, 512, 7, 7}, {512, 512, 3, 3}, 7, 7)},
      {"res8_1x1_64to256_56", "conv2d_int", {{8, 64, 56, 56}, {256, 64, 1, 1}, {256}}, pointwise,
       conv_ops({8, 64, 56, 56}, {256, 64, 1, 1}, 56, 56)},
      // The stem: 3 channels, 7x7 stride 2 (K = 147, not a multiple of 16).
      {"res_stem_7x7_s2", "conv2d_int", {{1, 3, 224, 224}, {64, 3, 7, 7}, {64}},
       {{"padding", std::vector<int64_t>{3, 3, 3, 3}}, {"stride", std::vector<int64_t>{2, 2}},
        {"input_zp", int64_t{-3}}, {"weight_zp", int64_t{0}}},
       conv_ops({1, 3, 224, 224}, {64, 3, 7, 7}, 112, 112)},
      // Grouped (resnext-like, 32 groups) with a nonzero weight zero point.
      {"grouped_3x3_256_g32_28", "conv2d_int", {{1, 256, 28, 28}, {256, 8, 3, 3}, {256}},
       {{"padding", std::vector<int64_t>{1, 1, 1, 1}}, {"groups", int64_t{32}}, {"input_zp", int64_t{7}},
        {"weight_zp", int64_t{-2}}},
       conv_ops({1, 256, 28, 28}, {256, 8, 3, 3}, 28, 28)},
      // A transformer's linear on 128 tokens.
      {"matmul_128x768x768", "matmul_int", {{1, 128, 768}, {1, 768, 768}}, {{"a_zp", int64_t{5}}},
       2.0 * 128 * 768 * 768},
      // Attention's scores: both zero points nonzero, N not a multiple of 16, 12 heads.
      {"matmul_12x77x64x77", "matmul_int", {{12, 77, 64}, {12, 64, 77}}, {{"a_zp", int64_t{-9}}, {"b_zp", int64_t{4}}},
       2.0 * 12 * 77 * 64 * 77},
      // A batch-1 classifier: one row, 2048 deep, 1000 columns.
      {"matmul_fc_1x2048x1000", "matmul_int", {{1, 1, 2048}, {1, 2048, 1000}}, {{"b_zp", int64_t{0}}, {"a_zp", int64_t{3}}},
       2.0 * 2048 * 1000},
  };
  std::printf("{\"device\": \"%s\", \"dot_product\": %s, \"runs\": %d, \"cases\": [\n", c->device_name().c_str(),
              c->has_feature(kFeatureShaderIntegerDotProduct) ? "true" : "false", runs);
  bool first = true;
  for (const Case& k : cases) {
    if (!only.empty() && k.name.find(only) == std::string::npos) continue;
    Status s = run_case(c, pool, k, runs, warmup, first);
    if (!s.ok()) {
      std::fprintf(stderr, "bench_int8_gemm: %s: %s\n", k.name.c_str(), s.message().c_str());
      return 1;
    }
    first = false;
  }
  std::printf("\n]}\n");
  return 0;
}

// GEMM benchmark: f32 and f16 matmul (default 4096^3) and conv2d as an implicit
// GEMM, each one node in a KernelGraph on the default Vulkan device, inputs and
// output in device memory. Per case: GPU time from the command buffer's
// timestamps (median and min after warm-up), TFLOP/s from the median, the
// kernel the selector picked, and the largest relative error of sampled
// outputs against a host dot product (a wrong kernel must not look fast).
// Prints one JSON object. Run by benchmarks/gemm/run.sh.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/half.h"
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

struct Case {
  std::string name;
  std::string op;  // matmul | conv2d
  DType dtype;
  std::optional<kernels::GemmKernel> force;
  std::vector<graph::Shape> inputs;  // matmul: a, b; conv2d: x, w, bias
  graph::AttrMap attrs;
  double flops = 0;
  std::optional<uint32_t> splits;  // forced split-K shares (--sweep-real)
  bool bias_gelu = false;          // linear with a bias, then tanh-GELU (--chain): the epilogue's cost
};

// Values in [-1, 1) of `dtype`, and their exact float values for the host check.
struct HostData {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

HostData random_data(DType dtype, size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  HostData d;
  d.values.resize(count);
  d.bytes.resize(count * graph::dtype_size(dtype));
  for (size_t i = 0; i < count; ++i) {
    float v = dist(rng);
    if (dtype == DType::kF16) {
      uint16_t h = float_to_half(v);
      v = half_to_float(h);
      std::memcpy(d.bytes.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(d.bytes.data() + 4 * i, &v, 4);
    }
    d.values[i] = v;
  }
  return d;
}

// Expected output element `index` of the case (double sums).
double reference(const Case& c, const std::vector<HostData>& in, size_t index) {
  if (c.op == "matmul" || c.op == "linear") {
    const bool linear = c.op == "linear";  // B is the weight [N, K]
    const int64_t k = c.inputs[0][1], n = linear ? c.inputs[1][0] : c.inputs[1][1];
    const int64_t i = static_cast<int64_t>(index) / n, j = static_cast<int64_t>(index) % n;
    double s = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      s += double(in[0].values[i * k + kk]) * in[1].values[linear ? j * k + kk : kk * n + j];
    }
    if (c.bias_gelu) {
      s += in[2].values[j];
      s = 0.5 * s * (1.0 + std::tanh(0.7978845608028654 * (s + 0.044715 * s * s * s)));
    }
    return s;
  }
  const graph::Shape &x = c.inputs[0], &w = c.inputs[1];
  const int64_t pad = w[2] / 2, oh = x[2], ow = x[3];  // stride 1, "same" padding (3x3: 1, 1x1: 0)
  const int64_t ox = static_cast<int64_t>(index) % ow, oy = static_cast<int64_t>(index) / ow % oh;
  const int64_t o = static_cast<int64_t>(index) / (ow * oh) % w[0], b = static_cast<int64_t>(index) / (ow * oh * w[0]);
  double s = in[2].values[o];
  for (int64_t ci = 0; ci < w[1]; ++ci) {
    for (int64_t ky = 0; ky < w[2]; ++ky) {
      for (int64_t kx = 0; kx < w[3]; ++kx) {
        int64_t iy = oy + ky - pad, ix = ox + kx - pad;
        if (iy < 0 || iy >= x[2] || ix < 0 || ix >= x[3]) continue;
        s += double(in[0].values[((b * x[1] + ci) * x[2] + iy) * x[3] + ix]) *
             in[1].values[((o * w[1] + ci) * w[2] + ky) * w[3] + kx];
      }
    }
  }
  return s;
}

Status run_case(const SharedGpuContextPtr& ctx, VkCommandPool pool, const Case& c, int runs, int warmup,
                bool first, double first_warmup_s) {
  graph::Graph g;
  std::vector<graph::ValueId> ids;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    GPUU_ASSIGN_OR_RETURN(graph::ValueId id, graph::add_graph_input(g, "in" + std::to_string(i), c.dtype, c.inputs[i]));
    ids.push_back(id);
  }
  GPUU_ASSIGN_OR_RETURN(std::vector<graph::ValueId> outs, graph::add_op(g, c.op, c.name, ids, c.attrs));
  if (c.bias_gelu) {
    GPUU_ASSIGN_OR_RETURN(outs, graph::add_op(g, "gelu", "gelu", {outs[0]}, {{"approximate", std::string("tanh")}}));
  }
  g.mark_output(outs[0]);
  const graph::Value& y = g.value(outs[0]);
  const size_t y_bytes = static_cast<size_t>(graph::shape_numel(y.shape)) * graph::dtype_size(c.dtype);

  std::vector<HostData> data;
  std::vector<DeviceBuffer> buffers;
  std::vector<BufferRange> in_ranges;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    data.push_back(random_data(c.dtype, static_cast<size_t>(graph::shape_numel(c.inputs[i])), 7 + uint32_t(i)));
    GPUU_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::create(*ctx, data[i].bytes.size(), MemoryKind::kDevice, "in"));
    GPUU_RETURN_IF_ERROR(gpu::upload_once(*ctx, pool, b, 0, data[i].bytes.data(), data[i].bytes.size()));
    in_ranges.push_back(BufferRange{b.buffer(), 0, b.size()});
    buffers.push_back(std::move(b));
  }
  GPUU_ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::create(*ctx, y_bytes, MemoryKind::kDevice, "out"));
  GPUU_ASSIGN_OR_RETURN(DeviceBuffer readback, DeviceBuffer::create(*ctx, y_bytes, MemoryKind::kReadback, "readback"));
  kernels::KernelGraphOptions options;
  options.gemm_kernel = c.force;
  options.gemm_splits = c.splits;
  GPUU_ASSIGN_OR_RETURN(std::unique_ptr<kernels::KernelGraph> kg,
                        kernels::KernelGraph::create(ctx, g, in_ranges, {BufferRange{out.buffer(), 0, out.size()}},
                                                     options));
  VkCommandBuffer cb = kg->command_buffer();
  std::vector<double> gpu, wall;
  // Warm-up by time as well as count (first case: `first_warmup_s`, then 0.3 s each).
  GPUU_RETURN_IF_ERROR(bench::warm_up(*ctx, cb, first ? first_warmup_s : 0.3));
  for (int i = 0; i < warmup + runs; ++i) {
    GPUU_ASSIGN_OR_RETURN(const double us, bench::submit_and_wait(*ctx, cb));
    if (i < warmup) continue;
    gpu.push_back(kg->last_gpu_time_us());
    wall.push_back(us);
  }

  // Sampled outputs against the host (corners included: edge tiles).
  GPUU_RETURN_IF_ERROR(bench::read_back(*ctx, pool, out, readback));
  const size_t count = static_cast<size_t>(graph::shape_numel(y.shape));
  std::mt19937 rng(99);
  std::vector<size_t> samples = {0, count - 1};
  for (int i = 0; i < 62; ++i) samples.push_back(rng() % count);
  double max_err = 0;
  for (size_t s : samples) {
    double got;
    if (c.dtype == DType::kF16) {
      uint16_t h;
      std::memcpy(&h, static_cast<const uint8_t*>(readback.mapped()) + 2 * s, 2);
      got = half_to_float(h);
    } else {
      float f;
      std::memcpy(&f, static_cast<const uint8_t*>(readback.mapped()) + 4 * s, 4);
      got = f;
    }
    double want = reference(c, data, s);
    max_err = std::max(max_err, std::fabs(got - want) / std::max(1.0, std::fabs(want)));
  }

  const double gpu_us = median(gpu);
  // The pick the lowering made, for the problem as the lowering states it.
  const bool conv = c.op == "conv2d";
  kernels::GemmProblem problem{conv};
  if (conv) {
    const graph::Shape& w = c.inputs[1];
    problem.m = static_cast<uint32_t>(w[0]);
    problem.n = static_cast<uint32_t>(y.shape[0] * y.shape[2] * y.shape[3]);
    problem.k = static_cast<uint32_t>(w[1] * w[2] * w[3]);
  } else {
    problem.m = static_cast<uint32_t>(c.inputs[0][c.inputs[0].size() - 2]);
    problem.k = static_cast<uint32_t>(c.inputs[0].back());
    problem.b_k_contiguous = c.op == "linear";
    problem.n = static_cast<uint32_t>(problem.b_k_contiguous ? c.inputs[1][0] : c.inputs[1].back());
    // Its own contiguous buffers: B's rows are K (linear) or N (matmul) apart.
    problem.tensor_addressable = kernels::tensor_addressable(
        problem.k, problem.n, 1, problem.b_k_contiguous ? problem.k : problem.n, true, true);
  }
  const kernels::GemmChoice choice = kernels::select_gemm(*ctx, c.dtype, kernels::GemmForce{c.force, c.splits}, problem);
  std::printf("%s    {\"name\": \"%s\", \"kernel\": \"%s\", \"shader\": \"%s\", \"flops\": %.0f, \"gpu_us\": %.1f, "
              "\"gpu_us_min\": %.1f, \"wall_us\": %.1f, \"tflops\": %.4g, \"max_rel_err\": %.2e, \"runs\": %d}",
              first ? "" : ",\n", c.name.c_str(), choice.describe().c_str(),
              choice.shader(conv, c.dtype).c_str(), c.flops, gpu_us,
              *std::min_element(gpu.begin(), gpu.end()), median(wall), gpu_us > 0 ? c.flops / gpu_us / 1e6 : -1.0,
              max_err, runs);
  std::fflush(stdout);
  return Status::Ok();
}

// The GEMMs of the real-size models (benchmarks/real) at batch 1, each as the
// selector picks it and forced to every gemm.comp tile with 1 to 8 shares of K
// (f32) and to the matrix-core kernel with 1 to 4 (f16): the data the
// occupancy policy of gemm_select.cpp is set by.
std::vector<Case> real_model_sweep() {
  using kernels::GemmKernel;
  struct Shape3 {
    const char* name;
    int64_t m, k, n;
  };
  const Shape3 gemms[] = {
      {"vit_qkv", 197, 768, 2304},   {"vit_proj", 197, 768, 768},   {"vit_fc1", 197, 768, 3072},
      {"vit_fc2", 197, 3072, 768},   {"gpt128_qkv", 128, 768, 2304}, {"gpt128_fc2", 128, 3072, 768},
      {"gpt2048_qkv", 2048, 768, 2304}, {"gpt2048_proj", 2048, 768, 768},
      {"gpt2048_fc1", 2048, 768, 3072}, {"gpt2048_fc2", 2048, 3072, 768}, {"decode_fc1", 1, 768, 3072}, {"decode_4096", 1, 4096, 4096},
      {"mlp1024", 1, 1024, 1024},
      // A Llama-3.2-1B-shaped decode step (benchmarks/llm's 1b): bound by reading the weights.
      {"llm1b_q", 1, 2048, 2048}, {"llm1b_kv", 1, 2048, 512}, {"llm1b_fc1", 1, 2048, 8192},
      {"llm1b_fc2", 1, 8192, 2048}, {"llm1b_head", 1, 2048, 128256},
  };
  graph::AttrMap conv_attrs = {{"stride", std::vector<int64_t>{1, 1}},
                               {"padding", std::vector<int64_t>{1, 1}},
                               {"dilation", std::vector<int64_t>{1, 1}},
                               {"groups", int64_t{1}}};
  graph::AttrMap pointwise = conv_attrs;
  pointwise["padding"] = std::vector<int64_t>{0, 0};
  struct Conv {
    const char* name;
    int64_t c, o, hw, k;
    int64_t batch = 1;
  };
  const Conv convs[] = {{"res_3x3_512_7", 512, 512, 7, 3}, {"res_1x1_512to2048_7", 512, 2048, 7, 1},
                        {"res_1x1_2048to512_7", 2048, 512, 7, 1}, {"res_3x3_64_56", 64, 64, 56, 3},
                        {"res_3x3_256_14", 256, 256, 14, 3}, {"se_1x1_960to240_1", 960, 240, 1, 1},
                        // resnet50 at batch 8: the same layers with 8 images' pixels as columns.
                        {"res8_1x1_64to256_56", 64, 256, 56, 1, 8}, {"res8_3x3_64_56", 64, 64, 56, 3, 8},
                        {"res8_3x3_128_28", 128, 128, 28, 3, 8}, {"res8_3x3_256_14", 256, 256, 14, 3, 8},
                        {"res8_3x3_512_7", 512, 512, 7, 3, 8}, {"res8_1x1_2048to512_7", 2048, 512, 7, 1, 8},
                        // efficientnet_b0's pointwise convolutions at batch 1: few channels in or out, many
                        // pixels or few (K of 16 to 1152; 196 and 49 pixels are not whole 8-half vectors).
                        {"eff_1x1_16to96_112", 16, 96, 112, 1}, {"eff_1x1_96to24_56", 96, 24, 56, 1},
                        {"eff_1x1_24to144_56", 24, 144, 56, 1}, {"eff_1x1_144to40_28", 144, 40, 28, 1},
                        {"eff_1x1_240to80_14", 240, 80, 14, 1}, {"eff_1x1_480to112_14", 480, 112, 14, 1},
                        {"eff_1x1_672to192_7", 672, 192, 7, 1}, {"eff_1x1_1152to320_7", 1152, 320, 7, 1}};
  std::vector<Case> cases;
  auto variants = [&](const Case& base) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      Case c = base;
      c.dtype = dtype;
      c.name = base.name + (dtype == DType::kF16 ? "_f16" : "_f32");
      cases.push_back(c);  // the selector's own pick
      std::vector<std::pair<GemmKernel, std::vector<uint32_t>>> forms;
      if (dtype == DType::kF32) {
        forms = {{GemmKernel::kTiled64, {1, 2, 3, 4, 6, 8}}, {GemmKernel::kTiled128, {1, 2, 3, 4, 6, 8}}, {GemmKernel::kGemv, {1, 4}}};
      } else {
        forms = {{GemmKernel::kCoopMat, {1, 2, 4}},
                 {GemmKernel::kCoopMatSmall, {1, 2, 4}},
                 {GemmKernel::kTiled64, {1, 4}},
                 {GemmKernel::kGemv, {1, 4}}};
      }
      for (const auto& [kernel, splits] : forms) {
        for (uint32_t s : splits) {
          Case f = c;
          f.force = kernel;
          f.splits = s;
          f.name = c.name + "_" +
                   (kernel == GemmKernel::kTiled64    ? "t64"
                    : kernel == GemmKernel::kTiled128 ? "t128"
                    : kernel == GemmKernel::kGemv     ? "gemv"
                    : kernel == GemmKernel::kCoopMatSmall ? "coopsmall"
                                                      : "coop") +
                   "_s" + std::to_string(s);
          cases.push_back(f);
        }
      }
    }
  };
  for (const Shape3& g : gemms) {
    // As the models have them: linear, the weight [N, K].
    variants(Case{g.name, "linear", DType::kF32, std::nullopt, {{g.m, g.k}, {g.n, g.k}}, {}, 2.0 * g.m * g.k * g.n});
  }
  for (const Conv& v : convs) {
    variants(Case{v.name, "conv2d", DType::kF32, std::nullopt,
                  {{v.batch, v.c, v.hw, v.hw}, {v.o, v.c, v.k, v.k}, {v.o}}, v.k == 1 ? pointwise : conv_attrs,
                  2.0 * v.batch * v.o * v.hw * v.hw * v.c * v.k * v.k});
  }
  return cases;
}

// --linear's cases: per M,K,N an f16 linear as picked and on each matrix-core
// tile unsplit, and an f32 one as picked; with `chain`, also the f16 linear
// with a bias and tanh-GELU after it (GPT-2's fc1) as picked and on the
// small tile.
std::vector<Case> linear_cases(const std::vector<std::array<int64_t, 3>>& sizes, bool chain) {
  using kernels::GemmKernel;
  std::vector<Case> cases;
  for (const auto& [m, k, n] : sizes) {
    const std::string name = "linear_" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
    const Case base{name, "linear", DType::kF16, std::nullopt, {{m, k}, {n, k}}, {}, 2.0 * m * k * n};
    cases.push_back(base);
    if (chain) {
      Case g = base;
      g.name += "_bias_gelu";
      g.inputs.push_back({n});
      g.bias_gelu = true;
      cases.push_back(g);
      g.force = GemmKernel::kCoopMatSmall;
      g.splits = 1;
      g.name += "_coopsmall";
      cases.push_back(g);
    }
    for (auto [kernel, suffix] : {std::pair{GemmKernel::kCoopMat, "_coop"}, std::pair{GemmKernel::kCoopMatSmall, "_coopsmall"},
                                  std::pair{GemmKernel::kCoopMatTall, "_cooptall"}, std::pair{GemmKernel::kCoopMat2, "_coop2"},
                                  std::pair{GemmKernel::kCoopMat2Tall, "_coop2tall"}}) {
      Case f = base;
      f.force = kernel;
      f.splits = 1;
      f.name += suffix;
      cases.push_back(f);
    }
    Case f32 = base;
    f32.dtype = DType::kF32;
    f32.name += "_f32";
    cases.push_back(f32);
  }
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 30, warmup = 5;
  int64_t size = 4096;
  bool quick = false, sweep_real = false, chain = false;
  double warmup_s = 0;
  std::vector<std::string> only;  // --only A,B: the cases whose name contains A or B
  // --linear M,K,N (repeatable): an f16 and an f32 linear of that size instead
  // of the default cases, each as picked and forced to the matrix-core tiles.
  std::vector<std::array<int64_t, 3>> linears;
  // --spirv NAME=FILE (repeatable): FILE's SPIR-V runs in place of the
  // built-in kernel NAME (a variant under measurement).
  std::vector<std::pair<std::string, std::string>> spirv;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--size") && i + 1 < argc) size = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) quick = true;  // small shapes, for CPU devices
    else if (!std::strcmp(argv[i], "--warmup-s") && i + 1 < argc) warmup_s = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--sweep-real")) sweep_real = true;  // real models' GEMMs, every tile and split
    else if (!std::strcmp(argv[i], "--chain")) chain = true;  // --linear's cases with a bias and GELU too
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        size_t comma = std::min(list.find(',', at), list.size());
        only.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (!std::strcmp(argv[i], "--linear") && i + 1 < argc) {
      std::array<int64_t, 3> mkn{};
      if (std::sscanf(argv[++i], "%" SCNd64 ",%" SCNd64 ",%" SCNd64, &mkn[0], &mkn[1], &mkn[2]) != 3 ||
          mkn[0] <= 0 || mkn[1] <= 0 || mkn[2] <= 0) {
        std::fprintf(stderr, "bench_gemm: --linear wants M,K,N, got '%s'\n", argv[i]);
        return 2;
      }
      linears.push_back(mkn);
    } else if (!std::strcmp(argv[i], "--spirv") && i + 1 < argc) {
      if (!bench::take_spirv_variant(argv[++i], spirv, "bench_gemm")) return 2;
    } else {
      std::fprintf(stderr,
                   "usage: bench_gemm [--runs N] [--warmup N] [--warmup-s SECONDS] [--size S] [--quick] [--sweep-real] "
                   "[--only NAME,...] [--linear M,K,N]... [--chain] [--spirv NAME=FILE]...\n");
      return 2;
    }
  }
  if (quick) size = std::min<int64_t>(size, 256);
  const std::unique_ptr<bench::BenchDevice> device = bench::open_bench_device("bench_gemm");
  if (!device) return 1;
  const SharedGpuContextPtr& c = device->ctx;
  VkCommandPool pool = device->pool;

  const double mm = 2.0 * double(size) * double(size) * double(size);
  // conv2d 3x3, padding 1: M = 256 output channels, N = batch*56*56, K = 256*9.
  const int64_t batch = quick ? 1 : 16, ch = quick ? 32 : 256, hw = quick ? 14 : 56;
  const double conv = 2.0 * double(ch) * double(batch * hw * hw) * double(ch * 9);
  graph::AttrMap conv_attrs = {{"stride", std::vector<int64_t>{1, 1}},
                               {"padding", std::vector<int64_t>{1, 1}},
                               {"dilation", std::vector<int64_t>{1, 1}},
                               {"groups", int64_t{1}}};
  using kernels::GemmKernel;
  // f32 first: a driver failure on the matrix-core kernel must not cost them.
  std::vector<Case> cases = {
      {"matmul_f32", "matmul", DType::kF32, std::nullopt, {{size, size}, {size, size}}, {}, mm},
      {"conv2d_f32", "conv2d", DType::kF32, std::nullopt, {{batch, ch, hw, hw}, {ch, ch, 3, 3}, {ch}}, conv_attrs, conv},
      // The other kernels, for comparison (each falls back to the selector's
      // pick where the device cannot run it: see "kernel" in the output).
      {"matmul_f32_tiled64", "matmul", DType::kF32, GemmKernel::kTiled64, {{size, size}, {size, size}}, {}, mm},
      {"matmul_f16_tiled128", "matmul", DType::kF16, GemmKernel::kTiled128, {{size, size}, {size, size}}, {}, mm},
      {"matmul_f16", "matmul", DType::kF16, std::nullopt, {{size, size}, {size, size}}, {}, mm},
      {"conv2d_f16", "conv2d", DType::kF16, std::nullopt, {{batch, ch, hw, hw}, {ch, ch, 3, 3}, {ch}}, conv_attrs, conv},
      // Rows off the tile (ALIGNED 2), as a transformer's batch x sequence often is.
      {"matmul_f16_rows_4000", "matmul", DType::kF16, std::nullopt, {{4000, size}, {size, size}}, {},
       2.0 * 4000 * double(size) * double(size)},
      {"matmul_f16_coopmat_tall", "matmul", DType::kF16, GemmKernel::kCoopMatTall, {{size, size}, {size, size}}, {},
       mm},
      {"conv2d_f16_coopmat_square", "conv2d", DType::kF16, GemmKernel::kCoopMat,
       {{batch, ch, hw, hw}, {ch, ch, 3, 3}, {ch}}, conv_attrs, conv},
  };
  if (sweep_real) cases = real_model_sweep();
  if (!linears.empty()) cases = linear_cases(linears, chain);
  // The context's kernel cache (it lives as long as the context), for the variants.
  const std::shared_ptr<kernels::KernelCache> kernel_cache = kernels::KernelCache::shared(c);
  if (!bench::add_spirv_variants(*kernel_cache, spirv, "bench_gemm")) return 2;
  if (!only.empty()) {
    std::vector<Case> kept;
    for (const Case& k : cases) {
      if (std::any_of(only.begin(), only.end(), [&](const std::string& o) { return k.name.find(o) != std::string::npos; })) {
        kept.push_back(k);
      }
    }
    cases = std::move(kept);
  }
  // What the selector saw: the device's cooperative-matrix shapes (M x N x K,
  // VkComponentTypeKHR of A/B/C/result, VkScopeKHR).
  // Workgroup-scope (VK_NV_cooperative_matrix2) shapes are granularities,
  // with the workgroup size they need.
  auto list = [](const std::vector<CooperativeMatrixShape>& all) {
    std::string shapes;
    for (const CooperativeMatrixShape& s : all) {
      shapes += (shapes.empty() ? "\"" : ", \"") + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                std::to_string(s.k) + " " + std::to_string(s.a_type) + "/" + std::to_string(s.b_type) + "/" +
                std::to_string(s.c_type) + "/" + std::to_string(s.result_type) + (s.saturating ? " sat" : "") +
                " scope " + std::to_string(s.scope) +
                (s.workgroup_invocations ? " wg " + std::to_string(s.workgroup_invocations) : std::string()) + "\"";
    }
    return shapes;
  };
  const CooperativeMatrixWorkgroupLimits& wg = c->cooperative_matrix_workgroup();
  std::printf("{\n  \"device\": \"%s\",\n  \"max_shared_bytes\": %u,\n  \"size\": %lld,\n  \"cooperative_matrix\": %s,\n"
              "  \"subgroup_size\": %u,\n  \"cooperative_matrix_shapes\": [%s],\n"
              "  \"cooperative_matrix_workgroup\": {\"enabled\": %s, \"max_workgroup_size\": %u, \"max_dimension\": %u, "
              "\"reserved_shared_bytes\": %u, \"shapes\": [%s]},\n  \"cases\": [\n",
              c->device_name().c_str(), c->properties().limits.maxComputeSharedMemorySize, static_cast<long long>(size),
              c->has_feature(kFeatureCooperativeMatrix) ? "true" : "false", c->subgroup_size(),
              list(c->cooperative_matrix_shapes()).c_str(),
              c->has_feature(kFeatureCooperativeMatrixWorkgroup) ? "true" : "false", wg.max_workgroup_size,
              wg.max_dimension, wg.reserved_shared_bytes, list(wg.shapes).c_str());
  bool first = true;
  int rc = 0;
  for (const Case& k : cases) {
    if (k.dtype == DType::kF16 && !(c->has_feature(kFeatureShaderFloat16) && c->has_feature(kFeatureStorageBuffer16Bit))) {
      continue;
    }
    Status s = run_case(c, pool, k, runs, warmup, first, warmup_s);
    if (!s.ok()) {
      std::fprintf(stderr, "bench_gemm: %s: %s\n", k.name.c_str(), s.message().c_str());
      rc = 1;
      continue;
    }
    first = false;
  }
  std::printf("\n  ]\n}\n");
  return rc;
}

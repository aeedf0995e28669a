// Attention benchmark: scaled_dot_product_attention as one node (the flash
// kernel, attention.comp) against the graph it replaces (matmul q k^T, the
// scale, a causal mask where asked, softmax, matmul with v) on the default
// Vulkan device, at GPT-2-small's shape (12 heads of 64) over sequence
// lengths, f32 and f16. Per case: GPU time (median of the command buffer's
// timestamps after warm-up) of the one node, of the same node reading q, k
// and v through views of a fused [L, 3 * 768] projection (split, view,
// transpose: no copies), of the whole decomposed graph, and of its two GEMMs
// alone (per-dispatch timestamps); and the largest difference between the
// two outputs. Then decode steps (one query row, grouped heads, over a cache;
// `--decode` alone): the kernel in one pass against the keys split among
// workgroups as the device's multiprocessor count has it (flash-decoding).
// Prints one JSON object, then a table on stderr.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/half.h"
#include "context/vulkan_bootstrap.h"
#include "gpu/device_buffer.h"
#include "gpu/submission.h"
#include "graph/builder.h"
#include "kernels/kernel_graph.h"
#include "bench_device.h"
#include "stats.h"

namespace {

using namespace gpuu;
using bench::median;
using graph::DType;
using gpu::BufferRange;
using gpu::DeviceBuffer;
using gpu::MemoryKind;

constexpr int64_t kHeads = 12, kHeadDim = 64;
int64_t g_batch = 1;  // --batch: the prefills' batch (GPT-2's trunk at batch 4 x 512 in the real-size suite)

std::vector<uint8_t> random_bytes(DType dtype, size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint8_t> bytes(count * graph::dtype_size(dtype));
  for (size_t i = 0; i < count; ++i) {
    float v = dist(rng);
    if (dtype == DType::kF16) {
      uint16_t h = float_to_half(v);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  }
  return bytes;
}

float element(DType dtype, const void* data, size_t i) {
  if (dtype == DType::kF16) {
    uint16_t h;
    std::memcpy(&h, static_cast<const uint8_t*>(data) + 2 * i, 2);
    return half_to_float(h);
  }
  float f;
  std::memcpy(&f, static_cast<const uint8_t*>(data) + 4 * i, 4);
  return f;
}

Blob constant_of(DType dtype, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * graph::dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kF16) {
      uint16_t h = float_to_half(values[i]);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(bytes.data() + 4 * i, &values[i], 4);
    }
  }
  return Blob::copy_of(bytes.data(), bytes.size());
}

struct Timing {
  double gpu_us = -1;
  std::vector<gpu::TimedStep> steps;  // with per-dispatch timestamps
  std::vector<uint8_t> output;        // the first output's bytes
};

// Builds `g` into a KernelGraph over device buffers holding `inputs`, runs it
// (warm-up, then `runs` timed submits), and returns the median GPU time; with
// `profile`, one more run with per-dispatch timestamps gives the steps. The
// output is device memory too, copied back once after the timing, as a model
// keeps it for the next layer: written straight into host memory, scattered
// 8-byte stores crossed PCIe inside the timed kernel (the matrix-core
// attention measured twice its time in the models, 12-12-06).
Result<Timing> time_graph(const SharedGpuContextPtr& ctx, VkCommandPool pool, const graph::Graph& g,
                          const std::vector<std::vector<uint8_t>>& inputs, int runs, bool profile,
                          const kernels::KernelGraphOptions& base = {}) {
  std::vector<DeviceBuffer> buffers;
  std::vector<BufferRange> in_ranges, out_ranges;
  for (const std::vector<uint8_t>& bytes : inputs) {
    GPUU_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::create(*ctx, bytes.size(), MemoryKind::kDevice, "in"));
    GPUU_RETURN_IF_ERROR(gpu::upload_once(*ctx, pool, b, 0, bytes.data(), bytes.size()));
    in_ranges.push_back(BufferRange{b.buffer(), 0, b.size()});
    buffers.push_back(std::move(b));
  }
  const graph::Value& y = g.value(g.outputs()[0]);
  const size_t y_bytes = static_cast<size_t>(graph::shape_numel(y.shape)) * graph::dtype_size(y.dtype);
  GPUU_ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::create(*ctx, y_bytes, MemoryKind::kDevice, "out"));
  GPUU_ASSIGN_OR_RETURN(DeviceBuffer readback, DeviceBuffer::create(*ctx, y_bytes, MemoryKind::kReadback, "readback"));
  out_ranges.push_back(BufferRange{out.buffer(), 0, out.size()});
  Timing t;
  for (int pass = 0; pass < (profile ? 2 : 1); ++pass) {
    kernels::KernelGraphOptions options = base;
    options.profile_steps = pass == 1;
    GPUU_ASSIGN_OR_RETURN(std::unique_ptr<kernels::KernelGraph> kg,
                          kernels::KernelGraph::create(ctx, g, in_ranges, out_ranges, options));
    VkCommandBuffer cb = kg->command_buffer();
    std::vector<double> gpu;
    // A cold GPU clocks low: warm up for a while, not a few runs.
    const auto warm_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(pass == 0 ? 200 : 20);
    while (std::chrono::steady_clock::now() < warm_until) GPUU_RETURN_IF_ERROR(bench::submit_and_wait(*ctx, cb).status());
    for (int i = 0; i < (pass == 0 ? runs : 5); ++i) {
      GPUU_RETURN_IF_ERROR(bench::submit_and_wait(*ctx, cb).status());
      gpu.push_back(kg->last_gpu_time_us());
    }
    if (pass == 0) {
      t.gpu_us = median(gpu);
      GPUU_RETURN_IF_ERROR(bench::read_back(*ctx, pool, out, readback));
      const auto* mapped = static_cast<const uint8_t*>(readback.mapped());
      t.output.assign(mapped, mapped + y_bytes);
    } else {
      t.steps = kg->step_times();
    }
  }
  return t;
}

struct Shapes {
  DType dtype;
  int64_t len;
  bool causal;
};

Status run_case(const SharedGpuContextPtr& ctx, VkCommandPool pool, const Shapes& s, int runs, bool first) {
  const graph::Shape heads = {g_batch, kHeads, s.len, kHeadDim};
  const size_t n = static_cast<size_t>(graph::shape_numel(heads));
  std::vector<std::vector<uint8_t>> qkv = {random_bytes(s.dtype, n, 1), random_bytes(s.dtype, n, 2),
                                           random_bytes(s.dtype, n, 3)};
  const graph::AttrMap causal = {{"is_causal", int64_t{s.causal ? 1 : 0}}};

  // The one node.
  graph::Graph one;
  {
    auto q = graph::add_graph_input(one, "q", s.dtype, heads).value();
    auto k = graph::add_graph_input(one, "k", s.dtype, heads).value();
    auto v = graph::add_graph_input(one, "v", s.dtype, heads).value();
    GPUU_ASSIGN_OR_RETURN(auto y, graph::add_op(one, "scaled_dot_product_attention", "attn", {q, k, v}, causal));
    one.mark_output(y[0]);
  }
  // The one node over a fused projection [1, L, 3 * H * E]: q, k, v as views.
  graph::Graph fused;
  const int64_t width = kHeads * kHeadDim;
  {
    auto x = graph::add_graph_input(fused, "x", s.dtype, {g_batch, s.len, 3 * width}).value();
    std::vector<graph::ValueId> parts;
    for (int64_t i = 0; i < 3; ++i) {
      std::string name = "p" + std::to_string(i);
      GPUU_ASSIGN_OR_RETURN(auto p, graph::add_op(fused, "slice", name, {x},
                                                  {{"axes", std::vector<int64_t>{2}},
                                                   {"starts", std::vector<int64_t>{i * width}},
                                                   {"ends", std::vector<int64_t>{(i + 1) * width}}}));
      GPUU_ASSIGN_OR_RETURN(auto r, graph::add_op(fused, "reshape", name + "_r", {p[0]},
                                                  {{"shape", std::vector<int64_t>{g_batch, s.len, kHeads, kHeadDim}}}));
      GPUU_ASSIGN_OR_RETURN(auto t, graph::add_op(fused, "transpose", name + "_t", {r[0]},
                                                  {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
      parts.push_back(t[0]);
    }
    GPUU_ASSIGN_OR_RETURN(auto y, graph::add_op(fused, "scaled_dot_product_attention", "attn", parts, causal));
    fused.mark_output(y[0]);
  }
  // What it replaces: k arrives transposed, as the decomposition's GEMM reads it.
  graph::Graph parts;
  {
    auto q = graph::add_graph_input(parts, "q", s.dtype, heads).value();
    auto kt = graph::add_graph_input(parts, "kt", s.dtype, {g_batch, kHeads, kHeadDim, s.len}).value();
    auto v = graph::add_graph_input(parts, "v", s.dtype, heads).value();
    GPUU_ASSIGN_OR_RETURN(auto scores, graph::add_op(parts, "matmul", "qk", {q, kt}, {}));
    auto scale = graph::add_graph_constant(parts, "scale", s.dtype, {1},
                                           constant_of(s.dtype, {1.0f / std::sqrt(float(kHeadDim))}))
                     .value();
    GPUU_ASSIGN_OR_RETURN(auto scaled, graph::add_op(parts, "mul", "scale", {scores[0], scale}, {}));
    graph::ValueId logits = scaled[0];
    if (s.causal) {
      std::vector<float> mask(static_cast<size_t>(s.len * s.len));
      for (int64_t i = 0; i < s.len; ++i) {
        for (int64_t j = 0; j < s.len; ++j) mask[static_cast<size_t>(i * s.len + j)] = j <= i ? 0.0f : -INFINITY;
      }
      auto m = graph::add_graph_constant(parts, "mask", s.dtype, {s.len, s.len}, constant_of(s.dtype, mask)).value();
      GPUU_ASSIGN_OR_RETURN(auto masked, graph::add_op(parts, "add", "mask", {logits, m}, {}));
      logits = masked[0];
    }
    GPUU_ASSIGN_OR_RETURN(auto p, graph::add_op(parts, "softmax", "softmax", {logits}, {{"axis", int64_t{-1}}}));
    GPUU_ASSIGN_OR_RETURN(auto y, graph::add_op(parts, "matmul", "pv", {p[0], v}, {}));
    parts.mark_output(y[0]);
  }
  // k transposed on the host for the decomposed graph; x = [q | k | v] per row for the fused one.
  const size_t es = graph::dtype_size(s.dtype);
  std::vector<uint8_t> kt(qkv[1].size()), x(3 * qkv[0].size());
  for (int64_t bh = 0; bh < g_batch * kHeads; ++bh) {
    const int64_t b = bh / kHeads, h = bh % kHeads;
    for (int64_t j = 0; j < s.len; ++j) {
      for (int64_t e = 0; e < kHeadDim; ++e) {
        const size_t at = static_cast<size_t>((bh * s.len + j) * kHeadDim + e);
        std::memcpy(&kt[static_cast<size_t>((bh * kHeadDim + e) * s.len + j) * es], &qkv[1][at * es], es);
        for (int64_t w = 0; w < 3; ++w) {
          const size_t to = static_cast<size_t>((b * s.len + j) * 3 * width + w * width + h * kHeadDim + e);
          std::memcpy(&x[to * es], &qkv[static_cast<size_t>(w)][at * es], es);
        }
      }
    }
  }
  GPUU_ASSIGN_OR_RETURN(Timing t_one, time_graph(ctx, pool, one, qkv, runs, true));
  // The same node on the shader-core kernel with its keys never split (no
  // combine dispatch), whatever the device's multiprocessors and matrix cores.
  kernels::KernelGraphOptions one_pass;
  one_pass.attention_splits = 1;
  one_pass.attention_coopmat = false;
  GPUU_ASSIGN_OR_RETURN(Timing t_one_pass, time_graph(ctx, pool, one, qkv, runs, false, one_pass));
  // ... with 16 and 32 keys a block (key columns per invocation 1, 2).
  std::vector<Timing> t_keys;
  for (uint32_t keys : {1u, 2u}) {
    kernels::KernelGraphOptions o = one_pass;
    o.attention_keys = keys;
    GPUU_ASSIGN_OR_RETURN(Timing t, time_graph(ctx, pool, one, qkv, runs, false, o));
    t_keys.push_back(std::move(t));
  }
  // And forced onto the matrix-core kernel (f16, where the device has it;
  // else as picked): its key split as the policy picks it, then 1, 2 and 4
  // subgroups sharing each key block.
  kernels::KernelGraphOptions coop;
  coop.attention_coopmat = true;
  GPUU_ASSIGN_OR_RETURN(Timing t_coop, time_graph(ctx, pool, one, qkv, runs, false, coop));
  std::vector<Timing> t_coop_split;
  for (uint32_t key_split : {1u, 2u, 4u}) {
    coop.attention_coop_key_split = key_split;
    GPUU_ASSIGN_OR_RETURN(Timing t, time_graph(ctx, pool, one, qkv, runs, false, coop));
    t_coop_split.push_back(std::move(t));
  }
  std::string split = "one pass";
  for (const gpu::TimedStep& step : t_one.steps) {
    if (!step.work.choice.empty()) split = step.work.choice;
  }
  GPUU_ASSIGN_OR_RETURN(Timing t_fused, time_graph(ctx, pool, fused, {x}, runs, false));
  GPUU_ASSIGN_OR_RETURN(Timing t_parts, time_graph(ctx, pool, parts, {qkv[0], kt, qkv[2]}, runs, true));
  double gemm_us = 0, softmax_us = 0;
  for (const gpu::TimedStep& step : t_parts.steps) {
    if (step.label == "qk" || step.label == "pv") gemm_us += step.us;
    if (step.label == "softmax") softmax_us += step.us;
  }
  double max_diff = 0;
  for (size_t i = 0; i < n; ++i) {
    const float a = element(s.dtype, t_one.output.data(), i), b = element(s.dtype, t_parts.output.data(), i),
                c = element(s.dtype, t_fused.output.data(), i), d = element(s.dtype, t_one_pass.output.data(), i),
                e = element(s.dtype, t_coop.output.data(), i);
    max_diff = std::max({max_diff, double(std::fabs(a - b)), double(std::fabs(a - c)), double(std::fabs(a - d)),
                         double(std::fabs(a - e))});
    for (const std::vector<Timing>* forced : {&t_keys, &t_coop_split}) {
      for (const Timing& t : *forced) {
        max_diff = std::max(max_diff, double(std::fabs(a - element(s.dtype, t.output.data(), i))));
      }
    }
  }
  const double flops =
      4.0 * double(g_batch * kHeads) * double(s.len) * double(s.len) * kHeadDim * (s.causal ? 0.5 : 1.0);
  std::printf("%s    {\"dtype\": \"%s\", \"len\": %lld, \"causal\": %s, \"sdpa_us\": %.1f, \"sdpa_views_us\": %.1f, "
              "\"decomposed_us\": %.1f, \"decomposed_gemms_us\": %.1f, \"decomposed_softmax_us\": %.1f, "
              "\"sdpa_tflops\": %.3g, \"split\": \"%s\", \"sdpa_shader_cores_one_pass_us\": %.1f, "
              "\"sdpa_shader_cores_keys_1_2_us\": [%.1f, %.1f], "
              "\"sdpa_matrix_cores_us\": %.1f, \"sdpa_matrix_cores_key_split_1_2_4_us\": [%.1f, %.1f, %.1f], "
              "\"max_abs_diff\": %.2e}",
              first ? "" : ",\n", graph::dtype_name(s.dtype), static_cast<long long>(s.len),
              s.causal ? "true" : "false", t_one.gpu_us, t_fused.gpu_us, t_parts.gpu_us, gemm_us, softmax_us,
              flops / t_one.gpu_us / 1e6, split.c_str(), t_one_pass.gpu_us, t_keys[0].gpu_us, t_keys[1].gpu_us,
              t_coop.gpu_us, t_coop_split[0].gpu_us, t_coop_split[1].gpu_us, t_coop_split[2].gpu_us, max_diff);
  std::fflush(stdout);
  std::fprintf(stderr,
               "%-4s L=%-5lld causal=%d  sdpa %8.1f us (%s; shader cores one pass %8.1f, keys 1/2 %.1f/%.1f,"
               " matrix cores %8.1f, key split 1/2/4 %.1f/%.1f/%.1f)  views %8.1f  decomposed %8.1f"
               "  (gemms %8.1f, softmax %7.1f)  diff %.1e\n",
               graph::dtype_name(s.dtype), static_cast<long long>(s.len), s.causal ? 1 : 0, t_one.gpu_us,
               split.c_str(), t_one_pass.gpu_us, t_keys[0].gpu_us, t_keys[1].gpu_us, t_coop.gpu_us,
               t_coop_split[0].gpu_us, t_coop_split[1].gpu_us, t_coop_split[2].gpu_us, t_fused.gpu_us, t_parts.gpu_us,
               gemm_us, softmax_us, max_diff);
  return Status::Ok();
}

// A decode step of a Llama-style model: `hq` query heads over `hkv` cached
// heads of 64, `len` new rows over a cache of `cache` entries (a bool mask
// allowing the filled part), one pass against split keys.
Status run_decode_case(const SharedGpuContextPtr& ctx, VkCommandPool pool, DType dtype, int64_t hq, int64_t hkv,
                       int64_t len, int64_t cache, int runs, bool first) {
  const graph::Shape q_shape = {1, hq, len, kHeadDim}, kv_shape = {1, hkv, cache, kHeadDim};
  graph::Graph g;
  auto q = graph::add_graph_input(g, "q", dtype, q_shape).value();
  auto k = graph::add_graph_input(g, "k", dtype, kv_shape).value();
  auto v = graph::add_graph_input(g, "v", dtype, kv_shape).value();
  auto m = graph::add_graph_input(g, "mask", DType::kBool, {1, 1, len, cache}).value();
  GPUU_ASSIGN_OR_RETURN(auto y, graph::add_op(g, "scaled_dot_product_attention", "attn", {q, k, v, m}, {}));
  g.mark_output(y[0]);
  const auto q_n = static_cast<size_t>(graph::shape_numel(q_shape));
  const auto kv_n = static_cast<size_t>(graph::shape_numel(kv_shape));
  std::vector<uint8_t> mask(static_cast<size_t>(len * cache));
  const int64_t filled = cache * 3 / 4;  // a cache three quarters full: later positions masked
  for (int64_t i = 0; i < len; ++i) {
    for (int64_t j = 0; j < cache; ++j) mask[static_cast<size_t>(i * cache + j)] = j <= filled - len + i ? 1 : 0;
  }
  const std::vector<std::vector<uint8_t>> inputs = {random_bytes(dtype, q_n, 11), random_bytes(dtype, kv_n, 12),
                                                    random_bytes(dtype, kv_n, 13), mask};
  kernels::KernelGraphOptions one_pass;
  one_pass.attention_splits = 1;
  GPUU_ASSIGN_OR_RETURN(Timing t_one, time_graph(ctx, pool, g, inputs, runs, false, one_pass));
  GPUU_ASSIGN_OR_RETURN(Timing t_split, time_graph(ctx, pool, g, inputs, runs, true));
  std::string choice = "one pass";
  for (const gpu::TimedStep& step : t_split.steps) {
    if (!step.work.choice.empty()) choice = step.work.choice;
  }
  double max_diff = 0;
  for (size_t i = 0; i < q_n; ++i) {
    max_diff = std::max(max_diff, double(std::fabs(element(dtype, t_one.output.data(), i) -
                                                   element(dtype, t_split.output.data(), i))));
  }
  std::printf("%s    {\"decode\": true, \"dtype\": \"%s\", \"heads\": %lld, \"kv_heads\": %lld, \"len\": %lld, "
              "\"cache\": %lld, \"one_pass_us\": %.1f, \"split_us\": %.1f, \"split\": \"%s\", "
              "\"max_abs_diff\": %.2e}",
              first ? "" : ",\n", graph::dtype_name(dtype), static_cast<long long>(hq), static_cast<long long>(hkv),
              static_cast<long long>(len), static_cast<long long>(cache), t_one.gpu_us, t_split.gpu_us,
              choice.c_str(), max_diff);
  std::fflush(stdout);
  std::fprintf(stderr, "%-4s decode H %lld/%lld L=%-3lld cache %-5lld one pass %7.1f us  split %7.1f us (%s)  diff %.1e\n",
               graph::dtype_name(dtype), static_cast<long long>(hq), static_cast<long long>(hkv),
               static_cast<long long>(len), static_cast<long long>(cache), t_one.gpu_us, t_split.gpu_us,
               choice.c_str(), max_diff);
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 50;
  std::vector<int64_t> lengths = {128, 256, 512, 1024};
  std::vector<int64_t> caches = {512, 2048};
  bool decode_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--quick")) {
      lengths = {64, 100};  // CPU devices
      caches = {96};
      runs = 3;
    } else if (!std::strcmp(argv[i], "--batch") && i + 1 < argc) {
      g_batch = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--decode")) {
      decode_only = true;
    } else if (!std::strcmp(argv[i], "--lengths") && i + 1 < argc) {  // --lengths 128,197: prefills of these
      lengths.clear();
      for (const char* at = argv[++i]; *at;) {
        char* end = nullptr;
        lengths.push_back(std::strtoll(at, &end, 10));
        at = *end == ',' ? end + 1 : end;
        if (end == at && *at) break;
      }
      caches.clear();
    } else {
      std::fprintf(stderr, "usage: bench_attention [--runs N] [--quick] [--decode] [--lengths L,L...] [--batch B]\n");
      return 2;
    }
  }
  const std::unique_ptr<bench::BenchDevice> device = bench::open_bench_device("bench_attention");
  if (!device) return 1;
  const SharedGpuContextPtr& c = device->ctx;
  VkCommandPool pool = device->pool;
  std::printf("{\n  \"benchmark\": \"attention\",\n  \"device\": \"%s\",\n  \"batch\": %lld,\n  \"heads\": %lld,\n"
              "  \"head_dim\": %lld,\n  \"cases\": [\n",
              c->device_name().c_str(), static_cast<long long>(g_batch), static_cast<long long>(kHeads),
              static_cast<long long>(kHeadDim));
  const bool f16 = c->has_feature(kFeatureShaderFloat16) && c->has_feature(kFeatureStorageBuffer16Bit);
  bool first = true;
  int rc = 0;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16) continue;
    for (int64_t len : decode_only ? std::vector<int64_t>{} : lengths) {
      for (bool causal : {false, true}) {
        Status s = run_case(c, pool, Shapes{dtype, len, causal}, runs, first);
        if (!s.ok()) {
          std::fprintf(stderr, "bench_attention: %s L=%lld: %s\n", graph::dtype_name(dtype),
                       static_cast<long long>(len), s.message().c_str());
          rc = 1;
          continue;
        }
        first = false;
      }
    }
  }
  // Llama-3.2-1B's heads (32 over 8) and a 125M model's (12 over 4); one new row, or a 16-token prefill.
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16) continue;
    for (auto [hq, hkv] : {std::pair<int64_t, int64_t>{12, 4}, {32, 8}}) {
      for (int64_t cache : caches) {
        for (int64_t len : {int64_t{1}, int64_t{16}}) {
          Status s = run_decode_case(c, pool, dtype, hq, hkv, len, cache, runs, first);
          if (!s.ok()) {
            std::fprintf(stderr, "bench_attention: decode %s: %s\n", graph::dtype_name(dtype), s.message().c_str());
            rc = 1;
            continue;
          }
          first = false;
        }
      }
    }
  }
  std::printf("\n  ]\n}\n");
  return rc;
}

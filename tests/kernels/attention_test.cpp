// The Vulkan attention kernel (scaled_dot_product_attention, attention.comp)
// against the CPU reference on the test device: ragged sizes around its
// 32-row and 32-key blocks, head dims 64, 128 and odd ones, masks, causal,
// grouped heads, and q/k/v read through views of a fused projection.
// Split over keys (flash-decoding: key shares in workgroups of their own, a
// second dispatch combining them) is checked the same way, forced on lavapipe
// (which names no multiprocessors, so never splits by itself), and its policy
// on its own.
// Tolerances: the reference works in double; the kernel sums q.k over E and
// p.v over S in f32 with an online softmax (rescaled once per key block), so
// with inputs in [-1, 1] f32 errors stay near 1e-6: atol 2e-5 + rtol 1e-4,
// far below the ~1e-2 that a wrong weight or a missing key causes. f16 adds
// the inputs' and the output's half rounding: atol 2e-3 + rtol 2e-3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>

#include "kernels/attention.h"
#include "kernels/gemm_select.h"
#include "kernels/op_table.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using cpu::HostTensor;
using graph::DType;
using graph::Shape;

constexpr const char* kOp = "scaled_dot_product_attention";

double atol_for(DType dtype) { return dtype == DType::kF16 ? 2e-3 : 2e-5; }
double rtol_for(DType dtype) { return dtype == DType::kF16 ? 2e-3 : 1e-4; }

// q [batch..., hq, l, e], k [batch..., hkv, s, e], v [batch..., hkv, s, ev].
struct Problem {
  Shape batch;
  int64_t hq = 1, hkv = 1, l = 1, s = 1, e = 64, ev = 64;
  Shape q() const { return with(hq, l, e); }
  Shape k() const { return with(hkv, s, e); }
  Shape v() const { return with(hkv, s, ev); }
  Shape scores() const { return with(hq, l, s); }
  Shape with(int64_t a, int64_t b, int64_t c) const {
    Shape out = batch;
    for (int64_t d : {a, b, c}) out.push_back(d);
    return out;
  }
  std::string text() const {
    return "batch " + graph::shape_to_string(batch) + " Hq " + std::to_string(hq) + " Hkv " + std::to_string(hkv) +
           " L " + std::to_string(l) + " S " + std::to_string(s) + " E " + std::to_string(e) + " Ev " +
           std::to_string(ev);
  }
};

std::vector<HostTensor> qkv(DType dtype, const Problem& p, uint32_t seed) {
  return {random_tensor(dtype, p.q(), seed, -1, 1), random_tensor(dtype, p.k(), seed + 1, -1, 1),
          random_tensor(dtype, p.v(), seed + 2, -1, 1)};
}

testing::AssertionResult matches(DType dtype, const Problem& p, uint32_t seed, const graph::AttrMap& attrs = {},
                                 const HostTensor* mask = nullptr, const kernels::KernelGraphOptions& options = {}) {
  std::vector<HostTensor> inputs = qkv(dtype, p, seed);
  if (mask) inputs.push_back(*mask);
  testing::AssertionResult r = node_matches_cpu(kOp, inputs, attrs, atol_for(dtype), rtol_for(dtype), {}, options);
  if (!r) r << " (" << p.text() << ")";
  return r;
}

// A bool mask of `shape` with about 3 in 4 entries true, and every row whose
// index (over all dims but the last) is a multiple of 5 all false.
HostTensor bool_mask(const Shape& shape, uint32_t seed) {
  HostTensor m = random_tensor(DType::kBool, shape, seed, 0, 2);
  HostTensor m2 = random_tensor(DType::kBool, shape, seed + 7, 0, 2);
  const int64_t row = shape.back();
  for (int64_t i = 0; i < m.numel(); ++i) {
    m.bytes[static_cast<size_t>(i)] |= m2.bytes[static_cast<size_t>(i)];
    if ((i / row) % 5 == 0) m.bytes[static_cast<size_t>(i)] = 0;
  }
  return m;
}

// An additive mask of `shape`: values in [-2, 2], and -inf for about 1 in 4
// entries and for every row whose index is a multiple of 4.
HostTensor float_mask(DType dtype, const Shape& shape, uint32_t seed) {
  HostTensor add = random_tensor(DType::kF32, shape, seed, -2, 2);
  HostTensor pick = random_tensor(DType::kF32, shape, seed + 3, 0, 1);
  std::vector<double> values(static_cast<size_t>(add.numel()));
  for (int64_t i = 0; i < add.numel(); ++i) {
    bool masked = pick.element(i) < 0.25 || (i / shape.back()) % 4 == 0;
    values[static_cast<size_t>(i)] = masked ? -INFINITY : add.element(i);
  }
  return HostTensor::from_doubles(dtype, shape, values).value();
}

TEST(VulkanAttention, RaggedSequencesAroundTheBlocks) {
  // L and S below, at, one past and well past the 32-row/32-key blocks.
  uint32_t seed = 1;
  for (int64_t l : {1, 31, 32, 33, 70}) {
    for (int64_t s : {1, 32, 45, 97}) {
      Problem p{{2}, 3, 3, l, s, 64, 64};
      EXPECT_TRUE(matches(DType::kF32, p, seed += 3));
    }
  }
}

TEST(VulkanAttention, HeadDims) {
  // 64 and 128 (vector reads), 40 (vector reads, a partial chunk group), 33
  // and Ev 20 (element reads and writes), 1, and E != Ev.
  uint32_t seed = 100;
  for (auto [e, ev] : {std::pair<int64_t, int64_t>{64, 64}, {128, 128}, {40, 40}, {33, 20}, {1, 1}, {128, 8},
                       {12, 128}, {100, 68}}) {
    Problem p{{2}, 2, 2, 37, 50, e, ev};
    EXPECT_TRUE(matches(DType::kF32, p, seed += 3));
  }
}

TEST(VulkanAttention, CausalSkipsBlocksPastTheDiagonal) {
  uint32_t seed = 200;
  graph::AttrMap causal = {{"is_causal", int64_t{1}}};
  for (auto [l, s] : {std::pair<int64_t, int64_t>{70, 70}, {33, 33}, {50, 90}, {90, 50}, {1, 40}, {64, 64}}) {
    Problem p{{2}, 2, 2, l, s, 64, 64};
    EXPECT_TRUE(matches(DType::kF32, p, seed += 3, causal));
  }
}

TEST(VulkanAttention, SixteenKeyBlocksMatchTheCpu) {
  // The blocks devices with little shared memory take (forced here): each
  // block's keys and values loaded while the previous one is multiplied, S
  // ragged around 16, causal, head dims past the vector chunks and up to 128,
  // and split keys.
  kernels::KernelGraphOptions sixteen;
  sixteen.attention_keys = 1;
  uint32_t seed = 250;
  for (auto [s, e, ev] : std::initializer_list<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 64, 64}, {16, 64, 64}, {17, 128, 128}, {47, 33, 20}, {100, 64, 64}}) {
    EXPECT_TRUE(matches(DType::kF32, Problem{{2}, 2, 2, 37, s, e, ev}, seed += 3, {}, nullptr, sixteen));
  }
  EXPECT_TRUE(matches(DType::kF32, Problem{{2}, 2, 2, 50, 50, 64, 64}, seed += 3, {{"is_causal", int64_t{1}}},
                      nullptr, sixteen));
  sixteen.attention_splits = 3;
  EXPECT_TRUE(matches(DType::kF32, Problem{{1}, 4, 2, 1, 90, 64, 64}, seed += 3, {}, nullptr, sixteen));
}

TEST(VulkanAttention, BoolMaskWithFullyMaskedRows) {
  uint32_t seed = 300;
  Problem p{{2}, 3, 3, 37, 45, 64, 64};
  for (const Shape& shape : {p.scores(), Shape{37, 45}, Shape{2, 1, 37, 45}, Shape{2, 3, 1, 45}, Shape{37, 1}}) {
    HostTensor mask = bool_mask(shape, seed += 3);
    EXPECT_TRUE(matches(DType::kF32, p, seed += 3, {}, &mask)) << "mask " << graph::shape_to_string(shape);
  }
}

TEST(VulkanAttention, FloatMaskWithMinusInfinityRows) {
  uint32_t seed = 400;
  Problem p{{2}, 3, 3, 40, 70, 32, 32};
  for (const Shape& shape : {p.scores(), Shape{40, 70}, Shape{2, 1, 1, 70}}) {
    HostTensor mask = float_mask(DType::kF32, shape, seed += 3);
    EXPECT_TRUE(matches(DType::kF32, p, seed += 3, {}, &mask)) << "mask " << graph::shape_to_string(shape);
  }
}

TEST(VulkanAttention, GroupedHeadsScaleAndBatchDims) {
  uint32_t seed = 500;
  EXPECT_TRUE(matches(DType::kF32, Problem{{2}, 6, 2, 40, 35, 64, 64}, seed += 3));
  EXPECT_TRUE(matches(DType::kF32, Problem{{}, 8, 1, 33, 33, 128, 128}, seed += 3, {{"is_causal", int64_t{1}}}));
  EXPECT_TRUE(matches(DType::kF32, Problem{{2}, 4, 4, 20, 20, 64, 64}, seed += 3, {{"scale", 0.3}}));
  EXPECT_TRUE(matches(DType::kF32, Problem{{2, 3, 2}, 2, 1, 9, 40, 16, 24}, seed += 3));
  // A batch-dim mask over a rank-5 problem, broadcast over the heads.
  Problem p{{2, 3}, 4, 2, 10, 33, 8, 8};
  HostTensor mask = bool_mask({2, 3, 1, 10, 33}, seed += 3);
  EXPECT_TRUE(matches(DType::kF32, p, seed += 3, {}, &mask));
}

TEST(VulkanAttention, NoKeysGiveZeros) {
  EXPECT_TRUE(matches(DType::kF32, Problem{{1}, 2, 2, 5, 0, 8, 8}, 600));
}

TEST(VulkanAttention, HalfComputesInF32) {
  if (!f16_kernels_or_refused()) return;
  uint32_t seed = 700;
  EXPECT_TRUE(matches(DType::kF16, Problem{{2}, 3, 3, 70, 45, 64, 64}, seed += 3));
  EXPECT_TRUE(matches(DType::kF16, Problem{{1}, 4, 2, 33, 97, 128, 128}, seed += 3, {{"is_causal", int64_t{1}}}));
  EXPECT_TRUE(matches(DType::kF16, Problem{{2}, 2, 2, 37, 50, 33, 20}, seed += 3));
  Problem p{{2}, 2, 2, 40, 70, 40, 40};
  HostTensor mask = float_mask(DType::kF16, {40, 70}, seed += 3);
  EXPECT_TRUE(matches(DType::kF16, p, seed += 3, {}, &mask));
  HostTensor bmask = bool_mask(p.scores(), seed += 3);
  EXPECT_TRUE(matches(DType::kF16, p, seed += 3, {}, &bmask));
}

// f16 attention on matrix cores (attention_coopmat.comp: 64-key blocks, head
// dims multiples of 16 up to 64), where the device multiplies f16 16 x 16 x
// 16 cooperative matrices: GPT-2's prefill, ragged sizes around the blocks,
// grouped heads with a causal mask and L != S, small head dims, both masks
// (rows fully masked) and batch dims, each against the CPU with each key
// block walked by one subgroup per 16 rows (64 rows a workgroup) or shared by
// 2 or 4 (32 or 16 rows: the partial softmaxes weighed together at the end);
// the profile says which kernel ran (the matrix-core one exactly where the
// device has the shape; lavapipe has none, so there these run attention.comp).
TEST(VulkanAttention, HalfOnMatrixCoresMatchesTheCpu) {
  if (!f16_kernels_or_refused()) return;
  const bool matrix_cores = kernels::f16_matrix_shape_16(*test_context());
  struct Case {
    Problem p;
    bool causal;
    int mask;  // 0 none, 1 bool, 2 added
  };
  const Case cases[] = {
      {Problem{{1}, 12, 12, 128, 128, 64, 64}, true, 0},
      {Problem{{2}, 3, 3, 70, 45, 64, 64}, false, 0},
      {Problem{{1}, 4, 2, 33, 97, 64, 64}, true, 0},
      {Problem{{1}, 2, 1, 200, 200, 64, 64}, true, 0},
      {Problem{{2}, 2, 2, 37, 50, 32, 16}, false, 0},
      {Problem{{2}, 2, 2, 40, 70, 64, 64}, false, 1},
      {Problem{{2}, 2, 2, 40, 70, 48, 64}, false, 2},
      {Problem{{2, 3}, 2, 2, 65, 130, 16, 32}, true, 0},
  };
  uint32_t seed = 1600;
  for (uint32_t key_split : {1u, 2u, 4u}) {
    for (const Case& c : cases) {
      SCOPED_TRACE("key split " + std::to_string(key_split));
      kernels::KernelGraphOptions options;
      options.attention_coopmat = true;
      options.attention_coop_key_split = key_split;
      options.profile_steps = true;
      std::vector<HostTensor> inputs = qkv(DType::kF16, c.p, seed += 3);
      if (c.mask == 1) inputs.push_back(bool_mask(c.p.scores(), seed += 3));
      if (c.mask == 2) inputs.push_back(float_mask(DType::kF16, {c.p.l, c.p.s}, seed += 3));
      graph::Graph g;
      std::vector<graph::ValueId> in;
      for (size_t i = 0; i < inputs.size(); ++i) {
        in.push_back(graph::add_graph_input(g, "in" + std::to_string(i), inputs[i].dtype, inputs[i].shape).value());
      }
      graph::AttrMap attrs;
      if (c.causal) attrs["is_causal"] = int64_t{1};
      g.mark_output(graph::add_op(g, kOp, "attn", in, attrs).value()[0]);
      RunStats stats;
      Result<std::vector<HostTensor>> got = run_on_vulkan(g, inputs, &stats, options);
      ASSERT_TRUE(got.ok()) << c.p.text() << ": " << got.status().message();
      EXPECT_TRUE(all_close(got.value()[0], cpu::run_graph(g, inputs).value()[0], atol_for(DType::kF16),
                            rtol_for(DType::kF16)))
          << c.p.text() << (c.causal ? " causal" : "") << " mask " << c.mask;
      ASSERT_EQ(stats.steps.size(), 1u) << c.p.text();
      EXPECT_EQ(stats.steps[0].work.choice.rfind("matrix cores", 0) == 0, matrix_cores)
          << c.p.text() << ": " << stats.steps[0].work.choice;
      if (matrix_cores) {
        EXPECT_EQ(stats.steps[0].work.choice.rfind("matrix cores, " + std::to_string(64 / key_split) + " rows", 0), 0u)
            << stats.steps[0].work.choice;
      } else {
        // The shader-core kernel's profile says it walks the keys in one pass, and why.
        EXPECT_EQ(stats.steps[0].work.choice.rfind("one pass", 0), 0u) << stats.steps[0].work.choice;
      }
      EXPECT_FALSE(stats.steps[0].work.why.empty()) << c.p.text();
    }
  }
}

// How many subgroups share each key block of the matrix-core attention: the
// fewest whose workgroups (batch x heads x row blocks of 64 / split rows)
// reach the multiprocessors, else 4. GPT-2's 128-token prefill (12 heads: 24
// workgroups of 64 rows, 96 of 16) and ViT-B/16's 197 (48, 96, 156) on 132
// multiprocessors take 4; 4 x 512 tokens (384 of 64 rows) keep 1.
TEST(VulkanAttention, MatrixCoreKeySplitFillsTheGpu) {
  using kernels::choose_coop_attention_key_split;
  EXPECT_EQ(choose_coop_attention_key_split(12, 128, 132), 4u);
  EXPECT_EQ(choose_coop_attention_key_split(12, 197, 132), 4u);
  EXPECT_EQ(choose_coop_attention_key_split(48, 512, 132), 1u);
  EXPECT_EQ(choose_coop_attention_key_split(12, 512, 132), 2u);  // 96 of 64 rows, 192 of 32
  EXPECT_EQ(choose_coop_attention_key_split(1, 64, 132), 4u);
  EXPECT_EQ(choose_coop_attention_key_split(12, 128, 0), 1u);     // no multiprocessor count: no split
  EXPECT_EQ(choose_coop_attention_key_split(48, 512, 132, 2u), 2u);  // forced
  EXPECT_EQ(choose_coop_attention_key_split(12, 128, 132, 3u), 4u);  // not a form the kernel has: the policy's
}

kernels::KernelGraphOptions split_keys(uint32_t splits) {
  kernels::KernelGraphOptions o;
  o.attention_splits = splits;
  return o;
}

TEST(VulkanAttention, SplitKeysMatchOnePass) {
  // Decode steps (one query row) and short prefills over caches around the
  // 32-key blocks, split into shares of one block or more; shares past a
  // causal diagonal or past S see no key and must weigh nothing.
  uint32_t seed = 900;
  for (uint32_t splits : {2u, 3u, 5u, 64u}) {
    for (auto [l, s] : {std::pair<int64_t, int64_t>{1, 1}, {1, 33}, {1, 97}, {1, 512}, {16, 130}, {40, 70}}) {
      EXPECT_TRUE(matches(DType::kF32, Problem{{1}, 6, 2, l, s, 64, 64}, seed += 3, {}, nullptr, split_keys(splits)))
          << splits << " splits";
    }
    EXPECT_TRUE(matches(DType::kF32, Problem{{2}, 2, 2, 40, 70, 64, 64}, seed += 3, {{"is_causal", int64_t{1}}},
                        nullptr, split_keys(splits)))
        << splits << " splits, causal";
  }
  // Element reads and writes (E 33, Ev 20), two output chunks per invocation (Ev 128).
  EXPECT_TRUE(matches(DType::kF32, Problem{{2}, 2, 1, 3, 100, 33, 20}, seed += 3, {}, nullptr, split_keys(4)));
  EXPECT_TRUE(matches(DType::kF32, Problem{{1}, 4, 4, 1, 200, 128, 128}, seed += 3, {}, nullptr, split_keys(4)));
}

TEST(VulkanAttention, SplitKeysWithMasksAndHalf) {
  uint32_t seed = 950;
  // A decode step's mask over a cache (positions past the step masked), rows
  // masked everywhere (all of a share's keys masked, or all of a row's).
  Problem decode{{1}, 8, 2, 1, 300, 64, 64};
  HostTensor cache_mask = bool_mask({1, 1, 1, 300}, seed += 3);
  EXPECT_TRUE(matches(DType::kF32, decode, seed += 3, {}, &cache_mask, split_keys(6)));
  Problem p{{2}, 3, 3, 37, 100, 64, 64};
  HostTensor bmask = bool_mask(p.scores(), seed += 3);
  EXPECT_TRUE(matches(DType::kF32, p, seed += 3, {}, &bmask, split_keys(3)));
  HostTensor fmask = float_mask(DType::kF32, {37, 100}, seed += 3);
  EXPECT_TRUE(matches(DType::kF32, p, seed += 3, {}, &fmask, split_keys(4)));
  if (!f16_kernels_or_refused()) return;
  EXPECT_TRUE(matches(DType::kF16, Problem{{1}, 12, 4, 1, 512, 64, 64}, seed += 3, {}, nullptr, split_keys(16)));
  HostTensor hmask = float_mask(DType::kF16, {37, 100}, seed += 3);
  EXPECT_TRUE(matches(DType::kF16, p, seed += 3, {}, &hmask, split_keys(3)));
}

TEST(VulkanAttention, SplitPolicyFillsTheGpu) {
  // A 125M Llama decode step (12 heads, 512-entry cache: 16 key blocks) on
  // 132 multiprocessors: 12 workgroups become 16 x 12, one block each.
  kernels::AttentionSplit decode = kernels::choose_attention_split(12, 16, 132);
  EXPECT_EQ(decode.splits, 16u);
  EXPECT_EQ(decode.blocks_per_split, 1u);
  EXPECT_NE(decode.why.find("12 workgroups for 132 multiprocessors"), std::string::npos) << decode.why;
  // 32 heads: 9 shares wanted, 2 blocks each make 8.
  kernels::AttentionSplit wide = kernels::choose_attention_split(32, 16, 132);
  EXPECT_EQ(wide.splits, 8u);
  EXPECT_EQ(wide.blocks_per_split, 2u);
  // Enough workgroups already, a single key block, or no multiprocessor count: one pass.
  EXPECT_EQ(kernels::choose_attention_split(300, 16, 132).splits, 1u);
  EXPECT_EQ(kernels::choose_attention_split(12, 1, 132).splits, 1u);
  EXPECT_EQ(kernels::choose_attention_split(12, 16, 0).splits, 1u);
  EXPECT_EQ(kernels::choose_attention_split(12, 16, 0).blocks_per_split, 16u);
  // A causal prefill (GPT-2 at 128 rows: 48 row blocks of 4 key blocks) walks a triangle: one pass, unless forced.
  EXPECT_EQ(kernels::choose_attention_split(48, 4, 132).splits, 4u);
  EXPECT_EQ(kernels::choose_attention_split(48, 4, 132, std::nullopt, true).splits, 1u);
  EXPECT_EQ(kernels::choose_attention_split(48, 4, 132, std::nullopt, true).blocks_per_split, 4u);
  EXPECT_EQ(kernels::choose_attention_split(48, 4, 132, 2, true).splits, 2u);
  // Forced: capped by the blocks, shares made even.
  EXPECT_EQ(kernels::choose_attention_split(12, 3, 0, 100).splits, 3u);
  kernels::AttentionSplit five = kernels::choose_attention_split(12, 16, 0, 5);
  EXPECT_EQ(five.splits, 4u);
  EXPECT_EQ(five.blocks_per_split, 4u);
}

// Runs `g` on the CPU reference and on Vulkan (with `options`), compares every
// output at the f32 tolerance, and returns the Vulkan run's dispatch count.
testing::AssertionResult graph_matches(const graph::Graph& g, const std::vector<HostTensor>& inputs,
                                       const kernels::KernelGraphOptions& options, size_t* dispatches) {
  Result<std::vector<HostTensor>> want = cpu::run_graph(g, inputs);
  if (!want.ok()) return testing::AssertionFailure() << "CPU reference: " << want.status().message();
  RunStats stats;
  Result<std::vector<HostTensor>> got = run_on_vulkan(g, inputs, &stats, options);
  if (!got.ok()) return testing::AssertionFailure() << "Vulkan: " << got.status().message();
  for (size_t i = 0; i < want->size(); ++i) {
    testing::AssertionResult r = all_close((*got)[i], (*want)[i], atol_for(DType::kF32), rtol_for(DType::kF32));
    if (!r) return r << " (output " << i << ")";
  }
  *dispatches = stats.dispatches;
  return testing::AssertionSuccess();
}

// q, k and v as a GPT block makes them: one projection [B, T, 3 * H * D]
// split along its last dim, each piece viewed as [B, T, H, D] and transposed
// to [B, H, T, D]. Returns the graph input x.
struct FusedProjection {
  graph::Graph g;
  graph::ValueId x = graph::kNone, heads[3] = {graph::kNone, graph::kNone, graph::kNone};
  FusedProjection(int64_t b, int64_t t, int64_t h, int64_t d) {
    x = graph::add_graph_input(g, "x", DType::kF32, {b, t, 3 * h * d}).value();
    const char* names[3] = {"q", "k", "v"};
    for (int64_t i = 0; i < 3; ++i) {
      std::string n = names[i];
      auto part = graph::add_op(g, "slice", n + "_slice", {x},
                                {{"axes", std::vector<int64_t>{2}}, {"starts", std::vector<int64_t>{i * h * d}},
                                 {"ends", std::vector<int64_t>{(i + 1) * h * d}}})
                      .value()[0];
      auto split = graph::add_op(g, "reshape", n + "_heads", {part}, {{"shape", std::vector<int64_t>{b, t, h, d}}})
                       .value()[0];
      heads[i] = graph::add_op(g, "transpose", n + "_t", {split}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}})
                     .value()[0];
    }
  }
};

TEST(VulkanAttention, ReadsSlicedTransposedHeadsInPlace) {
  FusedProjection p(2, 37, 4, 16);
  auto y = graph::add_op(p.g, kOp, "attn", {p.heads[0], p.heads[1], p.heads[2]}, {{"is_causal", int64_t{1}}});
  ASSERT_TRUE(y.ok()) << y.status().message();
  p.g.mark_output(y.value()[0]);
  std::vector<HostTensor> inputs = {random_tensor(DType::kF32, {2, 37, 192}, 800, -1, 1)};
  size_t dispatches = 0;
  // One pass over the keys on every device (a GPU that names its
  // multiprocessors would split these 16 workgroups' keys: a second dispatch).
  EXPECT_TRUE(graph_matches(p.g, inputs, split_keys(1), &dispatches));
  EXPECT_EQ(dispatches, 1u) << "the slices and transposes should be read in place, not run";
  kernels::KernelGraphOptions copies = split_keys(1);
  copies.strided_views = false;
  EXPECT_TRUE(graph_matches(p.g, inputs, copies, &dispatches));
  EXPECT_GT(dispatches, 1u);
}

// A transformer's attention as its output projection reads it:
// y.transpose(1, 2).reshape(B, T, H * D). The attention writes that layout
// itself, in one pass, with its keys split (the combine writes it then) and
// on matrix cores (f16, where the device has them), f32 and f16, batched;
// without the fold (the transpose also a region output: it must stay itself)
// the transpose is a step of its own.
TEST(VulkanAttention, WritesTheHeadsInsideRowsTransposeItsReaderWants) {
  uint32_t seed = 1200;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) return;
    for (bool also_read : {false, true}) {
      for (uint32_t splits : {1u, 3u, 0u}) {  // 0: matrix cores forced
        const Problem p{{2}, 4, 2, 37, 37, 16, 16};
        graph::Graph g;
        graph::ValueId q = graph::add_graph_input(g, "q", dtype, p.q()).value();
        graph::ValueId k = graph::add_graph_input(g, "k", dtype, p.k()).value();
        graph::ValueId v = graph::add_graph_input(g, "v", dtype, p.v()).value();
        graph::ValueId y =
            graph::add_op(g, kOp, "attn", {q, k, v}, {{"is_causal", int64_t{1}}}).value()[0];
        graph::ValueId t =
            graph::add_op(g, "transpose", "rows_out", {y}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}).value()[0];
        graph::ValueId flat =
            graph::add_op(g, "reshape", "flat", {t}, {{"shape", std::vector<int64_t>{2, 37, 64}}}).value()[0];
        g.mark_output(graph::add_op(g, "relu", "after", {flat}, {}).value()[0]);
        if (also_read) g.mark_output(y);
        kernels::KernelGraphOptions options = split_keys(splits);
        if (splits == 0) {
          options.attention_splits.reset();
          options.attention_coopmat = true;
        }
        const std::string steps =
            " " + joined(step_labels(g, qkv(dtype, p, seed += 3), atol_for(dtype), rtol_for(dtype), options)) + " ";
        EXPECT_EQ(steps.find(" rows_out ") != std::string::npos, also_read)
            << steps << graph::dtype_name(dtype) << ", " << splits << " split(s)";
      }
    }
  }
}

// torchvision's multi-head attention at batch 1 moves the batch too:
// [1, H, L, D] -> [L, 1, H, D] (perm 2, 0, 1, 3), the same bytes as the
// swap of heads and rows, so the attention writes it (no "rows_out" step).
// At batch 2 the same perm puts the batch inside the rows, a layout the
// kernel does not write: the transpose stays a step of its own.
TEST(VulkanAttention, WritesTheTransposeWhereOnlyUnitDimsMoveBesideTheSwap) {
  uint32_t seed = 1300;
  for (int64_t batch : {1, 2}) {
    const Problem p{{batch}, 4, 4, 29, 29, 16, 16};
    graph::Graph g;
    graph::ValueId q = graph::add_graph_input(g, "q", DType::kF32, p.q()).value();
    graph::ValueId k = graph::add_graph_input(g, "k", DType::kF32, p.k()).value();
    graph::ValueId v = graph::add_graph_input(g, "v", DType::kF32, p.v()).value();
    graph::ValueId y = graph::add_op(g, kOp, "attn", {q, k, v}, {}).value()[0];
    graph::ValueId t =
        graph::add_op(g, "transpose", "rows_out", {y}, {{"perm", std::vector<int64_t>{2, 0, 1, 3}}}).value()[0];
    graph::ValueId flat =
        graph::add_op(g, "reshape", "flat", {t}, {{"shape", std::vector<int64_t>{29 * batch, 64}}}).value()[0];
    g.mark_output(graph::add_op(g, "relu", "after", {flat}, {}).value()[0]);
    const std::string steps = " " + joined(step_labels(g, qkv(DType::kF32, p, seed += 3), atol_for(DType::kF32),
                                                       rtol_for(DType::kF32))) + " ";
    EXPECT_EQ(steps.find(" rows_out ") != std::string::npos, batch == 2) << steps << "batch " << batch;
  }
}

TEST(VulkanAttention, SplitKeysReadViewsAndAddOneDispatch) {
  FusedProjection p(1, 5, 4, 16);
  auto y = graph::add_op(p.g, kOp, "attn", {p.heads[0], p.heads[1], p.heads[2]}, {});
  ASSERT_TRUE(y.ok()) << y.status().message();
  p.g.mark_output(y.value()[0]);
  size_t dispatches = 0;
  // 5 keys make one block: a forced split has nothing to share.
  EXPECT_TRUE(graph_matches(p.g, {random_tensor(DType::kF32, {1, 5, 192}, 830, -1, 1)}, split_keys(4), &dispatches));
  EXPECT_EQ(dispatches, 1u);
  FusedProjection longer(1, 70, 4, 16);
  y = graph::add_op(longer.g, kOp, "attn", {longer.heads[0], longer.heads[1], longer.heads[2]}, {});
  ASSERT_TRUE(y.ok()) << y.status().message();
  longer.g.mark_output(y.value()[0]);
  EXPECT_TRUE(
      graph_matches(longer.g, {random_tensor(DType::kF32, {1, 70, 192}, 831, -1, 1)}, split_keys(3), &dispatches));
  EXPECT_EQ(dispatches, 2u) << "the split pass and the combine, the views read in place";
}

TEST(VulkanAttention, ViewsKeepWhatOthersRead) {
  // k's transposed heads are also a region output: that transpose still runs,
  // and the attention reads k through its view all the same.
  FusedProjection p(1, 20, 2, 8);
  auto y = graph::add_op(p.g, kOp, "attn", {p.heads[0], p.heads[1], p.heads[2]}, {});
  ASSERT_TRUE(y.ok()) << y.status().message();
  p.g.mark_output(y.value()[0]);
  p.g.mark_output(p.heads[1]);
  size_t dispatches = 0;
  EXPECT_TRUE(graph_matches(p.g, {random_tensor(DType::kF32, {1, 20, 48}, 810, -1, 1)}, {}, &dispatches));
  EXPECT_GE(dispatches, 2u);
  // A q whose head dim is not contiguous ([B, H, E, L] transposed) is no view
  // the kernel takes: its transpose runs.
  graph::Graph g;
  auto qt = graph::add_graph_input(g, "qt", DType::kF32, {2, 3, 16, 21}).value();
  auto kv = graph::add_graph_input(g, "kv", DType::kF32, {2, 3, 25, 16}).value();
  auto q = graph::add_op(g, "transpose", "q", {qt}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}).value()[0];
  g.mark_output(graph::add_op(g, kOp, "attn", {q, kv, kv}, {}).value()[0]);
  EXPECT_TRUE(graph_matches(g, {random_tensor(DType::kF32, {2, 3, 16, 21}, 820, -1, 1),
                                random_tensor(DType::kF32, {2, 3, 25, 16}, 821, -1, 1)},
                            {}, &dispatches));
  EXPECT_EQ(dispatches, 2u);
}

TEST(VulkanAttention, HeadDimsPast128AreRefusedWithAReason) {
  graph::Graph g;
  auto q = graph::add_graph_input(g, "q", DType::kF32, {1, 2, 4, 129}).value();
  auto v = graph::add_graph_input(g, "v", DType::kF32, {1, 2, 4, 8}).value();
  auto y = graph::add_op(g, kOp, "attn", {q, q, v}, {});
  ASSERT_TRUE(y.ok()) << y.status().message();
  std::string why = kernels::vulkan_supports(g, g.nodes()[0]);
  EXPECT_NE(why.find("head dims up to 128, q/k have 129"), std::string::npos) << why;
}

}  // namespace
}  // namespace gpuu::vulkan_test

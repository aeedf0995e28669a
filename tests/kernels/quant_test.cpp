// The Vulkan kernels of TOSA's INT profile ops against the CPU reference,
// exactly, over several shapes (element counts that are not whole words of
// i8 included), zero points, per-channel scales and both rounding modes; the
// tiled int8 GEMM of conv2d_int and matmul_int (with and without dot-product
// instructions) and the matrix-core one (where the device multiplies i8
// cooperative matrices; elsewhere its force falls back to the tiled kernel),
// with K split and with the rescale after it folded into its store, against
// the direct kernels and the CPU reference.
#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "graph/op_registry.h"
#include "kernels/fusion.h"
#include "kernels/gemm_select.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using cpu::HostTensor;
using graph::DType;
using Ints = std::vector<int64_t>;

HostTensor i32_tensor(const std::vector<int32_t>& v) {
  return HostTensor::from_bytes(DType::kI32, {static_cast<int64_t>(v.size())}, v.data(), v.size() * 4).value();
}

TEST(VulkanQuant, RescaleMatchesCpuPerTensorAndPerChannel) {
  // i32 -> i8 per channel along dim 1 (NCHW channels), double rounding with shifts above 31.
  HostTensor x = random_tensor(DType::kI32, {2, 3, 5, 7}, 1, -100000, 100000);
  HostTensor m = i32_tensor({1073741824, 1518500250, 2147483647});
  HostTensor s = i32_tensor({31, 38, 36});
  for (const char* rounding : {"single_round", "double_round"}) {
    EXPECT_TRUE(node_matches_cpu("rescale", {x, m, s},
                                 {{"dtype", std::string("i8")}, {"axis", int64_t{1}}, {"rounding", std::string(rounding)},
                                  {"output_zp", int64_t{-7}}},
                                 0, 0, {false, true, true}))
        << rounding;
  }
  // i8 -> i32 per tensor with an input zero point; i8 -> i8 unsigned out; scale16.
  HostTensor q = random_tensor(DType::kI8, {3, 11}, 2, -128, 128);
  HostTensor m1 = i32_tensor({1431655765});
  HostTensor s1 = i32_tensor({33});
  EXPECT_TRUE(node_matches_cpu("rescale", {q, m1, s1}, {{"dtype", std::string("i32")}, {"input_zp", int64_t{-3}}}, 0, 0,
                               {false, true, true}));
  EXPECT_TRUE(node_matches_cpu("rescale", {q, m1, s1},
                               {{"dtype", std::string("i8")}, {"output_unsigned", int64_t{1}}, {"output_zp", int64_t{130}}},
                               0, 0, {false, true, true}));
  EXPECT_TRUE(node_matches_cpu("rescale", {q, m1, s1},
                               {{"dtype", std::string("i8")}, {"input_unsigned", int64_t{1}}, {"input_zp", int64_t{200}}},
                               0, 0, {false, true, true}));
  HostTensor m16 = i32_tensor({24000});
  HostTensor s16 = i32_tensor({14});
  EXPECT_TRUE(node_matches_cpu("rescale", {q, m16, s16}, {{"dtype", std::string("i8")}, {"scale32", int64_t{0}}}, 0, 0,
                               {false, true, true}));
  // Shifts 0 and 63 on extreme i32 values, per channel along the last dim.
  std::vector<int32_t> extremes = {INT32_MIN, INT32_MAX, -1, 0, 1, INT32_MIN + 1, 12345, -12345};
  HostTensor e = HostTensor::from_bytes(DType::kI32, {4, 2}, extremes.data(), extremes.size() * 4).value();
  EXPECT_TRUE(node_matches_cpu("rescale", {e, i32_tensor({3, 2147483647}), i32_tensor({0, 63})},
                               {{"dtype", std::string("i32")}, {"rounding", std::string("double_round")}}, 0, 0,
                               {false, true, true}));
}

TEST(VulkanQuant, Conv2dIntMatchesCpu) {
  struct Case {
    graph::Shape x, w;
    Ints stride, padding, dilation;
    int64_t groups;
    bool bias;
  };
  const Case cases[] = {
      {{1, 3, 7, 6}, {5, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true},
      {{2, 4, 9, 5}, {4, 1, 3, 2}, {2, 1}, {0, 2, 1, 0}, {1, 2}, 4, false},   // depthwise
      {{1, 4, 5, 5}, {6, 2, 2, 2}, {1, 2}, {1, 0, 0, 1}, {2, 1}, 2, true},    // grouped
  };
  uint32_t seed = 10;
  for (const Case& c : cases) {
    std::vector<HostTensor> inputs = {random_tensor(DType::kI8, c.x, seed++, -128, 128),
                                      random_tensor(DType::kI8, c.w, seed++, -128, 128)};
    if (c.bias) inputs.push_back(random_tensor(DType::kI32, {c.w[0]}, seed++, -100000, 100000));
    EXPECT_TRUE(node_matches_cpu("conv2d_int", inputs,
                                 {{"stride", c.stride}, {"padding", c.padding}, {"dilation", c.dilation},
                                  {"groups", c.groups}, {"input_zp", int64_t{-128}}, {"weight_zp", int64_t{5}}},
                                 0, 0, {false, true, true}));
  }
}

// 16-bit activations (a16w8): conv2d_int over i16 with i64 (TOSA i48) sums
// and bias, the rescales from those sums (to i32 exactly, to i16 with a
// 16-bit multiplier) and between i16 and i32, an i16 and an i8 clamp, and the
// casts of the float islands, each against the CPU reference, exactly.
TEST(VulkanQuant, Int16ActivationsMatchCpu) {
  HostTensor x = random_tensor(DType::kI16, {2, 6, 7, 5}, 40, -32768, 32768);
  HostTensor w = random_tensor(DType::kI8, {4, 3, 3, 3}, 41, -127, 128);
  HostTensor bias = random_tensor(DType::kI64, {4}, 42, -1e12, 1e12);
  const graph::AttrMap conv = {{"stride", Ints{2, 1}}, {"padding", Ints{1, 0, 1, 1}}, {"groups", int64_t{2}},
                               {"weight_zp", int64_t{3}}};
  EXPECT_TRUE(node_matches_cpu("conv2d_int", {x, w, bias}, conv, 0, 0, {false, true, true}));
  EXPECT_TRUE(node_matches_cpu("conv2d_int", {x, w}, conv, 0, 0, {false, true}));
  // i48 sums (held in i64) near both ends of the range.
  HostTensor sums = random_tensor(DType::kI64, {3, 4, 5}, 43, -1.4e14, 1.4e14);
  EXPECT_TRUE(node_matches_cpu("rescale", {sums, i32_tensor({1 << 14}), i32_tensor({14})},
                               {{"dtype", std::string("i32")}, {"scale32", int64_t{0}}}, 0, 0, {false, true, true}));
  EXPECT_TRUE(node_matches_cpu("rescale", {sums, i32_tensor({17000, 30000, 16384, 25000}), i32_tensor({40, 45, 47, 50})},
                               {{"dtype", std::string("i16")}, {"scale32", int64_t{0}}, {"axis", int64_t{1}}}, 0, 0,
                               {false, true, true}));
  HostTensor h = random_tensor(DType::kI16, {5, 7}, 44, -32768, 32768);  // an odd count: half a last word
  EXPECT_TRUE(node_matches_cpu("rescale", {h, i32_tensor({1518500250}), i32_tensor({16})}, {{"dtype", std::string("i32")}},
                               0, 0, {false, true, true}));
  HostTensor wide = random_tensor(DType::kI32, {5, 7}, 45, -3e9, 3e9);
  EXPECT_TRUE(node_matches_cpu("rescale", {wide, i32_tensor({1518500250}), i32_tensor({46})},
                               {{"dtype", std::string("i16")}}, 0, 0, {false, true, true}));
  EXPECT_TRUE(node_matches_cpu("clamp", {h}, {{"min", 0.0}, {"max", 20000.5}}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("clamp", {random_tensor(DType::kI8, {3, 5}, 46, -128, 128)}, {{"min", -3.5}}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("cast", {h}, {{"dtype", std::string("f32")}}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("cast", {random_tensor(DType::kF32, {5, 7}, 47, -40000, 40000)},
                               {{"dtype", std::string("i16")}}, 0, 0));
}

TEST(VulkanQuant, MatmulIntMatchesCpu) {
  for (const graph::Shape& mkn : {graph::Shape{1, 1, 1, 1}, graph::Shape{2, 5, 7, 3}, graph::Shape{3, 17, 33, 9}}) {
    HostTensor a = random_tensor(DType::kI8, {mkn[0], mkn[1], mkn[2]}, 20, -128, 128);
    HostTensor b = random_tensor(DType::kI8, {mkn[0], mkn[2], mkn[3]}, 21, -128, 128);
    EXPECT_TRUE(node_matches_cpu("matmul_int", {a, b}, {{"a_zp", int64_t{3}}, {"b_zp", int64_t{-128}}}, 0, 0));
  }
}

// The int8 GEMM kernels a test runs a conv2d_int / matmul_int node on: the
// direct one, the tiled one with multiply-adds, with dot products (where the
// device has shaderIntegerDotProduct, else it is refused back to
// multiply-adds), and on matrix cores (where the device multiplies i8
// cooperative matrices, else refused back to dot products).
using kernels::IntGemmKernel;
using kernels::int_gemm_kernel_name;
constexpr IntGemmKernel kIntKernels[] = {IntGemmKernel::kDirect, IntGemmKernel::kTiled, IntGemmKernel::kTiledDot,
                                         IntGemmKernel::kCoopMat};

// K of a conv2d_int (C/groups x kH x kW) or matmul_int node over `inputs`.
int64_t gemm_depth(const std::string& op, const std::vector<HostTensor>& inputs) {
  return op == "conv2d_int" ? inputs[1].shape[1] * inputs[1].shape[2] * inputs[1].shape[3] : inputs[0].shape[2];
}

// Whether the test device runs the matrix-core int8 GEMM when asked.
bool int_coopmat_runs() {
  const SharedGpuContext& ctx = *test_context();
  return kernels::select_int_gemm(ctx, kernels::GemmProblem{false, 64, 64, 64}, kernels::GemmForce{}).kernel ==
         IntGemmKernel::kCoopMat;
}

// The shader `force` must end up running `op` on the test device (`large`:
// with the 128x128 tile forced, else the 64x64 one).
std::string expected_int_shader(const std::string& op, IntGemmKernel force, bool large) {
  if (force == IntGemmKernel::kDirect) return op;
  if (force == IntGemmKernel::kCoopMat && int_coopmat_runs()) return op + (large ? "_coopmat" : "_coopmat_small");
  const bool dot = test_context()->has_feature(kFeatureShaderIntegerDotProduct);
  const bool dot_forced = force == IntGemmKernel::kTiledDot || force == IntGemmKernel::kCoopMat;
  return op + (dot_forced && dot ? "_tiled_dot" : "_tiled") + (large ? "_t8" : "");
}

// Whether conv2d_int's int8 GEMM reads its input as it lies (the lowering's
// b_vec): a 1x1 convolution, stride 1, no padding, over images of whole
// 16-pixel runs. No im2col view is gathered, or materialized, for it.
bool reads_input_as_it_lies(const graph::Shape& x, const graph::Shape& w, const Ints& stride, const Ints& padding) {
  return w[2] == 1 && w[3] == 1 && stride == Ints{1, 1} && padding == Ints{0, 0, 0, 0} && x[2] * x[3] % 16 == 0;
}

// Runs one `op` node over `inputs` (input 1, the weight, a constant where
// `weight_constant`) with each of the `forced` int8 GEMM kernels (the tiled
// ones with each tile), and expects every run's output to equal the CPU
// reference's and the first run's (the direct kernel's) bit for bit, each
// run on the shader its force names.
testing::AssertionResult int_gemm_kernels_agree(const std::string& op, const std::vector<HostTensor>& inputs,
                                                const graph::AttrMap& attrs, bool weight_constant = false,
                                                const std::vector<IntGemmKernel>& forced = {std::begin(kIntKernels),
                                                                                            std::end(kIntKernels)}) {
  graph::Graph g;
  std::vector<graph::ValueId> ids;
  std::vector<HostTensor> runtime_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    const bool constant = weight_constant && i == 1;
    Result<graph::ValueId> id =
        constant ? graph::add_graph_constant(g, name, inputs[i].dtype, inputs[i].shape, inputs[i].to_blob())
                 : graph::add_graph_input(g, name, inputs[i].dtype, inputs[i].shape);
    if (!id.ok()) return testing::AssertionFailure() << id.status().message();
    ids.push_back(id.value());
    if (!constant) runtime_inputs.push_back(inputs[i]);
  }
  Result<std::vector<graph::ValueId>> outs = graph::add_op(g, op, op + "_0", ids, attrs);
  if (!outs.ok()) return testing::AssertionFailure() << "building the node: " << outs.status().message();
  g.mark_output(outs.value()[0]);
  Result<std::vector<HostTensor>> want = cpu::run_graph(g, runtime_inputs);
  if (!want.ok()) return testing::AssertionFailure() << "CPU reference: " << want.status().message();
  // Every kernel's disagreement, not only the first.
  std::string failures;
  std::optional<HostTensor> direct;
  struct Run {
    IntGemmKernel kernel;
    bool large = false, split = false;
    bool im2col = false;  // conv2d_int: the im2col view materialized first (add_int_im2col)
  };
  std::vector<Run> runs;
  for (IntGemmKernel k : forced) {
    runs.push_back({k});
    if (k != IntGemmKernel::kDirect) runs.push_back({k, true});
  }
  // The matrix cores once more with K in three shares (a split reduction
  // after the GEMM), where they run.
  const bool coop_split = int_coopmat_runs() && std::find(forced.begin(), forced.end(), IntGemmKernel::kCoopMat) != forced.end();
  if (coop_split) runs.push_back({IntGemmKernel::kCoopMat, false, true});
  // A convolution whose GEMM would gather its im2col view reads it
  // materialized instead (the matrix cores' default on GPUs), split too.
  const bool conv = op == "conv2d_int";
  auto attr_or = [&](const char* name, const Ints& absent) {
    const Ints v = graph::attr_ints(attrs, name);
    return v.empty() ? absent : v;
  };
  const bool pointwise_runs = conv && reads_input_as_it_lies(inputs[0].shape, inputs[1].shape, attr_or("stride", {1, 1}),
                                                             attr_or("padding", {0, 0, 0, 0}));
  if (conv) {
    for (IntGemmKernel k : forced) {
      if (k != IntGemmKernel::kDirect) runs.push_back({k, false, false, true});
    }
    if (coop_split) runs.push_back({IntGemmKernel::kCoopMat, false, true, true});
  }
  for (const Run& run : runs) {
    const IntGemmKernel k = run.kernel;
    kernels::KernelGraphOptions options;
    options.int_gemm_kernel = k;
    options.gemm_kernel = run.large ? kernels::GemmKernel::kTiled128 : kernels::GemmKernel::kTiled64;
    if (run.split) options.gemm_splits = 3;
    options.conv_im2col = run.im2col;
    options.profile_steps = true;
    RunStats stats;
    Result<std::vector<HostTensor>> got = run_on_vulkan(g, runtime_inputs, &stats, options);
    const std::string name = std::string(int_gemm_kernel_name(k)) + (run.large ? " 128x128" : "") +
                             (run.split ? " split" : "") + (run.im2col ? " on the im2col view" : "");
    if (!got.ok()) {
      failures += "\n" + name + ": " + got.status().message();
      continue;
    }
    // The view, where it is asked for and the GEMM would gather (a pointwise
    // convolution over whole 16-pixel runs reads its input as it lies).
    const bool viewed = !stats.steps.empty() && stats.steps[0].kernel == "im2col_i8";
    if (viewed != (run.im2col && !pointwise_runs)) {
      failures += "\n" + name + ": " + (viewed ? "an" : "no") + " im2col dispatch";
    }
    if (viewed) stats.steps.erase(stats.steps.begin());
    if (stats.steps.empty() || stats.steps[0].kernel != expected_int_shader(op, k, run.large)) {
      failures += "\n" + name + ": ran on " + (stats.steps.empty() ? "nothing" : stats.steps[0].kernel) + ", not " +
                  expected_int_shader(op, k, run.large);
    }
    // The matrix cores may split K (forced, or on a GPU whose
    // multiprocessors their tiles leave idle): a reduction follows. A forced
    // split of K deeper than one 64-deep slice must take place.
    const size_t dispatches = stats.steps.size();
    const bool reduced = dispatches == 2 && stats.steps[1].kernel == "int8_gemm_split_reduce";
    const int64_t depth = gemm_depth(op, inputs);
    if (dispatches != 1 && !(expected_int_shader(op, k, run.large).find("coopmat") != std::string::npos && reduced)) {
      failures += "\n" + name + ": " + std::to_string(dispatches) + " dispatches";
    }
    if (run.split && depth > 64 && !reduced) failures += "\n" + name + ": K of " + std::to_string(depth) + " not split";
    testing::AssertionResult same = all_close(got.value()[0], want.value()[0], 0, 0);
    if (!same) failures += "\n" + name + " against the CPU: " + same.message();
    if (!direct) {
      direct = got.value()[0];
    } else if (direct->bytes != got.value()[0].bytes) {
      failures += "\n" + name + " differs from the direct kernel";
    }
  }
  if (!failures.empty()) return testing::AssertionFailure() << failures;
  return testing::AssertionSuccess();
}

TEST(VulkanQuant, TiledConv2dIntEqualsDirectAndCpu) {
  struct Case {
    graph::Shape x, w;
    Ints stride, padding, dilation;
    int64_t groups;
    bool bias;
    int64_t input_zp, weight_zp;
  };
  const Case cases[] = {
      // 3x3, padding 1, K = 144: a whole number of words, not of 32-deep slices.
      {{1, 16, 9, 9}, {32, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, -128, 5},
      // Stride 2, uneven padding, batch 2; K = 45 and M = 20 ragged.
      {{2, 5, 11, 10}, {20, 5, 3, 3}, {2, 2}, {1, 0, 2, 1}, {1, 1}, 1, true, 7, -3},
      // Dilation 2, no zero points, no bias; M = 17.
      {{1, 8, 12, 12}, {17, 8, 3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 1, false, 0, 0},
      // 1x1 over 33 channels: M = 70 spans two 64-row tiles, N = 3 x 35 pixels.
      {{3, 33, 5, 7}, {70, 33, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true, 127, -128},
      // Two groups of 20 output channels; stride (2, 1) and dilation (1, 2).
      {{1, 32, 8, 9}, {40, 16, 3, 3}, {2, 1}, {1, 1, 2, 2}, {1, 2}, 2, true, -1, 1},
      // Depthwise (forced onto the tiled kernel: one row per group).
      {{2, 6, 7, 7}, {6, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 6, false, 3, 0},
      // Padding wider than the kernel: windows wholly in the padding.
      {{1, 3, 4, 4}, {16, 3, 2, 2}, {1, 1}, {3, 3, 3, 3}, {1, 1}, 1, true, -50, 0},
      // Rows of 40: the matrix-core kernel reads runs inside a row as words (stride (2, 1), padding at the
      // edges, dilation along x), the rest a byte at a time.
      {{1, 16, 9, 40}, {24, 16, 3, 3}, {2, 1}, {1, 1, 1, 1}, {1, 2}, 1, true, -128, 3},
      // Pointwise over 3 images of 7x7 (49 pixels, not whole 16-byte runs): runs inside an image as words.
      {{3, 40, 7, 7}, {72, 40, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false, 11, 0},
  };
  uint32_t seed = 100;
  for (const Case& c : cases) {
    std::vector<HostTensor> inputs = {random_tensor(DType::kI8, c.x, seed++, -128, 128),
                                      random_tensor(DType::kI8, c.w, seed++, -128, 128)};
    if (c.bias) inputs.push_back(random_tensor(DType::kI32, {c.w[0]}, seed++, -100000, 100000));
    const graph::AttrMap attrs = {{"stride", c.stride},       {"padding", c.padding},       {"dilation", c.dilation},
                                  {"groups", c.groups},       {"input_zp", c.input_zp},     {"weight_zp", c.weight_zp}};
    EXPECT_TRUE(int_gemm_kernels_agree("conv2d_int", inputs, attrs)) << graph::shape_to_string(c.x) << " * "
                                                                     << graph::shape_to_string(c.w);
  }
  // The weight as a graph constant, as an exported model has it.
  std::vector<HostTensor> inputs = {random_tensor(DType::kI8, {1, 24, 10, 10}, 200, -128, 128),
                                    random_tensor(DType::kI8, {48, 24, 3, 3}, 201, -128, 128),
                                    random_tensor(DType::kI32, {48}, 202, -1000, 1000)};
  EXPECT_TRUE(int_gemm_kernels_agree("conv2d_int", inputs,
                                     {{"padding", Ints{1, 1, 1, 1}}, {"input_zp", int64_t{-9}}, {"weight_zp", int64_t{0}}},
                                     true));
}

// The int32 sums wrap as the direct kernel's do: a bias near the ends of
// int32 carries the sum over them. And every product at its extreme
// ((-128 - 127) x (127 - -128) = -65025) over K = 34000 sums past 2^31 on
// its own; the CPU reference is the only check there: on lavapipe the
// direct kernel's sum stops after 10923 channels of a 1x1 convolution
// (10923 x 6 ~ 2^16: apparently llvmpipe's cap on loop iterations).
TEST(VulkanQuant, TiledConv2dIntWrapsLikeDirect) {
  HostTensor x = random_tensor(DType::kI8, {1, 64, 5, 5}, 300, -128, 128);
  HostTensor w = random_tensor(DType::kI8, {32, 64, 3, 3}, 301, -128, 128);
  std::vector<int32_t> ends(32);
  for (size_t o = 0; o < ends.size(); ++o) ends[o] = o % 2 ? INT32_MAX - static_cast<int32_t>(o) : INT32_MIN + static_cast<int32_t>(o);
  HostTensor bias = HostTensor::from_data<int32_t>({32}, ends).value();
  EXPECT_TRUE(int_gemm_kernels_agree("conv2d_int", {x, w, bias},
                                     {{"padding", Ints{1, 1, 1, 1}}, {"input_zp", int64_t{-128}}, {"weight_zp", int64_t{127}}}));

  HostTensor x_min = random_tensor(DType::kI8, {1, 34000, 2, 3}, 302, -128, -127);  // all -128
  HostTensor w_max = random_tensor(DType::kI8, {16, 34000, 1, 1}, 303, 127, 128);   // all 127
  EXPECT_TRUE(int_gemm_kernels_agree("conv2d_int", {x_min, w_max}, {{"input_zp", int64_t{127}}, {"weight_zp", int64_t{-128}}},
                                     false, {IntGemmKernel::kTiled, IntGemmKernel::kTiledDot, IntGemmKernel::kCoopMat}));
}

// a16w8's convolutions on the int8 GEMMs: an i16 input runs as its two
// 8-bit halves (int16_split, the GEMM once per half, int16_join into the i64
// sums) under every tiled and matrix-core kernel and tile, bit for bit as
// the CPU reference and the direct kernel (conv2d_int16.comp): full-range
// inputs, weight zero points, padding, groups, dilation, a pointwise
// convolution read in vector runs, linears (transposed halves), and every
// product at its extreme.
TEST(VulkanQuant, Int16ConvOnInt8GemmsEqualsDirectAndCpu) {
  struct Case {
    graph::Shape x, w;
    Ints stride, padding, dilation;
    int64_t groups;
    bool bias;
    int64_t weight_zp;
    int64_t x_lo = -32768, x_hi = 32768;
  };
  const Case cases[] = {
      {{1, 16, 9, 9}, {32, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, 5},
      {{2, 5, 11, 10}, {20, 5, 3, 3}, {2, 2}, {1, 0, 2, 1}, {1, 1}, 1, true, -3},  // K = 45, M = 20: ragged
      {{1, 32, 8, 9}, {40, 16, 3, 3}, {2, 1}, {1, 1, 2, 2}, {1, 2}, 2, false, 1},  // groups, dilation
      {{1, 64, 8, 8}, {48, 64, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true, 0},   // pointwise, 64 pixels
      // Linears (a16w8's, as 1x1 convolutions of rows x K x 1 x 1): halves and sums transposed.
      {{20, 48, 1, 1}, {40, 48, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true, -7},
      {{32, 72, 1, 1}, {24, 72, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false, 0},  // rows in vector runs
      // Every product at its extreme: x = -32768 (hi -128, lo 0) against w - zp = -255.
      {{1, 96, 4, 4}, {16, 96, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, false, 127, -32768, -32767},
  };
  uint32_t seed = 600;
  for (const Case& c : cases) {
    graph::Graph g;
    std::vector<HostTensor> inputs = {random_tensor(DType::kI16, c.x, seed++, c.x_lo, c.x_hi),
                                      random_tensor(DType::kI8, c.w, seed++, -128, c.weight_zp == 127 ? -127 : 128)};
    if (c.bias) inputs.push_back(random_tensor(DType::kI64, {c.w[0]}, seed++, -1e12, 1e12));
    std::vector<graph::ValueId> ids;
    for (size_t i = 0; i < inputs.size(); ++i) {
      ids.push_back(graph::add_graph_input(g, "in" + std::to_string(i), inputs[i].dtype, inputs[i].shape).value());
    }
    const graph::AttrMap attrs = {{"stride", c.stride}, {"padding", c.padding}, {"dilation", c.dilation},
                                  {"groups", c.groups}, {"weight_zp", c.weight_zp}};
    g.mark_output(graph::add_op(g, "conv2d_int", "conv", ids, attrs).value()[0]);
    const HostTensor want = cpu::run_graph(g, inputs).value()[0];
    const std::string name = graph::shape_to_string(c.x) + " * " + graph::shape_to_string(c.w);
    // Each half's GEMM gathers its im2col view, or (im2col) reads it
    // materialized, where it would gather at all (not a linear's transposed halves).
    const bool linear = c.x[2] == 1 && c.x[3] == 1;
    const bool gathers = !reads_input_as_it_lies(c.x, c.w, c.stride, c.padding) && !linear;
    for (IntGemmKernel k : kIntKernels) {
      for (const auto& [large, im2col] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
        if (k == IntGemmKernel::kDirect && (large || im2col)) continue;
        kernels::KernelGraphOptions options;
        options.int_gemm_kernel = k;
        options.gemm_kernel = large ? kernels::GemmKernel::kTiled128 : kernels::GemmKernel::kTiled64;
        options.conv_im2col = im2col;
        options.profile_steps = true;
        RunStats stats;
        Result<std::vector<HostTensor>> got = run_on_vulkan(g, inputs, &stats, options);
        const std::string run = name + " on " + int_gemm_kernel_name(k) + (large ? " 128x128" : "") +
                                (im2col ? " on im2col views" : "");
        ASSERT_TRUE(got.ok()) << run << ": " << got.status().message();
        EXPECT_TRUE(all_close(got.value()[0], want, 0, 0)) << run;
        std::vector<std::string> kernels;
        for (const gpu::TimedStep& step : stats.steps) {
          if (step.kernel != "int8_gemm_split_reduce") kernels.push_back(step.kernel);  // a split K's reductions
        }
        const std::string gemm = expected_int_shader("conv2d_int", k, large);
        std::vector<std::string> expected = {"int16_split", gemm, gemm, "int16_join"};
        if (im2col && gathers) expected = {"int16_split", "im2col_i8", gemm, "im2col_i8", gemm, "int16_join"};
        if (k == IntGemmKernel::kDirect) expected = {"conv2d_int16"};
        EXPECT_EQ(kernels, expected) << run;
        // A linear's halves go to the GEMM transposed (rows along its columns, read in runs).
        const auto first_gemm = std::find_if(stats.steps.begin(), stats.steps.end(),
                                             [&](const gpu::TimedStep& step) { return step.kernel == gemm; });
        if (k != IntGemmKernel::kDirect && first_gemm != stats.steps.end()) {
          EXPECT_EQ(first_gemm->work.why.find("transposed") != std::string::npos, linear) << run;
        }
      }
    }
  }
  // Deeper than the halves' i32 sums hold exactly (K = 3700 x 3 x 3 > 32768):
  // the direct kernel's 64-bit sums, even when a tiled kernel is asked for.
  // Its values are checked on GPUs only: lavapipe's direct kernels stop
  // summing after ~10923 iterations (TiledConv2dIntWrapsLikeDirect).
  graph::Graph g;
  std::vector<HostTensor> inputs = {random_tensor(DType::kI16, {1, 3700, 3, 3}, 700, -32768, 32768),
                                    random_tensor(DType::kI8, {2, 3700, 3, 3}, 701, -128, 128)};
  std::vector<graph::ValueId> ids = {graph::add_graph_input(g, "x", DType::kI16, inputs[0].shape).value(),
                                     graph::add_graph_input(g, "w", DType::kI8, inputs[1].shape).value()};
  g.mark_output(graph::add_op(g, "conv2d_int", "conv", ids, {{"weight_zp", int64_t{-9}}}).value()[0]);
  kernels::KernelGraphOptions options;
  options.int_gemm_kernel = IntGemmKernel::kTiled;
  options.profile_steps = true;
  RunStats stats;
  Result<std::vector<HostTensor>> got = run_on_vulkan(g, inputs, &stats, options);
  ASSERT_TRUE(got.ok()) << got.status().message();
  if (test_context()->properties().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
    EXPECT_TRUE(all_close(got.value()[0], cpu::run_graph(g, inputs).value()[0], 0, 0));
  }
  ASSERT_EQ(stats.steps.size(), 1u);
  EXPECT_EQ(stats.steps[0].kernel, "conv2d_int16");
}

// ... and the rescale that alone reads such a convolution's i64 sums runs as
// they are joined (rescale_join), bit for bit as the conv and rescale apart:
// a16w8's two forms, to i32 exactly (multiplier 2^14, shift 14) and to i16
// per channel with a 16-bit multiplier, on a convolution and on a linear;
// and both in a row (the first's i32 result rescaled to i16 with 32-bit
// multipliers per channel), the second applied in the same dispatch; and a
// clamp of the i16 result after either (a ReLU, a band) folded into the last
// rescale's bounds.
TEST(VulkanQuant, Int16ConvJoinsItsRescale) {
  struct Case {
    graph::Shape x, w;
    const char* dtype;
    std::vector<int32_t> multiplier, shift;
    bool then_to_i16 = false;
    std::optional<graph::AttrMap> clamp;  // on the i16 result
  };
  const graph::AttrMap relu = {{"min", 0.0}};
  const graph::AttrMap band = {{"min", -100.5}, {"max", 20000.5}};
  const Case cases[] = {
      {{1, 16, 9, 9}, {24, 16, 3, 3}, "i32", {1 << 14}, {14}},
      {{20, 48, 1, 1}, {4, 48, 1, 1}, "i16", {17000, 30000, 16384, 25000}, {30, 31, 29, 32}},
      {{1, 16, 9, 9}, {24, 16, 3, 3}, "i32", {1 << 14}, {14}, true},
      {{20, 48, 1, 1}, {4, 48, 1, 1}, "i32", {1 << 14}, {14}, true},
      {{1, 16, 9, 9}, {24, 16, 3, 3}, "i32", {1 << 14}, {14}, true, relu},
      {{20, 48, 1, 1}, {4, 48, 1, 1}, "i32", {1 << 14}, {14}, true, band},
      {{20, 48, 1, 1}, {4, 48, 1, 1}, "i16", {17000, 30000, 16384, 25000}, {30, 31, 29, 32}, false, relu},
      {{1, 16, 9, 9}, {24, 16, 3, 3}, "i16", {20000}, {33}, false, band},
  };
  uint32_t seed = 800;
  for (const Case& c : cases) {
    const bool conv = c.w[2] == 3;
    std::vector<HostTensor> inputs = {random_tensor(DType::kI16, c.x, seed++, -32768, 32768),
                                      random_tensor(DType::kI8, c.w, seed++, -128, 128),
                                      random_tensor(DType::kI64, {c.w[0]}, seed++, -1e9, 1e9)};
    graph::Graph g;
    std::vector<graph::ValueId> ids;
    for (size_t i = 0; i < inputs.size(); ++i) {
      ids.push_back(graph::add_graph_input(g, "in" + std::to_string(i), inputs[i].dtype, inputs[i].shape).value());
    }
    graph::AttrMap attrs = {{"weight_zp", int64_t{2}}};
    if (conv) attrs["padding"] = Ints{1, 1, 1, 1};
    const graph::ValueId sums = graph::add_op(g, "conv2d_int", "conv", ids, attrs).value()[0];
    const HostTensor m = HostTensor::from_data<int32_t>({static_cast<int64_t>(c.multiplier.size())}, c.multiplier).value();
    const HostTensor sh = HostTensor::from_data<int32_t>({static_cast<int64_t>(c.shift.size())}, c.shift).value();
    const graph::ValueId mv = graph::add_graph_constant(g, "m", DType::kI32, m.shape, m.to_blob()).value();
    const graph::ValueId sv = graph::add_graph_constant(g, "s", DType::kI32, sh.shape, sh.to_blob()).value();
    graph::AttrMap rescale = {{"dtype", std::string(c.dtype)}, {"scale32", int64_t{0}}};
    if (c.multiplier.size() > 1) rescale["axis"] = int64_t{1};
    Result<std::vector<graph::ValueId>> out = graph::add_op(g, "rescale", "rq", {sums, mv, sv}, rescale);
    ASSERT_TRUE(out.ok()) << out.status().message();
    if (c.then_to_i16) {  // per output channel, 32-bit multipliers, double rounding
      std::vector<int32_t> m2(static_cast<size_t>(c.w[0])), s2(static_cast<size_t>(c.w[0]));
      for (size_t o = 0; o < m2.size(); ++o) {
        m2[o] = 1518500250 - static_cast<int32_t>(o) * 7919;
        s2[o] = 38 + static_cast<int32_t>(o % 5);
      }
      const HostTensor mt = HostTensor::from_data<int32_t>({c.w[0]}, m2).value();
      const HostTensor st = HostTensor::from_data<int32_t>({c.w[0]}, s2).value();
      const graph::ValueId m2v = graph::add_graph_constant(g, "m2", DType::kI32, mt.shape, mt.to_blob()).value();
      const graph::ValueId s2v = graph::add_graph_constant(g, "s2", DType::kI32, st.shape, st.to_blob()).value();
      out = graph::add_op(g, "rescale", "rq2", {out.value()[0], m2v, s2v},
                          {{"dtype", std::string("i16")}, {"axis", int64_t{1}}, {"rounding", std::string("double_round")}});
      ASSERT_TRUE(out.ok()) << out.status().message();
    }
    if (c.clamp) {
      out = graph::add_op(g, "clamp", "clamp", {out.value()[0]}, *c.clamp);
      ASSERT_TRUE(out.ok()) << out.status().message();
    }
    g.mark_output(out.value()[0]);
    const HostTensor want = cpu::run_graph(g, inputs).value()[0];
    for (IntGemmKernel k : {IntGemmKernel::kTiled, IntGemmKernel::kTiledDot, IntGemmKernel::kCoopMat}) {
      kernels::KernelGraphOptions options;
      options.int_gemm_kernel = k;
      options.profile_steps = true;
      RunStats stats;
      Result<std::vector<HostTensor>> got = run_on_vulkan(g, inputs, &stats, options);
      const std::string run = graph::shape_to_string(c.x) + (c.then_to_i16 ? " twice" : "") +
                              (c.clamp ? " clamped" : "") + " on " + int_gemm_kernel_name(k);
      ASSERT_TRUE(got.ok()) << run << ": " << got.status().message();
      EXPECT_TRUE(all_close(got.value()[0], want, 0, 0)) << run;
      ASSERT_FALSE(stats.steps.empty()) << run;
      EXPECT_EQ(stats.steps.back().kernel, "rescale_join") << run;
      EXPECT_EQ(std::count_if(stats.steps.begin(), stats.steps.end(),
                              [](const gpu::TimedStep& s) { return s.kernel == "rescale" || s.kernel == "int16_join"; }),
                0)
          << run;
    }
  }
}

TEST(VulkanQuant, TiledMatmulIntEqualsDirectAndCpu) {
  struct Case {
    graph::Shape bmkn;
    int64_t a_zp, b_zp;
  };
  const Case cases[] = {
      {{1, 1, 1, 1}, 3, -128},     {{2, 5, 7, 3}, 0, 0},       {{3, 17, 33, 9}, -128, 127},
      {{2, 70, 37, 130}, 11, -7},  {{1, 64, 64, 64}, 1, 0},    {{4, 19, 8, 77}, 0, 100},
      {{1, 130, 96, 65}, -5, -5},
  };
  uint32_t seed = 400;
  for (const Case& c : cases) {
    const graph::Shape& s = c.bmkn;
    HostTensor a = random_tensor(DType::kI8, {s[0], s[1], s[2]}, seed++, -128, 128);
    HostTensor b = random_tensor(DType::kI8, {s[0], s[2], s[3]}, seed++, -128, 128);
    EXPECT_TRUE(int_gemm_kernels_agree("matmul_int", {a, b}, {{"a_zp", c.a_zp}, {"b_zp", c.b_zp}}))
        << graph::shape_to_string(s);
  }
  // Extremes wrapping past 2^31 (one loop of 34000 iterations: within
  // lavapipe's limit, so the direct kernel sums them all as well).
  HostTensor a = random_tensor(DType::kI8, {1, 16, 34000}, 500, 127, 128);
  HostTensor b = random_tensor(DType::kI8, {1, 34000, 16}, 501, -128, -127);
  EXPECT_TRUE(int_gemm_kernels_agree("matmul_int", {a, b}, {{"a_zp", int64_t{-128}}, {"b_zp", int64_t{127}}}));
}

// Unforced, a resnet-sized convolution goes to the matrix cores where the
// device multiplies i8 cooperative matrices, else to the tiled kernel (with
// dot products where the device has them), and a depthwise one stays direct.
TEST(VulkanQuant, Conv2dIntPicksTiledForResnetShapes) {
  const SharedGpuContext& ctx = *test_context();
  const bool dot = ctx.has_feature(kFeatureShaderIntegerDotProduct);
  const bool coop = int_coopmat_runs();
  // 1x64x56x56, 3x3, 64 out: M = 64, N = 56 * 56, K = 64 * 9.
  kernels::IntGemmChoice resnet = kernels::select_int_gemm(ctx, kernels::GemmProblem{true, 64, 56 * 56, 576, 1});
  EXPECT_EQ(resnet.kernel, coop ? IntGemmKernel::kCoopMat : dot ? IntGemmKernel::kTiledDot : IntGemmKernel::kTiled)
      << resnet.why;
  kernels::IntGemmChoice depthwise = kernels::select_int_gemm(ctx, kernels::GemmProblem{true, 1, 56 * 56, 9, 64});
  EXPECT_EQ(depthwise.kernel, IntGemmKernel::kDirect) << depthwise.why;
  if (coop) {
    // resnet50's last stage at batch 1 on 132 multiprocessors: 8 tiles of
    // 64x64 (M = 512, N = 49), so K = 4608 goes in shares of whole slices.
    kernels::GemmForce on_132;
    on_132.compute_units = 132;
    kernels::IntGemmChoice late = kernels::select_int_gemm(ctx, kernels::GemmProblem{true, 512, 49, 4608, 1}, on_132);
    EXPECT_EQ(late.tile, 64u) << late.describe();
    EXPECT_GT(late.splits, 1u) << late.describe();
    EXPECT_EQ(late.k_split % 64, 0u) << late.describe();
    EXPECT_GE(late.k_split * late.splits, 4608u) << late.describe();
    // A stem over 3 channels stays on the tiled kernel, groups of 8 rows off
    // the matrix cores (on the direct kernel: under 16 rows).
    kernels::GemmProblem stem{true, 64, 112 * 112, 147, 1};
    stem.conv_channels = 3;
    EXPECT_EQ(kernels::select_int_gemm(ctx, stem).kernel, IntGemmKernel::kTiledDot);
    kernels::GemmProblem grouped{true, 8, 28 * 28, 72, 32};
    grouped.conv_channels = 8;
    EXPECT_NE(kernels::select_int_gemm(ctx, grouped).kernel, IntGemmKernel::kCoopMat);
  }

  // And the lowering runs it there.
  HostTensor x = random_tensor(DType::kI8, {1, 64, 56, 56}, 600, -128, 128);
  HostTensor w = random_tensor(DType::kI8, {64, 64, 3, 3}, 601, -128, 128);
  graph::Graph g;
  graph::ValueId xi = graph::add_graph_input(g, "x", DType::kI8, x.shape).value();
  graph::ValueId wi = graph::add_graph_constant(g, "w", DType::kI8, w.shape, w.to_blob()).value();
  graph::ValueId y = graph::add_op(g, "conv2d_int", "conv", {xi, wi},
                                   {{"padding", Ints{1, 1, 1, 1}}, {"input_zp", int64_t{-3}}})
                         .value()[0];
  g.mark_output(y);
  kernels::KernelGraphOptions options;
  options.profile_steps = true;
  RunStats stats;
  Result<std::vector<HostTensor>> got = run_on_vulkan(g, {x}, &stats, options);
  ASSERT_TRUE(got.ok()) << got.status().message();
  // On matrix cores (GPUs) the 3x3 convolution's im2col view is materialized
  // first; the tiled kernels gather it.
  const size_t gemm_step = coop ? 1 : 0;
  ASSERT_GE(stats.steps.size(), gemm_step + 1);
  if (coop) {
    EXPECT_EQ(stats.steps[0].kernel, "im2col_i8");
  }
  EXPECT_EQ(stats.steps[gemm_step].kernel.rfind(coop ? "conv2d_int_coopmat" : dot ? "conv2d_int_tiled_dot" : "conv2d_int_tiled", 0),
            0u)
      << stats.steps[gemm_step].kernel;
  EXPECT_TRUE(all_close(got.value()[0], cpu::run_graph(g, {x}).value()[0], 0, 0));
}

// A requantizing unit (`g`: an int8 GEMM of depth `depth` and the nodes
// its store may take) on each int8 GEMM kernel, K whole and in 3 shares: the
// CPU's bytes every time; on the matrix cores one dispatch doing `fused_ops`
// (two with K split over more than one 64-deep slice: the reduction does it),
// its kernel named with `kernel_suffix`; elsewhere the `apart` nodes one by one.
void expect_requantizing_store(const graph::Graph& g, const std::vector<HostTensor>& inputs, int64_t depth,
                               const std::string& fused_ops, const std::string& kernel_suffix, size_t apart,
                               const std::string& label) {
  const std::vector<HostTensor> want = cpu::run_graph(g, inputs).value();
  for (IntGemmKernel k : {IntGemmKernel::kTiledDot, IntGemmKernel::kCoopMat}) {
    for (uint32_t splits : {1u, 3u}) {
      kernels::KernelGraphOptions options;
      options.int_gemm_kernel = k;
      options.gemm_splits = splits;
      options.profile_steps = true;
      RunStats stats;
      Result<std::vector<HostTensor>> got = run_on_vulkan(g, inputs, &stats, options);
      const std::string what = label + " " + int_gemm_kernel_name(k) + " in " + std::to_string(splits) + " shares";
      ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
      EXPECT_TRUE(all_close(got.value()[0], want[0], 0, 0)) << what;
      // A convolution's im2col view (on matrix cores) is written before the GEMM; the store is the GEMM's.
      if (!stats.steps.empty() && stats.steps[0].kernel == "im2col_i8") stats.steps.erase(stats.steps.begin());
      std::string kernels_run;
      for (const gpu::TimedStep& step : stats.steps) kernels_run += step.kernel + " ";
      if (k == IntGemmKernel::kCoopMat && int_coopmat_runs()) {
        // The store requantizes: no rescale dispatch, no i32 sums in memory;
        // with K split, or a residual add to make, the reduction does.
        const bool reduced = (splits > 1 && depth > 64) || kernel_suffix == "_rqres";
        ASSERT_EQ(stats.steps.size(), reduced ? 2u : 1u) << what << ": " << kernels_run;
        EXPECT_EQ(stats.steps.back().work.ops, fused_ops) << what;
        const std::string& kernel = stats.steps.back().kernel;
        EXPECT_TRUE(kernel.size() >= kernel_suffix.size() &&
                    kernel.compare(kernel.size() - kernel_suffix.size(), kernel_suffix.size(), kernel_suffix) == 0)
            << what << ": " << kernel;
      } else {
        EXPECT_EQ(stats.steps.size(), apart) << what << ": " << kernels_run;
      }
    }
  }
}

// Whether most of an i8 result lies inside the range, not pinned at its ends
// (so that a wrong scale shows).
bool spread_over_i8(const HostTensor& t) {
  int inside = 0;
  for (uint8_t byte : t.bytes) inside += byte != 0x80 && byte != 0x7f;
  return inside > static_cast<int>(t.bytes.size()) / 2;
}

// An int8 GEMM and the rescale that alone reads its sums (requantization, as
// every quantized conv and linear of an exported model ends): on the matrix
// cores one dispatch writes the i8 result (with K split, its reduction does),
// elsewhere the rescale runs after the GEMM; the same bytes as the CPU
// reference either way. Per channel of conv2d (axis 1) and of matmul (the
// last axis), per tensor, both roundings, an unsigned output.
TEST(VulkanQuant, Int8GemmRequantizesInItsStore) {
  struct Case {
    std::string op;
    std::vector<HostTensor> inputs;
    graph::AttrMap attrs;
    int64_t channels;  // 1: one scale for the tensor
    int64_t axis;
    graph::AttrMap rescale;
  };
  const graph::AttrMap double_round = {{"dtype", std::string("i8")}, {"rounding", std::string("double_round")},
                                       {"output_zp", int64_t{-7}}};
  const graph::AttrMap unsigned_out = {{"dtype", std::string("i8")}, {"output_unsigned", int64_t{1}},
                                       {"output_zp", int64_t{120}}};
  std::vector<Case> cases;
  cases.push_back({"conv2d_int",
                   {random_tensor(DType::kI8, {2, 24, 9, 9}, 700, -128, 128),
                    random_tensor(DType::kI8, {40, 24, 3, 3}, 701, -128, 128),
                    random_tensor(DType::kI32, {40}, 702, -5000, 5000)},
                   {{"padding", Ints{1, 1, 1, 1}}, {"input_zp", int64_t{-5}}, {"weight_zp", int64_t{0}}},
                   40, 1, double_round});
  cases.push_back({"conv2d_int",
                   {random_tensor(DType::kI8, {1, 64, 8, 8}, 703, -128, 128),
                    random_tensor(DType::kI8, {96, 64, 1, 1}, 704, -128, 128)},
                   {{"input_zp", int64_t{3}}, {"weight_zp", int64_t{2}}},
                   1, 1, unsigned_out});
  cases.push_back({"matmul_int",
                   {random_tensor(DType::kI8, {2, 37, 80}, 705, -128, 128),
                    random_tensor(DType::kI8, {2, 80, 48}, 706, -128, 128)},
                   {{"a_zp", int64_t{-4}}, {"b_zp", int64_t{9}}},
                   48, 2, double_round});
  uint32_t seed = 800;
  for (const Case& c : cases) {
    graph::Graph g;
    std::vector<graph::ValueId> ids;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      ids.push_back(graph::add_graph_input(g, "in" + std::to_string(i), c.inputs[i].dtype, c.inputs[i].shape).value());
    }
    graph::ValueId sums = graph::add_op(g, c.op, "gemm", ids, c.attrs).value()[0];
    // Multipliers in [2^30, 2^31) with shifts of 42..45: sums of some 10^5 land across the i8 range.
    std::vector<int32_t> multipliers, shifts;
    for (int64_t i = 0; i < c.channels; ++i) {
      multipliers.push_back(1073741824 + static_cast<int32_t>(seed * 7919 + i * 104729) % 900000000);
      shifts.push_back(42 + static_cast<int32_t>(i % 4));
    }
    HostTensor m = i32_tensor(multipliers), sh = i32_tensor(shifts);
    graph::ValueId mi = graph::add_graph_constant(g, "m", DType::kI32, m.shape, m.to_blob()).value();
    graph::ValueId si = graph::add_graph_constant(g, "s", DType::kI32, sh.shape, sh.to_blob()).value();
    graph::AttrMap rescale = c.rescale;
    rescale["axis"] = c.axis;
    graph::ValueId y = graph::add_op(g, "rescale", "requantize", {sums, mi, si}, rescale).value()[0];
    g.mark_output(y);
    ++seed;
    expect_requantizing_store(g, c.inputs, gemm_depth(c.op, c.inputs), c.op + "+rescale", "_rq", 2, c.op);
  }
}

// A residual block as an exported int8 resnet ends one: conv2d_int, its
// rescale to i8, then that and the skip connection each rescaled to i32,
// added, and the sum rescaled to i8 (with a ReLU's clamp). On the matrix
// cores the conv and its reduction (over one share of K or more) do all of
// it; elsewhere each node runs on its own; the same bytes as the CPU either way.
TEST(VulkanQuant, Int8GemmAddsTheResidualInItsStore) {
  HostTensor x = random_tensor(DType::kI8, {1, 32, 10, 10}, 900, -128, 128);
  HostTensor w = random_tensor(DType::kI8, {48, 32, 3, 3}, 901, -128, 128);
  HostTensor bias = random_tensor(DType::kI32, {48}, 902, -3000, 3000);
  HostTensor skip = random_tensor(DType::kI8, {1, 48, 10, 10}, 903, -128, 128);
  graph::Graph g;
  graph::ValueId xi = graph::add_graph_input(g, "x", DType::kI8, x.shape).value();
  graph::ValueId si = graph::add_graph_input(g, "skip", DType::kI8, skip.shape).value();
  graph::ValueId wi = graph::add_graph_constant(g, "w", DType::kI8, w.shape, w.to_blob()).value();
  graph::ValueId bi = graph::add_graph_constant(g, "b", DType::kI32, bias.shape, bias.to_blob()).value();
  auto scale = [&](const std::string& name, std::vector<int32_t> m, std::vector<int32_t> s) {
    HostTensor mt = i32_tensor(m), st = i32_tensor(s);
    return std::pair{graph::add_graph_constant(g, name + "_m", DType::kI32, mt.shape, mt.to_blob()).value(),
                     graph::add_graph_constant(g, name + "_s", DType::kI32, st.shape, st.to_blob()).value()};
  };
  graph::ValueId sums = graph::add_op(g, "conv2d_int", "conv", {xi, wi, bi},
                                      {{"padding", Ints{1, 1, 1, 1}}, {"input_zp", int64_t{-6}}, {"weight_zp", int64_t{0}}})
                            .value()[0];
  std::vector<int32_t> per_channel_m, per_channel_s;
  for (int i = 0; i < 48; ++i) {
    per_channel_m.push_back(1200000000 + i * 9000000);
    per_channel_s.push_back(43 + i % 3);
  }
  auto [m0, s0] = scale("rq0", per_channel_m, per_channel_s);
  graph::ValueId r0 = graph::add_op(g, "rescale", "rq0", {sums, m0, s0},
                                    {{"dtype", std::string("i8")}, {"axis", int64_t{1}}, {"output_zp", int64_t{4}},
                                     {"rounding", std::string("double_round")}})
                          .value()[0];
  auto [ma, sa] = scale("ra", {1518500250}, {20});
  graph::ValueId a = graph::add_op(g, "rescale", "ra", {r0, ma, sa},
                                   {{"dtype", std::string("i32")}, {"input_zp", int64_t{4}}})
                         .value()[0];
  auto [mb, sb] = scale("rb", {1073741824}, {19});
  graph::ValueId b = graph::add_op(g, "rescale", "rb", {si, mb, sb},
                                   {{"dtype", std::string("i32")}, {"input_zp", int64_t{-11}}})
                         .value()[0];
  graph::ValueId sum = graph::add_op(g, "add", "add", {a, b}, {}).value()[0];
  auto [mc, sc] = scale("rc", {1431655765}, {42});
  // Signed i8 out, with a zero point.
  graph::ValueId y = graph::add_op(g, "rescale", "rc", {sum, mc, sc},
                                   {{"dtype", std::string("i8")}, {"output_zp", int64_t{-20}},
                                    {"rounding", std::string("double_round")}})
                         .value()[0];
  g.mark_output(y);
  // The planner makes the six nodes one unit (on every device: a kernel that
  // cannot take them runs them one by one within it).
  const std::vector<kernels::LoweringUnit> units = kernels::plan_lowering(g, true);
  ASSERT_EQ(units.size(), 1u);
  EXPECT_TRUE(units[0].int_rescale && units[0].int_residual);
  EXPECT_EQ(units[0].nodes.size(), 6u);
  const std::vector<HostTensor> inputs = {x, skip};
  EXPECT_TRUE(spread_over_i8(cpu::run_graph(g, inputs).value()[0]));
  expect_requantizing_store(g, inputs, gemm_depth("conv2d_int", {x, w}), "conv2d_int+rescale+rescale+rescale+add+rescale",
                            "_rqres", 6, "residual block");
}

// A quantized linear as exported: matmul_int, the add of an i32 bias along
// its columns, the rescale to i8. The planner makes them one unit; on the
// matrix cores the store adds the bias and requantizes (one dispatch, or the
// GEMM and its reduction with K split), elsewhere the three run in turn.
TEST(VulkanQuant, Int8LinearAddsItsBiasInTheStore) {
  HostTensor a = random_tensor(DType::kI8, {1, 20, 200}, 950, -128, 128);
  HostTensor b = random_tensor(DType::kI8, {1, 200, 96}, 951, -128, 128);
  HostTensor bias = random_tensor(DType::kI32, {96}, 952, -20000, 20000);
  graph::Graph g;
  graph::ValueId ai = graph::add_graph_input(g, "a", DType::kI8, a.shape).value();
  graph::ValueId bi = graph::add_graph_constant(g, "w", DType::kI8, b.shape, b.to_blob()).value();
  graph::ValueId ci = graph::add_graph_constant(g, "bias", DType::kI32, bias.shape, bias.to_blob()).value();
  graph::ValueId sums = graph::add_op(g, "matmul_int", "mm", {ai, bi}, {{"a_zp", int64_t{-3}}}).value()[0];
  graph::ValueId biased = graph::add_op(g, "add", "bias_add", {sums, ci}, {}).value()[0];
  std::vector<int32_t> m, sh;
  for (int i = 0; i < 96; ++i) {
    m.push_back(1100000000 + i * 7000000);
    sh.push_back(41 + i % 3);
  }
  HostTensor mt = i32_tensor(m), st = i32_tensor(sh);
  graph::ValueId mi = graph::add_graph_constant(g, "m", DType::kI32, mt.shape, mt.to_blob()).value();
  graph::ValueId si = graph::add_graph_constant(g, "s", DType::kI32, st.shape, st.to_blob()).value();
  graph::ValueId y = graph::add_op(g, "rescale", "rq", {biased, mi, si},
                                   {{"dtype", std::string("i8")}, {"axis", int64_t{2}}, {"output_zp", int64_t{5}}})
                         .value()[0];
  g.mark_output(y);
  const std::vector<kernels::LoweringUnit> units = kernels::plan_lowering(g, true);
  ASSERT_EQ(units.size(), 1u);
  EXPECT_TRUE(units[0].int_rescale && units[0].int_bias);
  EXPECT_TRUE(spread_over_i8(cpu::run_graph(g, {a}).value()[0]));
  expect_requantizing_store(g, {a}, gemm_depth("matmul_int", {a, b}), "matmul_int+add+rescale", "_rq", 3, "linear");
}

TEST(VulkanQuant, IntPoolsMatchCpu) {
  HostTensor x = random_tensor(DType::kI8, {2, 3, 7, 9}, 30, -128, 128);
  EXPECT_TRUE(node_matches_cpu("avg_pool2d_int", {x},
                               {{"kernel", Ints{3, 2}}, {"stride", Ints{2, 1}}, {"padding", Ints{1, 2, 0, 1}},
                                {"input_zp", int64_t{-9}}, {"output_zp", int64_t{17}}},
                               0, 0));
  EXPECT_TRUE(node_matches_cpu("avg_pool2d_int", {x}, {{"kernel", Ints{2, 2}}}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("max_pool2d", {x}, {{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}},
                               0, 0));
  HostTensor w = random_tensor(DType::kI32, {1, 2, 6, 5}, 31, -1e9, 1e9);
  EXPECT_TRUE(node_matches_cpu("max_pool2d", {w}, {{"kernel", Ints{2, 3}}, {"dilation", Ints{2, 1}}}, 0, 0));
  // a16w8's pools: i16, halves of words (odd widths: a word holds the end of one row and the start of the next),
  // every value at or near the type's lowest where padding must never win.
  HostTensor h = random_tensor(DType::kI16, {2, 3, 7, 9}, 32, -32768, 32768);
  EXPECT_TRUE(node_matches_cpu("max_pool2d", {h}, {{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}},
                               0, 0));
  HostTensor low = random_tensor(DType::kI16, {1, 2, 5, 5}, 33, -32768, -32766);
  EXPECT_TRUE(node_matches_cpu("max_pool2d", {low}, {{"kernel", Ints{3, 2}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 2}}},
                               0, 0));
}

TEST(VulkanQuant, TableMatchesCpu) {
  HostTensor table = random_tensor(DType::kI8, {256}, 40, -128, 128);
  for (const graph::Shape& s : {graph::Shape{1}, graph::Shape{3, 5}, graph::Shape{2, 3, 7, 11}}) {
    HostTensor x = random_tensor(DType::kI8, s, 41, -128, 128);
    EXPECT_TRUE(node_matches_cpu("table", {x, table}, {}, 0, 0, {false, true}));
    EXPECT_TRUE(node_matches_cpu("table", {x, table}, {}, 0, 0, {false, false}));
  }
}

TEST(VulkanQuant, IntShiftsMatchCpu) {
  // Full-range products through every shift (the 64-bit product without shaderInt64).
  HostTensor a = random_tensor(DType::kI32, {4, 16}, 50, -2147483648.0, 2147483647.0);
  HostTensor b = random_tensor(DType::kI32, {4, 16}, 51, -2147483648.0, 2147483647.0);
  std::vector<int32_t> edges = {INT32_MIN, INT32_MAX, -1, 0, 1, 3, -3, 65536};
  HostTensor ea = HostTensor::from_bytes(DType::kI32, {8, 1}, edges.data(), 32).value();
  HostTensor eb = HostTensor::from_bytes(DType::kI32, {1, 8}, edges.data(), 32).value();
  for (int64_t shift : {0, 1, 13, 31, 32, 33, 47, 62, 63}) {
    EXPECT_TRUE(node_matches_cpu("mul_shift", {a, b}, {{"shift", shift}}, 0, 0)) << shift;
    EXPECT_TRUE(node_matches_cpu("mul_shift", {ea, eb}, {{"shift", shift}}, 0, 0)) << shift;  // broadcast
  }
  HostTensor s = random_tensor(DType::kI32, {1, 16}, 52, -3, 36);  // some out of [0, 31]
  for (int64_t round : {0, 1}) {
    EXPECT_TRUE(node_matches_cpu("arithmetic_right_shift", {a, s}, {{"round", round}}, 0, 0)) << round;
  }
}

}  // namespace
}  // namespace gpuu::vulkan_test

// The Vulkan kernels of TOSA's INT profile ops against the CPU reference,
// exactly, over several shapes (element counts that are not whole words of
// i8 included), zero points, per-channel scales and both rounding modes.
#include <cstring>

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

TEST(VulkanQuant, MatmulIntMatchesCpu) {
  for (const graph::Shape& mkn : {graph::Shape{1, 1, 1, 1}, graph::Shape{2, 5, 7, 3}, graph::Shape{3, 17, 33, 9}}) {
    HostTensor a = random_tensor(DType::kI8, {mkn[0], mkn[1], mkn[2]}, 20, -128, 128);
    HostTensor b = random_tensor(DType::kI8, {mkn[0], mkn[2], mkn[3]}, 21, -128, 128);
    EXPECT_TRUE(node_matches_cpu("matmul_int", {a, b}, {{"a_zp", int64_t{3}}, {"b_zp", int64_t{-128}}}, 0, 0));
  }
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

// Backend capability tables, each the backend's own (VGF: TOSA 1.0; Vulkan:
// the kernel op table), as the partitioner sees them: what VGF, Vulkan and the
// CPU take, the reasons they give when they do not, and user narrowing.
#include <gtest/gtest.h>

#include "kernels/op_table.h"
#include "partition/capabilities.h"
#include "partition/partitioner.h"
#include "partition_test_util.h"

namespace gpuu::partition {
namespace {

using testing_util::GraphMaker;
using testing_util::rfc_model;

Support vgf(const Capabilities& caps, const GraphMaker& m, const char* node) {
  return caps.support(kVgfId, m.g, m.node_id(node));
}
Support vulkan(const Capabilities& caps, const GraphMaker& m, const char* node) {
  return caps.support(kVulkanId, m.g, m.node_id(node));
}

TEST(Capabilities, VgfRefusesTheRfcIslandBecauseItsIndicesAreI64) {
  GraphMaker m = rfc_model();
  Capabilities caps = testing_util::builtin_capabilities();
  Support s = vgf(caps, m, "gather_0");
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.reason, "TOSA 1.0 has no i64 tensors (input 1 of gather_0 is i64)");
  EXPECT_EQ(vgf(caps, m, "index_select_0").reason, "TOSA 1.0 has no i64 tensors (input 1 of index_select_0 is i64)");
  for (const char* n : {"transpose_0", "avg_pool2d_0", "sin_0", "cos_0", "reciprocal_0", "mul_0", "transpose_1"}) {
    EXPECT_TRUE(vgf(caps, m, n).ok) << n << ": " << vgf(caps, m, n).reason;
  }
}

TEST(Capabilities, VulkanTakesEveryNodeOfTheRfcModel) {
  GraphMaker m = rfc_model();
  Capabilities caps = testing_util::builtin_capabilities();
  for (const auto& node : m.g.nodes()) EXPECT_TRUE(vulkan(caps, m, node.name.c_str()).ok) << node.name;
}

TEST(Capabilities, VgfTakesGatherWithI32Indices) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {1, 4, 3});
  auto idx = m.constant("idx", graph::DType::kI32, {1, 2});
  m.op("gather", "g", {x, idx}, graph::DType::kF32, {1, 2, 3}, {{"axis", int64_t{1}}});
  EXPECT_TRUE(vgf(testing_util::builtin_capabilities(), m, "g").ok);
}

TEST(Capabilities, VgfRefusesIndicesOfAnotherIntegerType) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {4, 3});
  auto idx = m.constant("idx", graph::DType::kI8, {2});
  m.op("index_select", "s", {x, idx}, graph::DType::kF32, {2, 3}, {{"axis", int64_t{0}}});
  EXPECT_EQ(vgf(testing_util::builtin_capabilities(), m, "s").reason, "TOSA 1.0 GATHER takes i32 indices only (input 1 of s is i8)");
}

TEST(Capabilities, VgfRefusesAnyI64TensorEvenAsAnOutput) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {4});
  m.op("cast", "to_i64", {x}, graph::DType::kI64, {4}, {{"dtype", std::string("i64")}});
  EXPECT_EQ(vgf(testing_util::builtin_capabilities(), m, "to_i64").reason, "TOSA 1.0 has no i64 tensors (output 0 of to_i64 is i64)");
  EXPECT_TRUE(vulkan(testing_util::builtin_capabilities(), m, "to_i64").ok) << vulkan(testing_util::builtin_capabilities(), m, "to_i64").reason;
}

TEST(Capabilities, VulkanTakesI64ArithmeticButVgfDoesNot) {
  GraphMaker m;
  auto a = m.input("a", graph::DType::kI64, {4});
  auto b = m.input("b", graph::DType::kI64, {4});
  m.op("add", "add_i64", {a, b}, graph::DType::kI64, {4});
  m.op("argmax", "arg", {a}, graph::DType::kI64, {}, {{"axis", int64_t{0}}});
  m.op("relu", "relu_i64", {a}, graph::DType::kI64, {4});
  EXPECT_TRUE(vulkan(testing_util::builtin_capabilities(), m, "add_i64").ok) << vulkan(testing_util::builtin_capabilities(), m, "add_i64").reason;
  EXPECT_TRUE(vulkan(testing_util::builtin_capabilities(), m, "arg").ok) << vulkan(testing_util::builtin_capabilities(), m, "arg").reason;
  EXPECT_EQ(vulkan(testing_util::builtin_capabilities(), m, "relu_i64").reason, "no Vulkan kernel for 'relu' on i64 (input 0 of relu_i64 is i64)");
  EXPECT_EQ(vgf(testing_util::builtin_capabilities(), m, "add_i64").reason, "TOSA 1.0 has no i64 tensors (input 0 of add_i64 is i64)");
}

TEST(Capabilities, NewOpsFollowWhatTosaCanExpress) {
  GraphMaker m;
  auto f = m.input("f", graph::DType::kF32, {4});
  auto i = m.input("i", graph::DType::kI32, {4});
  m.op("atan", "atan_0", {f}, graph::DType::kF32, {4});
  m.op("round", "round_0", {f}, graph::DType::kF32, {4});
  m.op("remainder", "rem_f", {f, f}, graph::DType::kF32, {4});
  m.op("remainder", "rem_i", {i, i}, graph::DType::kI32, {4});
  m.op("isnan", "isnan_0", {f}, graph::DType::kBool, {4});
  EXPECT_EQ(vgf(testing_util::builtin_capabilities(), m, "atan_0").reason,
            "TOSA 1.0 has no f32 form of 'atan' (no inverse trigonometric operator in TOSA 1.0; input 0 of atan_0 is f32)");
  EXPECT_TRUE(vgf(testing_util::builtin_capabilities(), m, "round_0").ok);
  EXPECT_FALSE(vgf(testing_util::builtin_capabilities(), m, "rem_f").ok);
  EXPECT_TRUE(vgf(testing_util::builtin_capabilities(), m, "rem_i").ok);
  EXPECT_TRUE(vgf(testing_util::builtin_capabilities(), m, "isnan_0").ok);
  for (const char* n : {"atan_0", "round_0", "rem_f", "rem_i", "isnan_0"}) EXPECT_TRUE(vulkan(testing_util::builtin_capabilities(), m, n).ok) << n;
}

TEST(Capabilities, FloatOnlyTosaOperatorsRefuseIntegers) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kI32, {4});
  m.op("sin", "s", {x}, graph::DType::kI32, {4});
  m.op("add", "a", {x, x}, graph::DType::kI32, {4});
  Support s = vgf(testing_util::builtin_capabilities(), m, "s");
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("TOSA 1.0 has no i32 form of 'sin'"), std::string::npos) << s.reason;
  EXPECT_EQ(vulkan(testing_util::builtin_capabilities(), m, "s").reason, "no Vulkan kernel for 'sin' on i32 (input 0 of s is i32)");
  EXPECT_TRUE(vgf(testing_util::builtin_capabilities(), m, "a").ok);
  EXPECT_TRUE(vulkan(testing_util::builtin_capabilities(), m, "a").ok);
}

TEST(Capabilities, Int8IsVgfOnly) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kI8, {4});
  m.op("neg", "n", {x}, graph::DType::kI8, {4});
  EXPECT_TRUE(vgf(testing_util::builtin_capabilities(), m, "n").ok);
  EXPECT_EQ(vulkan(testing_util::builtin_capabilities(), m, "n").reason, "no Vulkan kernel for i8 tensors (input 0 of n is i8)");
}

TEST(Capabilities, WhereNeedsABoolCondition) {
  GraphMaker m;
  auto c = m.input("c", graph::DType::kBool, {4});
  auto f = m.input("f", graph::DType::kF32, {4});
  m.op("where", "ok", {c, f, f}, graph::DType::kF32, {4});
  m.op("where", "bad", {f, f, f}, graph::DType::kF32, {4});
  EXPECT_TRUE(vgf(testing_util::builtin_capabilities(), m, "ok").ok);
  EXPECT_EQ(vgf(testing_util::builtin_capabilities(), m, "bad").reason, "the condition of 'where' must be bool (input 0 of bad is f32)");
}

TEST(Capabilities, SpatialOpsFloatOnBothButPools3dOnVulkanOnly) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {1, 2, 4, 4});
  auto x3 = m.input("x3", graph::DType::kF16, {1, 2, 4, 4, 4});
  auto i = m.input("i", graph::DType::kI32, {1, 2, 4, 4});
  m.op("resize", "resize", {x}, graph::DType::kF32, {1, 2, 8, 8});
  m.op("avg_pool3d", "avg3", {x3}, graph::DType::kF16, {1, 2, 2, 2, 2});
  m.op("max_pool3d", "max3", {x3}, graph::DType::kF16, {1, 2, 2, 2, 2});
  m.op("flip", "flip_i", {i}, graph::DType::kI32, {1, 2, 4, 4});
  m.op("expand", "expand_i", {i}, graph::DType::kI32, {2, 1, 2, 4, 4});
  m.op("resize", "resize_i", {i}, graph::DType::kI32, {1, 2, 8, 8});
  Capabilities caps = testing_util::builtin_capabilities();
  for (const char* n : {"resize", "flip_i", "expand_i"}) {
    EXPECT_TRUE(vgf(caps, m, n).ok) << n << ": " << vgf(caps, m, n).reason;
    EXPECT_TRUE(vulkan(caps, m, n).ok) << n << ": " << vulkan(caps, m, n).reason;
  }
  for (const char* n : {"avg3", "max3"}) {
    EXPECT_TRUE(vulkan(caps, m, n).ok) << n;
    EXPECT_NE(vgf(caps, m, n).reason.find("no 3-D pooling operator"), std::string::npos) << vgf(caps, m, n).reason;
  }
  EXPECT_EQ(vulkan(caps, m, "resize_i").reason, "no Vulkan kernel for 'resize' on i32 (input 0 of resize_i is i32)");
}

TEST(Capabilities, TosaRankLimitIsSixAndSoIsTheKernels) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {1, 1, 1, 1, 1, 1, 2});
  m.op("abs", "a", {x}, graph::DType::kF32, {1, 1, 1, 1, 1, 1, 2});
  m.op("softmax", "s", {x}, graph::DType::kF32, {1, 1, 1, 1, 1, 1, 2}, {{"axis", int64_t{-1}}});
  auto y = m.input("y", graph::DType::kF32, {1, 1, 1, 1, 1, 2});
  m.op("abs", "a6", {y}, graph::DType::kF32, {1, 1, 1, 1, 1, 2});
  Capabilities caps = testing_util::builtin_capabilities();
  EXPECT_EQ(vgf(caps, m, "a").reason, "TOSA 1.0 tensors have rank <= 6 (input 0 of a has rank 7)");
  // The Vulkan declaration is the kernel table, whose shaders hold MAX_RANK 6 dims; elementwise and data
  // movement kernels take any rank whose walk merges into six (op_table.h's any_rank).
  EXPECT_EQ(vulkan(caps, m, "s").reason, "tensor 'x' has rank 7 > 6");
  EXPECT_TRUE(vulkan(caps, m, "a").ok) << vulkan(caps, m, "a").reason;
  EXPECT_TRUE(vgf(caps, m, "a6").ok);
  EXPECT_TRUE(vulkan(caps, m, "a6").ok);
}

TEST(Capabilities, OptionalInputsLeftOutAreIgnored) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {2, 4});
  auto w = m.constant("w", graph::DType::kF32, {3, 4});
  m.op("linear", "fc", {x, w, graph::kNone}, graph::DType::kF32, {2, 3});
  EXPECT_TRUE(vgf(testing_util::builtin_capabilities(), m, "fc").ok) << vgf(testing_util::builtin_capabilities(), m, "fc").reason;
  EXPECT_TRUE(vulkan(testing_util::builtin_capabilities(), m, "fc").ok);
}

TEST(Capabilities, UnknownOpsGoToTheCpuAlone) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {4});
  m.op("foo", "f", {x}, graph::DType::kF32, {4});
  Capabilities caps = testing_util::builtin_capabilities();
  EXPECT_EQ(vgf(caps, m, "f").reason, "no TOSA 1.0 lowering for op 'foo'");
  EXPECT_EQ(vulkan(caps, m, "f").reason, "no Vulkan kernel for op 'foo'");
  EXPECT_TRUE(caps.support(kCpuId, m.g, m.node_id("f")).ok);
  EXPECT_FALSE(Capabilities::is_known_op("foo"));
  EXPECT_TRUE(Capabilities::is_known_op("index_select"));
}

TEST(Capabilities, CustomShaderNeedsTheVulkanShaderDomain) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {4});
  m.custom_shader("cs", {x}, graph::DType::kF32, {4});
  m.custom_shader("other", {x}, graph::DType::kF32, {4}, "com.example.Thing");
  Capabilities caps = testing_util::builtin_capabilities();
  EXPECT_TRUE(vgf(caps, m, "cs").ok);
  EXPECT_TRUE(vulkan(caps, m, "cs").ok);
  EXPECT_TRUE(Capabilities::is_custom_shader(m.g.node(m.node_id("cs"))));
  EXPECT_FALSE(Capabilities::is_custom_shader(m.g.node(m.node_id("other"))));
  EXPECT_EQ(vgf(caps, m, "other").reason,
            "custom_shader other has domain_name 'com.example.Thing', not 'com.arm.VulkanCustomShader'");
}

TEST(Capabilities, DenyNarrowsOneBackend) {
  GraphMaker m = rfc_model();
  Capabilities caps = testing_util::builtin_capabilities();
  ASSERT_TRUE(caps.deny(kVgfId, "sin").ok());
  EXPECT_EQ(vgf(caps, m, "sin_0").reason, "denied by user");
  EXPECT_TRUE(vulkan(caps, m, "sin_0").ok);
  // The built-in table is unchanged; only the narrowed view refuses.
  EXPECT_TRUE(vgf::vgf_capability().check(m.g, m.node_id("sin_0")).ok());
  // An unsupported node keeps its real reason rather than "denied".
  ASSERT_TRUE(caps.deny(kVgfId, "gather").ok());
  EXPECT_NE(vgf(caps, m, "gather_0").reason.find("i64"), std::string::npos);
}

TEST(Capabilities, RejectsDenyingTheCpuAndEmptyNames) {
  Capabilities caps = testing_util::builtin_capabilities();
  Status s = caps.deny(kCpuId, "sin");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("CPU fallback"), std::string::npos) << s.message();
  EXPECT_EQ(caps.deny(kVulkanId, "").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(caps.pin("", kCpuId).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(caps.pin("x", "").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(caps.denials().empty());
  EXPECT_TRUE(caps.pins().empty());
}

TEST(Capabilities, BadIdsGiveAReasonNotACrash) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {4});
  m.g.add_node(graph::Node{"broken", "abs", {x + 40}, {}, {}});
  Support s = testing_util::builtin_capabilities().support(kVgfId, m.g, 0);
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.reason, "input 0 of broken names no value of the graph");
  EXPECT_FALSE(testing_util::builtin_capabilities().support(kVulkanId, m.g, 5).ok);
}

}  // namespace
}  // namespace gpuu::partition

namespace gpuu::partition {
namespace {

TEST(Capabilities, NarrowAppliesTheBackendsOwnCheck) {
  testing_util::GraphMaker m = testing_util::rfc_model();
  Capabilities caps = testing_util::builtin_capabilities();
  caps.narrow(kVulkanId, [](const graph::Graph&, const graph::Node& n) {
    return n.op == "gather" ? std::string("no kernel for this gather today") : std::string();
  });
  Support s = caps.support(kVulkanId, m.g, m.node_id("gather_0"));
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.reason, "no kernel for this gather today");
  EXPECT_TRUE(caps.support(kVulkanId, m.g, m.node_id("index_select_0")).ok);
  PartitionOptions options = testing_util::builtin_options();
  options.prefer = Prefer::kVulkanFirst;
  options.min_partition_size = 1;
  options.capabilities = caps;
  Result<PartitionResult> r = partition(m.g, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Region& home = r->regions[static_cast<size_t>(r->region_of_node[static_cast<size_t>(m.node_id("gather_0"))])];
  EXPECT_EQ(home.backend, kCpuId) << "neither GPU backend takes it now";
}

}  // namespace
}  // namespace gpuu::partition

namespace gpuu::partition {
namespace {

using testing_util::GraphMaker;

// The Vulkan declaration is read from the kernel op table, so the two cannot disagree.
TEST(VulkanDeclaration, IsTheKernelTable) {
  const BackendCapability& vk = vulkan::vulkan_capability();
  for (const kernels::OpKernel& k : kernels::vulkan_op_kernels()) {
    std::vector<graph::DType> declared = vk.declared_dtypes(k.op);
    EXPECT_FALSE(declared.empty()) << k.op;
    for (graph::DType d : declared) EXPECT_TRUE(k.dtypes & kernels::dtype_bit(d)) << k.op;
  }
  EXPECT_TRUE(vk.declared_dtypes("foo").empty());
  // The logic kernels take i8 (nonzero is true); the old hand-written table said no.
  GraphMaker m;
  auto x = m.input("x", graph::DType::kI8, {4});
  m.op("logical_not", "n", {x}, graph::DType::kBool, {4});
  EXPECT_TRUE(testing_util::builtin_capabilities().support(kVulkanId, m.g, m.node_id("n")).ok);
}

TEST(VulkanDeclaration, TheKernelsOwnCheckGivesItsReason) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {4});
  graph::AttrMap attrs;
  attrs["domain_name"] = std::string(kVulkanCustomShaderDomain);
  attrs["operator_name"] = std::string("NoCode");
  attrs["implementation_attrs"] = std::string("{}");
  attrs["num_outputs"] = int64_t{1};
  m.op("custom_shader", "cs", {x}, graph::DType::kF32, {4}, attrs);
  Support s = testing_util::builtin_capabilities().support(kVulkanId, m.g, m.node_id("cs"));
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.reason, "custom shader 'cs': needs a non-empty \"shader_code\"");
}

}  // namespace
}  // namespace gpuu::partition

// The policy engine on hand-built graphs: the RFC model under every policy,
// pruning and retry, custom-shader isolation, deny/pin, bad input.
#include <gtest/gtest.h>

#include <limits>

#include "partition/explain.h"
#include "partition/partitioner.h"
#include "partition_test_util.h"

namespace gpuu::partition {
namespace {

using graph::DType;
using testing_util::check_invariants;
using testing_util::GraphMaker;
using testing_util::named;
using testing_util::NamedRegion;
using testing_util::rfc_model;

const std::string kVgf = kVgfId;
const std::string kVulkan = kVulkanId;
const std::string kCpu = kCpuId;

PartitionOptions options(Prefer prefer, int64_t min_size, bool retry = false) {
  PartitionOptions o = testing_util::builtin_options();
  o.prefer = prefer;
  o.min_partition_size = min_size;
  o.retry_pruned = retry;
  return o;
}

std::vector<NamedRegion> run(const GraphMaker& m, const PartitionOptions& o) {
  Result<PartitionResult> r = partition(m.g, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return {};
  EXPECT_EQ(check_invariants(m.g, o, *r, /*brute_force=*/true), "");
  return named(m.g, *r);
}

std::string why(const GraphMaker& m, const PartitionOptions& o, const char* node, const std::string& b) {
  Result<Partitioned> p = partition_with_trace(m.g, o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? why_not(m.g, o, *p, m.node_id(node), b) : "";
}

const std::vector<std::string> kPrefix = {"transpose_0", "avg_pool2d_0"};
const std::vector<std::string> kIsland = {"index_select_0", "gather_0", "index_select_1"};
const std::vector<std::string> kSuffix = {"sin_0", "cos_0", "reciprocal_0", "mul_0", "transpose_1"};

TEST(Partitioner, RfcModelVgfFirstGivesVgfVulkanVgf) {
  GraphMaker m = rfc_model();
  std::vector<NamedRegion> expected = {{kVgf, kPrefix}, {kVulkan, kIsland}, {kVgf, kSuffix}};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 1)), expected);
}

TEST(Partitioner, RfcModelVulkanFirstTakesEverythingInOneRegion) {
  GraphMaker m = rfc_model();
  std::vector<std::string> all = kPrefix;
  all.insert(all.end(), kIsland.begin(), kIsland.end());
  all.insert(all.end(), kSuffix.begin(), kSuffix.end());
  std::vector<NamedRegion> expected = {{kVulkan, all}};
  EXPECT_EQ(run(m, options(Prefer::kVulkanFirst, 1)), expected);
  EXPECT_EQ(why(m, options(Prefer::kVulkanFirst, 1), "sin_0", kVgf), "taken first by VulkanBackend (vulkan_first)");
}

// With the default costs (VGF op 1, Vulkan op 2, GPU hand-off 3, GPU region 1):
//   vgf_first:    7 VGF ops + 3 Vulkan ops*2 + 2 hand-offs*3 + 3 regions = 7+6+6+3 = 22
//   vulkan_first: 10 Vulkan ops*2 + 1 region                             = 21
// The two hand-offs cost more than VGF saves on seven tiny ops, so auto keeps
// the model on Vulkan. cost_labelling reaches the same labels (all Vulkan,
// 21); on a tie the earlier candidate, vulkan_first, is kept.
TEST(Partitioner, RfcModelAutoKeepsEverythingOnVulkan) {
  GraphMaker m = rfc_model();
  PartitionOptions o = options(Prefer::kAuto, 1);
  Result<Partitioned> p = partition_with_trace(m.g, o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(check_invariants(m.g, o, p->result, true), "");
  ASSERT_EQ(p->result.regions.size(), 1u);
  EXPECT_EQ(p->result.regions[0].backend, kVulkan);
  EXPECT_EQ(p->trace.strategy, "vulkan_first");
  ASSERT_EQ(p->trace.candidates.size(), 3u);
  EXPECT_EQ(p->trace.candidates[0].first, "vgf_first");
  EXPECT_DOUBLE_EQ(p->trace.candidates[0].second, 22.0);
  EXPECT_EQ(p->trace.candidates[1].first, "vulkan_first");
  EXPECT_DOUBLE_EQ(p->trace.candidates[1].second, 21.0);
  EXPECT_EQ(p->trace.candidates[2].first, "cost_labelling");
  EXPECT_DOUBLE_EQ(p->trace.candidates[2].second, 21.0);
  EXPECT_EQ(why_not(m.g, o, *p, m.node_id("sin_0"), kVgf),
            "taken first by VulkanBackend (vulkan_first, chosen by the auto cost model)");
}

// Make VGF's advantage large: each of its regions carries a chain of 12 ops.
// Split: 2+12 + 5+12 VGF ops + 3 Vulkan ops*2 + 2*3 + 3 = 31+6+6+3 = 46;
// Vulkan alone: 34 ops*2 + 1 = 69.
TEST(Partitioner, AutoSplitsWhenVgfSavesMoreThanTheHandOffsCost) {
  GraphMaker m;
  const graph::Shape s = {1, 3, 4, 4};
  auto v = m.input("x", DType::kF32, s);
  auto chain = [&](const std::string& prefix, int n) {
    for (int i = 0; i < n; ++i) v = m.op("tanh", prefix + std::to_string(i), {v}, DType::kF32, s);
  };
  chain("pre", 14);
  auto idx = m.constant("idx", DType::kI64, {3});
  for (int i = 0; i < 3; ++i) {
    v = m.op("index_select", "island" + std::to_string(i), {v, idx}, DType::kF32, s, {{"axis", int64_t{1}}});
  }
  chain("post", 17);
  m.g.mark_output(v);
  PartitionOptions o = options(Prefer::kAuto, 3);
  Result<Partitioned> p = partition_with_trace(m.g, o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  std::vector<NamedRegion> got = named(m.g, p->result);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].backend, kVgf);
  EXPECT_EQ(got[0].nodes.size(), 14u);
  EXPECT_EQ(got[1], (NamedRegion{kVulkan, {"island0", "island1", "island2"}}));
  EXPECT_EQ(got[2].backend, kVgf);
  EXPECT_EQ(got[2].nodes.size(), 17u);
  EXPECT_DOUBLE_EQ(p->trace.candidates[0].second, 46.0);
  EXPECT_DOUBLE_EQ(p->trace.candidates[1].second, 69.0);
}

TEST(Partitioner, RfcModelWithDefaultMinSizePrunesTheTwoNodePrefix) {
  GraphMaker m = rfc_model();
  std::vector<NamedRegion> expected = {{kCpu, kPrefix}, {kVulkan, kIsland}, {kVgf, kSuffix}};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 3)), expected);
  EXPECT_EQ(why(m, options(Prefer::kVgfFirst, 3), "avg_pool2d_0", kVgf),
            "pruned: region of 2 nodes < min_partition_size 3");
}

TEST(Partitioner, MinSizeFourPrunesTheVulkanIslandToTheCpu) {
  GraphMaker m = rfc_model();
  PartitionOptions o = options(Prefer::kVgfFirst, 4);
  std::vector<std::string> cpu = kPrefix;
  cpu.insert(cpu.end(), kIsland.begin(), kIsland.end());
  std::vector<NamedRegion> expected = {{kCpu, cpu}, {kVgf, kSuffix}};
  EXPECT_EQ(run(m, o), expected);
  EXPECT_EQ(why(m, o, "gather_0", kVulkan), "pruned: region of 3 nodes < min_partition_size 4");
  EXPECT_EQ(why(m, o, "gather_0", kVgf), "unsupported: TOSA 1.0 has no i64 tensors (input 1 of gather_0 is i64)");
  EXPECT_EQ(why(m, o, "gather_0", kCpu), "");
}

TEST(Partitioner, RetryOffersTheIslandToVgfWhichCannotTakeI64) {
  GraphMaker m = rfc_model();
  PartitionOptions o = options(Prefer::kVgfFirst, 4, /*retry=*/true);
  std::vector<std::string> cpu = kPrefix;
  cpu.insert(cpu.end(), kIsland.begin(), kIsland.end());
  std::vector<NamedRegion> expected = {{kCpu, cpu}, {kVgf, kSuffix}};
  EXPECT_EQ(run(m, o), expected);
  Result<Partitioned> p = partition_with_trace(m.g, o);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->trace.nodes[static_cast<size_t>(m.node_id("index_select_0"))].offered_on_retry[0]);
  // The prefix was offered to Vulkan, which could build only 2 < 4 from it.
  EXPECT_EQ(why_not(m.g, o, *p, m.node_id("transpose_0"), kVulkan),
            "pruned on retry: region of 2 nodes < min_partition_size 4");
}

TEST(Partitioner, RetryLetsAPrunedPieceJoinTheOtherBackendsRegion) {
  // sin -> cos -> three i64-indexed selects: VGF takes {sin, cos} first, 2 < 3.
  GraphMaker m;
  const graph::Shape s = {4, 4};
  auto v = m.input("x", DType::kF32, s);
  v = m.op("sin", "sin", {v}, DType::kF32, s);
  v = m.op("cos", "cos", {v}, DType::kF32, s);
  auto idx = m.constant("idx", DType::kI64, {4});
  for (int i = 0; i < 3; ++i) {
    v = m.op("index_select", "sel" + std::to_string(i), {v, idx}, DType::kF32, s, {{"axis", int64_t{0}}});
  }
  m.g.mark_output(v);
  std::vector<NamedRegion> without = {{kCpu, {"sin", "cos"}}, {kVulkan, {"sel0", "sel1", "sel2"}}};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 3, false)), without);
  std::vector<NamedRegion> with = {{kVulkan, {"sin", "cos", "sel0", "sel1", "sel2"}}};
  PartitionOptions o = options(Prefer::kVgfFirst, 3, true);
  EXPECT_EQ(run(m, o), with);
  EXPECT_EQ(why(m, o, "sin", kVgf), "pruned: region of 2 nodes < min_partition_size 3");
}

TEST(Partitioner, CustomShadersEachGetARegionOfTheirOwn) {
  GraphMaker m;
  const graph::Shape s = {4};
  auto x = m.input("x", DType::kF32, s);
  auto s1 = m.op("sin", "s1", {x}, DType::kF32, s);
  auto cs = m.custom_shader("cs", {s1}, DType::kF32, s);
  auto cs2 = m.custom_shader("cs2", {cs}, DType::kF32, s);
  auto s2 = m.op("cos", "s2", {cs2}, DType::kF32, s);
  auto s4 = m.op("tanh", "s4", {s1}, DType::kF32, s);
  auto s3 = m.op("add", "s3", {s2, s4}, DType::kF32, s);
  m.g.mark_output(s3);
  std::vector<NamedRegion> vgf = {{kVgf, {"s1", "s4"}}, {kVgf, {"cs"}}, {kVgf, {"cs2"}}, {kVgf, {"s2", "s3"}}};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 1)), vgf);
  std::vector<NamedRegion> vk = {
      {kVulkan, {"s1", "s4"}}, {kVulkan, {"cs"}}, {kVulkan, {"cs2"}}, {kVulkan, {"s2", "s3"}}};
  EXPECT_EQ(run(m, options(Prefer::kVulkanFirst, 1)), vk);
  // A shader region is one node by construction: the minimum does not prune it.
  std::vector<NamedRegion> pruned = {{kCpu, {"s1", "s4"}}, {kVgf, {"cs"}}, {kVgf, {"cs2"}}, {kCpu, {"s2", "s3"}}};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 3)), pruned);
}

TEST(Partitioner, CustomOpOfAnotherDomainFallsToTheCpu) {
  GraphMaker m;
  auto x = m.input("x", DType::kF32, {4});
  auto c = m.custom_shader("cs", {x}, DType::kF32, {4}, "com.example.Other");
  m.g.mark_output(c);
  std::vector<NamedRegion> expected = {{kCpu, {"cs"}}};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 1)), expected);
}

TEST(Partitioner, I64ArithmeticLandsOnVulkanNotTheCpu) {
  GraphMaker m;
  auto a = m.input("a", DType::kI64, {4, 3});
  auto b = m.input("b", DType::kI64, {3});
  auto sum = m.op("add", "add_0", {a, b}, DType::kI64, {4, 3});
  m.g.mark_output(m.op("argmax", "argmax_0", {sum}, DType::kI64, {4}, {{"axis", int64_t{1}}}));
  for (Prefer prefer : {Prefer::kVgfFirst, Prefer::kVulkanFirst}) {
    std::vector<NamedRegion> expected = {{kVulkan, {"add_0", "argmax_0"}}};
    EXPECT_EQ(run(m, options(prefer, 1)), expected);
  }
  EXPECT_EQ(why(m, options(Prefer::kVgfFirst, 1), "add_0", kVgf),
            "unsupported: TOSA 1.0 has no i64 tensors (input 0 of add_0 is i64)");
}

TEST(Partitioner, DenyHandsTheOpToTheOtherBackend) {
  GraphMaker m = rfc_model();
  PartitionOptions o = options(Prefer::kVgfFirst, 1);
  ASSERT_TRUE(o.capabilities.deny(kVgf, "sin").ok());
  std::vector<NamedRegion> expected = {{kVgf, kPrefix},
                                       {kVulkan, {"index_select_0", "gather_0", "index_select_1", "sin_0"}},
                                       {kVgf, {"cos_0", "reciprocal_0", "mul_0", "transpose_1"}}};
  EXPECT_EQ(run(m, o), expected);
  EXPECT_EQ(why(m, o, "sin_0", kVgf), "denied by user");
}

TEST(Partitioner, DenyingBothBackendsLeavesTheOpOnTheCpu) {
  GraphMaker m = rfc_model();
  PartitionOptions o = options(Prefer::kVgfFirst, 1);
  ASSERT_TRUE(o.capabilities.deny(kVgf, "transpose").ok());
  ASSERT_TRUE(o.capabilities.deny(kVulkan, "transpose").ok());
  std::vector<NamedRegion> expected = {{kCpu, {"transpose_0"}},
                                       {kVgf, {"avg_pool2d_0"}},
                                       {kVulkan, kIsland},
                                       {kVgf, {"sin_0", "cos_0", "reciprocal_0", "mul_0"}},
                                       {kCpu, {"transpose_1"}}};
  EXPECT_EQ(run(m, o), expected);
}

TEST(Partitioner, PinToCpuSplitsTheIsland) {
  GraphMaker m = rfc_model();
  PartitionOptions o = options(Prefer::kVgfFirst, 1);
  ASSERT_TRUE(o.capabilities.pin("gather_0", kCpu).ok());
  std::vector<NamedRegion> expected = {{kVgf, kPrefix},
                                       {kVulkan, {"index_select_0"}},
                                       {kCpu, {"gather_0"}},
                                       {kVulkan, {"index_select_1"}},
                                       {kVgf, kSuffix}};
  EXPECT_EQ(run(m, o), expected);
  EXPECT_EQ(why(m, o, "gather_0", kVulkan), "pinned to CpuFallback by user");
}

TEST(Partitioner, PinnedNodeIsNeverPruned) {
  GraphMaker m = rfc_model();
  PartitionOptions o = options(Prefer::kVgfFirst, 3);
  ASSERT_TRUE(o.capabilities.pin("mul_0", kVulkan).ok());
  // Without mul_0, VGF's suffix falls apart into {sin_0}, {cos_0,
  // reciprocal_0} and {transpose_1}: all below 3, all pruned. The pinned
  // one-node Vulkan region stays.
  std::vector<NamedRegion> expected = {{kCpu, kPrefix},
                                       {kVulkan, kIsland},
                                       {kCpu, {"sin_0", "cos_0", "reciprocal_0"}},
                                       {kVulkan, {"mul_0"}},
                                       {kCpu, {"transpose_1"}}};
  EXPECT_EQ(run(m, o), expected);
  EXPECT_EQ(why(m, o, "mul_0", kVgf), "pinned to VulkanBackend by user");
}

TEST(Partitioner, AStrandedPieceJoinsItsConsumersRegion) {
  // The mask cast is ready at the start but consumed after the Vulkan island;
  // it belongs with its consumer, not in a region of its own.
  GraphMaker m;
  const graph::Shape s = {4, 4};
  auto x = m.input("x", DType::kF32, s);
  auto mask = m.input("mask", DType::kI32, s);
  auto a = m.op("sin", "a", {x}, DType::kF32, s);
  auto idx = m.constant("idx", DType::kI64, {4});
  auto g = m.op("index_select", "g", {a, idx}, DType::kF32, s, {{"axis", int64_t{0}}});
  auto c = m.op("cast", "mask_f32", {mask}, DType::kF32, s, {{"dtype", std::string("f32")}});
  auto out = m.op("mul", "out", {g, c}, DType::kF32, s);
  m.g.mark_output(out);
  std::vector<NamedRegion> expected = {{kVgf, {"a"}}, {kVulkan, {"g"}}, {kVgf, {"mask_f32", "out"}}};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 1)), expected);
}

TEST(Partitioner, ParallelBranchesThatReconvergeStayConvex) {
  // a -> b (VGF) and a -> i64 select (Vulkan) -> c: {a, b, c} would not be
  // convex (the path through the select leaves and re-enters), so VGF gets
  // {a, b} and {c}.
  GraphMaker m;
  const graph::Shape s = {4, 4};
  auto x = m.input("x", DType::kF32, s);
  auto a = m.op("sin", "a", {x}, DType::kF32, s);
  auto b = m.op("cos", "b", {a}, DType::kF32, s);
  auto idx = m.constant("idx", DType::kI64, {4});
  auto sel = m.op("index_select", "sel", {a, idx}, DType::kF32, s, {{"axis", int64_t{0}}});
  auto c = m.op("add", "c", {b, sel}, DType::kF32, s);
  m.g.mark_output(c);
  std::vector<NamedRegion> expected = {{kVgf, {"a", "b"}}, {kVulkan, {"sel"}}, {kVgf, {"c"}}};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 1)), expected);
}

// ---- dead nodes (results that reach no graph output) ---------------------------

const char* const kDeadWhy = "dead: its results reach no graph output, so no backend runs it";

// Every policy leaves `dead` out of every region, and the explain report says why.
void expect_dead_everywhere(const GraphMaker& m, const std::vector<std::string>& dead, int64_t min_size) {
  for (Prefer p : {Prefer::kAuto, Prefer::kVgfFirst, Prefer::kVulkanFirst}) {
    for (bool retry : {false, true}) {
      Result<PartitionResult> r = partition(m.g, options(p, min_size, retry));
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(check_invariants(m.g, options(p, min_size, retry), *r, true), "");
      for (const std::string& name : dead) {
        EXPECT_EQ(r->region_of_node[static_cast<size_t>(m.node_id(name))], -1) << name << " " << to_string(p);
        for (const std::string& b : {kVgf, kVulkan, kCpu}) {
          EXPECT_EQ(why(m, options(p, min_size, retry), name.c_str(), b), kDeadWhy);
        }
      }
    }
  }
}

TEST(Partitioner, ASliceNothingReadsJoinsNoRegion) {
  // A functionalized slice assignment into a clone keeps the slice of the
  // original, which nothing reads: it used to become a VGF region of its own
  // with no outputs.
  GraphMaker m;
  auto c = m.input("c", DType::kF32, {1, 4, 8, 3});
  auto k = m.input("k", DType::kF32, {1, 4, 1, 3});
  const graph::AttrMap rows = {{"axes", std::vector<int64_t>{2}}, {"starts", std::vector<int64_t>{5}},
                               {"ends", std::vector<int64_t>{6}}};
  m.op("slice", "slice_0", {c}, DType::kF32, {1, 4, 1, 3}, rows);
  auto head = m.op("slice", "slice_1", {c}, DType::kF32, {1, 4, 5, 3},
                   {{"axes", std::vector<int64_t>{2}}, {"starts", std::vector<int64_t>{0}},
                    {"ends", std::vector<int64_t>{5}}});
  auto tail = m.op("slice", "slice_2", {c}, DType::kF32, {1, 4, 2, 3},
                   {{"axes", std::vector<int64_t>{2}}, {"starts", std::vector<int64_t>{6}},
                    {"ends", std::vector<int64_t>{8}}});
  auto cat = m.op("concat", "concat_0", {head, k, tail}, DType::kF32, {1, 4, 8, 3}, {{"axis", int64_t{2}}});
  m.g.mark_output(m.op("mul", "mul_0", {cat, cat}, DType::kF32, {1, 4, 8, 3}));
  const std::vector<std::string> live = {"slice_1", "slice_2", "concat_0", "mul_0"};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 1)), (std::vector<NamedRegion>{{kVgf, live}}));
  EXPECT_EQ(run(m, options(Prefer::kVulkanFirst, 1)), (std::vector<NamedRegion>{{kVulkan, live}}));
  expect_dead_everywhere(m, {"slice_0"}, 1);
}

TEST(Partitioner, ADeadNodeBetweenTwoLiveRegionsJoinsNeither) {
  // sin (VGF) -> i64 gather (Vulkan) -> cos (VGF); a dead exp reads the
  // gather, where VGF's second region would have taken it.
  GraphMaker m;
  const graph::Shape s = {4, 4};
  auto x = m.input("x", DType::kF32, s);
  auto a = m.op("sin", "sin_0", {x}, DType::kF32, s);
  auto idx = m.constant("idx", DType::kI64, {4});
  auto g = m.op("index_select", "select_0", {a, idx}, DType::kF32, s, {{"axis", int64_t{0}}});
  m.op("exp", "dead_exp", {g}, DType::kF32, s);
  m.g.mark_output(m.op("cos", "cos_0", {g}, DType::kF32, s));
  std::vector<NamedRegion> expected = {{kVgf, {"sin_0"}}, {kVulkan, {"select_0"}}, {kVgf, {"cos_0"}}};
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 1)), expected);
  expected = {{kVulkan, {"sin_0", "select_0", "cos_0"}}};
  EXPECT_EQ(run(m, options(Prefer::kVulkanFirst, 1)), expected);
  expect_dead_everywhere(m, {"dead_exp"}, 1);
}

TEST(Partitioner, ADeadChainJoinsNoRegionAndCountsTowardNoMinimum) {
  // relu is the only live node. The dead chain (a node with two dead inputs
  // among them, one reading a live value) would have made the VGF region 5
  // nodes; alone relu is below min_partition_size 2 and goes to the CPU.
  GraphMaker m;
  const graph::Shape s = {8};
  auto x = m.input("x", DType::kF32, s);
  auto r = m.op("relu", "relu_0", {x}, DType::kF32, s);
  auto e = m.op("exp", "dead_0", {r}, DType::kF32, s);
  auto n = m.op("neg", "dead_1", {e}, DType::kF32, s);
  auto t = m.op("tanh", "dead_2", {x}, DType::kF32, s);
  m.op("add", "dead_3", {n, t}, DType::kF32, s);
  m.g.mark_output(r);
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 1)), (std::vector<NamedRegion>{{kVgf, {"relu_0"}}}));
  EXPECT_EQ(run(m, options(Prefer::kVgfFirst, 2)), (std::vector<NamedRegion>{{kCpu, {"relu_0"}}}));
  expect_dead_everywhere(m, {"dead_0", "dead_1", "dead_2", "dead_3"}, 1);
  expect_dead_everywhere(m, {"dead_0", "dead_1", "dead_2", "dead_3"}, 2);
}

// x -> dead_sin (node 0, read by nothing) and x -> cos_0 (node 1), the output.
GraphMaker dead_sin_beside_cos() {
  GraphMaker m;
  auto x = m.input("x", DType::kF32, {4});
  m.op("sin", "dead_sin", {x}, DType::kF32, {4});
  m.g.mark_output(m.op("cos", "cos_0", {x}, DType::kF32, {4}));
  return m;
}

TEST(Partitioner, APinnedDeadNodeStillJoinsNoRegion) {
  GraphMaker m = dead_sin_beside_cos();
  PartitionOptions o = options(Prefer::kVgfFirst, 1);
  ASSERT_TRUE(o.capabilities.pin("dead_sin", kVulkan).ok());
  EXPECT_EQ(run(m, o), (std::vector<NamedRegion>{{kVgf, {"cos_0"}}}));
}

TEST(Partitioner, AGraphWithoutOutputsHasNoRegions) {
  GraphMaker m;
  auto x = m.input("x", DType::kF32, {4});
  m.op("sin", "sin_0", {x}, DType::kF32, {4});
  for (Prefer p : {Prefer::kAuto, Prefer::kVgfFirst, Prefer::kVulkanFirst}) {
    EXPECT_EQ(run(m, options(p, 1)), std::vector<NamedRegion>{});
  }
}

TEST(Partitioner, UnknownOpsAndEmptyGraphs) {
  GraphMaker empty;
  Result<PartitionResult> r = partition(empty.g, testing_util::builtin_options());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->regions.empty());

  GraphMaker m;
  auto x = m.input("x", DType::kF32, {4});
  auto a = m.op("foo", "a", {x}, DType::kF32, {4});
  auto b = m.op("bar", "b", {a}, DType::kF32, {4});
  m.g.mark_output(b);
  std::vector<NamedRegion> expected = {{kCpu, {"a", "b"}}};
  for (Prefer p : {Prefer::kAuto, Prefer::kVgfFirst, Prefer::kVulkanFirst}) EXPECT_EQ(run(m, options(p, 1)), expected);
  EXPECT_EQ(why(m, options(Prefer::kVgfFirst, 1), "a", kVgf), "unsupported: no TOSA 1.0 lowering for op 'foo'");
}

TEST(Partitioner, SameInputSameResult) {
  GraphMaker m = rfc_model();
  for (Prefer p : {Prefer::kAuto, Prefer::kVgfFirst, Prefer::kVulkanFirst}) {
    PartitionOptions o = options(p, 2, true);
    Result<PartitionResult> a = partition(m.g, o);
    Result<PartitionResult> b = partition(rfc_model().g, o);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->region_of_node, b->region_of_node);
    EXPECT_EQ(named(m.g, *a), named(m.g, *b));
  }
}

// The property tests lean on check_invariants(); make sure it can fail.
TEST(InvariantChecker, CatchesBrokenResults) {
  GraphMaker m = rfc_model();
  PartitionOptions o = options(Prefer::kVgfFirst, 1);
  auto make = [&](std::vector<std::pair<std::string, std::vector<graph::NodeId>>> regions) {
    PartitionResult r;
    r.region_of_node.assign(m.g.nodes().size(), -1);
    for (auto& [b, nodes] : regions) {
      for (graph::NodeId n : nodes) r.region_of_node[static_cast<size_t>(n)] = static_cast<int32_t>(r.regions.size());
      r.regions.push_back(Region{b, nodes});
    }
    return r;
  };
  // Valid: the expected vgf_first split.
  EXPECT_EQ(check_invariants(m.g, o, make({{kVgf, {0, 1}}, {kVulkan, {2, 3, 4}}, {kVgf, {5, 6, 7, 8, 9}}}), true), "");
  // VGF prefix and suffix merged: not convex (the path through the island).
  std::string why = check_invariants(m.g, o, make({{kVgf, {0, 1, 5, 6, 7, 8, 9}}, {kVulkan, {2, 3, 4}}}), true);
  EXPECT_NE(why.find("backwards"), std::string::npos) << why;
  EXPECT_NE(check_invariants(m.g, o, make({{kVgf, {0, 1}}, {kVulkan, {2, 3, 4}}}), true), "") << "coverage";
  EXPECT_NE(check_invariants(m.g, o, make({{kVgf, {0, 1, 2, 3, 4}}, {kVgf, {5, 6, 7, 8, 9}}}), true), "")
      << "VGF cannot take the i64 island";
  EXPECT_NE(check_invariants(m.g, options(Prefer::kVgfFirst, 3),
                             make({{kVgf, {0, 1}}, {kVulkan, {2, 3, 4}}, {kVgf, {5, 6, 7, 8, 9}}}), true),
            "")
      << "a 2-node GPU region under min size 3";
  EXPECT_NE(check_invariants(m.g, o, make({{kVgf, {0, 1}}, {kVulkan, {2, 3, 4}}, {kVgf, {5, 6}}, {kVgf, {7, 8, 9}}}),
                             true),
            "")
      << "{sin_0, cos_0} is not connected";
}

TEST(InvariantChecker, CatchesADeadNodeInARegionAndALiveOneInNone) {
  GraphMaker m = dead_sin_beside_cos();
  PartitionOptions o = options(Prefer::kVgfFirst, 1);
  PartitionResult r;
  r.regions = {Region{kVgf, {0, 1}}};
  r.region_of_node = {0, 0};
  EXPECT_EQ(check_invariants(m.g, o, r, true), "dead node dead_sin is in 1 regions");
  r.regions.clear();
  r.region_of_node = {-1, -1};
  EXPECT_EQ(check_invariants(m.g, o, r, true), "live node cos_0 is in 0 regions");
}

// ---- bad input ---------------------------------------------------------------

Status status_of(const graph::Graph& g, const PartitionOptions& o) { return partition(g, o).status(); }

void expect_invalid(const Status& s, const std::string& fragment) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

TEST(PartitionerErrors, RejectsBadOptions) {
  GraphMaker m = rfc_model();
  expect_invalid(status_of(m.g, options(Prefer::kVgfFirst, 0)), "min_partition_size is 0 (must be >= 1)");
  expect_invalid(status_of(m.g, options(static_cast<Prefer>(9), 1)), "unknown prefer value 9");
  PartitionOptions o = testing_util::builtin_options();
  o.cost.gpu_crossing = -1;
  expect_invalid(status_of(m.g, o), "gpu_crossing");
  o = testing_util::builtin_options();
  o.cost.per_op["sin"] = {{kVgfId, 1.0}, {kVulkanId, std::numeric_limits<double>::quiet_NaN()}, {kCpuId, 1.0}};
  expect_invalid(status_of(m.g, o), "cost of 'sin' on VulkanBackend");
}

TEST(PartitionerErrors, RejectsPinsItCannotHonour) {
  GraphMaker m = rfc_model();
  PartitionOptions o = testing_util::builtin_options();
  ASSERT_TRUE(o.capabilities.pin("nope", kCpu).ok());
  expect_invalid(status_of(m.g, o), "pin: no node is named 'nope'");

  o = testing_util::builtin_options();
  ASSERT_TRUE(o.capabilities.pin("gather_0", kVgf).ok());
  expect_invalid(status_of(m.g, o),
                 "cannot pin 'gather_0' to VgfBackend: TOSA 1.0 has no i64 tensors (input 1 of gather_0 is i64)");

  o = testing_util::builtin_options();
  ASSERT_TRUE(o.capabilities.deny(kVulkan, "sin").ok());
  ASSERT_TRUE(o.capabilities.pin("sin_0", kVulkan).ok());
  expect_invalid(status_of(m.g, o), "cannot pin 'sin_0' to VulkanBackend: denied by user");

  o = testing_util::builtin_options();
  ASSERT_TRUE(o.capabilities.pin("sin_0", kVulkan).ok());
  ASSERT_TRUE(o.capabilities.pin("sin_0", kCpu).ok());
  expect_invalid(status_of(m.g, o), "'sin_0' is pinned to both VulkanBackend and CpuFallback");
}

TEST(PartitionerErrors, RejectsDenyingAnOpNobodyUses) {
  GraphMaker m = rfc_model();
  PartitionOptions o = testing_util::builtin_options();
  ASSERT_TRUE(o.capabilities.deny(kVgf, "sinn").ok());
  expect_invalid(status_of(m.g, o), "op 'sinn' (for VgfBackend) is not a known op and no node of the graph uses it");
  o = testing_util::builtin_options();
  ASSERT_TRUE(o.capabilities.deny(kVgf, "conv2d").ok());  // known, merely unused: fine
  EXPECT_TRUE(status_of(m.g, o).ok());
}

TEST(PartitionerErrors, RejectsMalformedGraphs) {
  {
    GraphMaker m;
    auto x = m.input("x", DType::kF32, {4});
    m.g.add_node(graph::Node{"bad", "abs", {x + 7}, {}, {}});
    expect_invalid(status_of(m.g, testing_util::builtin_options()), "input 0 of node 'bad' is value id 7, out of range");
  }
  {
    GraphMaker m;
    auto x = m.input("x", DType::kF32, {4});
    auto later = m.g.add_value(graph::Value{"later", DType::kF32, {4}, graph::kNone, graph::kNone});
    m.g.add_node(
        graph::Node{"first", "abs", {later}, {m.g.add_value(graph::Value{"o", DType::kF32, {4}, -1, -1})}, {}});
    m.g.add_node(graph::Node{"second", "abs", {x}, {later}, {}});
    expect_invalid(status_of(m.g, testing_util::builtin_options()), "node 'first' reads value 'later' produced by a later node");
  }
  {
    GraphMaker m;
    auto x = m.input("x", DType::kF32, {4});
    auto v = m.op("abs", "one", {x}, DType::kF32, {4});
    m.g.add_node(graph::Node{"two", "neg", {x}, {v}, {}});
    expect_invalid(status_of(m.g, testing_util::builtin_options()), "value 'one:0' is produced by node 'one' and by node 'two'");
  }
}

}  // namespace
}  // namespace gpuu::partition

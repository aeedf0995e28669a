// The cost model's sources: the CPU fallback's costs in the defaults, each GPU
// backend's per-op costs from its own declaration, the caller's over both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "partition/cost_model.h"
#include "partition/partitioner.h"
#include "partition_test_util.h"

namespace gpuu::partition {
namespace {

using graph::DType;
using testing_util::GraphMaker;
using testing_util::named;
using testing_util::NamedRegion;

CostModel resolved(const CostModel& model) {
  return model.resolved(testing_util::builtin_capabilities().backends());
}

TEST(CostModel, DefaultsNameNoGpuBackend) {
  EXPECT_EQ(CostModel::defaults().backend_ids(), std::vector<std::string>{kCpuId});
}

TEST(CostModel, EachBackendDeclaresItsOwnPerOpCosts) {
  CostModel m = resolved(CostModel::defaults());
  for (const char* op : {"conv2d", "matmul", "linear"}) {
    EXPECT_DOUBLE_EQ(m.node_cost(op, kVgfId), 4.0) << op;
    EXPECT_DOUBLE_EQ(m.node_cost(op, kVulkanId), 8.0) << op;
    EXPECT_DOUBLE_EQ(m.node_cost(op, kCpuId), 100.0) << op;
  }
  EXPECT_DOUBLE_EQ(m.node_cost("add", kVgfId), 1.0);
  EXPECT_DOUBLE_EQ(m.node_cost("add", kVulkanId), 2.0);
  EXPECT_DOUBLE_EQ(m.node_cost("add", kCpuId), 10.0);
}

TEST(CostModel, ACallersPerOpCostWinsOverTheDeclaration) {
  CostModel mine = CostModel::defaults();
  mine.per_op["matmul"][kVulkanId] = 1.5;
  mine.op_cost[kVgfId] = 50.0;  // a backend's default leaves its declared per-op costs alone
  CostModel m = resolved(mine);
  EXPECT_DOUBLE_EQ(m.node_cost("matmul", kVulkanId), 1.5);
  EXPECT_DOUBLE_EQ(m.node_cost("matmul", kVgfId), 4.0);
  EXPECT_DOUBLE_EQ(m.node_cost("add", kVgfId), 50.0);
  EXPECT_DOUBLE_EQ(m.node_cost("conv2d", kVulkanId), 8.0);
}

// Matrix products around an i64 island only Vulkan takes. At the default
// node costs alone (VGF 1, Vulkan 2) one Vulkan region would win (6*2 + 1 =
// 13 against 4 + 2*2 + 3 regions + 2 crossings*3 = 17); the declared matmul
// costs turn it: 4*4 + 2*2 + 3 + 6 = 29 against 4*8 + 2*2 + 1 = 37.
TEST(CostModel, AutoWeighsMatrixProductsByTheDeclaredCosts) {
  GraphMaker m;
  const graph::Shape s = {1, 3, 4, 4};
  auto w = m.constant("w", DType::kF32, {4, 4});
  auto v = m.input("x", DType::kF32, s);
  v = m.op("matmul", "mm0", {v, w}, DType::kF32, s);
  v = m.op("matmul", "mm1", {v, w}, DType::kF32, s);
  auto idx = m.constant("idx", DType::kI64, {3});
  for (int i = 0; i < 2; ++i) {
    v = m.op("index_select", "island" + std::to_string(i), {v, idx}, DType::kF32, s, {{"axis", int64_t{1}}});
  }
  v = m.op("matmul", "mm2", {v, w}, DType::kF32, s);
  v = m.op("matmul", "mm3", {v, w}, DType::kF32, s);
  m.g.mark_output(v);
  PartitionOptions o = testing_util::builtin_options();
  o.prefer = Prefer::kAuto;
  o.min_partition_size = 1;
  Result<Partitioned> p = partition_with_trace(m.g, o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(named(m.g, p->result), (std::vector<NamedRegion>{{kVgfId, {"mm0", "mm1"}},
                                                             {kVulkanId, {"island0", "island1"}},
                                                             {kVgfId, {"mm2", "mm3"}}}));
  ASSERT_GE(p->trace.candidates.size(), 2u);
  EXPECT_EQ(p->trace.candidates[0].first, "vgf_first");
  EXPECT_DOUBLE_EQ(p->trace.candidates[0].second, 29.0);
  EXPECT_EQ(p->trace.candidates[1].first, "vulkan_first");
  EXPECT_DOUBLE_EQ(p->trace.candidates[1].second, 37.0);
}

}  // namespace
}  // namespace gpuu::partition

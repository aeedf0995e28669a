// The partition C API through gpuu.h and libgpuu.so alone: the RFC model built
// with the graph-builder API and partitioned vgf_first, options, read-back,
// the explain report, and refusals that name what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gpuu.h"
#include "support/rfc_model_capi.h"

namespace {

gpuu_partition_deny deny_of(const char* backend, const char* op) {
  gpuu_partition_deny d;
  gpuu_partition_deny_init(&d);
  d.backend = backend;
  d.op = op;
  return d;
}

gpuu_partition_pin pin_of(const char* node, const char* backend) {
  gpuu_partition_pin p;
  gpuu_partition_pin_init(&p);
  p.node = node;
  p.backend = backend;
  return p;
}

gpuu_partition_op_cost op_cost(const char* op, const char* backend, double cost) {
  gpuu_partition_op_cost c;
  gpuu_partition_op_cost_init(&c);
  c.op = op;
  c.backend = backend;
  c.cost = cost;
  return c;
}

class PartitionCapi : public testing::Test {
 protected:
  void SetUp() override {
    graph_ = gpuu_test_build_rfc_model();
    ASSERT_NE(graph_, nullptr) << gpuu_last_error();
    gpuu_partition_options_init(&options_);
  }
  void TearDown() override {
    gpuu_partition_destroy(partition_);
    gpuu_graph_destroy(graph_);
  }

  gpuu_status run() {
    gpuu_partition_destroy(partition_);
    partition_ = nullptr;
    return gpuu_graph_partition(graph_, &options_, &partition_);
  }

  // Each region as "Backend[node,node,...]".
  std::vector<std::string> regions() {
    std::vector<std::string> out;
    for (size_t r = 0; r < gpuu_partition_region_count(partition_); ++r) {
      const char* b = nullptr;
      size_t count = 0;
      EXPECT_EQ(gpuu_partition_region_backend(partition_, r, &b), GPUU_OK);
      EXPECT_EQ(gpuu_partition_region_node_count(partition_, r, &count), GPUU_OK);
      std::string text = std::string(b) + "[";
      for (size_t i = 0; i < count; ++i) {
        int32_t node = -1;
        EXPECT_EQ(gpuu_partition_region_node(partition_, r, i, &node), GPUU_OK);
        text += (i ? "," : "") + std::string(gpuu_graph_node_name(graph_, node));
        const char* nb = nullptr;
        size_t nr = 99;
        EXPECT_EQ(gpuu_partition_node_backend(partition_, node, &nb, &nr), GPUU_OK);
        EXPECT_EQ(nb, b) << "the id is the partition's own string";
        EXPECT_EQ(nr, r);
      }
      out.push_back(text + "]");
    }
    return out;
  }

  void expect_invalid(gpuu_status s, const std::string& fragment) {
    EXPECT_EQ(s, GPUU_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gpuu_last_error()).find(fragment), std::string::npos) << gpuu_last_error();
  }

  gpuu_graph* graph_ = nullptr;
  gpuu_partition* partition_ = nullptr;
  gpuu_partition_options options_;
};

TEST_F(PartitionCapi, RfcModelVgfFirstGivesVgfVulkanVgf) {
  options_.prefer = GPUU_PREFER_VGF_FIRST;
  options_.min_partition_size = 1;
  ASSERT_EQ(run(), GPUU_OK) << gpuu_last_error();
  std::vector<std::string> expected = {"VgfBackend[transpose_0,avg_pool2d_0]",
                                       "VulkanBackend[index_select_0,gather_0,index_select_1]",
                                       "VgfBackend[sin_0,cos_0,reciprocal_0,mul_0,transpose_1]"};
  EXPECT_EQ(regions(), expected);
  std::string explain = gpuu_partition_explain_json(partition_);
  EXPECT_NE(explain.find("\"policy\":\"vgf_first\""), std::string::npos) << explain;
  EXPECT_NE(explain.find("TOSA 1.0 has no i64 tensors (input 1 of gather_0 is i64)"), std::string::npos);
}

TEST_F(PartitionCapi, OptionDefaultsFollowTheRfc) {
  EXPECT_EQ(options_.struct_size, sizeof(gpuu_partition_options));
  EXPECT_EQ(options_.prefer, GPUU_PREFER_AUTO);
  EXPECT_EQ(options_.min_partition_size, 3);
  EXPECT_EQ(options_.retry_pruned, 0);
  EXPECT_EQ(options_.deny, nullptr);
  EXPECT_EQ(options_.pins, nullptr);
  EXPECT_EQ(options_.op_costs, nullptr);
  EXPECT_EQ(options_.backends, nullptr);
  EXPECT_EQ(options_.backend_count, 0u);
  EXPECT_EQ(options_.gpu_crossing_cost, 3.0);
  // NULL options mean these defaults: auto keeps the small RFC model on Vulkan.
  ASSERT_EQ(gpuu_graph_partition(graph_, nullptr, &partition_), GPUU_OK) << gpuu_last_error();
  EXPECT_EQ(regions(), std::vector<std::string>{"VulkanBackend[transpose_0,avg_pool2d_0,index_select_0,gather_0,"
                                                "index_select_1,sin_0,cos_0,reciprocal_0,mul_0,transpose_1]"});
}

TEST_F(PartitionCapi, CheaperHandOffsMakeAutoSplitTheModel) {
  options_.min_partition_size = 1;
  options_.gpu_crossing_cost = 0.5;
  options_.gpu_region_cost = 0.0;
  ASSERT_EQ(run(), GPUU_OK) << gpuu_last_error();
  ASSERT_EQ(gpuu_partition_region_count(partition_), 3u);
  std::string explain = gpuu_partition_explain_json(partition_);
  EXPECT_NE(explain.find("\"chosen\":\"vgf_first\""), std::string::npos) << explain;
}

TEST_F(PartitionCapi, PerOpCostsSteerAuto) {
  // Make every transcendental op very cheap on VGF: the suffix moves there.
  options_.min_partition_size = 1;
  std::vector<gpuu_partition_op_cost> costs;
  for (const char* op : {"sin", "cos", "reciprocal"}) {
    costs.push_back(op_cost(op, "VgfBackend", 0.0));
    costs.push_back(op_cost(op, "VulkanBackend", 9.0));
    costs.push_back(op_cost(op, "CpuFallback", 50.0));
  }
  options_.op_costs = costs.data();
  options_.op_cost_count = costs.size();
  ASSERT_EQ(run(), GPUU_OK) << gpuu_last_error();
  const char* b = nullptr;
  int32_t sin_node = 5;
  ASSERT_STREQ(gpuu_graph_node_name(graph_, sin_node), "sin_0");
  ASSERT_EQ(gpuu_partition_node_backend(partition_, sin_node, &b, nullptr), GPUU_OK);
  EXPECT_STREQ(b, "VgfBackend");
}

TEST_F(PartitionCapi, DefaultCostPerBackendIsOpStar) {
  // VGF made dear for every op: auto keeps everything on Vulkan even when
  // hand-offs are cheap enough to split the model otherwise.
  options_.min_partition_size = 1;
  options_.gpu_crossing_cost = 0.5;
  options_.gpu_region_cost = 0.0;
  gpuu_partition_op_cost costs[1] = {op_cost("*", "VgfBackend", 50.0)};
  options_.op_costs = costs;
  options_.op_cost_count = 1;
  ASSERT_EQ(run(), GPUU_OK) << gpuu_last_error();
  EXPECT_EQ(gpuu_partition_region_count(partition_), 1u);
  std::string explain = gpuu_partition_explain_json(partition_);
  EXPECT_NE(explain.find("\"op_cost\":{\"VgfBackend\":50,"), std::string::npos) << explain;
}

TEST_F(PartitionCapi, AnExplicitBackendListIsExactlyThoseBackends) {
  options_.min_partition_size = 1;
  const char* only_vgf[1] = {"VgfBackend"};
  options_.backends = only_vgf;
  options_.backend_count = 1;
  ASSERT_EQ(run(), GPUU_OK) << gpuu_last_error();
  std::vector<std::string> expected = {"VgfBackend[transpose_0,avg_pool2d_0]",
                                       "CpuFallback[index_select_0,gather_0,index_select_1]",
                                       "VgfBackend[sin_0,cos_0,reciprocal_0,mul_0,transpose_1]"};
  EXPECT_EQ(regions(), expected);
  std::string explain = gpuu_partition_explain_json(partition_);
  EXPECT_NE(explain.find("\"strategy\":\"backends\""), std::string::npos) << explain;
}

TEST_F(PartitionCapi, UnknownBackendIdsAreRefusedByNameAllAtOnce) {
  gpuu_partition_deny deny[1] = {deny_of("TpuBackend", "sin")};
  gpuu_partition_pin pins[1] = {pin_of("gather_0", "NpuBackend")};
  gpuu_partition_op_cost costs[1] = {op_cost("*", "DspBackend", 1.0)};
  const char* list[2] = {"VulkanBackend", "GpuBackend"};
  options_.deny = deny;
  options_.deny_count = 1;
  options_.pins = pins;
  options_.pin_count = 1;
  options_.op_costs = costs;
  options_.op_cost_count = 1;
  options_.backends = list;
  options_.backend_count = 2;
  EXPECT_EQ(run(), GPUU_ERROR_INVALID_ARGUMENT);
  std::string message = gpuu_last_error();
  for (const char* id : {"'TpuBackend'", "'NpuBackend'", "'DspBackend'", "'GpuBackend'"}) {
    EXPECT_NE(message.find(id), std::string::npos) << id << " in " << message;
  }
  EXPECT_NE(message.find("registered: VulkanBackend, VgfBackend, CpuFallback"), std::string::npos) << message;
  EXPECT_EQ(partition_, nullptr);
}

TEST_F(PartitionCapi, ArraysOfANewerCallerAreReadWithTheirStride) {
  // A caller built against a later header whose gpuu_partition_deny grew a
  // field: elements are read at its struct_size, the extra field ignored.
  struct NewerDeny {
    gpuu_partition_deny deny;
    uint64_t future_field;
  };
  NewerDeny deny[2] = {{deny_of("VgfBackend", "sin"), 1}, {deny_of("VgfBackend", "cos"), 2}};
  for (NewerDeny& d : deny) d.deny.struct_size = sizeof(NewerDeny);
  options_.prefer = GPUU_PREFER_VGF_FIRST;
  options_.min_partition_size = 1;
  options_.deny = &deny[0].deny;
  options_.deny_count = 2;
  ASSERT_EQ(run(), GPUU_OK) << gpuu_last_error();
  for (int32_t node : {5, 6}) {  // sin_0, cos_0
    const char* b = nullptr;
    ASSERT_EQ(gpuu_partition_node_backend(partition_, node, &b, nullptr), GPUU_OK);
    EXPECT_STREQ(b, "VulkanBackend") << gpuu_graph_node_name(graph_, node);
  }
}

TEST_F(PartitionCapi, DenyAndPinReachTheEngine) {
  options_.prefer = GPUU_PREFER_VGF_FIRST;
  options_.min_partition_size = 1;
  gpuu_partition_deny deny[1] = {deny_of("VgfBackend", "sin")};
  gpuu_partition_pin pins[1] = {pin_of("gather_0", "CpuFallback")};
  options_.deny = deny;
  options_.deny_count = 1;
  options_.pins = pins;
  options_.pin_count = 1;
  ASSERT_EQ(run(), GPUU_OK) << gpuu_last_error();
  std::vector<std::string> expected = {"VgfBackend[transpose_0,avg_pool2d_0]", "VulkanBackend[index_select_0]",
                                       "CpuFallback[gather_0]", "VulkanBackend[index_select_1,sin_0]",
                                       "VgfBackend[cos_0,reciprocal_0,mul_0,transpose_1]"};
  EXPECT_EQ(regions(), expected);
  std::string explain = gpuu_partition_explain_json(partition_);
  EXPECT_NE(explain.find("\"VgfBackend\":\"denied by user\""), std::string::npos);
  EXPECT_NE(explain.find("\"VulkanBackend\":\"pinned to CpuFallback by user\""), std::string::npos);
}

TEST_F(PartitionCapi, RetryKeepsTheIslandOnTheCpuAndSaysWhy) {
  options_.prefer = GPUU_PREFER_VGF_FIRST;
  options_.min_partition_size = 4;
  options_.retry_pruned = 1;
  ASSERT_EQ(run(), GPUU_OK) << gpuu_last_error();
  std::vector<std::string> expected = {
      "CpuFallback[transpose_0,avg_pool2d_0,index_select_0,gather_0,index_select_1]",
      "VgfBackend[sin_0,cos_0,reciprocal_0,mul_0,transpose_1]"};
  EXPECT_EQ(regions(), expected);
  std::string explain = gpuu_partition_explain_json(partition_);
  EXPECT_NE(explain.find("\"retry\":\"offered to VgfBackend after pruning: unsupported: TOSA 1.0 has no i64 tensors "
                         "(input 1 of gather_0 is i64)\""),
            std::string::npos)
      << explain;
}

TEST_F(PartitionCapi, ThePartitionOutlivesItsGraph) {
  options_.prefer = GPUU_PREFER_VULKAN_FIRST;
  ASSERT_EQ(run(), GPUU_OK);
  gpuu_graph_destroy(graph_);
  graph_ = nullptr;
  EXPECT_EQ(gpuu_partition_region_count(partition_), 1u);
  size_t count = 0;
  EXPECT_EQ(gpuu_partition_region_node_count(partition_, 0, &count), GPUU_OK);
  EXPECT_EQ(count, 10u);
  EXPECT_NE(std::string(gpuu_partition_explain_json(partition_)).find("transpose_1"), std::string::npos);
}

TEST_F(PartitionCapi, RefusesBadArguments) {
  expect_invalid(gpuu_graph_partition(graph_, &options_, nullptr), "`out` is NULL");
  partition_ = reinterpret_cast<gpuu_partition*>(&options_);  // must be overwritten with NULL
  expect_invalid(gpuu_graph_partition(nullptr, &options_, &partition_), "`graph` is NULL");
  EXPECT_EQ(partition_, nullptr);

  gpuu_partition_options bad = options_;
  bad.struct_size = 0;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "struct_size");
  bad = options_;
  bad.prefer = static_cast<gpuu_prefer>(7);
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "unknown prefer value 7");
  bad = options_;
  bad.min_partition_size = 0;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "min_partition_size is 0");
  bad = options_;
  bad.deny_count = 2;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "deny: NULL array with a nonzero count");
  gpuu_partition_deny deny_cpu[1] = {deny_of("CpuFallback", "sin")};
  bad = options_;
  bad.deny = deny_cpu;
  bad.deny_count = 1;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "cannot be denied");
  gpuu_partition_deny deny_null[1] = {deny_of(nullptr, "sin")};
  bad.deny = deny_null;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "deny[0].backend is NULL");
  gpuu_partition_deny deny_unsized[1] = {deny_of("VgfBackend", "sin")};
  deny_unsized[0].struct_size = 0;
  bad.deny = deny_unsized;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "deny: element 0 has struct_size 0");
  gpuu_partition_pin pin_missing[1] = {pin_of("no_such_node", "CpuFallback")};
  bad = options_;
  bad.pins = pin_missing;
  bad.pin_count = 1;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "no node is named 'no_such_node'");
  gpuu_partition_pin pin_vgf[1] = {pin_of("gather_0", "VgfBackend")};
  bad.pins = pin_vgf;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "cannot pin 'gather_0' to VgfBackend");
  gpuu_partition_pin pin_null[1] = {pin_of(nullptr, "VgfBackend")};
  bad.pins = pin_null;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "pins[0].node is NULL");
  bad = options_;
  bad.cpu_crossing_cost = NAN;
  expect_invalid(gpuu_graph_partition(graph_, &bad, &partition_), "cpu_crossing");
  EXPECT_EQ(partition_, nullptr);

  // Getters refuse what is out of range and leave the partition usable.
  ASSERT_EQ(run(), GPUU_OK);
  const char* b = nullptr;
  size_t n;
  int32_t node;
  expect_invalid(gpuu_partition_region_backend(partition_, 99, &b), "region 99 is out of range");
  expect_invalid(gpuu_partition_region_node_count(partition_, 99, &n), "region 99 is out of range");
  expect_invalid(gpuu_partition_region_node(partition_, 0, 9999, &node), "index 9999 is out of range");
  expect_invalid(gpuu_partition_node_backend(partition_, -1, &b, nullptr), "node -1 is out of range");
  expect_invalid(gpuu_partition_node_backend(partition_, 0, nullptr, nullptr), "NULL");
  EXPECT_EQ(gpuu_partition_region_backend(partition_, 0, &b), GPUU_OK);
  EXPECT_EQ(gpuu_partition_region_count(nullptr), 0u);
  EXPECT_EQ(gpuu_partition_explain_json(nullptr), nullptr);
  gpuu_partition_destroy(nullptr);
  gpuu_partition_options_init_sized(nullptr, sizeof(gpuu_partition_options));
}

}  // namespace

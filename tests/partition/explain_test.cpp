// The explain report: valid JSON (read back with gpuu's own JSON reader),
// every node named with its backend, region and reasons, deterministic.
#include <gtest/gtest.h>

#include "base/json.h"
#include "partition/explain.h"
#include "partition_test_util.h"

namespace gpuu::partition {
namespace {

using testing_util::GraphMaker;
using testing_util::rfc_model;

JsonValue explain(const GraphMaker& m, const PartitionOptions& o) {
  Result<Partitioned> p = partition_with_trace(m.g, o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (!p.ok()) return JsonValue();
  std::string text = explain_json(m.g, o, *p);
  EXPECT_EQ(text, explain_json(m.g, o, *partition_with_trace(m.g, o))) << "not deterministic";
  Result<JsonValue> doc = parse_json(text);
  EXPECT_TRUE(doc.ok()) << doc.status().message() << "\n" << text;
  return doc.ok() ? *doc : JsonValue();
}

const JsonValue& node_entry(const JsonValue& doc, const std::string& name) {
  static const JsonValue kMissing;
  const JsonValue* nodes = doc.find("nodes");
  if (!nodes) return kMissing;
  for (const JsonValue& n : nodes->as_array()) {
    const JsonValue* nm = n.find("name");
    if (nm && nm->as_string() == name) return n;
  }
  return kMissing;
}

std::string text_at(const JsonValue& v, std::initializer_list<const char*> path) {
  const JsonValue* cur = &v;
  for (const char* key : path) {
    cur = cur->find(key);
    if (!cur) return "<missing>";
  }
  return cur->as_string();
}

TEST(Explain, RfcVgfFirstNamesEveryNodeWithBackendRegionAndReasons) {
  GraphMaker m = rfc_model();
  PartitionOptions o = testing_util::builtin_options();
  o.prefer = Prefer::kVgfFirst;
  o.min_partition_size = 1;
  JsonValue doc = explain(m, o);
  EXPECT_EQ(text_at(doc, {"policy"}), "vgf_first");
  EXPECT_EQ(text_at(doc, {"format"}), "gpuu.partition.explain/1");
  EXPECT_EQ(doc.find("options")->find("min_partition_size")->as_integer(), 1);
  EXPECT_FALSE(doc.find("options")->find("retry_pruned")->as_bool());
  EXPECT_EQ(doc.find("auto"), nullptr) << "candidates are reported for auto only";

  const auto& nodes = doc.find("nodes")->as_array();
  ASSERT_EQ(nodes.size(), m.g.nodes().size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(nodes[i].find("name")->as_string(), m.g.nodes()[i].name);
    EXPECT_EQ(nodes[i].find("op")->as_string(), m.g.nodes()[i].op);
    EXPECT_EQ(nodes[i].find("why_not")->as_object().size(), 2u) << "one reason per other backend";
  }
  const JsonValue& gather = node_entry(doc, "gather_0");
  EXPECT_EQ(text_at(gather, {"backend"}), "VulkanBackend");
  EXPECT_EQ(gather.find("region")->as_integer(), 1);
  EXPECT_EQ(text_at(gather, {"why_not", "VgfBackend"}),
            "unsupported: TOSA 1.0 has no i64 tensors (input 1 of gather_0 is i64)");
  EXPECT_EQ(text_at(gather, {"why_not", "CpuFallback"}), "delegated to VulkanBackend");
  const JsonValue& sin = node_entry(doc, "sin_0");
  EXPECT_EQ(text_at(sin, {"backend"}), "VgfBackend");
  EXPECT_EQ(text_at(sin, {"why_not", "VulkanBackend"}), "taken first by VgfBackend (vgf_first)");

  const auto& regions = doc.find("regions")->as_array();
  ASSERT_EQ(regions.size(), 3u);
  EXPECT_EQ(text_at(regions[1], {"backend"}), "VulkanBackend");
  EXPECT_EQ(regions[1].find("node_count")->as_integer(), 3);
  EXPECT_EQ(text_at(regions[1], {"first_node"}), "index_select_0");
  EXPECT_EQ(text_at(regions[1], {"last_node"}), "index_select_1");
  EXPECT_EQ(regions[1].find("inputs")->as_integer(), 1);   // avg_pool2d_0's output (constants excluded)
  EXPECT_EQ(regions[1].find("outputs")->as_integer(), 1);  // index_select_1's output, read by sin and cos
  EXPECT_EQ(regions[2].find("outputs")->as_integer(), 1);  // the graph output
  const JsonValue* summary = doc.find("summary");
  EXPECT_EQ(summary->find("regions")->as_integer(), 3);
  EXPECT_EQ(summary->find("backends")->find("VgfBackend")->find("nodes")->as_integer(), 7);
  EXPECT_EQ(summary->find("backends")->find("VgfBackend")->find("regions")->as_integer(), 2);
  EXPECT_DOUBLE_EQ(doc.find("estimated_cost")->as_number(), 22.0);
}

TEST(Explain, RetrySaysTheIslandWasOfferedToVgfAndWhyItStayedOnTheCpu) {
  GraphMaker m = rfc_model();
  PartitionOptions o = testing_util::builtin_options();
  o.prefer = Prefer::kVgfFirst;
  o.min_partition_size = 4;
  o.retry_pruned = true;
  JsonValue doc = explain(m, o);
  for (const char* name : {"index_select_0", "gather_0", "index_select_1"}) {
    const JsonValue& n = node_entry(doc, name);
    EXPECT_EQ(text_at(n, {"backend"}), "CpuFallback") << name;
    EXPECT_EQ(text_at(n, {"why_not", "VulkanBackend"}), "pruned: region of 3 nodes < min_partition_size 4") << name;
    EXPECT_EQ(text_at(n, {"retry"}), std::string("offered to VgfBackend after pruning: unsupported: TOSA 1.0 has no "
                                                 "i64 tensors (input 1 of ") + name + " is i64)");
  }
  EXPECT_EQ(text_at(node_entry(doc, "transpose_0"), {"retry"}),
            "offered to VulkanBackend after pruning: pruned on retry: region of 2 nodes < min_partition_size 4");
  EXPECT_EQ(text_at(node_entry(doc, "sin_0"), {"retry"}), "<missing>");
  EXPECT_TRUE(doc.find("options")->find("retry_pruned")->as_bool());
}

TEST(Explain, AutoListsItsCandidatesAndTheChoice) {
  GraphMaker m = rfc_model();
  PartitionOptions o = testing_util::builtin_options();
  o.min_partition_size = 1;
  JsonValue doc = explain(m, o);
  EXPECT_EQ(text_at(doc, {"policy"}), "auto");
  EXPECT_EQ(text_at(doc, {"auto", "chosen"}), "vulkan_first");
  const auto& candidates = doc.find("auto")->find("candidates")->as_array();
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(text_at(candidates[0], {"strategy"}), "vgf_first");
  EXPECT_DOUBLE_EQ(candidates[0].find("estimated_cost")->as_number(), 22.0);
  EXPECT_DOUBLE_EQ(candidates[1].find("estimated_cost")->as_number(), 21.0);
  EXPECT_DOUBLE_EQ(doc.find("estimated_cost")->as_number(), 21.0);
  const JsonValue* cost = doc.find("options")->find("cost_model");
  EXPECT_DOUBLE_EQ(cost->find("op_cost")->find("VulkanBackend")->as_number(), 2.0);
  EXPECT_DOUBLE_EQ(cost->find("per_op")->find("conv2d")->find("CpuFallback")->as_number(), 100.0);
}

TEST(Explain, RecordsDenialsAndPinsWithTheirReasons) {
  GraphMaker m = rfc_model();
  PartitionOptions o = testing_util::builtin_options();
  o.prefer = Prefer::kVgfFirst;
  o.min_partition_size = 1;
  ASSERT_TRUE(o.capabilities.deny(kVgfId, "sin").ok());
  ASSERT_TRUE(o.capabilities.pin("transpose_1", kCpuId).ok());
  JsonValue doc = explain(m, o);
  const auto& deny = doc.find("options")->find("deny")->as_array();
  ASSERT_EQ(deny.size(), 1u);
  EXPECT_EQ(text_at(deny[0], {"backend"}), "VgfBackend");
  EXPECT_EQ(text_at(deny[0], {"op"}), "sin");
  const auto& pins = doc.find("options")->find("pins")->as_array();
  ASSERT_EQ(pins.size(), 1u);
  EXPECT_EQ(text_at(pins[0], {"node"}), "transpose_1");
  EXPECT_EQ(text_at(node_entry(doc, "sin_0"), {"why_not", "VgfBackend"}), "denied by user");
  EXPECT_EQ(text_at(node_entry(doc, "transpose_1"), {"why_not", "VgfBackend"}), "pinned to CpuFallback by user");
  EXPECT_EQ(text_at(node_entry(doc, "transpose_1"), {"backend"}), "CpuFallback");
}

TEST(Explain, EscapesNamesThatNeedIt) {
  GraphMaker m;
  auto x = m.input("x", graph::DType::kF32, {4});
  auto a = m.op("abs", "we\"ird\\name\n", {x}, graph::DType::kF32, {4});
  m.g.mark_output(a);
  PartitionOptions o = testing_util::builtin_options();
  o.min_partition_size = 1;
  JsonValue doc = explain(m, o);
  EXPECT_EQ(doc.find("nodes")->as_array()[0].find("name")->as_string(), "we\"ird\\name\n");
}

}  // namespace
}  // namespace gpuu::partition

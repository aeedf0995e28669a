// A third GPU backend, declared here and nowhere else, is partitioned like
// the built-in ones: policies, explicit lists, auto, costs keyed by its id and
// the explain report all reach it without any edit to the partition code.
#include <gtest/gtest.h>

#include "base/json.h"
#include "partition/explain.h"
#include "partition_test_util.h"

namespace gpuu::partition {
namespace {

using namespace testing_util;

constexpr const char* kAddMulId = "AddMulBackend";

// Takes add and mul on f32 tensors, nothing else.
class AddMulCapability final : public BackendCapability {
 public:
  const char* id() const override { return kAddMulId; }
  double default_cost() const override { return 3.0; }
  Verdict check(const graph::Graph& graph, graph::NodeId node) const override {
    const graph::Node& n = graph.node(node);
    Verdict v;
    if (n.op != "add" && n.op != "mul") {
      v.kind = Verdict::Kind::kUnknownOp;
      return v;
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      DType d = graph.value(n.inputs[i]).dtype;
      if (d != DType::kF32) {
        v.kind = Verdict::Kind::kOpDtype;
        v.slot = static_cast<int32_t>(i);
        v.dtype = d;
        return v;
      }
    }
    return v;
  }
  std::string describe(const graph::Graph& graph, graph::NodeId node, const Verdict& v) const override {
    const graph::Node& n = graph.node(node);
    if (v.kind == Verdict::Kind::kUnknownOp) return "AddMulBackend takes only add and mul (" + n.name + " is " + n.op + ")";
    return std::string("AddMulBackend takes f32 only (input ") + std::to_string(v.slot) + " of " + n.name + " is " +
           graph::dtype_name(v.dtype) + ")";
  }
  std::vector<graph::DType> declared_dtypes(std::string_view op) const override {
    if (op == "add" || op == "mul") return {DType::kF32};
    return {};
  }
};

const AddMulCapability& add_mul() {
  static const AddMulCapability capability;
  return capability;
}

// x -> add_0 -> mul_0 -> add_1 -> sin_0 -> mul_1 -> add_2 -> mul_2
GraphMaker chain() {
  GraphMaker m;
  Shape s = {2, 8};
  ValueId x = m.input("x", DType::kF32, s);
  ValueId v = m.op("add", "add_0", {x, x}, DType::kF32, s);
  v = m.op("mul", "mul_0", {v, x}, DType::kF32, s);
  v = m.op("add", "add_1", {v, x}, DType::kF32, s);
  v = m.op("sin", "sin_0", {v}, DType::kF32, s);
  v = m.op("mul", "mul_1", {v, x}, DType::kF32, s);
  v = m.op("add", "add_2", {v, x}, DType::kF32, s);
  v = m.op("mul", "mul_2", {v, x}, DType::kF32, s);
  m.g.mark_output(v);
  return m;
}

PartitionOptions three_backends(Prefer prefer, int64_t min_size) {
  PartitionOptions o;
  // Registration order: the built-in two, then the new one.
  o.capabilities = Capabilities({&vulkan::vulkan_capability(), &vgf::vgf_capability(), &add_mul()});
  o.prefer = prefer;
  o.min_partition_size = min_size;
  return o;
}

std::vector<std::string> regions_of(const GraphMaker& m, const PartitionOptions& o) {
  Result<PartitionResult> r = partition(m.g, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return {};
  EXPECT_EQ(check_invariants(m.g, o, *r, true), "");
  std::vector<std::string> out;
  for (const NamedRegion& nr : named(m.g, *r)) {
    std::string text = nr.backend + "[";
    for (size_t i = 0; i < nr.nodes.size(); ++i) text += (i ? "," : "") + nr.nodes[i];
    out.push_back(text + "]");
  }
  return out;
}

TEST(OpenBackends, AnExplicitListPutsTheNewBackendFirst) {
  GraphMaker m = chain();
  PartitionOptions o = three_backends(Prefer::kVgfFirst, 1);
  o.backends = {kAddMulId, kVgfId};
  std::vector<std::string> expected = {"AddMulBackend[add_0,mul_0,add_1]", "VgfBackend[sin_0]",
                                       "AddMulBackend[mul_1,add_2,mul_2]"};
  EXPECT_EQ(regions_of(m, o), expected);
  // A list without it never gives it a region.
  o.backends = {kVulkanId};
  EXPECT_EQ(regions_of(m, o), std::vector<std::string>{"VulkanBackend[add_0,mul_0,add_1,sin_0,mul_1,add_2,mul_2]"});
}

TEST(OpenBackends, VgfFirstOffersItWhatTheBuiltInsAreDenied) {
  GraphMaker m = chain();
  PartitionOptions o = three_backends(Prefer::kVgfFirst, 1);
  ASSERT_TRUE(o.capabilities.deny(kVgfId, "mul").ok());
  ASSERT_TRUE(o.capabilities.deny(kVulkanId, "mul").ok());
  Result<Partitioned> p = partition_with_trace(m.g, o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->trace.order, (std::vector<std::string>{kVgfId, kVulkanId, kAddMulId}));
  for (const char* mul : {"mul_0", "mul_1", "mul_2"}) {
    const Region& r = p->result.regions[static_cast<size_t>(p->result.region_of_node[m.node_id(mul)])];
    EXPECT_EQ(r.backend, kAddMulId) << mul;
  }
  // The explain report names it, with its own reasons.
  Result<JsonValue> doc = parse_json(explain_json(m.g, o, *p));
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const JsonValue* summary = doc->find("summary")->find("backends")->find(kAddMulId);
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ(summary->find("nodes")->as_number(), 3.0);
  EXPECT_EQ(why_not(m.g, o, *p, m.node_id("sin_0"), kAddMulId),
            "unsupported: AddMulBackend takes only add and mul (sin_0 is sin)");
  EXPECT_EQ(why_not(m.g, o, *p, m.node_id("add_0"), kAddMulId), "taken first by VgfBackend (vgf_first)");
  EXPECT_EQ(why_not(m.g, o, *p, m.node_id("mul_0"), kVgfId), "denied by user");
}

TEST(OpenBackends, AutoWeighsItByCostsKeyedByItsId) {
  GraphMaker m = chain();
  PartitionOptions o = three_backends(Prefer::kAuto, 1);
  // add and mul far cheaper on it than on the built-ins, whose hand-offs to
  // it then pay for themselves.
  o.cost.op_cost[kAddMulId] = 0.1;
  o.cost.op_cost[kVgfId] = 5.0;
  o.cost.op_cost[kVulkanId] = 5.0;
  Result<Partitioned> p = partition_with_trace(m.g, o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  std::vector<std::string> names;
  for (const auto& c : p->trace.candidates) names.push_back(c.first);
  EXPECT_EQ(names, (std::vector<std::string>{"vgf_first", "vulkan_first", "AddMulBackend_first", "cost_labelling"}));
  EXPECT_EQ(p->result.regions[static_cast<size_t>(p->result.region_of_node[m.node_id("add_0")])].backend, kAddMulId);
  EXPECT_EQ(check_invariants(m.g, o, p->result, true), "");

  // Its default cost (3, declared by the capability) loses to VGF's 1.
  PartitionOptions plain = three_backends(Prefer::kAuto, 1);
  EXPECT_EQ(regions_of(m, plain), std::vector<std::string>{"VgfBackend[add_0,mul_0,add_1,sin_0,mul_1,add_2,mul_2]"});
  // A per-op cost by its id moves only that op's preference.
  o.cost.per_op["add"][kAddMulId] = 50.0;
  o.cost.per_op["mul"][kAddMulId] = 50.0;
  p = partition_with_trace(m.g, o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  for (const Region& r : p->result.regions) EXPECT_NE(r.backend, kAddMulId);
}

TEST(OpenBackends, RetryOffersPrunedNodesToTheNextBackendsInTheList) {
  GraphMaker m;
  Shape s = {4};
  ValueId x = m.input("x", DType::kF32, s);
  ValueId v = m.op("add", "add_0", {x, x}, DType::kF32, s);
  v = m.op("mul", "mul_0", {v, x}, DType::kF32, s);
  v = m.op("sin", "sin_0", {v}, DType::kF32, s);
  v = m.op("add", "add_1", {v, x}, DType::kF32, s);
  v = m.op("mul", "mul_1", {v, x}, DType::kF32, s);
  v = m.op("add", "add_2", {v, x}, DType::kF32, s);
  m.g.mark_output(v);
  PartitionOptions o = three_backends(Prefer::kAuto, 3);
  o.backends = {kAddMulId, kVulkanId};
  o.retry_pruned = true;
  Result<Partitioned> p = partition_with_trace(m.g, o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(check_invariants(m.g, o, p->result, true), "");
  // AddMul's pair is pruned and offered to Vulkan, which prunes it again;
  // Vulkan's lone sin is offered back to AddMul, which cannot take it.
  std::vector<NamedRegion> expected = {{kCpuId, {"add_0", "mul_0", "sin_0"}},
                                       {kAddMulId, {"add_1", "mul_1", "add_2"}}};
  EXPECT_EQ(named(m.g, p->result), expected);
  Result<JsonValue> doc = parse_json(explain_json(m.g, o, *p));
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  std::string add_retry, sin_retry;
  for (const JsonValue& n : doc->find("nodes")->as_array()) {
    if (n.find("name")->as_string() == "add_0") add_retry = n.find("retry")->as_string();
    if (n.find("name")->as_string() == "sin_0") sin_retry = n.find("retry")->as_string();
  }
  EXPECT_EQ(add_retry, "offered to VulkanBackend after pruning: pruned on retry: region of 2 nodes < "
                       "min_partition_size 3");
  EXPECT_EQ(sin_retry, "offered to AddMulBackend after pruning: unsupported: AddMulBackend takes only add and mul "
                       "(sin_0 is sin)");
}

TEST(OpenBackends, ANewBackendAloneNeedsNoBuiltIn) {
  // Only the new backend is registered: the default cost table's VGF and
  // Vulkan entries go unused rather than refused.
  GraphMaker m = chain();
  PartitionOptions o;
  o.capabilities = Capabilities({&add_mul()});
  o.prefer = Prefer::kVgfFirst;
  o.min_partition_size = 1;
  std::vector<std::string> expected = {"AddMulBackend[add_0,mul_0,add_1]", "CpuFallback[sin_0]",
                                       "AddMulBackend[mul_1,add_2,mul_2]"};
  EXPECT_EQ(regions_of(m, o), expected);
  o.prefer = Prefer::kAuto;
  EXPECT_TRUE(partition(m.g, o).ok());
}

TEST(OpenBackends, UnknownIdsAreRefusedByNameListingTheRegisteredOnes) {
  GraphMaker m = chain();
  PartitionOptions o = three_backends(Prefer::kAuto, 1);
  ASSERT_TRUE(o.capabilities.deny("NpuBackend", "add").ok());
  ASSERT_TRUE(o.capabilities.pin("sin_0", "TpuBackend").ok());
  o.backends = {kAddMulId, "DspBackend"};
  o.cost.op_cost["FpgaBackend"] = 1.0;
  Result<PartitionResult> r = partition(m.g, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = r.status().message();
  for (const char* id : {"'NpuBackend'", "'TpuBackend'", "'DspBackend'", "'FpgaBackend'"}) {
    EXPECT_NE(message.find(id), std::string::npos) << id << " in " << message;
  }
  EXPECT_NE(message.find("registered: VulkanBackend, VgfBackend, AddMulBackend, CpuFallback"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace gpuu::partition

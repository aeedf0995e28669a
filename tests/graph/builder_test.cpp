// The checked builder: add_op infers, names and appends, or refuses and leaves
// the graph exactly as it was.
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "graph/op_registry.h"
#include "graph/verifier.h"

namespace gpuu::graph {
namespace {

using Ints = std::vector<int64_t>;

Blob zeros(size_t n) { return Blob::take(std::vector<uint8_t>(n, 0)); }

TEST(Builder, AddOpNamesOutputsAndStoresResolvedAttributes) {
  Graph g;
  ValueId x = *add_graph_input(g, "x", DType::kF32, {1, 3, 8, 8});
  Result<std::vector<ValueId>> pool = add_op(g, "avg_pool2d", "pool", {x}, {{"kernel", Ints{2, 2}}});
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  ASSERT_EQ(pool->size(), 1u);
  const Value& out = g.value((*pool)[0]);
  EXPECT_EQ(out.name, "pool:0");
  EXPECT_EQ(out.shape, (Shape{1, 3, 4, 4}));
  EXPECT_EQ(out.producer, 0);
  const Node& node = g.node(0);
  EXPECT_EQ(node.op, "avg_pool2d");
  EXPECT_EQ(node.inputs, (std::vector<ValueId>{x}));
  EXPECT_EQ(node.outputs, *pool);
  EXPECT_EQ(attr_ints(node.attrs, "stride"), (Ints{2, 2})) << "defaults are stored explicitly";
  EXPECT_EQ(attr_int(node.attrs, "count_include_pad", -1), 1);
  ASSERT_TRUE(add_graph_output(g, (*pool)[0]).ok());
  Status s = verify(g);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(Builder, MultiOutputNodesNameEachOutput) {
  Graph g;
  ValueId x = *add_graph_input(g, "x", DType::kF32, {4});
  auto outs = add_op(g, "custom_shader", "k", {x},
                     {{"domain_name", std::string(kCustomShaderDomain)},
                      {"operator_name", std::string("Split")},
                      {"implementation_attrs", std::string(R"({"entry_point":"main","workgroup_sizes":[64]})")},
                      {"num_outputs", int64_t{2}},
                      {"output_0_shape", Ints{2}},
                      {"output_0_dtype", std::string("f32")},
                      {"output_1_shape", Ints{2}},
                      {"output_1_dtype", std::string("f32")}});
  ASSERT_TRUE(outs.ok()) << outs.status().message();
  ASSERT_EQ(outs->size(), 2u);
  EXPECT_EQ(g.value((*outs)[0]).name, "k:0");
  EXPECT_EQ(g.value((*outs)[1]).name, "k:1");
}

TEST(Builder, RefusedNodesLeaveTheGraphUnchanged) {
  Graph g;
  ValueId x = *add_graph_input(g, "x", DType::kF32, {2, 3});
  ASSERT_TRUE(add_op(g, "relu", "r", {x}, {}).ok());
  size_t values = g.values().size(), nodes = g.nodes().size();
  struct Bad {
    const char* op;
    const char* name;
    std::vector<ValueId> inputs;
    AttrMap attrs;
    const char* expected;
  };
  std::vector<Bad> bad = {
      {"relu", "r", {x}, {}, "already taken"},
      {"relu", "", {x}, {}, "empty name"},
      {"nope", "n1", {x}, {}, "unknown op 'nope'"},
      {"relu", "n2", {x}, {{"slope", 1.0}}, "unknown attribute 'slope'"},
      {"add", "n3", {x, 42}, {}, "value id 42"},
      {"add", "n4", {x, x, x}, {}, "takes 2 inputs"},
      {"transpose", "n5", {x}, {{"perm", Ints{0, 1, 2}}}, "'perm'"},
  };
  for (const Bad& b : bad) {
    auto r = add_op(g, b.op, b.name, b.inputs, b.attrs);
    ASSERT_FALSE(r.ok()) << b.op << " " << b.name;
    EXPECT_NE(r.status().message().find(b.expected), std::string::npos) << r.status().message();
    EXPECT_EQ(g.values().size(), values);
    EXPECT_EQ(g.nodes().size(), nodes);
  }
}

TEST(Builder, RefusesAnOutputNameTakenByAnotherValue) {
  Graph g;
  ValueId x = *add_graph_input(g, "x", DType::kF32, {2});
  ASSERT_TRUE(add_graph_input(g, "neg:0", DType::kF32, {2}).ok());
  auto r = add_op(g, "neg", "neg", {x}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("output name 'neg:0'"), std::string::npos) << r.status().message();
  EXPECT_TRUE(g.nodes().empty());
}

TEST(Builder, InputsAndConstantsAreChecked) {
  Graph g;
  EXPECT_TRUE(add_graph_input(g, "x", DType::kF32, {2, 2}).ok());
  EXPECT_FALSE(add_graph_input(g, "x", DType::kF32, {2}).ok()) << "duplicate name";
  EXPECT_FALSE(add_graph_input(g, "", DType::kF32, {2}).ok());
  EXPECT_FALSE(add_graph_input(g, "neg", DType::kF32, {-1}).ok());
  EXPECT_FALSE(add_graph_input(g, "huge", DType::kF32, {kMaxDim + 1}).ok());
  EXPECT_FALSE(add_graph_input(g, "deep", DType::kF32, Shape(kMaxRank + 1, 1)).ok());
  EXPECT_FALSE(add_graph_input(g, "dt", static_cast<DType>(9), {1}).ok());
  EXPECT_TRUE(add_graph_constant(g, "c", DType::kI64, {3}, zeros(24)).ok());
  Result<ValueId> short_data = add_graph_constant(g, "c2", DType::kI64, {3}, zeros(23));
  ASSERT_FALSE(short_data.ok());
  EXPECT_NE(short_data.status().message().find("constant 'c2': 23 bytes"), std::string::npos);
  EXPECT_FALSE(add_graph_constant(g, "x", DType::kI8, {1}, zeros(1)).ok()) << "name of an input";
  EXPECT_EQ(g.values().size(), 2u);
  EXPECT_EQ(g.constants().size(), 1u);
}

TEST(Builder, GraphOutputsMustExistAndNotRepeat) {
  Graph g;
  ValueId x = *add_graph_input(g, "x", DType::kF32, {2});
  EXPECT_FALSE(add_graph_output(g, 5).ok());
  EXPECT_FALSE(add_graph_output(g, -1).ok());
  EXPECT_TRUE(add_graph_output(g, x).ok());
  EXPECT_FALSE(add_graph_output(g, x).ok());
  EXPECT_EQ(g.outputs().size(), 1u);
}

TEST(Builder, SharedNameIndexCatchesUpWithDirectAppends) {
  Graph g;
  GraphNames names;
  ValueId x = *add_graph_input(g, "x", DType::kF32, {2}, &names);
  g.add_input("direct", DType::kF32, {2});  // bypasses the index
  EXPECT_FALSE(add_graph_input(g, "direct", DType::kF32, {2}, &names).ok());
  ASSERT_TRUE(add_op(g, "exp", "e", {x}, {}, &names).ok());
  EXPECT_EQ(names.find_value("e:0"), 2);
  EXPECT_EQ(names.find_node("e"), 0);
  EXPECT_EQ(names.find_node("f"), kNone);
  EXPECT_FALSE(add_op(g, "exp", "e", {x}, {}, &names).ok());
}

// A state: its value reads it, named as it; its update is set once, to a
// computed value of its dtype and shape.
TEST(Builder, StateTakesOneComputedUpdateOfItsTypeAndShape) {
  Graph g;
  ValueId x = *add_graph_input(g, "x", DType::kF32, {4});
  Result<ValueId> steps = add_graph_state(g, "steps", DType::kF32, {4}, zeros(16));
  ASSERT_TRUE(steps.ok()) << steps.status().message();
  EXPECT_EQ(g.value(*steps).name, "steps");
  EXPECT_EQ(g.value(*steps).state, 0);
  EXPECT_FALSE(add_graph_state(g, "bad", DType::kF32, {4}, zeros(12)).ok()) << "12 bytes for 16";
  EXPECT_FALSE(add_graph_state(g, "x", DType::kF32, {4}, zeros(16)).ok()) << "a taken name";
  ValueId c = *add_graph_constant(g, "c", DType::kF32, {4}, zeros(16));
  ValueId sum = (*add_op(g, "add", "a", {*steps, x}, {}))[0];
  ValueId wide = (*add_op(g, "cast", "w", {sum}, {{"dtype", std::string("f16")}}))[0];
  EXPECT_FALSE(verify(g).ok()) << "a state without update";
  for (ValueId refused : {c, *steps, wide, x + 100}) {
    Status s = set_state_update(g, *steps, refused);
    EXPECT_FALSE(s.ok()) << "update " << refused;
    EXPECT_NE(s.message().find("state"), std::string::npos) << s.message();
  }
  EXPECT_FALSE(set_state_update(g, x, sum).ok()) << "x reads no state";
  ASSERT_TRUE(set_state_update(g, *steps, sum).ok());
  Status again = set_state_update(g, *steps, sum);
  EXPECT_NE(again.message().find("already set"), std::string::npos) << again.message();
  EXPECT_EQ(g.states()[0].update, sum);
  EXPECT_EQ(g.results(), (std::vector<ValueId>{sum})) << "a stateful graph needs no output";
  Status s = verify(g);
  EXPECT_TRUE(s.ok()) << s.message();
}

}  // namespace
}  // namespace gpuu::graph

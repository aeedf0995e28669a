// The verifier: a well-formed graph passes; each kind of ill-formed graph is
// caught with a message that names the culprit.
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "graph/verifier.h"

namespace gpuu::graph {
namespace {

using Ints = std::vector<int64_t>;

// x [2,3] -> relu "r" -> exp "e" -> output; plus constant "c" [3] added to it by "a".
class Verifier : public testing::Test {
 protected:
  void SetUp() override {
    x_ = *add_graph_input(g_, "x", DType::kF32, {2, 3});
    c_ = *add_graph_constant(g_, "c", DType::kF32, {3}, Blob::take(std::vector<uint8_t>(12, 0)));
    r_ = (*add_op(g_, "relu", "r", {x_}, {}))[0];
    e_ = (*add_op(g_, "exp", "e", {r_}, {}))[0];
    a_ = (*add_op(g_, "add", "a", {e_, c_}, {}))[0];
    ASSERT_TRUE(add_graph_output(g_, a_).ok());
    Status s = verify(g_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  void expect_fails_with(const std::string& text) {
    Status s = verify(g_);
    ASSERT_FALSE(s.ok()) << "expected a failure mentioning: " << text;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  }

  Graph g_;
  ValueId x_ = kNone, c_ = kNone, r_ = kNone, e_ = kNone, a_ = kNone;
};

TEST_F(Verifier, AcceptsTheWellFormedGraph) { EXPECT_TRUE(verify(g_).ok()); }

TEST_F(Verifier, NeedsAnOutput) {
  Graph g;
  g.add_input("x", DType::kF32, {1});
  Status s = verify(g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no outputs"), std::string::npos);
}

TEST_F(Verifier, OutputIdsMustBeValidAndDistinct) {
  g_.mark_output(77);
  expect_fails_with("graph output 1 has bad value id 77");
}

TEST_F(Verifier, RepeatedOutput) {
  g_.mark_output(a_);
  expect_fails_with("graph output 1 repeats value");
}

TEST_F(Verifier, DuplicateNodeNames) {
  g_.mutable_node(1).name = "r";
  expect_fails_with("node name 'r' is used by nodes 0 and 1");
}

TEST_F(Verifier, DuplicateValueNames) {
  g_.mutable_value(e_).name = "x";
  expect_fails_with("value name 'x' is used by values 0 and");
}

TEST_F(Verifier, EmptyNodeName) {
  g_.mutable_node(0).name = "";
  expect_fails_with("node 0 (relu) has an empty name");
}

TEST_F(Verifier, InputIdOutOfRange) {
  g_.mutable_node(1).inputs[0] = 1000;
  expect_fails_with("node 'e' (exp): input 0 is value id 1000");
}

TEST_F(Verifier, NodesOutOfTopologicalOrder) {
  // r reads e's output, which is produced by a later node.
  g_.mutable_node(0).inputs[0] = e_;
  expect_fails_with("node 'r' (relu): input 0 reads value");
  expect_fails_with("before node 'e'");
}

TEST_F(Verifier, ValueThatNothingProduces) {
  Value orphan;
  orphan.name = "orphan";
  orphan.shape = {2, 3};
  ValueId id = g_.add_value(orphan);
  g_.mutable_node(1).inputs[0] = id;
  expect_fails_with("neither a graph input, a constant nor produced by any node");
}

TEST_F(Verifier, UnusedValueThatNothingProduces) {
  Value orphan;
  orphan.name = "orphan";
  g_.add_value(orphan);
  expect_fails_with("value 5 ('orphan') is never produced");
}

TEST_F(Verifier, ValueProducedTwice) {
  g_.mutable_node(1).outputs[0] = r_;
  expect_fails_with("node 'e' (exp): output 0 is value");
  expect_fails_with("already produced by node 'r'");
}

TEST_F(Verifier, NodeOutputThatIsAGraphInput) {
  g_.mutable_node(0).outputs[0] = x_;
  expect_fails_with("node 'r' (relu): output 0 is graph input");
}

TEST_F(Verifier, ProducerFieldMustAgree) {
  g_.mutable_value(r_).producer = 2;
  expect_fails_with("node 'r' (relu): output 0");
  expect_fails_with("records producer 2");
}

TEST_F(Verifier, StoredShapeMustMatchInference) {
  g_.mutable_value(e_).shape = {3, 2};
  expect_fails_with("node 'e' (exp): output 0 ('e:0') is stored as f32 [3,2], but inference gives f32 [2,3]");
}

TEST_F(Verifier, StoredDtypeMustMatchInference) {
  g_.mutable_value(a_).dtype = DType::kF16;
  expect_fails_with("node 'a' (add): output 0");
}

TEST_F(Verifier, WrongOutputCount) {
  Value extra;
  extra.name = "e:1";
  extra.shape = {2, 3};
  extra.producer = 1;
  ValueId id = g_.add_value(extra);
  g_.mutable_node(1).outputs.push_back(id);
  expect_fails_with("node 'e' (exp): has 2 outputs, but exp gives 1");
}

TEST_F(Verifier, BadAttributeIsNamed) {
  g_.mutable_node(0).attrs["alpha"] = 0.5;
  expect_fails_with("node 'r' (relu): unknown attribute 'alpha'");
}

TEST_F(Verifier, UnknownOp) {
  g_.mutable_node(1).op = "exp2";
  expect_fails_with("node 'e' (exp2): unknown op 'exp2'");
}

TEST_F(Verifier, RequiredInputLeftOut) {
  g_.mutable_node(1).inputs[0] = kNone;
  expect_fails_with("node 'e' (exp): input 0 (x) is required but was left out");
}

TEST_F(Verifier, ConstantDataSize) {
  Graph g;
  ValueId c = g.add_constant("c", DType::kF32, {3}, Blob::take(std::vector<uint8_t>(11, 0)));
  g.mark_output(c);
  Status s = verify(g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("constant 'c' holds 11 bytes, but f32 [3] needs 12"), std::string::npos) << s.message();
}

TEST_F(Verifier, ConstantLinksMustAgree) {
  g_.mutable_value(c_).constant = kNone;
  expect_fails_with("constant 0 ('c')");
}

TEST_F(Verifier, GraphInputThatIsAConstant) {
  Graph g;
  ValueId c = g.add_constant("c", DType::kF32, {1}, Blob::take(std::vector<uint8_t>(4, 0)));
  g.mark_output(c);
  ASSERT_TRUE(verify(g).ok());
  // Declare the constant an input too. Graph has no call for that; this is
  // what a corrupt deserialized graph could hold.
  Graph g2;
  g2.add_constant("c", DType::kF32, {1}, Blob::take(std::vector<uint8_t>(4, 0)));
  g2.add_input("x", DType::kF32, {1});
  const_cast<std::vector<ValueId>&>(g2.inputs()).push_back(0);
  g2.mark_output(1);
  Status s = verify(g2);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("graph input 1 is value 0 ('c'), which is a constant"), std::string::npos)
      << s.message();
}

TEST_F(Verifier, BadShapeOnAValue) {
  g_.mutable_value(x_).shape = {2, -3};
  expect_fails_with("value 0 ('x') has a bad shape [2,-3]: dim 1 is negative");
}

TEST_F(Verifier, OptionalInputsMayBeAbsent) {
  Graph g;
  ValueId x = *add_graph_input(g, "x", DType::kF32, {2, 4});
  ValueId w = *add_graph_constant(g, "w", DType::kF32, {3, 4}, Blob::take(std::vector<uint8_t>(48, 0)));
  auto y = add_op(g, "linear", "fc", {x, w, kNone}, {});
  ASSERT_TRUE(y.ok()) << y.status().message();
  ASSERT_TRUE(add_graph_output(g, (*y)[0]).ok());
  Status s = verify(g);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(Verifier, StateReadByNodesAndUpdated) {
  ValueId s = *add_graph_state(g_, "s", DType::kF32, {3}, Blob::take(std::vector<uint8_t>(12, 0)));
  ValueId next = (*add_op(g_, "add", "next", {s, c_}, {}))[0];
  ASSERT_TRUE(set_state_update(g_, s, next).ok());
  Status ok = verify(g_);
  EXPECT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(g_.results(), (std::vector<ValueId>{a_, next}));
}

TEST_F(Verifier, StateValueIsNeitherOutputNorWritten) {
  ValueId s = *add_graph_state(g_, "s", DType::kF32, {2, 3}, Blob::take(std::vector<uint8_t>(24, 0)));
  ASSERT_TRUE(set_state_update(g_, s, r_).ok());
  g_.mark_output(s);
  expect_fails_with("graph output 1 is value 5 ('s'), which reads a state");
}

TEST_F(Verifier, StateUpdateMustBeSet) {
  ASSERT_TRUE(add_graph_state(g_, "s", DType::kF32, {3}, Blob::take(std::vector<uint8_t>(12, 0))).ok());
  expect_fails_with("state 's' has no update");
}

}  // namespace
}  // namespace gpuu::graph

// The graph-builder C API through gpuu.h and libgpuu.so alone: building,
// read-back, refusals that leave the graph usable, and the RFC model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gpuu.h"
#include "support/rfc_model_capi.h"

namespace {

// Owns a gpuu_graph for one test.
class GraphBuilder : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(gpuu_graph_create(&g_), GPUU_OK); }
  void TearDown() override { gpuu_graph_destroy(g_); }

  int32_t input(const char* name, std::vector<int64_t> shape, gpuu_dtype dtype = GPUU_DTYPE_F32) {
    int32_t id = -1;
    EXPECT_EQ(gpuu_graph_add_input(g_, name, dtype, shape.data(), shape.size(), &id), GPUU_OK) << gpuu_last_error();
    return id;
  }
  // Adds a node with one output; -1 (and the status in last_) when refused.
  int32_t node(const char* op, const char* name, std::vector<int32_t> inputs, std::vector<gpuu_attr> attrs = {}) {
    int32_t out = -1;
    size_t n = 0;
    last_ = gpuu_graph_add_node(g_, op, name, inputs.data(), inputs.size(), attrs.data(), attrs.size(), &out, 1, &n);
    return last_ == GPUU_OK ? out : -1;
  }
  std::vector<int64_t> shape(int32_t value) {
    int64_t dims[GPUU_MAX_RANK];
    size_t rank = 0;
    EXPECT_EQ(gpuu_graph_value_shape(g_, value, dims, GPUU_MAX_RANK, &rank), GPUU_OK) << gpuu_last_error();
    return std::vector<int64_t>(dims, dims + rank);
  }
  // Expects the last node to have been refused as invalid, naming `text`, with the graph unchanged.
  void expect_refused(const std::string& text, size_t values, size_t nodes) {
    EXPECT_EQ(last_, GPUU_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gpuu_last_error()).find(text), std::string::npos) << gpuu_last_error();
    EXPECT_EQ(gpuu_graph_value_count(g_), values);
    EXPECT_EQ(gpuu_graph_node_count(g_), nodes);
  }

  gpuu_graph* g_ = nullptr;
  gpuu_status last_ = GPUU_OK;
};

gpuu_attr attr_int(const char* name, int64_t v) {
  gpuu_attr a;
  gpuu_attr_init(&a);
  a.name = name;
  a.kind = GPUU_ATTR_INT;
  a.i = v;
  return a;
}
gpuu_attr attr_float(const char* name, double v) {
  gpuu_attr a;
  gpuu_attr_init(&a);
  a.name = name;
  a.kind = GPUU_ATTR_FLOAT;
  a.f = v;
  return a;
}
gpuu_attr attr_string(const char* name, const char* v) {
  gpuu_attr a;
  gpuu_attr_init(&a);
  a.name = name;
  a.kind = GPUU_ATTR_STRING;
  a.s = v;
  return a;
}
gpuu_attr attr_ints(const char* name, const std::vector<int64_t>& v) {
  gpuu_attr a;
  gpuu_attr_init(&a);
  a.name = name;
  a.kind = GPUU_ATTR_INTS;
  a.ints = v.data();
  a.count = v.size();
  return a;
}

TEST_F(GraphBuilder, BuildsAndReadsBack) {
  int32_t x = input("x", {2, 3});
  const float bias[3] = {1.0f, 2.0f, 3.0f};
  const int64_t bias_shape[1] = {3};
  int32_t b = -1;
  ASSERT_EQ(gpuu_graph_add_constant(g_, "b", GPUU_DTYPE_F32, bias_shape, 1, bias, sizeof(bias), &b), GPUU_OK)
      << gpuu_last_error();
  int32_t sum = node("add", "add_0", {x, b});
  ASSERT_GE(sum, 0) << gpuu_last_error();
  int32_t y = node("relu", "relu_0", {sum});
  ASSERT_GE(y, 0) << gpuu_last_error();
  ASSERT_EQ(gpuu_graph_mark_output(g_, y), GPUU_OK);
  EXPECT_EQ(gpuu_graph_verify(g_), GPUU_OK) << gpuu_last_error();

  EXPECT_EQ(gpuu_graph_value_count(g_), 4u);
  EXPECT_STREQ(gpuu_graph_value_name(g_, x), "x");
  EXPECT_STREQ(gpuu_graph_value_name(g_, sum), "add_0:0");
  EXPECT_STREQ(gpuu_graph_value_name(g_, y), "relu_0:0");
  EXPECT_EQ(gpuu_graph_value_name(g_, 4), nullptr);
  EXPECT_EQ(gpuu_graph_value_name(g_, -1), nullptr);
  gpuu_dtype dt = GPUU_DTYPE_BOOL;
  ASSERT_EQ(gpuu_graph_value_dtype(g_, y, &dt), GPUU_OK);
  EXPECT_EQ(dt, GPUU_DTYPE_F32);
  EXPECT_EQ(shape(y), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(gpuu_graph_value_is_constant(g_, b), 1);
  EXPECT_EQ(gpuu_graph_value_is_constant(g_, x), 0);
  int32_t producer = 99;
  ASSERT_EQ(gpuu_graph_value_producer(g_, y, &producer), GPUU_OK);
  EXPECT_EQ(producer, 1);
  ASSERT_EQ(gpuu_graph_value_producer(g_, x, &producer), GPUU_OK);
  EXPECT_EQ(producer, -1);
  int32_t found = -1;
  ASSERT_EQ(gpuu_graph_find_value(g_, "add_0:0", &found), GPUU_OK);
  EXPECT_EQ(found, sum);
  EXPECT_EQ(gpuu_graph_find_value(g_, "nope", &found), GPUU_ERROR_NOT_FOUND);
  EXPECT_EQ(found, -1);

  EXPECT_EQ(gpuu_graph_node_count(g_), 2u);
  EXPECT_STREQ(gpuu_graph_node_name(g_, 0), "add_0");
  EXPECT_STREQ(gpuu_graph_node_op(g_, 1), "relu");
  EXPECT_EQ(gpuu_graph_node_op(g_, 2), nullptr);
  int32_t ids[4];
  size_t count = 0;
  ASSERT_EQ(gpuu_graph_node_inputs(g_, 0, ids, 4, &count), GPUU_OK);
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(ids[0], x);
  EXPECT_EQ(ids[1], b);
  ASSERT_EQ(gpuu_graph_node_outputs(g_, 1, ids, 4, &count), GPUU_OK);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(ids[0], y);
  ASSERT_EQ(gpuu_graph_inputs(g_, ids, 4, &count), GPUU_OK);
  ASSERT_EQ(count, 1u) << "constants are not graph inputs";
  EXPECT_EQ(ids[0], x);
  ASSERT_EQ(gpuu_graph_outputs(g_, ids, 4, &count), GPUU_OK);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(ids[0], y);
}

TEST_F(GraphBuilder, IdArraysReportTheirLengthAndRefuseSmallBuffers) {
  int32_t x = input("x", {4});
  ASSERT_GE(node("mul", "sq", {x, x}), 0);
  size_t count = 0;
  ASSERT_EQ(gpuu_graph_node_inputs(g_, 0, nullptr, 0, &count), GPUU_OK);
  EXPECT_EQ(count, 2u);
  int32_t one[1] = {-7};
  EXPECT_EQ(gpuu_graph_node_inputs(g_, 0, one, 1, &count), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(one[0], -7) << "nothing written when the ids do not fit";
  EXPECT_EQ(gpuu_graph_node_inputs(g_, 5, one, 1, &count), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_graph_node_inputs(g_, 0, one, 1, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  size_t rank = 9;
  ASSERT_EQ(gpuu_graph_value_shape(g_, x, nullptr, 0, &rank), GPUU_OK);
  EXPECT_EQ(rank, 1u);
  int64_t dims[1];
  EXPECT_EQ(gpuu_graph_value_shape(g_, 1, dims, 0, &rank), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_graph_value_shape(g_, 17, dims, 1, &rank), GPUU_ERROR_INVALID_ARGUMENT);
}

TEST_F(GraphBuilder, RefusalsNameTheProblemAndLeaveTheGraphUsable) {
  int32_t x = input("x", {1, 4, 6, 6});
  int32_t idx = input("idx", {2}, GPUU_DTYPE_I64);
  ASSERT_GE(node("relu", "relu_0", {x}), 0);
  const size_t values = gpuu_graph_value_count(g_), nodes = gpuu_graph_node_count(g_);

  node("relu6", "r1", {x});
  expect_refused("node 'r1' (relu6): unknown op 'relu6'", values, nodes);
  node("relu", "r1", {x}, {attr_float("alpha", 0.1)});
  expect_refused("node 'r1' (relu): unknown attribute 'alpha'", values, nodes);
  node("softmax", "sm", {x}, {attr_float("axis", 1.0)});
  expect_refused("node 'sm' (softmax): attribute 'axis' must be int, got float", values, nodes);
  node("softmax", "sm", {x});
  expect_refused("node 'sm' (softmax): attribute 'axis' (int) is required but missing", values, nodes);
  node("softmax", "sm", {x}, {attr_int("axis", 1), attr_int("axis", 2)});
  expect_refused("attribute 'axis' is given twice", values, nodes);
  node("sin", "s", {idx});
  expect_refused("node 's' (sin): input 0 (x 'idx') has dtype i64", values, nodes);
  node("add", "a", {x, idx});
  expect_refused("node 'a' (add): input 1 (b 'idx') has dtype i64", values, nodes);
  int32_t other = input("other", {1, 3, 6, 6});
  const size_t values2 = values + 1;
  node("add", "a", {x, other});
  expect_refused("node 'a' (add): inputs 0 and 1: shapes [1,4,6,6] and [1,3,6,6] do not broadcast", values2, nodes);
  node("relu", "r2", {12345});
  expect_refused("node 'r2' (relu): input 0 (x) is value id 12345", values2, nodes);
  node("relu", "relu_0", {x});
  expect_refused("node 'relu_0' (relu): the name is already taken", values2, nodes);
  node("relu", "", {x});
  expect_refused("empty name", values2, nodes);
  node("avg_pool2d", "pool", {x}, {attr_ints("kernel", {7, 7})});
  expect_refused("node 'pool' (avg_pool2d): the height window", values2, nodes);
  node("index_select", "sel", {x, idx}, {attr_int("axis", 4)});
  expect_refused("node 'sel' (index_select): attribute 'axis' = 4 is out of range", values2, nodes);

  // Still usable: a good node goes in and the graph verifies.
  int32_t pooled = node("avg_pool2d", "pool", {x}, {attr_ints("kernel", {2, 2})});
  ASSERT_GE(pooled, 0) << gpuu_last_error();
  EXPECT_EQ(shape(pooled), (std::vector<int64_t>{1, 4, 3, 3}));
  ASSERT_EQ(gpuu_graph_mark_output(g_, pooled), GPUU_OK);
  EXPECT_EQ(gpuu_graph_verify(g_), GPUU_OK) << gpuu_last_error();
}

TEST_F(GraphBuilder, MalformedAttributeStructsAreRefused) {
  int32_t x = input("x", {2, 2});
  const size_t values = gpuu_graph_value_count(g_);
  gpuu_attr a = attr_ints("perm", {1, 0});
  a.ints = nullptr;
  node("transpose", "t", {x}, {a});
  expect_refused("attribute 'perm' has count 2 but `ints` is NULL", values, 0);
  gpuu_attr s = attr_string("approximate", nullptr);
  node("gelu", "g", {x}, {s});
  expect_refused("attribute 'approximate' is a string but `s` is NULL", values, 0);
  gpuu_attr k = attr_int("axis", 0);
  k.kind = static_cast<gpuu_attr_kind>(42);
  node("softmax", "sm", {x}, {k});
  expect_refused("attribute 'axis' has unknown kind 42", values, 0);
  gpuu_attr nameless = attr_int(nullptr, 0);
  node("softmax", "sm", {x}, {nameless});
  expect_refused("attrs[0] has no name", values, 0);
  EXPECT_EQ(gpuu_graph_add_node(g_, "relu", "r", nullptr, 1, nullptr, 0, nullptr, 0, nullptr),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_graph_add_node(nullptr, "relu", "r", &x, 1, nullptr, 0, nullptr, 0, nullptr),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_graph_add_node(g_, nullptr, "r", &x, 1, nullptr, 0, nullptr, 0, nullptr),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_graph_node_count(g_), 0u);
}

TEST_F(GraphBuilder, OptionalInputsArePassedAsMinusOne) {
  int32_t x = input("x", {2, 5, 8});
  int32_t w = input("w", {3, 8});
  int32_t bias = input("bias", {8});
  int32_t y = node("linear", "fc", {x, w, -1});
  ASSERT_GE(y, 0) << gpuu_last_error();
  EXPECT_EQ(shape(y), (std::vector<int64_t>{2, 5, 3}));
  int32_t z = node("layer_norm", "ln", {x, -1, bias}, {attr_int("normalized_ndim", 1), attr_float("eps", 1e-6)});
  ASSERT_GE(z, 0) << gpuu_last_error();
  int32_t ids[3];
  size_t count = 0;
  ASSERT_EQ(gpuu_graph_node_inputs(g_, 1, ids, 3, &count), GPUU_OK);
  ASSERT_EQ(count, 3u);
  EXPECT_EQ(ids[1], -1);
  node("linear", "fc2", {-1, w});
  expect_refused("node 'fc2' (linear): input 0 (x) is required", 5, 2);
  ASSERT_EQ(gpuu_graph_mark_output(g_, y), GPUU_OK);
  ASSERT_EQ(gpuu_graph_mark_output(g_, z), GPUU_OK);
  EXPECT_EQ(gpuu_graph_verify(g_), GPUU_OK) << gpuu_last_error();
}

TEST_F(GraphBuilder, MultiOutputNodeNeedsRoomForEveryOutput) {
  int32_t x = input("x", {16});
  const std::vector<int64_t> half = {8};
  std::vector<gpuu_attr> attrs = {
      attr_string("domain_name", "com.arm.VulkanCustomShader"),
      attr_string("operator_name", "SplitHalves"),
      attr_string("implementation_attrs",
                  R"({"entry_point": "main", "workgroup_sizes": [64, 1, 1], "shader_language": "GLSL",
                      "shader_code": "void main() {}", "input_0_binding": 0, "output_1_binding": 2})"),
      attr_int("num_outputs", 2),
      attr_ints("output_0_shape", half),
      attr_string("output_0_dtype", "f32"),
      attr_ints("output_1_shape", half),
      attr_string("output_1_dtype", "f16"),
  };
  int32_t outs[2] = {-1, -1};
  size_t n = 0;
  EXPECT_EQ(gpuu_graph_add_node(g_, "custom_shader", "split", &x, 1, attrs.data(), attrs.size(), outs, 1, &n),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(n, 2u) << "says how many outputs are needed";
  EXPECT_EQ(gpuu_graph_node_count(g_), 0u);
  EXPECT_EQ(gpuu_graph_value_count(g_), 1u);
  ASSERT_EQ(gpuu_graph_add_node(g_, "custom_shader", "split", &x, 1, attrs.data(), attrs.size(), outs, 2, &n),
            GPUU_OK)
      << gpuu_last_error();
  EXPECT_EQ(n, 2u);
  EXPECT_STREQ(gpuu_graph_value_name(g_, outs[1]), "split:1");
  gpuu_dtype dt = GPUU_DTYPE_F32;
  ASSERT_EQ(gpuu_graph_value_dtype(g_, outs[1], &dt), GPUU_OK);
  EXPECT_EQ(dt, GPUU_DTYPE_F16);
}

TEST_F(GraphBuilder, InputsAndConstantsAreValidated) {
  const int64_t shape[2] = {2, 3};
  int32_t id = 5;
  EXPECT_EQ(gpuu_graph_add_input(g_, "x", static_cast<gpuu_dtype>(GPUU_DTYPE_I16 + 1), shape, 2, &id), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(id, -1);
  EXPECT_NE(std::string(gpuu_last_error()).find("unknown dtype"), std::string::npos);
  EXPECT_EQ(gpuu_graph_add_input(g_, "x", GPUU_DTYPE_F32, nullptr, 2, &id), GPUU_ERROR_INVALID_ARGUMENT);
  const int64_t deep[GPUU_MAX_RANK + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(gpuu_graph_add_input(g_, "x", GPUU_DTYPE_F32, deep, GPUU_MAX_RANK + 1, &id), GPUU_ERROR_INVALID_ARGUMENT);
  const int64_t negative[1] = {-2};
  EXPECT_EQ(gpuu_graph_add_input(g_, "x", GPUU_DTYPE_F32, negative, 1, &id), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuu_last_error()).find("graph input 'x'"), std::string::npos) << gpuu_last_error();
  EXPECT_EQ(gpuu_graph_add_input(g_, nullptr, GPUU_DTYPE_F32, shape, 2, &id), GPUU_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(gpuu_graph_add_input(g_, "x", GPUU_DTYPE_F32, shape, 2, &id), GPUU_OK);
  EXPECT_EQ(gpuu_graph_add_input(g_, "x", GPUU_DTYPE_F32, shape, 2, &id), GPUU_ERROR_INVALID_ARGUMENT);

  const int32_t data[6] = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(gpuu_graph_add_constant(g_, "c", GPUU_DTYPE_I32, shape, 2, data, 20, &id), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuu_last_error()).find("constant 'c': 20 bytes"), std::string::npos) << gpuu_last_error();
  EXPECT_EQ(gpuu_graph_add_constant(g_, "c", GPUU_DTYPE_I32, shape, 2, nullptr, 24, &id), GPUU_ERROR_INVALID_ARGUMENT);
  const int64_t scalar_shape[1] = {0};
  ASSERT_EQ(gpuu_graph_add_constant(g_, "empty", GPUU_DTYPE_I32, scalar_shape, 1, nullptr, 0, &id), GPUU_OK);
  ASSERT_EQ(gpuu_graph_add_constant(g_, "c", GPUU_DTYPE_I32, shape, 2, data, sizeof(data), &id), GPUU_OK);
  EXPECT_EQ(gpuu_graph_value_count(g_), 3u);
}

TEST_F(GraphBuilder, ConstantDataIsCopied) {
  std::vector<float> data = {1.0f, 2.0f};
  const int64_t shape[1] = {2};
  int32_t c = -1;
  ASSERT_EQ(gpuu_graph_add_constant(g_, "c", GPUU_DTYPE_F32, shape, 1, data.data(), 8, &c), GPUU_OK);
  data.assign(2, -1.0f);  // the caller's buffer may change or go away
  int32_t y = node("exp", "e", {c});
  ASSERT_GE(y, 0);
  ASSERT_EQ(gpuu_graph_mark_output(g_, y), GPUU_OK);
  EXPECT_EQ(gpuu_graph_verify(g_), GPUU_OK) << gpuu_last_error();
}

TEST_F(GraphBuilder, OutputsAreCheckedAndRequiredByVerify) {
  int32_t x = input("x", {3});
  EXPECT_EQ(gpuu_graph_verify(g_), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuu_last_error()).find("no outputs"), std::string::npos);
  EXPECT_EQ(gpuu_graph_mark_output(g_, 3), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_graph_mark_output(g_, x), GPUU_OK);
  EXPECT_EQ(gpuu_graph_mark_output(g_, x), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_graph_verify(g_), GPUU_OK);
  EXPECT_EQ(gpuu_graph_verify(nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_graph_mark_output(nullptr, 0), GPUU_ERROR_INVALID_ARGUMENT);
}

TEST(GraphBuilderApi, CreateAndDestroyHandleNull) {
  EXPECT_EQ(gpuu_graph_create(nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  gpuu_graph_destroy(nullptr);
  EXPECT_EQ(gpuu_graph_value_count(nullptr), 0u);
  EXPECT_EQ(gpuu_graph_node_count(nullptr), 0u);
  EXPECT_EQ(gpuu_graph_value_name(nullptr, 0), nullptr);
}

TEST(GraphBuilderApi, ListsTheRegisteredOpsInOrder) {
  size_t n = gpuu_op_count();
  ASSERT_GE(n, 50u);
  bool has_custom_shader = false;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_NE(gpuu_op_name(i), nullptr);
    if (i > 0) {
      EXPECT_LT(std::strcmp(gpuu_op_name(i - 1), gpuu_op_name(i)), 0);
    }
    if (std::strcmp(gpuu_op_name(i), "custom_shader") == 0) has_custom_shader = true;
  }
  EXPECT_TRUE(has_custom_shader);
  EXPECT_EQ(gpuu_op_name(n), nullptr);
}

TEST(RfcModel, BuildsAndVerifiesWithTheExpectedShape) {
  gpuu_graph* g = gpuu_test_build_rfc_model();
  ASSERT_NE(g, nullptr) << gpuu_last_error();
  EXPECT_EQ(gpuu_graph_verify(g), GPUU_OK) << gpuu_last_error();

  const char* names[] = {"transpose_0", "avg_pool2d_0", "index_select_0", "gather_0", "index_select_1",
                         "sin_0",       "cos_0",        "reciprocal_0",   "mul_0",    "transpose_1"};
  const char* ops[] = {"transpose", "avg_pool2d", "index_select", "gather", "index_select",
                       "sin",       "cos",        "reciprocal",   "mul",    "transpose"};
  ASSERT_EQ(gpuu_graph_node_count(g), 10u);
  for (int32_t i = 0; i < 10; ++i) {
    EXPECT_STREQ(gpuu_graph_node_name(g, i), names[i]);
    EXPECT_STREQ(gpuu_graph_node_op(g, i), ops[i]);
  }
  for (const char* constant : {"channel_index", "col_gather_index", "row_index"}) {
    int32_t id = -1;
    ASSERT_EQ(gpuu_graph_find_value(g, constant, &id), GPUU_OK) << constant;
    EXPECT_EQ(gpuu_graph_value_is_constant(g, id), 1) << constant;
  }

  int32_t out = -1;
  size_t count = 0;
  ASSERT_EQ(gpuu_graph_outputs(g, &out, 1, &count), GPUU_OK);
  ASSERT_EQ(count, 1u);
  EXPECT_STREQ(gpuu_graph_value_name(g, out), "transpose_1:0");
  int64_t dims[GPUU_MAX_RANK];
  size_t rank = 0;
  ASSERT_EQ(gpuu_graph_value_shape(g, out, dims, GPUU_MAX_RANK, &rank), GPUU_OK);
  EXPECT_EQ(std::vector<int64_t>(dims, dims + rank), (std::vector<int64_t>{1, 3, 4, 4}));
  gpuu_dtype dt = GPUU_DTYPE_BOOL;
  ASSERT_EQ(gpuu_graph_value_dtype(g, out, &dt), GPUU_OK);
  EXPECT_EQ(dt, GPUU_DTYPE_F32);

  // sin and cos both read index_select_1's output; mul reads sin and reciprocal.
  int32_t ins[2];
  ASSERT_EQ(gpuu_graph_node_inputs(g, 5, ins, 2, &count), GPUU_OK);
  int32_t sin_in = ins[0];
  ASSERT_EQ(gpuu_graph_node_inputs(g, 6, ins, 2, &count), GPUU_OK);
  EXPECT_EQ(ins[0], sin_in);
  EXPECT_STREQ(gpuu_graph_value_name(g, sin_in), "index_select_1:0");
  ASSERT_EQ(gpuu_graph_node_inputs(g, 8, ins, 2, &count), GPUU_OK);
  EXPECT_STREQ(gpuu_graph_value_name(g, ins[0]), "sin_0:0");
  EXPECT_STREQ(gpuu_graph_value_name(g, ins[1]), "reciprocal_0:0");
  gpuu_graph_destroy(g);
}

TEST(RfcModel, HostReferenceMatchesTorch) {
  // Expected values: torch 1.13 eager (float64) on the input below.
  float x[192];
  for (int i = 0; i < 192; ++i) x[i] = static_cast<float>(0.9 * std::sin(1.7 * i));
  const double expected[48] = {
      0.128897716,   0.374835751,  -0.257225967, -0.472823851, -0.532158597, -0.555603471,
      0.566197885,   0.502193111,  0.398013291,  0.157167365,  -0.283793995, -0.0249141948,
      0.0873076478,  0.339425121,  -0.217609578, -0.444712735, -0.490086643, -0.567554695,
      0.549737768,   0.540501037,  0.486047485,  0.277093264,  -0.392215253, -0.150005624,
      0.00342432258, 0.264026627,  -0.136102582, -0.380815531, -0.463980598, -0.566792532,
      0.535117401,   0.55373025,   0.429978885,  0.197936432,  -0.321511701, -0.0668709878,
      0.0454371844,  0.302394454,  -0.1771706,   -0.413926048, -0.512924316, -0.56380242,
      0.56015859,    0.523228605,  0.459442113,  0.237980586,  -0.357751192, -0.108615966,
  };
  float y[48];
  gpuu_test_rfc_model_reference(x, y);
  for (int i = 0; i < 48; ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << "element " << i;
}

}  // namespace

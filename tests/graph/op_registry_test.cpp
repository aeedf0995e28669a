// Shape and dtype inference of every registered op, and the refusals: each bad
// node is rejected with a message naming the node and what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "base/json.h"
#include "graph/op_registry.h"

namespace gpuu::graph {
namespace {

using Ints = std::vector<int64_t>;

class Infer : public testing::Test {
 protected:
  ValueId in(DType dtype, Shape shape) {
    return g_.add_input("v" + std::to_string(g_.values().size()), dtype, std::move(shape));
  }
  ValueId f32(Shape shape) { return in(DType::kF32, std::move(shape)); }

  // Infers one node named "n0"; the error message when it fails.
  Result<std::vector<Value>> run(const std::string& op, std::vector<ValueId> inputs, AttrMap attrs = {}) {
    Node node;
    node.name = "n0";
    node.op = op;
    node.inputs = std::move(inputs);
    node.attrs = std::move(attrs);
    std::vector<Value> outs;
    Status s = infer(g_, node, &outs);
    if (!s.ok()) return s;
    return outs;
  }
  // The single output's shape, or a failure that prints the message.
  Shape shape_of(const std::string& op, std::vector<ValueId> inputs, AttrMap attrs = {}) {
    auto r = run(op, std::move(inputs), std::move(attrs));
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok() || r->empty()) return {-99};
    return r->front().shape;
  }
  DType dtype_of(const std::string& op, std::vector<ValueId> inputs, AttrMap attrs = {}) {
    auto r = run(op, std::move(inputs), std::move(attrs));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() && !r->empty() ? r->front().dtype : DType::kBool;
  }
  // The error message; fails the test if the node was accepted.
  std::string error_of(const std::string& op, std::vector<ValueId> inputs, AttrMap attrs = {}) {
    auto r = run(op, std::move(inputs), std::move(attrs));
    EXPECT_FALSE(r.ok()) << op << " was accepted";
    if (r.ok()) return "";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("node 'n0' (" + op + ")"), std::string::npos) << r.status().message();
    return r.status().message();
  }

  Graph g_;
};

#define EXPECT_MENTIONS(message, text) \
  EXPECT_NE((message).find(text), std::string::npos) << "message: " << (message)

TEST(OpRegistry, HasEveryOpOtherComponentsUse) {
  const char* names[] = {"abs", "neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh", "sigmoid",
                         "relu", "gelu", "erf", "floor", "ceil", "add", "sub", "mul", "div", "pow", "maximum", "minimum",
                         "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "clamp", "where",
                         "cast", "matmul", "linear", "conv2d", "avg_pool2d", "max_pool2d", "reduce_sum", "reduce_mean",
                         "reduce_max", "softmax", "layer_norm", "transpose", "reshape", "slice", "concat", "pad",
                         "gather", "index_select", "custom_shader", "tan", "asin", "acos", "atan", "sinh", "cosh",
                         "asinh", "acosh", "atanh", "expm1", "log1p", "round", "trunc", "sign", "isnan", "isinf",
                         "logical_not", "bitwise_not", "atan2", "remainder", "fmod", "floor_divide", "logical_and",
                         "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "reduce_min",
                         "reduce_prod", "reduce_any", "reduce_all", "argmax", "argmin", "cumsum"};
  std::set<std::string> expected(std::begin(names), std::end(names));
  for (const char* spatial : {"conv3d", "conv_transpose2d", "avg_pool3d", "max_pool3d", "resize", "grid_sample",
                              "expand", "flip"}) {
    expected.insert(spatial);
  }
  for (const char* int_profile : {"rescale", "conv2d_int", "matmul_int", "avg_pool2d_int", "table", "mul_shift",
                                  "arithmetic_right_shift"}) {
    expected.insert(int_profile);
  }
  std::set<std::string> registered;
  for (const OpSchema& s : all_ops()) {
    registered.insert(s.name);
    EXPECT_NE(s.infer_fn, nullptr) << s.name;
    EXPECT_FALSE(s.dtype_rule.empty()) << s.name;
  }
  // The registry may hold more: that it holds nothing without a kernel is the
  // CPU tests' check (every registered op but custom_shader has a CPU kernel,
  // every CPU kernel a schema), so a new op needs no line here.
  for (const std::string& op : expected) EXPECT_EQ(registered.count(op), 1u) << op << " is not registered";
  EXPECT_EQ(find_op("relu")->name, "relu");
  EXPECT_EQ(find_op("Relu"), nullptr);
  EXPECT_EQ(find_op(""), nullptr);
}

TEST(OpRegistry, SchemaDescribesAttributesAndOptionalInputs) {
  const OpSchema* conv = find_op("conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_FALSE(conv->input_optional(0));
  EXPECT_TRUE(conv->input_optional(2));
  EXPECT_EQ(conv->input_name(1), "weight");
  ASSERT_NE(conv->find_attr("groups"), nullptr);
  EXPECT_EQ(std::get<int64_t>(conv->find_attr("groups")->default_value), 1);
  const OpSchema* pool = find_op("avg_pool2d");
  EXPECT_TRUE(pool->find_attr("kernel")->required);
  EXPECT_EQ(pool->find_attr("stride")->derived_from, "kernel");
  EXPECT_TRUE(find_op("concat")->variadic());
  EXPECT_TRUE(find_op("custom_shader")->variadic());
  EXPECT_FALSE(find_op("relu")->accepts_dtype(DType::kI64));
  EXPECT_TRUE(find_op("relu")->accepts_dtype(DType::kI8));
}

TEST_F(Infer, PredicatesAndLogicalOpsGiveBool) {
  ValueId x = in(DType::kF16, {2, 3});
  EXPECT_EQ(dtype_of("isnan", {x}), DType::kBool);
  EXPECT_EQ(dtype_of("isinf", {x}), DType::kBool);
  EXPECT_EQ(dtype_of("logical_not", {in(DType::kI64, {4})}), DType::kBool);
  ValueId a = in(DType::kI32, {4, 1});
  ValueId b = in(DType::kI32, {3});
  EXPECT_EQ(dtype_of("logical_xor", {a, b}), DType::kBool);
  EXPECT_EQ(shape_of("logical_and", {a, b}), (Shape{4, 3}));
  EXPECT_EQ(dtype_of("bitwise_or", {a, b}), DType::kI32);
  EXPECT_EQ(dtype_of("floor_divide", {a, b}), DType::kI32);
  EXPECT_MENTIONS(error_of("bitwise_not", {x}), "input 0 (x 'v0') has dtype f16, but bitwise_not accepts i32, i64, bool");
  EXPECT_MENTIONS(error_of("atan2", {a, b}), "has dtype i32");
  EXPECT_MENTIONS(error_of("remainder", {in(DType::kI8, {2}), in(DType::kI8, {2})}), "has dtype i8");
}

TEST_F(Infer, ArgReduceGivesI64AndChecksItsAttributes) {
  ValueId x = in(DType::kF32, {2, 5, 3});
  EXPECT_EQ(dtype_of("argmax", {x}, {{"axis", int64_t{1}}}), DType::kI64);
  EXPECT_EQ(shape_of("argmax", {x}, {{"axis", int64_t{1}}}), (Shape{2, 3}));
  EXPECT_EQ(shape_of("argmin", {x}, {{"axis", int64_t{-1}}, {"keepdim", int64_t{1}}}), (Shape{2, 5, 1}));
  EXPECT_MENTIONS(error_of("argmax", {x}, {{"axis", int64_t{3}}}), "attribute 'axis' = 3 is out of range");
  EXPECT_MENTIONS(error_of("argmax", {x}, {{"axis", 1.0}}), "attribute 'axis' must be int, got float");
  EXPECT_MENTIONS(error_of("argmin", {x}, {{"axis", int64_t{0}}, {"keepdim", int64_t{3}}}), "attribute 'keepdim'");
  EXPECT_MENTIONS(error_of("argmin", {x}, {{"axes", Ints{0}}}), "unknown attribute 'axes'");
  EXPECT_MENTIONS(error_of("argmax", {in(DType::kBool, {3})}, {{"axis", int64_t{0}}}), "has dtype bool");
  EXPECT_EQ(shape_of("cumsum", {x}, {{"axis", int64_t{2}}}), (Shape{2, 5, 3}));
  EXPECT_MENTIONS(error_of("cumsum", {x}, {{"axis", int64_t{-4}}}), "attribute 'axis' = -4");
  EXPECT_MENTIONS(error_of("reduce_all", {x}, {{"axes", Ints{0}}}), "accepts bool");
  EXPECT_EQ(shape_of("reduce_prod", {x}, {{"axes", Ints{0, 2}}}), (Shape{5}));
}

TEST_F(Infer, UnaryKeepsDtypeAndShape) {
  ValueId x = in(DType::kF16, {2, 3, 5});
  for (const char* op : {"exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh", "sigmoid", "erf", "floor",
                         "ceil", "abs", "neg", "relu", "gelu", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                         "acosh", "atanh", "expm1", "log1p", "round", "trunc", "sign"}) {
    auto r = run(op, {x});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status().message();
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0].shape, (Shape{2, 3, 5})) << op;
    EXPECT_EQ((*r)[0].dtype, DType::kF16) << op;
    EXPECT_EQ((*r)[0].name, "n0:0");
  }
}

TEST_F(Infer, UnaryIntegerDtypesOnlyWhereAllowed) {
  ValueId i = in(DType::kI32, {4});
  ValueId b = in(DType::kI8, {4});
  for (const char* op : {"abs", "neg", "relu"}) {
    EXPECT_EQ(dtype_of(op, {i}), DType::kI32) << op;
    EXPECT_EQ(dtype_of(op, {b}), DType::kI8) << op;
  }
  std::string m = error_of("sin", {i});
  EXPECT_MENTIONS(m, "dtype i32");
  EXPECT_MENTIONS(m, "f32, f16");
  error_of("relu", {in(DType::kI64, {4})});
  error_of("exp", {in(DType::kBool, {4})});
}

TEST_F(Infer, GeluApproximateIsChecked) {
  ValueId x = f32({3});
  EXPECT_EQ(shape_of("gelu", {x}, {{"approximate", std::string("tanh")}}), (Shape{3}));
  EXPECT_MENTIONS(error_of("gelu", {x}, {{"approximate", std::string("fast")}}), "'approximate'");
  EXPECT_MENTIONS(error_of("gelu", {x}, {{"approximate", int64_t{1}}}), "must be string, got int");
}

TEST_F(Infer, BinaryBroadcastsLikeNumpy) {
  EXPECT_EQ(shape_of("add", {f32({2, 1, 5}), f32({3, 1})}), (Shape{2, 3, 5}));
  EXPECT_EQ(shape_of("mul", {f32({}), f32({4, 7})}), (Shape{4, 7}));
  EXPECT_EQ(shape_of("sub", {f32({7}), f32({1})}), (Shape{7}));
  EXPECT_EQ(shape_of("maximum", {f32({1, 3}), f32({5, 1, 1})}), (Shape{5, 1, 3}));
  EXPECT_EQ(shape_of("div", {f32({0, 3}), f32({1, 3})}), (Shape{0, 3}));
  EXPECT_EQ(shape_of("pow", {f32({2, 2}), f32({2, 2})}), (Shape{2, 2}));
  EXPECT_EQ(dtype_of("minimum", {in(DType::kI64, {2}), in(DType::kI64, {2})}), DType::kI64);
  std::string m = error_of("add", {f32({2, 3}), f32({4, 3})});
  EXPECT_MENTIONS(m, "[2,3]");
  EXPECT_MENTIONS(m, "[4,3]");
}

TEST_F(Infer, BinaryNeedsMatchingDtypes) {
  std::string m = error_of("add", {f32({2}), in(DType::kF16, {2})});
  EXPECT_MENTIONS(m, "input 1");
  EXPECT_MENTIONS(m, "f16");
  error_of("div", {in(DType::kI32, {2}), in(DType::kI32, {2})});
  error_of("add", {in(DType::kBool, {2}), in(DType::kBool, {2})});
}

TEST_F(Infer, ComparisonsGiveBool) {
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
    auto r = run(op, {f32({3, 1}), f32({1, 4})});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status().message();
    EXPECT_EQ((*r)[0].dtype, DType::kBool) << op;
    EXPECT_EQ((*r)[0].shape, (Shape{3, 4})) << op;
  }
  EXPECT_EQ(dtype_of("equal", {in(DType::kBool, {2}), in(DType::kBool, {2})}), DType::kBool);
  error_of("less", {in(DType::kBool, {2}), in(DType::kBool, {2})});
}

TEST_F(Infer, ClampChecksBounds) {
  ValueId x = f32({2, 2});
  EXPECT_EQ(shape_of("clamp", {x}), (Shape{2, 2}));
  EXPECT_EQ(shape_of("clamp", {x}, {{"min", 0.0}}), (Shape{2, 2}));
  EXPECT_EQ(shape_of("clamp", {x}, {{"min", -1.0}, {"max", 1.0}}), (Shape{2, 2}));
  EXPECT_MENTIONS(error_of("clamp", {x}, {{"min", 2.0}, {"max", 1.0}}), "'min'");
  EXPECT_MENTIONS(error_of("clamp", {x}, {{"max", int64_t{6}}}), "attribute 'max' must be float, got int");
}

TEST_F(Infer, WhereBroadcastsAllThree) {
  ValueId cond = in(DType::kBool, {4, 1});
  EXPECT_EQ(shape_of("where", {cond, f32({1, 5}), f32({5})}), (Shape{4, 5}));
  EXPECT_MENTIONS(error_of("where", {f32({4, 1}), f32({5}), f32({5})}), "input 0 (cond");
  EXPECT_MENTIONS(error_of("where", {cond, f32({5}), in(DType::kI32, {5})}), "input 2");
  error_of("where", {cond, f32({3}), f32({5})});
}

TEST_F(Infer, CastProducesTheNamedDtype) {
  ValueId x = f32({2, 3});
  EXPECT_EQ(dtype_of("cast", {x}, {{"dtype", std::string("i8")}}), DType::kI8);
  EXPECT_EQ(shape_of("cast", {x}, {{"dtype", std::string("bool")}}), (Shape{2, 3}));
  EXPECT_MENTIONS(error_of("cast", {x}, {{"dtype", std::string("float64")}}), "float64");
  EXPECT_MENTIONS(error_of("cast", {x}), "attribute 'dtype' (string) is required but missing");
}

TEST_F(Infer, MatmulBroadcastsBatchDims) {
  EXPECT_EQ(shape_of("matmul", {f32({3, 4}), f32({4, 5})}), (Shape{3, 5}));
  EXPECT_EQ(shape_of("matmul", {f32({2, 1, 3, 4}), f32({7, 4, 6})}), (Shape{2, 7, 3, 6}));
  EXPECT_MENTIONS(error_of("matmul", {f32({3, 4}), f32({5, 6})}), "K=4");
  EXPECT_MENTIONS(error_of("matmul", {f32({4}), f32({4, 5})}), "rank >= 2");
  error_of("matmul", {f32({2, 3, 4}), f32({3, 4, 5})});
}

TEST_F(Infer, LinearWithAndWithoutBias) {
  ValueId x = f32({2, 7, 16});
  ValueId w = f32({10, 16});
  EXPECT_EQ(shape_of("linear", {x, w}), (Shape{2, 7, 10}));
  EXPECT_EQ(shape_of("linear", {x, w, f32({10})}), (Shape{2, 7, 10}));
  EXPECT_EQ(shape_of("linear", {x, w, kNone}), (Shape{2, 7, 10}));
  EXPECT_MENTIONS(error_of("linear", {x, w, f32({16})}), "input 2 (bias");
  EXPECT_MENTIONS(error_of("linear", {x, f32({16, 10})}), "input 1 (weight");
}

TEST_F(Infer, Conv2dOutputSizes) {
  ValueId x = f32({1, 3, 17, 9});
  EXPECT_EQ(shape_of("conv2d", {x, f32({8, 3, 3, 3})}), (Shape{1, 8, 15, 7}));
  EXPECT_EQ(shape_of("conv2d", {x, f32({8, 3, 3, 3}), f32({8})},
                     {{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}}),
            (Shape{1, 8, 9, 5}));
  EXPECT_EQ(shape_of("conv2d", {x, f32({4, 3, 3, 2})}, {{"dilation", Ints{2, 3}}, {"stride", Ints{3, 1}}}),
            (Shape{1, 4, 5, 6}));
  // Depthwise: groups == channels, weight [C*M, 1, kH, kW].
  EXPECT_EQ(shape_of("conv2d", {x, f32({6, 1, 3, 3})}, {{"groups", int64_t{3}}, {"padding", Ints{1, 1}}}),
            (Shape{1, 6, 17, 9}));
}

TEST_F(Infer, Conv2dRefusals) {
  ValueId x = f32({1, 4, 8, 8});
  EXPECT_MENTIONS(error_of("conv2d", {x, f32({8, 3, 3, 3})}), "input 1 (weight");
  EXPECT_MENTIONS(error_of("conv2d", {x, f32({8, 2, 3, 3})}, {{"groups", int64_t{3}}}), "'groups'");
  EXPECT_MENTIONS(error_of("conv2d", {x, f32({8, 4, 3, 3}), f32({4})}), "input 2 (bias");
  EXPECT_MENTIONS(error_of("conv2d", {x, f32({8, 4, 3, 3})}, {{"stride", Ints{0, 1}}}), "'stride'");
  EXPECT_MENTIONS(error_of("conv2d", {x, f32({8, 4, 3, 3})}, {{"padding", Ints{1}}}), "'padding' must have 2");
  EXPECT_MENTIONS(error_of("conv2d", {x, f32({8, 4, 9, 3})}), "height window");
  EXPECT_MENTIONS(error_of("conv2d", {f32({4, 8, 8}), f32({8, 4, 3, 3})}), "input 0 (x");
  EXPECT_MENTIONS(error_of("conv2d", {x}), "takes 2 to 3 inputs, got 1");
  EXPECT_MENTIONS(error_of("conv2d", {kNone, f32({8, 4, 3, 3})}), "input 0 (x) is required");
}

TEST_F(Infer, AvgPoolDefaultsStrideToKernel) {
  ValueId x = f32({1, 3, 8, 8});
  EXPECT_EQ(shape_of("avg_pool2d", {x}, {{"kernel", Ints{2, 2}}}), (Shape{1, 3, 4, 4}));
  EXPECT_EQ(shape_of("avg_pool2d", {f32({2, 5, 7, 9})}, {{"kernel", Ints{3, 2}}, {"stride", Ints{1, 2}}}),
            (Shape{2, 5, 5, 4}));
  EXPECT_EQ(shape_of("avg_pool2d", {f32({1, 1, 7, 7})}, {{"kernel", Ints{2, 2}}, {"padding", Ints{1, 1}}}),
            (Shape{1, 1, 4, 4}));
  EXPECT_MENTIONS(error_of("avg_pool2d", {x}), "attribute 'kernel' (ints) is required but missing");
  EXPECT_MENTIONS(error_of("avg_pool2d", {x}, {{"kernel", Ints{2, 2}}, {"padding", Ints{2, 0}}}), "'padding'");
  EXPECT_MENTIONS(error_of("avg_pool2d", {x}, {{"kernel", Ints{2, 2}}, {"count_include_pad", int64_t{2}}}),
                  "'count_include_pad'");
  EXPECT_MENTIONS(error_of("avg_pool2d", {x}, {{"kernel", Ints{2, 2}}, {"dilation", Ints{1, 1}}}),
                  "unknown attribute 'dilation'");
}

TEST_F(Infer, PoolCeilModeMatchesTorch) {
  // torch: avg_pool2d(8x8, k=3, s=2, ceil_mode) -> 4x4; floor -> 3x3.
  ValueId x = f32({1, 1, 8, 8});
  EXPECT_EQ(shape_of("avg_pool2d", {x}, {{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}}), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(shape_of("avg_pool2d", {x}, {{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}),
            (Shape{1, 1, 4, 4}));
  // torch: 5x5, k=2, s=2, pad=1, ceil_mode -> 3x3 (a window starting in the right padding is dropped).
  EXPECT_EQ(shape_of("max_pool2d", {f32({1, 1, 5, 5})},
                     {{"kernel", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"ceil_mode", int64_t{1}}}),
            (Shape{1, 1, 3, 3}));
  // torch: a 2-high input, k=3, s=3 with ceil_mode still gives one window; without it, none.
  ValueId small = f32({1, 1, 2, 6});
  EXPECT_EQ(shape_of("avg_pool2d", {small}, {{"kernel", Ints{3, 3}}, {"ceil_mode", int64_t{1}}}), (Shape{1, 1, 1, 2}));
  EXPECT_MENTIONS(error_of("avg_pool2d", {small}, {{"kernel", Ints{3, 3}}}), "height window");
}

TEST_F(Infer, MaxPoolWithDilation) {
  ValueId x = f32({1, 2, 10, 10});
  EXPECT_EQ(shape_of("max_pool2d", {x}, {{"kernel", Ints{3, 3}}, {"stride", Ints{1, 1}}, {"dilation", Ints{2, 2}}}),
            (Shape{1, 2, 6, 6}));
  EXPECT_EQ(dtype_of("max_pool2d", {in(DType::kI8, {1, 1, 4, 4})}, {{"kernel", Ints{2, 2}}}), DType::kI8);
  EXPECT_MENTIONS(error_of("max_pool2d", {x}, {{"kernel", Ints{11, 1}}}), "height window");
  EXPECT_MENTIONS(error_of("max_pool2d", {x}, {{"kernel", Ints{2}}}), "'kernel' must have 2 entries");
  // torch bounds the padding by half the kernel, not half the dilated window.
  EXPECT_MENTIONS(error_of("max_pool2d", {x}, {{"kernel", Ints{3, 3}}, {"padding", Ints{2, 0}}, {"dilation", Ints{2, 2}}}),
                  "'padding' entry 0 = 2");
}

// ---- conv3d, conv_transpose2d, 3-D pools, resize, pad modes, expand, flip ----
// Expected shapes from torch's formulas (checked against torch.nn.functional by hand).

TEST_F(Infer, Conv3dOutputSizes) {
  ValueId x = f32({2, 4, 7, 9, 8});
  // out = floor((in + 2p - d*(k-1) - 1) / s) + 1 per dim.
  EXPECT_EQ(shape_of("conv3d", {x, f32({6, 4, 3, 3, 3})}), (Shape{2, 6, 5, 7, 6}));
  EXPECT_EQ(shape_of("conv3d", {x, f32({6, 2, 3, 2, 3}), f32({6})},
                     {{"stride", Ints{2, 1, 3}}, {"padding", Ints{1, 0, 2}}, {"dilation", Ints{1, 2, 1}},
                      {"groups", int64_t{2}}}),
            (Shape{2, 6, 4, 7, 4}));
  EXPECT_MENTIONS(error_of("conv3d", {x, f32({6, 3, 3, 3, 3})}), "input 1 (weight");
  EXPECT_MENTIONS(error_of("conv3d", {x, f32({6, 4, 3, 3, 3})}, {{"stride", Ints{1, 1}}}), "'stride' must have 3");
  EXPECT_MENTIONS(error_of("conv3d", {x, f32({6, 4, 3, 3, 3}), f32({4})}), "input 2 (bias");
  EXPECT_MENTIONS(error_of("conv3d", {x, f32({6, 4, 8, 3, 3})}), "depth window");
  EXPECT_MENTIONS(error_of("conv3d", {f32({2, 4, 7, 9}), f32({6, 4, 3, 3, 3})}), "must have rank 5");
}

TEST_F(Infer, ConvTranspose2dOutputSizes) {
  ValueId x = f32({1, 4, 5, 6});
  // H = (H-1)*s - 2p + d*(k-1) + op + 1: (5-1)*2 - 2 + 1*2 + 1 + 1 = 10; (6-1)*3 - 0 + 2*1 + 2 + 1 = 20.
  EXPECT_EQ(shape_of("conv_transpose2d", {x, f32({4, 3, 3, 2})},
                     {{"stride", Ints{2, 3}}, {"padding", Ints{1, 0}}, {"output_padding", Ints{1, 2}},
                      {"dilation", Ints{1, 2}}}),
            (Shape{1, 3, 10, 20}));
  // groups 2: weight [C_in, C_out/groups, ...], 2 * 3 = 6 output channels.
  EXPECT_EQ(shape_of("conv_transpose2d", {x, f32({4, 3, 3, 3}), f32({6})}, {{"groups", int64_t{2}}}),
            (Shape{1, 6, 7, 8}));
  EXPECT_MENTIONS(error_of("conv_transpose2d", {x, f32({3, 3, 3, 3})}), "dim 0 = input channels");
  EXPECT_MENTIONS(error_of("conv_transpose2d", {x, f32({4, 3, 3, 3})}, {{"stride", Ints{2, 2}}, {"output_padding", Ints{2, 0}}}),
                  "'output_padding' entry 0 = 2 must be smaller than the stride");
  EXPECT_MENTIONS(error_of("conv_transpose2d", {x, f32({4, 3, 3, 3}), f32({4})}), "input 2 (bias");
  EXPECT_MENTIONS(error_of("conv_transpose2d", {x, f32({4, 3, 1, 1})}, {{"padding", Ints{3, 0}}}), "not positive");
  EXPECT_MENTIONS(error_of("conv_transpose2d", {x, f32({4, 3, 3, 3})}, {{"groups", int64_t{3}}}), "'groups'");
}

TEST_F(Infer, Pool3dFollowsTorch) {
  ValueId x = f32({1, 2, 5, 6, 7});
  // stride defaults to the kernel; ceil_mode keeps a last window starting inside the input (or left padding).
  EXPECT_EQ(shape_of("avg_pool3d", {x}, {{"kernel", Ints{2, 2, 2}}}), (Shape{1, 2, 2, 3, 3}));
  EXPECT_EQ(shape_of("avg_pool3d", {x}, {{"kernel", Ints{2, 2, 2}}, {"ceil_mode", int64_t{1}}}), (Shape{1, 2, 3, 3, 4}));
  EXPECT_EQ(shape_of("max_pool3d", {x},
                     {{"kernel", Ints{3, 2, 3}}, {"stride", Ints{2, 2, 2}}, {"padding", Ints{1, 1, 1}},
                      {"dilation", Ints{1, 2, 2}}, {"ceil_mode", int64_t{1}}}),
            (Shape{1, 2, 3, 4, 3}));
  EXPECT_MENTIONS(error_of("avg_pool3d", {x}, {{"kernel", Ints{2, 2, 2}}, {"padding", Ints{0, 2, 0}}}),
                  "more than half the kernel");
  EXPECT_MENTIONS(error_of("max_pool3d", {x}, {{"kernel", Ints{2, 2}}}), "'kernel' must have 3");
  EXPECT_MENTIONS(error_of("max_pool3d", {x}, {{"kernel", Ints{2, 2, 9}}}), "width window");
}

TEST_F(Infer, ResizeTakesSizeAndChecksModes) {
  ValueId x = f32({1, 3, 4, 5});
  EXPECT_EQ(shape_of("resize", {x}, {{"size", Ints{8, 3}}}), (Shape{1, 3, 8, 3}));
  EXPECT_EQ(shape_of("resize", {x}, {{"size", Ints{10, 12}}, {"mode", std::string("bilinear")},
                                     {"align_corners", int64_t{1}}}),
            (Shape{1, 3, 10, 12}));
  EXPECT_EQ(shape_of("resize", {x}, {{"size", Ints{10, 12}}, {"scales", std::vector<double>{2.5, 2.5}}}),
            (Shape{1, 3, 10, 12}));
  EXPECT_MENTIONS(error_of("resize", {x}, {{"size", Ints{8}}}), "'size' must have 2");
  EXPECT_MENTIONS(error_of("resize", {x}, {{"size", Ints{8, 0}}}), "'size' entry 1 = 0");
  EXPECT_MENTIONS(error_of("resize", {x}, {{"size", Ints{8, 8}}, {"mode", std::string("bicubic")}}), "'mode'");
  EXPECT_MENTIONS(error_of("resize", {x}, {{"size", Ints{8, 8}}, {"align_corners", int64_t{1}}}),
                  "\"bilinear\" only");
  EXPECT_MENTIONS(error_of("resize", {x}, {{"size", Ints{8, 8}}, {"scales", std::vector<double>{2.0, 0.0}}}),
                  "'scales' entry 1");
  EXPECT_MENTIONS(error_of("resize", {f32({3, 4, 5})}, {{"size", Ints{8, 8}}}), "must have rank 4");
}

TEST_F(Infer, GridSampleTakesItsShapeFromTheGridAndNamesEachProblem) {
  ValueId x = f32({2, 3, 5, 7});                                    // v0
  ValueId wide = f32({2, 4, 6, 3}), flat = f32({2, 4, 2});          // v1, v2
  EXPECT_EQ(shape_of("grid_sample", {x, f32({2, 4, 6, 2})}), (Shape{2, 3, 4, 6}));
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      EXPECT_EQ(shape_of("grid_sample", {x, f32({2, 1, 9, 2})},
                         {{"mode", std::string(mode)}, {"padding_mode", std::string(padding)},
                          {"align_corners", int64_t{1}}}),
                (Shape{2, 3, 1, 9}));
    }
  }
  EXPECT_MENTIONS(error_of("grid_sample", {x, wide}),
                  "input 1 (grid 'v1') [2,4,6,3] must be [N, Ho, Wo, 2] (an x and a y per point), but its last dim is 3");
  EXPECT_MENTIONS(error_of("grid_sample", {x, flat}), "input 1 (grid 'v2') must have rank 4");
  EXPECT_MENTIONS(error_of("grid_sample", {x, f32({1, 4, 6, 2})}),
                  "has batch 1 but input 0 (x 'v0') [2,3,5,7] has batch 2");
  EXPECT_EQ(error_of("grid_sample", {x, f32({2, 4, 6, 2})}, {{"mode", std::string("area")}}),
            "node 'n0' (grid_sample): attribute 'mode' must be \"bilinear\", \"nearest\" or \"bicubic\", got "
            "\"area\"");
  EXPECT_MENTIONS(error_of("grid_sample", {x, f32({2, 4, 6, 2})}, {{"padding_mode", std::string("wrap")}}),
                  "attribute 'padding_mode' must be \"zeros\", \"border\" or \"reflection\", got \"wrap\"");
  EXPECT_MENTIONS(error_of("grid_sample", {x, f32({2, 4, 6, 2})}, {{"align_corners", int64_t{2}}}),
                  "'align_corners' = 2 is out of range");
  EXPECT_MENTIONS(error_of("grid_sample", {x, in(DType::kF16, {2, 4, 6, 2})}), "they must match");
  EXPECT_MENTIONS(error_of("grid_sample", {f32({2, 3, 0, 7}), f32({2, 4, 6, 2})}), "empty height or width");
}

TEST_F(Infer, PadModesKeepTorchLimits) {
  ValueId x = f32({2, 3, 4});
  EXPECT_EQ(shape_of("pad", {x}, {{"pads", Ints{0, 0, 2, 2, 3, 1}}, {"mode", std::string("reflect")}}),
            (Shape{2, 7, 8}));
  EXPECT_EQ(shape_of("pad", {x}, {{"pads", Ints{0, 0, 3, 0, 4, 4}}, {"mode", std::string("circular")}}),
            (Shape{2, 6, 12}));
  EXPECT_EQ(shape_of("pad", {x}, {{"pads", Ints{9, 9, 0, 0, 0, 0}}, {"mode", std::string("replicate")}}),
            (Shape{20, 3, 4}));
  EXPECT_MENTIONS(error_of("pad", {x}, {{"pads", Ints{0, 0, 3, 0, 0, 0}}, {"mode", std::string("reflect")}}),
                  "allows at most 2");
  EXPECT_MENTIONS(error_of("pad", {x}, {{"pads", Ints{0, 0, 0, 0, 0, 5}}, {"mode", std::string("circular")}}),
                  "allows at most 4");
  EXPECT_MENTIONS(error_of("pad", {x}, {{"pads", Ints{0, 0, 0, 0, 0, 1}}, {"mode", std::string("edge")}}), "'mode'");
  EXPECT_MENTIONS(error_of("pad", {x}, {{"pads", Ints{0, 0, 0, 0, 0, 1}}, {"mode", std::string("reflect")}, {"value", 1.0}}),
                  "'value' applies to mode \"constant\" only");
  EXPECT_MENTIONS(error_of("pad", {f32({0, 2})}, {{"pads", Ints{1, 0, 0, 0}}, {"mode", std::string("replicate")}}),
                  "allows at most 0");
}

TEST_F(Infer, ExpandBroadcastsLikeTorch) {
  ValueId x = f32({3, 1});
  EXPECT_EQ(shape_of("expand", {x}, {{"shape", Ints{2, 3, 4}}}), (Shape{2, 3, 4}));
  EXPECT_EQ(shape_of("expand", {x}, {{"shape", Ints{-1, 5}}}), (Shape{3, 5}));
  EXPECT_EQ(shape_of("expand", {x}, {{"shape", Ints{0, 3, 1}}}), (Shape{0, 3, 1}));
  EXPECT_MENTIONS(error_of("expand", {x}, {{"shape", Ints{4, 4}}}), "dim 0 is 3");
  EXPECT_MENTIONS(error_of("expand", {x}, {{"shape", Ints{5}}}), "fewer dims");
  EXPECT_MENTIONS(error_of("expand", {x}, {{"shape", Ints{-1, 3, 1}}}), "not a valid new dim");
}

TEST_F(Infer, FlipKeepsShape) {
  ValueId x = in(DType::kI8, {2, 3, 4});
  EXPECT_EQ(shape_of("flip", {x}, {{"axes", Ints{0, -1}}}), (Shape{2, 3, 4}));
  EXPECT_EQ(dtype_of("flip", {x}, {{"axes", Ints{1}}}), DType::kI8);
  EXPECT_MENTIONS(error_of("flip", {x}, {{"axes", Ints{2, -1}}}), "names axis 2 twice");
  EXPECT_MENTIONS(error_of("flip", {x}, {{"axes", Ints{3}}}), "out of range");
}

TEST_F(Infer, ReductionsWithNegativeAxesAndKeepdim) {
  ValueId x = f32({2, 3, 4, 5});
  EXPECT_EQ(shape_of("reduce_sum", {x}, {{"axes", Ints{1, -1}}}), (Shape{2, 4}));
  EXPECT_EQ(shape_of("reduce_mean", {x}, {{"axes", Ints{-3}}, {"keepdim", int64_t{1}}}), (Shape{2, 1, 4, 5}));
  EXPECT_EQ(shape_of("reduce_max", {x}, {{"axes", Ints{0, 1, 2, 3}}}), (Shape{}));
  EXPECT_EQ(dtype_of("reduce_max", {in(DType::kI8, {3})}, {{"axes", Ints{0}}}), DType::kI8);
  EXPECT_MENTIONS(error_of("reduce_sum", {x}, {{"axes", Ints{4}}}), "'axes' entry 0 = 4");
  EXPECT_MENTIONS(error_of("reduce_sum", {x}, {{"axes", Ints{1, -3}}}), "twice");
  EXPECT_MENTIONS(error_of("reduce_sum", {x}, {{"axes", Ints{}}}), "at least one");
  EXPECT_MENTIONS(error_of("reduce_sum", {x}), "'axes' (ints) is required");
  error_of("reduce_mean", {in(DType::kI32, {3})}, {{"axes", Ints{0}}});
}

TEST_F(Infer, SoftmaxAndLayerNorm) {
  ValueId x = f32({2, 6, 8});
  EXPECT_EQ(shape_of("softmax", {x}, {{"axis", int64_t{-1}}}), (Shape{2, 6, 8}));
  EXPECT_MENTIONS(error_of("softmax", {x}, {{"axis", int64_t{3}}}), "'axis' = 3 is out of range for rank 3");
  EXPECT_EQ(shape_of("layer_norm", {x}, {{"normalized_ndim", int64_t{1}}}), (Shape{2, 6, 8}));
  EXPECT_EQ(shape_of("layer_norm", {x, f32({6, 8}), f32({6, 8})}, {{"normalized_ndim", int64_t{2}}, {"eps", 1e-6}}),
            (Shape{2, 6, 8}));
  EXPECT_EQ(shape_of("layer_norm", {x, kNone, f32({8})}, {{"normalized_ndim", int64_t{1}}}), (Shape{2, 6, 8}));
  EXPECT_MENTIONS(error_of("layer_norm", {x, f32({6, 8})}, {{"normalized_ndim", int64_t{1}}}), "input 1 (weight");
  EXPECT_MENTIONS(error_of("layer_norm", {x}, {{"normalized_ndim", int64_t{4}}}), "'normalized_ndim'");
  EXPECT_MENTIONS(error_of("layer_norm", {x}, {{"normalized_ndim", int64_t{1}}, {"eps", -1.0}}), "'eps'");
}

TEST_F(Infer, AttentionShapesWithGroupedHeadsAndMasks) {
  const char* sdpa = "scaled_dot_product_attention";
  // q [B, Hq, L, E], k [B, Hkv, S, E], v [B, Hkv, S, Ev]: output [B, Hq, L, Ev].
  EXPECT_EQ(shape_of(sdpa, {f32({2, 4, 5, 8}), f32({2, 4, 7, 8}), f32({2, 4, 7, 3})}), (Shape{2, 4, 5, 3}));
  EXPECT_EQ(shape_of(sdpa, {f32({4, 5, 8}), f32({2, 7, 8}), f32({2, 7, 8})}), (Shape{4, 5, 8}));  // GQA, no batch
  EXPECT_EQ(shape_of(sdpa, {f32({2, 3, 4, 5, 8}), f32({2, 3, 1, 7, 8}), f32({2, 3, 1, 7, 8})}, {{"scale", 0.5}}),
            (Shape{2, 3, 4, 5, 8}));
  EXPECT_EQ(shape_of(sdpa, {f32({2, 4, 5, 8}), f32({2, 4, 5, 8}), f32({2, 4, 5, 8})}, {{"is_causal", int64_t{1}}}),
            (Shape{2, 4, 5, 8}));
  // Masks: bool or q's dtype, broadcast to [B, Hq, L, S].
  ValueId q = f32({2, 4, 5, 8}), k = f32({2, 4, 7, 8}), v = f32({2, 4, 7, 8});
  EXPECT_EQ(shape_of(sdpa, {q, k, v, in(DType::kBool, {5, 7})}), (Shape{2, 4, 5, 8}));
  EXPECT_EQ(shape_of(sdpa, {q, k, v, f32({2, 1, 1, 7})}), (Shape{2, 4, 5, 8}));
  EXPECT_EQ(shape_of(sdpa, {q, k, v, f32({2, 4, 5, 7})}), (Shape{2, 4, 5, 8}));
  EXPECT_EQ(dtype_of(sdpa, {in(DType::kF16, {1, 2, 3}), in(DType::kF16, {1, 4, 3}), in(DType::kF16, {1, 4, 3}),
                            in(DType::kF16, {2, 4})}),
            DType::kF16);
}

TEST_F(Infer, AttentionRefusalsNameEveryProblem) {
  const char* sdpa = "scaled_dot_product_attention";
  ValueId q = f32({2, 4, 5, 8}), k = f32({2, 4, 7, 8}), v = f32({2, 4, 7, 8});
  EXPECT_MENTIONS(error_of(sdpa, {f32({5, 8}), k, v}), "must have rank >= 3 ([..., heads, sequence, head dim])");
  EXPECT_MENTIONS(error_of(sdpa, {q, f32({4, 7, 8}), v}), "must have the same rank");
  EXPECT_MENTIONS(error_of(sdpa, {q, f32({3, 4, 7, 8}), f32({3, 4, 7, 8})}), "batch dims");
  EXPECT_MENTIONS(error_of(sdpa, {q, f32({2, 3, 7, 8}), f32({2, 3, 7, 8})}), "q's 4 heads are not a multiple of k's 3");
  EXPECT_MENTIONS(error_of(sdpa, {q, k, f32({2, 2, 7, 8})}), "k has 4 heads but v has 2");
  EXPECT_MENTIONS(error_of(sdpa, {q, k, f32({2, 4, 6, 8})}), "k has 7 keys (dim -2) but v has 6");
  EXPECT_MENTIONS(error_of(sdpa, {q, f32({2, 4, 7, 9}), v}), "k's head dim 9 differs from q's 8");
  EXPECT_MENTIONS(error_of(sdpa, {f32({1, 2, 0}), f32({1, 2, 0}), f32({1, 2, 0})}), "head dim of q (dim -1) is 0");
  EXPECT_MENTIONS(error_of(sdpa, {q, in(DType::kF16, {2, 4, 7, 8}), v}), "input 1 (k 'v");
  EXPECT_MENTIONS(error_of(sdpa, {in(DType::kI32, {2, 4, 5, 8}), k, v}), "input 0 (q");
  EXPECT_MENTIONS(error_of(sdpa, {q, k, v, in(DType::kF16, {5, 7})}), "it must be bool (true: attend) or q's dtype");
  EXPECT_MENTIONS(error_of(sdpa, {q, k, v, f32({5, 6})}), "[5,6] does not broadcast to the scores [2,4,5,7]");
  EXPECT_MENTIONS(error_of(sdpa, {q, k, v, f32({3, 2, 4, 5, 7})}), "does not broadcast");
  EXPECT_MENTIONS(error_of(sdpa, {q, k, v, in(DType::kBool, {5, 7})}, {{"is_causal", int64_t{1}}}),
                  "'is_causal' = 1 and an attn_mask are exclusive");
  EXPECT_MENTIONS(error_of(sdpa, {q, k, v}, {{"is_causal", int64_t{2}}}), "'is_causal' = 2 must be 0 or 1");
  EXPECT_MENTIONS(error_of(sdpa, {q, k, v}, {{"scale", std::nan("")}}), "'scale' = nan must be finite");
  EXPECT_MENTIONS(error_of(sdpa, {q, k, v}, {{"scale", int64_t{1}}}), "attribute 'scale' must be float, got int");
  // Several problems at once: each is named.
  std::string many = error_of(sdpa, {q, f32({2, 3, 6, 9}), f32({2, 3, 7, 8})});
  EXPECT_MENTIONS(many, "not a multiple of k's 3");
  EXPECT_MENTIONS(many, "k has 6 keys (dim -2) but v has 7");
  EXPECT_MENTIONS(many, "k's head dim 9 differs");
}

TEST_F(Infer, TransposeAndReshape) {
  ValueId x = f32({2, 3, 5});
  EXPECT_EQ(shape_of("transpose", {x}, {{"perm", Ints{2, 0, 1}}}), (Shape{5, 2, 3}));
  EXPECT_MENTIONS(error_of("transpose", {x}, {{"perm", Ints{0, 0, 1}}}), "not a permutation");
  EXPECT_MENTIONS(error_of("transpose", {x}, {{"perm", Ints{1, 0}}}), "'perm'");
  EXPECT_EQ(shape_of("reshape", {x}, {{"shape", Ints{6, -1}}}), (Shape{6, 5}));
  EXPECT_EQ(shape_of("reshape", {x}, {{"shape", Ints{30}}}), (Shape{30}));
  EXPECT_EQ(shape_of("reshape", {f32({1})}, {{"shape", Ints{}}}), (Shape{}));
  EXPECT_MENTIONS(error_of("reshape", {x}, {{"shape", Ints{-1, -1}}}), "more than one -1");
  EXPECT_MENTIONS(error_of("reshape", {x}, {{"shape", Ints{7, -1}}}), "cannot hold the 30 elements");
  EXPECT_MENTIONS(error_of("reshape", {x}, {{"shape", Ints{29}}}), "has 29 elements");
  EXPECT_MENTIONS(error_of("reshape", {x}, {{"shape", Ints{-2, 15}}}), "entry 0 = -2");
}

TEST_F(Infer, SliceClampsAndWraps) {
  ValueId x = f32({10, 8, 6});
  EXPECT_EQ(shape_of("slice", {x}, {{"axes", Ints{0}}, {"starts", Ints{2}}, {"ends", Ints{7}}}), (Shape{5, 8, 6}));
  // Negative start wraps (-3 -> 5), end clamps (100 -> 8), step 2: 5, 7 -> 2 elements.
  EXPECT_EQ(shape_of("slice", {x},
                     {{"axes", Ints{-2}}, {"starts", Ints{-3}}, {"ends", Ints{100}}, {"steps", Ints{2}}}),
            (Shape{10, 2, 6}));
  EXPECT_EQ(shape_of("slice", {x},
                     {{"axes", Ints{0, 2}}, {"starts", Ints{0, 1}}, {"ends", Ints{INT64_MAX, 6}}, {"steps", Ints{3, 2}}}),
            (Shape{4, 8, 3}));
  EXPECT_EQ(shape_of("slice", {x}, {{"axes", Ints{0}}, {"starts", Ints{7}}, {"ends", Ints{3}}}), (Shape{0, 8, 6}));
  EXPECT_EQ(shape_of("slice", {x}, {{"axes", Ints{0}}, {"starts", Ints{INT64_MIN}}, {"ends", Ints{-1}}}),
            (Shape{9, 8, 6}));
  EXPECT_MENTIONS(error_of("slice", {x}, {{"axes", Ints{0}}, {"starts", Ints{0}}, {"ends", Ints{1}}, {"steps", Ints{0}}}),
                  "'steps' entry 0 = 0");
  EXPECT_MENTIONS(error_of("slice", {x}, {{"axes", Ints{0, 1}}, {"starts", Ints{0}}, {"ends", Ints{1, 1}}}),
                  "same length");
  EXPECT_MENTIONS(error_of("slice", {x}, {{"axes", Ints{3}}, {"starts", Ints{0}}, {"ends", Ints{1}}}), "'axes'");
}

TEST_F(Infer, ConcatIsVariadic) {
  EXPECT_EQ(shape_of("concat", {f32({2, 3}), f32({2, 4}), f32({2, 1})}, {{"axis", int64_t{-1}}}), (Shape{2, 8}));
  EXPECT_EQ(shape_of("concat", {f32({2, 3})}), (Shape{2, 3}));
  EXPECT_EQ(shape_of("concat", {f32({2, 3}), f32({5, 3})}), (Shape{7, 3}));
  EXPECT_MENTIONS(error_of("concat", {f32({2, 3}), f32({3, 3})}, {{"axis", int64_t{1}}}), "input 1");
  EXPECT_MENTIONS(error_of("concat", {}), "takes 1 or more inputs, got 0");
  EXPECT_MENTIONS(error_of("concat", {f32({2}), in(DType::kI32, {2})}), "input 1");
}

TEST_F(Infer, PadAddsBeforeAndAfter) {
  ValueId x = f32({1, 3, 4});
  EXPECT_EQ(shape_of("pad", {x}, {{"pads", Ints{0, 0, 1, 2, 3, 0}}, {"value", -1.5}}), (Shape{1, 6, 7}));
  EXPECT_MENTIONS(error_of("pad", {x}, {{"pads", Ints{0, 0, 1, 2}}}), "'pads' must have 6 entries");
  EXPECT_MENTIONS(error_of("pad", {x}, {{"pads", Ints{0, 0, -1, 0, 0, 0}}}), "'pads' entry 2 = -1");
}

TEST_F(Infer, GatherFollowsTorch) {
  ValueId x = f32({1, 3, 4, 4});
  EXPECT_EQ(shape_of("gather", {x, in(DType::kI64, {1, 3, 4, 4})}, {{"axis", int64_t{3}}}), (Shape{1, 3, 4, 4}));
  EXPECT_EQ(shape_of("gather", {x, in(DType::kI32, {1, 2, 4, 9})}, {{"axis", int64_t{-1}}}), (Shape{1, 2, 4, 9}));
  EXPECT_MENTIONS(error_of("gather", {x, f32({1, 3, 4, 4})}, {{"axis", int64_t{3}}}), "input 1 (index");
  EXPECT_MENTIONS(error_of("gather", {x, in(DType::kI64, {3, 4, 4})}, {{"axis", int64_t{0}}}), "rank");
  EXPECT_MENTIONS(error_of("gather", {x, in(DType::kI64, {1, 5, 4, 4})}, {{"axis", int64_t{3}}}), "at dim 1");
  EXPECT_MENTIONS(error_of("gather", {x, in(DType::kI64, {1, 3, 4, 4})}), "'axis' (int) is required");
}

TEST_F(Infer, IndexSelectReplacesOneDim) {
  ValueId x = f32({1, 3, 4, 4});
  EXPECT_EQ(shape_of("index_select", {x, in(DType::kI64, {5})}, {{"axis", int64_t{1}}}), (Shape{1, 5, 4, 4}));
  EXPECT_EQ(shape_of("index_select", {x, in(DType::kI32, {2})}, {{"axis", int64_t{-2}}}), (Shape{1, 3, 2, 4}));
  EXPECT_MENTIONS(error_of("index_select", {x, in(DType::kI64, {2, 2})}, {{"axis", int64_t{1}}}), "input 1 (index");
  EXPECT_MENTIONS(error_of("index_select", {x, in(DType::kI8, {2})}, {{"axis", int64_t{1}}}), "dtype i8");
  EXPECT_MENTIONS(error_of("index_select", {x, in(DType::kI64, {2})}, {{"axis", int64_t{4}}}), "'axis' = 4");
}

template <typename T>
Blob blob_of(const std::vector<T>& values) {
  return Blob::copy_of(values.data(), values.size() * sizeof(T));
}

TEST_F(Infer, ScatterKeepsTheInputsShapeAndChecksIndexAndSrc) {
  ValueId x = f32({4, 5});
  ValueId idx = in(DType::kI64, {2, 5});
  EXPECT_EQ(shape_of("scatter", {x, idx, f32({2, 5})}, {{"axis", int64_t{0}}}), (Shape{4, 5}));
  EXPECT_EQ(shape_of("scatter", {x, in(DType::kI32, {4, 9}), f32({4, 9})}, {{"axis", int64_t{-1}}}), (Shape{4, 5}));
  EXPECT_EQ(dtype_of("scatter", {in(DType::kBool, {3}), in(DType::kI32, {2}), in(DType::kBool, {2})},
                     {{"axis", int64_t{0}}}),
            DType::kBool);
  EXPECT_MENTIONS(error_of("scatter", {x, idx, f32({2, 4})}, {{"axis", int64_t{0}}}),
                  "[2,4] must have the shape of input 1 (index 'v1') [2,5]");
  EXPECT_MENTIONS(error_of("scatter", {x, in(DType::kF32, {2, 5}), f32({2, 5})}, {{"axis", int64_t{0}}}),
                  "input 1 (index");
  EXPECT_MENTIONS(error_of("scatter", {x, idx, in(DType::kF16, {2, 5})}, {{"axis", int64_t{0}}}), "they must match");
  EXPECT_MENTIONS(error_of("scatter", {x, in(DType::kI64, {5, 5}), f32({5, 5})}, {{"axis", int64_t{1}}}), "at dim 0");
  EXPECT_MENTIONS(error_of("scatter", {x, in(DType::kI64, {10}), f32({10})}, {{"axis", int64_t{0}}}), "rank");
  EXPECT_MENTIONS(error_of("scatter", {x, idx, f32({2, 5})}, {{"axis", int64_t{2}}}), "'axis' = 2");
}

TEST_F(Infer, IndexPutTakesRowsAlongTheAxis) {
  ValueId cache = f32({1, 2, 8, 4});
  ValueId pos = in(DType::kI32, {3});
  EXPECT_EQ(shape_of("index_put", {cache, pos, f32({1, 2, 3, 4})}, {{"axis", int64_t{2}}}), (Shape{1, 2, 8, 4}));
  EXPECT_EQ(shape_of("index_put", {cache, in(DType::kI64, {1}), f32({1, 2, 8, 1})}, {{"axis", int64_t{-1}}}),
            (Shape{1, 2, 8, 4}));
  EXPECT_MENTIONS(error_of("index_put", {cache, pos, f32({1, 2, 1, 4})}, {{"axis", int64_t{2}}}),
                  "[1,2,1,4] must be [1,2,3,4]: input 0 (x 'v0') [1,2,8,4] with axis 2 the length of input 1");
  EXPECT_MENTIONS(error_of("index_put", {cache, in(DType::kI32, {1, 3}), f32({1, 2, 3, 4})}, {{"axis", int64_t{2}}}),
                  "must have rank 1");
  EXPECT_MENTIONS(error_of("index_put", {cache, in(DType::kI8, {3}), f32({1, 2, 3, 4})}, {{"axis", int64_t{2}}}),
                  "dtype i8");
}

TEST_F(Infer, ScatterReductionsAreNamedAndNumeric) {
  ValueId x = f32({4});
  ValueId idx = in(DType::kI64, {3});
  ValueId src = f32({3});
  for (const char* reduce : {"none", "sum", "prod", "mean", "amax", "amin"}) {
    EXPECT_EQ(shape_of("scatter", {x, idx, src}, {{"axis", int64_t{0}}, {"reduce", std::string(reduce)}}), (Shape{4}));
    EXPECT_EQ(shape_of("index_put", {x, idx, src}, {{"axis", int64_t{0}}, {"reduce", std::string(reduce)}}), (Shape{4}));
  }
  EXPECT_MENTIONS(error_of("scatter", {x, idx, src}, {{"axis", int64_t{0}}, {"reduce", std::string("add")}}),
                  "attribute 'reduce' must be \"none\", \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", got \"add\"");
  EXPECT_MENTIONS(error_of("index_put", {x, idx, src}, {{"axis", int64_t{0}}, {"include_self", int64_t{0}}}),
                  "'include_self' = 0 applies to a reduction, not reduce \"none\"");
  EXPECT_MENTIONS(error_of("index_put", {x, idx, src}, {{"axis", int64_t{0}}, {"include_self", int64_t{2}}}),
                  "'include_self' = 2 is out of range [0, 1]");
  ValueId flags = in(DType::kBool, {4});
  EXPECT_MENTIONS(error_of("index_put", {flags, idx, in(DType::kBool, {3})}, {{"axis", int64_t{0}}, {"reduce", std::string("sum")}}),
                  "has dtype bool, but index_put accepts f32, f16, i32, i64 there");
}

TEST_F(Infer, ConstantIndicesOutOfRangeAreRefusedWhenTheNodeIsMade) {
  ValueId x = f32({2, 4});
  ValueId rows = g_.add_constant("rows", DType::kI64, {2}, blob_of<int64_t>({1, 4}));
  ValueId cols = g_.add_constant("cols", DType::kI32, {1, 2}, blob_of<int32_t>({3, -1}));
  EXPECT_MENTIONS(error_of("index_put", {x, rows, f32({2, 4})}, {{"axis", int64_t{0}}}),
                  "input 1 (index 'rows') is a constant holding 4 at [1], out of range for axis 0 of input 0 (x 'v0') "
                  "[2,4] (valid: 0..1)");
  EXPECT_MENTIONS(error_of("scatter", {x, cols, f32({1, 2})}, {{"axis", int64_t{-1}}}),
                  "input 1 (index 'cols') is a constant holding -1 at [0,1], out of range for axis 1");
  ValueId good = g_.add_constant("good", DType::kI32, {2}, blob_of<int32_t>({1, 0}));
  EXPECT_EQ(shape_of("index_put", {x, good, f32({2, 4})}, {{"axis", int64_t{0}}}), (Shape{2, 4}));
}

AttrMap shader_attrs(const std::string& json) {
  return {{"domain_name", std::string(kCustomShaderDomain)},
          {"operator_name", std::string("MyKernel")},
          {"implementation_attrs", json},
          {"num_outputs", int64_t{2}},
          {"output_0_shape", Ints{4, 4}},
          {"output_0_dtype", std::string("f32")},
          {"output_1_shape", Ints{2}},
          {"output_1_dtype", std::string("i32")}};
}

const char* kShaderJson =
    R"({"entry_point": "main", "workgroup_sizes": [8, 8, 1], "shader_language": "GLSL",
        "shader_code": "void main() { }", "input_0_binding": 0, "output_1_binding": 2})";

TEST_F(Infer, CustomShaderOutputsComeFromAttributes) {
  auto r = run("custom_shader", {f32({4, 4})}, shader_attrs(kShaderJson));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].shape, (Shape{4, 4}));
  EXPECT_EQ((*r)[1].dtype, DType::kI32);
  EXPECT_EQ((*r)[1].name, "n0:1");
}

TEST_F(Infer, CustomShaderRefusals) {
  ValueId x = f32({4, 4});
  AttrMap a = shader_attrs(kShaderJson);
  a["domain_name"] = std::string("com.example");
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "'domain_name'");
  a = shader_attrs(R"({"entry_point": "main", "workgroup_sizes": [8, 8, 1],})");
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "not valid JSON");
  a = shader_attrs(R"(["main"])");
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "must be a JSON object");
  a = shader_attrs(R"({"workgroup_sizes": [8]})");
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "entry_point");
  a = shader_attrs(R"({"entry_point": "main", "workgroup_sizes": [0, 1]})");
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "workgroup_sizes");
  a = shader_attrs(R"({"entry_point": "main", "workgroup_sizes": [1], "input_3_binding": 0})");
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "input_3_binding");
  a = shader_attrs(kShaderJson);
  a.erase("output_1_dtype");
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "'output_1_dtype' (string) is required");
  a = shader_attrs(kShaderJson);
  a["output_2_shape"] = Ints{1};
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "'output_2_shape' names output 2");
  a = shader_attrs(kShaderJson);
  a["output_0_shape"] = Ints{-4};
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "'output_0_shape'");
  a = shader_attrs(kShaderJson);
  a["output_0_layout"] = std::string("nhwc");
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "unknown attribute 'output_0_layout'");
  a = shader_attrs(kShaderJson);
  a["num_outputs"] = int64_t{0};
  EXPECT_MENTIONS(error_of("custom_shader", {x}, a), "'num_outputs'");
}

TEST_F(Infer, GenericRefusalsNameNodeAndAttribute) {
  ValueId x = f32({2, 2});
  EXPECT_MENTIONS(error_of("relu", {x}, {{"alpha", 0.1}}), "unknown attribute 'alpha'");
  EXPECT_MENTIONS(error_of("softmax", {x}, {{"axis", 1.0}}), "attribute 'axis' must be int, got float");
  EXPECT_MENTIONS(error_of("transpose", {x}, {{"perm", std::vector<double>{1, 0}}}), "must be ints, got floats");
  EXPECT_MENTIONS(error_of("relu", {x, x}), "takes 1 inputs, got 2");
  EXPECT_MENTIONS(error_of("relu", {99}), "value id 99");
  EXPECT_MENTIONS(error_of("relu", {kNone}), "required but was left out");
  EXPECT_MENTIONS(error_of("frobnicate", {x}), "unknown op 'frobnicate'");
}

TEST_F(Infer, OutputsBeyondTheLimitsAreRefused) {
  ValueId x = f32({1 << 20});
  EXPECT_MENTIONS(error_of("pad", {x}, {{"pads", Ints{0, kMaxDim}}}), "output 0");
  EXPECT_MENTIONS(error_of("mul", {f32({1 << 20, 1}), f32({1 << 21})}), "more than");
}

TEST(ResolveAttrs, FillsStaticAndDerivedDefaults) {
  Node pool{"p", "max_pool2d", {}, {}, {{"kernel", Ints{3, 2}}}};
  Result<AttrMap> a = resolve_attrs(pool);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(attr_ints(*a, "stride"), (Ints{3, 2}));
  EXPECT_EQ(attr_ints(*a, "dilation"), (Ints{1, 1}));
  EXPECT_EQ(attr_int(*a, "ceil_mode", 7), 0);
  Node slice{"s", "slice", {}, {}, {{"axes", Ints{0, 2}}, {"starts", Ints{0, 0}}, {"ends", Ints{1, 1}}}};
  a = resolve_attrs(slice);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(attr_ints(*a, "steps"), (Ints{1, 1}));
  Node clamp{"c", "clamp", {}, {}, {}};
  a = resolve_attrs(clamp);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(has_attr(*a, "min")) << "optional attributes without a default stay absent";
  EXPECT_DOUBLE_EQ(attr_float(*a, "min", -7.0), -7.0);
  Node bad{"b", "relu", {}, {}, {{"x", int64_t{1}}}};
  EXPECT_FALSE(resolve_attrs(bad).ok());
}

TEST(Broadcast, Shapes) {
  EXPECT_EQ(*broadcast_shapes({}, {}), (Shape{}));
  EXPECT_EQ(*broadcast_shapes({3, 1}, {1, 4}), (Shape{3, 4}));
  EXPECT_EQ(*broadcast_shapes({1}, {0}), (Shape{0}));
  EXPECT_FALSE(broadcast_shapes({2}, {3}).ok());
  EXPECT_EQ(normalize_axis(-1, 4), 3);
  EXPECT_EQ(normalize_axis(-5, 4), -1);
  EXPECT_EQ(normalize_axis(4, 4), -1);
  EXPECT_EQ(normalize_axis(0, 0), -1);
}

}  // namespace
}  // namespace gpuu::graph

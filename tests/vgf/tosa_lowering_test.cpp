// gpuu -> TOSA -> SPIR-V -> TOSA -> gpuu, checked numerically: for every op
// the VGF backend takes (and the RFC model's VGF regions), the CPU kernels
// must compute the same on the original graph and on
// tosa_to_gpuu(parse(emit(lower_to_tosa(g)))), within the stated tolerances.
// Also: TOSA semantics that gpuu ops only reach through decompositions, and
// the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/host_tensor.h"
#include "graph/builder.h"
#include "graph/verifier.h"
#include "tosa_round_trip.h"
#include "vgf/tosa_lowering.h"
#include "vgf/tosa_spirv.h"

namespace gpuu::vgf {
namespace {

using cpu::HostTensor;
using graph::AttrMap;
using graph::DType;
using graph::Shape;
using graph::ValueId;
using Ints = std::vector<int64_t>;
using Reals = std::vector<double>;

// One node on fresh inputs of `dtype` and `shape` (`arity` of them).
void check_op(const char* op, DType dtype, const Shape& shape, int arity, AttrMap attrs, Tol tol, double lo = -2.0,
              double hi = 2.0) {
  SCOPED_TRACE(std::string(op) + " " + graph::dtype_name(dtype) + graph::shape_to_string(shape));
  Region r;
  std::vector<ValueId> in;
  for (int i = 0; i < arity; ++i) in.push_back(r.input(dtype, shape, lo, hi));
  r.output(r.op(op, in, std::move(attrs)));
  round_trip(r, tol);
}

std::vector<TosaOp> ops_of(const TosaGraph& g) {
  std::vector<TosaOp> ops;
  for (const TosaOperator& o : g.operators) ops.push_back(o.op);
  return ops;
}

// ---- elementwise ---------------------------------------------------------------

TEST(TosaLowering, FloatUnaryOps) {
  for (const char* op : {"exp", "sin", "cos", "tanh", "sigmoid", "erf", "floor", "ceil", "reciprocal", "gelu"}) {
    check_op(op, DType::kF32, {2, 3, 4}, 1, {}, kF32);
  }
  for (const char* op : {"log", "sqrt", "rsqrt"}) check_op(op, DType::kF32, {2, 3, 4}, 1, {}, kF32, 0.05, 3.0);
  check_op("gelu", DType::kF32, {2, 8}, 1, {{"approximate", std::string("tanh")}}, kF32);
  for (const char* op : {"exp", "sin", "sqrt", "gelu"}) check_op(op, DType::kF16, {3, 5}, 1, {}, kF16, 0.1, 2.0);
}

TEST(TosaLowering, SignOpsOnEveryDtype) {
  for (const char* op : {"abs", "neg", "relu"}) {
    check_op(op, DType::kF32, {2, 3, 4}, 1, {}, kExact);
    check_op(op, DType::kI32, {2, 3, 4}, 1, {}, kExact, -50, 50);
    check_op(op, DType::kI8, {2, 3, 4}, 1, {}, kExact, -128, 127);
  }
  // The i8 corner where TOSA's NEGATE saturates but gpuu wraps.
  Region r;
  ValueId x = r.input_values(DType::kI8, {4}, {-128, -127, 0, 127});
  r.output(r.op("neg", {x}));
  round_trip(r, kExact);
}

TEST(TosaLowering, BinaryOpsWithBroadcasting) {
  for (const char* op : {"add", "sub", "mul", "maximum", "minimum", "div"}) {
    SCOPED_TRACE(op);
    Region r;
    ValueId a = r.input(DType::kF32, {2, 3, 4});
    ValueId b = r.input(DType::kF32, {4});
    ValueId c = r.input(DType::kF32, {3, 1});
    r.output(r.op(op, {r.op(op, {a, b}), c}));
    round_trip(r, kF32);
  }
  check_op("pow", DType::kF32, {2, 5}, 2, {}, kF32, 0.1, 2.5);
  for (const char* op : {"add", "sub", "mul", "maximum", "minimum"}) {
    check_op(op, DType::kI32, {3, 4}, 2, {}, kExact, -1000, 1000);
    check_op(op, DType::kI8, {3, 4}, 2, {}, kExact, -128, 127);  // add/sub/mul wrap
    check_op(op, DType::kF16, {3, 4}, 2, {}, kF16);
  }
}

TEST(TosaLowering, Comparisons) {
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
    check_op(op, DType::kF32, {4, 6}, 2, {}, kExact, -2, 2);  // integral floats: ties happen
    check_op(op, DType::kI32, {4, 6}, 2, {}, kExact, -2, 2);
    check_op(op, DType::kI8, {4, 6}, 2, {}, kExact, -2, 2);
  }
  check_op("equal", DType::kBool, {4, 6}, 2, {}, kExact);
  check_op("not_equal", DType::kBool, {4, 6}, 2, {}, kExact);
}

TEST(TosaLowering, ClampAndWhere) {
  check_op("clamp", DType::kF32, {3, 7}, 1, {{"min", -0.5}, {"max", 1.25}}, kExact);
  check_op("clamp", DType::kF32, {3, 7}, 1, {{"min", -0.5}}, kExact);
  check_op("clamp", DType::kF16, {3, 7}, 1, {{"max", 0.3}}, kExact);
  check_op("clamp", DType::kI32, {3, 7}, 1, {{"min", -3.5}, {"max", 7.2}}, kExact, -20, 20);
  check_op("clamp", DType::kI8, {3, 7}, 1, {{"min", -3.0}, {"max", 500.0}}, kExact, -128, 127);
  check_op("clamp", DType::kI32, {3, 7}, 1, {{"min", 0.2}, {"max", 0.7}}, kExact, -5, 5);  // crossing bounds
  for (DType t : {DType::kF32, DType::kI32, DType::kI8, DType::kBool}) {
    Region r;
    ValueId c = r.input(DType::kBool, {2, 1, 4});
    ValueId a = r.input(t, {3, 4}, -9, 9);
    ValueId b = r.input(t, {2, 3, 1}, -9, 9);
    r.output(r.op("where", {c, a, b}));
    round_trip(r, kExact);
  }
}

TEST(TosaLowering, Casts) {
  struct Case {
    DType from, to;
    Reals values;
  };
  const Reals floats = {-300.7, -129.5, -2.5, -1.5, -0.7, -0.0, 0.4, 0.5, 1.5, 2.5, 3.99, 127.9, 300.2, 3e9, NAN, INFINITY};
  const std::vector<Case> cases = {
      {DType::kF32, DType::kI32, floats}, {DType::kF32, DType::kI8, floats},  {DType::kF16, DType::kI32, {-2.5, 0.5, 7.75, 1000}},
      {DType::kI32, DType::kF32, {-7, 0, 16777217, 5}}, {DType::kI32, DType::kI8, {-129, 128, 255, -1, 300, 7}},
      {DType::kI8, DType::kI32, {-128, 127, 0, 5}},     {DType::kF32, DType::kF16, {1.0 / 3, 70000, -1e-8, 2.5}},
      {DType::kF16, DType::kF32, {0.5, -3.25, 1000}},   {DType::kBool, DType::kF32, {0, 1, 1, 0}},
      {DType::kBool, DType::kI8, {1, 0, 1, 1}},          {DType::kF32, DType::kBool, {0.0, -0.0, NAN, 0.1, -3}},
      {DType::kI32, DType::kBool, {0, 5, -1, 0}},        {DType::kI8, DType::kBool, {0, 5, -1, 0}},
      {DType::kF32, DType::kF32, {1, 2}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(graph::dtype_name(c.from)) + " -> " + graph::dtype_name(c.to));
    Region r;
    ValueId x = r.input_values(c.from, {static_cast<int64_t>(c.values.size())}, c.values);
    r.output(r.op("cast", {x}, {{"dtype", std::string(graph::dtype_name(c.to))}}));
    round_trip(r, kExact);
  }
}

// ---- linear algebra and windows -----------------------------------------------

TEST(TosaLowering, Matmul) {
  struct Case {
    Shape a, b;
  };
  for (const Case& c : std::vector<Case>{{{3, 4}, {4, 2}}, {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}}, {{3, 4}, {2, 4, 5}}}) {
    SCOPED_TRACE(graph::shape_to_string(c.a) + " x " + graph::shape_to_string(c.b));
    Region r;
    ValueId a = r.input(DType::kF32, c.a);
    ValueId b = r.input(DType::kF32, c.b);
    r.output(r.op("matmul", {a, b}));
    round_trip(r, kF32);
  }
}

TEST(TosaLowering, LinearWithConstantWeightsIsMatmulAndAdd) {
  Region r;
  ValueId x = r.input(DType::kF32, {2, 3, 4});
  ValueId w = r.constant(DType::kF32, {5, 4});
  ValueId b = r.constant(DType::kF32, {5});
  r.output(r.op("linear", {x, w, b}));
  TosaGraph t = round_trip(r, kF32);
  std::vector<TosaOp> ops = ops_of(t);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kMatmul), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kAdd), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kTranspose), 0);  // the weight constant came pre-transposed
  ASSERT_EQ(t.constants.size(), 2u);
  EXPECT_EQ(t.tensor(t.constants[0].tensor).shape, (std::vector<int64_t>{1, 4, 5}));
}

TEST(TosaLowering, LinearWithWeightInputAndNoBias) {
  Region r;
  ValueId x = r.input(DType::kF32, {3, 4});
  ValueId w = r.input(DType::kF32, {6, 4});
  r.output(r.op("linear", {x, w}));
  round_trip(r, kF32);
}

TEST(TosaLowering, Conv2dForms) {
  struct Case {
    const char* label;
    Shape x, w;
    AttrMap attrs;
    bool bias, weight_input;
  };
  const std::vector<Case> cases = {
      {"3x3 pad 1", {1, 3, 8, 8}, {4, 3, 3, 3}, {{"padding", Ints{1, 1}}}, true, false},
      {"stride 2 with leftover", {2, 3, 8, 7}, {4, 3, 3, 3}, {{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}}, true, false},
      {"stride 3 crops the input", {1, 2, 9, 9}, {2, 2, 2, 2}, {{"stride", Ints{3, 3}}}, false, false},
      {"dilation 2", {1, 2, 9, 9}, {3, 2, 3, 3}, {{"dilation", Ints{2, 2}}, {"padding", Ints{2, 1}}}, true, false},
      {"depthwise x2", {1, 3, 6, 6}, {6, 1, 3, 3}, {{"groups", int64_t{3}}, {"padding", Ints{1, 1}}}, true, false},
      {"groups 2", {1, 4, 6, 6}, {6, 2, 3, 3}, {{"groups", int64_t{2}}}, true, false},
      {"weight as input, no bias", {1, 3, 5, 5}, {2, 3, 1, 3}, {{"padding", Ints{0, 1}}}, false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    Region r;
    ValueId x = r.input(DType::kF32, c.x);
    ValueId w = c.weight_input ? r.input(DType::kF32, c.w) : r.constant(DType::kF32, c.w);
    std::vector<ValueId> in = {x, w};
    if (c.bias) in.push_back(r.constant(DType::kF32, {c.w[0]}));
    r.output(r.op("conv2d", in, c.attrs));
    round_trip(r, kF32);
  }
}

TEST(TosaLowering, Pools) {
  struct Case {
    const char* op;
    Shape x;
    AttrMap attrs;
  };
  const std::vector<Case> cases = {
      {"avg_pool2d", {1, 3, 8, 8}, {{"kernel", Ints{2, 2}}}},
      {"avg_pool2d", {1, 2, 7, 7}, {{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}}},
      {"avg_pool2d", {1, 2, 7, 7}, {{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"count_include_pad", int64_t{0}}}},
      {"avg_pool2d", {1, 2, 7, 6}, {{"kernel", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}},
      {"avg_pool2d", {1, 2, 7, 7}, {{"kernel", Ints{3, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"ceil_mode", int64_t{1}}}},
      {"avg_pool2d", {2, 1, 8, 5}, {{"kernel", Ints{3, 3}}, {"stride", Ints{3, 2}}}},
      {"max_pool2d", {1, 3, 8, 8}, {{"kernel", Ints{2, 2}}}},
      {"max_pool2d", {1, 2, 7, 7}, {{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}}},
      {"max_pool2d", {1, 2, 7, 6}, {{"kernel", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}},
      {"max_pool2d", {1, 2, 9, 9}, {{"kernel", Ints{3, 3}}, {"dilation", Ints{2, 2}}, {"padding", Ints{1, 1}}}},
      {"max_pool2d", {1, 1, 10, 9}, {{"kernel", Ints{2, 3}}, {"stride", Ints{3, 2}}, {"dilation", Ints{2, 1}}, {"ceil_mode", int64_t{1}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " " + graph::shape_to_string(c.x));
    Region r;
    r.output(r.op(c.op, {r.input(DType::kF32, c.x)}, c.attrs));
    round_trip(r, kF32);
  }
  Region r8;  // i8 max pool, dilated too
  ValueId x8 = r8.input(DType::kI8, {1, 2, 6, 6}, -128, 127);
  r8.output(r8.op("max_pool2d", {x8}, {{"kernel", Ints{2, 2}}, {"padding", Ints{1, 1}}}));
  r8.output(r8.op("max_pool2d", {x8}, {{"kernel", Ints{2, 2}}, {"dilation", Ints{2, 2}}}));
  round_trip(r8, kExact);
}

// ---- conv3d, conv_transpose2d, 3-D pools, resize --------------------------------

TEST(TosaLowering, ResizeWhereRescaleParametersReproduceTorch) {
  struct Case {
    Shape x;
    Ints size;
    const char* mode;
    int64_t align;
    std::vector<double> scales;
  };
  const std::vector<Case> cases = {
      {{1, 2, 4, 4}, {8, 8}, "nearest", 0, {}},
      {{1, 2, 3, 4}, {9, 12}, "nearest", 0, {3.0, 3.0}},
      {{1, 2, 3, 4}, {5, 7}, "nearest", 0, {}},          // 0.6 and 4/7 steps: the half-step offset still floors
      {{1, 1, 8, 6}, {4, 2}, "nearest", 0, {}},          // downscale
      {{1, 2, 4, 3}, {8, 6}, "nearest_exact", 0, {}},
      {{1, 2, 4, 3}, {10, 7}, "nearest_exact", 0, {2.5, 2.5}},
      {{1, 2, 4, 3}, {8, 9}, "bilinear", 0, {}},
      {{1, 2, 8, 6}, {4, 3}, "bilinear", 0, {}},
      {{1, 2, 3, 5}, {5, 9}, "bilinear", 1, {}},
      {{1, 1, 3, 4}, {1, 4}, "bilinear", 1, {}},         // one output row
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.mode) + " align " + std::to_string(c.align) + " " + graph::shape_to_string(c.x) +
                 " -> " + graph::shape_to_string(c.size));
    Region r;
    AttrMap attrs = {{"size", c.size}, {"mode", std::string(c.mode)}, {"align_corners", c.align}};
    if (!c.scales.empty()) attrs["scales"] = c.scales;
    r.output(r.op("resize", {r.input(DType::kF32, c.x)}, attrs));
    TosaGraph t = round_trip(r, std::string(c.mode) == "bilinear" ? kF32 : kExact);
    std::vector<TosaOp> ops = ops_of(t);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kResize), 1);
  }
  Region h;  // f16
  h.output(h.op("resize", {h.input(DType::kF16, {1, 3, 3, 3})}, {{"size", Ints{6, 6}}, {"mode", std::string("bilinear")}}));
  round_trip(h, kF16);
}

TEST(TosaLowering, ResizeRefusesWhatRescaleCannotExpress) {
  struct Case {
    Shape x;
    Ints size;
    const char* why;
  };
  // More than 16x down needs d >= 16n; 1 -> 3000 needs n > 2048; 1 -> 300 is past the 8K level's MAX_SCALE (256).
  for (const Case& c : std::vector<Case>{{{1, 1, 40, 4}, {2, 4}, "along the height (40 -> 2)"},
                                         {{1, 1, 1, 1}, {1, 3000}, "along the width (1 -> 3000)"},
                                         {{1, 1, 1, 1}, {1, 300}, "along the width (1 -> 300)"}}) {
    Region r;
    r.output(r.op("resize", {r.input(DType::kF32, c.x)}, {{"size", c.size}}));
    Result<TosaGraph> t = lower_to_tosa(r.g);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(t.status().message().find("(resize): no TOSA RESIZE"), std::string::npos) << t.status().message();
    EXPECT_NE(t.status().message().find(c.why), std::string::npos) << t.status().message();
  }
}

TEST(TosaLowering, ConvTranspose2dForms) {
  struct Case {
    const char* label;
    Shape x, w;
    AttrMap attrs;
    bool bias, weight_input;
  };
  const std::vector<Case> cases = {
      {"stride 2", {1, 3, 4, 5}, {3, 4, 3, 3}, {{"stride", Ints{2, 2}}}, true, false},
      {"padding and output_padding", {2, 2, 3, 4}, {2, 3, 3, 2},
       {{"stride", Ints{3, 2}}, {"padding", Ints{1, 1}}, {"output_padding", Ints{2, 1}}}, true, false},
      {"groups 2, weight as input, no bias", {1, 4, 3, 3}, {4, 2, 2, 3},
       {{"stride", Ints{2, 1}}, {"groups", int64_t{2}}, {"padding", Ints{0, 1}}}, false, true},
      {"depthwise", {1, 3, 4, 4}, {3, 1, 4, 4}, {{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"groups", int64_t{3}}},
       true, false},
      // out_pad -2 is not > -2: a wider result, sliced.
      {"padding as large as the kernel", {1, 2, 3, 3}, {2, 2, 2, 2},
       {{"stride", Ints{3, 3}}, {"padding", Ints{2, 0}}, {"output_padding", Ints{2, 1}}}, true, false},
      {"padding past the kernel", {1, 1, 4, 4}, {1, 2, 3, 3},
       {{"stride", Ints{2, 2}}, {"padding", Ints{3, 3}}, {"output_padding", Ints{1, 0}}}, false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    Region r;
    ValueId x = r.input(DType::kF32, c.x);
    ValueId w = c.weight_input ? r.input(DType::kF32, c.w) : r.constant(DType::kF32, c.w);
    std::vector<ValueId> in = {x, w};
    int64_t groups = c.attrs.count("groups") ? std::get<int64_t>(c.attrs.at("groups")) : 1;
    if (c.bias) in.push_back(r.constant(DType::kF32, {c.w[1] * groups}));
    r.output(r.op("conv_transpose2d", in, c.attrs));
    std::vector<TosaOp> ops = ops_of(round_trip(r, kF32));
    EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kTransposeConv2d), groups);
  }
}

TEST(TosaLowering, ConvTranspose2dRefusesDilation) {
  Region r;
  ValueId x = r.input(DType::kF32, {1, 2, 3, 3});
  r.output(r.op("conv_transpose2d", {x, r.constant(DType::kF32, {2, 2, 2, 2})}, {{"dilation", Ints{2, 1}}}));
  Result<TosaGraph> t = lower_to_tosa(r.g);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("TRANSPOSE_CONV2D has no dilation"), std::string::npos) << t.status().message();
}

TEST(TosaLowering, Conv3dForms) {
  struct Case {
    const char* label;
    Shape x, w;
    AttrMap attrs;
    bool bias;
  };
  const std::vector<Case> cases = {
      {"3x3x3 pad 1", {1, 2, 4, 5, 6}, {3, 2, 3, 3, 3}, {{"padding", Ints{1, 1, 1}}}, true},
      {"stride with leftover, dilation", {1, 2, 6, 7, 5}, {2, 2, 2, 2, 2},
       {{"stride", Ints{2, 3, 1}}, {"dilation", Ints{1, 1, 2}}, {"padding", Ints{0, 1, 1}}}, false},
      {"groups 2", {2, 4, 3, 4, 4}, {4, 2, 1, 3, 3}, {{"groups", int64_t{2}}}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    Region r;
    std::vector<ValueId> in = {r.input(DType::kF32, c.x), r.constant(DType::kF32, c.w)};
    if (c.bias) in.push_back(r.constant(DType::kF32, {c.w[0]}));
    r.output(r.op("conv3d", in, c.attrs));
    std::vector<TosaOp> ops = ops_of(round_trip(r, kF32));
    EXPECT_GE(std::count(ops.begin(), ops.end(), TosaOp::kConv3d), 1);
  }
}

TEST(TosaLowering, Pools3dAreRefused) {
  for (const char* op : {"avg_pool3d", "max_pool3d"}) {
    Region r;
    r.output(r.op(op, {r.input(DType::kF32, {1, 1, 4, 4, 4})}, {{"kernel", Ints{2, 2, 2}}}));
    Result<TosaGraph> t = lower_to_tosa(r.g);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(t.status().message().find("no 3-D pooling"), std::string::npos) << t.status().message();
  }
}

// ---- reductions and normalization ---------------------------------------------

TEST(TosaLowering, Reductions) {
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    for (int64_t keep : {0, 1}) {
      check_op(op, DType::kF32, {2, 3, 4, 5}, 1, {{"axes", Ints{1, -1}}, {"keepdim", keep}}, kF32);
    }
  }
  check_op("reduce_sum", DType::kI32, {3, 4}, 1, {{"axes", Ints{0}}}, kExact, -100, 100);
  check_op("reduce_max", DType::kI8, {3, 4}, 1, {{"axes", Ints{1}}, {"keepdim", int64_t{1}}}, kExact, -128, 127);
  check_op("reduce_max", DType::kI32, {3, 4}, 1, {{"axes", Ints{1}}}, kExact, -100, 100);
}

TEST(TosaLowering, SoftmaxAndLayerNorm) {
  check_op("softmax", DType::kF32, {2, 3, 5}, 1, {{"axis", int64_t{-1}}}, kF32, -4, 4);
  check_op("softmax", DType::kF32, {2, 3, 5}, 1, {{"axis", int64_t{1}}}, kF32, -4, 4);
  check_op("softmax", DType::kF16, {4, 6}, 1, {{"axis", int64_t{1}}}, kF16);
  check_op("layer_norm", DType::kF32, {2, 3, 4}, 1, {{"normalized_ndim", int64_t{2}}}, {1e-5, 1e-4});
  Region r;
  ValueId x = r.input(DType::kF32, {2, 5, 6});
  ValueId w = r.constant(DType::kF32, {6});
  ValueId b = r.input(DType::kF32, {6});
  r.output(r.op("layer_norm", {x, w, b}, {{"normalized_ndim", int64_t{1}}, {"eps", 1e-3}}));
  round_trip(r, {1e-5, 1e-4});
}

TEST(TosaLowering, AttentionAsMatmulsAroundASoftmax) {
  const char* op = "scaled_dot_product_attention";
  // Grouped heads (4 over 2), a scale, L != S, E != Ev.
  {
    Region r;
    r.output(r.op(op, {r.input(DType::kF32, {2, 4, 3, 8}), r.input(DType::kF32, {2, 2, 5, 8}),
                       r.input(DType::kF32, {2, 2, 5, 6})},
                  {{"scale", 0.4}}));
    std::vector<TosaOp> ops = ops_of(round_trip(r, kF32));
    EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kMatmul), 2);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kTile), 2);
  }
  // Causal, top-left aligned: L > S and L < S.
  for (auto [l, s] : {std::pair<int64_t, int64_t>{5, 3}, {3, 5}}) {
    Region r;
    r.output(r.op(op, {r.input(DType::kF32, {1, 2, l, 4}), r.input(DType::kF32, {1, 2, s, 4}),
                       r.input(DType::kF32, {1, 2, s, 4})},
                  {{"is_causal", int64_t{1}}}));
    round_trip(r, kF32);
  }
  // A bool mask with a fully masked row, and an added mask whose row is all
  // -inf: those rows are 0.
  {
    Region r;
    ValueId mask = r.input_values(DType::kBool, {3, 4}, {0, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0});
    r.output(r.op(op, {r.input(DType::kF32, {2, 2, 3, 4}), r.input(DType::kF32, {2, 2, 4, 4}),
                       r.input(DType::kF32, {2, 2, 4, 4}), mask}));
    round_trip(r, kF32);
  }
  {
    Region r;
    const double inf = INFINITY;
    ValueId mask = r.input_values(DType::kF32, {2, 1, 2, 3}, {0.5, -1, 0, -inf, -inf, -inf, 0, 0, 0, 1, -inf, 2});
    r.output(r.op(op, {r.input(DType::kF32, {2, 3, 2, 4}), r.input(DType::kF32, {2, 3, 3, 4}),
                       r.input(DType::kF32, {2, 3, 3, 4}), mask}));
    round_trip(r, kF32);
  }
}

// ---- data movement -------------------------------------------------------------

TEST(TosaLowering, DataMovement) {
  check_op("transpose", DType::kF32, {2, 3, 4}, 1, {{"perm", Ints{2, 0, 1}}}, kExact);
  check_op("transpose", DType::kBool, {2, 3}, 1, {{"perm", Ints{1, 0}}}, kExact);
  check_op("reshape", DType::kI32, {2, 3, 4}, 1, {{"shape", Ints{4, -1}}}, kExact);
  check_op("slice", DType::kF32, {5, 6, 7}, 1,
           {{"axes", Ints{0, 2}}, {"starts", Ints{1, -5}}, {"ends", Ints{100, 6}}, {"steps", Ints{2, 3}}}, kExact);
  check_op("slice", DType::kI8, {4, 9}, 1, {{"axes", Ints{1}}, {"starts", Ints{2}}, {"ends", Ints{7}}}, kExact);
  check_op("pad", DType::kF32, {2, 3}, 1, {{"pads", Ints{1, 0, 2, 3}}, {"value", 1.5}}, kExact);
  check_op("pad", DType::kI32, {2, 3}, 1, {{"pads", Ints{0, 2, 1, 1}}, {"value", -7.9}}, kExact);
  check_op("pad", DType::kBool, {2, 3}, 1, {{"pads", Ints{0, 1, 1, 0}}, {"value", 1.0}}, kExact);
  Region r;
  ValueId a = r.input(DType::kF32, {2, 3});
  ValueId b = r.input(DType::kF32, {2, 1});
  r.output(r.op("concat", {a, b, a}, {{"axis", int64_t{-1}}}));
  r.output(r.op("concat", {b}, {{"axis", int64_t{0}}}));
  round_trip(r, kExact);
}

TEST(TosaLowering, PadModesAsSliceReverseConcat) {
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    SCOPED_TRACE(mode);
    check_op("pad", DType::kF32, {5}, 1, {{"pads", Ints{2, 3}}, {"mode", std::string(mode)}}, kExact);
    check_op("pad", DType::kI32, {3, 4}, 1, {{"pads", Ints{1, 2, 3, 0}}, {"mode", std::string(mode)}}, kExact, -50, 50);
    check_op("pad", DType::kBool, {2, 3, 4}, 1, {{"pads", Ints{0, 0, 1, 1, 0, 2}}, {"mode", std::string(mode)}}, kExact);
  }
}

TEST(TosaLowering, ExpandIsReshapeAndTile) {
  check_op("expand", DType::kF32, {3, 1}, 1, {{"shape", Ints{2, 3, 4}}}, kExact);
  check_op("expand", DType::kI8, {1, 4}, 1, {{"shape", Ints{5, -1}}}, kExact, -100, 100);
  check_op("expand", DType::kBool, {2, 1, 1}, 1, {{"shape", Ints{2, 3, 2}}}, kExact);
  Region r;
  r.output(r.op("expand", {r.input(DType::kF32, {4, 1})}, {{"shape", Ints{2, 4, 3}}}));
  std::vector<TosaOp> ops = ops_of(round_trip(r, kExact));
  EXPECT_EQ(ops, (std::vector<TosaOp>{TosaOp::kReshape, TosaOp::kTile}));
}

TEST(TosaLowering, FlipIsOneReversePerAxis) {
  check_op("flip", DType::kI32, {4, 5}, 1, {{"axes", Ints{0}}}, kExact, -50, 50);
  check_op("flip", DType::kF16, {2, 3, 4}, 1, {{"axes", Ints{-1, 0}}}, kExact);
  Region r;
  r.output(r.op("flip", {r.input(DType::kF32, {2, 1, 3})}, {{"axes", Ints{0, 1, 2}}}));
  std::vector<TosaOp> ops = ops_of(round_trip(r, kExact));
  EXPECT_EQ(ops, (std::vector<TosaOp>{TosaOp::kReverse, TosaOp::kReverse}));  // the size-1 axis needs none
}

TEST(TosaLowering, GatherAndIndexSelect) {
  for (DType t : {DType::kF32, DType::kI32, DType::kI8}) {
    Region r;
    ValueId x = r.input(t, {2, 5, 4}, -50, 50);
    ValueId index = r.input(DType::kI32, {2, 3, 4}, 0, 4);  // along axis 1 (dim 5)
    r.output(r.op("gather", {x, index}, {{"axis", int64_t{1}}}));
    ValueId rows = r.input(DType::kI32, {6}, 0, 3);
    r.output(r.op("index_select", {x, rows}, {{"axis", int64_t{-1}}}));
    ValueId batch_rows = r.input(DType::kI32, {3}, 0, 1);
    r.output(r.op("index_select", {x, batch_rows}, {{"axis", int64_t{0}}}));
    round_trip(r, kExact);
  }
}

TEST(TosaLowering, IndexPutIsScatter) {
  for (DType t : {DType::kF32, DType::kI32, DType::kI8}) {
    SCOPED_TRACE(graph::dtype_name(t));
    Region r;
    // A KV cache [2,3,6,4] taking rows 5 and 1 along axis 2: six batches of
    // SCATTER (the indices tiled), raised back as an element scatter.
    ValueId cache = r.input(t, {2, 3, 6, 4}, -50, 50);
    ValueId pos = r.input_values(DType::kI32, {2}, {5, 1});
    r.output(r.op("index_put", {cache, pos, r.input(t, {2, 3, 2, 4}, -50, 50)}, {{"axis", int64_t{2}}}));
    // Rows of a matrix: one batch, raised back as index_put.
    ValueId rows = r.input_values(DType::kI32, {3}, {0, 4, 2});
    r.output(r.op("index_put", {r.input(t, {5, 3}, -50, 50), rows, r.input(t, {3, 3}, -50, 50)},
                  {{"axis", int64_t{0}}}));
    std::vector<TosaOp> ops = ops_of(round_trip(r, kExact));
    EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kScatter), 2);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kTile), 1);
  }
}

TEST(TosaLowering, RefusesScatterFormsTosaLacks) {
  struct Case {
    const char* op;
    DType index;
    Shape rows;
    AttrMap attrs;
    const char* says;
  };
  const Case cases[] = {
      {"index_put", DType::kI32, {2}, {{"axis", int64_t{0}}, {"reduce", std::string("sum")}},
       "TOSA 1.0 SCATTER writes rows and has no reduction (reduce is \"sum\")"},
      {"index_put", DType::kI64, {2}, {{"axis", int64_t{0}}},
       "TOSA 1.0 has no i64 tensors"},
      {"index_put", DType::kI32, {5}, {{"axis", int64_t{0}}},
       "it writes 5 rows into 4, so some row twice, which TOSA 1.0 SCATTER forbids"},
      {"scatter", DType::kI32, {2, 3}, {{"axis", int64_t{0}}},
       "TOSA 1.0 has no f32 form of 'scatter' (none: TOSA's SCATTER writes whole rows, not single elements"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.says);
    Region r;
    Shape updates = c.rows;
    if (updates.size() == 1) updates.push_back(3);
    r.output(r.op(c.op, {r.input(DType::kF32, {4, 3}), r.input(c.index, c.rows, 0, 3), r.input(DType::kF32, updates)},
                  c.attrs));
    Result<TosaGraph> t = lower_to_tosa(r.g);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(t.status().message().find(c.says), std::string::npos) << t.status().message();
  }
}

// ---- the RFC model's VGF regions and other chains ----------------------------------

TEST(TosaLowering, RfcRegionTransposeAvgPool) {
  Region r;
  ValueId x = r.input(DType::kF32, {1, 3, 8, 8});
  ValueId t = r.op("transpose", {x}, {{"perm", Ints{0, 1, 3, 2}}});
  r.output(r.op("avg_pool2d", {t}, {{"kernel", Ints{2, 2}}, {"stride", Ints{2, 2}}}));
  TosaGraph tosa = round_trip(r, kF32);
  // transpose + NCHW->NHWC fold into one TRANSPOSE: TRANSPOSE, AVG_POOL2D, TRANSPOSE.
  EXPECT_EQ(ops_of(tosa), (std::vector<TosaOp>{TosaOp::kTranspose, TosaOp::kAvgPool2d, TosaOp::kTranspose}));
  EXPECT_EQ(tosa.operators[0].attributes[0].ints, (std::vector<int64_t>{0, 3, 2, 1}));
}

TEST(TosaLowering, RfcRegionSinCosReciprocalMulTranspose) {
  Region r;
  ValueId x = r.input(DType::kF32, {1, 3, 4, 4});
  ValueId s = r.op("sin", {x});
  ValueId rc = r.op("reciprocal", {r.op("cos", {x})});
  r.output(r.op("transpose", {r.op("mul", {s, rc})}, {{"perm", Ints{0, 1, 3, 2}}}));
  TosaGraph tosa = round_trip(r, kF32);
  EXPECT_EQ(ops_of(tosa), (std::vector<TosaOp>{TosaOp::kSin, TosaOp::kCos, TosaOp::kReciprocal, TosaOp::kMul,
                                               TosaOp::kTranspose}));
}

TEST(TosaLowering, SmallConvNetChain) {
  Region r;
  ValueId x = r.input(DType::kF32, {1, 3, 8, 8});
  ValueId c = r.op("conv2d", {x, r.constant(DType::kF32, {4, 3, 3, 3}), r.constant(DType::kF32, {4})},
                   {{"padding", Ints{1, 1}}});
  ValueId p = r.op("max_pool2d", {r.op("relu", {c})}, {{"kernel", Ints{2, 2}}});
  ValueId flat = r.op("reshape", {p}, {{"shape", Ints{1, -1}}});
  ValueId logits = r.op("linear", {flat, r.constant(DType::kF32, {10, 64}), r.constant(DType::kF32, {10})});
  r.output(r.op("softmax", {logits}, {{"axis", int64_t{1}}}));
  TosaGraph tosa = round_trip(r, kF32);
  // Between CONV2D and MAX_POOL2D the layout stays NHWC: relu moves past the
  // transpose back to NCHW, which then cancels against the pool's.
  std::vector<TosaOp> ops = ops_of(tosa);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), TosaOp::kTranspose), 2);
}

// ---- refusals ------------------------------------------------------------------

TEST(TosaLowering, RefusesI64AndCustomShaders) {
  Region r;
  ValueId x = r.input(DType::kF32, {4, 3});
  ValueId index = r.input(DType::kI64, {2}, 0, 3);
  r.output(r.op("index_select", {x, index}, {{"axis", int64_t{0}}}));
  Result<TosaGraph> t = lower_to_tosa(r.g);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(t.status().message().find("no i64 tensors"), std::string::npos) << t.status().message();

  Region s;
  ValueId y = s.input(DType::kF32, {4});
  s.output(s.op("custom_shader", {y},
                {{"domain_name", std::string("com.arm.VulkanCustomShader")}, {"operator_name", std::string("k")},
                 {"implementation_attrs", std::string(R"({"entry_point":"main","workgroup_sizes":[1]})")},
                 {"num_outputs", int64_t{1}}, {"output_0_shape", Ints{4}}, {"output_0_dtype", std::string("f32")}}));
  t = lower_to_tosa(s.g);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("(custom_shader)"), std::string::npos) << t.status().message();
}

// ---- math and logic ops added with integer support --------------------------------

TEST(TosaLowering, FloatCompositions) {
  check_op("tan", DType::kF32, {2, 3, 4}, 1, {}, kF32, -1.2, 1.2);
  check_op("cosh", DType::kF32, {2, 3, 4}, 1, {}, kF32, -4, 4);
  check_op("trunc", DType::kF32, {2, 3, 4}, 1, {}, kExact, -9, 9);
  check_op("cosh", DType::kF16, {3, 5}, 1, {}, kF16, -2, 2);
  // round: ties go to the even neighbour, NaN and inf pass through.
  Region r;
  ValueId x = r.input_values(DType::kF32, {12}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 7.0, NAN, INFINITY,
                                                 -0.2});
  r.output(r.op("round", {x}));
  r.output(r.op("trunc", {x}));
  round_trip(r, kExact);
  check_op("round", DType::kF16, {4, 9}, 1, {}, kExact, -20, 20);
}

TEST(TosaLowering, SignAndPredicates) {
  check_op("sign", DType::kI32, {3, 7}, 1, {}, kExact, -3, 3);
  Region r;
  ValueId x = r.input_values(DType::kF32, {7}, {-2, 0, 3, NAN, INFINITY, -INFINITY, -0.0});
  r.output(r.op("sign", {x}));
  r.output(r.op("isnan", {x}));
  r.output(r.op("isinf", {x}));
  r.output(r.op("logical_not", {x}));
  round_trip(r, kExact);
  for (DType d : {DType::kI32, DType::kI8, DType::kBool}) check_op("logical_not", d, {2, 5}, 1, {}, kExact, -2, 2);
}

TEST(TosaLowering, LogicalAndBitwiseOps) {
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
    for (DType d : {DType::kF32, DType::kI32, DType::kI8, DType::kBool}) check_op(op, d, {3, 4}, 2, {}, kExact, -1, 1);
  }
  for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
    check_op(op, DType::kI32, {3, 4}, 2, {}, kExact, -1000, 1000);
    check_op(op, DType::kBool, {3, 4}, 2, {}, kExact);
  }
  check_op("bitwise_not", DType::kI32, {3, 4}, 1, {}, kExact, -1000, 1000);
  check_op("bitwise_not", DType::kBool, {3, 4}, 1, {}, kExact);
  Region r;  // broadcasting across ranks
  ValueId a = r.input(DType::kI32, {2, 1, 3}, -50, 50);
  ValueId b = r.input(DType::kI32, {4, 1}, -50, 50);
  r.output(r.op("bitwise_xor", {a, b}));
  r.output(r.op("logical_and", {a, b}));
  round_trip(r, kExact);
}

TEST(TosaLowering, IntegerDivisionThroughIntdiv) {
  for (const char* op : {"remainder", "fmod", "floor_divide"}) {
    SCOPED_TRACE(op);
    Region r;
    // Every sign combination, zero divisors and MIN / -1.
    ValueId a = r.input_values(DType::kI32, {9}, {7, -7, 7, -7, 6, 5, -2147483648.0, 0, -1});
    ValueId b = r.input_values(DType::kI32, {9}, {3, 3, -3, -3, 3, 0, -1, -4, 2});
    r.output(r.op(op, {a, b}));
    round_trip(r, kExact);
    check_op(op, DType::kI32, {4, 6}, 2, {}, kExact, -20, 20);
  }
}

TEST(TosaLowering, NewReductions) {
  for (int64_t keep : {0, 1}) {
    check_op("reduce_min", DType::kF32, {2, 3, 4}, 1, {{"axes", Ints{0, 2}}, {"keepdim", keep}}, kExact);
    check_op("reduce_prod", DType::kF32, {2, 3, 4}, 1, {{"axes", Ints{1}}, {"keepdim", keep}}, kF32);
    check_op("reduce_any", DType::kBool, {2, 3, 4}, 1, {{"axes", Ints{-1}}, {"keepdim", keep}}, kExact);
    check_op("reduce_all", DType::kBool, {2, 3, 4}, 1, {{"axes", Ints{0, 1}}, {"keepdim", keep}}, kExact);
  }
  check_op("reduce_min", DType::kI32, {3, 4}, 1, {{"axes", Ints{1}}}, kExact, -100, 100);
  check_op("reduce_min", DType::kI8, {3, 4}, 1, {{"axes", Ints{0}}}, kExact, -128, 127);
}

// The reason after the node is the VGF capability's: both read the op table.
TEST(TosaLowering, RefusesWhatTosaCannotExpress) {
  struct Case {
    const char* op;
    DType dtype;
    AttrMap attrs;
    const char* says;
  };
  const Case cases[] = {
      {"atan", DType::kF32, {}, "node 'atan_0' (atan): TOSA 1.0 has no f32 form of 'atan' (no inverse trigonometric"},
      {"expm1", DType::kF32, {}, "node 'expm1_0' (expm1): TOSA 1.0 has no f32 form of 'expm1' (no TOSA 1.0 operator"},
      {"fmod", DType::kF32, {}, "node 'fmod_0' (fmod): TOSA 1.0 has no f32 form of 'fmod' (INTDIV with sign fix-ups"},
      {"reduce_prod", DType::kI32, {{"axes", Ints{0}}, {"keepdim", int64_t{1}}},
       "node 'reduce_prod_0' (reduce_prod): TOSA 1.0 has no i32 form of 'reduce_prod' (REDUCE_PRODUCT (float-only)"},
      {"cumsum", DType::kF32, {{"axis", int64_t{0}}},
       "node 'cumsum_0' (cumsum): TOSA 1.0 has no f32 form of 'cumsum' (no prefix-sum operator"},
      {"argmax", DType::kF32, {{"axis", int64_t{0}}}, "no i64 tensors"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    Region r;
    bool binary = std::string(c.op) == "fmod";
    std::vector<ValueId> in = {r.input(c.dtype, {4})};
    if (binary) in.push_back(r.input(c.dtype, {4}));
    r.output(r.op(c.op, in, c.attrs));
    Result<TosaGraph> t = lower_to_tosa(r.g);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(t.status().message().find(c.says), std::string::npos) << t.status().message();
  }
}

// ---- tosa_to_gpuu on TOSA written by hand ----------------------------------------

Result<std::vector<HostTensor>> run_tosa(const TosaGraph& t, const std::vector<HostTensor>& inputs) {
  GPUU_ASSIGN_OR_RETURN(graph::Graph g, tosa_to_gpuu(t));
  GPUU_RETURN_IF_ERROR(graph::verify(g));
  return cpu::run_graph(g, inputs);
}

TEST(TosaToGpuu, CastFloatToIntRoundsHalfToEvenAndSaturates) {
  TosaGraph t;
  TosaTensorId x = t.add_input(TosaElementType::kF32, {10}, 0, 0);
  t.add_output(t.add_operator(TosaOp::kCast, {}, {x}, {{TosaElementType::kI8, {10}}}), 0, 1);
  Reals in = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6, 1000, -1000};
  Result<std::vector<HostTensor>> out = run_tosa(t, {*HostTensor::from_doubles(DType::kF32, {10}, in)});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].to_doubles(), (Reals{0, 2, 2, 0, -2, -2, 2, 3, 127, -128}));
}

TEST(TosaToGpuu, NegateOfI8Saturates) {
  TosaGraph t;
  TosaTensorId x = t.add_input(TosaElementType::kI8, {3}, 0, 0);
  TosaAttribute zp = TosaAttribute::zero_point(TosaElementType::kI8);
  t.add_output(t.add_operator(TosaOp::kNegate, {zp, zp}, {x}, {{TosaElementType::kI8, {3}}}), 0, 1);
  Result<std::vector<HostTensor>> out = run_tosa(t, {*HostTensor::from_doubles(DType::kI8, {3}, {-128, 5, 127})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].to_doubles(), (Reals{127, -5, -127}));
}

TEST(TosaToGpuu, AvgPoolWithAsymmetricPadsCountsOnlyRealCells) {
  // 1x3x3x1 NHWC, kernel 2, stride 2, pads [0,1,0,1]: the windows cover
  // {1,2,4,5}, {3,6}, {7,8}, {9}.
  TosaGraph t;
  TosaTensorId x = t.add_input(TosaElementType::kF32, {1, 3, 3, 1}, 0, 0);
  TosaAttribute zp = TosaAttribute::zero_point(TosaElementType::kF32);
  t.add_output(t.add_operator(TosaOp::kAvgPool2d,
                              {TosaAttribute::shape({2, 2}), TosaAttribute::shape({2, 2}), TosaAttribute::shape({0, 1, 0, 1}),
                               TosaAttribute::u32(3), zp, zp},
                              {x}, {{TosaElementType::kF32, {1, 2, 2, 1}}}),
               0, 1);
  Result<std::vector<HostTensor>> out =
      run_tosa(t, {*HostTensor::from_doubles(DType::kF32, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].to_doubles(), (Reals{3, 4.5, 7.5, 9}));
}

TEST(TosaToGpuu, GoldenSinMulRunsOnTheCpuKernels) {
  FILE* f = std::fopen((std::string(GPUU_VGF_SAMPLES_DIR) + "/sin_mul_const.spv").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::vector<uint32_t> words(183);
  ASSERT_EQ(std::fread(words.data(), 4, words.size(), f), words.size());
  std::fclose(f);
  Result<TosaGraph> t = parse_tosa_module(words.data(), words.size());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_FALSE(tosa_to_gpuu(*t).ok());  // W has no data yet
  // W = 0.0, 0.5, 1.0, ... (the sin_mul_const.vgf payload).
  std::vector<float> w(48), x(48);
  for (int i = 0; i < 48; ++i) {
    w[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i);
    x[static_cast<size_t>(i)] = -1.0f + static_cast<float>(i) / 24.0f;
  }
  ASSERT_TRUE(set_graph_constant_data(*t, 0, Blob::copy_of(w.data(), w.size() * 4)).ok());
  Result<std::vector<HostTensor>> out = run_tosa(t.value(), {*HostTensor::from_data<float>({1, 3, 4, 4}, x)});
  ASSERT_TRUE(out.ok()) << out.status().message();
  for (size_t i = 0; i < 48; ++i) {
    EXPECT_NEAR((*out)[0].element(static_cast<int64_t>(i)), std::sin(static_cast<double>(x[i])) * w[i], 1e-5) << i;
  }
}

TEST(TosaToGpuu, IntdivTruncatesTowardZero) {
  TosaGraph t;
  TosaTensorId a = t.add_input(TosaElementType::kI32, {4}, 0, 0);
  TosaTensorId b = t.add_input(TosaElementType::kI32, {4}, 0, 1);
  t.add_output(t.add_operator(TosaOp::kIntdiv, {}, {a, b}, {{TosaElementType::kI32, {4}}}), 0, 2);
  HostTensor x = HostTensor::from_doubles(DType::kI32, {4}, {7, -7, 7, -6}).value();
  HostTensor y = HostTensor::from_doubles(DType::kI32, {4}, {2, 2, -2, -2}).value();
  Result<std::vector<HostTensor>> out = run_tosa(t, {x, y});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].to_doubles(), (Reals{3, -3, -3, 3}));
}

TEST(TosaToGpuu, RefusesWhatGpuuCannotExpress) {
  TosaGraph t;
  TosaTensorId a = t.add_input(TosaElementType::kI32, {4}, 0, 0);
  t.add_output(t.add_operator(TosaOp::kClz, {}, {a}, {{TosaElementType::kI32, {4}}}), 0, 1);
  Result<graph::Graph> g = tosa_to_gpuu(t);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(g.status().message().find("operator 0 (CLZ): no gpuu equivalent"), std::string::npos)
      << g.status().message();
  TosaTensorId b;

  // A shift is i32 MUL's (it raises to mul_shift); an i8 MUL must have none.
  TosaGraph m;
  a = m.add_input(TosaElementType::kI8, {4}, 0, 0);
  b = m.add_input(TosaElementType::kI8, {4}, 0, 1);
  m.add_output(m.add_operator(TosaOp::kMul, {TosaAttribute::int_tensor(TosaElementType::kI8, {3})}, {a, b},
                              {{TosaElementType::kI32, {4}}}),
               0, 2);
  g = tosa_to_gpuu(m);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("nonzero shift"), std::string::npos) << g.status().message();
}

}  // namespace
}  // namespace gpuu::vgf

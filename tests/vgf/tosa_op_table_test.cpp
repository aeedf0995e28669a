// The VGF op table against the op registry and the lowering it points at:
// each entry names a registered op, once; it declares only dtypes the op can
// have; every dtype it takes really lowers (one representative node each), and
// every other dtype is refused with the table's own words.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "tosa_round_trip.h"
#include "vgf/tosa_lowering.h"
#include "vgf/tosa_op_table.h"

namespace gpuu::vgf {
namespace {

using graph::AttrMap;
using graph::DType;
using graph::Shape;
using graph::ValueId;
using Ints = std::vector<int64_t>;

// One node of `op` whose deciding input (the data; input 1 of where) is `d`,
// on small shapes, with the inputs and attributes the op needs. Floats are
// positive (log, sqrt and pow stay real) and below pi/2 (tan stays finite).
Region representative(const std::string& op, DType d) {
  Region r;
  bool is_float = d == DType::kF32 || d == DType::kF16;
  auto in = [&](DType dtype, Shape shape) {
    return is_float ? r.input(dtype, shape, 0.25, 1.25) : r.input(dtype, shape, -3, 3);
  };
  auto node = [&](std::vector<ValueId> inputs, AttrMap attrs = {}) {
    r.output(r.op(op.c_str(), std::move(inputs), std::move(attrs)));
  };
  const Shape s = {2, 3, 4, 4};
  const Shape image = {1, 2, 4, 4};
  if (op == "where") {
    node({r.input(DType::kBool, s), in(d, s), in(d, s)});
  } else if (op == "cast") {
    node({in(d, s)}, {{"dtype", std::string(d == DType::kF32 ? "i32" : "f32")}});
  } else if (op == "gather") {
    node({in(d, {2, 3, 4}), r.constant(DType::kI32, {2, 3, 2}, 0, 3)}, {{"axis", int64_t{2}}});
  } else if (op == "index_select") {
    node({in(d, {3, 4}), r.constant(DType::kI32, {2}, 0, 2)}, {{"axis", int64_t{0}}});
  } else if (op == "index_put") {
    node({in(d, {3, 4}), r.constant(DType::kI32, {2}, 0, 2), in(d, {2, 4})}, {{"axis", int64_t{0}}});
  } else if (op == "scatter") {
    node({in(d, {3, 4}), r.constant(DType::kI32, {2, 4}, 0, 2), in(d, {2, 4})}, {{"axis", int64_t{0}}});
  } else if (op == "matmul") {
    node({in(d, {2, 3, 4}), in(d, {4, 5})});
  } else if (op == "linear") {
    node({in(d, {2, 4}), r.constant(d, {3, 4}), r.constant(d, {3})});
  } else if (op == "conv2d") {
    node({in(d, image), r.constant(d, {3, 2, 3, 3}), r.constant(d, {3})}, {{"padding", Ints{1, 1}}});
  } else if (op == "conv2d_int") {  // i8 weights under i8 and i16 activations; the bias is the accumulator's type
    const DType acc = d == DType::kI16 ? DType::kI64 : DType::kI32;
    node({in(d, image), r.constant(DType::kI8, {3, 2, 3, 3}), r.constant(acc, {3})});
  } else if (op == "conv3d") {
    node({in(d, {1, 2, 4, 4, 4}), r.constant(d, {3, 2, 2, 2, 2})});
  } else if (op == "conv_transpose2d") {
    node({in(d, image), r.constant(d, {2, 3, 2, 2})}, {{"stride", Ints{2, 2}}});
  } else if (op == "avg_pool2d" || op == "max_pool2d" || op == "avg_pool2d_int") {
    node({in(d, image)}, {{"kernel", Ints{2, 2}}});
  } else if (op == "avg_pool3d" || op == "max_pool3d") {
    node({in(d, {1, 2, 4, 4, 4})}, {{"kernel", Ints{2, 2, 2}}});
  } else if (op == "resize") {
    node({in(d, image)}, {{"size", Ints{8, 8}}});
  } else if (op == "matmul_int") {
    node({in(d, {1, 2, 3}), in(d, {1, 3, 4})});
  } else if (op == "rescale") {
    node({in(d, s), r.constant(DType::kI32, {1}, 1 << 30, 1 << 30), r.constant(DType::kI32, {1}, 30, 30)},
         {{"dtype", std::string("i8")}});
  } else if (op == "table") {
    node({in(d, s), r.constant(DType::kI8, {256}, -128, 127)});
  } else if (op.rfind("reduce_", 0) == 0) {
    node({in(d, s)}, {{"axes", Ints{1}}});
  } else if (op == "argmax" || op == "argmin" || op == "cumsum" || op == "softmax") {
    node({in(d, s)}, {{"axis", int64_t{1}}});
  } else if (op == "scaled_dot_product_attention") {
    // Grouped heads and a bool mask.
    node({in(d, {2, 4, 3, 4}), in(d, {2, 2, 5, 4}), in(d, {2, 2, 5, 3}), r.input(DType::kBool, {3, 5})});
  } else if (op == "layer_norm") {
    node({in(d, s)}, {{"normalized_ndim", int64_t{1}}});
  } else if (op == "transpose") {
    node({in(d, s)}, {{"perm", Ints{0, 1, 3, 2}}});
  } else if (op == "reshape") {
    node({in(d, s)}, {{"shape", Ints{6, 16}}});
  } else if (op == "slice") {
    node({in(d, s)}, {{"axes", Ints{3}}, {"starts", Ints{1}}, {"ends", Ints{3}}});
  } else if (op == "concat") {
    node({in(d, s), in(d, s)}, {{"axis", int64_t{1}}});
  } else if (op == "pad") {
    node({in(d, s)}, {{"pads", Ints{0, 0, 0, 0, 1, 1, 0, 2}}});
  } else if (op == "expand") {
    node({in(d, {2, 1, 4, 4})}, {{"shape", Ints{2, 3, 4, 4}}});
  } else if (op == "flip") {
    node({in(d, s)}, {{"axes", Ints{3}}});
  } else {
    // Elementwise: every required input of the deciding dtype and shape.
    const graph::OpSchema* schema = graph::find_op(op);
    std::vector<ValueId> inputs;
    for (size_t i = 0; schema && i < schema->min_inputs; ++i) inputs.push_back(in(d, s));
    node(inputs);
  }
  return r;
}

std::vector<DType> dtypes_of(TosaDTypeSet set) {
  std::vector<DType> out;
  for (int i = 0; i < graph::kDTypeCount; ++i) {
    if (set & tosa_dtype_bit(static_cast<DType>(i))) out.push_back(static_cast<DType>(i));
  }
  return out;
}

// The data input whose dtype the entry's form decides on.
size_t deciding_input(const TosaOpEntry& entry) { return entry.form == TosaOpForm::kSelect ? 1 : 0; }

TEST(TosaOpTable, EveryEntryNamesARegisteredOpOnce) {
  std::set<std::string> seen;
  for (const TosaOpEntry& entry : tosa_op_table()) {
    SCOPED_TRACE(entry.op);
    EXPECT_NE(graph::find_op(entry.op), nullptr) << "not a registered op";
    EXPECT_TRUE(seen.insert(entry.op).second) << "a second entry";
    EXPECT_EQ(find_tosa_op(entry.op), &entry);
  }
  EXPECT_EQ(find_tosa_op("no_such_op"), nullptr);
}

TEST(TosaOpTable, TensorDtypesAreThoseTosaHasATypeFor) {
  for (int i = 0; i < graph::kDTypeCount; ++i) {
    DType d = static_cast<DType>(i);
    TosaElementType t;
    EXPECT_EQ((kTosaTensorDTypes & tosa_dtype_bit(d)) != 0, dtype_to_tosa(d, &t)) << graph::dtype_name(d);
  }
}

// An op TOSA expresses has a lowering; one it does not has none. custom_shader
// is the exception: a COMPUTE segment, which lower_to_tosa never emits.
TEST(TosaOpTable, AnEntryLowersExactlyWhenItTakesADtype) {
  for (const TosaOpEntry& entry : tosa_op_table()) {
    SCOPED_TRACE(entry.op);
    bool takes = (entry.dtypes | entry.undeclared) != 0 && entry.form != TosaOpForm::kCustomShader;
    EXPECT_EQ(entry.lower != nullptr, takes);
    EXPECT_EQ(entry.undeclared & entry.dtypes, 0) << "a dtype both declared and undeclared";
    EXPECT_EQ(entry.dtypes & ~kTosaTensorDTypes, 0) << "a dtype TOSA has no tensors for";
    EXPECT_EQ(entry.undeclared & ~kTosaTensorDTypes, 0) << "a dtype TOSA has no tensors for";
  }
}

TEST(TosaOpTable, DeclaresOnlyDtypesTheOpHas) {
  for (const TosaOpEntry& entry : tosa_op_table()) {
    const graph::OpSchema* schema = graph::find_op(entry.op);
    if (!schema) continue;  // EveryEntryNamesARegisteredOpOnce reports it
    for (DType d : dtypes_of(entry.dtypes | entry.undeclared)) {
      EXPECT_TRUE(schema->accepts_dtype(d)) << entry.op << " takes no " << graph::dtype_name(d);
    }
  }
}

// The test that fails when the capability claims an op/dtype the lowering
// cannot do: a representative node of each dtype an entry takes lowers, and
// its TOSA form computes what the node computes (round_trip).
TEST(TosaOpTable, EveryDtypeAnEntryTakesLowers) {
  for (const TosaOpEntry& entry : tosa_op_table()) {
    if (!entry.lower) continue;
    for (DType d : dtypes_of(entry.dtypes | entry.undeclared)) {
      SCOPED_TRACE(std::string(entry.op) + " on " + graph::dtype_name(d));
      Region r = representative(entry.op, d);
      ASSERT_EQ(r.g.nodes().size(), 1u) << "no representative node";
      const graph::Node& node = r.g.node(0);
      ASSERT_EQ(r.g.value(node.inputs[deciding_input(entry)]).dtype, d);
      EXPECT_TRUE(check_tosa_node(r.g, node, TosaDTypeRule::kLowered).ok());
      EXPECT_EQ(check_tosa_node(r.g, node, TosaDTypeRule::kDeclared).ok(), (entry.dtypes & tosa_dtype_bit(d)) != 0);
      // f16 decompositions round at every step (layer_norm's mean and variance
      // in f16 lose more than kF16 allows on these inputs).
      round_trip(r, d == DType::kF32 ? kF32 : d == DType::kF16 ? Tol{1e-2, 1e-2} : kExact);
    }
  }
}

// Every other dtype the op has (and TOSA has tensors for) is refused, in the
// words the capability uses.
TEST(TosaOpTable, EveryOtherDtypeIsRefusedInTheTablesWords) {
  for (const TosaOpEntry& entry : tosa_op_table()) {
    const graph::OpSchema* schema = graph::find_op(entry.op);
    if (!schema || entry.form == TosaOpForm::kCast || entry.form == TosaOpForm::kCustomShader) continue;
    for (DType d : dtypes_of(kTosaTensorDTypes & ~(entry.dtypes | entry.undeclared))) {
      if (!schema->accepts_dtype(d)) continue;
      SCOPED_TRACE(std::string(entry.op) + " on " + graph::dtype_name(d));
      Region r = representative(entry.op, d);
      ASSERT_EQ(r.g.nodes().size(), 1u) << "no representative node";
      const graph::Node& node = r.g.node(0);
      // An output TOSA has no tensors for (argmax's i64) is refused before the table is asked.
      bool tosa_outputs = true;
      for (ValueId v : node.outputs) {
        tosa_outputs = tosa_outputs && (tosa_dtype_bit(r.g.value(v).dtype) & kTosaTensorDTypes);
      }
      if (!tosa_outputs) continue;
      TosaRefusal refusal = check_tosa_node(r.g, node, TosaDTypeRule::kLowered);
      ASSERT_EQ(refusal.kind, TosaRefusal::Kind::kOpDtype);
      EXPECT_EQ(refusal.dtype, d);
      Result<TosaGraph> tosa = lower_to_tosa(r.g);
      ASSERT_FALSE(tosa.ok());
      EXPECT_EQ(tosa.status().code(), StatusCode::kUnsupported);
      EXPECT_EQ(tosa.status().message(), tosa_node_label(node) + describe_tosa_refusal(r.g, node, refusal));
    }
  }
}

TEST(TosaOpTable, NodeChecksRefuseWhatTosaCannotExpress) {
  Region dilated;
  dilated.output(dilated.op("conv_transpose2d",
                            {dilated.input(DType::kF32, {1, 2, 3, 3}), dilated.constant(DType::kF32, {2, 2, 2, 2})},
                            {{"dilation", Ints{2, 1}}}));
  Region far;  // 20x down: past RESIZE's 16x
  far.output(far.op("resize", {far.input(DType::kF32, {1, 1, 40, 4})}, {{"size", Ints{2, 4}}}));
  Region table;  // the table is an input, not a constant
  table.output(table.op("table", {table.input(DType::kI8, {4}), table.input(DType::kI8, {256})}));
  struct Case {
    const char* label;
    const Region& r;
    const char* says;
  };
  for (const Case& c : {Case{"dilated", dilated, "TOSA 1.0 TRANSPOSE_CONV2D has no dilation (dilation is [2,1])"},
                        Case{"far", far,
                             "no TOSA RESIZE scale/offset/border reproduces torch's nearest indices along the height "
                             "(40 -> 2)"},
                        Case{"table", table, "TOSA's TABLE takes its table as a constant; 'in1' is not one"}}) {
    SCOPED_TRACE(c.label);
    ASSERT_EQ(c.r.g.nodes().size(), 1u);
    const graph::Node& node = c.r.g.node(0);
    TosaRefusal refusal = check_tosa_node(c.r.g, node, TosaDTypeRule::kDeclared);
    ASSERT_EQ(refusal.kind, TosaRefusal::Kind::kNode);
    EXPECT_EQ(describe_tosa_refusal(c.r.g, node, refusal), c.says);
    Result<TosaGraph> tosa = lower_to_tosa(c.r.g);
    ASSERT_FALSE(tosa.ok());
    EXPECT_EQ(tosa.status().code(), StatusCode::kUnsupported);
    EXPECT_EQ(tosa.status().message(), tosa_node_label(node) + c.says);
  }
}

// An i16 convolution's i48 sums (gpuu's i64, TOSA's i48: carries_i48) rescaled
// to i16 with a 16-bit multiplier, per channel, and clamped: the a16w8 chain,
// lowered and raised back, computes what the nodes compute.
TEST(TosaOpTable, SixteenBitConvolutionChainRoundTrips) {
  Region r;
  ValueId x = r.input(DType::kI16, {1, 2, 5, 5}, -32768, 32767);
  ValueId acc = r.op("conv2d_int", {x, r.constant(DType::kI8, {3, 2, 3, 3}, -127, 127), r.constant(DType::kI64, {3}, -1e6, 1e6)},
                     {{"padding", Ints{1, 1, 1, 1}}, {"weight_zp", int64_t{2}}});
  ValueId y = r.op("rescale", {acc, r.constant(DType::kI32, {3}, 16384, 32767), r.constant(DType::kI32, {3}, 22, 24)},
                   {{"dtype", std::string("i16")}, {"scale32", int64_t{0}}, {"axis", int64_t{1}}});
  r.output(r.op("clamp", {y}, {{"min", 0.0}, {"max", 20000.0}}));
  round_trip(r, kExact);
}

}  // namespace
}  // namespace gpuu::vgf


// The VGF backend's op table: per gpuu op, what TOSA 1.0 takes (its form, the
// dtypes of the deciding input, a check of the node's attributes and shapes)
// and the lowering that emits it. The partitioner's VGF capability,
// gpuu-inspect --ops, docs/ops.md and lower_to_tosa all read this one table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace gpuu::vgf {

class TosaLowering;  // one region being lowered (tosa_lowering.cpp)

// A set of dtypes, one bit per graph::DType; a dtype outside the enum (a
// corrupt graph) maps to no bit, so no set holds it.
using TosaDTypeSet = uint8_t;
constexpr TosaDTypeSet tosa_dtype_bit(graph::DType d) {
  return static_cast<unsigned>(d) < 8 ? static_cast<TosaDTypeSet>(1u << static_cast<unsigned>(d)) : 0;
}
constexpr TosaDTypeSet kTosaFloat = tosa_dtype_bit(graph::DType::kF32) | tosa_dtype_bit(graph::DType::kF16);
constexpr TosaDTypeSet kTosaI32 = tosa_dtype_bit(graph::DType::kI32);
constexpr TosaDTypeSet kTosaI8 = tosa_dtype_bit(graph::DType::kI8);
constexpr TosaDTypeSet kTosaBool = tosa_dtype_bit(graph::DType::kBool);
constexpr TosaDTypeSet kTosaI16 = tosa_dtype_bit(graph::DType::kI16);
// Every dtype TOSA 1.0 has a tensor type for among gpuu's (dtype_to_tosa maps them).
constexpr TosaDTypeSet kTosaTensorDTypes = kTosaFloat | kTosaI32 | kTosaI8 | kTosaBool | kTosaI16;

// Where gpuu's i64 is TOSA's i48, the accumulator of i16 x i8 sums: a
// conv2d_int's output and bias (over i16 activations) and a rescale's input.
// TOSA has no i64; everywhere else an i64 tensor has no TOSA type.
bool carries_i48(std::string_view op, bool is_output, size_t slot);

// How an op's inputs decide its dtype rule.
enum class TosaOpForm : uint8_t {
  kPlain,        // input 0 carries the dtype that matters
  kIndexed,      // gather/index_select/index_put: input 0 data, input 1 i32 indices
  kSelect,       // where: input 0 bool condition, inputs 1 and 2 data
  kCompare,      // input 0 data, output bool
  kCast,         // any dtype with a TOSA tensor type in, any out
  kCustomShader  // the shader declares its own formats; a VGF COMPUTE segment, not TOSA
};

struct TosaOpEntry {
  const char* op;
  TosaOpForm form;
  // The dtypes of the deciding input that VGF declares (to the partitioner,
  // docs and gpuu-inspect): TOSA 1.0's forms of the op. None: no TOSA form.
  TosaDTypeSet dtypes;
  const char* tosa;  // how TOSA expresses the op, for messages and docs
  // "" when TOSA expresses this node (its attributes, resolved, and shapes),
  // else why not; nullptr: every node of an accepted dtype lowers.
  std::string (*check)(const graph::Graph&, const graph::Node&, const graph::AttrMap& attrs);
  // Emits the node's TOSA operators; nullptr where the op has no TOSA form
  // (custom_shader becomes a COMPUTE segment instead, outside lower_to_tosa).
  Status (TosaLowering::*lower)();
  // Further dtypes lower_to_tosa takes through a composition (i8 arithmetic
  // through i32, bool equality through LOGICAL_XOR) that VGF does not declare.
  TosaDTypeSet undeclared = 0;
};

// Every op the table knows, in a fixed order; at most one entry per op.
const std::vector<TosaOpEntry>& tosa_op_table();
// The entry of `op`, or nullptr.
const TosaOpEntry* find_tosa_op(std::string_view op);

// Why the table refuses a node, compact enough to compute for every node of a
// large graph; describe_tosa_refusal() words it.
struct TosaRefusal {
  enum class Kind : uint8_t {
    kOk,
    kUnknownOp,       // no entry for the op
    kOpDtype,         // the deciding input's dtype has no form of the op
    kIndexDtype,      // gather/index_select/index_put indices are not i32
    kConditionDtype,  // where's condition is not bool
    kNode,            // the entry's check refused the node's attributes or shapes
  };
  Kind kind = Kind::kOk;
  int32_t slot = 0;  // the input at fault (the dtype kinds)
  graph::DType dtype = graph::DType::kF32;

  bool ok() const { return kind == Kind::kOk; }
};

// Which dtypes a check accepts: those VGF declares, or every one lower_to_tosa takes.
enum class TosaDTypeRule : uint8_t { kDeclared, kLowered };

// Whether the table takes `node` (its tensors already vetted: ids resolve,
// TOSA has their dtypes): its form's dtype rule over `rule`'s dtypes, then
// the entry's check. A node whose attributes do not resolve is the
// verifier's to refuse, not the table's (lower_to_tosa verifies first).
TosaRefusal check_tosa_node(const graph::Graph& graph, const graph::Node& node, TosaDTypeRule rule);
// The refusal as text: "TOSA 1.0 has no i32 form of 'sin' (a float-only
// elementwise operator; input 0 of s is i32)"; kNode: the entry's check's
// reason. lower_to_tosa's kUnsupported message is tosa_node_label() + this.
std::string describe_tosa_refusal(const graph::Graph& graph, const graph::Node& node, const TosaRefusal& refusal);
// "node 'n' (op): ", how lower_to_tosa's errors name the node at fault.
std::string tosa_node_label(const graph::Node& node);

}  // namespace gpuu::vgf

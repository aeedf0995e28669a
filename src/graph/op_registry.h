// The op registry: every op gpuu knows, with its inputs, attribute schema,
// dtype rule and shape inference. The builder, the verifier, the partitioner
// and the backends all read op semantics from here and nowhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace gpuu::graph {

enum class AttrKind : uint8_t { kInt = 0, kFloat = 1, kString = 2, kInts = 3, kFloats = 4 };
const char* attr_kind_name(AttrKind kind);  // "int", "float", "string", "ints", "floats"
AttrKind attr_kind_of(const AttrValue& value);

struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::kInt;
  bool required = false;
  bool has_default = false;
  AttrValue default_value;  // meaningful when has_default
  // A default that depends on other attributes ("kernel" for pool strides),
  // filled by OpSchema::derived_defaults; empty otherwise.
  std::string derived_from;
};

struct InputSpec {
  std::string name;       // "x", "weight", "bias", ...
  bool optional = false;  // may be left off at the end, or passed as kNone
};

class InferContext;  // defined in op_registry.cpp
using InferFn = Status (*)(InferContext& ctx);
using DerivedDefaultsFn = void (*)(AttrMap* attrs);
// For ops with attribute names that follow a pattern (custom_shader's
// output_<i>_shape): true and the kind when `name` is one of them.
using PatternAttrFn = bool (*)(std::string_view name, AttrKind* kind);

constexpr size_t kVariadic = static_cast<size_t>(-1);

struct OpSchema {
  std::string name;
  // Input positions. For variadic ops (max_inputs == kVariadic) the last spec
  // describes every further input too.
  std::vector<InputSpec> inputs;
  size_t min_inputs = 0;
  size_t max_inputs = 0;
  std::vector<AttrSpec> attrs;
  std::vector<DType> dtypes;  // dtypes the data inputs may hold; empty: any
  std::string dtype_rule;     // one line, for docs, messages and the partitioner's reasons
  InferFn infer_fn = nullptr;
  DerivedDefaultsFn derived_defaults = nullptr;
  PatternAttrFn pattern_attr = nullptr;

  bool variadic() const { return max_inputs == kVariadic; }
  bool input_optional(size_t index) const;
  const std::string& input_name(size_t index) const;
  const AttrSpec* find_attr(std::string_view attr) const;
  bool accepts_dtype(DType dtype) const;
};

// Every registered op, sorted by name.
const std::vector<OpSchema>& all_ops();
// The schema named `name`, or nullptr.
const OpSchema* find_op(std::string_view name);

// Checks `node` against its schema (known op, input arity and ids, optional
// inputs, attribute names, kinds and required ones, dtypes, shapes and
// attribute values) and computes its outputs: dtype, shape and the name
// "<node name>:<i>". Ignores node.outputs. Errors (kInvalidArgument) read
// "node '<name>' (<op>): <what>", naming the input or attribute at fault.
Status infer(const Graph& graph, const Node& node, std::vector<Value>* outputs);

// node.attrs with every default filled in (static defaults and derived ones
// such as a pool's stride = kernel); checks names and kinds as infer() does.
// Optional attributes without a default (clamp's min/max) stay absent.
Result<AttrMap> resolve_attrs(const Node& node);

// Typed reads of an attribute map, for code that runs after resolve_attrs()
// or on a verified graph built by add_op (which stores resolved attributes).
// `fallback` is returned when the attribute is absent or of another kind.
int64_t attr_int(const AttrMap& attrs, const std::string& name, int64_t fallback = 0);
double attr_float(const AttrMap& attrs, const std::string& name, double fallback = 0.0);
std::string attr_string(const AttrMap& attrs, const std::string& name, const std::string& fallback = "");
std::vector<int64_t> attr_ints(const AttrMap& attrs, const std::string& name);
std::vector<double> attr_floats(const AttrMap& attrs, const std::string& name);
bool has_attr(const AttrMap& attrs, const std::string& name);

// Maps an axis in [-rank, rank) to [0, rank); -1 when out of range.
int64_t normalize_axis(int64_t axis, size_t rank);

// numpy broadcasting: shapes are aligned at their trailing dims; each pair of
// dims must be equal or one of them 1. Fails naming both shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// The custom-shader domain name (seed vgf-custom-shader-conversion.txt).
constexpr const char* kCustomShaderDomain = "com.arm.VulkanCustomShader";

}  // namespace gpuu::graph

// The TOSA graph IR of the VGF backend: tensors, TOSA 1.0 operators with their
// attribute operands, graph inputs/outputs bound to descriptor slots, and
// constants; what tosa_spirv.h encodes as SPIR-V and tosa_lowering.h builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/blob.h"
#include "base/status.h"
#include "vgf/tosa_grammar.h"

namespace gpuu::vgf {

// TOSA element types gpuu can carry. SPIR-V: bool -> OpTypeBool, i8/i16/i32 ->
// OpTypeInt 8/16/32 0, i48 -> OpTypeInt 64 0, f16/f32 -> OpTypeFloat 16/32.
// (bf16 and fp8 need SPIR-V extensions gpuu does not emit.)
enum class TosaElementType : uint8_t { kBool, kI8, kI16, kI32, kI48, kF16, kF32 };
const char* tosa_element_type_name(TosaElementType type);  // "bool", "i8", ..., "f32"
bool tosa_is_float(TosaElementType type);
// Bytes per element in constant data: bool 1 (0 or 1), i48 8 (sign-extended int64).
size_t tosa_element_size(TosaElementType type);
// The integer range an element type holds (bool 0..1; 0..0 for floats).
void tosa_int_range(TosaElementType type, int64_t* lo, int64_t* hi);
// The lowest value of a type (-inf for floats): what a max pool pads with.
double tosa_lowest(TosaElementType type);

// How the grammar's operands are used (generated table, gen_tosa_tables.py).
enum class TosaOperandRole : uint8_t {
  kInput,       // a tensor value
  kInputList,   // one tensor value per list element (CONCAT)
  kAttrU32,     // OpConstant u32
  kAttrEnum,    // OpConstant u32 holding an enum value
  kAttrBool,    // OpConstantTrue/False
  kAttrShape,   // rank-1 const tensor<i32> (shape_t, kernel, stride, ...)
  kAttrTensor,  // rank-1 const tensor of some element type (zero points, shift, table, ...)
  kAttrScalar,  // scalar constant of the input element type (CLAMP min/max)
};
enum class TosaEnumKind : uint8_t { kNone, kAccType, kNanPropagationMode, kRoundingMode, kResizeMode };
enum class TosaLengthRule : uint8_t {
  kNone,
  kFixed,         // exactly `length` elements
  kRankOf,        // rank of operand `ref`
  kTwiceRankOf,   // 2 * rank of operand `ref`
  kRankOfResult,  // rank of the result
  kAny,           // at least one element
};
enum class TosaTypeRule : uint8_t {
  kNone,       // u32 / enum / bool / shape: implied by the role
  kFixed,      // fixed_type
  kOfOperand,  // the element type of operand `ref`
  kOfResult,   // the element type of the result
  kI16OrI32,   // RESCALE multiplier
};

struct TosaOperandInfo {
  const char* name;
  TosaOperandRole role;
  TosaEnumKind enum_kind;
  TosaLengthRule length_rule;
  int32_t length;
  TosaTypeRule type_rule;
  TosaElementType fixed_type;
  int32_t ref;  // an operand index of the same operator (see the rules above)
};

struct TosaOpInfo {
  TosaOp op;
  const char* name;  // "AVG_POOL2D"
  uint32_t opcode;
  const TosaOperandInfo* operands;  // grammar order: attributes and inputs interleaved as the grammar has them
  uint32_t operand_count;
  uint32_t result_count;  // 2 for FFT2D/RFFT2D (an OpTypeStruct), else 1
};

// nullptr for an opcode outside the instruction set.
const TosaOpInfo* find_tosa_op(uint32_t opcode);
const TosaOpInfo& tosa_op_info(TosaOp op);  // op must be a TosaOp enumerator
const char* tosa_op_name(TosaOp op);
// Counts over info.operands: attribute operands, and tensor operands (a list counts once).
size_t tosa_attr_count(const TosaOpInfo& info);
size_t tosa_input_count(const TosaOpInfo& info);

using TosaTensorId = int32_t;

struct TosaTensor {
  TosaElementType type = TosaElementType::kF32;
  std::vector<int64_t> shape;  // outermost first; 4-D activations are NHWC
};

// An attribute operand: a scalar constant (u32, enum, bool, CLAMP bound) or a
// rank-1 constant tensor of values.size() elements. Integer and bool values
// live in `ints` (bools 0/1, u32 as 0..2^32-1), float values in `floats`;
// exactly one of them is used, as `type` says. u32 and i32 are both
// OpTypeInt 32 0 in SPIR-V, so both use kI32.
struct TosaAttribute {
  TosaElementType type = TosaElementType::kI32;
  bool is_tensor = false;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  static TosaAttribute u32(uint32_t value);
  static TosaAttribute boolean(bool value);
  static TosaAttribute shape(std::vector<int64_t> values);  // const tensor<i32>[n]
  static TosaAttribute int_tensor(TosaElementType type, std::vector<int64_t> values);
  static TosaAttribute float_tensor(TosaElementType type, std::vector<double> values);
  static TosaAttribute int_scalar(TosaElementType type, int64_t value);
  static TosaAttribute float_scalar(TosaElementType type, double value);
  // A 1-element tensor holding 0 (0.0 for floats): zero points, MUL's shift.
  static TosaAttribute zero_point(TosaElementType type);

  size_t size() const { return tosa_is_float(type) ? floats.size() : ints.size(); }
  // Element i as a double (ints converted).
  double value(size_t i) const { return tosa_is_float(type) ? floats[i] : static_cast<double>(ints[i]); }
};
// Floats compare by bit pattern after rounding to the element type, so NaN
// equals itself and -0.0 differs from 0.0.
bool operator==(const TosaAttribute& a, const TosaAttribute& b);
inline bool operator!=(const TosaAttribute& a, const TosaAttribute& b) { return !(a == b); }

struct TosaOperator {
  TosaOp op = TosaOp::kAbs;
  std::vector<TosaAttribute> attributes;  // the attribute operands, in grammar order
  std::vector<TosaTensorId> inputs;       // the tensor operands, in grammar order (a list expands in place)
  std::vector<TosaTensorId> outputs;      // result_count tensors
};

// A graph input or output: its tensor and the interface variable's
// DescriptorSet/Binding (which the VGF binding slots repeat).
struct TosaInterface {
  TosaTensorId tensor = -1;
  uint32_t descriptor_set = 0;
  uint32_t binding = 0;
  std::string name;  // OpName of the interface variable; may be empty
};

enum class TosaConstantStorage : uint8_t {
  kGraphConstant,  // OpGraphConstantARM: data supplied with the VGF constants section
  kInline,         // OpConstantComposite in the module: data travels in the SPIR-V
};

struct TosaConstant {
  TosaTensorId tensor = -1;
  TosaConstantStorage storage = TosaConstantStorage::kGraphConstant;
  uint32_t graph_constant_id = 0;  // kGraphConstant only; unique per module
  // Row-major little-endian elements (tosa_element_size each). Required for
  // kInline; for kGraphConstant empty (e.g. just parsed) or complete.
  Blob data;
  std::string name;  // OpName; may be empty
  // Set by lower_to_tosa where `data` is the gpuu constant `name` rearranged
  // for TOSA (a conv weight as OHWI): that constant's elements viewed as
  // `source_view` and permuted by `source_perm` (out dim i = view dim
  // source_perm[i]). Empty: the bytes are the constant's own, or made here.
  std::vector<int64_t> source_view, source_perm;
};

// One TOSA graph = one SPIR-V graph module. Tensors are produced exactly once:
// by a graph input, a constant or an operator; operators are in topological
// order. A graph output may be a graph input or a constant directly.
struct TosaGraph {
  std::string entry_point = "main";  // OpGraphEntryPointARM name = VGF Module.entry_point
  // SPIR-V header generator word. 0 is "unregistered tool"; parse keeps what
  // the module had (the golden modules were assembled by spirv-as: 0x00070000).
  uint32_t generator = 0;
  std::vector<TosaTensor> tensors;
  std::vector<TosaInterface> inputs;
  std::vector<TosaInterface> outputs;
  std::vector<TosaConstant> constants;
  std::vector<TosaOperator> operators;

  // Unchecked appends for builders; validate_tosa_graph() checks the result.
  TosaTensorId add_tensor(TosaElementType type, std::vector<int64_t> shape);
  TosaTensorId add_input(TosaElementType type, std::vector<int64_t> shape, uint32_t descriptor_set, uint32_t binding,
                         std::string name = "");
  TosaTensorId add_graph_constant(TosaElementType type, std::vector<int64_t> shape, uint32_t graph_constant_id,
                                  Blob data, std::string name = "");
  TosaTensorId add_inline_constant(TosaElementType type, std::vector<int64_t> shape, Blob data, std::string name = "");
  // Appends `op` with fresh output tensors of the given types; returns the first output.
  TosaTensorId add_operator(TosaOp op, std::vector<TosaAttribute> attributes, std::vector<TosaTensorId> inputs,
                            const std::vector<TosaTensor>& results);
  void add_output(TosaTensorId tensor, uint32_t descriptor_set, uint32_t binding, std::string name = "");

  const TosaTensor& tensor(TosaTensorId id) const { return tensors[static_cast<size_t>(id)]; }
};

// TOSA's rank limit (MAX_RANK of level 8K); SPIR-V tensor shapes also need rank >= 1.
constexpr size_t kTosaMaxRank = 6;
constexpr int64_t kTosaMaxDim = 0x7FFFFFFF;
constexpr int64_t kTosaMaxNumel = int64_t{1} << 40;

// Everything the emitter relies on, failing (kInvalidArgument) at the first
// broken rule with a message naming the tensor, operator (index and name) or
// operand: shapes (rank 1..6, dims 1..2^31-1), single producers, topological
// order, operand counts and roles per the grammar, attribute types, lengths,
// enum ranges and value ranges, interface slots unique, graph constant ids
// unique, constant data sizes, entry point name.
Status validate_tosa_graph(const TosaGraph& graph);
// The operator checks of validate_tosa_graph for operators[index] alone,
// assuming every tensor id it names is valid (the parser uses it per operator).
Status validate_tosa_operator(const TosaGraph& graph, size_t index);

// "" when a and b are equal, else the first difference ("operator 2 (MUL):
// attribute 0 differs"). compare_graph_constant_data = false ignores the data
// of kGraphConstant constants (a parsed module has none).
std::string tosa_graph_difference(const TosaGraph& a, const TosaGraph& b, bool compare_graph_constant_data = true);

// The same graph with tensors renumbered inputs first, then constants, then
// operator outputs in operator order (the order parse_tosa_module produces),
// and tensors nothing produces dropped. Operators keep their order.
TosaGraph canonicalize_tosa_graph(const TosaGraph& graph);

// Attaches the VGF constants-section data of OpGraphConstantARM `graph_constant_id`;
// fails when no constant has that id or the size is not numel * element size.
Status set_graph_constant_data(TosaGraph& graph, uint32_t graph_constant_id, Blob data);

// numel of a shape (dims assumed valid).
int64_t tosa_numel(const std::vector<int64_t>& shape);
std::string tosa_shape_string(const std::vector<int64_t>& shape);  // "[1,3,4,4]"
std::string tosa_type_string(const TosaTensor& tensor);             // "f32[1,3,4,4]"

// Element `index` of constant data as a double / int64 (f16 decoded, bool 0/1).
double tosa_data_element(TosaElementType type, const uint8_t* data, int64_t index);
int64_t tosa_data_int(TosaElementType type, const uint8_t* data, int64_t index);
// Stores a double (floats: rounded to nearest even; ints: truncated toward zero and wrapped).
void tosa_store_element(TosaElementType type, double value, uint8_t* data, int64_t index);

}  // namespace gpuu::vgf

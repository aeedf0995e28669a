// parse_tosa_module: SPIR-V words -> TosaGraph. Pass 1 walks the instructions
// once, checking word counts, ids, section order and operand types and
// recording what it saw; pass 2 builds the graph (inputs, constants, operators
// in that order: the numbering canonicalize_tosa_graph gives) and checks each
// operator against the grammar table. Every failure names the word offset of
// the instruction at fault; nothing reads outside [words, words + count).
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/half.h"
#include "vgf/tosa_spirv.h"
#include "vgf/tosa_spirv_defs.h"

namespace gpuu::vgf {

namespace {

const char* opcode_name(uint16_t op) {
  switch (op) {
    case spv::kOpNop: return "OpNop";
    case spv::kOpSource: return "OpSource";
    case spv::kOpSourceExtension: return "OpSourceExtension";
    case spv::kOpName: return "OpName";
    case spv::kOpMemberName: return "OpMemberName";
    case spv::kOpString: return "OpString";
    case spv::kOpLine: return "OpLine";
    case spv::kOpExtension: return "OpExtension";
    case spv::kOpExtInstImport: return "OpExtInstImport";
    case spv::kOpExtInst: return "OpExtInst";
    case spv::kOpMemoryModel: return "OpMemoryModel";
    case spv::kOpCapability: return "OpCapability";
    case spv::kOpTypeBool: return "OpTypeBool";
    case spv::kOpTypeInt: return "OpTypeInt";
    case spv::kOpTypeFloat: return "OpTypeFloat";
    case spv::kOpTypeArray: return "OpTypeArray";
    case spv::kOpTypeStruct: return "OpTypeStruct";
    case spv::kOpTypePointer: return "OpTypePointer";
    case spv::kOpConstantTrue: return "OpConstantTrue";
    case spv::kOpConstantFalse: return "OpConstantFalse";
    case spv::kOpConstant: return "OpConstant";
    case spv::kOpConstantComposite: return "OpConstantComposite";
    case spv::kOpConstantNull: return "OpConstantNull";
    case spv::kOpVariable: return "OpVariable";
    case spv::kOpDecorate: return "OpDecorate";
    case spv::kOpCompositeExtract: return "OpCompositeExtract";
    case spv::kOpNoLine: return "OpNoLine";
    case spv::kOpModuleProcessed: return "OpModuleProcessed";
    case spv::kOpConstantCompositeReplicateEXT: return "OpConstantCompositeReplicateEXT";
    case kOpTypeTensorARM: return "OpTypeTensorARM";
    case kOpGraphConstantARM: return "OpGraphConstantARM";
    case kOpGraphEntryPointARM: return "OpGraphEntryPointARM";
    case kOpGraphARM: return "OpGraphARM";
    case kOpGraphInputARM: return "OpGraphInputARM";
    case kOpGraphSetOutputARM: return "OpGraphSetOutputARM";
    case kOpGraphEndARM: return "OpGraphEndARM";
    case kOpTypeGraphARM: return "OpTypeGraphARM";
    default: return nullptr;
  }
}

std::string hex(uint32_t v) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s += kDigits[(v >> shift) & 0xF];
  return s;
}

// Logical layout sections (SPIR-V 2.4), with the graph section last.
enum Section : int {
  kSecCapability = 1,
  kSecExtension = 2,
  kSecImport = 3,
  kSecMemoryModel = 4,
  kSecDebug = 6,
  kSecAnnotation = 8,
  kSecGlobal = 9,
  kSecGraph = 12,
};

// Elements of one inline or attribute constant at most: refuses a tiny
// module that declares a gigantic OpConstantNull.
constexpr int64_t kMaxConstantElements = int64_t{1} << 24;
// Attribute tensors (shapes, zero points, tables, per-channel scales) are small.
constexpr int64_t kMaxAttributeElements = int64_t{1} << 16;

enum class TypeKind : uint8_t { kBool, kInt, kFloat, kArray, kTensor, kPointer, kStruct, kGraph };

struct Type {
  TypeKind kind = TypeKind::kBool;
  uint32_t width = 0;        // int / float
  uint32_t element = 0;      // array / tensor element type id, pointer pointee
  uint64_t length = 0;       // array length
  TosaElementType tosa = TosaElementType::kBool;  // scalar types and tensors
  std::vector<int64_t> shape;                     // tensor
  std::vector<uint32_t> members;                  // struct members, graph in/out types
  uint32_t num_inputs = 0;                        // graph
  uint32_t storage = 0;                           // pointer
};

struct Constant {
  uint16_t opcode = 0;
  size_t word = 0;
  uint32_t type = 0;
  uint64_t bits = 0;                   // OpConstant / True / False
  std::vector<uint32_t> constituents;  // composite / replicate
  uint32_t graph_constant_id = 0;      // OpGraphConstantARM
  bool used_as_attribute = false;  // an operator's attribute operand
  bool used_as_constituent = false;
  bool used_as_value = false;  // tensor operand or graph output
};

struct Variable {
  size_t word = 0;
  uint32_t pointer_type = 0;
  bool has_set = false, has_binding = false;
  uint32_t set = 0, binding = 0;
};

struct ExtInst {
  size_t word = 0;
  uint32_t result_type = 0, result = 0;
  uint32_t instruction = 0;
  std::vector<uint32_t> operands;
};

struct GraphStep {
  enum Kind : uint8_t { kInput, kOp, kExtract, kOutput } kind = kOp;
  size_t word = 0;
  uint32_t type = 0, result = 0;
  uint32_t a = 0;  // input: index id; extract: composite id; output: value id
  uint32_t b = 0;  // extract: literal index; output: index id
  ExtInst op;
};

class Parser {
 public:
  Parser(const uint32_t* words, size_t count) : w_(words), n_(count) {}

  Result<TosaGraph> run() {
    GPUU_RETURN_IF_ERROR(header());
    size_t pos = spv::kHeaderWords;
    while (pos < n_) {
      uint32_t first = w_[pos];
      uint32_t wc = first >> 16;
      uint16_t opcode = static_cast<uint16_t>(first & 0xFFFF);
      if (wc == 0) return fail_at(pos, "instruction word count is 0");
      if (wc > n_ - pos) return fail_at(pos, "instruction of ", wc, " words runs past the end of the module (", n_ - pos, " words left)");
      word_ = pos;
      opcode_ = opcode;
      wc_ = wc;
      GPUU_RETURN_IF_ERROR(instruction());
      pos += wc;
    }
    return build();
  }

 private:
  // ---- errors and operand access ----

  template <typename... Parts>
  Status fail_at(size_t word, const Parts&... parts) const {
    const char* name = word == word_ ? opcode_name(opcode_) : nullptr;
    if (name) return err(StatusCode::kInvalidFormat, "SPIR-V word ", word, " (", name, "): ", parts...);
    return err(StatusCode::kInvalidFormat, "SPIR-V word ", word, ": ", parts...);
  }
  template <typename... Parts>
  Status fail(const Parts&... parts) const {
    return fail_at(word_, parts...);
  }
  template <typename... Parts>
  Status unsupported(size_t word, const Parts&... parts) const {
    return err(StatusCode::kUnsupported, "SPIR-V word ", word, ": ", parts...);
  }

  uint32_t op(size_t i) const { return w_[word_ + 1 + i]; }  // operand i (callers check wc_ first)
  size_t operands() const { return wc_ - 1; }

  Status expect_words(size_t lo, size_t hi) const {
    if (wc_ < lo || wc_ > hi) {
      if (lo == hi) return fail("has ", wc_, " words, expected ", lo);
      return fail("has ", wc_, " words, expected ", lo, "..", hi);
    }
    return Status::Ok();
  }

  // A literal string starting at operand `first`: NUL-terminated within the
  // instruction. Returns the operand index after it.
  Status string_at(size_t first, std::string* out, size_t* next) const {
    out->clear();
    for (size_t i = first; i < operands(); ++i) {
      uint32_t word = op(i);
      for (int b = 0; b < 4; ++b) {
        char c = static_cast<char>((word >> (8 * b)) & 0xFF);
        if (c == '\0') {
          *next = i + 1;
          return Status::Ok();
        }
        out->push_back(c);
      }
    }
    return fail("literal string is not NUL-terminated inside the instruction");
  }

  // A literal string at operand `first` that must end the instruction.
  Status last_string_at(size_t first, std::string* out) const {
    size_t next = 0;
    GPUU_RETURN_IF_ERROR(string_at(first, out, &next));
    if (next != operands()) return fail("has words after its string");
    return Status::Ok();
  }

  // Opens an instruction whose string starts at operand `first` and ends it:
  // its section, then at least the words up to that string.
  Status string_instruction(int sec, size_t first, std::string* out) {
    GPUU_RETURN_IF_ERROR(section(sec));
    GPUU_RETURN_IF_ERROR(expect_words(first + 2, 0xFFFF));
    return last_string_at(first, out);
  }

  Status check_id(uint32_t id, const char* what) const {
    if (id == 0 || id >= bound_) return fail(what, " id ", id, " is outside 1..", bound_ - 1, " (the header's bound)");
    return Status::Ok();
  }
  Status define(uint32_t id, const char* what) {
    GPUU_RETURN_IF_ERROR(check_id(id, what));
    if (!defined_.insert(id).second) return fail(what, " id ", id, " is defined twice");
    return Status::Ok();
  }
  Status section(int s) {
    if (s < section_) return fail("is out of the module's logical layout order");
    section_ = s;
    return Status::Ok();
  }
  // An id that must already name a type of kind `kind` (any kind if null).
  Status type_ref(uint32_t id, const char* what, const Type** out) const {
    GPUU_RETURN_IF_ERROR(check_id(id, what));
    auto it = types_.find(id);
    if (it == types_.end()) return fail(what, " id ", id, " is not a type declared before");
    *out = &it->second;
    return Status::Ok();
  }
  Status constant_ref(uint32_t id, const char* what, Constant** out) {
    GPUU_RETURN_IF_ERROR(check_id(id, what));
    auto it = constants_.find(id);
    if (it == constants_.end()) return fail(what, " id ", id, " is not a constant declared before");
    *out = &it->second;
    return Status::Ok();
  }
  // The value of an integer scalar constant (OpConstant or OpConstantNull).
  Status int_constant(uint32_t id, const char* what, uint64_t* value) {
    Constant* c = nullptr;
    GPUU_RETURN_IF_ERROR(constant_ref(id, what, &c));
    const Type& t = types_.at(c->type);
    if (t.kind != TypeKind::kInt || (c->opcode != spv::kOpConstant && c->opcode != spv::kOpConstantNull)) {
      return fail(what, " id ", id, " is not an integer scalar constant");
    }
    *value = c->bits;
    return Status::Ok();
  }

  // ---- header and instructions ----

  Status header() {
    if (n_ < spv::kHeaderWords) return fail_at(0, "a module needs a 5-word header, got ", n_, " words");
    if (w_[0] != spv::kMagic) {
      return fail_at(0, "magic number ", hex(w_[0]), " is not 0x07230203", w_[0] == 0x03022307 ? " (byte-swapped)" : "");
    }
    uint32_t version = w_[1];
    if ((version & 0xFF0000FFu) != 0 || (version >> 16) != 1 || ((version >> 8) & 0xFF) > 6) {
      return fail_at(1, "version word ", hex(version), " is not SPIR-V 1.0..1.6");
    }
    generator_ = w_[2];
    bound_ = w_[3];
    if (bound_ == 0) return fail_at(3, "id bound is 0");
    if (w_[4] != 0) return fail_at(4, "schema word must be 0, got ", w_[4]);
    return Status::Ok();
  }

  Status instruction() {
    switch (opcode_) {
      case spv::kOpNop: return Status::Ok();
      case spv::kOpCapability: return capability();
      case spv::kOpExtension: return extension();
      case spv::kOpExtInstImport: return ext_inst_import();
      case spv::kOpMemoryModel: return memory_model();
      case spv::kOpSource:
      case spv::kOpSourceExtension:
      case spv::kOpMemberName:
      case spv::kOpModuleProcessed: return section(kSecDebug);
      case spv::kOpString: {
        GPUU_RETURN_IF_ERROR(section(kSecDebug));
        GPUU_RETURN_IF_ERROR(expect_words(3, 0xFFFF));
        std::string s;
        size_t next = 0;
        GPUU_RETURN_IF_ERROR(string_at(1, &s, &next));
        return define(op(0), "OpString result");
      }
      case spv::kOpName: return name();
      case spv::kOpLine:
      case spv::kOpNoLine: return Status::Ok();  // allowed among globals and in bodies
      case spv::kOpDecorate: return decorate();
      case spv::kOpTypeBool:
      case spv::kOpTypeInt:
      case spv::kOpTypeFloat:
      case spv::kOpTypeArray:
      case spv::kOpTypeStruct:
      case spv::kOpTypePointer:
      case kOpTypeTensorARM:
      case kOpTypeGraphARM: return type();
      case spv::kOpConstantTrue:
      case spv::kOpConstantFalse:
      case spv::kOpConstant:
      case spv::kOpConstantComposite:
      case spv::kOpConstantNull:
      case spv::kOpConstantCompositeReplicateEXT:
      case kOpGraphConstantARM: return constant();
      case spv::kOpVariable: return variable();
      case kOpGraphEntryPointARM: return entry_point();
      case kOpGraphARM:
      case kOpGraphInputARM:
      case spv::kOpCompositeExtract:
      case kOpGraphSetOutputARM:
      case kOpGraphEndARM: return graph_instruction();
      case spv::kOpExtInst: return ext_inst();
      default:
        return err(StatusCode::kUnsupported, "SPIR-V word ", word_, ": opcode ", opcode_,
                   " is not part of a TOSA graph module (functions, entry points and shader code are not taken)");
    }
  }

  Status capability() {
    GPUU_RETURN_IF_ERROR(section(kSecCapability));
    GPUU_RETURN_IF_ERROR(expect_words(2, 2));
    capabilities_.insert(op(0));
    return Status::Ok();
  }

  Status extension() {
    std::string s;
    GPUU_RETURN_IF_ERROR(string_instruction(kSecExtension, 0, &s));
    extensions_.insert(s);
    return Status::Ok();
  }

  Status ext_inst_import() {
    std::string s;
    GPUU_RETURN_IF_ERROR(string_instruction(kSecImport, 1, &s));
    GPUU_RETURN_IF_ERROR(define(op(0), "OpExtInstImport result"));
    if (s == kTosaInstructionSet) {
      if (tosa_set_) return fail("imports \"", s, "\" twice");
      tosa_set_ = op(0);
    } else if (s.rfind("NonSemantic.", 0) == 0) {
      nonsemantic_sets_.insert(op(0));
    } else {
      return unsupported(word_, "extended instruction set \"", s, "\" is not ", kTosaInstructionSet);
    }
    return Status::Ok();
  }

  Status memory_model() {
    GPUU_RETURN_IF_ERROR(section(kSecMemoryModel));
    GPUU_RETURN_IF_ERROR(expect_words(3, 3));
    if (seen_memory_model_) return fail("the module has a second OpMemoryModel");
    seen_memory_model_ = true;
    if (op(0) != spv::kAddressingLogical) return fail("addressing model ", op(0), " is not Logical (0)");
    if (op(1) != spv::kMemoryModelVulkan && op(1) != spv::kMemoryModelGlsl450) {
      return fail("memory model ", op(1), " is not Vulkan (3) or GLSL450 (1)");
    }
    return Status::Ok();
  }

  Status name() {
    GPUU_RETURN_IF_ERROR(section(kSecDebug));
    GPUU_RETURN_IF_ERROR(expect_words(3, 0xFFFF));
    GPUU_RETURN_IF_ERROR(check_id(op(0), "OpName target"));
    std::string s;
    GPUU_RETURN_IF_ERROR(last_string_at(1, &s));
    names_[op(0)] = s;
    return Status::Ok();
  }

  Status decorate() {
    GPUU_RETURN_IF_ERROR(section(kSecAnnotation));
    GPUU_RETURN_IF_ERROR(expect_words(3, 0xFFFF));
    GPUU_RETURN_IF_ERROR(check_id(op(0), "OpDecorate target"));
    uint32_t decoration = op(1);
    if (decoration == spv::kDecorationDescriptorSet || decoration == spv::kDecorationBinding) {
      GPUU_RETURN_IF_ERROR(expect_words(4, 4));
      auto& slot = decorations_[op(0)];
      bool is_set = decoration == spv::kDecorationDescriptorSet;
      bool& has = is_set ? slot.has_set : slot.has_binding;
      if (has) return fail("decorates id ", op(0), is_set ? " with DescriptorSet" : " with Binding", " twice");
      has = true;
      (is_set ? slot.set : slot.binding) = op(2);
    }
    // NonWritable, NonReadable and other decorations do not change the graph.
    return Status::Ok();
  }

  // A scalar SPIR-V type -> TOSA element type.
  Status scalar_tosa(const Type& t, uint32_t id, TosaElementType* out) const {
    switch (t.kind) {
      case TypeKind::kBool: *out = TosaElementType::kBool; return Status::Ok();
      case TypeKind::kInt:
      case TypeKind::kFloat: *out = t.tosa; return Status::Ok();
      default: return fail("type id ", id, " is not a scalar (bool, int or float) type");
    }
  }

  Status type() {
    GPUU_RETURN_IF_ERROR(section(kSecGlobal));
    if (wc_ < 2) return fail("has no result id");
    Type t;
    uint32_t result = op(0);
    auto need_cap = [&](uint32_t cap, const char* name) -> Status {
      if (!capabilities_.count(cap)) return fail("needs the ", name, " capability, which the module does not declare");
      return Status::Ok();
    };
    switch (opcode_) {
      case spv::kOpTypeBool:
        GPUU_RETURN_IF_ERROR(expect_words(2, 2));
        t.kind = TypeKind::kBool;
        t.tosa = TosaElementType::kBool;
        break;
      case spv::kOpTypeInt:
        GPUU_RETURN_IF_ERROR(expect_words(4, 4));
        t.kind = TypeKind::kInt;
        t.width = op(1);
        if (op(2) > 1) return fail("signedness ", op(2), " is not 0 or 1");
        switch (t.width) {
          case 8: t.tosa = TosaElementType::kI8; GPUU_RETURN_IF_ERROR(need_cap(spv::kCapabilityInt8, "Int8")); break;
          case 16: t.tosa = TosaElementType::kI16; GPUU_RETURN_IF_ERROR(need_cap(spv::kCapabilityInt16, "Int16")); break;
          case 32: t.tosa = TosaElementType::kI32; break;
          case 64: t.tosa = TosaElementType::kI48; GPUU_RETURN_IF_ERROR(need_cap(spv::kCapabilityInt64, "Int64")); break;
          default: return fail("integer width ", t.width, " is not 8, 16, 32 or 64");
        }
        break;
      case spv::kOpTypeFloat:
        GPUU_RETURN_IF_ERROR(expect_words(3, 4));
        t.kind = TypeKind::kFloat;
        t.width = op(1);
        if (wc_ == 4) return unsupported(word_, "OpTypeFloat with an FP encoding (bf16/fp8) is not supported");
        if (t.width == 32) {
          t.tosa = TosaElementType::kF32;
        } else if (t.width == 16) {
          t.tosa = TosaElementType::kF16;
          GPUU_RETURN_IF_ERROR(need_cap(spv::kCapabilityFloat16, "Float16"));
        } else {
          return fail("float width ", t.width, " is not 16 or 32");
        }
        break;
      case spv::kOpTypeArray: {
        GPUU_RETURN_IF_ERROR(expect_words(4, 4));
        const Type* element;
        GPUU_RETURN_IF_ERROR(type_ref(op(1), "element type", &element));
        uint64_t length;
        GPUU_RETURN_IF_ERROR(int_constant(op(2), "length", &length));
        if (length < 1) return fail("array length must be at least 1");
        t.kind = TypeKind::kArray;
        t.element = op(1);
        t.length = length;
        break;
      }
      case spv::kOpTypeStruct:
        GPUU_RETURN_IF_ERROR(expect_words(2, 0xFFFF));
        t.kind = TypeKind::kStruct;
        for (size_t i = 1; i < operands(); ++i) {
          const Type* member;
          GPUU_RETURN_IF_ERROR(type_ref(op(i), "member type", &member));
          t.members.push_back(op(i));
        }
        break;
      case spv::kOpTypePointer: {
        GPUU_RETURN_IF_ERROR(expect_words(4, 4));
        const Type* pointee;
        GPUU_RETURN_IF_ERROR(type_ref(op(2), "pointee type", &pointee));
        t.kind = TypeKind::kPointer;
        t.storage = op(1);
        t.element = op(2);
        break;
      }
      case kOpTypeTensorARM: {
        GPUU_RETURN_IF_ERROR(expect_words(3, 5));
        GPUU_RETURN_IF_ERROR(need_cap(kCapabilityTensorsARM, "TensorsARM"));
        const Type* element;
        GPUU_RETURN_IF_ERROR(type_ref(op(1), "element type", &element));
        t.kind = TypeKind::kTensor;
        t.element = op(1);
        GPUU_RETURN_IF_ERROR(scalar_tosa(*element, op(1), &t.tosa));
        if (wc_ < 5) return unsupported(word_, "tensor type ", result, " has no Shape; TOSA graph tensors must be fully shaped");
        uint64_t rank;
        GPUU_RETURN_IF_ERROR(int_constant(op(2), "Rank", &rank));
        if (rank < 1) return fail("tensor rank must be at least 1");
        if (rank > kTosaMaxRank) return unsupported(word_, "tensor rank ", rank, " exceeds TOSA's ", kTosaMaxRank);
        std::vector<uint64_t> dims;
        GPUU_RETURN_IF_ERROR(shape_constant(op(3), rank, &dims));
        for (uint64_t d : dims) {
          if (d < 1 || d > static_cast<uint64_t>(kTosaMaxDim)) return fail("tensor dim ", d, " is outside 1..", kTosaMaxDim);
          t.shape.push_back(static_cast<int64_t>(d));
        }
        int64_t numel = 1;
        for (int64_t d : t.shape) {
          if (numel > kTosaMaxNumel / d) return fail("tensor shape has too many elements");
          numel *= d;
        }
        break;
      }
      case kOpTypeGraphARM: {
        GPUU_RETURN_IF_ERROR(expect_words(4, 0xFFFF));
        GPUU_RETURN_IF_ERROR(need_cap(kCapabilityGraphARM, "GraphARM"));
        t.kind = TypeKind::kGraph;
        t.num_inputs = op(1);
        for (size_t i = 2; i < operands(); ++i) {
          const Type* member;
          GPUU_RETURN_IF_ERROR(type_ref(op(i), "graph interface type", &member));
          if (member->kind != TypeKind::kTensor) {
            return unsupported(word_, "graph interface type ", op(i), " is not a tensor type (arrays of tensors are not taken)");
          }
          t.members.push_back(op(i));
        }
        if (t.num_inputs > t.members.size() - 1 || t.members.empty()) {
          return fail("NumInputs ", t.num_inputs, " leaves no output among ", t.members.size(), " interface types");
        }
        break;
      }
      default: break;
    }
    GPUU_RETURN_IF_ERROR(define(result, "type result"));
    types_.emplace(result, std::move(t));
    return Status::Ok();
  }

  // Dims of a tensor type's Shape operand: a constant u32 array of `rank` elements.
  Status shape_constant(uint32_t id, uint64_t rank, std::vector<uint64_t>* dims) {
    Constant* c = nullptr;
    GPUU_RETURN_IF_ERROR(constant_ref(id, "Shape", &c));
    const Type& t = types_.at(c->type);
    if (t.kind != TypeKind::kArray || t.length != rank) {
      return fail("Shape id ", id, " is not a constant array of Rank (", rank, ") elements");
    }
    if (c->opcode == spv::kOpConstantComposite) {
      if (c->constituents.size() != rank) return fail("Shape id ", id, " has ", c->constituents.size(), " dims");
      for (uint32_t d : c->constituents) {
        uint64_t v;
        GPUU_RETURN_IF_ERROR(int_constant(d, "shape dim", &v));
        dims->push_back(v);
      }
    } else if (c->opcode == spv::kOpConstantCompositeReplicateEXT) {
      uint64_t v;
      GPUU_RETURN_IF_ERROR(int_constant(c->constituents[0], "shape dim", &v));
      dims->assign(rank, v);
    } else {
      return fail("Shape id ", id, " is not a composite constant");
    }
    return Status::Ok();
  }

  Status constant() {
    GPUU_RETURN_IF_ERROR(section(kSecGlobal));
    GPUU_RETURN_IF_ERROR(expect_words(3, 0xFFFF));
    Constant c;
    c.opcode = opcode_;
    c.word = word_;
    c.type = op(0);
    uint32_t result = op(1);
    const Type* type;
    GPUU_RETURN_IF_ERROR(type_ref(c.type, "result type", &type));
    switch (opcode_) {
      case spv::kOpConstantTrue:
      case spv::kOpConstantFalse:
        GPUU_RETURN_IF_ERROR(expect_words(3, 3));
        if (type->kind != TypeKind::kBool) return fail("result type is not OpTypeBool");
        c.bits = opcode_ == spv::kOpConstantTrue ? 1 : 0;
        break;
      case spv::kOpConstant: {
        if (type->kind != TypeKind::kInt && type->kind != TypeKind::kFloat) return fail("result type is not a number type");
        size_t words = type->width == 64 ? 2 : 1;
        GPUU_RETURN_IF_ERROR(expect_words(3 + words, 3 + words));
        c.bits = op(2);
        if (words == 2) c.bits |= static_cast<uint64_t>(op(3)) << 32;
        // Narrow types keep their value in the low bits; SPIR-V zero- or
        // sign-extends the rest, which we drop.
        if (type->width < 32) c.bits &= (uint64_t{1} << type->width) - 1;
        break;
      }
      case spv::kOpConstantNull:
        GPUU_RETURN_IF_ERROR(expect_words(3, 3));
        if (type->kind == TypeKind::kPointer || type->kind == TypeKind::kGraph) {
          return fail("OpConstantNull of a pointer or graph type");
        }
        break;
      case spv::kOpConstantComposite:
      case spv::kOpConstantCompositeReplicateEXT: {
        if (type->kind != TypeKind::kArray && type->kind != TypeKind::kTensor && type->kind != TypeKind::kStruct) {
          return fail("result type is not an array, tensor or struct type");
        }
        if (opcode_ == spv::kOpConstantCompositeReplicateEXT) {
          GPUU_RETURN_IF_ERROR(expect_words(4, 4));
          if (!capabilities_.count(spv::kCapabilityReplicatedCompositesEXT)) {
            return fail("needs the ReplicatedCompositesEXT capability, which the module does not declare");
          }
        }
        for (size_t i = 2; i < operands(); ++i) {
          Constant* part;
          GPUU_RETURN_IF_ERROR(constant_ref(op(i), "constituent", &part));
          GPUU_RETURN_IF_ERROR(check_constituent(*type, *part, op(i)));
          part->used_as_constituent = true;
          c.constituents.push_back(op(i));
        }
        size_t want = 0;
        if (type->kind == TypeKind::kArray) want = type->length;
        if (type->kind == TypeKind::kTensor) want = static_cast<size_t>(type->shape[0]);
        if (type->kind == TypeKind::kStruct) want = type->members.size();
        if (opcode_ == spv::kOpConstantComposite && c.constituents.size() != want) {
          return fail("has ", c.constituents.size(), " constituents, its type needs ", want);
        }
        break;
      }
      case kOpGraphConstantARM:
        GPUU_RETURN_IF_ERROR(expect_words(4, 4));
        if (type->kind != TypeKind::kTensor) return fail("result type is not a tensor type");
        c.graph_constant_id = op(2);
        break;
      default: break;
    }
    GPUU_RETURN_IF_ERROR(define(result, "constant result"));
    constant_order_.push_back(result);
    constants_.emplace(result, std::move(c));
    return Status::Ok();
  }

  // A composite's constituent must have the type its position needs.
  Status check_constituent(const Type& composite, const Constant& part, uint32_t part_id) const {
    const Type& pt = types_.at(part.type);
    if (composite.kind == TypeKind::kArray) {
      if (!same_type(part.type, composite.element)) return fail("constituent ", part_id, " does not have the array's element type");
    } else if (composite.kind == TypeKind::kTensor) {
      bool ok;
      if (composite.shape.size() == 1) {
        ok = pt.kind != TypeKind::kTensor && pt.kind != TypeKind::kArray && pt.kind != TypeKind::kStruct &&
             same_type(part.type, composite.element);
      } else {
        ok = pt.kind == TypeKind::kTensor && pt.tosa == composite.tosa &&
             pt.shape == std::vector<int64_t>(composite.shape.begin() + 1, composite.shape.end());
      }
      if (!ok) return fail("constituent ", part_id, " does not fit the tensor type (rank-1: a scalar of its element type; rank R: a tensor of shape[1:])");
    }
    return Status::Ok();
  }

  // Structural type identity (SPIR-V forbids duplicate scalar/tensor types, but
  // comparing structure keeps us safe either way).
  bool same_type(uint32_t a, uint32_t b) const {
    if (a == b) return true;
    auto ia = types_.find(a), ib = types_.find(b);
    if (ia == types_.end() || ib == types_.end()) return false;
    const Type& x = ia->second;
    const Type& y = ib->second;
    if (x.kind != y.kind) return false;
    switch (x.kind) {
      case TypeKind::kBool: return true;
      case TypeKind::kInt:
      case TypeKind::kFloat: return x.width == y.width;
      case TypeKind::kTensor: return x.tosa == y.tosa && x.shape == y.shape;
      default: return false;
    }
  }

  Status variable() {
    GPUU_RETURN_IF_ERROR(section(kSecGlobal));
    GPUU_RETURN_IF_ERROR(expect_words(4, 4));
    const Type* type;
    GPUU_RETURN_IF_ERROR(type_ref(op(0), "result type", &type));
    if (type->kind != TypeKind::kPointer) return fail("result type is not a pointer type");
    if (op(2) != spv::kStorageClassUniformConstant || type->storage != spv::kStorageClassUniformConstant) {
      return fail("graph interface variables must be in the UniformConstant storage class");
    }
    GPUU_RETURN_IF_ERROR(define(op(1), "variable result"));
    Variable v;
    v.word = word_;
    v.pointer_type = op(0);
    variables_.emplace(op(1), v);
    return Status::Ok();
  }

  Status entry_point() {
    GPUU_RETURN_IF_ERROR(section(kSecGraph));
    if (in_graph_) return fail("OpGraphEntryPointARM must be outside a graph definition");
    GPUU_RETURN_IF_ERROR(expect_words(3, 0xFFFF));
    if (entry_word_) return unsupported(word_, "a second OpGraphEntryPointARM: gpuu takes one graph per module");
    entry_word_ = word_;
    GPUU_RETURN_IF_ERROR(check_id(op(0), "Graph"));
    entry_graph_ = op(0);
    size_t next = 0;
    GPUU_RETURN_IF_ERROR(string_at(1, &entry_name_, &next));
    for (size_t i = next; i < operands(); ++i) {
      GPUU_RETURN_IF_ERROR(check_id(op(i), "Interface"));
      if (!variables_.count(op(i))) return fail("Interface id ", op(i), " is not a variable declared before");
      entry_interface_.push_back(op(i));
    }
    return Status::Ok();
  }

  Status graph_instruction() {
    GPUU_RETURN_IF_ERROR(section(kSecGraph));
    GraphStep step;
    step.word = word_;
    switch (opcode_) {
      case kOpGraphARM: {
        GPUU_RETURN_IF_ERROR(expect_words(3, 3));
        if (in_graph_) return fail("opens a graph inside a graph");
        if (graph_word_) return unsupported(word_, "a second OpGraphARM: gpuu takes one graph per module");
        const Type* t;
        GPUU_RETURN_IF_ERROR(type_ref(op(0), "result type", &t));
        if (t->kind != TypeKind::kGraph) return fail("result type is not an OpTypeGraphARM");
        GPUU_RETURN_IF_ERROR(define(op(1), "graph result"));
        graph_word_ = word_;
        graph_type_ = op(0);
        graph_id_ = op(1);
        in_graph_ = true;
        graph_phase_ = 0;
        return Status::Ok();
      }
      case kOpGraphInputARM: {
        GPUU_RETURN_IF_ERROR(expect_words(4, 5));
        if (!in_graph_ || graph_phase_ != 0) {
          return fail("must directly follow OpGraphARM or another OpGraphInputARM");
        }
        if (wc_ == 5) return unsupported(word_, "ElementIndex (arrays of tensors) is not taken");
        const Type* t;
        GPUU_RETURN_IF_ERROR(type_ref(op(0), "result type", &t));
        GPUU_RETURN_IF_ERROR(define(op(1), "graph input result"));
        step.kind = GraphStep::kInput;
        step.type = op(0);
        step.result = op(1);
        step.a = op(2);
        GPUU_RETURN_IF_ERROR(check_id(step.a, "InputIndex"));
        values_.insert(step.result);
        break;
      }
      case spv::kOpCompositeExtract: {
        GPUU_RETURN_IF_ERROR(expect_words(5, 5));
        if (!in_graph_ || graph_phase_ > 1) return fail("must be inside the graph body");
        graph_phase_ = 1;
        const Type* t;
        GPUU_RETURN_IF_ERROR(type_ref(op(0), "result type", &t));
        GPUU_RETURN_IF_ERROR(check_id(op(2), "Composite"));
        if (!values_.count(op(2))) return fail("Composite id ", op(2), " is not a graph value defined before");
        GPUU_RETURN_IF_ERROR(define(op(1), "result"));
        step.kind = GraphStep::kExtract;
        step.type = op(0);
        step.result = op(1);
        step.a = op(2);
        step.b = op(3);
        values_.insert(step.result);
        break;
      }
      case kOpGraphSetOutputARM: {
        GPUU_RETURN_IF_ERROR(expect_words(3, 4));
        if (!in_graph_) return fail("must be inside a graph definition");
        if (wc_ == 4) return unsupported(word_, "ElementIndex (arrays of tensors) is not taken");
        graph_phase_ = 2;
        step.kind = GraphStep::kOutput;
        step.a = op(0);
        step.b = op(1);
        GPUU_RETURN_IF_ERROR(check_id(step.a, "Value"));
        GPUU_RETURN_IF_ERROR(check_id(step.b, "OutputIndex"));
        break;
      }
      case kOpGraphEndARM:
        GPUU_RETURN_IF_ERROR(expect_words(1, 1));
        if (!in_graph_) return fail("closes a graph that is not open");
        if (graph_phase_ != 2) return fail("a graph needs at least one OpGraphSetOutputARM right before OpGraphEndARM");
        in_graph_ = false;
        graph_closed_ = true;
        return Status::Ok();
      default: break;
    }
    steps_.push_back(std::move(step));
    return Status::Ok();
  }

  Status ext_inst() {
    GPUU_RETURN_IF_ERROR(expect_words(5, 0xFFFF));
    GPUU_RETURN_IF_ERROR(check_id(op(2), "Set"));
    if (nonsemantic_sets_.count(op(2))) {
      // Debug info: no effect on the graph; only its result id is claimed.
      return define(op(1), "result");
    }
    if (op(2) != tosa_set_ || !tosa_set_) return fail("Set id ", op(2), " is not the \"", kTosaInstructionSet, "\" import");
    if (!in_graph_ || graph_phase_ > 1) return fail("TOSA instructions must be inside the graph body");
    graph_phase_ = 1;
    GraphStep step;
    step.kind = GraphStep::kOp;
    step.word = word_;
    ExtInst& e = step.op;
    e.word = word_;
    e.result_type = op(0);
    e.result = op(1);
    e.instruction = op(3);
    const Type* t;
    GPUU_RETURN_IF_ERROR(type_ref(e.result_type, "result type", &t));
    const TosaOpInfo* info = find_tosa_op(e.instruction);
    if (!info) return fail("TOSA instruction ", e.instruction, " does not exist (0..", kTosaOpCount - 1, ")");
    bool has_list = info->operand_count > 0 && info->operands[info->operand_count - 1].role == TosaOperandRole::kInputList;
    size_t got = operands() - 4;
    if (has_list ? got < info->operand_count : got != info->operand_count) {
      return fail(info->name, " takes ", has_list ? "at least " : "", info->operand_count, " operands, got ", got);
    }
    for (size_t i = 4; i < operands(); ++i) {
      GPUU_RETURN_IF_ERROR(check_id(op(i), "operand"));
      if (!values_.count(op(i)) && !constants_.count(op(i))) {
        return fail(info->name, " operand ", i - 4, " (id ", op(i), ") is neither a graph value nor a constant defined before");
      }
      e.operands.push_back(op(i));
    }
    GPUU_RETURN_IF_ERROR(define(e.result, "result"));
    values_.insert(e.result);
    steps_.push_back(std::move(step));
    return Status::Ok();
  }

  // ---- pass 2 ----

  // Flattened element bits of a tensor constant (composite, null, replicate).
  Status tensor_values(uint32_t id, size_t word, std::vector<uint64_t>* out, int depth = 0) {
    const Constant& c = constants_.at(id);
    const Type& t = types_.at(c.type);
    if (t.kind != TypeKind::kTensor) return fail_at(word, "constant ", id, " is not a tensor constant");
    if (depth > static_cast<int>(kTosaMaxRank)) return fail_at(word, "constant ", id, " nests too deeply");
    int64_t numel = tosa_numel(t.shape);
    if (numel > kMaxConstantElements) {
      return unsupported(word, "tensor constant ", id, " has ", numel, " elements; inline constants are limited to ",
                         kMaxConstantElements);
    }
    if (c.opcode == spv::kOpConstantNull) {
      out->insert(out->end(), static_cast<size_t>(numel), 0);
      return Status::Ok();
    }
    if (c.opcode == kOpGraphConstantARM) {
      return unsupported(word, "constant ", id, " is an OpGraphConstantARM; its values are not in the module");
    }
    // Composite or replicate: constituents were type-checked when declared.
    size_t repeat = c.opcode == spv::kOpConstantCompositeReplicateEXT ? static_cast<size_t>(t.shape[0]) : 1;
    for (size_t r = 0; r < repeat; ++r) {
      for (uint32_t part : c.constituents) {
        const Constant& p = constants_.at(part);
        if (t.shape.size() == 1) {
          out->push_back(p.bits);  // OpConstant / True / False / Null (bits 0)
        } else {
          GPUU_RETURN_IF_ERROR(tensor_values(part, word, out, depth + 1));
        }
      }
    }
    return Status::Ok();
  }

  static int64_t sign_extend(uint64_t bits, uint32_t width) {
    if (width >= 64) return static_cast<int64_t>(bits);
    uint64_t sign = uint64_t{1} << (width - 1);
    bits &= (uint64_t{1} << width) - 1;
    return static_cast<int64_t>((bits ^ sign) - sign);
  }

  static double float_value(TosaElementType t, uint64_t bits) {
    if (t == TosaElementType::kF16) return half_to_float(static_cast<uint16_t>(bits));
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  }

  static uint32_t width_of(TosaElementType t) {
    switch (t) {
      case TosaElementType::kBool: return 1;
      case TosaElementType::kI8: return 8;
      case TosaElementType::kI16:
      case TosaElementType::kF16: return 16;
      case TosaElementType::kI48: return 64;
      default: return 32;
    }
  }

  // An attribute operand -> TosaAttribute (its slot's rules are checked later
  // by validate_tosa_operator).
  Status attribute(uint32_t id, const TosaOperandInfo& slot, size_t word, TosaAttribute* out) {
    auto it = constants_.find(id);
    if (it == constants_.end()) {
      return fail_at(word, "attribute operand '", slot.name, "' (id ", id, ") must be a constant instruction");
    }
    const Constant& c = it->second;
    const Type& t = types_.at(c.type);
    TosaAttribute a;
    std::vector<uint64_t> bits;
    if (t.kind == TypeKind::kTensor) {
      a.is_tensor = true;
      a.type = t.tosa;
      if (tosa_numel(t.shape) > kMaxAttributeElements) {
        return unsupported(word, "attribute operand '", slot.name, "' (id ", id, ") has ", tosa_numel(t.shape),
                           " elements; attribute tensors are limited to ", kMaxAttributeElements);
      }
      GPUU_RETURN_IF_ERROR(tensor_values(id, word, &bits));
    } else if (t.kind == TypeKind::kBool || t.kind == TypeKind::kInt || t.kind == TypeKind::kFloat) {
      a.type = t.tosa;
      bits.push_back(c.bits);
    } else {
      return fail_at(word, "attribute operand '", slot.name, "' (id ", id, ") is neither a scalar nor a tensor constant");
    }
    bool unsigned_slot = slot.role == TosaOperandRole::kAttrU32 || slot.role == TosaOperandRole::kAttrEnum;
    for (uint64_t b : bits) {
      if (tosa_is_float(a.type)) {
        a.floats.push_back(float_value(a.type, b));
      } else if (a.type == TosaElementType::kBool) {
        a.ints.push_back(b != 0);
      } else {
        a.ints.push_back(unsigned_slot ? static_cast<int64_t>(b) : sign_extend(b, width_of(a.type)));
      }
    }
    *out = std::move(a);
    return Status::Ok();
  }

  Status inline_data(uint32_t id, const TosaTensor& tensor, size_t word, Blob* out) {
    std::vector<uint64_t> bits;
    GPUU_RETURN_IF_ERROR(tensor_values(id, word, &bits));
    std::vector<uint8_t> bytes(bits.size() * tosa_element_size(tensor.type));
    for (size_t i = 0; i < bits.size(); ++i) {
      if (tosa_is_float(tensor.type)) {
        uint64_t b = bits[i];
        std::memcpy(bytes.data() + i * tosa_element_size(tensor.type), &b, tosa_element_size(tensor.type));
      } else {
        int64_t v = tensor.type == TosaElementType::kBool ? (bits[i] != 0) : sign_extend(bits[i], width_of(tensor.type));
        std::memcpy(bytes.data() + i * tosa_element_size(tensor.type), &v, tosa_element_size(tensor.type));
      }
    }
    *out = Blob::take(std::move(bytes));
    return Status::Ok();
  }

  TosaTensor tensor_of(uint32_t type_id) const {
    const Type& t = types_.at(type_id);
    return TosaTensor{t.tosa, t.shape};
  }

  Result<TosaGraph> build() {
    size_t end = n_;
    if (in_graph_) return fail_at(end, "the module ends inside a graph definition (no OpGraphEndARM)");
    if (!graph_closed_) return fail_at(end, "the module has no graph (OpGraphARM ... OpGraphEndARM)");
    if (!entry_word_) return fail_at(end, "the module has no OpGraphEntryPointARM");
    if (!seen_memory_model_) return fail_at(end, "the module has no OpMemoryModel");
    for (const char* ext : {"SPV_ARM_graph", "SPV_ARM_tensors"}) {
      if (!extensions_.count(ext)) return fail_at(end, "the module does not declare the ", ext, " extension");
    }
    for (uint32_t cap : {kCapabilityGraphARM, kCapabilityTensorsARM}) {
      if (!capabilities_.count(cap)) return fail_at(end, "the module does not declare capability ", cap);
    }
    if (entry_graph_ != graph_id_) {
      return fail_at(entry_word_, "entry point names graph id ", entry_graph_, ", but the graph is id ", graph_id_);
    }
    for (const auto& [target, name] : names_) {
      if (!defined_.count(target)) return fail_at(end, "OpName names id ", target, ", which nothing defines");
    }
    for (const auto& [target, deco] : decorations_) {
      if (!defined_.count(target)) return fail_at(end, "OpDecorate names id ", target, ", which nothing defines");
    }
    const Type& gt = types_.at(graph_type_);
    size_t num_inputs = gt.num_inputs;
    size_t num_outputs = gt.members.size() - num_inputs;
    if (entry_interface_.size() != gt.members.size()) {
      return fail_at(entry_word_, "entry point lists ", entry_interface_.size(), " interface variables, the graph type has ",
                  gt.members.size(), " inputs and outputs");
    }

    TosaGraph g;
    g.entry_point = entry_name_;
    g.generator = generator_;
    // Interface variables: inputs then outputs, in index order.
    for (size_t i = 0; i < gt.members.size(); ++i) {
      uint32_t var_id = entry_interface_[i];
      const Variable& v = variables_.at(var_id);
      const Type& ptr = types_.at(v.pointer_type);
      if (!same_type(ptr.element, gt.members[i])) {
        return fail_at(entry_word_, "interface variable ", var_id, " (", i < num_inputs ? "input " : "output ",
                    i < num_inputs ? i : i - num_inputs, ") does not point to the graph type's tensor type");
      }
      auto deco = decorations_.find(var_id);
      if (deco == decorations_.end() || !deco->second.has_set || !deco->second.has_binding) {
        return fail_at(v.word, "interface variable ", var_id, " needs both DescriptorSet and Binding decorations");
      }
      TosaInterface io;
      io.descriptor_set = deco->second.set;
      io.binding = deco->second.binding;
      auto name = names_.find(var_id);
      if (name != names_.end()) io.name = name->second;
      if (i < num_inputs) {
        TosaTensor t = tensor_of(gt.members[i]);
        io.tensor = g.add_tensor(t.type, t.shape);
        g.inputs.push_back(io);
      } else {
        io.tensor = -1;  // set by OpGraphSetOutputARM
        g.outputs.push_back(io);
      }
    }

    std::unordered_map<uint32_t, TosaTensorId> value_tensor;
    std::vector<bool> input_seen(num_inputs, false);
    for (const GraphStep& s : steps_) {
      if (s.kind != GraphStep::kInput) continue;
      uint64_t index;
      word_ = s.word;
      opcode_ = kOpGraphInputARM;
      GPUU_RETURN_IF_ERROR(int_constant(s.a, "InputIndex", &index));
      if (index >= num_inputs) return fail_at(s.word, "InputIndex ", index, " is not below the graph's ", num_inputs, " inputs");
      if (input_seen[index]) return fail_at(s.word, "InputIndex ", index, " is used twice");
      input_seen[index] = true;
      if (!same_type(s.type, gt.members[index])) {
        return fail_at(s.word, "result type does not match the graph type's input ", index);
      }
      value_tensor[s.result] = g.inputs[index].tensor;
    }

    // Which constants are tensors of the graph (as opposed to attributes or
    // parts of other constants): see what operators and outputs use them as.
    mark_uses();
    for (uint32_t id : constant_order_) {
      const Constant& c = constants_.at(id);
      const Type& t = types_.at(c.type);
      if (t.kind != TypeKind::kTensor) continue;
      bool graph_tensor = c.opcode == kOpGraphConstantARM || c.used_as_value ||
                          (!c.used_as_attribute && !c.used_as_constituent);
      if (!graph_tensor) continue;
      TosaConstant k;
      k.tensor = g.add_tensor(t.tosa, t.shape);
      auto name = names_.find(id);
      if (name != names_.end()) k.name = name->second;
      if (c.opcode == kOpGraphConstantARM) {
        k.storage = TosaConstantStorage::kGraphConstant;
        k.graph_constant_id = c.graph_constant_id;
      } else {
        k.storage = TosaConstantStorage::kInline;
        word_ = c.word;
        opcode_ = c.opcode;
        GPUU_RETURN_IF_ERROR(inline_data(id, g.tensor(k.tensor), c.word, &k.data));
      }
      value_tensor[id] = k.tensor;
      g.constants.push_back(std::move(k));
    }

    std::unordered_map<uint32_t, std::pair<size_t, const Type*>> structs;  // struct result -> (operator, type)
    for (const GraphStep& s : steps_) {
      word_ = s.word;
      if (s.kind == GraphStep::kOp) {
        opcode_ = spv::kOpExtInst;
        GPUU_RETURN_IF_ERROR(build_operator(s, &g, &value_tensor, &structs));
      } else if (s.kind == GraphStep::kExtract) {
        opcode_ = spv::kOpCompositeExtract;
        auto it = structs.find(s.a);
        if (it == structs.end()) return fail_at(s.word, "Composite id ", s.a, " is not the struct result of FFT2D/RFFT2D");
        const TosaOperator& producer = g.operators[it->second.first];
        if (s.b >= producer.outputs.size()) return fail_at(s.word, "index ", s.b, " is outside the struct's ", producer.outputs.size(), " members");
        if (!same_type(s.type, it->second.second->members[s.b])) return fail_at(s.word, "result type does not match struct member ", s.b);
        value_tensor[s.result] = producer.outputs[s.b];
      }
    }

    std::vector<bool> output_seen(num_outputs, false);
    for (const GraphStep& s : steps_) {
      if (s.kind != GraphStep::kOutput) continue;
      word_ = s.word;
      opcode_ = kOpGraphSetOutputARM;
      uint64_t index;
      GPUU_RETURN_IF_ERROR(int_constant(s.b, "OutputIndex", &index));
      if (index >= num_outputs) return fail_at(s.word, "OutputIndex ", index, " is not below the graph's ", num_outputs, " outputs");
      if (output_seen[index]) return fail_at(s.word, "OutputIndex ", index, " is set twice");
      output_seen[index] = true;
      auto v = value_tensor.find(s.a);
      if (v == value_tensor.end()) return fail_at(s.word, "Value id ", s.a, " is not a tensor of the graph");
      const TosaTensor& t = g.tensor(v->second);
      const Type& want = types_.at(gt.members[num_inputs + index]);
      if (t.type != want.tosa || t.shape != want.shape) {
        return fail_at(s.word, "value ", tosa_type_string(t), " does not match the graph type's output ", index, " (",
                    tosa_type_string(TosaTensor{want.tosa, want.shape}), ")");
      }
      g.outputs[index].tensor = v->second;
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      if (!output_seen[i]) return fail_at(graph_word_, "graph output ", i, " is never set");
    }
    Status valid = validate_tosa_graph(g);
    if (!valid.ok()) return err(StatusCode::kInvalidFormat, "the module's graph is not valid TOSA: ", valid.message());
    return g;
  }

  void mark_uses() {
    auto mark = [&](uint32_t id, bool as_value) {
      auto c = constants_.find(id);
      if (c == constants_.end()) return;
      (as_value ? c->second.used_as_value : c->second.used_as_attribute) = true;
    };
    for (const GraphStep& s : steps_) {
      if (s.kind == GraphStep::kOutput) mark(s.a, true);
      if (s.kind != GraphStep::kOp) continue;
      const TosaOpInfo* info = find_tosa_op(s.op.instruction);
      for (size_t k = 0; k < s.op.operands.size(); ++k) {
        TosaOperandRole r = info->operands[std::min<size_t>(k, info->operand_count - 1)].role;
        mark(s.op.operands[k], r == TosaOperandRole::kInput || r == TosaOperandRole::kInputList);
      }
    }
  }

  Status build_operator(const GraphStep& s, TosaGraph* g,
                        std::unordered_map<uint32_t, TosaTensorId>* value_tensor,
                        std::unordered_map<uint32_t, std::pair<size_t, const Type*>>* structs) {
    const ExtInst& e = s.op;
    const TosaOpInfo* info = find_tosa_op(e.instruction);
    TosaOperator o;
    o.op = info->op;
    for (size_t k = 0; k < e.operands.size(); ++k) {
      const TosaOperandInfo& slot = info->operands[std::min<size_t>(k, info->operand_count - 1)];
      if (slot.role == TosaOperandRole::kInput || slot.role == TosaOperandRole::kInputList) {
        auto v = value_tensor->find(e.operands[k]);
        if (v == value_tensor->end()) {
          return fail_at(s.word, info->name, " operand ", k, " ('", slot.name, "', id ", e.operands[k],
                      ") is not a tensor value of the graph");
        }
        o.inputs.push_back(v->second);
      } else {
        TosaAttribute a;
        GPUU_RETURN_IF_ERROR(attribute(e.operands[k], slot, s.word, &a));
        o.attributes.push_back(std::move(a));
      }
    }
    const Type& rt = types_.at(e.result_type);
    if (info->result_count == 1) {
      if (rt.kind != TypeKind::kTensor) return fail_at(s.word, info->name, " result type is not a tensor type");
      o.outputs.push_back(g->add_tensor(rt.tosa, rt.shape));
      (*value_tensor)[e.result] = o.outputs.back();
    } else {
      bool ok = rt.kind == TypeKind::kStruct && rt.members.size() == info->result_count;
      for (size_t k = 0; ok && k < rt.members.size(); ++k) ok = types_.at(rt.members[k]).kind == TypeKind::kTensor;
      if (!ok) return fail_at(s.word, info->name, " result type must be a struct of ", info->result_count, " tensor types");
      for (uint32_t m : rt.members) o.outputs.push_back(g->add_tensor(types_.at(m).tosa, types_.at(m).shape));
      (*structs)[e.result] = {g->operators.size(), &rt};
    }
    g->operators.push_back(std::move(o));
    Status valid = validate_tosa_operator(*g, g->operators.size() - 1);
    if (!valid.ok()) return fail_at(s.word, valid.message());
    return Status::Ok();
  }

  const uint32_t* w_;
  size_t n_;
  size_t word_ = 0;
  uint16_t opcode_ = 0;
  uint32_t wc_ = 0;
  uint32_t generator_ = 0, bound_ = 0;
  int section_ = 0;
  std::set<uint32_t> capabilities_;
  std::set<std::string> extensions_;
  uint32_t tosa_set_ = 0;
  std::set<uint32_t> nonsemantic_sets_;
  bool seen_memory_model_ = false;
  std::set<uint32_t> defined_;
  std::map<uint32_t, std::string> names_;
  std::map<uint32_t, Variable> decorations_;  // only the set/binding fields are used
  std::unordered_map<uint32_t, Type> types_;
  std::unordered_map<uint32_t, Constant> constants_;
  std::vector<uint32_t> constant_order_;
  std::map<uint32_t, Variable> variables_;
  size_t entry_word_ = 0;
  uint32_t entry_graph_ = 0;
  std::string entry_name_;
  std::vector<uint32_t> entry_interface_;
  size_t graph_word_ = 0;
  uint32_t graph_type_ = 0, graph_id_ = 0;
  bool in_graph_ = false, graph_closed_ = false;
  int graph_phase_ = 0;  // 0: inputs, 1: body, 2: outputs
  std::set<uint32_t> values_;
  std::vector<GraphStep> steps_;
};

}  // namespace

Result<TosaGraph> parse_tosa_module(const uint32_t* words, size_t count) {
  if (!words && count) return err(StatusCode::kInvalidArgument, "parse_tosa_module: null words with count ", count);
  return Parser(words, count).run();
}

}  // namespace gpuu::vgf

// emit_tosa_module: TosaGraph -> SPIR-V words. Instructions are collected per
// module section with provisional ids; a last pass renumbers ids in order of
// first appearance (what spirv-as does), which makes the output deterministic
// and lets it match assembled golden modules word for word.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "base/half.h"
#include "vgf/tosa_spirv.h"
#include "vgf/tosa_spirv_defs.h"

namespace gpuu::vgf {

namespace {

// Scalar SPIR-V types, in the order the module declares them.
enum class Scalar : uint8_t { kF32, kF16, kU32, kU8, kU16, kU64, kBool };
constexpr int kScalarCount = 7;

Scalar scalar_of(TosaElementType t) {
  switch (t) {
    case TosaElementType::kBool: return Scalar::kBool;
    case TosaElementType::kI8: return Scalar::kU8;
    case TosaElementType::kI16: return Scalar::kU16;
    case TosaElementType::kI32: return Scalar::kU32;
    case TosaElementType::kI48: return Scalar::kU64;
    case TosaElementType::kF16: return Scalar::kF16;
    case TosaElementType::kF32: return Scalar::kF32;
  }
  return Scalar::kU32;
}

// The literal bits of one value of scalar type `s` (ints: two's complement,
// masked to the width, as OpTypeInt signedness 0 wants; floats: IEEE bits).
uint64_t scalar_bits(Scalar s, double fvalue, int64_t ivalue) {
  switch (s) {
    case Scalar::kF32: {
      float f = static_cast<float>(fvalue);
      uint32_t b;
      std::memcpy(&b, &f, sizeof b);
      return b;
    }
    case Scalar::kF16: return double_to_half(fvalue);
    case Scalar::kU8: return static_cast<uint64_t>(ivalue) & 0xFFu;
    case Scalar::kU16: return static_cast<uint64_t>(ivalue) & 0xFFFFu;
    case Scalar::kU32: return static_cast<uint64_t>(ivalue) & 0xFFFFFFFFu;
    case Scalar::kU64: return static_cast<uint64_t>(ivalue);
    case Scalar::kBool: return ivalue != 0 ? 1 : 0;
  }
  return 0;
}

struct Inst {
  uint16_t opcode = 0;
  std::vector<uint32_t> words;  // operands (the word-count/opcode word is added at the end)
  std::vector<uint8_t> is_id;   // per operand word: renumber it
};

class InstBuilder {
 public:
  explicit InstBuilder(Inst* inst) : inst_(inst) {}
  InstBuilder& id(uint32_t v) {
    inst_->words.push_back(v);
    inst_->is_id.push_back(1);
    return *this;
  }
  InstBuilder& lit(uint32_t v) {
    inst_->words.push_back(v);
    inst_->is_id.push_back(0);
    return *this;
  }
  InstBuilder& str(const std::string& s) {
    // UTF-8 bytes, NUL-terminated, zero-padded to whole little-endian words.
    size_t n = s.size() / 4 + 1;
    for (size_t w = 0; w < n; ++w) {
      uint32_t word = 0;
      for (size_t b = 0; b < 4; ++b) {
        size_t i = w * 4 + b;
        if (i < s.size()) word |= static_cast<uint32_t>(static_cast<uint8_t>(s[i])) << (8 * b);
      }
      lit(word);
    }
    return *this;
  }

 private:
  Inst* inst_;
};

class Emitter {
 public:
  explicit Emitter(const TosaGraph& g) : g_(g) {}

  Result<std::vector<uint32_t>> run() {
    import_id_ = fresh();
    register_everything();
    emit_graph();
    emit_preamble();
    emit_globals();
    return assemble();
  }

 private:
  uint32_t fresh() { return next_id_++; }
  static InstBuilder add(std::vector<Inst>& section, uint16_t opcode) {
    section.push_back(Inst{opcode, {}, {}});
    return InstBuilder(&section.back());
  }

  // ---- pools: each returns a provisional id and remembers first-use order ----

  uint32_t scalar_type(Scalar s) {
    uint32_t& id = scalar_type_[static_cast<int>(s)];
    if (!id) id = fresh();
    return id;
  }

  // The id `cache` holds for `key`, else the one `make` returns: make takes
  // the ids the new entry refers to first, then its own (add_entry), so ids
  // keep their first-use order.
  template <typename Cache, typename Key, typename Make>
  uint32_t cached(Cache& cache, const Key& key, Make make) {
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    uint32_t id = make();
    cache.emplace(key, id);
    return id;
  }

  // fresh() for a new pool entry, recorded in `order` with the ids it refers to.
  template <typename Order, typename... Refs>
  uint32_t add_entry(Order& order, Refs&&... refs) {
    uint32_t id = fresh();
    order.push_back({id, std::forward<Refs>(refs)...});
    return id;
  }

  uint32_t scalar_const(Scalar s, uint64_t bits) {
    scalar_type(s);
    return cached(scalar_const_, std::make_pair(static_cast<int>(s), bits), [&] { return fresh(); });
  }
  uint32_t u32(uint64_t v) { return scalar_const(Scalar::kU32, v & 0xFFFFFFFFu); }

  uint32_t array_type(size_t length) {
    return cached(array_type_, length, [&] { return add_entry(array_order_, length); });
  }

  uint32_t shape_const(const std::vector<int64_t>& shape) {
    return cached(shape_const_, shape, [&] {
      uint32_t array = array_type(shape.size());
      std::vector<uint32_t> dims;
      for (int64_t d : shape) dims.push_back(u32(static_cast<uint64_t>(d)));
      return add_entry(shape_order_, array, std::move(dims));
    });
  }

  uint32_t tensor_type(TosaElementType t, const std::vector<int64_t>& shape) {
    return cached(tensor_type_, std::make_pair(static_cast<int>(t), shape), [&] {
      uint32_t element = scalar_type(scalar_of(t));
      uint32_t rank = u32(shape.size());
      uint32_t shape_id = shape_const(shape);
      return add_entry(tensor_order_, element, rank, shape_id);
    });
  }
  uint32_t tensor_type(TosaTensorId t) { return tensor_type(g_.tensor(t).type, g_.tensor(t).shape); }

  uint32_t pointer_type(uint32_t pointee) {
    return cached(pointer_type_, pointee, [&] { return add_entry(pointer_order_, pointee); });
  }

  uint32_t struct_type(const std::vector<uint32_t>& members) {
    return cached(struct_type_, members, [&] { return add_entry(struct_order_, members); });
  }

  // A rank-1 attribute tensor, deduplicated by type and values.
  uint32_t attribute_tensor(uint32_t type, std::vector<uint32_t> constituents) {
    return cached(attribute_const_, std::make_pair(type, constituents),
                  [&] { return add_entry(attribute_order_, type, std::move(constituents)); });
  }

  uint32_t attribute(const TosaAttribute& a) {
    Scalar s = scalar_of(a.type);
    auto element = [&](size_t i) {
      return tosa_is_float(a.type) ? scalar_bits(s, a.floats[i], 0) : scalar_bits(s, 0.0, a.ints[i]);
    };
    if (!a.is_tensor) return scalar_const(s, element(0));
    uint32_t type = tensor_type(a.type, {static_cast<int64_t>(a.size())});
    std::vector<uint32_t> constituents;
    for (size_t i = 0; i < a.size(); ++i) constituents.push_back(scalar_const(s, element(i)));
    return attribute_tensor(type, std::move(constituents));
  }

  // Nested OpConstantComposites for an inline constant: rank R has shape[0]
  // constituents of rank R-1 (row-major). Sub-tensors go to inline_order_
  // before their parent; `result` is used for the outermost level.
  uint32_t inline_tensor(TosaElementType t, const std::vector<int64_t>& shape, const uint8_t* data, int64_t offset,
                         uint32_t result) {
    uint32_t type = tensor_type(t, shape);
    std::vector<uint32_t> constituents;
    Scalar s = scalar_of(t);
    if (shape.size() == 1) {
      for (int64_t i = 0; i < shape[0]; ++i) {
        double f = tosa_is_float(t) ? tosa_data_element(t, data, offset + i) : 0.0;
        int64_t v = tosa_is_float(t) ? 0 : tosa_data_int(t, data, offset + i);
        constituents.push_back(scalar_const(s, scalar_bits(s, f, v)));
      }
    } else {
      std::vector<int64_t> inner(shape.begin() + 1, shape.end());
      int64_t inner_numel = tosa_numel(inner);
      for (int64_t i = 0; i < shape[0]; ++i) {
        constituents.push_back(inline_tensor(t, inner, data, offset + i * inner_numel, 0));
      }
    }
    uint32_t id = result ? result : fresh();
    inline_order_.push_back({id, type, std::move(constituents)});
    return id;
  }

  // ---- phase 1: every type and constant, in first-use order ----

  void register_everything() {
    // Ids of the interface variables and the graph come first among the
    // graph's own objects only through renumbering; any provisional id works.
    for (const TosaInterface& in : g_.inputs) {
      uint32_t type = tensor_type(in.tensor);
      input_var_.push_back({fresh(), pointer_type(type)});
    }
    for (const TosaInterface& out : g_.outputs) {
      uint32_t type = tensor_type(out.tensor);
      output_var_.push_back({fresh(), pointer_type(type)});
    }
    // Input/output indices are u32 constants too.
    for (size_t i = 0; i < std::max(g_.inputs.size(), g_.outputs.size()); ++i) u32(i);
    value_.assign(g_.tensors.size(), 0);
    for (const TosaConstant& c : g_.constants) {
      uint32_t id = fresh();
      value_[static_cast<size_t>(c.tensor)] = id;
      tensor_type(c.tensor);
    }
    for (const TosaOperator& op : g_.operators) {
      size_t next_attr = 0;
      const TosaOpInfo& info = tosa_op_info(op.op);
      std::vector<uint32_t> attrs;
      for (uint32_t k = 0; k < info.operand_count; ++k) {
        TosaOperandRole r = info.operands[k].role;
        if (r == TosaOperandRole::kInput || r == TosaOperandRole::kInputList) continue;
        attrs.push_back(attribute(op.attributes[next_attr++]));
      }
      op_attr_ids_.push_back(std::move(attrs));
      std::vector<uint32_t> results;
      for (TosaTensorId t : op.outputs) results.push_back(tensor_type(t));
      op_result_type_.push_back(results.size() == 1 ? results[0] : struct_type(results));
    }
    // Inline constants last: their element constants join the scalar pool,
    // their sub-tensor types the tensor types.
    for (const TosaConstant& c : g_.constants) {
      if (c.storage != TosaConstantStorage::kInline) continue;
      const TosaTensor& t = g_.tensor(c.tensor);
      inline_tensor(t.type, t.shape, c.data.data(), 0, value_[static_cast<size_t>(c.tensor)]);
    }
    std::vector<uint32_t> io_types;
    for (const TosaInterface& in : g_.inputs) io_types.push_back(tensor_type(in.tensor));
    for (const TosaInterface& out : g_.outputs) io_types.push_back(tensor_type(out.tensor));
    graph_type_ = fresh();
    graph_type_members_ = io_types;
  }

  // ---- phase 2: the sections ----

  void emit_preamble() {
    add(capabilities_, spv::kOpCapability).lit(spv::kCapabilityShader);
    add(capabilities_, spv::kOpCapability).lit(spv::kCapabilityVulkanMemoryModel);
    auto used = [&](Scalar s) { return scalar_type_[static_cast<int>(s)] != 0; };
    if (used(Scalar::kU8)) add(capabilities_, spv::kOpCapability).lit(spv::kCapabilityInt8);
    if (used(Scalar::kU16)) add(capabilities_, spv::kOpCapability).lit(spv::kCapabilityInt16);
    if (used(Scalar::kU64)) add(capabilities_, spv::kOpCapability).lit(spv::kCapabilityInt64);
    if (used(Scalar::kF16)) add(capabilities_, spv::kOpCapability).lit(spv::kCapabilityFloat16);
    add(capabilities_, spv::kOpCapability).lit(kCapabilityTensorsARM);
    add(capabilities_, spv::kOpCapability).lit(kCapabilityGraphARM);
    for (const char* ext : {"SPV_ARM_graph", "SPV_ARM_tensors", "SPV_KHR_vulkan_memory_model"}) {
      add(extensions_, spv::kOpExtension).str(ext);
    }
    add(imports_, spv::kOpExtInstImport).id(import_id_).str(kTosaInstructionSet);
    add(memory_model_, spv::kOpMemoryModel).lit(spv::kAddressingLogical).lit(spv::kMemoryModelVulkan);

    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      if (!g_.inputs[i].name.empty()) add(names_, spv::kOpName).id(input_var_[i].first).str(g_.inputs[i].name);
    }
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      if (!g_.outputs[i].name.empty()) add(names_, spv::kOpName).id(output_var_[i].first).str(g_.outputs[i].name);
    }
    for (const TosaConstant& c : g_.constants) {
      if (!c.name.empty()) add(names_, spv::kOpName).id(value_[static_cast<size_t>(c.tensor)]).str(c.name);
    }
    auto decorate = [&](uint32_t var, const TosaInterface& io) {
      add(annotations_, spv::kOpDecorate).id(var).lit(spv::kDecorationDescriptorSet).lit(io.descriptor_set);
      add(annotations_, spv::kOpDecorate).id(var).lit(spv::kDecorationBinding).lit(io.binding);
    };
    for (size_t i = 0; i < g_.inputs.size(); ++i) decorate(input_var_[i].first, g_.inputs[i]);
    for (size_t i = 0; i < g_.outputs.size(); ++i) decorate(output_var_[i].first, g_.outputs[i]);
  }

  void emit_globals() {
    for (int k = 0; k < kScalarCount; ++k) {
      uint32_t id = scalar_type_[k];
      if (!id) continue;
      switch (static_cast<Scalar>(k)) {
        case Scalar::kF32: add(globals_, spv::kOpTypeFloat).id(id).lit(32); break;
        case Scalar::kF16: add(globals_, spv::kOpTypeFloat).id(id).lit(16); break;
        case Scalar::kU32: add(globals_, spv::kOpTypeInt).id(id).lit(32).lit(0); break;
        case Scalar::kU8: add(globals_, spv::kOpTypeInt).id(id).lit(8).lit(0); break;
        case Scalar::kU16: add(globals_, spv::kOpTypeInt).id(id).lit(16).lit(0); break;
        case Scalar::kU64: add(globals_, spv::kOpTypeInt).id(id).lit(64).lit(0); break;
        case Scalar::kBool: add(globals_, spv::kOpTypeBool).id(id); break;
      }
    }
    // scalar_const_ is a map ordered by (type, bits): the declaration order.
    for (const auto& [key, id] : scalar_const_) {
      Scalar s = static_cast<Scalar>(key.first);
      uint32_t type = scalar_type_[key.first];
      if (s == Scalar::kBool) {
        add(globals_, key.second ? spv::kOpConstantTrue : spv::kOpConstantFalse).id(type).id(id);
      } else if (s == Scalar::kU64) {
        add(globals_, spv::kOpConstant).id(type).id(id).lit(static_cast<uint32_t>(key.second))
            .lit(static_cast<uint32_t>(key.second >> 32));
      } else {
        add(globals_, spv::kOpConstant).id(type).id(id).lit(static_cast<uint32_t>(key.second));
      }
    }
    for (const auto& [id, length] : array_order_) {
      add(globals_, spv::kOpTypeArray).id(id).id(scalar_type(Scalar::kU32)).id(u32(length));
    }
    for (const ShapeConst& s : shape_order_) {
      InstBuilder b = add(globals_, spv::kOpConstantComposite).id(s.array).id(s.id);
      for (uint32_t d : s.dims) b.id(d);
    }
    for (const TensorType& t : tensor_order_) {
      add(globals_, kOpTypeTensorARM).id(t.id).id(t.element).id(t.rank).id(t.shape);
    }
    for (const auto& [id, members] : struct_order_) {
      InstBuilder b = add(globals_, spv::kOpTypeStruct).id(id);
      for (uint32_t m : members) b.id(m);
    }
    for (const auto& [id, pointee] : pointer_order_) {
      add(globals_, spv::kOpTypePointer).id(id).lit(spv::kStorageClassUniformConstant).id(pointee);
    }
    for (const auto& [id, type] : input_var_) {
      add(globals_, spv::kOpVariable).id(type).id(id).lit(spv::kStorageClassUniformConstant);
    }
    for (const auto& [id, type] : output_var_) {
      add(globals_, spv::kOpVariable).id(type).id(id).lit(spv::kStorageClassUniformConstant);
    }
    for (const Composite& c : attribute_order_) {
      InstBuilder b = add(globals_, spv::kOpConstantComposite).id(c.type).id(c.id);
      for (uint32_t m : c.constituents) b.id(m);
    }
    // Graph constants and inline constants, in graph order; an inline
    // constant's sub-tensors directly precede it.
    size_t next_inline = 0;
    for (const TosaConstant& c : g_.constants) {
      uint32_t id = value_[static_cast<size_t>(c.tensor)];
      if (c.storage == TosaConstantStorage::kGraphConstant) {
        add(globals_, kOpGraphConstantARM).id(tensor_type(c.tensor)).id(id).lit(c.graph_constant_id);
        continue;
      }
      while (next_inline < inline_order_.size()) {
        const Composite& sub = inline_order_[next_inline++];
        InstBuilder b = add(globals_, spv::kOpConstantComposite).id(sub.type).id(sub.id);
        for (uint32_t m : sub.constituents) b.id(m);
        if (sub.id == id) break;
      }
    }
    InstBuilder b = add(globals_, kOpTypeGraphARM).id(graph_type_).lit(static_cast<uint32_t>(g_.inputs.size()));
    for (uint32_t t : graph_type_members_) b.id(t);
  }

  void emit_graph() {
    uint32_t graph_id = fresh();
    {
      InstBuilder b = add(graph_, kOpGraphEntryPointARM).id(graph_id).str(g_.entry_point);
      for (const auto& v : input_var_) b.id(v.first);
      for (const auto& v : output_var_) b.id(v.first);
    }
    add(graph_, kOpGraphARM).id(graph_type_).id(graph_id);
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      uint32_t id = fresh();
      value_[static_cast<size_t>(g_.inputs[i].tensor)] = id;
      add(graph_, kOpGraphInputARM).id(tensor_type(g_.inputs[i].tensor)).id(id).id(u32(i));
    }
    for (size_t n = 0; n < g_.operators.size(); ++n) {
      const TosaOperator& op = g_.operators[n];
      const TosaOpInfo& info = tosa_op_info(op.op);
      uint32_t result = fresh();
      InstBuilder b = add(graph_, spv::kOpExtInst).id(op_result_type_[n]).id(result).id(import_id_).lit(info.opcode);
      size_t next_attr = 0, next_input = 0;
      for (uint32_t k = 0; k < info.operand_count; ++k) {
        TosaOperandRole r = info.operands[k].role;
        if (r == TosaOperandRole::kInputList) {
          while (next_input < op.inputs.size()) b.id(value_[static_cast<size_t>(op.inputs[next_input++])]);
        } else if (r == TosaOperandRole::kInput) {
          b.id(value_[static_cast<size_t>(op.inputs[next_input++])]);
        } else {
          b.id(op_attr_ids_[n][next_attr++]);
        }
      }
      if (op.outputs.size() == 1) {
        value_[static_cast<size_t>(op.outputs[0])] = result;
        continue;
      }
      for (size_t k = 0; k < op.outputs.size(); ++k) {
        uint32_t part = fresh();
        value_[static_cast<size_t>(op.outputs[k])] = part;
        add(graph_, spv::kOpCompositeExtract).id(tensor_type(op.outputs[k])).id(part).id(result)
            .lit(static_cast<uint32_t>(k));
      }
    }
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      add(graph_, kOpGraphSetOutputARM).id(value_[static_cast<size_t>(g_.outputs[i].tensor)]).id(u32(i));
    }
    add(graph_, kOpGraphEndARM);
  }

  std::vector<uint32_t> assemble() {
    std::vector<uint32_t> out = {spv::kMagic, spv::kVersion16, g_.generator, 0, 0};
    std::map<uint32_t, uint32_t> renumber;
    uint32_t next = 1;
    for (std::vector<Inst>* section : {&capabilities_, &extensions_, &imports_, &memory_model_, &names_, &annotations_,
                                       &globals_, &graph_}) {
      for (const Inst& inst : *section) {
        out.push_back(static_cast<uint32_t>(inst.words.size() + 1) << 16 | inst.opcode);
        for (size_t k = 0; k < inst.words.size(); ++k) {
          uint32_t w = inst.words[k];
          if (inst.is_id[k]) {
            auto [it, inserted] = renumber.emplace(w, next);
            if (inserted) ++next;
            w = it->second;
          }
          out.push_back(w);
        }
      }
    }
    out[3] = next;  // the bound
    return out;
  }

  struct ShapeConst {
    uint32_t id, array;
    std::vector<uint32_t> dims;
  };
  struct TensorType {
    uint32_t id, element, rank, shape;
  };
  struct Composite {
    uint32_t id, type;
    std::vector<uint32_t> constituents;
  };

  const TosaGraph& g_;
  uint32_t next_id_ = 1;
  uint32_t import_id_ = 0;
  uint32_t graph_type_ = 0;
  std::vector<uint32_t> graph_type_members_;
  uint32_t scalar_type_[kScalarCount] = {};
  std::map<std::pair<int, uint64_t>, uint32_t> scalar_const_;
  std::map<size_t, uint32_t> array_type_;
  std::vector<std::pair<uint32_t, size_t>> array_order_;
  std::map<std::vector<int64_t>, uint32_t> shape_const_;
  std::vector<ShapeConst> shape_order_;
  std::map<std::pair<int, std::vector<int64_t>>, uint32_t> tensor_type_;
  std::vector<TensorType> tensor_order_;
  std::map<uint32_t, uint32_t> pointer_type_;
  std::vector<std::pair<uint32_t, uint32_t>> pointer_order_;
  std::map<std::vector<uint32_t>, uint32_t> struct_type_;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> struct_order_;
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint32_t> attribute_const_;
  std::vector<Composite> attribute_order_;
  std::vector<Composite> inline_order_;
  std::vector<std::pair<uint32_t, uint32_t>> input_var_, output_var_;  // (variable, pointer type)
  std::vector<uint32_t> value_;                                        // tensor -> the id holding it
  std::vector<std::vector<uint32_t>> op_attr_ids_;
  std::vector<uint32_t> op_result_type_;
  std::vector<Inst> capabilities_, extensions_, imports_, memory_model_, names_, annotations_, globals_, graph_;
};

}  // namespace

Result<std::vector<uint32_t>> emit_tosa_module(const TosaGraph& graph) {
  GPUU_RETURN_IF_ERROR(validate_tosa_graph(graph));
  return Emitter(graph).run();
}

}  // namespace gpuu::vgf

// Attribute, dtype and shape codecs shared by the program and SubGraph formats.
#include "program/fb_util.h"

#include <cstring>
#include <set>

#include "base/hex_escape.h"
#include "program/program.h"

namespace gpuu::program::detail {

std::string Locator::at(const void* p) const {
  if (!p) return "";
  return str_cat(" (at byte ", static_cast<const uint8_t*>(p) - base_, ")");
}

Result<int32_t> checked_index(const Locator& loc, const flatbuffers::Vector<uint32_t>* vec, uint32_t i,
                              const std::string& what, size_t limit, const char* unit) {
  uint32_t value = vec->Get(i);
  if (value >= limit) {
    return loc.fail(what, "[", i, "] = ", value, loc.at(vec->Data() + i * sizeof(uint32_t)), " is out of range (",
                    limit, " ", unit, ")");
  }
  return static_cast<int32_t>(value);
}

Result<std::vector<int32_t>> checked_indices(const Locator& loc, const flatbuffers::Vector<uint32_t>* vec,
                                             const std::string& what, size_t limit, const char* unit) {
  std::vector<int32_t> out;
  if (!vec) return out;
  out.reserve(vec->size());
  for (uint32_t i = 0; i < vec->size(); ++i) {
    GPUU_ASSIGN_OR_RETURN(int32_t v, checked_index(loc, vec, i, what, limit, unit));
    out.push_back(v);
  }
  return out;
}

Result<std::vector<int32_t>> checked_node_inputs(const Locator& loc, const flatbuffers::Vector<uint32_t>* vec,
                                                 const std::string& what, size_t limit) {
  std::vector<int32_t> out;
  if (!vec) return out;
  out.reserve(vec->size());
  for (uint32_t i = 0; i < vec->size(); ++i) {
    if (vec->Get(i) == kAbsentInput) {
      out.push_back(-1);
      continue;
    }
    GPUU_ASSIGN_OR_RETURN(int32_t v, checked_index(loc, vec, i, what, limit, "tensors"));
    out.push_back(v);
  }
  return out;
}

Result<std::string> required_string(const Locator& loc, const flatbuffers::String* s, const std::string& what) {
  if (!s) return loc.fail(what, " is missing");
  if (s->size() == 0) return loc.fail(what, loc.at(s), " is empty");
  return s->str();
}

Result<graph::DType> checked_dtype(const Locator& loc, fb::DType dtype, const void* field, const std::string& what) {
  auto raw = static_cast<uint8_t>(dtype);
  if (raw >= graph::kDTypeCount) {
    return loc.fail(what, " = ", static_cast<int>(raw), loc.at(field), " is not a known dtype (0..",
                    graph::kDTypeCount - 1, ")");
  }
  return static_cast<graph::DType>(raw);
}

// flatbuffers 2.0.8's verifier aligns every vector to 4 bytes only, whatever
// its element type; reading a misaligned [long] or [double] would be undefined.
// (Empty vectors are never aligned by the builder, and nothing is read from them.)
template <typename T>
Status check_element_alignment(const Locator& loc, const flatbuffers::Vector<T>* vec, const std::string& what) {
  if (vec && vec->size() > 0 && reinterpret_cast<uintptr_t>(vec->Data()) % alignof(T) != 0) {
    return loc.fail(what, loc.at(vec->Data()), " is not ", alignof(T), "-byte aligned");
  }
  return Status::Ok();
}

// An IntsAttr or FloatsAttr value: the list of `Element` under `name`.
template <typename Element, typename T>
Status emplace_list(const Locator& loc, const flatbuffers::Vector<T>* vals, const std::string& where,
                    const std::string& name, graph::AttrMap* out) {
  GPUU_RETURN_IF_ERROR(check_element_alignment(loc, vals, where + ".values"));
  std::vector<Element> v;
  if (vals) v.assign(vals->begin(), vals->end());
  out->emplace(name, std::move(v));
  return Status::Ok();
}

Result<graph::Shape> checked_shape(const Locator& loc, const flatbuffers::Vector<int64_t>* shape, graph::DType dtype,
                                   const std::string& what) {
  GPUU_RETURN_IF_ERROR(check_element_alignment(loc, shape, what));
  graph::Shape out;
  if (shape) {
    out.reserve(shape->size());
    for (uint32_t i = 0; i < shape->size(); ++i) {
      int64_t d = shape->Get(i);
      if (d < 0) {
        return loc.fail(what, "[", i, "] = ", d, loc.at(shape->Data() + i * sizeof(int64_t)), " is negative");
      }
      out.push_back(d);
    }
  }
  Result<uint64_t> bytes = tensor_byte_size(dtype, out, what);
  if (!bytes.ok()) return loc.fail(bytes.status().message(), loc.at(shape));
  // The graph's own limits (rank, dimension, element count) hold in files too.
  std::string problem = graph::shape_problem(out);
  if (!problem.empty()) return loc.fail(what, " ", graph::shape_to_string(out), loc.at(shape), ": ", problem);
  return out;
}

Result<graph::AttrMap> decode_attrs(const Locator& loc, const flatbuffers::Vector<flatbuffers::Offset<fb::Attr>>* attrs,
                                    const std::string& what) {
  graph::AttrMap out;
  if (!attrs) return out;
  for (uint32_t i = 0; i < attrs->size(); ++i) {
    const fb::Attr* a = attrs->Get(i);
    std::string where = str_cat(what, "[", i, "]");
    GPUU_ASSIGN_OR_RETURN(std::string name, required_string(loc, a->name(), where + ".name"));
    if (out.count(name))
      return loc.fail(where, ".name '", name, "'", loc.at(a->name()), " repeats an earlier attribute");
    // A union may carry a type with no table; the verifier lets that through.
    if (a->value_type() != fb::AttrValue::NONE && !a->value()) {
      return loc.fail(where, " ('", name, "')", loc.at(a), ": the value is missing");
    }
    switch (a->value_type()) {
      case fb::AttrValue::IntAttr:
        out.emplace(name, a->value_as_IntAttr()->value());
        break;
      case fb::AttrValue::FloatAttr:
        out.emplace(name, a->value_as_FloatAttr()->value());
        break;
      case fb::AttrValue::StringAttr: {
        const flatbuffers::String* s = a->value_as_StringAttr()->value();
        if (!s) return loc.fail(where, " ('", name, "'): the string value is missing");
        out.emplace(name, s->str());
        break;
      }
      case fb::AttrValue::IntsAttr:
        GPUU_RETURN_IF_ERROR(emplace_list<int64_t>(loc, a->value_as_IntsAttr()->values(), where, name, &out));
        break;
      case fb::AttrValue::FloatsAttr:
        GPUU_RETURN_IF_ERROR(emplace_list<double>(loc, a->value_as_FloatsAttr()->values(), where, name, &out));
        break;
      default:
        // The verifier passes union types it does not know; so must we not.
        return loc.fail(where, " ('", name, "'): value type ", static_cast<int>(a->value_type()), loc.at(a),
                        " is not a known attribute type");
    }
  }
  return out;
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Attr>>> encode_attrs(
    flatbuffers::FlatBufferBuilder& fbb, const graph::AttrMap& attrs) {
  std::vector<flatbuffers::Offset<fb::Attr>> out;
  out.reserve(attrs.size());
  for (const auto& [name, value] : attrs) {  // std::map: sorted, so the bytes are deterministic
    auto name_off = fbb.CreateString(name);
    fb::AttrValue type = fb::AttrValue::NONE;
    flatbuffers::Offset<void> v;
    if (const auto* i = std::get_if<int64_t>(&value)) {
      type = fb::AttrValue::IntAttr;
      v = fb::CreateIntAttr(fbb, *i).Union();
    } else if (const auto* d = std::get_if<double>(&value)) {
      type = fb::AttrValue::FloatAttr;
      v = fb::CreateFloatAttr(fbb, *d).Union();
    } else if (const auto* s = std::get_if<std::string>(&value)) {
      type = fb::AttrValue::StringAttr;
      v = fb::CreateStringAttr(fbb, fbb.CreateString(*s)).Union();
    } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
      type = fb::AttrValue::IntsAttr;
      v = fb::CreateIntsAttr(fbb, fbb.CreateVector(*is)).Union();
    } else if (const auto* ds = std::get_if<std::vector<double>>(&value)) {
      type = fb::AttrValue::FloatsAttr;
      v = fb::CreateFloatsAttr(fbb, fbb.CreateVector(*ds)).Union();
    }
    out.push_back(fb::CreateAttr(fbb, name_off, type, v));
  }
  return fbb.CreateVector(out);
}

namespace {

Result<graph::DimExpr> decode_dim_expr(const Locator& loc, const fb::DimExpr* e, size_t dims, const std::string& what) {
  if (!e) return loc.fail(what, " is missing");
  graph::DimExpr out;
  out.offset = e->offset();
  const auto* coefficients = e->coefficients();
  const auto* masks = e->masks();
  const size_t n = coefficients ? coefficients->size() : 0;
  if ((masks ? masks->size() : 0) != n) {
    return loc.fail(what, loc.at(e), ": ", n, " coefficients but ", masks ? masks->size() : 0, " masks");
  }
  const uint32_t known = dims >= 32 ? ~0u : (1u << dims) - 1u;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t mask = masks->Get(k);
    if (mask == 0 || (mask & ~known) != 0) {
      return loc.fail(what, ".masks[", k, "] = ", mask, loc.at(masks), " names no dim or one past the ", dims,
                      " dims");
    }
    out.terms.push_back(graph::DimTerm{coefficients->Get(k), mask});
  }
  return out;
}

flatbuffers::Offset<fb::DimExpr> encode_dim_expr(flatbuffers::FlatBufferBuilder& fbb, const graph::DimExpr& e) {
  std::vector<int64_t> coefficients;
  std::vector<uint32_t> masks;
  for (const graph::DimTerm& t : e.terms) {
    coefficients.push_back(t.coefficient);
    masks.push_back(t.dims);
  }
  auto c = fbb.CreateVector(coefficients);
  auto m = fbb.CreateVector(masks);
  return fb::CreateDimExpr(fbb, e.offset, c, m);
}

}  // namespace

Result<std::vector<graph::AxisExpr>> decode_axis_exprs(const Locator& loc,
                                                       const flatbuffers::Vector<flatbuffers::Offset<fb::AxisExpr>>* v,
                                                       size_t rank, size_t dims, const std::string& what) {
  std::vector<graph::AxisExpr> out;
  if (!v) return out;
  std::vector<char> seen(rank, 0);
  for (uint32_t i = 0; i < v->size(); ++i) {
    const fb::AxisExpr* a = v->Get(i);
    const std::string where = str_cat(what, "[", i, "]");
    if (a->axis() >= rank || seen[a->axis()]) {
      return loc.fail(where, ".axis ", a->axis(), loc.at(a), a->axis() >= rank ? " is beyond the rank " : " repeats",
                      a->axis() >= rank ? std::to_string(rank) : std::string());
    }
    seen[a->axis()] = 1;
    GPUU_ASSIGN_OR_RETURN(graph::DimExpr size, decode_dim_expr(loc, a->size(), dims, where + ".size"));
    out.push_back(graph::AxisExpr{a->axis(), std::move(size)});
  }
  return out;
}

Result<std::vector<graph::AttrExpr>> decode_attr_exprs(const Locator& loc,
                                                       const flatbuffers::Vector<flatbuffers::Offset<fb::AttrExpr>>* v,
                                                       const graph::AttrMap& attrs, size_t dims,
                                                       const std::string& what) {
  std::vector<graph::AttrExpr> out;
  if (!v) return out;
  for (uint32_t i = 0; i < v->size(); ++i) {
    const fb::AttrExpr* a = v->Get(i);
    const std::string where = str_cat(what, "[", i, "]");
    GPUU_ASSIGN_OR_RETURN(std::string name, required_string(loc, a->attr(), where + ".attr"));
    auto it = attrs.find(name);
    size_t elements = 0;
    if (it != attrs.end()) {
      if (std::holds_alternative<int64_t>(it->second)) elements = 1;
      if (const auto* ints = std::get_if<std::vector<int64_t>>(&it->second)) elements = ints->size();
    }
    if (a->element() >= elements) {
      return loc.fail(where, " names '", name, "'[", a->element(), "]", loc.at(a),
                      ", which is not an integer attribute element of the node");
    }
    GPUU_ASSIGN_OR_RETURN(graph::DimExpr value, decode_dim_expr(loc, a->value(), dims, where + ".value"));
    out.push_back(graph::AttrExpr{std::move(name), a->element(), std::move(value)});
  }
  return out;
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::AxisExpr>>> encode_axis_exprs(
    flatbuffers::FlatBufferBuilder& fbb, const std::vector<graph::AxisExpr>& exprs) {
  if (exprs.empty()) return 0;
  std::vector<flatbuffers::Offset<fb::AxisExpr>> out;
  for (const graph::AxisExpr& a : exprs) out.push_back(fb::CreateAxisExpr(fbb, a.axis, encode_dim_expr(fbb, a.size)));
  return fbb.CreateVector(out);
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::AttrExpr>>> encode_attr_exprs(
    flatbuffers::FlatBufferBuilder& fbb, const std::vector<graph::AttrExpr>& exprs) {
  if (exprs.empty()) return 0;
  std::vector<flatbuffers::Offset<fb::AttrExpr>> out;
  for (const graph::AttrExpr& a : exprs) {
    auto name = fbb.CreateString(a.attr);
    out.push_back(fb::CreateAttrExpr(fbb, name, a.element, encode_dim_expr(fbb, a.value)));
  }
  return fbb.CreateVector(out);
}

const uint8_t* aligned_for_flatbuffers(const uint8_t* data, size_t size, std::vector<uint64_t>* storage) {
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) == 0) return data;
  storage->assign((size + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
  if (size) std::memcpy(storage->data(), data, size);
  return reinterpret_cast<const uint8_t*>(storage->data());
}

std::string printable_identifier(const uint8_t* data, size_t size) {
  std::string out;
  for (size_t i = 4; i < 8 && i < size; ++i) {
    uint8_t b = data[i];
    if (b >= 0x20 && b < 0x7f) {
      out.push_back(static_cast<char>(b));
    } else {
      append_hex_escape(out, b);
    }
  }
  return out;
}

}  // namespace gpuu::program::detail

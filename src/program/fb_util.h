// Internal helpers shared by the program and SubGraph codecs: typed attributes,
// dtypes and shapes to and from flatbuffers, and byte offsets for messages.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "program/common_generated.h"

namespace gpuu::program::detail {

// Names the byte offset of a piece of a verified buffer in error messages.
class Locator {
 public:
  Locator(const char* prefix, const uint8_t* base) : prefix_(prefix), base_(base) {}
  const char* prefix() const { return prefix_; }
  // " (at byte N)" for a pointer into the buffer, "" for null.
  std::string at(const void* p) const;

  template <typename... Parts>
  Status fail(const Parts&... parts) const {
    return err(StatusCode::kInvalidFormat, prefix_, ": ", parts...);
  }

 private:
  const char* prefix_;
  const uint8_t* base_;
};

// Where a table's scalar field lies in the buffer (null when it is absent and
// reads as its default). Generated tables inherit Table privately, hence the cast.
template <typename T>
const uint8_t* field_address(const T* table, flatbuffers::voffset_t field) {
  return reinterpret_cast<const flatbuffers::Table*>(table)->GetAddressOf(field);
}

// `index` from `vec[i]` as a checked value < `limit`; `what` names the field
// ("delegates[1].inputs") and `unit` what the limit counts ("tensors").
Result<int32_t> checked_index(const Locator& loc, const flatbuffers::Vector<uint32_t>* vec, uint32_t i,
                              const std::string& what, size_t limit, const char* unit);

// All entries of an optional index vector, each checked as above.
Result<std::vector<int32_t>> checked_indices(const Locator& loc, const flatbuffers::Vector<uint32_t>* vec,
                                             const std::string& what, size_t limit, const char* unit);

// A node's input list: as checked_indices, except that kAbsentInput reads as
// -1 (an optional input left out, such as a convolution's bias).
Result<std::vector<int32_t>> checked_node_inputs(const Locator& loc, const flatbuffers::Vector<uint32_t>* vec,
                                                 const std::string& what, size_t limit);

// A required, non-empty string field.
Result<std::string> required_string(const Locator& loc, const flatbuffers::String* s, const std::string& what);

Result<graph::DType> checked_dtype(const Locator& loc, fb::DType dtype, const void* field, const std::string& what);

// The shape, every dimension >= 0, its byte size representable.
Result<graph::Shape> checked_shape(const Locator& loc, const flatbuffers::Vector<int64_t>* shape, graph::DType dtype,
                                   const std::string& what);

Result<graph::AttrMap> decode_attrs(const Locator& loc, const flatbuffers::Vector<flatbuffers::Offset<fb::Attr>>* attrs,
                                    const std::string& what);

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Attr>>> encode_attrs(
    flatbuffers::FlatBufferBuilder& fbb, const graph::AttrMap& attrs);

// Size expressions of a tensor (symbolic dims): each axis < `rank`, once,
// with at most `dims` coefficients.
Result<std::vector<graph::AxisExpr>> decode_axis_exprs(const Locator& loc,
                                                       const flatbuffers::Vector<flatbuffers::Offset<fb::AxisExpr>>* v,
                                                       size_t rank, size_t dims, const std::string& what);
// Attribute expressions of a node: each names an integer attribute of
// `attrs` and an element it has.
Result<std::vector<graph::AttrExpr>> decode_attr_exprs(const Locator& loc,
                                                       const flatbuffers::Vector<flatbuffers::Offset<fb::AttrExpr>>* v,
                                                       const graph::AttrMap& attrs, size_t dims,
                                                       const std::string& what);
// Null offsets for empty lists, so that a static program's bytes stay as they were.
flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::AxisExpr>>> encode_axis_exprs(
    flatbuffers::FlatBufferBuilder& fbb, const std::vector<graph::AxisExpr>& exprs);
flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::AttrExpr>>> encode_attr_exprs(
    flatbuffers::FlatBufferBuilder& fbb, const std::vector<graph::AttrExpr>& exprs);

inline fb::DType to_fb(graph::DType dtype) { return static_cast<fb::DType>(static_cast<uint8_t>(dtype)); }

// How a node's input list stores an optional input that was left out.
constexpr uint32_t kAbsentInput = 0xFFFFFFFFu;

// Index vectors; a negative index (graph::kNone, an absent optional input) is
// written as kAbsentInput.
template <typename T>
flatbuffers::Offset<flatbuffers::Vector<uint32_t>> encode_indices(flatbuffers::FlatBufferBuilder& fbb,
                                                                  const std::vector<T>& indices) {
  std::vector<uint32_t> v;
  v.reserve(indices.size());
  for (T i : indices) v.push_back(i < 0 ? kAbsentInput : static_cast<uint32_t>(i));
  return fbb.CreateVector(v);
}

// Copies bytes to storage aligned for every flatbuffers scalar when `data` is
// not, so that reading a verified buffer never makes a misaligned access.
const uint8_t* aligned_for_flatbuffers(const uint8_t* data, size_t size, std::vector<uint64_t>* storage);

// The file identifier as printable text for messages ("GPUU", "\x00\x01..").
std::string printable_identifier(const uint8_t* data, size_t size);

}  // namespace gpuu::program::detail

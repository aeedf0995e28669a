// Dimensions that vary between executes (a dynamic batch or sequence): each a
// name and bounds, and the integers of a graph that follow them (tensor sizes,
// shape attributes) as affine expressions of the dims. A graph with dims is
// recorded at its example sizes; fit_dims finds the expressions by comparing
// it with recordings of the same model at other sizes, and bind_dims makes a
// copy static at any sizes within bounds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"

namespace gpuu::graph {

class Graph;
// As graph.h declares them (this header comes first there).
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;
using AttrMap = std::map<std::string, AttrValue>;

// Dims a graph or program may declare (readers refuse more coefficients).
constexpr size_t kMaxSymbolicDims = 16;
// Constants up to this many bytes are compared between recordings: folded
// numbers (a 1/seq scale, say) live in small ones; weights never change.
constexpr size_t kComparedConstantBytes = 4096;

struct SymbolicDim {
  std::string name;
  int64_t min = 1;
  int64_t max = 1;
  int64_t example = 1;  // the size the graph's static shapes were recorded at
};

// A product of distinct dims times a coefficient: `dims` is a bit mask
// (bit i: dim i), never 0.
struct DimTerm {
  int64_t coefficient = 0;
  uint32_t dims = 0;
  bool operator==(const DimTerm& o) const { return coefficient == o.coefficient && dims == o.dims; }
};

// Whether 0 <= min <= example <= max <= kMaxDim (graph.h), as every declared dim must be.
bool dim_bounds_ordered(const SymbolicDim& dim);

// offset + sum of the terms: a polynomial of degree at most 1 in each dim
// ("2*seq+1", "batch*seq"), which is what flattening and slicing make.
struct DimExpr {
  int64_t offset = 0;
  std::vector<DimTerm> terms;  // by increasing mask, no zero coefficient

  int64_t eval(const std::vector<int64_t>& dims) const;
  // The dim this expression is on its own ("batch", not "2*batch"), or -1.
  int32_t single_dim() const;
  // "2*seq+1", with the dims' names.
  std::string to_string(const std::vector<SymbolicDim>& dims) const;
  bool operator==(const DimExpr& o) const { return offset == o.offset && terms == o.terms; }
};

// Axis `axis` of a value's shape follows `size`.
struct AxisExpr {
  uint32_t axis = 0;
  DimExpr size;
  bool operator==(const AxisExpr& o) const { return axis == o.axis && size == o.size; }
};

// Element `element` of an integer attribute (0 for a scalar one) follows `value`.
struct AttrExpr {
  std::string attr;
  uint32_t element = 0;
  DimExpr value;
  bool operator==(const AttrExpr& o) const { return attr == o.attr && element == o.element && value == o.value; }
};

// The model recorded again with the dims at `dims` (one size per dim of the
// base graph, in order).
struct DimRecording {
  std::vector<int64_t> dims;
  const Graph* graph = nullptr;
};

// Fills `base`'s expressions (values' axis sizes, nodes' integer attributes)
// from `recordings`: each integer that differs between them becomes a DimExpr.
// For each dim, the first recording that moves only that dim from the
// example gives it a second size; the recordings at every combination of
// the two sizes of each dim (the corners) fix the terms, and every
// recording must then agree with the expressions. Fails, naming every
// problem, when the recordings differ in structure (ops, wiring, dtypes,
// ranks, other attributes), when an integer is not such a polynomial, when
// a constant's or state's shape or a small constant's bytes change with a
// dim, when a size goes negative within bounds, or when a corner is missing.
Status fit_dims(Graph& base, const std::vector<DimRecording>& recordings);

// Whether `dims` (one size per dim of `declared`) lies within the bounds;
// the error names the first dim outside and its bounds.
Status check_dims_in_bounds(const std::vector<SymbolicDim>& declared, const std::vector<int64_t>& dims);

// Writes each expression's value at `dims` into the attribute element it
// stands for; fails naming `owner` (a node) when one is not an integer there.
Status apply_attr_exprs(AttrMap& attrs, const std::vector<AttrExpr>& exprs, const std::vector<int64_t>& dims,
                        const std::string& owner);

// Makes `graph` static at `dims`: every expression evaluated into the shape
// or attribute it stands for; the expressions and dims are dropped.
Status bind_dims(Graph& graph, const std::vector<int64_t>& dims);

}  // namespace gpuu::graph

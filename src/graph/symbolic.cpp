// Symbolic dims: fitting a graph's integers to affine expressions of its dims
// from recordings at other sizes, and binding them back to numbers.
#include "graph/symbolic.h"

#include <cstring>
#include <map>

#include "graph/graph.h"

namespace gpuu::graph {

bool dim_bounds_ordered(const SymbolicDim& d) {
  return d.min >= 0 && d.min <= d.example && d.example <= d.max && d.max <= kMaxDim;
}

int64_t DimExpr::eval(const std::vector<int64_t>& dims) const {
  int64_t v = offset;
  for (const DimTerm& t : terms) {
    int64_t p = t.coefficient;
    for (size_t i = 0; i < dims.size() && i < 32; ++i) {
      if (t.dims >> i & 1u) p *= dims[i];
    }
    v += p;
  }
  return v;
}

int32_t DimExpr::single_dim() const {
  if (offset != 0 || terms.size() != 1 || terms[0].coefficient != 1) return -1;
  const uint32_t m = terms[0].dims;
  if (m == 0 || (m & (m - 1)) != 0) return -1;
  return __builtin_ctz(m);
}

std::string DimExpr::to_string(const std::vector<SymbolicDim>& dims) const {
  std::string out;
  for (const DimTerm& t : terms) {
    std::string product;
    for (uint32_t i = 0; i < 32; ++i) {
      if (!(t.dims >> i & 1u)) continue;
      product += (product.empty() ? "" : "*") + (i < dims.size() ? dims[i].name : "dim" + std::to_string(i));
    }
    const int64_t mag = t.coefficient < 0 ? -t.coefficient : t.coefficient;
    out += t.coefficient < 0 ? "-" : (out.empty() ? "" : "+");
    out += mag == 1 ? product : std::to_string(mag) + "*" + product;
  }
  if (offset != 0 || out.empty()) {
    out += offset < 0 ? "-" : (out.empty() ? "" : "+");
    out += std::to_string(offset < 0 ? -offset : offset);
  }
  return out;
}

namespace {

// Corners grow as 2^dims: fitting stops at this many dims.
constexpr size_t kMaxFittedDims = 4;
// Problems named in one error; the rest are counted.
constexpr size_t kNamedProblems = 12;

std::string binding_string(const std::vector<SymbolicDim>& dims, const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < dims.size() && i < values.size(); ++i) {
    out += (i ? ", " : "") + dims[i].name + "=" + std::to_string(values[i]);
  }
  return out;
}

class Fitter {
 public:
  Fitter(Graph& base, const std::vector<DimRecording>& recordings) : base_(base), recs_(recordings) {
    for (const SymbolicDim& d : base.dims()) example_.push_back(d.example);
  }

  Status run() {
    const size_t nd = example_.size();
    if (nd == 0) return err(StatusCode::kInvalidArgument, "fit_dims: the graph declares no dims");
    for (size_t r = 0; r < recs_.size(); ++r) {
      if (!recs_[r].graph || recs_[r].dims.size() != nd) {
        return err(StatusCode::kInvalidArgument, "fit_dims: recording ", r, " has ", recs_[r].dims.size(),
                   " dim sizes for ", nd, " dims", recs_[r].graph ? "" : " and no graph");
      }
    }
    if (nd > kMaxFittedDims) {
      return err(StatusCode::kInvalidArgument, "fit_dims: ", nd, " dims; at most ", kMaxFittedDims, " can be fitted");
    }
    // The recording that moves dim i alone gives its second size.
    std::vector<int> moving(nd, -1);
    for (size_t r = 0; r < recs_.size(); ++r) {
      int moved = -1, count = 0;
      for (size_t i = 0; i < nd; ++i) {
        if (recs_[r].dims[i] != example_[i]) moved = static_cast<int>(i), ++count;
      }
      if (count == 1 && moving[static_cast<size_t>(moved)] < 0) moving[static_cast<size_t>(moved)] = static_cast<int>(r);
    }
    second_.assign(nd, 0);
    for (size_t i = 0; i < nd; ++i) {
      if (moving[i] < 0) {
        problem(str_cat("dim '", base_.dims()[i].name, "' has no recording that moves it alone from its example ",
                        example_[i]));
      } else {
        second_[i] = recs_[static_cast<size_t>(moving[i])].dims[i];
      }
    }
    if (!problems_.empty()) return fail();
    // Corner T: the dims in mask T at their second size, the others at the example.
    corner_.assign(size_t{1} << nd, -1);
    for (uint32_t t = 1; t < corner_.size(); ++t) {
      std::vector<int64_t> want(nd);
      for (size_t i = 0; i < nd; ++i) want[i] = (t >> i & 1u) ? second_[i] : example_[i];
      for (size_t r = 0; r < recs_.size() && corner_[t] < 0; ++r) {
        if (recs_[r].dims == want) corner_[t] = static_cast<int>(r);
      }
      if (corner_[t] < 0) problem(str_cat("no recording at ", binding_string(base_.dims(), want)));
    }
    if (!problems_.empty()) return fail();
    for (size_t r = 0; r < recs_.size(); ++r) compare_structure(r);
    if (!problems_.empty()) return fail();
    fit_values();
    fit_attrs();
    if (problems_.empty()) return Status::Ok();
    for (size_t v = 0; v < base_.values().size(); ++v) base_.mutable_value(static_cast<ValueId>(v)).dim_exprs.clear();
    for (size_t n = 0; n < base_.nodes().size(); ++n) base_.mutable_node(static_cast<NodeId>(n)).attr_exprs.clear();
    return fail();
  }

 private:
  void problem(std::string p) { problems_.push_back(std::move(p)); }

  Status fail() const {
    std::string msg = "the graph does not follow its dims (" + binding_string(base_.dims(), example_) +
                      " at the example): ";
    for (size_t i = 0; i < problems_.size() && i < kNamedProblems; ++i) msg += (i ? "; " : "") + problems_[i];
    if (problems_.size() > kNamedProblems) msg += str_cat("; and ", problems_.size() - kNamedProblems, " more");
    return Status(StatusCode::kInvalidArgument, msg);
  }

  std::string at(size_t r) const { return binding_string(base_.dims(), recs_[r].dims); }

  void compare_structure(size_t r) {
    const Graph& g = *recs_[r].graph;
    if (g.values().size() != base_.values().size() || g.nodes().size() != base_.nodes().size() ||
        g.inputs() != base_.inputs() || g.outputs() != base_.outputs() ||
        g.constants().size() != base_.constants().size() || g.states().size() != base_.states().size()) {
      problem(str_cat("at ", at(r), " the graph has ", g.nodes().size(), " nodes and ", g.values().size(),
                      " values, at the example ", base_.nodes().size(), " and ", base_.values().size(),
                      " (or other inputs, outputs, constants or states): the model's structure changes with the dims"));
      return;
    }
    for (size_t n = 0; n < base_.nodes().size(); ++n) {
      const Node& a = base_.nodes()[n];
      const Node& b = g.nodes()[n];
      if (a.op != b.op || a.inputs != b.inputs || a.outputs != b.outputs) {
        problem(str_cat("node '", a.name, "' (", a.op, ") is '", b.name, "' (", b.op, ") with other operands at ",
                        at(r), ": the model's structure changes with the dims"));
        continue;
      }
      for (const auto& [key, va] : a.attrs) {
        auto it = b.attrs.find(key);
        if (it == b.attrs.end() || it->second.index() != va.index()) {
          problem(str_cat("node '", a.name, "' attribute '", key, "' differs in kind at ", at(r)));
        } else if (std::holds_alternative<std::vector<int64_t>>(va)) {
          if (std::get<std::vector<int64_t>>(va).size() != std::get<std::vector<int64_t>>(it->second).size()) {
            problem(str_cat("node '", a.name, "' attribute '", key, "' changes length at ", at(r)));
          }
        } else if (!std::holds_alternative<int64_t>(va) && va != it->second) {
          problem(str_cat("node '", a.name, "' attribute '", key, "' changes value at ", at(r),
                          " (only integer attributes may follow the dims)"));
        }
      }
      if (b.attrs.size() != a.attrs.size()) problem(str_cat("node '", a.name, "' has other attributes at ", at(r)));
    }
    for (size_t v = 0; v < base_.values().size(); ++v) {
      const Value& a = base_.values()[v];
      const Value& b = g.values()[v];
      if (a.dtype != b.dtype || a.shape.size() != b.shape.size() || a.producer != b.producer ||
          a.constant != b.constant || a.state != b.state) {
        problem(str_cat("value '", a.name, "' changes dtype, rank or origin at ", at(r)));
      } else if ((a.constant != kNone || a.state != kNone) && a.shape != b.shape) {
        problem(str_cat(a.constant != kNone ? "constant '" : "state '", a.name, "' is ", shape_to_string(a.shape),
                        " at the example but ", shape_to_string(b.shape), " at ", at(r),
                        a.constant != kNone ? ": gpuu cannot compute it at run time; make it an input or compute it"
                                              " from one"
                                            : ": a state's shape must not follow the dims"));
      }
    }
    for (size_t c = 0; c < base_.constants().size(); ++c) {
      const Blob& a = base_.constants()[c].data;
      const Blob& b = g.constants()[c].data;
      // (A recording keeps only its small constants' bytes: gpuu_graph_add_dim_recording.)
      if (a.size() == b.size() && a.size() <= kComparedConstantBytes && a.size() &&
          std::memcmp(a.data(), b.data(), a.size()) != 0) {
        problem(str_cat("constant '", base_.constants()[c].name, "' holds other numbers at ", at(r),
                        ": it was folded from the sizes; gpuu cannot recompute it at run time"));
      }
    }
  }

  // Fits one integer slot; `read(g)` gives its value in graph g. Returns
  // whether it follows the dims (then `out` holds the expression).
  template <typename Read>
  bool fit(const std::string& what, Read read, DimExpr* out) {
    const int64_t v0 = read(base_);
    bool varies = false;
    for (const DimRecording& rec : recs_) varies |= read(*rec.graph) != v0;
    if (!varies) return false;
    const size_t nd = example_.size();
    const size_t nc = corner_.size();
    auto at_corner = [&](size_t t) { return t == 0 ? v0 : read(*recs_[static_cast<size_t>(corner_[t])].graph); };
    // In steps x_i = (d_i - example_i): value = sum over masks S of a_S * prod_{i in S} x_i. Moebius
    // inversion over the corners gives a_S * prod delta_i, delta_i the step to the second size.
    std::vector<int64_t> a(nc, 0);
    for (size_t sm = 0; sm < nc; ++sm) {
      int64_t sum = 0;
      for (size_t t = sm;; t = (t - 1) & sm) {
        const int sign = (__builtin_popcount(static_cast<unsigned>(sm ^ t)) & 1) ? -1 : 1;
        sum += sign * at_corner(t);
        if (t == 0) break;
      }
      int64_t delta = 1;
      for (size_t i = 0; i < nd; ++i) {
        if (sm >> i & 1u) delta *= second_[i] - example_[i];
      }
      if (sum % delta != 0) {
        problem(str_cat(what, " is ", v0, " at the example and ", at_corner(sm), " at ",
                        at(static_cast<size_t>(corner_[sm])), ": not a whole multiple of the step"));
        return false;
      }
      a[sm] = sum / delta;
    }
    // Expanded into products of dims: prod_{i in S} (d_i - e_i) = sum over U in S of prod_{U} d_i * prod_{S\U} (-e_i).
    DimExpr e;
    std::vector<int64_t> by_mask(nc, 0);
    for (size_t sm = 0; sm < nc; ++sm) {
      if (a[sm] == 0) continue;
      for (size_t u = sm;; u = (u - 1) & sm) {
        int64_t term = a[sm];
        for (size_t i = 0; i < nd; ++i) {
          if ((sm >> i & 1u) && !(u >> i & 1u)) term *= -example_[i];
        }
        by_mask[u] += term;
        if (u == 0) break;
      }
    }
    e.offset = by_mask[0];
    for (size_t u = 1; u < nc; ++u) {
      if (by_mask[u] != 0) e.terms.push_back(DimTerm{by_mask[u], static_cast<uint32_t>(u)});
    }
    for (size_t r = 0; r < recs_.size(); ++r) {
      if (e.eval(recs_[r].dims) != read(*recs_[r].graph)) {
        problem(str_cat(what, " is ", read(*recs_[r].graph), " at ", at(r), " where ", e.to_string(base_.dims()),
                        " gives ", e.eval(recs_[r].dims), ": it does not follow the dims that way (not a whole",
                        " polynomial of degree 1 in each, such as a floor division)"));
        return false;
      }
    }
    // Degree 1 in each dim: the least value over the bounds lies at a corner of them.
    for (size_t t = 0; t < nc; ++t) {
      std::vector<int64_t> bound(nd);
      for (size_t i = 0; i < nd; ++i) bound[i] = (t >> i & 1u) ? base_.dims()[i].max : base_.dims()[i].min;
      if (e.eval(bound) < 0) {
        problem(str_cat(what, " = ", e.to_string(base_.dims()), " is ", e.eval(bound), " at ",
                        binding_string(base_.dims(), bound), ", within the dims' bounds: narrow them"));
        return false;
      }
    }
    *out = std::move(e);
    return true;
  }

  void fit_values() {
    for (size_t v = 0; v < base_.values().size(); ++v) {
      Value& value = base_.mutable_value(static_cast<ValueId>(v));
      value.dim_exprs.clear();
      for (size_t a = 0; a < value.shape.size(); ++a) {
        DimExpr e;
        auto read = [&](const Graph& g) { return g.values()[v].shape[a]; };
        if (fit(str_cat("value '", value.name, "' axis ", a), read, &e)) {
          value.dim_exprs.push_back(AxisExpr{static_cast<uint32_t>(a), std::move(e)});
        }
      }
    }
  }

  void fit_attrs() {
    for (size_t n = 0; n < base_.nodes().size(); ++n) {
      Node& node = base_.mutable_node(static_cast<NodeId>(n));
      node.attr_exprs.clear();
      for (const auto& [key, value] : node.attrs) {
        auto element_count = [&]() -> size_t {
          if (std::holds_alternative<int64_t>(value)) return 1;
          if (std::holds_alternative<std::vector<int64_t>>(value)) return std::get<std::vector<int64_t>>(value).size();
          return 0;
        };
        for (size_t k = 0; k < element_count(); ++k) {
          auto read = [&, key = key](const Graph& g) -> int64_t {
            const AttrValue& av = g.nodes()[n].attrs.at(key);
            if (const int64_t* i = std::get_if<int64_t>(&av)) return *i;
            return std::get<std::vector<int64_t>>(av)[k];
          };
          DimExpr e;
          if (fit(str_cat("node '", node.name, "' attribute '", key, "'[", k, "]"), read, &e)) {
            node.attr_exprs.push_back(AttrExpr{key, static_cast<uint32_t>(k), std::move(e)});
          }
        }
      }
    }
  }

  Graph& base_;
  const std::vector<DimRecording>& recs_;
  std::vector<int64_t> example_;
  std::vector<int64_t> second_;  // each dim's second size
  std::vector<int> corner_;       // recording index at each corner mask (0: the base graph)
  std::vector<std::string> problems_;
};

}  // namespace

Status fit_dims(Graph& base, const std::vector<DimRecording>& recordings) {
  return Fitter(base, recordings).run();
}

Status check_dims_in_bounds(const std::vector<SymbolicDim>& declared, const std::vector<int64_t>& dims) {
  if (dims.size() != declared.size()) {
    return err(StatusCode::kInvalidArgument, dims.size(), " dim sizes for ", declared.size(), " dims");
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const SymbolicDim& d = declared[i];
    if (dims[i] < d.min || dims[i] > d.max) {
      return err(StatusCode::kInvalidArgument, "dim '", d.name, "' = ", dims[i], " is ", dims[i] < d.min ? "below" : "above",
                 " its bounds [", d.min, ", ", d.max, "]");
    }
  }
  return Status::Ok();
}

Status apply_attr_exprs(AttrMap& attrs, const std::vector<AttrExpr>& exprs, const std::vector<int64_t>& dims,
                        const std::string& owner) {
  for (const AttrExpr& ae : exprs) {
    auto it = attrs.find(ae.attr);
    int64_t* slot = nullptr;
    if (it != attrs.end()) {
      if (int64_t* i = std::get_if<int64_t>(&it->second); i && ae.element == 0) slot = i;
      auto* v = std::get_if<std::vector<int64_t>>(&it->second);
      if (v && ae.element < v->size()) slot = &(*v)[ae.element];
    }
    if (!slot) {
      return err(StatusCode::kInvalidArgument, "node '", owner, "': an expression for attribute '", ae.attr, "'[",
                 ae.element, "], which is not an integer there");
    }
    *slot = ae.value.eval(dims);
  }
  return Status::Ok();
}

Status bind_dims(Graph& graph, const std::vector<int64_t>& dims) {
  for (size_t v = 0; v < graph.values().size(); ++v) {
    Value& value = graph.mutable_value(static_cast<ValueId>(v));
    for (const AxisExpr& ax : value.dim_exprs) {
      if (ax.axis >= value.shape.size()) {
        return err(StatusCode::kInvalidArgument, "value '", value.name, "': a size expression for axis ", ax.axis,
                   " of a rank-", value.shape.size(), " shape");
      }
      value.shape[ax.axis] = ax.size.eval(dims);
    }
    value.dim_exprs.clear();
    std::string why = shape_problem(value.shape);
    if (!why.empty()) return err(StatusCode::kInvalidArgument, "value '", value.name, "' at these dims: ", why);
  }
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    Node& node = graph.mutable_node(static_cast<NodeId>(n));
    GPUU_RETURN_IF_ERROR(apply_attr_exprs(node.attrs, node.attr_exprs, dims, node.name));
    node.attr_exprs.clear();
  }
  graph.set_dims({});
  return Status::Ok();
}

}  // namespace gpuu::graph

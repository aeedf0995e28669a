// Grouping of fusable elementwise nodes and the fused dispatch.
#include "kernels/fusion.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "base/half.h"
#include "graph/index_math.h"
#include "graph/op_registry.h"
#include "kernels/gemm_dispatch.h"
#include "kernels/movement.h"
#include "kernels/row_norm.h"

namespace gpuu::kernels {
namespace {

constexpr size_t kMaxFusedInputs = op_codes::kLimitFusedMaxInputs;  // MAX_INPUTS in fused_elementwise.comp
constexpr size_t kMaxFusedImmediates = op_codes::kLimitFusedMaxImmediates;  // MAX_IMMEDIATES
constexpr size_t kMaxFusedInstructions = op_codes::kLimitFusedMaxInstructions;  // MAX_INSTRUCTIONS

// fused_elementwise.comp's instruction code of a node, -1 when it does not
// fuse: the ops op_codes.txt makes fusable, a unary op's variant chosen as the
// unary kernel chooses it.
int fused_code(const graph::Node& n) {
  static const std::map<std::string, int32_t> codes = op_codes::to_map(op_codes::kFusedInstructionTable);
  static const std::set<int32_t> fused_unary = [] {
    std::set<int32_t> out;
    for (const auto& [name, code] : codes) {
      if (code < op_codes::kFusedBinaryBase) out.insert(code);
    }
    return out;
  }();
  // A unary op's code depends on its attributes (gelu's tanh form, clamp to
  // [0, 6]), and so may whether it fuses.
  const int32_t unary = unary_code(n);
  if (unary >= 0) return fused_unary.count(unary) ? unary : -1;
  if (n.op == "cast") {  // fusable checks which casts a chain takes
    auto to = n.attrs.find("dtype");
    const std::string* name = to == n.attrs.end() ? nullptr : std::get_if<std::string>(&to->second);
    if (name && *name == "f16") return op_codes::kConvertCastF16;
    // To an integer edge: the value stays f32 in the registers, the store converts it.
    if (name && (*name == "f32" || *name == "i8" || *name == "i16")) return op_codes::kConvertCastF32;
    return -1;
  }
  auto it = codes.find(n.op);
  return it == codes.end() ? -1 : it->second;
}

// The ops whose store takes an epilogue: their lowering runs a GEMM kernel,
// or for conv2d a GEMM or the direct kernel. A reshape keeps a matmul's or
// linear's columns, not a convolution's channels.
bool stores_through_gemm(const std::string& op, bool through_reshape) {
  return op == "matmul" || op == "linear" || op == "linear_dequant" || (op == "conv2d" && !through_reshape);
}

// A comparison: in a chain, a register of 1.0 or 0.0 that only a where of the chain reads.
bool comparison(const graph::Node& n) {
  static const std::map<std::string, int32_t> table = op_codes::to_map(op_codes::kCompareTable);
  return table.count(n.op) > 0;
}

// An integer type an f32 chain reads or writes at its edges (fused_elementwise.comp's INT_INPUTS, OUT_BYTES).
bool int_edge(graph::DType dtype) { return dtype == graph::DType::kI8 || dtype == graph::DType::kI16; }

// A cast goes between float types, from an integer edge to f32 (loaded
// converted) or from f32 to one (stored converted: only at a chain's end);
// every other op's inputs have its output's type.
bool fusable(const graph::Graph& g, const graph::Node& n) {
  if (fused_code(n) < 0 || n.outputs.size() != 1) return false;
  // The fused kernel walks each node's tensors in at most kMaxRank dims; an
  // elementwise node of a higher rank runs alone, its own walk merged.
  auto too_high = [&](graph::ValueId id) { return id >= 0 && g.value(id).shape.size() > kMaxRank; };
  if (too_high(n.outputs[0]) || std::any_of(n.inputs.begin(), n.inputs.end(), too_high)) return false;
  const graph::DType dtype = g.value(n.outputs[0]).dtype;
  if (comparison(n) || n.op == "where") {
    // A comparison of two floats of one type (its bool result kept in a
    // register); a where of such a bool between two values of its type.
    const bool compare = comparison(n);
    if (n.inputs.size() != (compare ? 2u : 3u) || (compare ? dtype != graph::DType::kBool : !is_float(dtype))) {
      return false;
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] < 0) return false;
      const graph::DType t = g.value(n.inputs[i]).dtype;
      const bool ok = compare ? is_float(t) && t == g.value(n.inputs[0]).dtype
                              : (i == 0 ? t == graph::DType::kBool : t == dtype);
      if (!ok) return false;
    }
    return check_tensor_limits(g, n).empty();
  }
  const bool cast = n.op == "cast";
  if (!is_float(dtype) && !(cast && int_edge(dtype))) return false;
  for (graph::ValueId in : n.inputs) {
    if (in < 0) return false;
    const graph::DType from = g.value(in).dtype;
    const bool takes = !cast                ? from == dtype
                       : int_edge(dtype)    ? from == graph::DType::kF32
                       : is_float(from) || (dtype == graph::DType::kF32 && int_edge(from));
    if (!takes) return false;
  }
  return check_tensor_limits(g, n).empty();
}


bool broadcasts_to(const graph::Shape& in, const graph::Shape& out) {
  if (in.size() > out.size()) return false;
  for (size_t k = 0; k < in.size(); ++k) {
    int64_t d = in[in.size() - 1 - k];
    if (d != 1 && d != out[out.size() - 1 - k]) return false;
  }
  return true;
}

// How the GEMM's store reads `input` (broadcast to the output `out`): at the
// output element, at its row (conv2d's output channel, NCHW axis 1), at its
// column (a GEMM's last axis), or once; nullopt for any other broadcast.
// `channels_first`: `out` is a channels-first store's layout, its axis 1 the
// GEMM's column.
std::optional<GemmEpilogue::Mode> epilogue_mode(const graph::Shape& input, const graph::Shape& out, bool conv,
                                                bool channels_first = false) {
  if (input == out) return GemmEpilogue::kFull;
  if (!broadcasts_to(input, out)) return std::nullopt;
  if (graph::shape_numel(input) == 1) return GemmEpilogue::kScalar;
  // The one output axis the input varies along.
  const size_t axis = conv || channels_first ? 1 : out.size() - 1;
  for (size_t k = 0; k < input.size(); ++k) {
    const size_t out_axis = out.size() - input.size() + k;
    if (input[k] != 1 && out_axis != axis) return std::nullopt;
  }
  return conv ? GemmEpilogue::kRow : GemmEpilogue::kColumn;
}

// The pixels per image of a transpose that moves its input's last axis to
// axis 1 and keeps the others in order ([B, H, W, C] -> [B, C, H, W]): what a
// GEMM's row-major [B x H x W, C] result becomes when stored channels-first.
// 0 for any other node, and for one that keeps memory order (a view).
uint32_t channels_first_plane(const graph::Graph& g, const graph::Node& n) {
  if (n.op != "transpose" || n.inputs.empty() || n.inputs[0] < 0 || keeps_memory_order(g, n)) return 0;
  Result<graph::AttrMap> attrs = graph::resolve_attrs(n);
  if (!attrs.ok() || !graph::has_attr(*attrs, "perm")) return 0;
  const std::vector<int64_t> perm = graph::attr_ints(*attrs, "perm");
  const graph::Shape& in = g.value(n.inputs[0]).shape;
  const size_t r = in.size();
  if (r < 3 || perm.size() != r || perm[0] != 0 || perm[1] != static_cast<int64_t>(r - 1)) return 0;
  int64_t plane = 1;
  for (size_t k = 2; k < r; ++k) {
    if (perm[k] != static_cast<int64_t>(k - 1)) return 0;
    plane *= in[k - 1];
  }
  return plane > 0 && plane <= INT32_MAX ? static_cast<uint32_t>(plane) : 0;
}

// The value of a one-element float constant, which a chain takes as an
// immediate (compiled into its pipeline) rather than as a bound input.
std::optional<float> immediate_value(const graph::Graph& g, graph::ValueId v) {
  const graph::Value& value = g.value(v);
  if (value.constant < 0 || graph::shape_numel(value.shape) != 1) return std::nullopt;
  const Blob& data = g.constants()[static_cast<size_t>(value.constant)].data;
  if (value.dtype == graph::DType::kF32 && data.size() == 4) {
    float f;
    std::memcpy(&f, data.data(), 4);
    return f;
  }
  if (value.dtype == graph::DType::kF16 && data.size() == 2) {
    uint16_t h;
    std::memcpy(&h, data.data(), 2);
    return half_to_float(h);
  }
  return std::nullopt;
}

// A chain's outside operands: those it binds and those it compiles in, with
// the values compiled in.
struct ChainOperands {
  std::vector<graph::ValueId> bound;
  std::vector<graph::ValueId> immediates;
  std::vector<float> immediate_values;  // one per immediate
};

std::vector<graph::ValueId> externals_of(const graph::Graph& g, const std::vector<graph::NodeId>& nodes) {
  std::set<graph::ValueId> produced;
  std::vector<graph::ValueId> externals;
  for (graph::NodeId id : nodes) {
    for (graph::ValueId in : g.node(id).inputs) {
      if (!produced.count(in) && std::find(externals.begin(), externals.end(), in) == externals.end()) {
        externals.push_back(in);
      }
    }
    produced.insert(g.node(id).outputs[0]);
  }
  return externals;
}

// Whether every outside input of `nodes` has the chain's output dtype: a
// GEMM's store and a concat's parts read and write one element type.
bool one_element_type(const graph::Graph& g, const std::vector<graph::NodeId>& nodes) {
  const graph::DType dtype = g.value(g.node(nodes.back()).outputs[0]).dtype;
  for (graph::ValueId e : externals_of(g, nodes)) {
    if (g.value(e).dtype != dtype) return false;
  }
  return true;
}

// The float type a chain computes in: its output's, or the f32 before the
// integer cast ending it.
graph::DType chain_float_type(const graph::Graph& g, const std::vector<graph::NodeId>& nodes) {
  const graph::Node& last = g.node(nodes.back());
  const graph::DType out = g.value(last.outputs[0]).dtype;
  return int_edge(out) ? g.value(last.inputs[0]).dtype : out;
}

// Whether the fused kernel takes the chain's edges: outside inputs of the
// chain's float type, or for an f32 chain i8/i16 ones (which only its casts
// read: fusable lets no other op take them); the output likewise.
bool fused_edges_fit(const graph::Graph& g, const std::vector<graph::NodeId>& nodes) {
  const graph::DType dtype = chain_float_type(g, nodes);
  auto fits = [&](graph::DType t) { return t == dtype || (dtype == graph::DType::kF32 && int_edge(t)); };
  if (!fits(g.value(g.node(nodes.back()).outputs[0]).dtype)) return false;
  for (graph::ValueId e : externals_of(g, nodes)) {
    if (!fits(g.value(e).dtype)) return false;
  }
  return true;
}

// Fusable `node`'s instruction word (op | a << 8 | b << 16 | c << 24) over
// the registers `reg` names for its inputs; c is where's third operand.
int32_t instruction_word(const graph::Node& node, const std::map<graph::ValueId, int>& reg) {
  const int a = reg.at(node.inputs[0]);
  const int b = node.inputs.size() > 1 ? reg.at(node.inputs[1]) : 0;
  const int c = node.inputs.size() > 2 ? reg.at(node.inputs[2]) : 0;
  return fused_code(node) | (a << 8) | (b << 16) | (c << 24);
}

// The instruction words of `nodes` (fusable ops, in order) over the
// registers `reg` names; each result joins `reg`, the k-th at `first_result` + k.
std::vector<int32_t> chain_instructions(const graph::Graph& g, const std::vector<graph::NodeId>& nodes,
                                        std::map<graph::ValueId, int>& reg, int first_result) {
  std::vector<int32_t> words;
  for (graph::NodeId id : nodes) {
    const graph::Node& node = g.node(id);
    words.push_back(instruction_word(node, reg));
    reg[node.outputs[0]] = first_result + static_cast<int>(words.size()) - 1;
  }
  return words;
}

// Up to `max_immediates` one-element constants become immediates, the rest is bound.
ChainOperands operands_of(const graph::Graph& g, const std::vector<graph::NodeId>& nodes, size_t max_immediates) {
  ChainOperands out;
  for (graph::ValueId e : externals_of(g, nodes)) {
    std::optional<float> value =
        out.immediates.size() < max_immediates ? immediate_value(g, e) : std::optional<float>{};
    if (!value) {
      out.bound.push_back(e);
      continue;
    }
    out.immediates.push_back(e);
    out.immediate_values.push_back(*value);
  }
  return out;
}

// Whether `nodes` (fusable ops, in order) can run as a layer norm's chain
// (row_norm.h): f32 arithmetic over one tensor (`tensor`, or any where
// kNone) of the chain's shape and scalar constants, within the row kernel's
// instructions and immediates.
bool norm_chain_fits(const graph::Graph& g, const std::vector<graph::NodeId>& nodes, graph::ValueId tensor) {
  if (nodes.empty() || nodes.size() > kNormChainMaxInstructions) return false;
  for (graph::NodeId id : nodes) {
    if (!fusable(g, g.node(id))) return false;
  }
  if (chain_float_type(g, nodes) != graph::DType::kF32 || !fused_edges_fit(g, nodes)) return false;
  const ChainOperands operands = operands_of(g, nodes, kNormChainMaxImmediates);
  return operands.bound.size() == 1 && (tensor == graph::kNone || operands.bound[0] == tensor) &&
         g.value(operands.bound[0]).shape == g.value(g.node(nodes.back()).outputs[0]).shape;
}

// A GEMM's epilogue planned on the graph alone: make_epilogue binds it to
// tensors, and plan_lowering asks it whether a chain folds before joining
// the chain to a GEMM whose store it would change.
struct EpiloguePlan {
  std::vector<graph::ValueId> inputs;
  std::vector<GemmEpilogue::Mode> modes;
  std::vector<int32_t> instructions;
  std::vector<float> immediates;
  uint32_t plane = 0;  // GemmEpilogue::plane
  std::string label, ops;
};

// The chain `nodes` (fusable ops, and at most one transpose to
// channels-first) after `gemm`, whose output the chain reads as `result`;
// nullopt where the store cannot run it.
std::optional<EpiloguePlan> plan_epilogue(const graph::Graph& g, const graph::Node& gemm, graph::ValueId result,
                                          const std::vector<graph::NodeId>& nodes) {
  const bool conv = gemm.op == "conv2d";
  const graph::Shape& out = g.value(g.node(nodes.back()).outputs[0]).shape;
  EpiloguePlan plan;
  // The nodes before a transpose see the GEMM's row-major shape, which the
  // element index of a channels-first store no longer follows.
  size_t transposed_at = nodes.size();
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (fused_code(g.node(nodes[k])) >= 0) continue;
    const uint32_t plane = conv ? 0 : channels_first_plane(g, g.node(nodes[k]));
    if (plane == 0 || plan.plane != 0) return std::nullopt;
    transposed_at = k;
    plan.plane = plane;
  }
  const graph::Shape& before = plan.plane ? g.value(g.node(nodes[transposed_at]).inputs[0]).shape : out;
  std::map<graph::ValueId, int> reg = {{result, 0}};
  const ChainOperands operands = operands_of(g, nodes, GemmEpilogue::kMaxImmediates);
  for (graph::ValueId e : operands.bound) {
    if (e == result) continue;
    bool read_before = false, read_after = false;
    for (size_t k = 0; k < nodes.size(); ++k) {
      const std::vector<graph::ValueId>& ins = g.node(nodes[k]).inputs;
      if (std::find(ins.begin(), ins.end(), e) != ins.end()) (k < transposed_at ? read_before : read_after) = true;
    }
    std::optional<GemmEpilogue::Mode> mode;
    if (read_before) {
      mode = epilogue_mode(g.value(e).shape, before, conv);
      if (plan.plane && mode == GemmEpilogue::kFull) return std::nullopt;
    }
    if (read_after) {
      std::optional<GemmEpilogue::Mode> after = epilogue_mode(g.value(e).shape, out, conv, true);
      if (read_before && after != mode) return std::nullopt;
      mode = after;
    }
    if (!mode || plan.inputs.size() == GemmEpilogue::kMaxInputs) return std::nullopt;
    plan.inputs.push_back(e);
    plan.modes.push_back(*mode);
    reg[e] = static_cast<int>(plan.inputs.size());
  }
  for (size_t j = 0; j < operands.immediates.size(); ++j) {
    reg[operands.immediates[j]] = static_cast<int>(1 + GemmEpilogue::kMaxInputs + j);
  }
  plan.immediates = operands.immediate_values;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const graph::Node& node = g.node(nodes[k]);
    plan.label += (k ? "+" : "") + node.name;
    plan.ops += (k ? "+" : "") + node.op;
    if (k == transposed_at) {  // moves no value: the store's index does
      reg[node.outputs[0]] = reg.at(node.inputs[0]);
      continue;
    }
    if (plan.instructions.size() == GemmEpilogue::kMaxInstructions) return std::nullopt;
    plan.instructions.push_back(instruction_word(node, reg));
    reg[node.outputs[0]] = static_cast<int>(1 + GemmEpilogue::kMaxInputs + GemmEpilogue::kMaxImmediates +
                                            plan.instructions.size() - 1);
  }
  return plan;
}

}  // namespace

// Groups grow backwards from a root (the node whose output escapes): a
// producer joins when it is fusable, has the root's shape, and everything it
// feeds is already in the group. Diamonds (sin(x) and cos(x) meeting in a mul)
// fold into one group, and a group is always convex: no outside node reads a
// member other than the root, so no path leaves the group and comes back.
// RMSNorm as model code writes it, found from its mean (`mean_id`): x * rsqrt(
// mean(x * x, last axis, keepdim) + eps), then maybe * w with w varying along
// the last axis only. Hugging Face's form for half models computes in f32:
// x is a cast of the half input, and the product is cast back before the
// weight; both casts join the unit, which reads and writes the half tensors.
// Its nodes in graph order, each inner value read only inside the unit and no
// region output; nullopt where `mean_id` starts no such chain.
std::optional<std::vector<graph::NodeId>> rms_norm_nodes(const graph::Graph& g, graph::NodeId mean_id,
                                                         const std::vector<std::vector<graph::NodeId>>& consumers,
                                                         const std::set<graph::ValueId>& outputs) {
  const graph::Node& mean = g.node(mean_id);
  if (mean.op != "reduce_mean" || mean.inputs.size() != 1 || mean.inputs[0] < 0) return std::nullopt;
  const graph::NodeId sq_id = g.value(mean.inputs[0]).producer;
  if (sq_id < 0) return std::nullopt;
  const graph::Node& sq = g.node(sq_id);
  if (sq.op != "mul" || sq.inputs.size() != 2 || sq.inputs[0] != sq.inputs[1] || sq.inputs[0] < 0) return std::nullopt;
  const graph::ValueId x = sq.inputs[0];
  const graph::Value& xv = g.value(x);
  if (!is_float(xv.dtype) || xv.shape.empty() || g.value(sq.outputs[0]).dtype != xv.dtype) return std::nullopt;
  // x made by a float cast that only this norm reads (checked once the
  // product is found): the unit reads the cast's input.
  const graph::NodeId cast_in = xv.producer >= 0 && g.node(xv.producer).op == "cast" &&
                                        g.node(xv.producer).inputs.size() == 1 &&
                                        is_float(g.value(g.node(xv.producer).inputs[0]).dtype) &&
                                        !outputs.count(x)
                                    ? xv.producer
                                    : graph::kNone;
  Result<graph::AttrMap> attrs = graph::resolve_attrs(mean);
  if (!attrs.ok() || graph::attr_int(*attrs, "keepdim", 0) != 1) return std::nullopt;
  const std::vector<int64_t> axes = graph::attr_ints(*attrs, "axes");
  if (axes.size() != 1 || graph::normalize_axis(axes[0], xv.shape.size()) != static_cast<int64_t>(xv.shape.size()) - 1) {
    return std::nullopt;
  }
  // The one reader of `v`, if it is an `op` node and v is no region output.
  auto next = [&](graph::ValueId v, const char* op) -> graph::NodeId {
    const auto& readers = consumers[static_cast<size_t>(v)];
    if (readers.size() != 1 || outputs.count(v) || g.node(readers[0]).op != op) return graph::kNone;
    return readers[0];
  };
  // The other input of binary node `n` than `v` (kNone unless exactly one input is v).
  auto other = [&](const graph::Node& n, graph::ValueId v) -> graph::ValueId {
    if (n.inputs.size() != 2 || (n.inputs[0] == v) == (n.inputs[1] == v)) return graph::kNone;
    return n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
  };
  std::vector<graph::NodeId> nodes = {sq_id, mean_id};
  if (next(sq.outputs[0], "reduce_mean") != mean_id) return std::nullopt;
  const graph::NodeId add = next(mean.outputs[0], "add");
  if (add == graph::kNone) return std::nullopt;
  const graph::ValueId eps = other(g.node(add), mean.outputs[0]);
  if (eps == graph::kNone || !immediate_value(g, eps)) return std::nullopt;
  const graph::NodeId rsqrt = next(g.node(add).outputs[0], "rsqrt");
  if (rsqrt == graph::kNone) return std::nullopt;
  const graph::NodeId scale = next(g.node(rsqrt).outputs[0], "mul");
  if (scale == graph::kNone || other(g.node(scale), g.node(rsqrt).outputs[0]) != x ||
      g.value(g.node(scale).outputs[0]).shape != xv.shape) {
    return std::nullopt;
  }
  nodes.insert(nodes.end(), {add, rsqrt, scale});
  graph::ValueId normed = g.node(scale).outputs[0];
  graph::DType out_dtype = xv.dtype;
  if (cast_in != graph::kNone) {
    // Both casts or neither: the unit's input and output share one dtype.
    const graph::ValueId x_in = g.node(cast_in).inputs[0];
    const graph::NodeId cast_out = next(normed, "cast");
    const auto& readers = consumers[static_cast<size_t>(x)];
    const bool only_here = std::all_of(readers.begin(), readers.end(),
                                       [&](graph::NodeId r) { return r == sq_id || r == scale; });
    if (cast_out != graph::kNone && only_here && g.value(g.node(cast_out).outputs[0]).dtype == g.value(x_in).dtype) {
      nodes.insert(nodes.begin(), cast_in);
      nodes.push_back(cast_out);
      normed = g.node(cast_out).outputs[0];
      out_dtype = g.value(normed).dtype;
    } else if (g.value(x_in).dtype != xv.dtype) {
      return std::nullopt;  // the cast runs on its own, and so does the norm: its input is the cast's result
    }
  }
  const graph::NodeId weighted = next(normed, "mul");
  if (weighted != graph::kNone) {
    const graph::ValueId w = other(g.node(weighted), normed);
    const graph::Value* wv = w == graph::kNone ? nullptr : &g.value(w);
    bool along_last = wv && wv->dtype == out_dtype && !wv->shape.empty() && wv->shape.size() <= xv.shape.size() &&
                      (wv->shape.back() == xv.shape.back() || wv->shape.back() == 1) &&
                      g.value(g.node(weighted).outputs[0]).shape == xv.shape;
    for (size_t k = 0; along_last && k + 1 < wv->shape.size(); ++k) along_last = wv->shape[k] == 1;
    if (along_last) nodes.push_back(weighted);
  }
  return nodes;
}

namespace {

// The concat axis of `n` where the fused kernel can take it as its last step
// (fused_elementwise.comp's CONCAT_DIM): two float parts of one shape and
// the output's dtype, along a dim of the output's rank; else nullopt.
std::optional<size_t> fusable_concat_axis(const graph::Graph& g, const graph::Node& n) {
  if (n.op != "concat" || n.inputs.size() != 2 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.inputs[1] < 0) {
    return std::nullopt;
  }
  const graph::Value& y = g.value(n.outputs[0]);
  const graph::Value& a = g.value(n.inputs[0]);
  const graph::Value& b = g.value(n.inputs[1]);
  if (!is_float(y.dtype) || a.dtype != y.dtype || b.dtype != y.dtype || a.shape != b.shape ||
      a.shape.size() != y.shape.size() || !check_tensor_limits(g, n).empty()) {
    return std::nullopt;
  }
  Result<graph::AttrMap> attrs = graph::resolve_attrs(n);
  if (!attrs.ok()) return std::nullopt;
  const auto axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(*attrs, "axis"), y.shape.size()));
  if (axis >= y.shape.size() || a.shape[axis] == 0 || y.shape[axis] != 2 * a.shape[axis]) return std::nullopt;
  return axis;
}

}  // namespace

namespace {

// A chain reading a matmul's or linear's result (with its epilogue so far)
// through a transpose to channels-first, ConvNeXt's [B, H, W, C] ->
// [B, C, H, W] before its layer scale and residual add: the GEMM stores that
// layout itself (EpiloguePlan::plane), so the chain joins its unit and the
// transpose costs no copy. Only where the whole chain then folds into the
// store; `units[u]` is the chain. `inside(v, nodes)`: whether only `nodes`
// read value `v` (and it is no graph output).
template <typename Inside>
void join_channels_first(const graph::Graph& g, std::vector<LoweringUnit>& units, size_t u,
                         const std::vector<int>& unit_of, std::vector<bool>& absorbed, const Inside& inside) {
  LoweringUnit& chain = units[u];
  const graph::Value& out = g.value(g.node(chain.nodes.back()).outputs[0]);
  auto lone = [&](graph::NodeId id) {
    const int at = unit_of[static_cast<size_t>(id)];
    return !absorbed[static_cast<size_t>(at)] && units[static_cast<size_t>(at)].nodes.size() == 1;
  };
  for (graph::ValueId e : externals_of(g, chain.nodes)) {
    const graph::NodeId t = g.value(e).producer;
    if (t < 0 || !channels_first_plane(g, g.node(t)) || g.value(e).shape != out.shape ||
        g.value(e).dtype != out.dtype || !lone(t)) {
      continue;
    }
    // Back from the transpose through views that keep memory order (units
    // of their own) to the unit that made them: the GEMM, alone or with its
    // epilogue so far.
    std::vector<graph::NodeId> head = {t};
    graph::NodeId p = g.value(g.node(t).inputs[0]).producer;
    while (p >= 0 && keeps_memory_order(g, g.node(p)) && lone(p)) {
      head.insert(head.begin(), p);
      p = g.value(g.node(p).inputs[0]).producer;
    }
    if (p < 0) continue;
    const int gu = unit_of[static_cast<size_t>(p)];
    const LoweringUnit& gemm_unit = units[static_cast<size_t>(gu)];
    const graph::Node& gemm = g.node(gemm_unit.nodes[0]);
    if (absorbed[static_cast<size_t>(gu)] || gemm_unit.nodes.back() != p || gemm.op == "conv2d" ||
        !stores_through_gemm(gemm.op, false) || (!gemm_unit.gemm_epilogue && gemm_unit.nodes.size() != 1)) {
      continue;
    }
    std::vector<graph::NodeId> nodes = gemm_unit.nodes;
    nodes.insert(nodes.end(), head.begin(), head.end());
    nodes.insert(nodes.end(), chain.nodes.begin(), chain.nodes.end());
    bool sealed = true;  // nothing outside reads what the unit makes on the way
    for (size_t k = 0; k + 1 < nodes.size() && sealed; ++k) sealed = inside(g.node(nodes[k]).outputs[0], nodes);
    // The epilogue starts after the GEMM's views that keep memory order.
    size_t views = 0;
    while (1 + views < nodes.size() && keeps_memory_order(g, g.node(nodes[1 + views]))) ++views;
    if (!sealed || !plan_epilogue(g, gemm, g.node(nodes[views]).outputs[0],
                                  std::vector<graph::NodeId>(nodes.begin() + 1 + static_cast<long>(views), nodes.end()))) {
      continue;
    }
    absorbed[static_cast<size_t>(gu)] = true;
    for (graph::NodeId id : head) absorbed[static_cast<size_t>(unit_of[static_cast<size_t>(id)])] = true;
    chain.nodes = std::move(nodes);
    chain.gemm_epilogue = true;
    return;
  }
}

// An i32 value an add may read as a bias along the last axis of `product`
// (matmul_int's columns): N elements, every dim before the last 1.
bool int_column_bias(const graph::Graph& g, graph::ValueId bias, const graph::Shape& product) {
  if (bias < 0 || product.empty()) return false;
  const graph::Value& b = g.value(bias);
  if (b.dtype != graph::DType::kI32 || b.shape.empty() || b.shape.size() > product.size() ||
      b.shape.back() != product.back()) {
    return false;
  }
  for (size_t d = 0; d + 1 < b.shape.size(); ++d) {
    if (b.shape[d] != 1) return false;
  }
  return true;
}

}  // namespace

std::vector<LoweringUnit> plan_lowering(const graph::Graph& g, bool fuse, const std::vector<graph::ValueId>& written_over) {
  const size_t n = g.nodes().size();
  std::vector<LoweringUnit> units;
  if (!fuse) {
    for (size_t i = 0; i < n; ++i) units.push_back(LoweringUnit{{static_cast<graph::NodeId>(i)}});
    return units;
  }
  std::vector<std::vector<graph::NodeId>> consumers = g.consumers();
  std::set<graph::ValueId> graph_outputs(g.outputs().begin(), g.outputs().end());
  std::vector<int> group_of(n, -1);  // a fused group, or kInRmsNorm
  constexpr int kInRmsNorm = -2;
  std::vector<std::vector<graph::NodeId>> rms_norms;
  for (size_t i = 0; i < n; ++i) {
    std::optional<std::vector<graph::NodeId>> found =
        rms_norm_nodes(g, static_cast<graph::NodeId>(i), consumers, graph_outputs);
    if (!found) continue;
    for (graph::NodeId id : *found) group_of[static_cast<size_t>(id)] = kInRmsNorm;
    rms_norms.push_back(std::move(*found));
  }
  std::vector<std::vector<graph::NodeId>> groups;
  // A where joins a group with the comparison making its condition, of the
  // group's shape and read by nothing else (a bool the kernel never stores);
  // kNone where there is none such.
  auto condition_of = [&](const graph::Node& where, const graph::Shape& shape) -> graph::NodeId {
    const graph::ValueId cond = where.inputs[0];
    const graph::NodeId c = g.value(cond).producer;
    if (c < 0 || group_of[static_cast<size_t>(c)] != -1 || graph_outputs.count(cond) || !comparison(g.node(c)) ||
        !fusable(g, g.node(c)) || g.value(cond).shape != shape || consumers[static_cast<size_t>(cond)].size() != 1) {
      return graph::kNone;
    }
    return c;
  };
  for (size_t r = n; r-- > 0;) {
    const graph::Node& root = g.node(static_cast<graph::NodeId>(r));
    if (group_of[r] != -1 || !fusable(g, root) || comparison(root)) continue;
    const graph::Shape& shape = g.value(root.outputs[0]).shape;
    std::set<graph::NodeId> members = {static_cast<graph::NodeId>(r)};
    if (root.op == "where") {
      const graph::NodeId c = condition_of(root, shape);
      if (c == graph::kNone) continue;
      members.insert(c);
    }
    bool grew = true;
    while (grew) {
      grew = false;
      // Candidates in descending order keep the growth deterministic.
      std::vector<graph::NodeId> candidates;
      for (graph::NodeId m : members) {
        for (graph::ValueId in : g.node(m).inputs) {
          graph::NodeId p = g.value(in).producer;
          if (p >= 0 && !members.count(p)) candidates.push_back(p);
        }
      }
      std::sort(candidates.rbegin(), candidates.rend());
      for (graph::NodeId p : candidates) {
        if (members.count(p) || group_of[static_cast<size_t>(p)] != -1) continue;
        const graph::Node& node = g.node(p);
        // Only the root may store an integer; a comparison joins with its where.
        if (!fusable(g, node) || comparison(node) || !is_float(g.value(node.outputs[0]).dtype) ||
            g.value(node.outputs[0]).shape != shape) {
          continue;
        }
        if (graph_outputs.count(node.outputs[0])) continue;
        const auto& readers = consumers[static_cast<size_t>(node.outputs[0])];
        if (!std::all_of(readers.begin(), readers.end(), [&](graph::NodeId c) { return members.count(c) > 0; })) {
          continue;
        }
        std::vector<graph::NodeId> joining = {p};
        if (node.op == "where") {
          const graph::NodeId c = condition_of(node, shape);
          if (c == graph::kNone || members.count(c)) continue;
          joining.push_back(c);
        }
        std::vector<graph::NodeId> trial(members.begin(), members.end());
        trial.insert(trial.end(), joining.begin(), joining.end());
        std::sort(trial.begin(), trial.end());
        bool inputs_broadcast = true;
        for (graph::ValueId e : externals_of(g, trial)) inputs_broadcast &= broadcasts_to(g.value(e).shape, shape);
        if (!inputs_broadcast || operands_of(g, trial, kMaxFusedImmediates).bound.size() > kMaxFusedInputs ||
            trial.size() > kMaxFusedInstructions) {
          continue;
        }
        members.insert(joining.begin(), joining.end());
        grew = true;
      }
    }
    // A group whose outside inputs are of another float type than it
    // computes in (it stopped inside a cast island) is not one kernel's.
    if (members.size() < 2 || !fused_edges_fit(g, std::vector<graph::NodeId>(members.begin(), members.end()))) continue;
    for (graph::NodeId id : members) group_of[static_cast<size_t>(id)] = static_cast<int>(groups.size());
    groups.emplace_back(members.begin(), members.end());  // ascending: graph order, root last
  }
  // A concat of two equal parts, at least one a group's root (or a fusable
  // node) that only the concat reads, joins them in one group: the fused
  // kernel runs both chains at each element's place within its part
  // (RoPE's rotate-half form: cat([x1 cos - x2 sin, x2 cos + x1 sin])). Not
  // a concat written over a program state (it copies only what moves).
  for (size_t c = 0; c < n; ++c) {
    const graph::Node& cat = g.node(static_cast<graph::NodeId>(c));
    const std::optional<size_t> axis = fusable_concat_axis(g, cat);
    if (!axis || group_of[c] != -1 || cat.inputs[0] == cat.inputs[1]) continue;
    const auto out = static_cast<size_t>(cat.outputs[0]);
    if (out < written_over.size() && written_over[out] != graph::kNone) continue;
    std::vector<graph::NodeId> members;
    std::vector<int> merged_groups;
    for (graph::ValueId part : cat.inputs) {
      const graph::NodeId p = g.value(part).producer;
      if (p < 0 || graph_outputs.count(part) || consumers[static_cast<size_t>(part)].size() != 1) continue;
      const int group = group_of[static_cast<size_t>(p)];
      if (group >= 0) {
        merged_groups.push_back(group);
        members.insert(members.end(), groups[static_cast<size_t>(group)].begin(), groups[static_cast<size_t>(group)].end());
      } else if (group == -1 && fusable(g, g.node(p))) {
        members.push_back(p);
      }
    }
    if (members.empty()) continue;
    std::sort(members.begin(), members.end());
    members.push_back(static_cast<graph::NodeId>(c));
    const graph::Shape& part_shape = g.value(cat.inputs[0]).shape;
    bool inputs_broadcast = true;
    for (graph::ValueId e : externals_of(g, members)) inputs_broadcast &= broadcasts_to(g.value(e).shape, part_shape);
    if (!inputs_broadcast || !one_element_type(g, members) ||
        operands_of(g, members, kMaxFusedImmediates).bound.size() > kMaxFusedInputs ||
        members.size() - 1 > kMaxFusedInstructions) {
      continue;
    }
    for (int group : merged_groups) groups[static_cast<size_t>(group)].clear();
    for (graph::NodeId id : members) group_of[static_cast<size_t>(id)] = static_cast<int>(groups.size());
    groups.push_back(std::move(members));
  }
  // A group is lowered where its root stands: by then all its inputs exist.
  for (size_t i = 0; i < n; ++i) {
    if (group_of[i] == kInRmsNorm) {
      for (const std::vector<graph::NodeId>& norm : rms_norms) {
        if (norm.back() != static_cast<graph::NodeId>(i)) continue;
        LoweringUnit unit{norm};
        unit.rms_norm = true;
        units.push_back(std::move(unit));
      }
    } else if (group_of[i] < 0) {
      units.push_back(LoweringUnit{{static_cast<graph::NodeId>(i)}});
    } else if (groups[static_cast<size_t>(group_of[i])].back() == static_cast<graph::NodeId>(i)) {
      units.push_back(LoweringUnit{groups[static_cast<size_t>(group_of[i])]});
    }
  }
  // Epilogues: a chain that alone reads a GEMM op's output, of its shape,
  // takes the GEMM into its unit (lowered where the chain stands: the GEMM's
  // inputs exist by then, and nothing else reads its output).
  std::vector<int> unit_of(n, -1);
  for (size_t u = 0; u < units.size(); ++u) {
    for (graph::NodeId id : units[u].nodes) unit_of[static_cast<size_t>(id)] = static_cast<int>(u);
  }
  std::vector<bool> absorbed(units.size(), false);
  for (size_t u = 0; u < units.size(); ++u) {
    LoweringUnit& chain = units[u];
    if (chain.rms_norm || chain.nodes.size() > GemmEpilogue::kMaxInstructions ||
        !fusable(g, g.node(chain.nodes.back())) || !one_element_type(g, chain.nodes)) {
      continue;
    }
    const graph::Value& out = g.value(g.node(chain.nodes.back()).outputs[0]);
    auto read_only_by = [&](graph::ValueId v, int unit) {
      const auto& readers = consumers[static_cast<size_t>(v)];
      return !graph_outputs.count(v) && std::all_of(readers.begin(), readers.end(), [&](graph::NodeId c) {
        return unit_of[static_cast<size_t>(c)] == unit;
      });
    };
    for (graph::ValueId e : externals_of(g, chain.nodes)) {
      graph::NodeId p = g.value(e).producer;
      if (p < 0 || g.value(e).shape != out.shape || g.value(e).dtype != out.dtype ||
          !read_only_by(e, static_cast<int>(u))) {
        continue;
      }
      // A matmul or linear result through views that keep its memory order
      // and last axis (a transformer's [tokens, d] -> [batch, seq, d], or
      // torchvision's [seq, 1, d] -> [1, seq, d]) is the same bytes with the
      // same columns: the chain folds through them, and they join the unit
      // (they stay views of the GEMM's output where the chain runs on its own).
      std::vector<graph::NodeId> views;
      bool viewed = true;
      while (keeps_memory_order(g, g.node(p)) && g.node(p).inputs.size() == 1 && g.node(p).inputs[0] >= 0) {
        const graph::Value& before = g.value(g.node(p).inputs[0]);
        const graph::NodeId q = before.producer;
        const int pu = unit_of[static_cast<size_t>(p)];
        if (q < 0 || before.shape.empty() || before.shape.back() != out.shape.back() ||
            units[static_cast<size_t>(pu)].nodes.size() != 1 || absorbed[static_cast<size_t>(pu)] ||
            !read_only_by(g.node(p).inputs[0], pu)) {
          viewed = false;
          break;
        }
        views.insert(views.begin(), p);
        p = q;
      }
      if (!viewed || (!views.empty() && !stores_through_gemm(g.node(p).op, true))) continue;
      const graph::Node& gemm = g.node(p);
      const int pu = unit_of[static_cast<size_t>(p)];
      if (!stores_through_gemm(gemm.op, false) || units[static_cast<size_t>(pu)].nodes.size() != 1 ||
          absorbed[static_cast<size_t>(pu)]) {
        continue;
      }
      absorbed[static_cast<size_t>(pu)] = true;
      for (graph::NodeId view : views) absorbed[static_cast<size_t>(unit_of[static_cast<size_t>(view)])] = true;
      chain.nodes.insert(chain.nodes.begin(), views.begin(), views.end());
      chain.nodes.insert(chain.nodes.begin(), p);
      chain.gemm_epilogue = true;
      break;
    }
    if (!chain.gemm_epilogue) {
      join_channels_first(g, units, u, unit_of, absorbed, [&](graph::ValueId v, const std::vector<graph::NodeId>& in) {
        const auto& readers = consumers[static_cast<size_t>(v)];
        return !graph_outputs.count(v) && std::all_of(readers.begin(), readers.end(), [&](graph::NodeId c) {
          return std::find(in.begin(), in.end(), c) != in.end();
        });
      });
    }
  }
  // Requantization: a rescale that alone reads an int8 GEMM's i32 sums takes
  // the GEMM into its unit, to run in its store where the GEMM kernel can;
  // likewise through the add of a bias along matmul_int's columns between
  // them (a quantized linear).
  auto sole_reader = [&](graph::ValueId v) {
    return v >= 0 && !graph_outputs.count(v) && consumers[static_cast<size_t>(v)].size() == 1;
  };
  auto lone = [&](graph::NodeId id) {
    const int at = unit_of[static_cast<size_t>(id)];
    return !absorbed[static_cast<size_t>(at)] && units[static_cast<size_t>(at)].nodes.size() == 1;
  };
  for (size_t u = 0; u < units.size(); ++u) {
    LoweringUnit& unit = units[u];
    if (unit.nodes.size() != 1 || g.node(unit.nodes[0]).op != "rescale") continue;
    const graph::ValueId sums = g.node(unit.nodes[0]).inputs[0];
    graph::NodeId p = sums < 0 ? graph::kNone : g.value(sums).producer;
    if (p < 0 || !sole_reader(sums) || !lone(p)) continue;
    graph::NodeId bias_add = graph::kNone;
    if (g.node(p).op == "add" && g.node(p).inputs.size() == 2) {
      for (size_t side = 0; side < 2 && bias_add == graph::kNone; ++side) {
        const graph::ValueId product = g.node(p).inputs[side];
        const graph::NodeId q = g.value(product).producer;
        if (q >= 0 && g.node(q).op == "matmul_int" && sole_reader(product) && lone(q) &&
            int_column_bias(g, g.node(p).inputs[1 - side], g.value(product).shape)) {
          bias_add = p;
          p = q;
        }
      }
    }
    if (g.node(p).op != "conv2d_int" && g.node(p).op != "matmul_int") continue;
    absorbed[static_cast<size_t>(unit_of[static_cast<size_t>(p)])] = true;
    if (bias_add != graph::kNone) {
      absorbed[static_cast<size_t>(unit_of[static_cast<size_t>(bias_add)])] = true;
      unit.nodes.insert(unit.nodes.begin(), bias_add);
      unit.int_bias = true;
    }
    unit.nodes.insert(unit.nodes.begin(), p);
    unit.int_rescale = true;
  }
  // a16w8's convolutions (i16 input, i64 sums) rescale twice (to i32
  // exactly, then to i16) and clamp the result (a ReLU, the output's
  // bounds): each follower, a lone `op` node alone reading the unit's last
  // result, takes the unit into its own, so that the join applies them all.
  auto absorb_a16w8_followers = [&](const char* op, bool twice) {
    for (size_t u = 0; u < units.size(); ++u) {
      LoweringUnit& follower = units[u];
      if (absorbed[u] || follower.nodes.size() != 1 || g.node(follower.nodes[0]).op != op) continue;
      const graph::ValueId in = g.node(follower.nodes[0]).inputs[0];
      const graph::NodeId last = in < 0 ? graph::kNone : g.value(in).producer;
      if (last < 0 || !sole_reader(in)) continue;
      const int at = unit_of[static_cast<size_t>(last)];
      LoweringUnit& unit = units[static_cast<size_t>(at)];
      // Twice: after the first rescale alone; the clamp: after either, on i16 values.
      const bool fits = twice ? unit.nodes.size() == 2 : g.value(in).dtype == graph::DType::kI16;
      if (absorbed[static_cast<size_t>(at)] || !unit.int_rescale || unit.int_bias || unit.int_residual ||
          unit.int_clamp_after || unit.nodes.back() != last || !fits) {
        continue;
      }
      const graph::Node& conv = g.node(unit.nodes[0]);
      if (conv.op != "conv2d_int" || g.value(conv.inputs[0]).dtype != graph::DType::kI16) continue;
      absorbed[static_cast<size_t>(at)] = true;
      follower.nodes.insert(follower.nodes.begin(), unit.nodes.begin(), unit.nodes.end());
      follower.int_rescale = true;
      follower.int_rescale_twice = twice || unit.int_rescale_twice;
      follower.int_clamp_after = !twice;
    }
  };
  absorb_a16w8_followers("rescale", true);
  absorb_a16w8_followers("clamp", false);
  // A residual block's int8 add after such a unit (its i8 result and the
  // skip connection's each rescaled to i32, added, the sum rescaled to i8,
  // each rescale scaling the whole tensor): the rescale ending it takes the
  // unit in, with the add and both rescales before it, all read only there.
  auto only_read_by = [&](graph::ValueId v, graph::NodeId reader) {
    const auto& readers = consumers[static_cast<size_t>(v)];
    return v >= 0 && !graph_outputs.count(v) && readers.size() == 1 && readers[0] == reader;
  };
  auto whole_tensor_rescale = [&](graph::NodeId id, graph::DType in, graph::DType out) {
    const graph::Node& r = g.node(id);
    return r.op == "rescale" && g.value(r.inputs[0]).dtype == in && g.value(r.outputs[0]).dtype == out &&
           graph::shape_numel(g.value(r.inputs[1]).shape) == 1 && graph::shape_numel(g.value(r.inputs[2]).shape) == 1;
  };
  for (size_t u = 0; u < units.size(); ++u) {
    LoweringUnit& end = units[u];
    if (absorbed[u] || end.nodes.size() != 1 ||
        !whole_tensor_rescale(end.nodes[0], graph::DType::kI32, graph::DType::kI8)) {
      continue;
    }
    const graph::NodeId add = g.value(g.node(end.nodes[0]).inputs[0]).producer;
    if (add < 0 || g.node(add).op != "add" || g.node(add).inputs.size() != 2 || !lone(add) ||
        !only_read_by(g.node(add).outputs[0], end.nodes[0])) {
      continue;
    }
    for (size_t side = 0; side < 2; ++side) {
      const graph::NodeId ra = g.value(g.node(add).inputs[side]).producer;
      const graph::NodeId rb = g.value(g.node(add).inputs[1 - side]).producer;
      if (ra < 0 || rb < 0 || ra == rb || !lone(ra) || !lone(rb) ||
          !whole_tensor_rescale(ra, graph::DType::kI8, graph::DType::kI32) ||
          !whole_tensor_rescale(rb, graph::DType::kI8, graph::DType::kI32) ||
          !only_read_by(g.node(ra).outputs[0], add) || !only_read_by(g.node(rb).outputs[0], add) ||
          g.value(g.node(rb).inputs[0]).shape != g.value(g.node(end.nodes[0]).outputs[0]).shape) {
        continue;
      }
      const graph::NodeId rq = g.value(g.node(ra).inputs[0]).producer;
      if (rq < 0) continue;
      const int gu = unit_of[static_cast<size_t>(rq)];
      LoweringUnit& gemm = units[static_cast<size_t>(gu)];
      if (absorbed[static_cast<size_t>(gu)] || !gemm.int_rescale || gemm.int_residual ||
          !only_read_by(g.node(rq).outputs[0], ra)) {
        continue;
      }
      std::vector<graph::NodeId> nodes = gemm.nodes;
      nodes.insert(nodes.end(), {ra, rb, add, end.nodes[0]});
      for (graph::NodeId id : {ra, rb, add}) absorbed[static_cast<size_t>(unit_of[static_cast<size_t>(id)])] = true;
      absorbed[static_cast<size_t>(gu)] = true;
      end.nodes = std::move(nodes);
      end.int_rescale = true;
      end.int_bias = gemm.int_bias;
      end.int_residual = true;
      break;
    }
  }
  // A layer norm's chains: the elementwise unit that alone makes its x and
  // the one that alone reads its result (a quantized model's dequantize and
  // quantize around it) join its unit, to run as the row kernel loads and
  // stores (norm_chains). Only units left as they are: a chain already in a
  // GEMM's store stays there.
  auto plain_chain = [&](int at) -> const std::vector<graph::NodeId>* {
    const LoweringUnit& c = units[static_cast<size_t>(at)];
    const bool lone = c.nodes.size() == 1 && c.movement_chain < 0 && !c.int_rescale;
    if (absorbed[static_cast<size_t>(at)] || !(c.fused() || lone)) return nullptr;
    return &c.nodes;
  };
  for (size_t u = 0; u < units.size(); ++u) {
    LoweringUnit& norm = units[u];
    if (absorbed[u] || norm.nodes.size() != 1 || norm.movement_chain >= 0) continue;
    const graph::Node& ln = g.node(norm.nodes[0]);
    if (ln.op != "layer_norm" || ln.inputs.empty() || ln.inputs[0] < 0 ||
        g.value(ln.inputs[0]).dtype != graph::DType::kF32) {
      continue;
    }
    std::vector<graph::NodeId> before, after;
    std::vector<int> taken;
    const graph::ValueId x = ln.inputs[0];
    const graph::NodeId p = g.value(x).producer;
    if (p >= 0 && sole_reader(x)) {
      const std::vector<graph::NodeId>* chain = plain_chain(unit_of[static_cast<size_t>(p)]);
      if (chain && chain->back() == p && norm_chain_fits(g, *chain, graph::kNone)) {
        before = *chain;
        taken.push_back(unit_of[static_cast<size_t>(p)]);
      }
    }
    const graph::ValueId y = ln.outputs[0];
    if (sole_reader(y)) {
      const int at = unit_of[static_cast<size_t>(consumers[static_cast<size_t>(y)][0])];
      const std::vector<graph::NodeId>* chain = plain_chain(at);
      if (chain && norm_chain_fits(g, *chain, y)) {
        // An integer y is stored a word at a time: its rows must be whole words.
        const graph::DType out = g.value(g.node(chain->back()).outputs[0]).dtype;
        const Result<NormRows> rows = layer_norm_rows(g, ln);
        if (rows.ok() && (!int_edge(out) || rows->size % (4 / graph::dtype_size(out)) == 0)) {
          after = *chain;
          taken.push_back(at);
        }
      }
    }
    auto immediates = [&](const std::vector<graph::NodeId>& c) {
      return c.empty() ? size_t{0} : operands_of(g, c, kNormChainMaxImmediates).immediates.size();
    };
    if (taken.empty() || immediates(before) + immediates(after) > kNormChainMaxImmediates) continue;
    for (int at : taken) absorbed[static_cast<size_t>(at)] = true;
    norm.norm_before = before.size();
    norm.nodes.insert(norm.nodes.begin(), before.begin(), before.end());
    norm.nodes.insert(norm.nodes.end(), after.begin(), after.end());
    norm.norm_chains = true;
  }
  // A layer norm over the last axis of a GEMM unit's stored result (a
  // transformer's projection with the residual add in its store, then the
  // next block's norm) joins that unit: where the GEMM splits K, its
  // reduction normalises each row as it stores it (norm_after). The norm's
  // weight and bias must exist before the GEMM unit runs: constants or
  // region inputs.
  for (size_t u = 0; u < units.size(); ++u) {
    LoweringUnit& norm = units[u];
    if (absorbed[u] || norm.nodes.size() != 1 || norm.movement_chain >= 0) continue;
    const graph::Node& ln = g.node(norm.nodes[0]);
    if (ln.op != "layer_norm" || ln.inputs.empty() || ln.inputs[0] < 0 || !is_float(g.value(ln.inputs[0]).dtype)) {
      continue;
    }
    Result<graph::AttrMap> attrs = graph::resolve_attrs(ln);
    if (!attrs.ok() || graph::attr_int(*attrs, "normalized_ndim") != 1) continue;
    bool inputs_ready = true;
    for (size_t i = 1; i < ln.inputs.size(); ++i) {
      inputs_ready = inputs_ready && (ln.inputs[i] < 0 || g.value(ln.inputs[i]).producer < 0);
    }
    const graph::NodeId p = g.value(ln.inputs[0]).producer;
    if (!inputs_ready || p < 0 || graph_outputs.count(ln.inputs[0])) continue;
    const int gu = unit_of[static_cast<size_t>(p)];
    LoweringUnit& gemm = units[static_cast<size_t>(gu)];
    if (absorbed[static_cast<size_t>(gu)] || !gemm.gemm_epilogue || gemm.norm_after || gemm.nodes.back() != p ||
        g.node(gemm.nodes[0]).op == "conv2d") {
      continue;
    }
    gemm.nodes.push_back(norm.nodes[0]);
    gemm.norm_after = true;
    absorbed[u] = true;
  }
  std::vector<LoweringUnit> kept;
  for (size_t u = 0; u < units.size(); ++u) {
    if (!absorbed[u]) kept.push_back(std::move(units[u]));
  }
  return kept;
}

Status lower_fused_group(LoweringContext& lc, const LoweringUnit& unit) {
  const graph::Graph& g = lc.graph;
  const graph::Node& last = g.node(unit.nodes.back());
  const TensorRef& y = lc.tensor(last.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, last, y.dtype));
  // A unit ending in a concat computes its chains over one part's shape.
  const std::optional<size_t> concat_axis =
      unit.nodes.size() > 1 ? fusable_concat_axis(g, last) : std::optional<size_t>{};
  const graph::Shape& space = concat_axis ? lc.tensor(last.inputs[0]).shape : y.shape;
  const size_t instructions = unit.nodes.size() - (concat_axis ? 1 : 0);
  const ChainOperands operands = operands_of(g, unit.nodes, kMaxFusedImmediates);
  const std::vector<graph::ValueId>& externals = operands.bound;
  std::map<graph::ValueId, int> reg;
  for (size_t i = 0; i < externals.size(); ++i) reg[externals[i]] = static_cast<int>(i);
  for (size_t j = 0; j < operands.immediates.size(); ++j) {
    reg[operands.immediates[j]] = static_cast<int>(kMaxFusedInputs + j);
  }
  std::vector<int32_t> spec = {static_cast<int32_t>(externals.size()), static_cast<int32_t>(instructions)};
  const std::vector<int32_t> words =
      chain_instructions(g, std::vector<graph::NodeId>(unit.nodes.begin(), unit.nodes.begin() + static_cast<long>(instructions)),
                         reg, static_cast<int>(kMaxFusedInputs + kMaxFusedImmediates));
  spec.insert(spec.end(), words.begin(), words.end());
  spec.resize(2 + kMaxFusedInstructions, 0);
  int contiguous = 0;  // read at the output's index: never under a concat (the index is the whole output's)
  for (size_t i = 0; i < externals.size() && !concat_axis; ++i) {
    if (lc.tensor(externals[i]).shape == y.shape && !lc.has_view(externals[i])) contiguous |= 1 << i;
  }
  spec.push_back(contiguous);
  for (size_t j = 0; j < kMaxFusedImmediates; ++j) {
    spec.push_back(j < operands.immediate_values.size() ? float_bits(operands.immediate_values[j]) : 0);
  }

  uint32_t count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  std::vector<int32_t> offsets(kMaxFusedInputs, 0);  // OFFSET0..3: elements into the bound range
  std::vector<Binding> bindings;
  std::vector<std::vector<int64_t>> strides(externals.size());  // per input, over y's dims
  for (size_t i = 0; i < kMaxFusedInputs; ++i) {
    if (i >= externals.size()) {  // unused: any valid buffer
      bindings.push_back(bindings.empty() ? Binding{y.range, false} : bindings[0]);
      continue;
    }
    const graph::ValueId e = externals[i];
    const graph::Shape& in = lc.tensor(e).shape;
    if (!lc.has_view(e)) {
      for (uint32_t st : broadcast_strides(in, space)) strides[i].push_back(st);
      bindings.push_back(Binding{lc.tensor(e).range, false});
      continue;
    }
    // The view's strides over the input's dims, right-aligned to the
    // output's; 0 where the input broadcasts.
    const StridedView view = lc.view_of(e);
    strides[i].assign(space.size(), 0);
    for (size_t k = 0; k < in.size(); ++k) {
      if (in[k] != 1) strides[i][space.size() - in.size() + k] = view.strides[k];
    }
    // The binding starts at the view's offset rounded down to the
    // alignment; the kernel adds the few elements left.
    const VkDeviceSize element = graph::dtype_size(lc.tensor(e).dtype);
    const VkDeviceSize align =
        std::max<VkDeviceSize>(lc.ctx.properties().limits.minStorageBufferOffsetAlignment, element);
    BufferRange root = lc.tensor(view.root).range;
    const VkDeviceSize bytes = static_cast<VkDeviceSize>(view.offset) * element;
    const VkDeviceSize skipped = bytes / align * align;
    root.offset += skipped;
    root.size -= skipped;
    offsets[i] = static_cast<int32_t>((bytes - skipped) / element);
    bindings.push_back(Binding{root, false});
  }
  // The fewest dims that describe the strided reads: unit dims dropped, and
  // neighbours merged where every strided input walks them as one (the
  // kernel divides once per dim, per element). The concat's axis stays a dim
  // of its own, its coordinate the kernel's to fold. An input read at the
  // output's index walks nothing: its steps stay 0.
  std::vector<std::vector<int64_t>> strided;
  for (size_t i = 0; i < externals.size(); ++i) {
    if (!(contiguous & (1 << i))) strided.push_back(strides[i]);
  }
  MergedWalk walk = merge_walk(y.shape, strided, y.shape.size(), concat_axis);
  std::vector<int64_t>& dims = walk.dims;  // outermost first
  if (dims.empty()) dims.push_back(1);
  std::vector<std::vector<int64_t>> walks(externals.size());  // inputs' strides over `dims`
  for (size_t i = 0, j = 0; i < externals.size(); ++i) {
    walks[i] = contiguous & (1 << i) || walk.steps[j].empty() ? std::vector<int64_t>(dims.size(), 0) : walk.steps[j];
    if (!(contiguous & (1 << i))) ++j;
  }
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(dims.size()));
  push.u32_array(to_u32(dims), kMaxRank);
  for (size_t i = 0; i < kMaxFusedInputs; ++i) {
    for (size_t d = 0; d < kMaxRank; ++d) {
      push.u32(i < walks.size() && d < walks[i].size() ? static_cast<uint32_t>(walks[i][d]) : 0u);
    }
  }
  spec.insert(spec.end(), offsets.begin(), offsets.end());
  // CONCAT_DIM, CONCAT_PART, CONCAT_A, CONCAT_B.
  if (concat_axis) {
    spec.push_back(static_cast<int32_t>(*walk.apart_at));
    spec.push_back(static_cast<int32_t>(space[*concat_axis]));
    spec.push_back(reg.at(last.inputs[0]));
    spec.push_back(reg.at(last.inputs[1]));
  } else {
    spec.insert(spec.end(), {-1, 1, 0, 0});
  }
  // INT_INPUTS, OUT_BYTES: an f32 chain's i8/i16 edges.
  int32_t int_inputs = 0;
  for (size_t i = 0; i < externals.size(); ++i) {
    const graph::DType t = lc.tensor(externals[i]).dtype;
    if (int_edge(t)) int_inputs |= static_cast<int32_t>(graph::dtype_size(t)) << (4 * i);
  }
  spec.push_back(int_inputs);
  spec.push_back(int_edge(y.dtype) ? static_cast<int32_t>(graph::dtype_size(y.dtype)) : 0);
  bindings.push_back(Binding{y.range, true});
  KernelKey key{std::string("fused_elementwise") + float_suffix(chain_float_type(g, unit.nodes)), spec,
                static_cast<uint32_t>(bindings.size()), push.size()};
  const uint32_t per_thread = op_codes::kLimitFusedPerThread;
  return add_dispatch(lc, unit.nodes, key, std::move(bindings), push, (count + per_thread - 1) / per_thread);
}

graph::NodeId rms_norm_weight_node(const graph::Graph& g, const LoweringUnit& unit) {
  const graph::Node& last = g.node(unit.nodes.back());
  if (last.op != "mul") return graph::kNone;
  for (graph::ValueId in : last.inputs) {
    if (in >= 0 && g.value(in).producer >= 0 && g.node(g.value(in).producer).op == "rsqrt") return graph::kNone;
  }
  return unit.nodes.back();  // not the product with rsqrt: the weight's
}

Status lower_rms_norm(LoweringContext& lc, const LoweringUnit& unit) {
  const graph::Graph& g = lc.graph;
  // In graph order: [cast,] x * x, mean, + eps, rsqrt, * x, [cast,] [* w];
  // the mean and the eps add are the unit's only nodes of their ops.
  auto only = [&](const char* op) -> const graph::Node& {
    return g.node(*std::find_if(unit.nodes.begin(), unit.nodes.end(),
                                [&](graph::NodeId id) { return g.node(id).op == op; }));
  };
  const graph::Node& first = g.node(unit.nodes[0]);
  const graph::Node& mean = only("reduce_mean");
  const graph::Node& add = only("add");
  const graph::Node& last = g.node(unit.nodes.back());
  RowNorm norm;
  norm.rms = true;
  norm.x = &lc.tensor(first.inputs[0]);
  norm.y = &lc.tensor(last.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, last, norm.y->dtype));
  norm.size = static_cast<uint64_t>(norm.x->shape.back());
  norm.rows = norm.size ? static_cast<uint64_t>(graph::shape_numel(norm.x->shape)) / norm.size : 0;
  const graph::ValueId mean_value = mean.outputs[0];
  norm.eps = *immediate_value(g, add.inputs[0] == mean_value ? add.inputs[1] : add.inputs[0]);
  if (rms_norm_weight_node(g, unit) != graph::kNone) {  // times a weight along the last axis, maybe a view (an expanded [1])
    const graph::ValueId scaled = g.node(unit.nodes[unit.nodes.size() - 2]).outputs[0];
    const graph::ValueId w = last.inputs[0] == scaled ? last.inputs[1] : last.inputs[0];
    const StridedView view = lc.view_of(w);
    const bool one = g.value(w).shape.back() == 1;
    norm.weight = lc.tensor(view.root).range;
    norm.weight_offset = static_cast<uint32_t>(view.offset);
    norm.weight_stride = one ? 0u : static_cast<uint32_t>(view.strides.back());
  }
  if (norm.rows == 0) return Status::Ok();
  return add_row_norm(lc, unit.nodes, norm);
}

Status lower_norm_with_chains(LoweringContext& lc, const LoweringUnit& unit) {
  const graph::Graph& g = lc.graph;
  const auto split = unit.nodes.begin() + static_cast<long>(unit.norm_before);
  const std::vector<graph::NodeId> before(unit.nodes.begin(), split), after(split + 1, unit.nodes.end());
  const graph::Node& ln = g.node(*split);
  GPUU_ASSIGN_OR_RETURN(RowNorm norm, layer_norm_of(lc, ln));
  // Registers: 0 the value, 1..4 both chains' immediates, 5 + k results.
  auto encode = [&](const std::vector<graph::NodeId>& chain, const ChainOperands& operands, graph::ValueId value) {
    std::map<graph::ValueId, int> reg = {{value, 0}};
    for (size_t j = 0; j < operands.immediates.size(); ++j) {
      reg[operands.immediates[j]] = static_cast<int>(1 + norm.immediates.size());
      norm.immediates.push_back(operands.immediate_values[j]);
    }
    return chain_instructions(g, chain, reg, static_cast<int>(1 + kNormChainMaxImmediates));
  };
  if (!before.empty()) {  // x is the chain's one tensor, read as itself (region_plan.cpp)
    const ChainOperands operands = operands_of(g, before, kNormChainMaxImmediates);
    norm.x = &lc.tensor(operands.bound[0]);
    norm.x_layout.reset();
    norm.before = encode(before, operands, operands.bound[0]);
  }
  if (!after.empty()) {
    norm.y = &lc.tensor(g.node(after.back()).outputs[0]);
    norm.after = encode(after, operands_of(g, after, kNormChainMaxImmediates), ln.outputs[0]);
  }
  if (norm.rows == 0) return Status::Ok();
  return add_row_norm(lc, unit.nodes, norm);
}

bool takes_elementwise_view(const graph::Graph& g, const graph::Node& n, size_t slot, const StridedView& view) {
  // A comparison alone writes bool, which the fused kernel does not store: it and its where read as themselves.
  if (comparison(n) || n.op == "where") return false;
  if (!(fusable(g, n) || fusable_concat_axis(g, n)) || slot >= n.inputs.size()) return false;
  return g.value(n.inputs[slot]).shape.size() <= g.value(n.outputs[0]).shape.size() && view_in_32_bits(view);
}

bool reads_a_view(const LoweringContext& lc, const graph::Node& node) {
  return std::any_of(node.inputs.begin(), node.inputs.end(), [&](graph::ValueId in) { return lc.has_view(in); });
}

namespace {

// The chain `nodes` as the epilogue of `gemm`, or nullopt where an input is
// read in a way the store cannot.
std::optional<GemmEpilogue> make_epilogue(const LoweringContext& lc, const graph::Node& gemm, graph::ValueId result,
                                          const std::vector<graph::NodeId>& nodes) {
  std::optional<EpiloguePlan> plan = plan_epilogue(lc.graph, gemm, result, nodes);
  if (!plan) return std::nullopt;
  GemmEpilogue epi;
  epi.output = &lc.tensor(lc.graph.node(nodes.back()).outputs[0]);
  for (graph::ValueId e : plan->inputs) epi.inputs.push_back(&lc.tensor(e));
  epi.modes = std::move(plan->modes);
  epi.instructions = std::move(plan->instructions);
  epi.immediates = std::move(plan->immediates);
  epi.plane = plan->plane;
  epi.label = std::move(plan->label);
  epi.ops = std::move(plan->ops);
  return epi;
}

}  // namespace

Status lower_int_gemm_with_rescale(LoweringContext& lc, const LoweringUnit& unit) {
  // nodes: the GEMM, the bias add (int_bias), the rescale, then the residual's four (int_residual) or the
  // second rescale (int_rescale_twice) and the clamp (int_clamp_after).
  const graph::Graph& g = lc.graph;
  const size_t rescale = unit.int_bias ? 2 : 1;
  IntResidual residual;
  if (unit.int_residual) {
    residual = {&g.node(unit.nodes[rescale + 1]), &g.node(unit.nodes[rescale + 2]), &g.node(unit.nodes[rescale + 3]),
                &g.node(unit.nodes[rescale + 4])};
  }
  lc.int_bias_add = unit.int_bias ? &g.node(unit.nodes[1]) : nullptr;
  lc.int_rescale = &g.node(unit.nodes[rescale]);
  lc.int_rescale_next = unit.int_rescale_twice ? &g.node(unit.nodes[rescale + 1]) : nullptr;
  lc.int_clamp_after = unit.int_clamp_after ? &g.node(unit.nodes.back()) : nullptr;
  lc.int_residual = unit.int_residual ? &residual : nullptr;
  lc.int_rescale_taken = false;
  lc.int_rescale_next_taken = false;
  lc.int_clamp_after_taken = false;
  lc.int_residual_taken = false;
  const graph::Node& gemm = g.node(unit.nodes[0]);
  Status lowered = find_op_kernel(gemm.op)->lower(lc, gemm);
  const bool rescaled = lc.int_rescale_taken, added = lc.int_residual_taken;
  const bool rescaled_twice = rescaled && lc.int_rescale_next_taken;
  const bool clamped = rescaled && lc.int_clamp_after_taken;
  lc.int_bias_add = nullptr;
  lc.int_rescale = nullptr;
  lc.int_rescale_next = nullptr;
  lc.int_clamp_after = nullptr;
  lc.int_residual = nullptr;
  lc.int_rescale_taken = false;
  lc.int_rescale_next_taken = false;
  lc.int_clamp_after_taken = false;
  lc.int_residual_taken = false;
  GPUU_RETURN_IF_ERROR(lowered);
  // What the GEMM's store did not take (it takes the bias with the rescale) runs after it, node by node.
  const size_t done = added || clamped ? unit.nodes.size()
                      : rescaled_twice ? rescale + 2
                      : rescaled       ? rescale + 1
                                       : 1;
  for (size_t i = done; i < unit.nodes.size(); ++i) {
    const graph::Node& node = g.node(unit.nodes[i]);
    GPUU_RETURN_IF_ERROR(find_op_kernel(node.op)->lower(lc, node));
  }
  return Status::Ok();
}

namespace {

Status lower_gemm_and_chain(LoweringContext& lc, const LoweringUnit& unit) {
  const graph::Graph& g = lc.graph;
  const graph::Node& gemm = g.node(unit.nodes[0]);
  // The chain reads the GEMM's output, or views of it that keep its memory
  // order (plan_lowering): the same memory, lowered to nothing.
  size_t views = 0;
  while (1 + views < unit.nodes.size() && keeps_memory_order(g, g.node(unit.nodes[1 + views]))) ++views;
  const graph::ValueId result = g.node(unit.nodes[views]).outputs[0];
  const LoweringUnit chain{std::vector<graph::NodeId>(unit.nodes.begin() + 1 + static_cast<long>(views), unit.nodes.end())};
  std::optional<GemmEpilogue> epi = make_epilogue(lc, gemm, result, chain.nodes);
  lc.epilogue = epi ? &*epi : nullptr;
  lc.epilogue_taken = false;
  Status lowered = find_op_kernel(gemm.op)->lower(lc, gemm);
  const bool taken = lc.epilogue_taken;
  lc.epilogue = nullptr;
  lc.epilogue_taken = false;
  GPUU_RETURN_IF_ERROR(lowered);
  if (taken) return Status::Ok();
  if (epi && epi->plane) {
    // plan_lowering joined the transpose only for a chain the store runs,
    // and every GEMM kernel stores through the epilogue: nothing but an
    // empty output leaves it here, and then there is nothing to write.
    if (graph::shape_numel(epi->output->shape) == 0) return Status::Ok();
    return err(StatusCode::kInternal, "the GEMM ", gemm.name, " did not store its channels-first epilogue ", epi->label);
  }
  // A GEMM op that wrote nothing (an empty output), or a chain the store
  // cannot read: the chain on its own, after it (and the views, where one is
  // not the same memory as its input).
  for (size_t i = 1; i <= views; ++i) {
    const graph::Node& view = g.node(unit.nodes[i]);
    const BufferRange& from = lc.tensor(view.inputs[0]).range;
    const BufferRange& to = lc.tensor(view.outputs[0]).range;
    if (from.buffer != to.buffer || from.offset != to.offset) {
      GPUU_RETURN_IF_ERROR(find_op_kernel(view.op)->lower(lc, view));
    }
  }
  if (chain.fused()) return lower_fused_group(lc, chain);
  const graph::Node& only = g.node(chain.nodes[0]);
  return find_op_kernel(only.op)->lower(lc, only);
}

}  // namespace

Status lower_gemm_with_epilogue(LoweringContext& lc, const LoweringUnit& unit) {
  if (!unit.norm_after) return lower_gemm_and_chain(lc, unit);
  const graph::Node& ln = lc.graph.node(unit.nodes.back());
  GPUU_ASSIGN_OR_RETURN(const RowNorm norm, layer_norm_of(lc, ln));
  LoweringUnit gemm = unit;
  gemm.nodes.pop_back();
  gemm.norm_after = false;
  lc.norm_after = &norm;
  lc.norm_after_node = unit.nodes.back();
  lc.norm_after_taken = false;
  Status lowered = lower_gemm_and_chain(lc, gemm);
  const bool taken = lc.norm_after_taken;
  lc.norm_after = nullptr;
  lc.norm_after_node = graph::kNone;
  lc.norm_after_taken = false;
  GPUU_RETURN_IF_ERROR(lowered);
  return taken ? Status::Ok() : add_row_norm(lc, {unit.nodes.back()}, norm);
}

}  // namespace gpuu::kernels

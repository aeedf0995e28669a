// Planning a region's lowering (views, movement chains, reshape aliases,
// units) and the in-place rule for region outputs written over inputs.
#include "kernels/region_plan.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "graph/index_math.h"
#include "graph/op_registry.h"
#include "kernels/attention.h"
#include "kernels/kernel_graph.h"

namespace gpuu::kernels {

graph::ValueId RegionPlan::root_of(graph::ValueId v) const {
  while (alias[static_cast<size_t>(v)] != v) v = alias[static_cast<size_t>(v)];
  return v;
}

bool concat_part_in_place(const graph::Graph& g, const graph::Node& concat, size_t k, graph::ValueId over) {
  if (concat.op != "concat" || k >= concat.inputs.size() || concat.outputs.size() != 1 || over < 0) return false;
  const graph::Value& out = g.value(concat.outputs[0]);
  const graph::Value& whole = g.value(over);
  const graph::NodeId producer = g.value(concat.inputs[k]).producer;
  if (producer < 0 || out.shape != whole.shape || out.dtype != whole.dtype) return false;
  const graph::Node& slice = g.node(producer);
  if (slice.op != "slice" || slice.inputs.empty() || slice.inputs[0] != over) return false;
  Result<graph::AttrMap> concat_attrs = graph::resolve_attrs(concat);
  Result<graph::AttrMap> slice_attrs = graph::resolve_attrs(slice);
  if (!concat_attrs.ok() || !slice_attrs.ok()) return false;
  const size_t axis =
      static_cast<size_t>(graph::normalize_axis(graph::attr_int(*concat_attrs, "axis"), out.shape.size()));
  int64_t start = 0;  // where input k begins along the axis
  for (size_t i = 0; i < k; ++i) start += g.value(concat.inputs[i]).shape[axis];
  // Element idx of the slice comes from base + sum idx[d] * strides[d] of
  // `over`, and goes to idx + start along the axis of the output: the same
  // place where the strides are the row-major ones and the base is `start`'s.
  const graph::Shape& part = g.value(concat.inputs[k]).shape;
  graph::SliceReads reads = graph::slice_reads(*slice_attrs, whole.shape, part);
  const std::vector<int64_t> row_major = graph::row_major_strides(whole.shape);
  if (graph::shape_numel(part) == 0) return true;
  if (reads.base != start * row_major[axis]) return false;
  for (size_t d = 0; d < part.size(); ++d) {
    if (part[d] > 1 && reads.strides[d] != row_major[d]) return false;
  }
  return true;
}

namespace {

// Common subexpressions: a node that repeats an earlier one (the same op and
// attributes over the same values) is not lowered; its results are read from
// the earlier one's memory. An LLM step's layers each compute their cache
// positions' wrap-around (less, add, where) again, twice (keys and values).
// Only nodes lowered alone on both sides, so the earlier result is in memory,
// and neither result a region output (each has a buffer of its own).
void share_repeated_nodes(const graph::Graph& region, RegionPlan& plan) {
  std::vector<graph::ValueId> same(region.values().size());  // a value, or the earlier value it repeats
  std::iota(same.begin(), same.end(), graph::ValueId{0});
  std::map<std::pair<std::string, std::vector<graph::ValueId>>, std::vector<graph::NodeId>> seen;
  std::vector<LoweringUnit> kept;
  for (LoweringUnit& unit : plan.units) {
    const bool alone = unit.movement_chain < 0 && !unit.gemm_epilogue && unit.nodes.size() == 1;
    const graph::Node& node = region.node(unit.nodes[0]);
    bool eligible = alone && !node.outputs.empty() && node.attr_exprs.empty() && node.op != "custom_shader";
    for (graph::ValueId out : node.outputs) eligible = eligible && !plan.placed[static_cast<size_t>(out)];
    if (!eligible) {
      kept.push_back(std::move(unit));
      continue;
    }
    std::vector<graph::ValueId> inputs = node.inputs;
    for (graph::ValueId& in : inputs) {
      if (in >= 0) in = same[static_cast<size_t>(in)];
    }
    std::vector<graph::NodeId>& earlier = seen[{node.op, inputs}];
    auto match = std::find_if(earlier.begin(), earlier.end(),
                              [&](graph::NodeId id) { return region.node(id).attrs == node.attrs; });
    if (match == earlier.end()) {
      earlier.push_back(unit.nodes[0]);
      kept.push_back(std::move(unit));
      continue;
    }
    const graph::Node& first = region.node(*match);
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      same[static_cast<size_t>(node.outputs[k])] = first.outputs[k];
      plan.alias[static_cast<size_t>(node.outputs[k])] = first.outputs[k];
    }
  }
  plan.units = std::move(kept);
}

// An attention whose result only a transpose of its heads and rows reads
// (y.transpose(1, 2) before a transformer's output projection), where that
// transpose would copy (neither skipped for a view, an alias, nor in a
// movement chain), writes the transposed layout itself: the transpose joins
// its unit.
void fold_head_transposes(const graph::Graph& region, RegionPlan& plan) {
  const std::vector<std::vector<graph::NodeId>> consumers = region.consumers();
  std::vector<int> unit_of(region.nodes().size(), -1);
  for (size_t u = 0; u < plan.units.size(); ++u) {
    if (plan.units[u].nodes.size() == 1) unit_of[static_cast<size_t>(plan.units[u].nodes[0])] = static_cast<int>(u);
  }
  std::vector<char> folded(plan.units.size(), 0);
  for (LoweringUnit& unit : plan.units) {
    if (unit.nodes.size() != 1 || unit.movement_chain >= 0) continue;
    const graph::Node& attention = region.node(unit.nodes[0]);
    if (attention.op != "scaled_dot_product_attention" || attention.outputs.size() != 1) continue;
    const auto y = static_cast<size_t>(attention.outputs[0]);
    if (plan.placed[y] || consumers[y].size() != 1 || plan.root_of(attention.outputs[0]) != attention.outputs[0]) {
      continue;
    }
    const graph::NodeId t = consumers[y][0];
    const int t_unit = unit_of[static_cast<size_t>(t)];
    if (t_unit < 0 || folded[static_cast<size_t>(t_unit)] || plan.units[static_cast<size_t>(t_unit)].movement_chain >= 0 ||
        !swaps_heads_and_rows(region, region.node(t))) {
      continue;
    }
    folded[static_cast<size_t>(t_unit)] = 1;
    unit.nodes.push_back(t);
    unit.attention_heads_inner = true;
  }
  std::vector<LoweringUnit> kept;
  for (size_t u = 0; u < plan.units.size(); ++u) {
    if (!folded[u]) kept.push_back(std::move(plan.units[u]));
  }
  plan.units = std::move(kept);
}

}  // namespace

RegionPlan plan_region(const graph::Graph& region, const KernelGraphOptions& options,
                       std::vector<graph::ValueId> written_over) {
  const size_t nv = region.values().size();
  RegionPlan plan;
  plan.written_over = std::move(written_over);
  plan.placed.assign(nv, 0);
  for (graph::ValueId v : region.inputs()) plan.placed[static_cast<size_t>(v)] = 1;
  for (graph::ValueId v : region.outputs()) plan.placed[static_cast<size_t>(v)] = 1;
  // Views: a reshape's result is its input's bytes in the same order (and a
  // transpose's, where it moves only dims of size 1), so it shares its
  // input's memory and lowers to nothing, instead of a copy. Where
  // the result is a region output and the input is made inside the region,
  // the input is made in the output's memory instead.
  plan.alias.resize(nv);
  for (size_t i = 0; i < nv; ++i) plan.alias[i] = static_cast<graph::ValueId>(i);
  std::vector<char> is_input(nv, 0);
  for (graph::ValueId in : region.inputs()) is_input[static_cast<size_t>(in)] = 1;
  // What to lower, in order; values inside fused groups never touch memory.
  plan.units = plan_lowering(region, options.fuse_elementwise, plan.written_over);
  if (options.strided_views) {
    // Elementwise ops read views through the fused kernel; a chain folded
    // into a GEMM's store reads its inputs as themselves, and without fusion
    // every elementwise op does.
    std::vector<char> as_themselves(region.nodes().size(), 0);
    for (size_t n = 0; n < region.nodes().size() && !options.fuse_elementwise; ++n) {
      const OpKernel* k = find_op_kernel(region.nodes()[n].op);
      as_themselves[n] = k && k->takes_view == &takes_elementwise_view;
    }
    for (const LoweringUnit& u : plan.units) {
      // A cast alone runs its own kernel, which reads its input as itself.
      if (u.nodes.size() == 1 && region.node(u.nodes[0]).op == "cast") as_themselves[static_cast<size_t>(u.nodes[0])] = 1;
      // A norm's chains read their tensor as themselves; with none before
      // it, the norm may read x through a view (layer_norm_takes_view).
      if (u.norm_chains) {
        for (size_t k = 0; k < u.nodes.size(); ++k) {
          if (k != u.norm_before || u.norm_before > 0) as_themselves[static_cast<size_t>(u.nodes[k])] = 1;
        }
        continue;
      }
      // An RMSNorm unit reads x as itself; its weight may be a view.
      if (!u.gemm_epilogue && !u.rms_norm) continue;
      const graph::NodeId weight = u.rms_norm ? rms_norm_weight_node(region, u) : graph::kNone;
      for (graph::NodeId id : u.nodes) as_themselves[static_cast<size_t>(id)] = id != weight;
    }
    // A concat ending a fused unit is read by the fused kernel.
    std::vector<TakesView> lowered_with(region.nodes().size(), nullptr);
    for (const LoweringUnit& u : plan.units) {
      if (u.fused() && region.node(u.nodes.back()).op == "concat") {
        lowered_with[static_cast<size_t>(u.nodes.back())] = &takes_elementwise_view;
      }
    }
    plan.views = plan_views(region, as_themselves, lowered_with);
  }
  auto skipped = [&](size_t node) { return !plan.views.skipped.empty() && plan.views.skipped[node]; };
  if (options.compose_movement) plan.chains = find_movement_chains(region);
  // A chain with a node skipped for a view, or making a view's root, is
  // lowered node by node instead: the view needs that root in memory. So is
  // a chain that keeps memory order all along: its nodes are aliases below.
  plan.chains.erase(std::remove_if(plan.chains.begin(), plan.chains.end(),
                                   [&](const MovementChain& c) {
                                     if (std::all_of(c.nodes.begin(), c.nodes.end(), [&](graph::NodeId id) {
                                           return keeps_memory_order(region, region.node(id));
                                         })) {
                                       return true;
                                     }
                                     for (graph::NodeId id : c.nodes) {
                                       if (skipped(static_cast<size_t>(id))) return true;
                                       for (const StridedView& v : plan.views.views) {
                                         if (v.root == region.node(id).outputs[0]) return true;
                                       }
                                     }
                                     return false;
                                   }),
                    plan.chains.end());
  plan.chain_of.assign(region.nodes().size(), -1);
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    for (graph::NodeId id : plan.chains[c].nodes) plan.chain_of[static_cast<size_t>(id)] = static_cast<int>(c);
  }
  std::vector<char> viewed(region.nodes().size(), 0);
  for (size_t n = 0; n < region.nodes().size(); ++n) {
    const graph::Node& node = region.nodes()[n];
    if (plan.chain_of[n] >= 0 || skipped(n) || !keeps_memory_order(region, node)) continue;
    graph::ValueId x = plan.root_of(node.inputs[0]), y = node.outputs[0];
    if (!plan.placed[static_cast<size_t>(y)]) {
      plan.alias[static_cast<size_t>(y)] = x;
    } else if (!plan.placed[static_cast<size_t>(x)] && !is_input[static_cast<size_t>(x)] &&
               region.value(x).constant < 0) {
      plan.alias[static_cast<size_t>(x)] = y;  // made straight into the output
      plan.placed[static_cast<size_t>(x)] = 1;
    } else {
      continue;  // both have memory of their own: a copy
    }
    viewed[n] = 1;
  }
  // Slices a concat writing over their source puts back where they are:
  // nothing to lower where the concat is their only reader.
  std::vector<char> dropped(region.nodes().size(), 0);
  const std::vector<std::vector<graph::NodeId>> consumers = region.consumers();
  for (const graph::Node& node : region.nodes()) {
    if (node.op != "concat" || node.outputs.size() != 1) continue;
    const graph::ValueId over = static_cast<size_t>(node.outputs[0]) < plan.written_over.size()
                                    ? plan.written_over[static_cast<size_t>(node.outputs[0])]
                                    : graph::kNone;
    if (over == graph::kNone) continue;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const graph::ValueId part = node.inputs[k];
      if (!concat_part_in_place(region, node, k, over) || plan.placed[static_cast<size_t>(part)]) continue;
      const auto slice = static_cast<size_t>(region.value(part).producer);
      if (consumers[static_cast<size_t>(part)].size() == 1 && plan.chain_of[slice] < 0 && !skipped(slice) &&
          !viewed[slice]) {
        dropped[slice] = 1;
      }
    }
  }
  plan.units.erase(std::remove_if(plan.units.begin(), plan.units.end(),
                                  [&](const LoweringUnit& u) {
                                    auto first = static_cast<size_t>(u.nodes[0]);
                                    return !u.fused() && (viewed[first] || skipped(first) || dropped[first]);
                                  }),
                   plan.units.end());
  // A movement chain is one unit where its last node stood.
  std::vector<LoweringUnit> merged;
  for (LoweringUnit& u : plan.units) {
    int c = u.fused() ? -1 : plan.chain_of[static_cast<size_t>(u.nodes[0])];
    if (c < 0) {
      merged.push_back(std::move(u));
    } else if (u.nodes[0] == plan.chains[static_cast<size_t>(c)].nodes.back()) {
      merged.push_back(LoweringUnit{plan.chains[static_cast<size_t>(c)].nodes, c});
    }
  }
  plan.units = std::move(merged);
  share_repeated_nodes(region, plan);
  fold_head_transposes(region, plan);
  return plan;
}

bool can_write_over(const graph::Graph& region, const RegionPlan& plan, graph::ValueId input, graph::ValueId output) {
  const size_t nv = region.values().size();
  if (input < 0 || output < 0 || static_cast<size_t>(input) >= nv || static_cast<size_t>(output) >= nv) return false;
  const graph::Value& in = region.value(input);
  if (in.dtype != region.value(output).dtype || in.shape != region.value(output).shape) return false;
  // The output is written by its own unit: no value is made in its memory
  // (a reshape's input made straight into it; reshapes of it, views that
  // only read it, are fine).
  for (size_t v = 0; v < nv; ++v) {
    const auto id = static_cast<graph::ValueId>(v);
    if (id != output && plan.placed[v] && plan.root_of(id) == output) return false;
  }
  if (plan.root_of(output) != output) return false;
  // Whether reading value v reads the input's memory: the input itself, a
  // reshape of it, or a strided view rooted at it.
  auto reads_input = [&](graph::ValueId v) {
    if (v < 0) return false;
    if (plan.root_of(v) == input) return true;
    const std::vector<StridedView>& views = plan.views.views;
    return !views.empty() && views[static_cast<size_t>(v)].root != graph::kNone &&
           plan.root_of(views[static_cast<size_t>(v)].root) == input;
  };
  const graph::NodeId producer = region.value(output).producer;
  size_t writer = plan.units.size();
  for (size_t u = 0; u < plan.units.size(); ++u) {
    const std::vector<graph::NodeId>& nodes = plan.units[u].nodes;
    if (std::find(nodes.begin(), nodes.end(), producer) != nodes.end()) writer = u;
  }
  if (writer == plan.units.size()) return false;
  for (size_t u = writer; u < plan.units.size(); ++u) {
    const LoweringUnit& unit = plan.units[u];
    for (graph::NodeId id : unit.nodes) {
      const graph::Node& node = region.node(id);
      for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
        if (!reads_input(node.inputs[slot])) continue;
        if (u > writer) return false;  // would read the update, not the value it replaces
        // The writing unit may read it only as itself, where its kernel allows.
        const OpKernel* kernel = find_op_kernel(node.op);
        if (node.inputs[slot] != input || unit.movement_chain >= 0 || unit.gemm_epilogue || !kernel ||
            !kernel->writes_over || !kernel->writes_over(region, node, slot)) {
          return false;
        }
      }
    }
  }
  return true;
}

}  // namespace gpuu::kernels

// The policy engine. One building block does all region forming, grow():
//
//   Contract the regions fixed so far into single units, so the graph of units
//   is a DAG. Classify units: TAKE (free nodes this backend takes), SOLO (free
//   custom-shader nodes it takes: each its own region) and OTHER (the rest).
//   Lay units out as  gap0, run0, gap1, run1, ...  where run k holds TAKE
//   units and gap k the others, giving each unit the earliest slot its
//   predecessors allow (a longest-path labelling, O(V+E)). Every run is a
//   contiguous stretch of a topological order, so any set of TAKE units of one
//   run is convex and every edge points to the same or a later slot: the
//   regions formed from runs can be scheduled in slot order. The number of
//   runs is the fewest possible: the most TAKE->other->TAKE alternations on
//   any path. Regions are the connected pieces of each run.
//   Earliest slots strand a piece whose consumers come much later (a cast of a
//   graph input, say) in a region of its own; so a piece is moved to the
//   latest run its successors allow when it joins a TAKE piece there. Moving
//   only ever merges pieces, and the slot constraints keep the layout valid.
//
// Ordered policies: each backend of the preference order grows in turn with
// the earlier ones' regions fixed, then GPU regions below min_partition_size
// are pruned (RFC phase 1, for any number of backends). retry_pruned: each
// backend's pruned nodes are offered to the next backends in the order
// (wrapping round): the receiver regrows its regions with them (so a pruned
// piece can join a region next to it), falling back to regions of the
// offered nodes alone if regrowing would shrink one of its regions below the
// minimum; then prune again. A backend is never re-offered its own pruned
// nodes. Last, what is left is laid out for the CPU with the same schedule,
// which also yields the execution order of all regions.
//
// Dead nodes (whose results reach no graph output: Graph::live_nodes) join
// no region under any policy: the engine drops their edges, no backend takes
// them, and the CPU layout skips them, so their region_of_node is -1.
//
// `auto`: one candidate led by each GPU backend (the others following in
// canonical order: VgfBackend, VulkanBackend, the rest as registered), and
// cost labelling (a Viterbi-style pass over the nodes in topological order:
// per node and backend the cheapest cost of its inputs' labels plus per-edge
// crossing costs, then labels chosen from the outputs back; exact on chains,
// a heuristic on DAGs; then grow() per labelled backend). Each finished
// candidate is scored by estimate_cost() and the cheapest wins (ties: the
// earlier candidate), so the result is always a valid partition and never
// costlier than any ordered candidate.
#include "partition/partitioner.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace gpuu::partition {

namespace {

using graph::NodeId;

constexpr int32_t kFree = -1;
constexpr int8_t kNoPin = -1;
// Backend sets are bit masks of one word.
constexpr size_t kMaxBackends = 31;

// Adjacency in compressed rows: producers and consumers of each node, each
// listed once however many tensors connect the pair.
struct Csr {
  std::vector<int32_t> offset;
  std::vector<int32_t> items;
  const int32_t* begin(size_t i) const { return items.data() + offset[i]; }
  const int32_t* end(size_t i) const { return items.data() + offset[i + 1]; }
};

struct UnionFind {
  std::vector<int32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int32_t find(int32_t x) {
    while (parent[static_cast<size_t>(x)] != x) {
      parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
      x = parent[static_cast<size_t>(x)];
    }
    return x;
  }
  // The smaller root wins, so roots do not depend on the order of unions.
  void unite(int32_t a, int32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (a < b) std::swap(a, b);
    parent[static_cast<size_t>(a)] = b;
  }
};

struct WorkRegion {
  int32_t backend = 0;        // index into the engine's backends
  std::vector<NodeId> nodes;  // ascending ids
  bool keep = false;          // custom shader or pinned: never pruned
  bool solo = false;          // a custom-shader region
  bool alive = true;
};

struct State {
  std::vector<int32_t> region_of;  // node -> index into regions, kFree
  std::vector<WorkRegion> regions;
  std::vector<NodeTrace> trace;
};

// Result of laying units out in slots (see the file comment).
struct Layout {
  std::vector<int32_t> unit_of;     // node -> unit
  std::vector<int32_t> region_unit; // work region -> unit (or -1)
  std::vector<int32_t> unit_node;   // unit -> node (free-node units) or -1
  std::vector<int32_t> unit_region; // unit -> work region or -1
  std::vector<uint8_t> cls;         // unit class
  std::vector<int32_t> level;       // run index (TAKE) or gap index (others)
  std::vector<int32_t> topo;        // units in a topological order
  Csr succ, pred;
};

enum : uint8_t { kOther = 0, kTake = 1, kSolo = 2 };

// The pieces of each run: TAKE units joined where an edge links two of one level.
UnionFind take_pieces(const Layout& L) {
  const size_t units = L.cls.size();
  UnionFind uf(units);
  for (size_t u = 0; u < units; ++u) {
    if (L.cls[u] != kTake) continue;
    for (const int32_t* s = L.succ.begin(u); s != L.succ.end(u); ++s) {
      if (L.cls[static_cast<size_t>(*s)] == kTake && L.level[static_cast<size_t>(*s)] == L.level[u]) {
        uf.unite(static_cast<int32_t>(u), *s);
      }
    }
  }
  return uf;
}

class Engine {
 public:
  Engine(const graph::Graph& g, const PartitionOptions& o) : g_(g), opt_(o) {}

  Status prepare();
  // The candidate orders: an explicit list, a policy's, or auto's.
  struct Plan {
    std::string name;            // the trace's strategy
    std::vector<int32_t> order;  // backend indices, in the order they take regions
    bool labelling = false;      // cost labelling decides each node's backend
  };
  std::vector<Plan> plans() const;
  Result<Partitioned> run(const Plan& plan);
  // auto: every plan, the cheapest kept; else the one plan.
  Result<Partitioned> best();

 private:
  bool gpu_ok(NodeId n, int32_t b) const { return (supported_[static_cast<size_t>(n)] >> b) & 1; }
  int32_t index_of(std::string_view id) const {
    for (size_t b = 0; b < caps_.size(); ++b) {
      if (id == caps_[b]->id()) return static_cast<int32_t>(b);
    }
    return cpu_;
  }
  const char* id_of(int32_t b) const { return b == cpu_ ? kCpuId : caps_[static_cast<size_t>(b)]->id(); }
  // Whether backend b may take node n in this run: supported, and not pinned elsewhere.
  bool may_take(NodeId n, int32_t b) const {
    int8_t p = pin_[static_cast<size_t>(n)];
    return gpu_ok(n, b) && (p == kNoPin || p == b);
  }

  Status layout(const State& st, const std::vector<uint8_t>& take_class, bool sink, Layout* out) const;
  Result<std::vector<int32_t>> grow(State* st, int32_t b, const std::vector<uint8_t>& take);
  // Prunes the given new regions below the minimum; returns the nodes pruned.
  std::vector<NodeId> prune(State* st, const std::vector<int32_t>& ids, bool on_retry);
  // retry_pruned: offers `offered` (pruned from the other backend) to `to`.
  Status retry(State* st, int32_t to, const std::vector<NodeId>& offered);
  Result<PartitionResult> finish(const State& st) const;
  std::vector<uint8_t> cost_labels() const;

  const graph::Graph& g_;
  const PartitionOptions& opt_;
  size_t n_ = 0;
  Csr preds_, succs_;
  std::vector<const BackendCapability*> caps_;  // GPU backends, canonical order; index caps_.size(): the CPU
  int32_t cpu_ = 0;
  CostModel cost_;                  // opt_.cost resolved() for caps_
  std::vector<uint32_t> supported_;  // bit b: backend b's capabilities (with deny) accept the node
  std::vector<uint8_t> live_;       // Graph::live_nodes(): 0 for a dead node, which joins no region
  std::vector<uint8_t> solo_;       // custom-shader node
  std::vector<int8_t> pin_;         // pinned backend index (cpu_ included) or kNoPin
  std::vector<int32_t> op_index_;   // node -> distinct op index
  std::vector<std::string> ops_;    // distinct op names
};

Status Engine::prepare() {
  const auto& nodes = g_.nodes();
  const auto& values = g_.values();
  if (nodes.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return err(StatusCode::kInvalidArgument, "partition: the graph has too many nodes (", nodes.size(), ")");
  }
  if (opt_.prefer != Prefer::kAuto && opt_.prefer != Prefer::kVgfFirst && opt_.prefer != Prefer::kVulkanFirst) {
    return err(StatusCode::kInvalidArgument, "partition: unknown prefer value ", static_cast<int>(opt_.prefer));
  }
  if (opt_.min_partition_size < 1) {
    return err(StatusCode::kInvalidArgument, "partition: min_partition_size is ", opt_.min_partition_size,
               " (must be >= 1)");
  }
  GPUU_RETURN_IF_ERROR(opt_.cost.validate());
  n_ = nodes.size();

  // Structure: ids in range, each value produced once, producers before consumers.
  for (size_t n = 0; n < n_; ++n) {
    const graph::Node& node = nodes[n];
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      graph::ValueId v = node.outputs[i];
      if (v < 0 || static_cast<size_t>(v) >= values.size()) {
        return err(StatusCode::kInvalidArgument, "partition: output ", i, " of node '", node.name, "' is value id ", v,
                   ", out of range (", values.size(), " values)");
      }
      if (values[static_cast<size_t>(v)].producer != static_cast<NodeId>(n)) {
        NodeId other = values[static_cast<size_t>(v)].producer;
        return err(StatusCode::kInvalidArgument, "partition: value '", values[static_cast<size_t>(v)].name,
                   "' is produced by node '", node.name, "' and by node '",
                   other >= 0 && static_cast<size_t>(other) < n_ ? nodes[static_cast<size_t>(other)].name : "?", "'");
      }
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      graph::ValueId v = node.inputs[i];
      if (v == graph::kNone) continue;  // an optional input left out
      if (v < 0 || static_cast<size_t>(v) >= values.size()) {
        return err(StatusCode::kInvalidArgument, "partition: input ", i, " of node '", node.name, "' is value id ", v,
                   ", out of range (", values.size(), " values)");
      }
      NodeId p = values[static_cast<size_t>(v)].producer;
      if (p >= static_cast<NodeId>(n)) {
        return err(StatusCode::kInvalidArgument, "partition: node '", node.name, "' reads value '",
                   values[static_cast<size_t>(v)].name, "' produced by ",
                   p == static_cast<NodeId>(n) ? "itself" : "a later node",
                   ": nodes must be stored in topological order");
      }
    }
  }

  // Adjacency among live nodes, deduplicated per node. A dead node's
  // consumers are dead too, so dropping its incoming edges isolates it.
  live_ = g_.live_nodes();
  preds_.offset.assign(n_ + 1, 0);
  std::vector<int32_t> scratch;
  for (size_t n = 0; n < n_; ++n) {
    scratch.clear();
    for (graph::ValueId v : nodes[n].inputs) {
      if (v == graph::kNone || !live_[n]) continue;
      NodeId p = values[static_cast<size_t>(v)].producer;
      if (p >= 0) scratch.push_back(p);
    }
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    preds_.items.insert(preds_.items.end(), scratch.begin(), scratch.end());
    preds_.offset[n + 1] = static_cast<int32_t>(preds_.items.size());
  }
  succs_.offset.assign(n_ + 1, 0);
  for (int32_t p : preds_.items) succs_.offset[static_cast<size_t>(p) + 1]++;
  for (size_t n = 0; n < n_; ++n) succs_.offset[n + 1] += succs_.offset[n];
  succs_.items.resize(preds_.items.size());
  {
    std::vector<int32_t> fill(succs_.offset.begin(), succs_.offset.end() - 1);
    for (size_t n = 0; n < n_; ++n) {  // ascending n keeps each successor list sorted
      for (const int32_t* p = preds_.begin(n); p != preds_.end(n); ++p) {
        succs_.items[static_cast<size_t>(fill[static_cast<size_t>(*p)]++)] = static_cast<int32_t>(n);
      }
    }
  }

  // Backends: the registered GPU backends in canonical order (VgfBackend,
  // VulkanBackend, then the others as registered), each id once.
  std::vector<std::string> problems;
  caps_.clear();
  const auto& registered = opt_.capabilities.backends();
  for (const char* lead : {kVgfId, kVulkanId}) {
    for (const BackendCapability* c : registered) {
      if (c && std::string_view(c->id()) == lead) caps_.push_back(c);
    }
  }
  for (const BackendCapability* c : registered) {
    if (!c) {
      problems.push_back("a registered backend is null");
      continue;
    }
    std::string_view id = c->id();
    if (id == kCpuId || id.empty()) problems.push_back(str_cat("a GPU backend has the id '", id, "'"));
    if (id != kVgfId && id != kVulkanId) caps_.push_back(c);
  }
  for (size_t i = 0; i < caps_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (std::string_view(caps_[i]->id()) == caps_[j]->id()) {
        problems.push_back(str_cat("backend '", caps_[i]->id(), "' is registered twice"));
      }
    }
  }
  if (caps_.size() > kMaxBackends) {
    problems.push_back(str_cat(caps_.size(), " GPU backends are registered (at most ", kMaxBackends, ")"));
  }
  // Every id the options name must be registered; all unknown ones are named at once.
  auto unknown = [&](const std::string& id, const std::string& where) {
    if (id != kCpuId && !opt_.capabilities.find(id)) {
      problems.push_back(str_cat(where, " names backend '", id, "', which is not registered (registered: ",
                                 opt_.capabilities.registered_ids(), ")"));
    }
  };
  for (size_t i = 0; i < opt_.backends.size(); ++i) {
    const std::string& id = opt_.backends[i];
    if (id == kCpuId) {
      problems.push_back(str_cat("backends[", i, "] is ", kCpuId, ", which is always the fallback"));
    } else {
      unknown(id, str_cat("backends[", i, "]"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (opt_.backends[j] == id) problems.push_back(str_cat("backends[", i, "] repeats '", id, "'"));
    }
  }
  for (const Denial& d : opt_.capabilities.denials()) unknown(d.backend, str_cat("deny of '", d.op, "'"));
  for (const Pin& p : opt_.capabilities.pins()) unknown(p.backend, str_cat("pin of '", p.node, "'"));
  // The defaults name only the CPU fallback (each GPU backend declares its
  // own costs), so every other id here is the caller's.
  for (const std::string& id : opt_.cost.backend_ids()) unknown(id, "the cost model");
  if (!problems.empty()) {
    std::string text = "partition: " + problems[0];
    for (size_t i = 1; i < problems.size(); ++i) text += "; " + problems[i];
    return Status(StatusCode::kInvalidArgument, text);
  }
  cost_ = opt_.cost.resolved(caps_);
  const auto nb = static_cast<int32_t>(caps_.size());
  cpu_ = nb;

  // Capabilities, decided once per node and backend.
  std::unordered_map<std::string_view, int32_t> op_ids;
  op_index_.resize(n_);
  for (size_t n = 0; n < n_; ++n) {
    auto [it, inserted] = op_ids.emplace(nodes[n].op, static_cast<int32_t>(ops_.size()));
    if (inserted) ops_.push_back(nodes[n].op);
    op_index_[n] = it->second;
  }
  std::vector<uint32_t> op_denied(ops_.size(), 0);  // bit b: backend b is denied the op
  for (size_t i = 0; i < ops_.size(); ++i) {
    for (int32_t b = 0; b < nb; ++b) {
      if (opt_.capabilities.is_denied(caps_[static_cast<size_t>(b)]->id(), ops_[i])) op_denied[i] |= 1u << b;
    }
  }
  for (const Denial& d : opt_.capabilities.denials()) {
    bool declared = false;
    for (const BackendCapability* c : caps_) declared = declared || !c->declared_dtypes(d.op).empty();
    if (!declared && !Capabilities::is_known_op(d.op) && op_ids.count(d.op) == 0) {
      return err(StatusCode::kInvalidArgument, "deny: op '", d.op, "' (for ", d.backend,
                 ") is not a known op and no node of the graph uses it");
    }
  }
  supported_.assign(n_, 0);
  solo_.assign(n_, 0);
  for (size_t n = 0; n < n_; ++n) {
    auto op = static_cast<size_t>(op_index_[n]);
    for (int32_t b = 0; b < nb; ++b) {
      if ((op_denied[op] >> b) & 1) continue;
      const BackendCapability* c = caps_[static_cast<size_t>(b)];
      if (c->check(g_, static_cast<NodeId>(n)).ok() &&
          opt_.capabilities.backend_refusal(c->id(), g_, static_cast<NodeId>(n)).empty()) {
        supported_[n] |= 1u << b;
      }
    }
    solo_[n] = Capabilities::is_custom_shader(nodes[n]) ? 1 : 0;
  }

  // Pins: names resolved, every pin honourable, no node pinned twice differently.
  pin_.assign(n_, kNoPin);
  const auto& pins = opt_.capabilities.pins();
  if (!pins.empty()) {
    std::unordered_map<std::string_view, NodeId> by_name;
    by_name.reserve(n_);
    for (size_t n = 0; n < n_; ++n) {
      auto [it, inserted] = by_name.emplace(nodes[n].name, static_cast<NodeId>(n));
      if (!inserted) it->second = -2;  // ambiguous: only an error if a pin names it
    }
    for (const Pin& pin : pins) {
      auto it = by_name.find(pin.node);
      if (it == by_name.end()) {
        return err(StatusCode::kInvalidArgument, "pin: no node is named '", pin.node, "'");
      }
      if (it->second < 0) {
        return err(StatusCode::kInvalidArgument, "pin: several nodes are named '", pin.node, "'");
      }
      auto n = static_cast<size_t>(it->second);
      if (pin.backend != kCpuId) {
        Verdict v = opt_.capabilities.verdict(pin.backend, g_, it->second);
        if (!v.ok()) {
          return err(StatusCode::kInvalidArgument, "pin: cannot pin '", pin.node, "' to ", pin.backend, ": ",
                     opt_.capabilities.support(pin.backend, g_, it->second).reason);
        }
      }
      int8_t b = static_cast<int8_t>(index_of(pin.backend));
      if (pin_[n] != kNoPin && pin_[n] != b) {
        return err(StatusCode::kInvalidArgument, "pin: node '", pin.node, "' is pinned to both ", id_of(pin_[n]),
                   " and ", pin.backend);
      }
      pin_[n] = b;
    }
  }
  return Status::Ok();
}

Status Engine::layout(const State& st, const std::vector<uint8_t>& take_class, bool sink, Layout* out) const {
  Layout& L = *out;
  // Units: each fixed region is one unit, each free node another.
  L.unit_of.assign(n_, -1);
  L.region_unit.assign(st.regions.size(), -1);
  L.unit_node.clear();
  L.unit_region.clear();
  L.cls.clear();
  for (size_t n = 0; n < n_; ++n) {
    int32_t r = st.region_of[n];
    if (r >= 0) {
      int32_t& u = L.region_unit[static_cast<size_t>(r)];
      if (u < 0) {
        u = static_cast<int32_t>(L.cls.size());
        L.unit_node.push_back(-1);
        L.unit_region.push_back(r);
        L.cls.push_back(kOther);
      }
      L.unit_of[n] = u;
    } else {
      L.unit_of[n] = static_cast<int32_t>(L.cls.size());
      L.unit_node.push_back(static_cast<int32_t>(n));
      L.unit_region.push_back(-1);
      L.cls.push_back(take_class[n]);
    }
  }
  const size_t units = L.cls.size();

  // Unit successor lists without duplicates, then predecessor lists.
  L.succ.offset.assign(units + 1, 0);
  for (size_t n = 0; n < n_; ++n) {
    for (const int32_t* s = succs_.begin(n); s != succs_.end(n); ++s) {
      if (L.unit_of[n] != L.unit_of[static_cast<size_t>(*s)]) L.succ.offset[static_cast<size_t>(L.unit_of[n]) + 1]++;
    }
  }
  for (size_t u = 0; u < units; ++u) L.succ.offset[u + 1] += L.succ.offset[u];
  L.succ.items.assign(static_cast<size_t>(L.succ.offset[units]), 0);
  {
    std::vector<int32_t> fill(L.succ.offset.begin(), L.succ.offset.end() - 1);
    for (size_t n = 0; n < n_; ++n) {
      int32_t un = L.unit_of[n];
      for (const int32_t* s = succs_.begin(n); s != succs_.end(n); ++s) {
        int32_t us = L.unit_of[static_cast<size_t>(*s)];
        if (un != us) L.succ.items[static_cast<size_t>(fill[static_cast<size_t>(un)]++)] = us;
      }
    }
    // Compact: sort and dedupe each row in place.
    int32_t write = 0;
    for (size_t u = 0; u < units; ++u) {
      auto b = L.succ.items.begin() + L.succ.offset[u];
      auto e = L.succ.items.begin() + L.succ.offset[u + 1];
      std::sort(b, e);
      auto last = std::unique(b, e);
      L.succ.offset[u] = write;
      for (auto it = b; it != last; ++it) L.succ.items[static_cast<size_t>(write++)] = *it;
    }
    L.succ.offset[units] = write;
    L.succ.items.resize(static_cast<size_t>(write));
  }
  L.pred.offset.assign(units + 1, 0);
  for (int32_t s : L.succ.items) L.pred.offset[static_cast<size_t>(s) + 1]++;
  for (size_t u = 0; u < units; ++u) L.pred.offset[u + 1] += L.pred.offset[u];
  L.pred.items.assign(L.succ.items.size(), 0);
  {
    std::vector<int32_t> fill(L.pred.offset.begin(), L.pred.offset.end() - 1);
    for (size_t u = 0; u < units; ++u) {
      for (const int32_t* s = L.succ.begin(u); s != L.succ.end(u); ++s) {
        L.pred.items[static_cast<size_t>(fill[static_cast<size_t>(*s)]++)] = static_cast<int32_t>(u);
      }
    }
  }

  // Kahn's algorithm, FIFO, seeded in unit order: deterministic.
  std::vector<int32_t> indegree(units);
  for (size_t u = 0; u < units; ++u) indegree[u] = L.pred.offset[u + 1] - L.pred.offset[u];
  L.topo.clear();
  L.topo.reserve(units);
  for (size_t u = 0; u < units; ++u) {
    if (indegree[u] == 0) L.topo.push_back(static_cast<int32_t>(u));
  }
  for (size_t head = 0; head < L.topo.size(); ++head) {
    auto u = static_cast<size_t>(L.topo[head]);
    for (const int32_t* s = L.succ.begin(u); s != L.succ.end(u); ++s) {
      if (--indegree[static_cast<size_t>(*s)] == 0) L.topo.push_back(*s);
    }
  }
  if (L.topo.size() != units) {
    // Fixed regions are convex and mutually acyclic by construction; this
    // would be a bug, reported rather than looped on.
    return err(StatusCode::kInternal, "partition: the region graph has a cycle (", units - L.topo.size(),
               " units unplaced)");
  }

  // Earliest slots: run index for TAKE, gap index for the rest.
  L.level.assign(units, 0);
  for (int32_t u : L.topo) {
    bool u_take = L.cls[static_cast<size_t>(u)] == kTake;
    int32_t lu = L.level[static_cast<size_t>(u)];
    for (const int32_t* s = L.succ.begin(static_cast<size_t>(u)); s != L.succ.end(static_cast<size_t>(u)); ++s) {
      bool s_take = L.cls[static_cast<size_t>(*s)] == kTake;
      int32_t need = (u_take && !s_take) ? lu + 1 : lu;
      if (need > L.level[static_cast<size_t>(*s)]) L.level[static_cast<size_t>(*s)] = need;
    }
  }
  if (!sink) return Status::Ok();

  // Late placement of stranded pieces (file comment). Pieces of one run share
  // no edge, and a piece's TAKE successors sit in later runs, so handling runs
  // from the last one down sees every successor in its final place.
  UnionFind uf = take_pieces(L);
  std::vector<int32_t> members;  // TAKE units grouped by piece, pieces by level descending
  for (size_t u = 0; u < units; ++u) {
    if (L.cls[u] == kTake) members.push_back(static_cast<int32_t>(u));
  }
  std::vector<int32_t> root(units, -1);
  for (int32_t u : members) root[static_cast<size_t>(u)] = uf.find(u);
  std::stable_sort(members.begin(), members.end(), [&](int32_t a, int32_t b) {
    int32_t la = L.level[static_cast<size_t>(a)], lb = L.level[static_cast<size_t>(b)];
    if (la != lb) return la > lb;
    return root[static_cast<size_t>(a)] < root[static_cast<size_t>(b)];
  });
  const int32_t kInf = std::numeric_limits<int32_t>::max();
  for (size_t i = 0; i < members.size();) {
    size_t j = i;
    int32_t r = root[static_cast<size_t>(members[i])];
    while (j < members.size() && root[static_cast<size_t>(members[j])] == r) ++j;
    int32_t here = L.level[static_cast<size_t>(members[i])];
    int32_t latest = kInf;
    for (size_t k = i; k < j; ++k) {
      auto u = static_cast<size_t>(members[k]);
      for (const int32_t* s = L.succ.begin(u); s != L.succ.end(u); ++s) {
        auto su = static_cast<size_t>(*s);
        if (L.cls[su] == kTake) {
          if (root[su] != r) latest = std::min(latest, L.level[su]);
        } else {
          latest = std::min(latest, L.level[su] - 1);
        }
      }
    }
    bool joins = false;
    if (latest != kInf && latest > here) {
      for (size_t k = i; k < j && !joins; ++k) {
        auto u = static_cast<size_t>(members[k]);
        for (const int32_t* s = L.succ.begin(u); s != L.succ.end(u); ++s) {
          auto su = static_cast<size_t>(*s);
          if (L.cls[su] == kTake && L.level[su] == latest) {
            joins = true;
            break;
          }
        }
      }
    }
    if (joins) {
      for (size_t k = i; k < j; ++k) L.level[static_cast<size_t>(members[k])] = latest;
    }
    i = j;
  }
  return Status::Ok();
}

Result<std::vector<int32_t>> Engine::grow(State* st, int32_t b, const std::vector<uint8_t>& take) {
  std::vector<uint8_t> take_class(n_, kOther);
  for (size_t n = 0; n < n_; ++n) {
    if (take[n] && st->region_of[n] == kFree) take_class[n] = solo_[n] ? kSolo : kTake;
  }
  Layout L;
  GPUU_RETURN_IF_ERROR(layout(*st, take_class, /*sink=*/true, &L));
  const size_t units = L.cls.size();

  // Regions: the connected pieces of each run, plus one per custom shader.
  UnionFind uf = take_pieces(L);
  // Units of free nodes are numbered in node order, so walking nodes in order
  // gives each region its nodes ascending and regions numbered by first node.
  std::vector<int32_t> region_of_root(units, -1);
  std::vector<int32_t> created;
  for (size_t n = 0; n < n_; ++n) {
    if (st->region_of[n] != kFree) continue;
    auto u = static_cast<size_t>(L.unit_of[n]);
    if (L.cls[u] == kOther) continue;
    int32_t key = L.cls[u] == kSolo ? static_cast<int32_t>(u) : uf.find(static_cast<int32_t>(u));
    int32_t& r = region_of_root[static_cast<size_t>(key)];
    if (r < 0) {
      r = static_cast<int32_t>(st->regions.size());
      WorkRegion region;
      region.backend = b;
      region.keep = region.solo = L.cls[u] == kSolo;
      st->regions.push_back(std::move(region));
      created.push_back(r);
    }
    WorkRegion& region = st->regions[static_cast<size_t>(r)];
    region.nodes.push_back(static_cast<NodeId>(n));
    if (pin_[n] != kNoPin) region.keep = true;
  }
  for (int32_t r : created) {
    for (NodeId n : st->regions[static_cast<size_t>(r)].nodes) st->region_of[static_cast<size_t>(n)] = r;
  }
  return created;
}

std::vector<NodeId> Engine::prune(State* st, const std::vector<int32_t>& ids, bool on_retry) {
  std::vector<NodeId> pruned;
  for (int32_t r : ids) {
    WorkRegion& region = st->regions[static_cast<size_t>(r)];
    if (region.keep || static_cast<int64_t>(region.nodes.size()) >= opt_.min_partition_size) continue;
    region.alive = false;
    auto b = static_cast<size_t>(region.backend);
    auto size = static_cast<int32_t>(region.nodes.size());
    for (NodeId n : region.nodes) {
      st->region_of[static_cast<size_t>(n)] = kFree;
      NodeTrace& t = st->trace[static_cast<size_t>(n)];
      (on_retry ? t.retry_pruned_size : t.pruned_size)[b] = size;
      pruned.push_back(n);
    }
  }
  std::sort(pruned.begin(), pruned.end());
  return pruned;
}

Status Engine::retry(State* st, int32_t to, const std::vector<NodeId>& offered) {
  std::vector<uint8_t> take(n_, 0);
  bool any = false;
  for (NodeId n : offered) {
    st->trace[static_cast<size_t>(n)].offered_on_retry[static_cast<size_t>(to)] = true;
    if (may_take(n, to)) take[static_cast<size_t>(n)] = any = true;
  }
  if (!any) return Status::Ok();

  // First try: `to` regrows its ML regions together with the offered nodes, so
  // a pruned piece can join a neighbouring region of `to`. Accepted only if
  // none of `to`'s former members ends up in a region below the minimum.
  State trial = *st;
  std::vector<uint8_t> former(n_, 0);
  for (WorkRegion& region : trial.regions) {
    if (!region.alive || region.backend != to || region.solo) continue;
    region.alive = false;
    for (NodeId n : region.nodes) {
      trial.region_of[static_cast<size_t>(n)] = kFree;
      former[static_cast<size_t>(n)] = 1;
    }
  }
  std::vector<uint8_t> trial_take = take;
  for (size_t n = 0; n < n_; ++n) trial_take[n] |= former[n];
  GPUU_ASSIGN_OR_RETURN(std::vector<int32_t> regrown, grow(&trial, to, trial_take));
  bool keeps_former = true;
  for (int32_t r : regrown) {
    const WorkRegion& region = trial.regions[static_cast<size_t>(r)];
    if (region.keep || static_cast<int64_t>(region.nodes.size()) >= opt_.min_partition_size) continue;
    for (NodeId n : region.nodes) keeps_former = keeps_former && !former[static_cast<size_t>(n)];
  }
  if (keeps_former) {
    prune(&trial, regrown, /*on_retry=*/true);
    *st = std::move(trial);
    return Status::Ok();
  }
  // Otherwise the offered nodes form regions of their own.
  GPUU_ASSIGN_OR_RETURN(std::vector<int32_t> retried, grow(st, to, take));
  prune(st, retried, /*on_retry=*/true);
  return Status::Ok();
}

Result<PartitionResult> Engine::finish(const State& st) const {
  std::vector<uint8_t> take_class(n_, kOther);
  for (size_t n = 0; n < n_; ++n) {
    if (st.region_of[n] == kFree && live_[n]) take_class[n] = kTake;
  }
  Layout L;
  GPUU_RETURN_IF_ERROR(layout(st, take_class, /*sink=*/false, &L));
  const size_t units = L.cls.size();

  // Execution order: by slot (gap k = 2k, run k = 2k+1), then topological
  // position. CPU units of one run form one region.
  std::vector<int32_t> topo_pos(units);
  for (size_t i = 0; i < L.topo.size(); ++i) topo_pos[static_cast<size_t>(L.topo[i])] = static_cast<int32_t>(i);
  std::vector<int32_t> order(L.topo.begin(), L.topo.end());
  auto slot = [&](int32_t u) {
    auto i = static_cast<size_t>(u);
    return static_cast<int64_t>(L.level[i]) * 2 + (L.cls[i] == kTake ? 1 : 0);
  };
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return slot(a) < slot(b); });

  PartitionResult out;
  out.region_of_node.assign(n_, -1);
  int64_t open_cpu_slot = -1;
  for (int32_t u : order) {
    auto ui = static_cast<size_t>(u);
    if (L.cls[ui] != kTake && L.unit_region[ui] < 0) continue;  // a dead node
    if (L.cls[ui] == kTake) {
      if (slot(u) != open_cpu_slot) {
        out.regions.push_back(Region{kCpuId, {}});
        open_cpu_slot = slot(u);
      }
      out.regions.back().nodes.push_back(L.unit_node[ui]);
    } else {
      const WorkRegion& wr = st.regions[static_cast<size_t>(L.unit_region[ui])];
      out.regions.push_back(Region{id_of(wr.backend), wr.nodes});
      open_cpu_slot = -1;
    }
  }
  for (size_t r = 0; r < out.regions.size(); ++r) {
    Region& region = out.regions[r];
    if (region.backend == kCpuId) std::sort(region.nodes.begin(), region.nodes.end());
    for (NodeId n : region.nodes) out.region_of_node[static_cast<size_t>(n)] = static_cast<int32_t>(r);
  }
  return out;
}

std::vector<uint8_t> Engine::cost_labels() const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const size_t nb = caps_.size() + 1;  // the GPU backends and the CPU
  // Per distinct op: the node cost on each backend.
  std::vector<double> op_costs(ops_.size() * nb);
  for (size_t i = 0; i < ops_.size(); ++i) {
    for (size_t b = 0; b < nb; ++b) op_costs[i * nb + b] = cost_.node_cost(ops_[i], id_of(static_cast<int32_t>(b)));
  }
  std::vector<double> cross(nb * nb);
  for (size_t a = 0; a < nb; ++a) {
    for (size_t b = 0; b < nb; ++b) {
      cross[a * nb + b] = cost_.crossing(id_of(static_cast<int32_t>(a)), id_of(static_cast<int32_t>(b)));
    }
  }
  auto allowed = [&](size_t n, size_t b) {
    if (pin_[n] != kNoPin) return pin_[n] == static_cast<int8_t>(b);
    return static_cast<int32_t>(b) == cpu_ || gpu_ok(static_cast<NodeId>(n), static_cast<int32_t>(b));
  };
  // Forward: cost[n][b] = own cost + for each producer the cheapest label plus
  // crossing. Stored relative to the node's best, so sums stay bounded however
  // often paths reconverge.
  std::vector<double> rel(n_ * nb);
  for (size_t n = 0; n < n_; ++n) {
    double best = kInf;
    for (size_t b = 0; b < nb; ++b) {
      if (!allowed(n, b)) {
        rel[n * nb + b] = kInf;
        continue;
      }
      double c = op_costs[static_cast<size_t>(op_index_[n]) * nb + b];
      for (const int32_t* p = preds_.begin(n); p != preds_.end(n); ++p) {
        double m = kInf;
        for (size_t a = 0; a < nb; ++a) m = std::min(m, rel[static_cast<size_t>(*p) * nb + a] + cross[a * nb + b]);
        c += m;
      }
      rel[n * nb + b] = c;
      best = std::min(best, c);
    }
    for (size_t b = 0; b < nb; ++b) rel[n * nb + b] -= best;
  }
  // Backward: each node's label given its consumers' labels.
  std::vector<uint8_t> label(n_, static_cast<uint8_t>(cpu_));
  for (size_t i = n_; i-- > 0;) {
    double best = kInf;
    for (size_t b = 0; b < nb; ++b) {
      if (rel[i * nb + b] == kInf) continue;
      double c = rel[i * nb + b];
      for (const int32_t* s = succs_.begin(i); s != succs_.end(i); ++s) {
        c += cross[b * nb + label[static_cast<size_t>(*s)]];
      }
      if (c < best) {  // strict: ties keep the lower index (VGF, Vulkan, others, CPU)
        best = c;
        label[i] = static_cast<uint8_t>(b);
      }
    }
  }
  return label;
}

std::vector<Engine::Plan> Engine::plans() const {
  std::vector<int32_t> canonical(caps_.size());
  std::iota(canonical.begin(), canonical.end(), 0);
  // `lead` first, then the others in canonical order.
  auto led_by = [&](int32_t lead) {
    std::vector<int32_t> order;
    if (lead < cpu_) order.push_back(lead);
    for (int32_t b : canonical) {
      if (b != lead) order.push_back(b);
    }
    return order;
  };
  auto name_of = [&](int32_t lead) -> std::string {
    if (lead == cpu_) return "vgf_first";  // no GPU backend at all
    std::string_view id = caps_[static_cast<size_t>(lead)]->id();
    if (id == kVgfId) return "vgf_first";
    if (id == kVulkanId) return "vulkan_first";
    return str_cat(id, "_first");
  };
  if (!opt_.backends.empty()) {
    Plan plan{"backends", {}, false};
    for (const std::string& id : opt_.backends) plan.order.push_back(index_of(id));
    return {plan};
  }
  switch (opt_.prefer) {
    case Prefer::kVgfFirst: return {Plan{"vgf_first", canonical, false}};
    case Prefer::kVulkanFirst: {
      int32_t vulkan = index_of(kVulkanId);
      return {Plan{"vulkan_first", led_by(vulkan), false}};
    }
    case Prefer::kAuto: break;
  }
  std::vector<Plan> out;
  for (int32_t lead : canonical) out.push_back(Plan{name_of(lead), led_by(lead), false});
  if (out.empty()) out.push_back(Plan{name_of(cpu_), {}, false});
  out.push_back(Plan{"cost_labelling", canonical, true});
  return out;
}

Result<Partitioned> Engine::run(const Plan& plan) {
  State st;
  st.region_of.assign(n_, kFree);
  NodeTrace blank;
  blank.pruned_size.assign(caps_.size(), 0);
  blank.retry_pruned_size.assign(caps_.size(), 0);
  blank.offered_on_retry.assign(caps_.size(), 0);
  st.trace.assign(n_, blank);
  std::vector<uint8_t> labels;
  if (plan.labelling) labels = cost_labels();

  // Each backend in order takes maximal regions of what it supports among
  // the nodes still free; then every backend's small regions are pruned.
  std::vector<std::vector<int32_t>> grown;
  std::vector<uint8_t> take(n_);
  for (int32_t b : plan.order) {
    for (size_t n = 0; n < n_; ++n) {
      take[n] = live_[n] &&
                (labels.empty() ? may_take(static_cast<NodeId>(n), b) : labels[n] == static_cast<uint8_t>(b));
    }
    GPUU_ASSIGN_OR_RETURN(std::vector<int32_t> created, grow(&st, b, take));
    grown.push_back(std::move(created));
  }
  std::vector<std::vector<NodeId>> pruned;
  for (const std::vector<int32_t>& created : grown) pruned.push_back(prune(&st, created, false));

  if (opt_.retry_pruned) {
    // Each backend's pruned nodes are offered to the next backends in the
    // order (wrapping round, never back to itself), while any stay free.
    const size_t m = plan.order.size();
    for (size_t i = 0; i < m; ++i) {
      for (size_t k = 1; k < m; ++k) {
        std::vector<NodeId> offered;
        for (NodeId n : pruned[i]) {
          if (st.region_of[static_cast<size_t>(n)] == kFree) offered.push_back(n);
        }
        if (offered.empty()) break;
        GPUU_RETURN_IF_ERROR(retry(&st, plan.order[(i + k) % m], offered));
      }
    }
  }

  Partitioned out;
  GPUU_ASSIGN_OR_RETURN(out.result, finish(st));
  out.trace.policy = opt_.prefer;
  out.trace.strategy = plan.name;
  for (const BackendCapability* c : caps_) out.trace.backends.push_back(c->id());
  for (int32_t b : plan.order) out.trace.order.push_back(id_of(b));
  out.trace.nodes = std::move(st.trace);
  return out;
}

Result<Partitioned> Engine::best() {
  std::vector<Plan> candidates = plans();
  if (candidates.size() == 1) return run(candidates.front());
  std::optional<Partitioned> best;
  double best_cost = 0.0;
  std::vector<std::pair<std::string, double>> costs;
  for (const Plan& plan : candidates) {
    GPUU_ASSIGN_OR_RETURN(Partitioned candidate, run(plan));
    double cost = estimate_cost(g_, candidate.result, cost_);
    costs.emplace_back(plan.name, cost);
    if (!best || cost < best_cost) {  // strict: ties keep the earlier candidate
      best = std::move(candidate);
      best_cost = cost;
    }
  }
  best->trace.candidates = std::move(costs);
  return std::move(*best);
}

}  // namespace

Result<Partitioned> partition_with_trace(const graph::Graph& graph, const PartitionOptions& options) {
  Engine engine(graph, options);
  GPUU_RETURN_IF_ERROR(engine.prepare());
  return engine.best();
}

Result<PartitionResult> partition(const graph::Graph& graph, const PartitionOptions& options) {
  GPUU_ASSIGN_OR_RETURN(Partitioned p, partition_with_trace(graph, options));
  return std::move(p.result);
}

}  // namespace gpuu::partition

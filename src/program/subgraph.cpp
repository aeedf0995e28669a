// SubGraph encode/decode: a region of the graph as its own flatbuffer, read
// back with the same strictness as the program file.
#include "program/subgraph.h"

#include <optional>
#include <unordered_map>

#include "graph/index_math.h"
#include "program/fb_util.h"
#include "program/program.h"
#include "program/subgraph_generated.h"

namespace gpuu::program {

using detail::Locator;
using graph::NodeId;
using graph::ValueId;

namespace {

// Reads an optional table list of a subgraph into `out`: each entry, at
// `where` ("<table>[i]"), needs a name no earlier entry has; `decode` reads
// the rest of it.
template <typename Table, typename Entry, typename Decode>
Status decode_named(const Locator& loc, const flatbuffers::Vector<flatbuffers::Offset<Table>>* list,
                    const char* table, std::vector<Entry>* out, Decode decode) {
  if (!list) return Status::Ok();
  std::unordered_map<std::string, uint32_t> names;
  for (uint32_t i = 0; i < list->size(); ++i) {
    const Table* t = list->Get(i);
    const std::string where = str_cat(table, "[", i, "]");
    Entry entry;
    GPUU_ASSIGN_OR_RETURN(entry.name, detail::required_string(loc, t->name(), where + ".name"));
    auto [it, inserted] = names.emplace(entry.name, i);
    if (!inserted) {
      return loc.fail(where, ".name '", entry.name, "'", loc.at(t->name()), " repeats ", table, "[", it->second, "]");
    }
    GPUU_RETURN_IF_ERROR(decode(t, where, entry));
    out->push_back(std::move(entry));
  }
  return Status::Ok();
}

}  // namespace

// How many nodes the error for a region of dead nodes names.
constexpr size_t kNamedDeadNodes = 8;

Result<RegionIo> region_io(const graph::Graph& g, const partition::Region& region) {
  const size_t nv = g.values().size();
  const size_t nn = g.nodes().size();
  std::vector<char> in_region(nn, 0);
  for (NodeId n : region.nodes) {
    if (n < 0 || static_cast<size_t>(n) >= nn) {
      return err(StatusCode::kInvalidArgument, "region: node id ", n, " is out of range (", nn, " nodes)");
    }
    if (in_region[static_cast<size_t>(n)]) {
      return err(StatusCode::kInvalidArgument, "region: node '", g.node(n).name, "' is listed twice");
    }
    in_region[static_cast<size_t>(n)] = 1;
  }
  auto check_value = [&](const graph::Node& node, ValueId v) -> Status {
    if (v < 0 || static_cast<size_t>(v) >= nv) {
      return err(StatusCode::kInvalidArgument, "region: node '", node.name, "' refers to value id ", v,
                 ", out of range (", nv, " values)");
    }
    return Status::Ok();
  };
  RegionIo io;
  std::vector<char> produced(nv, 0);
  std::vector<char> listed(nv, 0);
  for (NodeId n : region.nodes) {
    const graph::Node& node = g.node(n);
    for (ValueId v : node.inputs) {
      if (v == graph::kNone) continue;  // an optional input left out
      GPUU_RETURN_IF_ERROR(check_value(node, v));
      if (produced[static_cast<size_t>(v)]) continue;
      NodeId producer = g.value(v).producer;
      if (producer >= 0 && static_cast<size_t>(producer) < nn && in_region[static_cast<size_t>(producer)]) {
        return err(StatusCode::kInvalidArgument, "region: node '", node.name, "' reads '", g.value(v).name,
                   "' before node '", g.node(producer).name, "' of the same region produces it");
      }
      if (!listed[static_cast<size_t>(v)]) {
        listed[static_cast<size_t>(v)] = 1;
        io.inputs.push_back(v);
      }
    }
    for (ValueId v : node.outputs) {
      GPUU_RETURN_IF_ERROR(check_value(node, v));
      if (produced[static_cast<size_t>(v)] || listed[static_cast<size_t>(v)]) {
        return err(StatusCode::kInvalidArgument, "region: value '", g.value(v).name, "' is produced twice or read",
                   " before node '", node.name, "' produces it");
      }
      produced[static_cast<size_t>(v)] = 1;
    }
  }
  // Graph outputs and state updates leave the region whoever reads them.
  std::vector<char> is_graph_output(nv, 0);
  for (ValueId v : g.results()) {
    if (v >= 0 && static_cast<size_t>(v) < nv) is_graph_output[static_cast<size_t>(v)] = 1;
  }
  // Dead readers run nowhere, so they need nothing handed over.
  const std::vector<std::vector<NodeId>> consumers = g.consumers();
  const std::vector<uint8_t> live = g.live_nodes();
  for (NodeId n : region.nodes) {
    for (ValueId v : g.node(n).outputs) {
      bool read_outside = is_graph_output[static_cast<size_t>(v)];
      for (NodeId c : consumers[static_cast<size_t>(v)]) {
        if (!in_region[static_cast<size_t>(c)] && live[static_cast<size_t>(c)]) read_outside = true;
      }
      if (read_outside) io.outputs.push_back(v);
    }
  }
  if (io.outputs.empty() && !region.nodes.empty()) {
    std::string names;
    for (size_t i = 0; i < region.nodes.size() && i < kNamedDeadNodes; ++i) {
      names += (i ? ", '" : "'") + g.node(region.nodes[i]).name + "'";
    }
    if (region.nodes.size() > kNamedDeadNodes) names += str_cat(" and ", region.nodes.size() - kNamedDeadNodes, " more");
    return err(StatusCode::kInvalidArgument, "region: no result of its nodes (", names,
               ") is a graph output or read by a live node outside it: they are dead (their results reach no graph",
               " output), so the region would have no outputs; a partition leaves dead nodes out of every region");
  }
  return io;
}

Result<std::vector<uint8_t>> serialize_region(const graph::Graph& g, const partition::Region& region,
                                              const std::map<std::string, StoredRearranged>& rearranged) {
  GPUU_ASSIGN_OR_RETURN(RegionIo io, region_io(g, region));
  // Local tensor ids in order of first appearance: the same region, the same bytes.
  std::unordered_map<ValueId, uint32_t> local;
  std::vector<ValueId> order;
  auto touch = [&](ValueId v) {
    if (local.emplace(v, static_cast<uint32_t>(order.size())).second) order.push_back(v);
  };
  for (ValueId v : io.inputs) touch(v);
  for (NodeId n : region.nodes) {
    for (ValueId v : g.node(n).inputs) {
      if (v != graph::kNone) touch(v);
    }
    for (ValueId v : g.node(n).outputs) touch(v);
  }
  auto to_local = [&](const std::vector<ValueId>& ids) {
    std::vector<uint32_t> out;
    out.reserve(ids.size());
    for (ValueId v : ids) out.push_back(v == graph::kNone ? detail::kAbsentInput : local.at(v));
    return out;
  };

  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::SgTensor>> tensors;
  for (ValueId v : order) {
    const graph::Value& value = g.value(v);
    auto name = fbb.CreateString(value.name);
    auto shape = fbb.CreateVector(value.shape);
    auto dims = detail::encode_axis_exprs(fbb, value.dim_exprs);
    flatbuffers::Offset<fb::SgRearranged> stored_as;
    auto r = value.constant != graph::kNone ? rearranged.find(value.name) : rearranged.end();
    if (r != rearranged.end()) {
      stored_as = fb::CreateSgRearranged(fbb, fbb.CreateString(r->second.stored), fbb.CreateVector(r->second.view),
                                         fbb.CreateVector(r->second.perm));
    }
    tensors.push_back(fb::CreateSgTensor(fbb, name, detail::to_fb(value.dtype), shape, value.constant != graph::kNone,
                                         dims, stored_as));
  }
  std::vector<flatbuffers::Offset<fb::SgNode>> nodes;
  for (NodeId n : region.nodes) {
    const graph::Node& node = g.node(n);
    auto name = fbb.CreateString(node.name);
    auto op = fbb.CreateString(node.op);
    auto attrs = detail::encode_attrs(fbb, node.attrs);
    auto inputs = fbb.CreateVector(to_local(node.inputs));
    auto outputs = fbb.CreateVector(to_local(node.outputs));
    auto exprs = detail::encode_attr_exprs(fbb, node.attr_exprs);
    nodes.push_back(fb::CreateSgNode(fbb, name, op, attrs, inputs, outputs, exprs));
  }
  fb::FormatVersion version(kFormatMajor, kFormatMinor);
  auto root = fb::CreateSubGraph(fbb, &version, fbb.CreateVector(tensors), fbb.CreateVector(to_local(io.inputs)),
                                 fbb.CreateVector(to_local(io.outputs)), fbb.CreateVector(nodes));
  fb::FinishSubGraphBuffer(fbb, root);
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  // Never hand out what the reader would refuse (empty or repeated names, say).
  Result<graph::Graph> check = parse_subgraph(bytes.data(), bytes.size());
  if (!check.ok()) {
    return err(StatusCode::kInvalidArgument, "cannot serialize region: ", check.status().message());
  }
  return bytes;
}

ConstantLookup program_constant_lookup(std::shared_ptr<const Program> program) {
  return [program = std::move(program)](const std::string& name, graph::DType dtype,
                                        const graph::Shape& shape) -> Result<Blob> {
    int32_t t = program->find_tensor(name);
    if (t < 0) return err(StatusCode::kInvalidFormat, "subgraph constant '", name, "': no program tensor of that name");
    const TensorInfo& info = program->tensors()[static_cast<size_t>(t)];
    if (!info.is_constant()) {
      return err(StatusCode::kInvalidFormat, "subgraph constant '", name, "': program tensor ", t,
                 " is not a constant");
    }
    if (info.dtype != dtype || info.shape != shape) {
      return err(StatusCode::kInvalidFormat, "subgraph constant '", name, "' is ", graph::dtype_name(dtype), " ",
                 graph::shape_to_string(shape), " but the program tensor is ", graph::dtype_name(info.dtype), " ",
                 graph::shape_to_string(info.shape));
    }
    return program->constant_data(t);
  };
}

Result<graph::Graph> parse_subgraph(const uint8_t* data, size_t size, const ConstantLookup& lookup) {
  if (!data && size) return err(StatusCode::kInvalidArgument, "subgraph: data is null but size is ", size);
  if (size < 8) return err(StatusCode::kInvalidFormat, "subgraph: blob of ", size, " bytes is too small");
  if (!fb::SubGraphBufferHasIdentifier(data)) {
    return err(StatusCode::kInvalidFormat, "subgraph: identifier (bytes 4..7) is '",
               detail::printable_identifier(data, size), "', expected '", kSubGraphFileIdentifier, "'");
  }
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return err(StatusCode::kInvalidFormat, "subgraph: blob of ", size, " bytes is too large (2 GiB at most)");
  }
  std::vector<uint64_t> storage;
  const uint8_t* buf = detail::aligned_for_flatbuffers(data, size, &storage);
  Locator loc("subgraph", buf);
  flatbuffers::Verifier verifier(buf, size);
  if (!fb::VerifySubGraphBuffer(verifier)) {
    return loc.fail("the flatbuffer of ", size, " bytes is corrupt or truncated (verification failed)");
  }
  const fb::SubGraph* root = fb::GetSubGraph(buf);
  const fb::FormatVersion* version = root->version();
  if (!version) return loc.fail("format version is missing");
  if (version->major() != kFormatMajor) {
    return err(StatusCode::kUnsupported, "subgraph: format version ", version->major(), ".", version->minor(),
               " is not supported (this reader reads ", kFormatMajor, ".x)");
  }

  struct LocalTensor {
    std::string name;
    graph::DType dtype;
    graph::Shape shape;
    bool constant;
    std::vector<graph::AxisExpr> dim_exprs;
    std::optional<StoredRearranged> stored_as;
  };
  std::vector<LocalTensor> tensors;
  GPUU_RETURN_IF_ERROR(decode_named(
      loc, root->tensors(), "tensors", &tensors,
      [&](const fb::SgTensor* t, const std::string& where, LocalTensor& lt) -> Status {
        GPUU_ASSIGN_OR_RETURN(lt.dtype, detail::checked_dtype(loc, t->dtype(),
                                                              detail::field_address(t, fb::SgTensor::VT_DTYPE),
                                                              where + ".dtype"));
        GPUU_ASSIGN_OR_RETURN(lt.shape, detail::checked_shape(loc, t->shape(), lt.dtype, where + ".shape"));
        lt.constant = t->constant();
        GPUU_ASSIGN_OR_RETURN(lt.dim_exprs, detail::decode_axis_exprs(loc, t->dims(), lt.shape.size(),
                                                                      graph::kMaxSymbolicDims, where + ".dims"));
        if (lt.constant && !lt.dim_exprs.empty()) return loc.fail(where, " is a constant whose shape follows dims");
        if (const fb::SgRearranged* r = t->stored_as()) {
          if (!lt.constant) return loc.fail(where, ".stored_as", loc.at(r), " is set on a tensor that is no constant");
          StoredRearranged sr;
          GPUU_ASSIGN_OR_RETURN(sr.stored, detail::required_string(loc, r->name(), where + ".stored_as.name"));
          GPUU_ASSIGN_OR_RETURN(sr.view, detail::checked_shape(loc, r->view(), lt.dtype, where + ".stored_as.view"));
          if (graph::shape_numel(sr.view) != graph::shape_numel(lt.shape)) {
            return loc.fail(where, ".stored_as.view ", graph::shape_to_string(sr.view), loc.at(r->view()),
                            " has another element count than the tensor's shape ", graph::shape_to_string(lt.shape));
          }
          std::vector<char> seen(sr.view.size(), 0);
          const size_t n = r->perm() ? r->perm()->size() : 0;
          for (size_t i = 0; i < n; ++i) {
            int64_t p = r->perm()->Get(static_cast<flatbuffers::uoffset_t>(i));
            if (p < 0 || static_cast<size_t>(p) >= seen.size() || seen[static_cast<size_t>(p)]++) {
              return loc.fail(where, ".stored_as.perm", loc.at(r->perm()), " is not a permutation of the ",
                              sr.view.size(), " view dims");
            }
            sr.perm.push_back(p);
          }
          if (n != sr.view.size()) {
            return loc.fail(where, ".stored_as.perm", loc.at(r->perm()), " has ", n, " entries for ", sr.view.size(),
                            " view dims");
          }
          lt.stored_as = std::move(sr);
        }
        return Status::Ok();
      }));
  const size_t nt = tensors.size();
  GPUU_ASSIGN_OR_RETURN(std::vector<int32_t> inputs,
                        detail::checked_indices(loc, root->inputs(), "inputs", nt, "tensors"));
  GPUU_ASSIGN_OR_RETURN(std::vector<int32_t> outputs,
                        detail::checked_indices(loc, root->outputs(), "outputs", nt, "tensors"));
  // 1: input, 2: produced by a node.
  std::vector<uint8_t> state(nt, 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (state[static_cast<size_t>(inputs[i])])
      return loc.fail("inputs[", i, "] = ", inputs[i], " repeats an earlier input");
    state[static_cast<size_t>(inputs[i])] = 1;
  }
  for (size_t i = 0; i < nt; ++i) {
    if (tensors[i].constant && state[i] != 1) {
      return loc.fail("tensors[", i, "] ('", tensors[i].name, "') is a constant but not an input");
    }
  }

  struct LocalNode {
    std::string name, op;
    graph::AttrMap attrs;
    std::vector<int32_t> inputs, outputs;
    std::vector<graph::AttrExpr> attr_exprs;
  };
  std::vector<LocalNode> nodes;
  GPUU_RETURN_IF_ERROR(decode_named(
      loc, root->nodes(), "nodes", &nodes,
      [&](const fb::SgNode* n, const std::string& where, LocalNode& ln) -> Status {
        GPUU_ASSIGN_OR_RETURN(ln.op, detail::required_string(loc, n->op(), where + ".op"));
        GPUU_ASSIGN_OR_RETURN(ln.attrs, detail::decode_attrs(loc, n->attrs(), where + ".attrs"));
        GPUU_ASSIGN_OR_RETURN(ln.attr_exprs, detail::decode_attr_exprs(loc, n->attr_exprs(), ln.attrs,
                                                                       graph::kMaxSymbolicDims, where + ".attr_exprs"));
        GPUU_ASSIGN_OR_RETURN(ln.inputs, detail::checked_node_inputs(loc, n->inputs(), where + ".inputs", nt));
        GPUU_ASSIGN_OR_RETURN(ln.outputs,
                              detail::checked_indices(loc, n->outputs(), where + ".outputs", nt, "tensors"));
        for (size_t k = 0; k < ln.inputs.size(); ++k) {
          if (ln.inputs[k] < 0) continue;  // left out
          if (!state[static_cast<size_t>(ln.inputs[k])]) {
            return loc.fail(where, " ('", ln.name, "') reads tensors[", ln.inputs[k], "] ('",
                            tensors[static_cast<size_t>(ln.inputs[k])].name,
                            "') before any node produces it, and it is not an input");
          }
        }
        for (size_t k = 0; k < ln.outputs.size(); ++k) {
          uint8_t& s = state[static_cast<size_t>(ln.outputs[k])];
          if (s) {
            return loc.fail(where, " ('", ln.name, "') writes tensors[", ln.outputs[k], "] ('",
                            tensors[static_cast<size_t>(ln.outputs[k])].name, "'), already ",
                            s == 1 ? "an input" : "produced by an earlier node");
          }
          s = 2;
        }
        return Status::Ok();
      }));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!state[static_cast<size_t>(outputs[i])]) {
      return loc.fail("outputs[", i, "] = ", outputs[i], " ('", tensors[static_cast<size_t>(outputs[i])].name,
                      "') is never produced");
    }
  }

  graph::Graph g;
  std::vector<ValueId> remap(nt, graph::kNone);
  for (int32_t t : inputs) {
    const LocalTensor& lt = tensors[static_cast<size_t>(t)];
    if (lt.constant && lookup) {
      // Stored rearranged: the program constant's shape is the view permuted.
      const std::string& stored = lt.stored_as ? lt.stored_as->stored : lt.name;
      graph::Shape stored_shape = lt.shape;
      if (lt.stored_as) {
        stored_shape.resize(lt.stored_as->perm.size());
        for (size_t i = 0; i < stored_shape.size(); ++i) {
          stored_shape[i] = lt.stored_as->view[static_cast<size_t>(lt.stored_as->perm[i])];
        }
      }
      Result<Blob> blob = lookup(stored, lt.dtype, stored_shape);
      if (!blob.ok()) return blob.status();
      uint64_t expected = tensor_byte_size(lt.dtype, lt.shape, lt.name).value();  // checked above
      if (blob->size() != expected) {
        return loc.fail("constant '", stored, "' needs ", expected, " bytes, the lookup gave ", blob->size());
      }
      if (lt.stored_as) {
        blob = graph::permuted_blob(blob.value(), graph::dtype_size(lt.dtype), stored_shape,
                                    graph::inverse_perm(lt.stored_as->perm));
      }
      remap[static_cast<size_t>(t)] = g.add_constant(lt.name, lt.dtype, lt.shape, std::move(blob).value());
    } else {
      remap[static_cast<size_t>(t)] = g.add_input(lt.name, lt.dtype, lt.shape);
    }
  }
  for (size_t t = 0; t < nt; ++t) {
    if (remap[t] == graph::kNone) {
      remap[t] =
          g.add_value(graph::Value{tensors[t].name, tensors[t].dtype, tensors[t].shape, graph::kNone, graph::kNone});
    }
  }
  for (size_t t = 0; t < nt; ++t) g.mutable_value(remap[t]).dim_exprs = std::move(tensors[t].dim_exprs);
  auto map_ids = [&](const std::vector<int32_t>& ids) {
    std::vector<ValueId> out;
    out.reserve(ids.size());
    for (int32_t i : ids) out.push_back(i < 0 ? graph::kNone : remap[static_cast<size_t>(i)]);
    return out;
  };
  for (LocalNode& ln : nodes) {
    g.add_node(graph::Node{std::move(ln.name), std::move(ln.op), map_ids(ln.inputs), map_ids(ln.outputs),
                           std::move(ln.attrs), std::move(ln.attr_exprs)});
  }
  for (int32_t t : outputs) g.mark_output(remap[static_cast<size_t>(t)]);
  return g;
}

}  // namespace gpuu::program

// Program layout (flatbuffer, then deduplicated 64-byte aligned segments),
// atomic file writes, and the graph + partition -> program lowering.
#include "program/program_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include "program/fb_util.h"
#include "program/program_generated.h"
#include "program/program_loader.h"

namespace gpuu::program {
namespace {

uint64_t align_up(uint64_t v) { return (v + kSegmentAlignment - 1) / kSegmentAlignment * kSegmentAlignment; }

uint64_t fnv1a(const Blob& b) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < b.size(); ++i) h = (h ^ b.data()[i]) * 1099511628211ull;
  return h;
}

struct SegmentPlan {
  Blob data;
  std::vector<std::string> names;
};

// Stores each distinct byte string once, first come first placed.
class SegmentTable {
 public:
  uint32_t intern(const Blob& data, const std::string& name) {
    uint64_t h = fnv1a(data);
    auto range = by_hash_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      SegmentPlan& s = segments_[it->second];
      if (s.data.same_bytes(data)) {
        s.names.push_back(name);
        return static_cast<uint32_t>(it->second);
      }
    }
    by_hash_.emplace(h, segments_.size());
    segments_.push_back(SegmentPlan{data, {name}});
    return static_cast<uint32_t>(segments_.size() - 1);
  }
  const std::vector<SegmentPlan>& segments() const { return segments_; }

 private:
  std::vector<SegmentPlan> segments_;
  std::unordered_multimap<uint64_t, size_t> by_hash_;
};

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

}  // namespace

int32_t ProgramBuilder::add_tensor(std::string name, graph::DType dtype, graph::Shape shape,
                                   std::vector<graph::AxisExpr> dim_exprs) {
  tensors_.push_back(Tensor{std::move(name), dtype, std::move(shape), false, Blob(), std::move(dim_exprs)});
  return static_cast<int32_t>(tensors_.size() - 1);
}

int32_t ProgramBuilder::add_constant(std::string name, graph::DType dtype, graph::Shape shape, Blob data) {
  tensors_.push_back(Tensor{std::move(name), dtype, std::move(shape), true, std::move(data)});
  return static_cast<int32_t>(tensors_.size() - 1);
}

int32_t ProgramBuilder::add_delegate(DelegateDesc delegate) {
  delegates_.push_back(std::move(delegate));
  return static_cast<int32_t>(delegates_.size() - 1);
}

void ProgramBuilder::add_state(int32_t tensor, int32_t update, Blob initial) {
  states_.push_back(State{tensor, update, std::move(initial)});
}

void ProgramBuilder::add_delegate_call(int32_t delegate) {
  PlanStep step;
  step.kind = PlanStep::Kind::kDelegate;
  step.delegate = delegate;
  plan_.push_back(std::move(step));
}

void ProgramBuilder::add_cpu_node(CpuNodeInfo node) {
  PlanStep step;
  step.kind = PlanStep::Kind::kCpuNode;
  step.cpu_node = std::move(node);
  plan_.push_back(std::move(step));
}

Result<std::vector<uint8_t>> ProgramBuilder::finish() const {
  SegmentTable table;
  std::vector<int64_t> tensor_segment(tensors_.size(), -1);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].constant) tensor_segment[i] = table.intern(tensors_[i].data, tensors_[i].name);
  }
  std::vector<uint32_t> delegate_segment(delegates_.size());
  for (size_t i = 0; i < delegates_.size(); ++i) {
    delegate_segment[i] =
        table.intern(delegates_[i].processed, str_cat("delegate ", i, " (", delegates_[i].backend_id, ")"));
  }
  // A source equal to the processed blob (the Vulkan backend's) is stored once.
  std::vector<int32_t> source_segment(delegates_.size(), -1);
  for (size_t i = 0; i < delegates_.size(); ++i) {
    if (delegates_[i].source.empty()) continue;
    source_segment[i] = static_cast<int32_t>(
        table.intern(delegates_[i].source, str_cat("source of delegate ", i, " (", delegates_[i].backend_id, ")")));
  }
  std::vector<uint32_t> state_segment(states_.size());
  for (size_t i = 0; i < states_.size(); ++i) {
    const int32_t t = states_[i].tensor;
    std::string name = t >= 0 && static_cast<size_t>(t) < tensors_.size() ? tensors_[static_cast<size_t>(t)].name
                                                                         : str_cat("state ", i);
    state_segment[i] = table.intern(states_[i].initial, "initial value of state '" + name + "'");
  }
  const std::vector<SegmentPlan>& segments = table.segments();

  // Every scalar is written even at its default, so the flatbuffer's size does
  // not depend on the offsets: encode once to measure, once for real.
  auto encode = [&](uint64_t data_start, const std::vector<uint64_t>& offsets) {
    flatbuffers::FlatBufferBuilder fbb(4096);
    fbb.ForceDefaults(true);
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const Tensor& t = tensors_[i];
      auto name = fbb.CreateString(t.name);
      auto shape = fbb.CreateVector(t.shape);
      fb::ConstantRef ref(static_cast<uint32_t>(tensor_segment[i]));
      auto dims = detail::encode_axis_exprs(fbb, t.dim_exprs);
      tensors.push_back(
          fb::CreateTensor(fbb, name, detail::to_fb(t.dtype), shape, t.constant ? &ref : nullptr, dims));
    }
    std::vector<flatbuffers::Offset<fb::Segment>> segs;
    for (size_t i = 0; i < segments.size(); ++i) {
      auto names = fbb.CreateVectorOfStrings(segments[i].names);
      segs.push_back(fb::CreateSegment(fbb, offsets[i], segments[i].data.size(), names));
    }
    std::vector<flatbuffers::Offset<fb::Delegate>> delegates;
    for (size_t i = 0; i < delegates_.size(); ++i) {
      const DelegateDesc& d = delegates_[i];
      std::vector<flatbuffers::Offset<fb::CompileSpec>> specs;
      for (const CompileSpecEntry& e : d.compile_specs) {
        specs.push_back(fb::CreateCompileSpec(fbb, fbb.CreateString(e.key), fbb.CreateVector(e.value)));
      }
      std::vector<flatbuffers::Offset<fb::NodeRef>> nodes;
      for (const NodeRef& n : d.nodes) {
        nodes.push_back(fb::CreateNodeRef(fbb, fbb.CreateString(n.name), fbb.CreateString(n.op)));
      }
      auto backend = fbb.CreateString(d.backend_id);
      auto spec_list = fbb.CreateVector(specs);
      auto inputs = detail::encode_indices(fbb, d.inputs);
      auto outputs = detail::encode_indices(fbb, d.outputs);
      auto node_list = fbb.CreateVector(nodes);
      // By hand: with forced defaults, a static program would gain a source field of -1.
      // (In CreateDelegate's order, so that the bytes stay as they were.)
      fb::DelegateBuilder db(fbb);
      if (source_segment[i] >= 0) db.add_source(source_segment[i]);
      db.add_nodes(node_list);
      db.add_outputs(outputs);
      db.add_inputs(inputs);
      db.add_processed(delegate_segment[i]);
      db.add_compile_specs(spec_list);
      db.add_backend_id(backend);
      delegates.push_back(db.Finish());
    }
    std::vector<flatbuffers::Offset<fb::PlanStep>> plan;
    for (const PlanStep& s : plan_) {
      if (s.kind == PlanStep::Kind::kDelegate) {
        auto call = fb::CreateDelegateCall(fbb, static_cast<uint32_t>(s.delegate));
        plan.push_back(fb::CreatePlanStep(fbb, fb::Step::DelegateCall, call.Union()));
      } else {
        const CpuNodeInfo& n = s.cpu_node;
        auto name = fbb.CreateString(n.name);
        auto op = fbb.CreateString(n.op);
        auto attrs = detail::encode_attrs(fbb, n.attrs);
        auto inputs = detail::encode_indices(fbb, n.inputs);
        auto outputs = detail::encode_indices(fbb, n.outputs);
        auto exprs = detail::encode_attr_exprs(fbb, n.attr_exprs);
        auto node = fb::CreateCpuNode(fbb, name, op, attrs, inputs, outputs, exprs);
        plan.push_back(fb::CreatePlanStep(fbb, fb::Step::CpuNode, node.Union()));
      }
    }
    // Absent, not empty, without states: such programs stay 1.0, byte for byte.
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::State>>> states;
    if (!states_.empty()) {
      std::vector<flatbuffers::Offset<fb::State>> entries;
      for (size_t i = 0; i < states_.size(); ++i) {
        entries.push_back(fb::CreateState(fbb, static_cast<uint32_t>(states_[i].tensor),
                                          static_cast<uint32_t>(states_[i].update), state_segment[i]));
      }
      states = fbb.CreateVector(entries);
    }
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::SymbolicDim>>> dims;
    if (!dims_.empty()) {
      std::vector<flatbuffers::Offset<fb::SymbolicDim>> entries;
      for (const graph::SymbolicDim& d : dims_) {
        entries.push_back(fb::CreateSymbolicDim(fbb, fbb.CreateString(d.name), d.min, d.max, d.example));
      }
      dims = fbb.CreateVector(entries);
    }
    fb::FormatVersion version(std::max(states_.empty() ? kFormatMajor : kStatefulFormatMajor, min_format_major_),
                              dims_.empty() ? kFormatMinor : kSymbolicFormatMinor);
    auto tensor_list = fbb.CreateVector(tensors);
    auto inputs = detail::encode_indices(fbb, inputs_);
    auto outputs = detail::encode_indices(fbb, outputs_);
    auto seg_list = fbb.CreateVector(segs);
    auto delegate_list = fbb.CreateVector(delegates);
    auto plan_list = fbb.CreateVector(plan);
    auto root = fb::CreateProgram(fbb, &version, data_start, tensor_list, inputs, outputs, seg_list, delegate_list,
                                  plan_list, states, dims);
    fb::FinishProgramBuffer(fbb, root);
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  };

  std::vector<uint64_t> offsets(segments.size(), 0);
  const size_t measured = encode(0, offsets).size();
  const uint64_t data_start = align_up(measured);
  uint64_t cursor = data_start;
  for (size_t i = 0; i < segments.size(); ++i) {
    offsets[i] = cursor;
    cursor = align_up(cursor + segments[i].data.size());
  }
  std::vector<uint8_t> file = encode(data_start, offsets);
  if (file.size() != measured) {
    return err(StatusCode::kInternal, "program writer: the flatbuffer changed size between passes (", measured,
               " then ", file.size(), " bytes)");
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    file.resize(offsets[i], 0);  // zero padding up to the aligned offset
    file.insert(file.end(), segments[i].data.data(), segments[i].data.data() + segments[i].data.size());
  }
  if (file.size() < data_start) file.resize(data_start, 0);

  Status check = validate_program_bytes(file.data(), file.size());
  if (!check.ok()) return err(StatusCode::kInvalidArgument, "cannot write an inconsistent program: ", check.message());
  return file;
}

Status ProgramBuilder::write_file(const std::string& path) const {
  GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, finish());
  return write_file_atomically(path, bytes);
}

Status write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  if (path.empty()) return err(StatusCode::kInvalidArgument, "program: the output path is empty");
  // The temporary lives beside the target so that rename() stays on one file system.
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return err(StatusCode::kIo, "program: cannot create a temporary file for '", path, "': ", errno_text(errno));
  auto fail = [&](const char* what, int e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return err(StatusCode::kIo, "program: cannot ", what, " '", tmp, "' (for '", path, "'): ", errno_text(e));
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write", errno);
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) return fail("set permissions of", errno);
  if (::fsync(fd) != 0) return fail("flush", errno);
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return err(StatusCode::kIo, "program: cannot close '", tmp, "': ", errno_text(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return err(StatusCode::kIo, "program: cannot rename '", tmp, "' to '", path, "': ", errno_text(e));
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> build_program(const graph::Graph& g, const partition::PartitionResult& partition,
                                           const SharedGpuCompileSpec& shared_spec,
                                           const Preprocessors& preprocessors,
                                           const CallerCompileSpecs& caller_specs) {
  using graph::NodeId;
  using graph::ValueId;
  const size_t nv = g.values().size();
  const size_t nn = g.nodes().size();
  auto bad = [](const auto&... parts) { return err(StatusCode::kInvalidArgument, parts...); };

  // The graph and the partition come from callers: check the ids we index with.
  for (const graph::Node& node : g.nodes()) {
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (ValueId v : *list) {
        if (v == graph::kNone && list == &node.inputs) continue;  // an optional input left out
        if (v < 0 || static_cast<size_t>(v) >= nv) {
          return bad("graph: node '", node.name, "' refers to value id ", v, ", out of range (", nv, " values)");
        }
      }
    }
  }
  for (const auto* list : {&g.inputs(), &g.outputs()}) {
    for (ValueId v : *list) {
      if (v < 0 || static_cast<size_t>(v) >= nv) {
        return bad("graph: ", list == &g.inputs() ? "input" : "output", " value id ", v, " is out of range (", nv,
                   " values)");
      }
    }
  }
  for (const graph::State& state : g.states()) {
    if (state.update == graph::kNone && state.value >= 0 && static_cast<size_t>(state.value) < nv) {
      return bad("graph: state '", g.value(state.value).name, "' has no update");
    }
    for (ValueId v : {state.value, state.update}) {
      if (v < 0 || static_cast<size_t>(v) >= nv) {
        return bad("graph: a state refers to value id ", v, ", out of range (", nv, " values)");
      }
    }
  }
  for (size_t v = 0; v < nv; ++v) {
    int32_t c = g.values()[v].constant;
    if (c != graph::kNone && (c < 0 || static_cast<size_t>(c) >= g.constants().size())) {
      return bad("graph: value '", g.values()[v].name, "' refers to constant ", c, ", out of range");
    }
  }
  std::vector<int32_t> region_of(nn, -1);
  for (size_t r = 0; r < partition.regions.size(); ++r) {
    const partition::Region& region = partition.regions[r];
    if (region.backend.empty()) return bad("partition: region ", r, " has an empty backend id");
    if (region.nodes.empty()) return bad("partition: region ", r, " (", region.backend, ") is empty");
    for (NodeId n : region.nodes) {
      if (n < 0 || static_cast<size_t>(n) >= nn) {
        return bad("partition: region ", r, " lists node id ", n, ", out of range (", nn, " nodes)");
      }
      int32_t& owner = region_of[static_cast<size_t>(n)];
      if (owner >= 0) {
        return bad("partition: node '", g.node(n).name, "' is in region ", owner, " and region ", r);
      }
      owner = static_cast<int32_t>(r);
    }
  }
  // Dead nodes (results reaching no graph output) are in no region, live ones in one each.
  const std::vector<uint8_t> live = g.live_nodes();
  for (size_t n = 0; n < nn; ++n) {
    if (!live[n] && region_of[n] >= 0) {
      return bad("partition: node '", g.nodes()[n].name, "' is dead (its results reach no graph output), but region ",
                 region_of[n], " (", partition.regions[static_cast<size_t>(region_of[n])].backend,
                 ") holds it; dead nodes belong to no region");
    }
    if (live[n] && region_of[n] < 0) return bad("partition: node '", g.nodes()[n].name, "' is in no region");
    if (!partition.region_of_node.empty() &&
        (partition.region_of_node.size() != nn || partition.region_of_node[n] != region_of[n])) {
      return bad("partition: region_of_node disagrees with the regions about node '", g.nodes()[n].name, "'");
    }
  }

  // Which values become program tensors.
  std::vector<char> needed(nv, 0);
  for (ValueId v : g.inputs()) needed[static_cast<size_t>(v)] = 1;
  for (ValueId v : g.outputs()) needed[static_cast<size_t>(v)] = 1;
  for (const graph::State& state : g.states()) needed[static_cast<size_t>(state.value)] = 1;
  for (const graph::State& state : g.states()) needed[static_cast<size_t>(state.update)] = 1;
  std::vector<RegionIo> ios(partition.regions.size());
  for (size_t r = 0; r < partition.regions.size(); ++r) {
    const partition::Region& region = partition.regions[r];
    if (region.backend == partition::kCpuId) {
      for (NodeId n : region.nodes) {
        for (ValueId v : g.node(n).inputs) {
          if (v != graph::kNone) needed[static_cast<size_t>(v)] = 1;
        }
        for (ValueId v : g.node(n).outputs) needed[static_cast<size_t>(v)] = 1;
      }
    } else {
      Result<RegionIo> io = region_io(g, region);
      if (!io.ok()) return bad("partition: region ", r, " (", region.backend, "): ", io.status().message());
      ios[r] = std::move(io).value();
      for (ValueId v : ios[r].inputs) needed[static_cast<size_t>(v)] = 1;
      for (ValueId v : ios[r].outputs) needed[static_cast<size_t>(v)] = 1;
    }
  }

  // Each value that may become a program tensor needs a unique name, and a
  // constant its bytes: checked before any backend sees the graph.
  std::unordered_map<std::string, ValueId> names;
  for (size_t v = 0; v < nv; ++v) {
    if (!needed[v]) continue;
    const graph::Value& value = g.values()[v];
    if (value.name.empty()) return bad("graph: value ", v, " has no name");
    auto [it, inserted] = names.emplace(value.name, static_cast<ValueId>(v));
    if (!inserted) return bad("graph: values ", it->second, " and ", v, " are both named '", value.name, "'");
    if (value.constant != graph::kNone) {
      const graph::Constant& c = g.constants()[static_cast<size_t>(value.constant)];
      GPUU_ASSIGN_OR_RETURN(uint64_t expected,
                            tensor_byte_size(value.dtype, value.shape, "constant '" + value.name + "'"));
      if (c.data.size() != expected) {
        return bad("graph: constant '", value.name, "' holds ", c.data.size(), " bytes, its ",
                   graph::dtype_name(value.dtype), " ", graph::shape_to_string(value.shape), " needs ", expected);
      }
    }
  }

  // Each GPU region preprocessed by its backend.
  const std::vector<CompileSpecEntry> shared_specs = make_shared_gpu_compile_specs(shared_spec);
  std::vector<PreprocessedRegion> pres(partition.regions.size());
  std::vector<std::vector<CompileSpecEntry>> region_specs(partition.regions.size());
  for (size_t r = 0; r < partition.regions.size(); ++r) {
    const partition::Region& region = partition.regions[r];
    if (region.backend == partition::kCpuId) continue;
    const std::string& id = region.backend;
    std::vector<CompileSpecEntry>& specs = region_specs[r];
    specs = shared_specs;
    specs.insert(specs.end(), caller_specs.shared.begin(), caller_specs.shared.end());
    auto own = caller_specs.by_backend.find(id);
    if (own != caller_specs.by_backend.end()) specs.insert(specs.end(), own->second.begin(), own->second.end());
    Result<SharedGpuCompileSpec> checked = parse_shared_gpu_compile_spec(specs);
    if (!checked.ok()) return bad("region ", r, " (", id, "): compile specs: ", checked.status().message());
    auto fn = preprocessors.find(id);
    if (fn != preprocessors.end() && fn->second) {
      Result<PreprocessedRegion> out = fn->second(g, region, ios[r], specs);
      if (!out.ok()) {
        return Status(out.status().code(), str_cat("region ", r, " (", region.backend,
                                                   "): preprocess failed: ", out.status().message()));
      }
      pres[r] = std::move(out).value();
    } else {
      Result<std::vector<uint8_t>> blob = serialize_region(g, region);
      if (!blob.ok()) return bad("region ", r, " (", region.backend, "): ", blob.status().message());
      pres[r].processed = Blob::take(std::move(blob).value());
    }
  }

  // A constant is stored where a graph output, a state, a CPU node or a
  // delegate reads it from the program. A blob holding a constant itself
  // (constants_read leaves it out) reads it from nowhere; a source (with dims)
  // names every constant of its region: as it is, or as the copy its blob
  // reads rearranged, where nothing else reads it as it is.
  auto is_constant = [&](ValueId v) { return g.values()[static_cast<size_t>(v)].constant != graph::kNone; };
  std::vector<std::vector<char>> reads(partition.regions.size());
  for (size_t r = 0; r < partition.regions.size(); ++r) {
    if (partition.regions[r].backend == partition::kCpuId) continue;
    const std::vector<ValueId>& ins = ios[r].inputs;
    reads[r].assign(ins.size(), 1);
    const std::optional<std::vector<std::string>>& listed = pres[r].constants_read;
    if (!listed) continue;
    std::unordered_set<std::string> named(listed->begin(), listed->end());
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!is_constant(ins[i])) continue;
      reads[r][i] = named.erase(g.value(ins[i]).name) ? 1 : 0;
    }
    if (!named.empty()) {
      return bad("region ", r, " (", partition.regions[r].backend, "): its blob reads '", *named.begin(),
                 "' from the program, which is no constant input of the region");
    }
  }
  std::vector<char> stored(nv, 0);
  for (size_t v = 0; v < nv; ++v) stored[v] = needed[v] && !is_constant(static_cast<ValueId>(v));
  for (ValueId v : g.inputs()) stored[static_cast<size_t>(v)] = 1;
  for (ValueId v : g.outputs()) stored[static_cast<size_t>(v)] = 1;
  for (size_t r = 0; r < partition.regions.size(); ++r) {
    const partition::Region& region = partition.regions[r];
    if (region.backend == partition::kCpuId) {
      for (NodeId n : region.nodes) {
        for (ValueId v : g.node(n).inputs) {
          if (v != graph::kNone) stored[static_cast<size_t>(v)] = 1;
        }
      }
      continue;
    }
    for (size_t i = 0; i < ios[r].inputs.size(); ++i) {
      if (reads[r][i]) stored[static_cast<size_t>(ios[r].inputs[i])] = 1;
    }
  }
  // With dims, each region's source names the constants its blob leaves out:
  // as the rearranged copy the blob reads, where there is one and nothing
  // stores the constant as it is, else as it is (then stored).
  std::vector<std::map<std::string, StoredRearranged>> rearranged(partition.regions.size());
  if (!g.dims().empty()) {
    std::vector<std::map<std::string, const AddedConstant*>> copies(partition.regions.size());
    for (size_t r = 0; r < partition.regions.size(); ++r) {
      if (partition.regions[r].backend == partition::kCpuId) continue;
      for (const AddedConstant& c : pres[r].added_constants) {
        if (c.rearranges.empty()) continue;
        graph::Shape shape(c.perm.size());
        bool fits = c.view.size() == c.perm.size();
        for (size_t i = 0; fits && i < c.perm.size(); ++i) {
          fits = c.perm[i] >= 0 && static_cast<size_t>(c.perm[i]) < c.view.size();
          if (fits) shape[i] = c.view[static_cast<size_t>(c.perm[i])];
        }
        auto source = names.find(c.rearranges);
        if (!fits || shape != c.shape || source == names.end() || g.value(source->second).dtype != c.dtype ||
            graph::shape_numel(g.value(source->second).shape) != graph::shape_numel(c.view)) {
          return bad("region ", r, " (", partition.regions[r].backend, "): its blob adds '", c.name,
                     "' as a rearrangement of '", c.rearranges, "' that does not fit either");
        }
        copies[r].emplace(c.rearranges, &c);
      }
    }
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t r = 0; r < partition.regions.size(); ++r) {
        if (partition.regions[r].backend == partition::kCpuId) continue;
        for (size_t i = 0; i < ios[r].inputs.size(); ++i) {
          const ValueId v = ios[r].inputs[i];
          if (reads[r][i] || !is_constant(v)) continue;
          auto copy = copies[r].find(g.value(v).name);
          // First every constant without a copy is stored, then a copy stands
          // in for one that nothing stores.
          if (pass == 0 && copy != copies[r].end()) continue;
          if (pass == 1 && !stored[static_cast<size_t>(v)]) {
            rearranged[r][copy->first] = StoredRearranged{copy->second->name, copy->second->view, copy->second->perm};
            continue;
          }
          reads[r][i] = 1;
          stored[static_cast<size_t>(v)] = 1;
        }
      }
    }
  }

  ProgramBuilder builder;
  std::vector<int32_t> tensor_of(nv, -1);
  for (size_t v = 0; v < nv; ++v) {
    if (!stored[v]) continue;
    const graph::Value& value = g.values()[v];
    if (value.constant != graph::kNone) {
      tensor_of[v] = builder.add_constant(value.name, value.dtype, value.shape,
                                          g.constants()[static_cast<size_t>(value.constant)].data);
    } else {
      tensor_of[v] = builder.add_tensor(value.name, value.dtype, value.shape, value.dim_exprs);
    }
  }
  // Added constants after the graph's, in region order; one per name.
  std::unordered_map<std::string, const AddedConstant*> added;
  for (size_t r = 0; r < partition.regions.size(); ++r) {
    for (const AddedConstant& c : pres[r].added_constants) {
      auto clash = [&](const auto&... parts) {
        return bad("region ", r, " (", partition.regions[r].backend, "): its blob adds program constant '", c.name,
                   "', ", parts...);
      };
      if (names.count(c.name)) return clash("the name of a graph value");
      auto [it, inserted] = added.emplace(c.name, &c);
      if (!inserted) {
        const AddedConstant& o = *it->second;
        if (o.dtype != c.dtype || o.shape != c.shape || !o.data.same_bytes(c.data)) {
          return clash("which an earlier region adds with other contents");
        }
        continue;
      }
      GPUU_ASSIGN_OR_RETURN(uint64_t expected, tensor_byte_size(c.dtype, c.shape, "constant '" + c.name + "'"));
      if (c.data.size() != expected) {
        return clash("of ", c.data.size(), " bytes; its ", graph::dtype_name(c.dtype), " ",
                     graph::shape_to_string(c.shape), " needs ", expected);
      }
      builder.add_constant(c.name, c.dtype, c.shape, c.data);
    }
  }
  auto to_tensors = [&](const std::vector<ValueId>& ids) {
    std::vector<int32_t> out;
    out.reserve(ids.size());
    for (ValueId v : ids) out.push_back(v == graph::kNone ? -1 : tensor_of[static_cast<size_t>(v)]);
    return out;
  };
  builder.set_dims(g.dims());
  builder.set_inputs(to_tensors(g.inputs()));
  builder.set_outputs(to_tensors(g.outputs()));
  for (const graph::State& state : g.states()) {
    builder.add_state(tensor_of[static_cast<size_t>(state.value)], tensor_of[static_cast<size_t>(state.update)],
                      state.initial);
  }

  for (size_t r = 0; r < partition.regions.size(); ++r) {
    const partition::Region& region = partition.regions[r];
    if (region.backend == partition::kCpuId) {
      for (NodeId n : region.nodes) {
        const graph::Node& node = g.node(n);
        builder.add_cpu_node(CpuNodeInfo{node.name, node.op, node.attrs, to_tensors(node.inputs),
                                         to_tensors(node.outputs), node.attr_exprs});
      }
      continue;
    }
    PreprocessedRegion& pre = pres[r];
    DelegateDesc d;
    d.backend_id = region.backend;
    d.compile_specs = std::move(region_specs[r]);
    d.compile_specs.insert(d.compile_specs.end(), pre.extra_compile_specs.begin(), pre.extra_compile_specs.end());
    d.processed = std::move(pre.processed);
    if (!g.dims().empty()) {
      Result<std::vector<uint8_t>> source = serialize_region(g, region, rearranged[r]);
      if (!source.ok()) return bad("region ", r, " (", region.backend, "): ", source.status().message());
      d.source = Blob::take(std::move(source).value());
      if (!rearranged[r].empty()) builder.require_format_major(kRearrangedSourcesFormatMajor);
    }
    // The delegate's inputs: what it reads from the program among its region's inputs.
    std::vector<ValueId> inputs;
    for (size_t i = 0; i < ios[r].inputs.size(); ++i) {
      if (reads[r][i]) inputs.push_back(ios[r].inputs[i]);
    }
    d.inputs = to_tensors(inputs);
    d.outputs = to_tensors(ios[r].outputs);
    for (NodeId n : region.nodes) d.nodes.push_back(NodeRef{g.node(n).name, g.node(n).op});
    builder.require_format_major(pres[r].format_major);
    builder.add_delegate_call(builder.add_delegate(std::move(d)));
  }
  return builder.finish();
}

}  // namespace gpuu::program

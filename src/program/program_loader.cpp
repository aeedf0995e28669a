// The program loader: flatbuffers verification for memory safety, then the
// semantic checks the verifier cannot know (indices, sizes, data flow).
#include "program/program_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <new>
#include <system_error>
#include <unordered_map>

#include "program/fb_util.h"
#include "program/program_generated.h"

namespace gpuu::program {

using detail::Locator;

class ProgramDecoder {
 public:
  explicit ProgramDecoder(Blob file) : file_(std::move(file)), loc_("program", file_.data()) {}

  Result<std::shared_ptr<const Program>> decode() {
    auto program = std::make_shared<Program>();
    p_ = program.get();
    p_->file_ = file_;
    GPUU_RETURN_IF_ERROR(verify());
    GPUU_RETURN_IF_ERROR(decode_segments());
    GPUU_RETURN_IF_ERROR(decode_dims());
    GPUU_RETURN_IF_ERROR(decode_tensors());
    GPUU_ASSIGN_OR_RETURN(p_->inputs_, decode_io(root_->inputs(), "inputs"));
    GPUU_ASSIGN_OR_RETURN(p_->outputs_, decode_io(root_->outputs(), "outputs"));
    for (int32_t t : p_->inputs_) {
      if (p_->tensors_[static_cast<size_t>(t)].is_constant()) {
        return loc_.fail("inputs: tensor ", t, " (", tensor_name(t), ") is a constant, not a graph input");
      }
    }
    GPUU_RETURN_IF_ERROR(decode_delegates());
    GPUU_RETURN_IF_ERROR(decode_plan());
    GPUU_RETURN_IF_ERROR(decode_states());
    GPUU_RETURN_IF_ERROR(check_data_flow());
    return std::shared_ptr<const Program>(std::move(program));
  }

 private:
  std::string tensor_name(int32_t t) const { return "'" + p_->tensors_[static_cast<size_t>(t)].name + "'"; }

  Status verify() {
    const uint8_t* data = file_.data();
    const size_t size = file_.size();
    if (size < 8) return loc_.fail("file of ", size, " bytes is too small to hold a program");
    if (!fb::ProgramBufferHasIdentifier(data)) {
      return loc_.fail("not a gpuu program: file identifier (bytes 4..7) is '",
                       detail::printable_identifier(data, size), "', expected '", kProgramFileIdentifier, "'");
    }
    // The verifier refuses buffers of 2 GiB or more; the flatbuffer itself is
    // small and comes first, so verifying the first part is enough for now.
    size_t verify_size = std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
    {
      flatbuffers::Verifier verifier(data, verify_size);
      if (!fb::VerifyProgramBuffer(verifier)) {
        return loc_.fail("the flatbuffer of ", size, " bytes is corrupt or truncated (verification failed)");
      }
    }
    root_ = fb::GetProgram(data);
    const fb::FormatVersion* version = root_->version();
    if (!version) return loc_.fail("format version is missing");
    p_->format_major_ = version->major();
    p_->format_minor_ = version->minor();
    if (version->major() < kFormatMajor || version->major() > kRearrangedSourcesFormatMajor) {
      return err(StatusCode::kUnsupported, "program: format version ", version->major(), ".", version->minor(),
                 " is not supported (this reader reads ", kFormatMajor, ".x to ", kRearrangedSourcesFormatMajor,
                 ".x)");
    }
    uint64_t data_start = root_->data_start();
    const void* field = detail::field_address(root_, fb::Program::VT_DATA_START);
    if (data_start > size) {
      return loc_.fail("data_start ", data_start, loc_.at(field), " lies past end of file (", size, " bytes)");
    }
    if (data_start % kSegmentAlignment != 0) {
      return loc_.fail("data_start ", data_start, loc_.at(field), " is not a multiple of ", kSegmentAlignment);
    }
    if (data_start >= FLATBUFFERS_MAX_BUFFER_SIZE) {
      return loc_.fail("data_start ", data_start, loc_.at(field), ": the flatbuffer part must be under 2 GiB");
    }
    // Segments must not alias the flatbuffer: all of it has to lie before data_start.
    flatbuffers::Verifier verifier(data, static_cast<size_t>(data_start));
    if (!fb::VerifyProgramBuffer(verifier)) {
      return loc_.fail("the flatbuffer extends past data_start ", data_start, loc_.at(field));
    }
    p_->data_start_ = data_start;
    return Status::Ok();
  }

  Status decode_segments() {
    const auto* segments = root_->segments();
    if (!segments) return Status::Ok();
    const uint64_t size = file_.size();
    for (uint32_t i = 0; i < segments->size(); ++i) {
      const fb::Segment* s = segments->Get(i);
      SegmentInfo info;
      info.offset = s->offset();
      info.size = s->size();
      if (const auto* names = s->names()) {
        for (uint32_t n = 0; n < names->size(); ++n) info.names.push_back(names->Get(n)->str());
      }
      std::string label = str_cat("segment ", i, info.names.empty() ? "" : " ('" + info.names[0] + "')");
      std::string at = loc_.at(s);
      if (info.offset % kSegmentAlignment != 0) {
        return loc_.fail(label, " at offset ", info.offset, " is not ", kSegmentAlignment, "-byte aligned", at);
      }
      if (info.offset < p_->data_start_) {
        return loc_.fail(label, " at offset ", info.offset, " lies inside the flatbuffer (data starts at ",
                         p_->data_start_, ")", at);
      }
      uint64_t end = 0;
      if (__builtin_add_overflow(info.offset, info.size, &end) || end > size) {
        return loc_.fail(label, " at offset ", info.offset, " size ", info.size, " lies past end of file (", size,
                         " bytes)", at);
      }
      p_->segments_.push_back(std::move(info));
    }
    return Status::Ok();
  }

  // Runs decode(entry, i, where) on each entry of an optional table list of
  // the flatbuffer, `where` being "<name>[i]"; stops at the first failure.
  template <typename Table, typename Decode>
  Status decode_each(const flatbuffers::Vector<flatbuffers::Offset<Table>>* list, const char* name, Decode decode) {
    if (!list) return Status::Ok();
    for (uint32_t i = 0; i < list->size(); ++i) {
      GPUU_RETURN_IF_ERROR(decode(list->Get(i), i, str_cat(name, "[", i, "]")));
    }
    return Status::Ok();
  }

  // The dims: unique names, 0 <= min <= example <= max, at most kMaxSymbolicDims.
  Status decode_dims() {
    const auto* dims = root_->dims();
    if (!dims || dims->size() == 0) return Status::Ok();
    if (dims->size() > graph::kMaxSymbolicDims) {
      return loc_.fail("dims", loc_.at(dims), " lists ", dims->size(), " dims, more than ", graph::kMaxSymbolicDims);
    }
    std::unordered_map<std::string, uint32_t> names;
    for (uint32_t i = 0; i < dims->size(); ++i) {
      const fb::SymbolicDim* d = dims->Get(i);
      const std::string where = str_cat("dims[", i, "]");
      graph::SymbolicDim dim;
      GPUU_ASSIGN_OR_RETURN(dim.name, detail::required_string(loc_, d->name(), where + ".name"));
      auto [it, inserted] = names.emplace(dim.name, i);
      if (!inserted) return loc_.fail(where, ".name '", dim.name, "'", loc_.at(d), " repeats dims[", it->second, "]");
      dim.min = d->min();
      dim.max = d->max();
      dim.example = d->example();
      if (!graph::dim_bounds_ordered(dim)) {
        return loc_.fail(where, " ('", dim.name, "')", loc_.at(d), ": min ", dim.min, ", example ", dim.example,
                         ", max ", dim.max, " are not ordered 0 <= min <= example <= max <= ", graph::kMaxDim);
      }
      p_->dims_.push_back(std::move(dim));
    }
    return Status::Ok();
  }

  Status decode_tensors() {
    return decode_each(root_->tensors(), "tensors",
                     [&](const fb::Tensor* t, uint32_t i, const std::string& where) -> Status {
      TensorInfo info;
      GPUU_ASSIGN_OR_RETURN(info.name, detail::required_string(loc_, t->name(), where + ".name"));
      auto [it, inserted] = p_->tensor_index_.emplace(info.name, static_cast<int32_t>(i));
      if (!inserted) {
        return loc_.fail(where, ".name '", info.name, "'", loc_.at(t->name()), " repeats tensors[", it->second, "]");
      }
      GPUU_ASSIGN_OR_RETURN(
          info.dtype,
          detail::checked_dtype(loc_, t->dtype(), detail::field_address(t, fb::Tensor::VT_DTYPE), where + ".dtype"));
      GPUU_ASSIGN_OR_RETURN(info.shape, detail::checked_shape(loc_, t->shape(), info.dtype, where + ".shape"));
      if (const fb::ConstantRef* c = t->constant()) {
        uint32_t seg = c->segment();
        if (seg >= p_->segments_.size()) {
          return loc_.fail(where, ".constant.segment = ", seg, loc_.at(c), " is out of range (", p_->segments_.size(),
                           " segments)");
        }
        uint64_t expected = tensor_byte_size(info.dtype, info.shape, where).value();  // checked_shape passed
        uint64_t stored = p_->segments_[seg].size;
        if (stored != expected) {
          return loc_.fail(where, " ('", info.name, "') is ", graph::dtype_name(info.dtype), " ",
                           graph::shape_to_string(info.shape), " (", expected, " bytes) but its segment ", seg,
                           " holds ", stored, " bytes");
        }
        info.segment = static_cast<int32_t>(seg);
      }
      GPUU_ASSIGN_OR_RETURN(info.dim_exprs, detail::decode_axis_exprs(loc_, t->dims(), info.shape.size(),
                                                                      p_->dims_.size(), where + ".dims"));
      if (info.is_constant() && !info.dim_exprs.empty()) {
        return loc_.fail(where, " ('", info.name, "') is a constant whose shape follows dims");
      }
      p_->tensors_.push_back(std::move(info));
      return Status::Ok();
    });
  }

  Result<std::vector<int32_t>> decode_io(const flatbuffers::Vector<uint32_t>* vec, const char* what) {
    GPUU_ASSIGN_OR_RETURN(std::vector<int32_t> ids,
                          detail::checked_indices(loc_, vec, what, p_->tensors_.size(), "tensors"));
    GPUU_RETURN_IF_ERROR(check_unique(vec, ids, what));
    return ids;
  }

  // A tensor listed twice in one inputs/outputs list would be bound twice.
  Status check_unique(const flatbuffers::Vector<uint32_t>* vec, const std::vector<int32_t>& ids,
                      const std::string& what) {
    std::unordered_map<int32_t, size_t> seen;
    for (size_t i = 0; i < ids.size(); ++i) {
      auto [it, inserted] = seen.emplace(ids[i], i);
      if (!inserted) {
        return loc_.fail(what, "[", i, "] = ", ids[i], loc_.at(vec->Data() + i * sizeof(uint32_t)), " (",
                         tensor_name(ids[i]), ") repeats ", what, "[", it->second, "]");
      }
    }
    return Status::Ok();
  }

  Status claim_node_name(const std::string& name, const std::string& where, const flatbuffers::String* field) {
    auto [it, inserted] = node_names_.emplace(name, where);
    if (!inserted) return loc_.fail(where, ".name '", name, "'", loc_.at(field), " repeats ", it->second);
    return Status::Ok();
  }

  Status decode_delegates() {
    GPUU_RETURN_IF_ERROR(decode_each(root_->delegates(), "delegates",
                     [&](const fb::Delegate* d, uint32_t /*i*/, const std::string& where) -> Status {
      DelegateInfo info;
      GPUU_ASSIGN_OR_RETURN(info.backend_id, detail::required_string(loc_, d->backend_id(), where + ".backend_id"));
      if (const auto* specs = d->compile_specs()) {
        std::unordered_map<std::string, uint32_t> keys;
        for (uint32_t s = 0; s < specs->size(); ++s) {
          const fb::CompileSpec* spec = specs->Get(s);
          std::string swhere = str_cat(where, ".compile_specs[", s, "]");
          CompileSpecEntry entry;
          GPUU_ASSIGN_OR_RETURN(entry.key, detail::required_string(loc_, spec->key(), swhere + ".key"));
          auto [it, inserted] = keys.emplace(entry.key, s);
          if (!inserted) {
            return loc_.fail(swhere, ".key '", entry.key, "'", loc_.at(spec->key()), " repeats ", where,
                             ".compile_specs[", it->second, "]");
          }
          if (const auto* value = spec->value()) entry.value.assign(value->begin(), value->end());
          info.compile_specs.push_back(std::move(entry));
        }
      }
      // Refuse bad shared keys now, with the delegate named, not at init.
      Result<SharedGpuCompileSpec> shared = parse_shared_gpu_compile_spec(info.compile_specs);
      if (!shared.ok()) return loc_.fail(where, ".compile_specs: ", shared.status().message());
      info.shared = std::move(shared).value();

      uint32_t processed = d->processed();
      if (processed >= p_->segments_.size()) {
        return loc_.fail(where, ".processed = ", processed,
                         loc_.at(detail::field_address(d, fb::Delegate::VT_PROCESSED)), " is out of range (",
                         p_->segments_.size(), " segments)");
      }
      info.processed_segment = static_cast<int32_t>(processed);
      const int32_t source = d->source();
      if (source != -1 && (p_->dims_.empty() || source < 0 || static_cast<size_t>(source) >= p_->segments_.size())) {
        return loc_.fail(where, ".source = ", source, loc_.at(detail::field_address(d, fb::Delegate::VT_SOURCE)),
                         p_->dims_.empty() ? " in a program without dims" : " is out of range");
      }
      if (source == -1 && !p_->dims_.empty()) {
        return loc_.fail(where, " (", info.backend_id, ") has no source, which a program with dims needs");
      }
      info.source_segment = source;
      GPUU_ASSIGN_OR_RETURN(
          info.inputs, detail::checked_indices(loc_, d->inputs(), where + ".inputs", p_->tensors_.size(), "tensors"));
      GPUU_RETURN_IF_ERROR(check_unique(d->inputs(), info.inputs, where + ".inputs"));
      GPUU_ASSIGN_OR_RETURN(info.outputs, detail::checked_indices(loc_, d->outputs(), where + ".outputs",
                                                                  p_->tensors_.size(), "tensors"));
      GPUU_RETURN_IF_ERROR(check_unique(d->outputs(), info.outputs, where + ".outputs"));
      if (info.outputs.empty()) return loc_.fail(where, " (", info.backend_id, ") has no outputs");
      const auto* nodes = d->nodes();
      if (!nodes || nodes->size() == 0) return loc_.fail(where, " (", info.backend_id, ") took no graph nodes");
      for (uint32_t n = 0; n < nodes->size(); ++n) {
        const fb::NodeRef* node = nodes->Get(n);
        std::string nwhere = str_cat(where, ".nodes[", n, "]");
        NodeRef ref;
        GPUU_ASSIGN_OR_RETURN(ref.name, detail::required_string(loc_, node->name(), nwhere + ".name"));
        GPUU_ASSIGN_OR_RETURN(ref.op, detail::required_string(loc_, node->op(), nwhere + ".op"));
        GPUU_RETURN_IF_ERROR(claim_node_name(ref.name, nwhere, node->name()));
        info.nodes.push_back(std::move(ref));
      }
      p_->delegates_.push_back(std::move(info));
      return Status::Ok();
    }));
    return agree_on_sync_mode();
  }

  // Sync mode is a property of the whole execute (how delegates are chained),
  // so every delegate must carry the same one.
  Status agree_on_sync_mode() {
    if (p_->delegates_.empty()) return Status::Ok();
    p_->sync_mode_ = p_->delegates_[0].shared.sync_mode;
    bool agree = true;
    for (const DelegateInfo& d : p_->delegates_) agree = agree && d.shared.sync_mode == p_->sync_mode_;
    if (agree) return Status::Ok();
    std::string listing;
    for (size_t d = 0; d < p_->delegates_.size(); ++d) {
      listing += str_cat(d ? ", " : "", "delegates[", d, "] (", p_->delegates_[d].backend_id, ") ",
                         to_string(p_->delegates_[d].shared.sync_mode));
    }
    return loc_.fail("delegates disagree on ", kSpecSyncMode, ": ", listing,
                     " (one execute chains all delegates one way)");
  }

  Status decode_plan() {
    return decode_each(root_->plan(), "plan",
                     [&](const fb::PlanStep* step, uint32_t /*i*/, const std::string& where) -> Status {
      PlanStep out;
      // A union may carry a type with no table; the verifier lets that through.
      if (step->step_type() != fb::Step::NONE && !step->step()) {
        return loc_.fail(where, loc_.at(step), ": the step's table is missing");
      }
      switch (step->step_type()) {
        case fb::Step::DelegateCall: {
          const fb::DelegateCall* call = step->step_as_DelegateCall();
          uint32_t d = call->delegate();
          if (d >= p_->delegates_.size()) {
            return loc_.fail(where, ".delegate = ", d,
                             loc_.at(detail::field_address(call, fb::DelegateCall::VT_DELEGATE)), " is out of range (",
                             p_->delegates_.size(), " delegates)");
          }
          out.kind = PlanStep::Kind::kDelegate;
          out.delegate = static_cast<int32_t>(d);
          break;
        }
        case fb::Step::CpuNode: {
          const fb::CpuNode* node = step->step_as_CpuNode();
          CpuNodeInfo& cpu = out.cpu_node;
          out.kind = PlanStep::Kind::kCpuNode;
          GPUU_ASSIGN_OR_RETURN(cpu.name, detail::required_string(loc_, node->name(), where + ".name"));
          GPUU_ASSIGN_OR_RETURN(cpu.op, detail::required_string(loc_, node->op(), where + ".op"));
          GPUU_RETURN_IF_ERROR(claim_node_name(cpu.name, where, node->name()));
          GPUU_ASSIGN_OR_RETURN(cpu.attrs, detail::decode_attrs(loc_, node->attrs(), where + ".attrs"));
          GPUU_ASSIGN_OR_RETURN(cpu.attr_exprs, detail::decode_attr_exprs(loc_, node->attr_exprs(), cpu.attrs,
                                                                          p_->dims_.size(), where + ".attr_exprs"));
          GPUU_ASSIGN_OR_RETURN(cpu.inputs, detail::checked_node_inputs(loc_, node->inputs(), where + ".inputs",
                                                                        p_->tensors_.size()));
          GPUU_ASSIGN_OR_RETURN(cpu.outputs, detail::checked_indices(loc_, node->outputs(), where + ".outputs",
                                                                     p_->tensors_.size(), "tensors"));
          GPUU_RETURN_IF_ERROR(check_unique(node->outputs(), cpu.outputs, where + ".outputs"));
          if (cpu.outputs.empty()) return loc_.fail(where, " (cpu node '", cpu.name, "') has no outputs");
          break;
        }
        case fb::Step::NONE:
          return loc_.fail(where, loc_.at(step), " is empty (neither a delegate call nor a cpu node)");
        default:
          return loc_.fail(where, ".step_type = ", static_cast<int>(step->step_type()), loc_.at(step),
                           " is not a known step type");
      }
      p_->plan_.push_back(std::move(out));
      return Status::Ok();
    });
  }

  // The state table, every problem named at once: indices in range, the read
  // tensor neither constant, input nor output nor read by another state, the
  // update neither constant nor a state's tensor, both of one dtype and shape,
  // the initial bytes of that size.
  Status decode_states() {
    const auto* states = root_->states();
    if (!states || states->size() == 0) return Status::Ok();
    if (p_->format_major_ < kStatefulFormatMajor) {
      return loc_.fail("states", loc_.at(states), ": a program with states is format ", kStatefulFormatMajor,
                       ".x, but this file says ", p_->format_major_, ".", p_->format_minor_);
    }
    const size_t nt = p_->tensors_.size();
    std::vector<char> is_input(nt, 0), is_output(nt, 0);
    for (int32_t t : p_->inputs_) is_input[static_cast<size_t>(t)] = 1;
    for (int32_t t : p_->outputs_) is_output[static_cast<size_t>(t)] = 1;
    std::vector<std::string> problems;
    std::unordered_map<int32_t, uint32_t> read_by;  // tensor -> the state reading it
    auto in_range = [&](uint32_t index, size_t limit, const fb::State* st, flatbuffers::voffset_t field,
                        const std::string& what, const char* unit) {
      if (index < limit) return true;
      problems.push_back(str_cat(what, " = ", index, loc_.at(detail::field_address(st, field)), " is out of range (",
                                 limit, " ", unit, ")"));
      return false;
    };
    for (uint32_t i = 0; i < states->size(); ++i) {
      const fb::State* st = states->Get(i);
      const std::string where = str_cat("states[", i, "]");
      bool ok = in_range(st->tensor(), nt, st, fb::State::VT_TENSOR, where + ".tensor", "tensors");
      ok = in_range(st->update(), nt, st, fb::State::VT_UPDATE, where + ".update", "tensors") && ok;
      ok = in_range(st->initial(), p_->segments_.size(), st, fb::State::VT_INITIAL, where + ".initial", "segments") &&
           ok;
      if (!ok) continue;
      StateInfo info{static_cast<int32_t>(st->tensor()), static_cast<int32_t>(st->update()),
                     static_cast<int32_t>(st->initial())};
      const TensorInfo& t = p_->tensors_[static_cast<size_t>(info.tensor)];
      const TensorInfo& u = p_->tensors_[static_cast<size_t>(info.update)];
      const std::string label = str_cat(where, " ('", t.name, "')");
      auto [it, first] = read_by.emplace(info.tensor, i);
      if (!first) problems.push_back(str_cat(label, ": states[", it->second, "] reads the same tensor"));
      for (auto [is, role] : {std::pair{t.is_constant(), "a constant"},
                              std::pair{is_input[static_cast<size_t>(info.tensor)] != 0, "a graph input"},
                              std::pair{is_output[static_cast<size_t>(info.tensor)] != 0, "a graph output"}}) {
        if (is) problems.push_back(str_cat(label, ": its tensor ", info.tensor, " is ", role));
      }
      if (info.update == info.tensor) {
        problems.push_back(str_cat(label, ": its update is its own tensor"));
      } else if (u.is_constant()) {
        problems.push_back(str_cat(label, ": its update tensor ", info.update, " ('", u.name, "') is a constant"));
      }
      if (u.dtype != t.dtype || u.shape != t.shape) {
        problems.push_back(str_cat(label, " is ", graph::dtype_name(t.dtype), " ", graph::shape_to_string(t.shape),
                                   " but its update tensor ", info.update, " ('", u.name, "') is ",
                                   graph::dtype_name(u.dtype), " ", graph::shape_to_string(u.shape)));
      }
      uint64_t expected = tensor_byte_size(t.dtype, t.shape, where).value();  // checked_shape passed
      uint64_t stored = p_->segments_[static_cast<size_t>(info.initial_segment)].size;
      if (stored != expected) {
        problems.push_back(str_cat(label, " is ", graph::dtype_name(t.dtype), " ", graph::shape_to_string(t.shape),
                                   " (", expected, " bytes) but its initial segment ", info.initial_segment, " holds ",
                                   stored, " bytes"));
      }
      p_->states_.push_back(info);
    }
    // An update that another state reads would be that state's old or new
    // value depending on the order the runtime carries them in.
    for (size_t i = 0; i < p_->states_.size(); ++i) {
      auto it = read_by.find(p_->states_[i].update);
      if (it == read_by.end()) continue;
      problems.push_back(str_cat("state '", p_->tensors_[static_cast<size_t>(p_->states_[i].tensor)].name,
                                 "': its update is the tensor states[", it->second, "] reads"));
    }
    if (problems.empty()) return Status::Ok();
    std::string all;
    for (const std::string& p : problems) all += (all.empty() ? "" : "; ") + p;
    return loc_.fail(problems.size(), problems.size() == 1 ? " problem" : " problems", " in the state table: ", all);
  }

  std::string step_label(size_t i) const {
    const PlanStep& s = p_->plan_[i];
    if (s.kind == PlanStep::Kind::kDelegate) {
      return str_cat("plan[", i, "] (delegate ", s.delegate, ", ",
                     p_->delegates_[static_cast<size_t>(s.delegate)].backend_id, ")");
    }
    return str_cat("plan[", i, "] (cpu node '", s.cpu_node.name, "')");
  }

  // Every tensor a step reads must exist by then; every tensor is written once.
  Status check_data_flow() {
    const size_t n = p_->tensors_.size();
    // -3: a state's tensor, -2: a graph input or constant, -1: not yet
    // available, >= 0: written by that step.
    std::vector<int64_t> source(n, -1);
    for (int32_t t : p_->inputs_) source[static_cast<size_t>(t)] = -2;
    for (size_t t = 0; t < n; ++t) {
      if (p_->tensors_[t].is_constant()) source[t] = -2;
    }
    for (const StateInfo& s : p_->states_) source[static_cast<size_t>(s.tensor)] = -3;
    std::vector<int64_t> called_by(p_->delegates_.size(), -1);
    for (size_t i = 0; i < p_->plan_.size(); ++i) {
      const PlanStep& step = p_->plan_[i];
      const std::vector<int32_t>* reads = &step.cpu_node.inputs;
      const std::vector<int32_t>* writes = &step.cpu_node.outputs;
      if (step.kind == PlanStep::Kind::kDelegate) {
        auto d = static_cast<size_t>(step.delegate);
        if (called_by[d] >= 0) {
          return loc_.fail("delegates[", d, "] is called twice, by plan[", called_by[d], "] and plan[", i, "]");
        }
        called_by[d] = static_cast<int64_t>(i);
        reads = &p_->delegates_[d].inputs;
        writes = &p_->delegates_[d].outputs;
      }
      for (int32_t t : *reads) {
        if (t < 0) continue;  // an absent optional input of a cpu node
        if (source[static_cast<size_t>(t)] == -1) {
          return loc_.fail(step_label(i), " reads tensor ", t, " (", tensor_name(t),
                           ") before any step writes it, and it is neither a graph input nor a constant");
        }
      }
      for (int32_t t : *writes) {
        int64_t& src = source[static_cast<size_t>(t)];
        if (src == -3) {
          return loc_.fail(step_label(i), " writes tensor ", t, " (", tensor_name(t),
                           "), which a state reads (a state changes only when the plan ends)");
        }
        if (src == -2) {
          return loc_.fail(step_label(i), " writes tensor ", t, " (", tensor_name(t),
                           "), which is a graph input or a constant");
        }
        if (src >= 0) {
          return loc_.fail(step_label(i), " writes tensor ", t, " (", tensor_name(t), "), already written by ",
                           step_label(static_cast<size_t>(src)));
        }
        src = static_cast<int64_t>(i);
      }
    }
    for (size_t d = 0; d < called_by.size(); ++d) {
      if (called_by[d] < 0) {
        return loc_.fail("delegates[", d, "] (", p_->delegates_[d].backend_id, ") is never called by the plan");
      }
    }
    for (size_t i = 0; i < p_->outputs_.size(); ++i) {
      int32_t t = p_->outputs_[i];
      if (source[static_cast<size_t>(t)] == -1) {
        return loc_.fail("outputs[", i, "] = ", t, " (", tensor_name(t),
                         ") is never written by the plan, and it is neither a graph input nor a constant");
      }
    }
    for (size_t i = 0; i < p_->states_.size(); ++i) {
      int32_t u = p_->states_[i].update;
      if (source[static_cast<size_t>(u)] == -1) {
        return loc_.fail("states[", i, "] (", tensor_name(p_->states_[i].tensor), "): its update tensor ", u, " (",
                         tensor_name(u), ") is never written by the plan, and it is not a graph input");
      }
    }
    return Status::Ok();
  }

  Blob file_;
  Locator loc_;
  Program* p_ = nullptr;
  const fb::Program* root_ = nullptr;
  std::unordered_map<std::string, std::string> node_names_;  // name -> where it was first seen
};

namespace {

constexpr std::align_val_t kAlign{kSegmentAlignment};

Blob copy_aligned(const void* data, size_t size) {
  auto* bytes = static_cast<uint8_t*>(::operator new(size ? size : 1, kAlign));
  std::shared_ptr<uint8_t> owner(bytes, [](uint8_t* p) { ::operator delete(p, kAlign); });
  if (size) std::memcpy(bytes, data, size);
  return Blob::view(bytes, size, std::shared_ptr<const void>(owner, owner.get()));
}

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

Status with_path(const Status& s, const std::string& path) {
  return Status(s.code(), str_cat(s.message(), " (file '", path, "')"));
}

}  // namespace

Result<std::shared_ptr<const Program>> load_program_blob(Blob file) {
  if (reinterpret_cast<uintptr_t>(file.data()) % kSegmentAlignment != 0) {
    file = copy_aligned(file.data(), file.size());
  }
  return ProgramDecoder(std::move(file)).decode();
}

Status validate_program_bytes(const uint8_t* data, size_t size) {
  if (!data && size) return err(StatusCode::kInvalidArgument, "program: data is null but size is ", size);
  Blob file = reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) == 0 ? Blob::view(data, size, nullptr)
                                                                         : copy_aligned(data, size);
  Result<std::shared_ptr<const Program>> program = ProgramDecoder(std::move(file)).decode();
  return program.ok() ? Status::Ok() : program.status();
}

Result<std::shared_ptr<const Program>> load_program_bytes(const void* data, size_t size) {
  if (!data && size) return err(StatusCode::kInvalidArgument, "program: data is null but size is ", size);
  return ProgramDecoder(copy_aligned(data, size)).decode();
}

Result<std::shared_ptr<const Program>> load_program_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return err(StatusCode::kIo, "program: cannot open '", path, "': ", errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return err(StatusCode::kIo, "program: cannot stat '", path, "': ", errno_text(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return err(StatusCode::kIo, "program: '", path, "' is not a regular file");
  }
  auto size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return err(StatusCode::kInvalidFormat, "program: '", path, "' is empty (0 bytes)");
  }
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int map_errno = errno;
  ::close(fd);  // the mapping stays valid without the descriptor
  if (addr == MAP_FAILED) return err(StatusCode::kIo, "program: cannot map '", path, "': ", errno_text(map_errno));
  std::shared_ptr<const void> owner(addr, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
  Result<std::shared_ptr<const Program>> program = ProgramDecoder(Blob::file_view(addr, size, std::move(owner))).decode();
  if (!program.ok()) return with_path(program.status(), path);
  return program;
}

}  // namespace gpuu::program

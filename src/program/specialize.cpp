// Specialization: a dynamic program evaluated at one set of sizes.
#include "program/specialize.h"

#include <algorithm>
#include <numeric>

#include "program/subgraph.h"

namespace gpuu::program {

class ProgramSpecializer {
 public:
  static Result<std::shared_ptr<const Program>> run(const std::shared_ptr<const Program>& base,
                                                    const std::vector<int64_t>& dims,
                                                    const Preprocessors& preprocessors) {
    if (base->dims().empty()) return err(StatusCode::kInvalidArgument, "specialize: the program has no dims");
    GPUU_RETURN_IF_ERROR(graph::check_dims_in_bounds(base->dims(), dims));
    auto out = std::make_shared<Program>(*base);  // Blob members view the same file
    out->dims_.clear();
    for (TensorInfo& t : out->tensors_) {
      for (const graph::AxisExpr& ax : t.dim_exprs) t.shape[ax.axis] = ax.size.eval(dims);
      t.dim_exprs.clear();
      const std::string why = graph::shape_problem(t.shape);
      if (!why.empty()) return err(StatusCode::kInvalidArgument, "tensor '", t.name, "' at these sizes: ", why);
    }
    for (PlanStep& step : out->plan_) {
      if (step.kind != PlanStep::Kind::kCpuNode) continue;
      GPUU_RETURN_IF_ERROR(graph::apply_attr_exprs(step.cpu_node.attrs, step.cpu_node.attr_exprs, dims,
                                                   step.cpu_node.name));
      step.cpu_node.attr_exprs.clear();
    }
    const ConstantLookup constants = program_constant_lookup(base);
    for (size_t d = 0; d < out->delegates_.size(); ++d) {
      DelegateInfo& delegate = out->delegates_[d];
      GPUU_ASSIGN_OR_RETURN(Blob processed, preprocess(*out, d, base->segment_data(delegate.source_segment), dims,
                                                       constants, preprocessors));
      SegmentInfo segment;
      segment.size = processed.size();
      segment.names = {str_cat("delegate ", d, " (", delegate.backend_id, ") at these sizes")};
      segment.owned = std::move(processed);
      delegate.processed_segment = static_cast<int32_t>(out->segments_.size());
      delegate.source_segment = -1;
      out->segments_.push_back(std::move(segment));
    }
    return std::shared_ptr<const Program>(std::move(out));
  }

 private:
  // A constant the blob made at these sizes reads from the program: the
  // file's where it has it (the same bytes, else an error), else one held
  // in memory for this program alone (one the lowering makes only at
  // these sizes, say).
  static Status provide_constant(Program& program, const DelegateInfo& delegate, const std::string& name,
                                 graph::DType dtype, const graph::Shape& shape, const Blob& data) {
    int32_t t = program.find_tensor(name);
    if (t >= 0) {
      const TensorInfo& info = program.tensors_[static_cast<size_t>(t)];
      if (info.is_constant() && info.dtype == dtype && info.shape == shape &&
          program.constant_data(t).same_bytes(data)) {
        return Status::Ok();
      }
      return err(StatusCode::kInvalidArgument, "delegate (", delegate.backend_id, "): at these sizes its blob reads '",
                 name, "' as ", graph::dtype_name(dtype), " ", graph::shape_to_string(shape),
                 " with other contents than the program's tensor of that name");
    }
    SegmentInfo segment;
    segment.size = data.size();
    segment.names = {name};
    segment.owned = data;
    TensorInfo info;
    info.name = name;
    info.dtype = dtype;
    info.shape = shape;
    info.segment = static_cast<int32_t>(program.segments_.size());
    program.segments_.push_back(std::move(segment));
    program.tensor_index_[name] = static_cast<int32_t>(program.tensors_.size());
    program.tensors_.push_back(std::move(info));
    return Status::Ok();
  }

  // The delegate's source region, bound to `dims` and preprocessed as at
  // export (its blob may read constants from the program: those it names are
  // the program's, or made available in it); its non-constant interface
  // must be the delegate's, tensor for tensor.
  static Result<Blob> preprocess(Program& program, size_t index, const Blob& source, const std::vector<int64_t>& dims,
                                 const ConstantLookup& constants, const Preprocessors& preprocessors) {
    DelegateInfo& delegate = program.delegates_[index];
    auto fail = [&](const auto&... parts) {
      return err(StatusCode::kInvalidArgument, "delegate (", delegate.backend_id, ", first node '",
                 delegate.nodes.empty() ? std::string() : delegate.nodes.front().name, "'): ", parts...);
    };
    Result<graph::Graph> parsed = parse_subgraph(source.data(), source.size(), constants);
    if (!parsed.ok()) return fail("its source: ", parsed.status().message());
    graph::Graph g = std::move(parsed).value();
    GPUU_RETURN_IF_ERROR(graph::bind_dims(g, dims));
    partition::Region region;
    region.backend = delegate.backend_id;
    region.nodes.resize(g.nodes().size());
    std::iota(region.nodes.begin(), region.nodes.end(), 0);
    GPUU_ASSIGN_OR_RETURN(RegionIo io, region_io(g, region));
    // Constants aside: the source names each of its region's, the delegate
    // only those its blob at the examples reads from the program.
    auto same_interface = [&](const std::vector<graph::ValueId>& values, const std::vector<int32_t>& tensors) {
      std::vector<graph::ValueId> vs;
      for (graph::ValueId v : values) {
        if (g.value(v).constant == graph::kNone) vs.push_back(v);
      }
      std::vector<int32_t> ts;
      for (int32_t t : tensors) {
        if (!program.tensors()[static_cast<size_t>(t)].is_constant()) ts.push_back(t);
      }
      if (vs.size() != ts.size()) return false;
      for (size_t i = 0; i < vs.size(); ++i) {
        const TensorInfo& t = program.tensors()[static_cast<size_t>(ts[i])];
        if (g.value(vs[i]).name != t.name || g.value(vs[i]).shape != t.shape) return false;
      }
      return true;
    };
    if (!same_interface(io.inputs, delegate.inputs) || !same_interface(io.outputs, delegate.outputs)) {
      return fail("its source's inputs and outputs are not the delegate's at these sizes");
    }
    auto fn = preprocessors.find(delegate.backend_id);
    if (fn == preprocessors.end() || !fn->second) {
      GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, serialize_region(g, region));
      return Blob::take(std::move(bytes));
    }
    Result<PreprocessedRegion> pre = fn->second(g, region, io, delegate.compile_specs);
    if (!pre.ok()) return fail("preprocess failed: ", pre.status().message());
    if (pre->constants_read) {
      for (const std::string& name : *pre->constants_read) {
        auto it = std::find_if(io.inputs.begin(), io.inputs.end(),
                               [&](graph::ValueId v) { return g.value(v).name == name; });
        if (it == io.inputs.end() || g.value(*it).constant == graph::kNone) {
          return fail("its blob reads '", name, "' from the program, which is no constant input of the region");
        }
        const graph::Value& v = g.value(*it);
        GPUU_RETURN_IF_ERROR(provide_constant(program, delegate, name, v.dtype, v.shape,
                                              g.constants()[static_cast<size_t>(v.constant)].data));
      }
    }
    for (const AddedConstant& c : pre->added_constants) {
      GPUU_RETURN_IF_ERROR(provide_constant(program, delegate, c.name, c.dtype, c.shape, c.data));
    }
    // The blob's own compile specs (VGF's vgf_constant_refs) are those of this blob.
    for (const CompileSpecEntry& e : pre->extra_compile_specs) {
      auto same = [&](const CompileSpecEntry& o) { return o.key == e.key; };
      auto it = std::find_if(delegate.compile_specs.begin(), delegate.compile_specs.end(), same);
      if (it != delegate.compile_specs.end()) {
        it->value = e.value;
      } else {
        delegate.compile_specs.push_back(e);
      }
    }
    return std::move(pre->processed);
  }
};

Result<std::shared_ptr<const Program>> specialize(const std::shared_ptr<const Program>& program,
                                                  const std::vector<int64_t>& dims,
                                                  const Preprocessors& preprocessors) {
  if (!program) return err(StatusCode::kInvalidArgument, "specialize: no program");
  return ProgramSpecializer::run(program, dims, preprocessors);
}

}  // namespace gpuu::program

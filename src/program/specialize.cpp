// Specialization: a dynamic program evaluated at one set of sizes.
#include "program/specialize.h"

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
      GPUU_ASSIGN_OR_RETURN(Blob processed, preprocess(*out, delegate, base->segment_data(delegate.source_segment),
                                                       dims, constants, preprocessors));
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
  // The delegate's source region, bound to `dims` and preprocessed; its
  // interface must be the delegate's, tensor for tensor.
  static Result<Blob> preprocess(const Program& program, const DelegateInfo& delegate, const Blob& source,
                                 const std::vector<int64_t>& dims, const ConstantLookup& constants,
                                 const Preprocessors& preprocessors) {
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
    auto same_interface = [&](const std::vector<graph::ValueId>& values, const std::vector<int32_t>& tensors) {
      if (values.size() != tensors.size()) return false;
      for (size_t i = 0; i < values.size(); ++i) {
        const TensorInfo& t = program.tensors()[static_cast<size_t>(tensors[i])];
        if (g.value(values[i]).name != t.name || g.value(values[i]).shape != t.shape) return false;
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

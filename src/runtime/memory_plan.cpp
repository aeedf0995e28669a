// The memory plan: tensor homes from the program's tables, the rest from each
// delegate's backend, weights counted once by the bytes they are made from.
#include "runtime/memory_plan.h"

#include <cstdio>
#include <set>
#include <utility>

#include "gpu/shared_constants.h"
#include "program/specialize.h"
#include "program/subgraph.h"
#include "runtime/builtin_backends.h"

namespace gpuu::runtime {
namespace {

// DeviceBuffer rounds every buffer up to whole 32-bit words.
uint64_t words(uint64_t bytes) { return (bytes + 3) / 4 * 4; }

uint64_t tensor_bytes(const program::TensorInfo& t) {
  return static_cast<uint64_t>(graph::shape_numel(t.shape)) * graph::dtype_size(t.dtype);
}

}  // namespace

Result<MemoryPlan> plan_memory(const std::shared_ptr<const program::Program>& shared) {
  const program::Program& program = *shared;
  MemoryPlan plan;
  std::vector<char> is_state(program.tensors().size(), 0);
  for (const program::StateInfo& s : program.states()) is_state[static_cast<size_t>(s.tensor)] = 1;
  const program::ConstantLookup constants = program::program_constant_lookup(shared);
  std::vector<char> homed(program.tensors().size(), 0);
  std::set<std::pair<const void*, size_t>> weights_seen;
  for (size_t d = 0; d < program.delegates().size(); ++d) {
    const program::DelegateInfo& info = program.delegates()[d];
    DelegateMemoryPlan dp;
    dp.index = static_cast<int32_t>(d);
    dp.backend = info.backend_id;
    for (const auto* list : {&info.inputs, &info.outputs}) {
      for (int32_t t : *list) {
        const program::TensorInfo& ti = program.tensors()[static_cast<size_t>(t)];
        if (ti.is_constant()) continue;
        (is_state[static_cast<size_t>(t)] ? dp.states : dp.io) += words(tensor_bytes(ti));
        if (homed[static_cast<size_t>(t)]) continue;
        homed[static_cast<size_t>(t)] = 1;
        (is_state[static_cast<size_t>(t)] ? plan.states : plan.tensors) += words(tensor_bytes(ti));
      }
    }
    backends::Backend* backend = backend_registry().find(info.backend_id);
    Result<backends::DelegateMemory> m =
        backend ? backend->plan_memory(program.processed_blob(dp.index), info.compile_specs, constants)
                : Result<backends::DelegateMemory>(
                      err(StatusCode::kUnsupported, "backend '", info.backend_id, "' is not registered"));
    if (!m.ok()) {
      dp.unknown = m.status().message();
      plan.delegates.push_back(std::move(dp));
      continue;
    }
    for (const Blob& w : m->shared_constants) {
      const uint64_t bytes = gpu::shared_constant_bytes(w);
      dp.weights += bytes;
      if (!weights_seen.insert({w.data(), w.size()}).second) continue;
      plan.shared_weights.push_back(w);
      plan.weights += bytes;
      if (gpu::shared_constant_held(w)) {
        plan.held_weights.push_back(w);
      } else {
        plan.new_weights += bytes;
      }
    }
    dp.constants = m->constant_bytes;
    dp.intermediates = m->workspace_bytes + m->private_bytes;
    plan.weights += m->constant_bytes;
    plan.new_weights += m->constant_bytes;
    plan.workspaces += m->workspace_bytes;
    plan.backend_private += m->private_bytes;
    plan.delegates.push_back(std::move(dp));
  }
  return plan;
}

Result<MemoryPlan> plan_session_memory(const std::shared_ptr<const program::Program>& program,
                                       const std::shared_ptr<const program::Program>& at_upper) {
  GPUU_ASSIGN_OR_RETURN(MemoryPlan plan, plan_memory(at_upper));
  for (const graph::SymbolicDim& d : program->dims()) plan.dims.push_back(d.max);
  if (at_upper == program) return plan;
  // The session makes the program at its examples too, where it starts: its
  // homes and workspaces are the upper bounds', but its delegates' own
  // constants, and weights the upper bounds' do not read, come on top.
  GPUU_ASSIGN_OR_RETURN(MemoryPlan at_examples, plan_memory(program));
  std::set<std::pair<const void*, size_t>> seen;
  for (const Blob& w : plan.shared_weights) seen.insert({w.data(), w.size()});
  for (const DelegateMemoryPlan& d : at_examples.delegates) {
    plan.weights += d.constants;
    plan.new_weights += d.constants;
  }
  for (const Blob& w : at_examples.shared_weights) {
    if (!seen.insert({w.data(), w.size()}).second) continue;
    plan.shared_weights.push_back(w);
    plan.weights += gpu::shared_constant_bytes(w);
    if (gpu::shared_constant_held(w)) {
      plan.held_weights.push_back(w);
    } else {
      plan.new_weights += gpu::shared_constant_bytes(w);
    }
  }
  return plan;
}

Result<MemoryPlan> plan_memory_at_upper_bounds(const std::shared_ptr<const program::Program>& program) {
  std::vector<int64_t> examples, upper;
  for (const graph::SymbolicDim& d : program->dims()) {
    examples.push_back(d.example);
    upper.push_back(d.max);
  }
  if (upper == examples) return plan_session_memory(program, program);
  GPUU_ASSIGN_OR_RETURN(std::shared_ptr<const program::Program> at_upper,
                        program::specialize(program, upper, builtin_program_preprocessors()));
  return plan_session_memory(program, at_upper);
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

}  // namespace gpuu::runtime

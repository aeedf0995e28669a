// The memory plan: tensor homes from the program's tables, the rest from each
// delegate's backend, weights counted once by the bytes they are made from.
#include "runtime/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
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

SharedHomes plan_shared_homes(const program::Program& program, const std::vector<uint64_t>& tensor_bytes) {
  const size_t n = program.tensors().size();
  SharedHomes out;
  out.home_of.assign(n, -1);
  std::vector<char> eligible(n, 1);
  std::vector<int64_t> first(n, -1), last(n, -1);
  for (int32_t t : program.inputs()) eligible[static_cast<size_t>(t)] = 0;
  for (int32_t t : program.outputs()) eligible[static_cast<size_t>(t)] = 0;
  for (const program::StateInfo& s : program.states()) {
    eligible[static_cast<size_t>(s.tensor)] = 0;
    if (s.update >= 0) eligible[static_cast<size_t>(s.update)] = 0;
  }
  for (size_t t = 0; t < n; ++t) {
    if (program.tensors()[t].is_constant()) eligible[t] = 0;
  }
  const SharedGpuCompileSpec* context = nullptr;
  for (size_t p = 0; p < program.plan().size(); ++p) {
    const program::PlanStep& step = program.plan()[p];
    if (step.kind == program::PlanStep::Kind::kCpuNode) {
      for (const auto* list : {&step.cpu_node.inputs, &step.cpu_node.outputs}) {
        for (int32_t t : *list) {
          if (t >= 0) eligible[static_cast<size_t>(t)] = 0;  // the host reads or writes it
        }
      }
      continue;
    }
    const program::DelegateInfo& info = program.delegates()[static_cast<size_t>(step.delegate)];
    if (!info.shared.enabled()) return out;
    if (!context) context = &info.shared;
    if (info.shared.token != context->token || info.shared.group_id != context->group_id) return out;
    for (int32_t t : info.outputs) {
      int64_t& written = first[static_cast<size_t>(t)];
      if (written >= 0) eligible[static_cast<size_t>(t)] = 0;  // two writers
      written = static_cast<int64_t>(p);
      last[static_cast<size_t>(t)] = std::max(last[static_cast<size_t>(t)], written);
    }
    for (int32_t t : info.inputs) last[static_cast<size_t>(t)] = static_cast<int64_t>(p);
  }
  std::vector<int32_t> order;
  for (size_t t = 0; t < n; ++t) {
    if (eligible[t] && first[t] >= 0) order.push_back(static_cast<int32_t>(t));
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return first[a] < first[b]; });
  std::vector<int64_t> free_after;  // by shared home: the last step its current tensor is read in
  for (int32_t t : order) {
    const uint64_t bytes = tensor_bytes[static_cast<size_t>(t)];
    // Of the homes free before t is written: the smallest that holds it, else the largest (which grows).
    auto better = [&](uint64_t a, uint64_t b) {  // home bytes a over b
      return a >= bytes ? (b < bytes || a < b) : (b < bytes && a > b);
    };
    int32_t pick = -1;
    for (size_t h = 0; h < free_after.size(); ++h) {
      if (free_after[h] >= first[static_cast<size_t>(t)]) continue;
      if (pick < 0 || better(out.home_bytes[h], out.home_bytes[static_cast<size_t>(pick)])) pick = static_cast<int32_t>(h);
    }
    if (pick < 0) {
      pick = static_cast<int32_t>(out.home_bytes.size());
      out.home_bytes.push_back(0);
      free_after.push_back(-1);
    }
    out.home_of[static_cast<size_t>(t)] = pick;
    out.home_bytes[static_cast<size_t>(pick)] = std::max(out.home_bytes[static_cast<size_t>(pick)], bytes);
    free_after[static_cast<size_t>(pick)] = last[static_cast<size_t>(t)];
  }
  return out;
}

Result<MemoryPlan> plan_memory(const std::shared_ptr<const program::Program>& shared) {
  const program::Program& program = *shared;
  MemoryPlan plan;
  std::vector<char> is_state(program.tensors().size(), 0);
  for (const program::StateInfo& s : program.states()) is_state[static_cast<size_t>(s.tensor)] = 1;
  const program::ConstantLookup constants = program::program_constant_lookup(shared);
  std::vector<char> homed(program.tensors().size(), 0);
  std::vector<uint64_t> sizes;
  for (const program::TensorInfo& t : program.tensors()) sizes.push_back(words(tensor_bytes(t)));
  const SharedHomes shared_homes = plan_shared_homes(program, sizes);
  for (uint64_t bytes : shared_homes.home_bytes) plan.tensors += bytes;
  std::set<std::pair<const void*, size_t>> weights_seen;
  std::map<std::pair<std::string, int64_t>, uint64_t> workspace_of_context;
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
        if (homed[static_cast<size_t>(t)] || shared_homes.home_of[static_cast<size_t>(t)] >= 0) continue;
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
    // The delegates on one context share one workspace (they run one after
    // another): a context's is the largest of its delegates'. A delegate
    // without shared keys has a private context.
    if (info.shared.enabled()) {
      uint64_t& shared_workspace = workspace_of_context[{info.shared.token, info.shared.group_id}];
      shared_workspace = std::max(shared_workspace, m->workspace_bytes);
    } else {
      plan.workspaces += m->workspace_bytes;
    }
    plan.backend_private += m->private_bytes;
    plan.delegates.push_back(std::move(dp));
  }
  for (const auto& context : workspace_of_context) plan.workspaces += context.second;
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

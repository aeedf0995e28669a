// gpuu-inspect --memory: the program's memory plan (runtime/memory_plan.h),
// per delegate and in total, as text or JSON. Planned from the file alone:
// no device is opened.
#include "inspect/memory_report.h"

#include <cstdio>
#include <string>
#include <vector>

#include "base/json_writer.h"

namespace gpuu::inspect {
namespace {

// What the plan leaves out, one line each.
std::vector<std::string> not_counted(const runtime::MemoryPlan& plan) {
  std::vector<std::string> out;
  for (const runtime::DelegateMemoryPlan& d : plan.delegates) {
    if (!d.unknown.empty()) out.push_back("delegate " + std::to_string(d.index) + ": " + d.unknown);
  }
  out.push_back("the Vulkan kernels' unit scratch (split-K partials): how a GEMM splits depends on the device");
  out.push_back("the native VGF path's own memory (VK_ARM_data_graph devices): the plan is the executor's");
  out.push_back("staging for reading outputs and states: host memory, made on first read where needed");
  return out;
}

std::string dims_text(const program::Program& program, const runtime::MemoryPlan& plan) {
  std::string out;
  for (size_t d = 0; d < plan.dims.size() && d < program.dims().size(); ++d) {
    out += (d ? ", " : "") + program.dims()[d].name + "=" + std::to_string(plan.dims[d]);
  }
  return out;
}

}  // namespace

std::string render_memory_text(const program::Program& program, const runtime::MemoryPlan& plan,
                               const std::string& path) {
  using runtime::format_bytes;
  std::string out = "memory plan of " + path + " (from the program file, no device: what a session allocates)\n";
  if (!plan.dims.empty()) out += "  at the dims' upper bounds: " + dims_text(program, plan) + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-10s %-16s %12s %14s %12s %12s\n", "delegate", "backend", "weights",
                "intermediates", "I/O tensors", "states");
  out += line;
  for (const runtime::DelegateMemoryPlan& d : plan.delegates) {
    if (!d.unknown.empty()) {
      std::snprintf(line, sizeof line, "  %-10d %-16s %12s %14s %12s %12s\n", d.index, d.backend.c_str(), "?", "?",
                    format_bytes(d.io).c_str(), format_bytes(d.states).c_str());
    } else {
      std::snprintf(line, sizeof line, "  %-10d %-16s %12s %14s %12s %12s\n", d.index, d.backend.c_str(),
                    format_bytes(d.weights + d.constants).c_str(), format_bytes(d.intermediates).c_str(),
                    format_bytes(d.io).c_str(), format_bytes(d.states).c_str());
    }
    out += line;
  }
  std::snprintf(line, sizeof line, "  %-10s %-16s %12s %14s %12s %12s\n", "total", "",
                format_bytes(plan.weights).c_str(), format_bytes(plan.workspaces + plan.backend_private).c_str(),
                format_bytes(plan.tensors).c_str(), format_bytes(plan.states).c_str());
  out += line;
  out += "  (the total counts a weight several delegates read once, and a tensor passed between delegates once";
  if (!plan.dims.empty()) out += ";\n  its weights add the constants of the program at its examples, which a session makes too";
  out += ")\n";
  out += "session need: " + format_bytes(plan.need()) + " (" + std::to_string(plan.need()) + " bytes: weights " +
         format_bytes(plan.new_weights) + ", tensors " + format_bytes(plan.tensors) + ", states " +
         format_bytes(plan.states) + ", workspaces " + format_bytes(plan.workspaces) + ", backends' own " +
         format_bytes(plan.backend_private) + ")\n";
  out += "not counted:\n";
  for (const std::string& s : not_counted(plan)) out += "  - " + s + "\n";
  return out;
}

std::string render_memory_json(const program::Program& program, const runtime::MemoryPlan& plan,
                               const std::string& path) {
  JsonWriter w;
  w.begin_object().field("file", path).field("source", "plan");
  if (!plan.dims.empty()) {
    w.key("dims").begin_object();
    for (size_t d = 0; d < plan.dims.size() && d < program.dims().size(); ++d) {
      w.field(program.dims()[d].name, plan.dims[d]);
    }
    w.end_object();
  }
  w.key("delegates").begin_array();
  for (const runtime::DelegateMemoryPlan& d : plan.delegates) {
    w.begin_object().field("index", d.index).field("backend", d.backend);
    if (d.unknown.empty()) {
      w.field("weight_bytes", d.weights + d.constants).field("intermediate_bytes", d.intermediates);
    } else {
      w.field("unknown", d.unknown);
    }
    w.field("io_bytes", d.io).field("state_bytes", d.states).end_object();
  }
  w.end_array();
  w.key("total").begin_object().field("weight_bytes", plan.weights).field("tensor_bytes", plan.tensors);
  w.field("state_bytes", plan.states).field("workspace_bytes", plan.workspaces);
  w.field("backend_private_bytes", plan.backend_private).field("need_bytes", plan.need()).end_object();
  w.key("not_counted").begin_array();
  for (const std::string& s : not_counted(plan)) w.value(s);
  w.end_array().end_object();
  return w.take() + "\n";
}

}  // namespace gpuu::inspect

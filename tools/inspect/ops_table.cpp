// The op table: the registry says what each op is; the capability tables say
// which dtypes VGF and Vulkan take; the CPU kernel table says what the
// fallback runs.
#include "inspect/ops_table.h"

#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "base/json_writer.h"
#include "graph/op_registry.h"
#include "partition/capabilities.h"

namespace gpuu::inspect {
namespace {

using partition::Capabilities;

std::string dtype_list(const std::vector<graph::DType>& dtypes) {
  std::string s;
  for (graph::DType d : dtypes) s += (s.empty() ? "" : ", ") + std::string(graph::dtype_name(d));
  return s;
}

std::string input_list(const graph::OpSchema& op) {
  std::string s;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    s += (i ? ", " : "") + op.inputs[i].name + (op.inputs[i].optional ? "?" : "");
  }
  if (op.variadic()) s += "...";
  return s;
}

std::string attr_list(const graph::OpSchema& op) {
  std::string s;
  for (const graph::AttrSpec& a : op.attrs) s += (s.empty() ? "" : ", ") + a.name + (a.required ? "" : "?");
  if (op.pattern_attr) s += std::string(s.empty() ? "" : ", ") + "output_<i>_*";
  return s;
}

}  // namespace

std::string render_ops_markdown() {
  std::string out =
      "| op | inputs | attributes | dtypes | CPU | Vulkan | VGF (TOSA 1.0) |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n";
  size_t vulkan = 0, vgf = 0, cpu_count = 0;
  for (const graph::OpSchema& op : graph::all_ops()) {
    std::string vk = dtype_list(partition::builtin_vulkan_capability().declared_dtypes(op.name));
    std::string vg = dtype_list(partition::builtin_vgf_capability().declared_dtypes(op.name));
    vulkan += vk.empty() ? 0 : 1;
    vgf += vg.empty() ? 0 : 1;
    cpu_count += cpu::cpu_supports_op(op.name) ? 1 : 0;
    std::string tosa = partition::builtin_vgf_capability().op_form(op.name);
    out += "| `" + op.name + "` | " + input_list(op) + " | " + attr_list(op) + " | " + op.dtype_rule + " | " +
           (cpu::cpu_supports_op(op.name) ? "yes" : "no") + " | " + (vk.empty() ? "no" : vk) + " | " +
           (vg.empty() ? "no" : vg + (tosa.empty() ? "" : " (" + tosa + ")")) + " |\n";
  }
  out += "\n" + std::to_string(graph::all_ops().size()) + " ops: " + std::to_string(vulkan) + " on Vulkan, " +
         std::to_string(vgf) + " on VGF, " + std::to_string(cpu_count) + " on the CPU fallback.\n";
  return out;
}

std::string render_ops_json() {
  JsonWriter w;
  w.begin_object().field("format", "gpuu.ops/1").key("ops").begin_array();
  for (const graph::OpSchema& op : graph::all_ops()) {
    w.begin_object().field("name", op.name).field("dtype_rule", op.dtype_rule);
    w.key("inputs").begin_array();
    for (const graph::InputSpec& in : op.inputs) {
      w.begin_object().field("name", in.name).field("optional", in.optional).end_object();
    }
    w.end_array().field("variadic", op.variadic());
    w.key("attributes").begin_array();
    for (const graph::AttrSpec& a : op.attrs) {
      w.begin_object().field("name", a.name).field("kind", graph::attr_kind_name(a.kind)).field("required", a.required)
          .end_object();
    }
    w.end_array();
    w.key("backends").begin_object().field("CpuFallback", cpu::cpu_supports_op(op.name));
    for (const partition::BackendCapability* b :
         {&partition::builtin_vulkan_capability(), &partition::builtin_vgf_capability()}) {
      w.key(b->id()).begin_array();
      for (graph::DType d : b->declared_dtypes(op.name)) w.value(graph::dtype_name(d));
      w.end_array();
    }
    w.end_object();
    std::string tosa = partition::builtin_vgf_capability().op_form(op.name);
    if (!tosa.empty()) w.field("tosa", tosa);
    w.end_object();
  }
  w.end_array().end_object();
  return w.take() + "\n";
}

}  // namespace gpuu::inspect

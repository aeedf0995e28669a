// The op table: the registry says what each op is; each registered backend's
// own declaration (its capability()) says which dtypes it takes, in
// registration order; the CPU kernel table says what the fallback runs.
#include "inspect/ops_table.h"

#include <cstdio>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "base/json_writer.h"
#include "graph/op_registry.h"
#include "partition/capabilities.h"
#include "runtime/builtin_backends.h"

namespace gpuu::inspect {
namespace {

using partition::Capabilities;

// The registered GPU backends, in registration order.
std::vector<const backends::Backend*> registered() {
  std::vector<const backends::Backend*> out;
  for (const std::string& id : runtime::backend_registry().ids()) out.push_back(runtime::backend_registry().find(id));
  return out;
}

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

// A default as an attribute of that kind is written: 1e-05, "none", [1, 1].
struct ValueText {
  std::string operator()(int64_t v) const { return std::to_string(v); }
  std::string operator()(double v) const {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%g", v);
    return buffer;
  }
  std::string operator()(const std::string& v) const { return "\"" + v + "\""; }
  template <typename T>
  std::string operator()(const std::vector<T>& v) const {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + (*this)(v[i]);
    return s + "]";
  }
};

// The same default as a JSON value: a number, a string or an array of numbers.
void write_value(JsonWriter& w, const graph::AttrValue& value) {
  std::visit(
      [&w](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<double>>) {
          w.begin_array();
          for (auto x : v) w.value(x);
          w.end_array();
        } else {
          w.value(v);
        }
      },
      value);
}

// "eps: float = 1e-05"; "stride: ints (default: kernel)" where the default
// comes from another attribute; "min?: float" for an optional one without a
// default; "axis: int" for a required one.
std::string attr_entry(const graph::AttrSpec& a) {
  const bool optional_without_default = !a.required && !a.has_default && a.derived_from.empty();
  std::string s = a.name + (optional_without_default ? "?" : "") + ": " + graph::attr_kind_name(a.kind);
  if (a.has_default) s += " = " + std::visit(ValueText{}, a.default_value);
  if (!a.derived_from.empty()) s += " (default: " + a.derived_from + ")";
  return s;
}

std::string attr_list(const graph::OpSchema& op) {
  std::string s;
  for (const graph::AttrSpec& a : op.attrs) s += (s.empty() ? "" : ", ") + attr_entry(a);
  if (op.pattern_attr) s += std::string(s.empty() ? "" : ", ") + "output_<i>_*";
  return s;
}

}  // namespace

std::string render_ops_markdown() {
  const std::vector<const backends::Backend*> gpus = registered();
  std::string out = "| op | inputs | attributes | dtypes | CPU |";
  std::string rule = "| --- | --- | --- | --- | --- |";
  for (const backends::Backend* b : gpus) {
    out += std::string(" ") + b->log_name() + " |";
    rule += " --- |";
  }
  out += "\n" + rule + "\n";
  std::vector<size_t> counts(gpus.size(), 0);
  size_t cpu_count = 0;
  for (const graph::OpSchema& op : graph::all_ops()) {
    cpu_count += cpu::cpu_supports_op(op.name) ? 1 : 0;
    out += "| `" + op.name + "` | " + input_list(op) + " | " + attr_list(op) + " | " + op.dtype_rule + " | " +
           (cpu::cpu_supports_op(op.name) ? "yes" : "no") + " |";
    for (size_t i = 0; i < gpus.size(); ++i) {
      const partition::BackendCapability& c = gpus[i]->capability();
      std::string dtypes = dtype_list(c.declared_dtypes(op.name));
      std::string form = c.op_form(op.name);
      counts[i] += dtypes.empty() ? 0 : 1;
      out += " " + (dtypes.empty() ? std::string("no") : dtypes + (form.empty() ? "" : " (" + form + ")")) + " |";
    }
    out += "\n";
  }
  out += "\n" + std::to_string(graph::all_ops().size()) + " ops: ";
  for (size_t i = 0; i < gpus.size(); ++i) out += std::to_string(counts[i]) + " on " + gpus[i]->log_name() + ", ";
  out += std::to_string(cpu_count) + " on the CPU fallback.\n";
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
      w.begin_object().field("name", a.name).field("kind", graph::attr_kind_name(a.kind)).field("required", a.required);
      if (a.has_default) {
        w.key("default");
        write_value(w, a.default_value);
      }
      if (!a.derived_from.empty()) w.field("default_from", a.derived_from);
      w.end_object();
    }
    w.end_array();
    w.key("backends").begin_object().field("CpuFallback", cpu::cpu_supports_op(op.name));
    for (const backends::Backend* b : registered()) {
      w.key(b->id()).begin_array();
      for (graph::DType d : b->capability().declared_dtypes(op.name)) w.value(graph::dtype_name(d));
      w.end_array();
    }
    w.end_object();
    // How each backend expresses the op, where it says (VGF: its TOSA form).
    w.key("forms").begin_object();
    for (const backends::Backend* b : registered()) {
      std::string form = b->capability().op_form(op.name);
      if (!form.empty()) w.field(b->id(), form);
    }
    w.end_object();
    w.end_object();
  }
  w.end_array().end_object();
  return w.take() + "\n";
}

}  // namespace gpuu::inspect

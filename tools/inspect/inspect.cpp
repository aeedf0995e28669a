// Renderings for gpuu-inspect. All output is deterministic: it follows the
// file's order (plan, tensors, segments), never a hash map's.
#include "inspect/inspect.h"

#include <charconv>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "base/json_writer.h"
#include "partition/partition_result.h"
#include "program/subgraph.h"

namespace gpuu::inspect {
namespace {

using program::DelegateInfo;
using program::PlanStep;
using program::Program;
using program::TensorInfo;

const char* const kVgf = "VgfBackend";
const char* const kVulkan = "VulkanBackend";
const char* const kCpu = "CpuFallback";

std::string number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

const TensorInfo& tensor(const Program& p, int32_t t) { return p.tensors()[static_cast<size_t>(t)]; }

std::string join_names(const Program& p, const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + tensor(p, ids[i]).name;
  return ids.empty() ? "(none)" : out;
}

bool printable(const std::vector<uint8_t>& bytes) {
  for (uint8_t b : bytes) {
    if (b < 0x20 || b >= 0x7f) return false;
  }
  return true;
}

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::string spec_value_text(const std::vector<uint8_t>& value) {
  if (printable(value)) return std::string(value.begin(), value.end());
  return str_cat("<", value.size(), " bytes: ", hex(value), ">");
}

std::string attr_text(const graph::AttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return number(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return "\"" + *s + "\"";
  std::string out = "[";
  if (const auto* is = std::get_if<std::vector<int64_t>>(&v)) {
    for (size_t k = 0; k < is->size(); ++k) out += (k ? "," : "") + std::to_string((*is)[k]);
  } else if (const auto* ds = std::get_if<std::vector<double>>(&v)) {
    for (size_t k = 0; k < ds->size(); ++k) out += (k ? "," : "") + number((*ds)[k]);
  }
  return out + "]";
}

bool is_subgraph(const Blob& blob) {
  return blob.size() >= 8 && std::memcmp(blob.data() + 4, program::kSubGraphFileIdentifier, 4) == 0;
}

// "f32 [1,3,8,8]"; an axis that follows the program's dims shows its
// expression: "f32 [batch,3,8,8]".
std::string tensor_type(const Program& p, const TensorInfo& t) {
  if (t.dim_exprs.empty()) return str_cat(graph::dtype_name(t.dtype), " ", graph::shape_to_string(t.shape));
  std::string shape = "[";
  for (size_t a = 0; a < t.shape.size(); ++a) {
    std::string size = std::to_string(t.shape[a]);
    for (const graph::AxisExpr& ax : t.dim_exprs) {
      if (ax.axis == a) size = ax.size.to_string(p.dims());
    }
    shape += (a ? "," : "") + size;
  }
  return str_cat(graph::dtype_name(t.dtype), " ", shape, "]");
}

// Replaces bytes that are not UTF-8 with U+FFFD: names come from a file, and
// JSON and DOT readers want valid text.
std::string utf8(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<uint8_t>(s[i]);
    size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<uint8_t>(s[i + k]) >> 6) == 2;
    if (ok && len == 2) ok = b >= 0xC2;  // no overlong encodings
    if (ok && len == 3) {
      auto b1 = static_cast<uint8_t>(s[i + 1]);
      ok = !(b == 0xE0 && b1 < 0xA0) && !(b == 0xED && b1 >= 0xA0);  // overlong, surrogates
    }
    if (ok && len == 4) {
      auto b1 = static_cast<uint8_t>(s[i + 1]);
      ok = b <= 0xF4 && !(b == 0xF0 && b1 < 0x90) && !(b == 0xF4 && b1 >= 0x90);
    }
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

struct BackendTally {
  std::string backend;
  size_t units = 0;  // delegates, or CPU steps
  size_t nodes = 0;
};

// VGF, Vulkan and CPU always (in that order), then any other backend id.
std::vector<BackendTally> tally(const Program& p) {
  std::vector<BackendTally> out = {{kVgf}, {kVulkan}, {kCpu}};
  auto find = [&](const std::string& id) -> BackendTally& {
    for (BackendTally& t : out) {
      if (t.backend == id) return t;
    }
    out.push_back({id});
    return out.back();
  };
  for (const PlanStep& s : p.plan()) {
    if (s.kind == PlanStep::Kind::kDelegate) {
      const DelegateInfo& d = p.delegates()[static_cast<size_t>(s.delegate)];
      BackendTally& t = find(d.backend_id);
      ++t.units;
      t.nodes += d.nodes.size();
    } else {
      BackendTally& t = find(kCpu);
      ++t.units;
      ++t.nodes;
    }
  }
  return out;
}

uint64_t stored_bytes(const Program& p) {
  uint64_t n = 0;
  for (const auto& s : p.segments()) n += s.size;
  return n;
}

}  // namespace

std::string render_text(const Program& p, const std::string& path) {
  std::ostringstream out;
  out << "program: " << path << "\n";
  out << "  " << p.file_size() << " bytes, format " << p.format_major() << "." << p.format_minor()
      << ", data from byte " << p.data_start() << ", " << stored_bytes(p) << " bytes in " << p.segments().size()
      << " segments\n";
  if (!p.dims().empty()) {
    out << "dims (sizes that vary between executes, named in the shapes below):\n";
    for (const graph::SymbolicDim& d : p.dims()) {
      out << "  " << d.name << "  " << d.min << " to " << d.max << ", example " << d.example << "\n";
    }
  }
  out << "inputs:\n";
  for (int32_t t : p.inputs()) out << "  " << tensor(p, t).name << "  " << tensor_type(p, tensor(p, t)) << "\n";
  out << "outputs:\n";
  for (int32_t t : p.outputs()) out << "  " << tensor(p, t).name << "  " << tensor_type(p, tensor(p, t)) << "\n";
  if (!p.states().empty()) {
    out << "states (kept across executes, one per session):\n";
    for (const program::StateInfo& st : p.states()) {
      out << "  " << tensor(p, st.tensor).name << "  " << tensor_type(p, tensor(p, st.tensor)) << "  updated to "
          << tensor(p, st.update).name << ", initial value in segment " << st.initial_segment << "\n";
    }
  }

  out << "partitions:\n";
  for (const BackendTally& t : tally(p)) {
    bool cpu = t.backend == kCpu;
    out << "  " << t.backend << ": " << t.units << (cpu ? " step" : " delegate") << (t.units == 1 ? "" : "s") << ", "
        << t.nodes << " node" << (t.nodes == 1 ? "" : "s") << "\n";
  }

  out << "plan (" << p.plan().size() << " steps):\n";
  for (size_t i = 0; i < p.plan().size(); ++i) {
    const PlanStep& s = p.plan()[i];
    if (s.kind == PlanStep::Kind::kDelegate) {
      const DelegateInfo& d = p.delegates()[static_cast<size_t>(s.delegate)];
      out << "  [" << i << "] delegate " << s.delegate << ": " << d.backend_id << ", " << d.nodes.size() << " node"
          << (d.nodes.size() == 1 ? "" : "s") << "\n";
      out << "      nodes:";
      for (const program::NodeRef& n : d.nodes) out << " " << n.name << " (" << n.op << ")";
      out << "\n      inputs: " << join_names(p, d.inputs) << "\n";
      out << "      outputs: " << join_names(p, d.outputs) << "\n";
      out << "      compile specs:\n";
      for (const CompileSpecEntry& e : d.compile_specs) {
        out << "        " << e.key << " = " << spec_value_text(e.value) << "\n";
      }
      Blob blob = p.processed_blob(s.delegate);
      out << "      processed blob: segment " << d.processed_segment << ", " << blob.size() << " bytes"
          << (is_subgraph(blob) ? " (SubGraph)" : "") << "\n";
    } else {
      const program::CpuNodeInfo& n = s.cpu_node;
      out << "  [" << i << "] " << kCpu << ": " << n.name << " (" << n.op << ")\n";
      if (!n.attrs.empty()) {
        out << "      attrs:";
        for (const auto& [k, v] : n.attrs) out << " " << k << "=" << attr_text(v);
        out << "\n";
      }
      out << "      inputs: " << join_names(p, n.inputs) << "\n";
      out << "      outputs: " << join_names(p, n.outputs) << "\n";
    }
  }

  size_t constants = 0;
  for (const TensorInfo& t : p.tensors()) constants += t.is_constant() ? 1 : 0;
  out << "constants (" << constants << "):\n";
  for (const TensorInfo& t : p.tensors()) {
    if (!t.is_constant()) continue;
    const program::SegmentInfo& seg = p.segments()[static_cast<size_t>(t.segment)];
    out << "  " << t.name << "  " << tensor_type(p, t) << "  " << seg.size << " bytes  segment " << t.segment;
    if (seg.names.size() > 1) out << " (shared by " << seg.names.size() << " names)";
    out << "\n";
  }
  out << "segments (" << p.segments().size() << "):\n";
  for (size_t i = 0; i < p.segments().size(); ++i) {
    const program::SegmentInfo& seg = p.segments()[i];
    out << "  " << i << "  offset " << seg.offset << "  size " << seg.size << " ";
    for (size_t k = 0; k < seg.names.size(); ++k) out << (k ? ", " : " ") << seg.names[k];
    out << "\n";
  }
  out << "deduplication saved " << p.dedup_saved_bytes() << " bytes\n";
  return out.str();
}

std::string render_json(const Program& p, const std::string& path) {
  JsonWriter w;
  auto tensor_list = [&](const std::vector<int32_t>& ids) {
    w.begin_array();
    for (int32_t t : ids) w.value(utf8(tensor(p, t).name));
    w.end_array();
  };
  auto shape = [&](const graph::Shape& s) {
    w.begin_array();
    for (int64_t d : s) w.value(d);
    w.end_array();
  };
  auto described = [&](const char* key, const std::vector<int32_t>& ids) {
    w.key(key).begin_array();
    for (int32_t t : ids) {
      w.begin_object().field("index", t).field("name", utf8(tensor(p, t).name));
      w.field("dtype", graph::dtype_name(tensor(p, t).dtype)).key("shape");
      shape(tensor(p, t).shape);
      w.end_object();
    }
    w.end_array();
  };
  w.begin_object();
  w.field("file", utf8(path)).field("file_size", p.file_size());
  w.key("format_version").begin_object().field("major", uint32_t{p.format_major()});
  w.field("minor", uint32_t{p.format_minor()}).end_object();
  w.field("data_start", p.data_start());
  if (!p.dims().empty()) {  // absent for a static program, whose report stays as it was
    w.key("dims").begin_array();
    for (const graph::SymbolicDim& d : p.dims()) {
      w.begin_object().field("name", utf8(d.name)).field("min", d.min).field("max", d.max);
      w.field("example", d.example).end_object();
    }
    w.end_array();
  }
  described("inputs", p.inputs());
  described("outputs", p.outputs());
  w.key("states").begin_array();
  for (const program::StateInfo& st : p.states()) {
    const TensorInfo& t = tensor(p, st.tensor);
    w.begin_object().field("name", utf8(t.name)).field("dtype", graph::dtype_name(t.dtype)).key("shape");
    shape(t.shape);
    w.field("update", utf8(tensor(p, st.update).name)).field("initial_segment", st.initial_segment).end_object();
  }
  w.end_array();

  w.key("partitions").begin_array();
  for (const BackendTally& t : tally(p)) {
    w.begin_object().field("backend", utf8(t.backend));
    w.field(t.backend == kCpu ? "steps" : "delegates", static_cast<uint64_t>(t.units));
    w.field("nodes", static_cast<uint64_t>(t.nodes)).end_object();
  }
  w.end_array();

  std::vector<int64_t> step_of(p.delegates().size(), -1);
  for (size_t i = 0; i < p.plan().size(); ++i) {
    if (p.plan()[i].kind == PlanStep::Kind::kDelegate)
      step_of[static_cast<size_t>(p.plan()[i].delegate)] = static_cast<int64_t>(i);
  }
  w.key("delegates").begin_array();
  for (size_t i = 0; i < p.delegates().size(); ++i) {
    const DelegateInfo& d = p.delegates()[i];
    w.begin_object().field("index", static_cast<uint64_t>(i)).field("backend_id", utf8(d.backend_id));
    w.field("plan_step", step_of[i]).field("node_count", static_cast<uint64_t>(d.nodes.size()));
    w.key("nodes").begin_array();
    for (const program::NodeRef& n : d.nodes)
      w.begin_object().field("name", utf8(n.name)).field("op", utf8(n.op)).end_object();
    w.end_array();
    w.key("inputs");
    tensor_list(d.inputs);
    w.key("outputs");
    tensor_list(d.outputs);
    w.key("compile_specs").begin_array();
    for (const CompileSpecEntry& e : d.compile_specs) {
      w.begin_object().field("key", utf8(e.key));
      if (printable(e.value)) {
        w.field("value", std::string(e.value.begin(), e.value.end()));
      } else {
        w.field("value_hex", hex(e.value));
      }
      w.end_object();
    }
    w.end_array();
    Blob blob = p.processed_blob(static_cast<int32_t>(i));
    w.key("processed").begin_object().field("segment", d.processed_segment);
    w.field("bytes", static_cast<uint64_t>(blob.size())).field("format", is_subgraph(blob) ? "SubGraph" : "opaque");
    w.end_object().end_object();
  }
  w.end_array();

  w.key("plan").begin_array();
  for (size_t i = 0; i < p.plan().size(); ++i) {
    const PlanStep& s = p.plan()[i];
    w.begin_object().field("step", static_cast<uint64_t>(i));
    if (s.kind == PlanStep::Kind::kDelegate) {
      w.field("kind", "delegate").field("delegate", s.delegate);
      w.field("backend_id", utf8(p.delegates()[static_cast<size_t>(s.delegate)].backend_id));
    } else {
      const program::CpuNodeInfo& n = s.cpu_node;
      w.field("kind", "cpu").field("backend_id", kCpu).field("name", utf8(n.name)).field("op", utf8(n.op));
      w.key("attrs").begin_object();
      for (const auto& [k, v] : n.attrs) {
        w.key(utf8(k));
        if (const auto* iv = std::get_if<int64_t>(&v)) {
          w.value(*iv);
        } else if (const auto* dv = std::get_if<double>(&v)) {
          w.value(*dv);
        } else if (const auto* sv = std::get_if<std::string>(&v)) {
          w.value(utf8(*sv));
        } else if (const auto* is = std::get_if<std::vector<int64_t>>(&v)) {
          w.begin_array();
          for (int64_t x : *is) w.value(x);
          w.end_array();
        } else if (const auto* ds = std::get_if<std::vector<double>>(&v)) {
          w.begin_array();
          for (double x : *ds) w.value(x);
          w.end_array();
        }
      }
      w.end_object();
      w.key("inputs");
      tensor_list(n.inputs);
      w.key("outputs");
      tensor_list(n.outputs);
    }
    w.end_object();
  }
  w.end_array();

  w.key("constants").begin_array();
  for (const TensorInfo& t : p.tensors()) {
    if (!t.is_constant()) continue;
    w.begin_object().field("name", utf8(t.name)).field("dtype", graph::dtype_name(t.dtype)).key("shape");
    shape(t.shape);
    w.field("bytes", p.segments()[static_cast<size_t>(t.segment)].size).field("segment", t.segment).end_object();
  }
  w.end_array();
  w.key("segments").begin_array();
  for (size_t i = 0; i < p.segments().size(); ++i) {
    const program::SegmentInfo& s = p.segments()[i];
    w.begin_object().field("index", static_cast<uint64_t>(i)).field("offset", s.offset).field("size", s.size);
    w.key("names").begin_array();
    for (const std::string& n : s.names) w.value(utf8(n));
    w.end_array().end_object();
  }
  w.end_array();
  w.field("stored_bytes", stored_bytes(p)).field("dedup_saved_bytes", p.dedup_saved_bytes());
  w.end_object();
  return w.take() + "\n";
}

namespace {

std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : utf8(s)) {
    if (c == '\n') {
      out += "\\n";  // Graphviz's own line break in labels
      continue;
    }
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    out.push_back(c);
  }
  return out + "\"";
}

const char* fill_colour(const std::string& backend) {
  if (backend == kVgf) return "#f4a261";
  if (backend == kVulkan) return "#8ecae6";
  if (backend == kCpu) return "#d9d9d9";
  return "#ffffff";
}

// One box in the picture and the tensors (by name) it reads and writes.
struct DotNode {
  std::string id;
  std::string label;
  std::string backend;
  std::vector<std::string> reads;
  std::vector<std::string> writes;
};

}  // namespace

std::string render_dot(const Program& p, const std::string& path) {
  std::ostringstream out;
  out << "digraph gpuu_program {\n";
  out << "  label=" << dot_quote("gpuu program " + path) << ";\n  labelloc=t;\n  rankdir=TB;\n";
  out << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n";
  out << "  edge [fontname=\"Helvetica\", fontsize=9];\n";

  std::map<std::string, std::string> producer;  // tensor name -> dot id
  std::vector<std::string> order;               // dot ids in drawing order, for the edges
  std::map<std::string, DotNode> nodes;
  for (int32_t t : p.inputs()) {
    std::string id = "in:" + tensor(p, t).name;
    out << "  " << dot_quote(id) << " [shape=ellipse, style=filled, fillcolor=\"#ffffff\", label="
        << dot_quote(tensor(p, t).name + "\n" + tensor_type(p, tensor(p, t))) << "];\n";
    producer[tensor(p, t).name] = id;
  }
  auto emit = [&](DotNode n, const std::string& indent) {
    out << indent << dot_quote(n.id) << " [fillcolor=\"" << fill_colour(n.backend) << "\", label=" << dot_quote(n.label)
        << "];\n";
    for (const std::string& w : n.writes) producer[w] = n.id;
    order.push_back(n.id);
    nodes.emplace(n.id, std::move(n));
  };
  for (size_t i = 0; i < p.plan().size(); ++i) {
    const PlanStep& s = p.plan()[i];
    if (s.kind == PlanStep::Kind::kCpuNode) {
      const program::CpuNodeInfo& n = s.cpu_node;
      DotNode dn{"n:" + n.name, n.name + "\n" + n.op, kCpu, {}, {}};
      for (int32_t t : n.inputs) dn.reads.push_back(tensor(p, t).name);
      for (int32_t t : n.outputs) dn.writes.push_back(tensor(p, t).name);
      emit(std::move(dn), "  ");
      continue;
    }
    const DelegateInfo& d = p.delegates()[static_cast<size_t>(s.delegate)];
    out << "  subgraph " << dot_quote(str_cat("cluster_d", s.delegate)) << " {\n";
    out << "    label=" << dot_quote(str_cat("delegate ", s.delegate, ": ", d.backend_id)) << ";\n";
    out << "    style=\"rounded,dashed\";\n    color=\"" << fill_colour(d.backend_id) << "\";\n";
    // With the default SubGraph blob the region's inner edges can be drawn;
    // any other blob is shown as one box listing the nodes it took.
    Blob blob = p.processed_blob(s.delegate);
    Result<graph::Graph> sub = is_subgraph(blob) ? program::parse_subgraph(blob.data(), blob.size())
                                                 : Result<graph::Graph>(Status(StatusCode::kUnsupported, "opaque"));
    if (sub.ok()) {
      const graph::Graph& g = sub.value();
      for (const graph::Node& n : g.nodes()) {
        DotNode dn{"n:" + n.name, n.name + "\n" + n.op, d.backend_id, {}, {}};
        for (graph::ValueId v : n.inputs) {
          const graph::Value& value = g.value(v);
          if (p.find_tensor(value.name) < 0 || !tensor(p, p.find_tensor(value.name)).is_constant()) {
            dn.reads.push_back(value.name);
          }
        }
        for (graph::ValueId v : n.outputs) dn.writes.push_back(g.value(v).name);
        emit(std::move(dn), "    ");
      }
    } else {
      std::string label = str_cat("delegate ", s.delegate, " (", d.backend_id, ")");
      for (const program::NodeRef& n : d.nodes) label += "\n" + n.name + " (" + n.op + ")";
      DotNode dn{str_cat("d", s.delegate), label, d.backend_id, {}, {}};
      for (int32_t t : d.inputs) {
        if (!tensor(p, t).is_constant()) dn.reads.push_back(tensor(p, t).name);
      }
      for (int32_t t : d.outputs) dn.writes.push_back(tensor(p, t).name);
      emit(std::move(dn), "    ");
    }
    out << "  }\n";
  }
  for (int32_t t : p.outputs()) {
    out << "  " << dot_quote("out:" + tensor(p, t).name)
        << " [shape=ellipse, style=filled, fillcolor=\"#ffffff\", label="
        << dot_quote(tensor(p, t).name + "\n" + tensor_type(p, tensor(p, t))) << "];\n";
  }

  std::set<std::string> drawn;
  auto edge = [&](const std::string& from, const std::string& to, const std::string& tensor_name) {
    std::string line = "  " + dot_quote(from) + " -> " + dot_quote(to) + " [label=" + dot_quote(tensor_name) + "];\n";
    if (drawn.insert(line).second) out << line;
  };
  for (const std::string& id : order) {
    for (const std::string& r : nodes.at(id).reads) {
      auto it = producer.find(r);
      if (it != producer.end()) edge(it->second, id, r);
    }
  }
  for (int32_t t : p.outputs()) {
    auto it = producer.find(tensor(p, t).name);
    if (it != producer.end()) edge(it->second, "out:" + tensor(p, t).name, tensor(p, t).name);
  }

  out << "  subgraph cluster_legend {\n    label=\"backends\";\n    style=dashed;\n";
  for (const char* b : {kVgf, kVulkan, kCpu}) {
    out << "    " << dot_quote(std::string("legend:") + b) << " [fillcolor=\"" << fill_colour(b)
        << "\", label=" << dot_quote(b) << "];\n";
  }
  out << "  }\n}\n";
  return out.str();
}

}  // namespace gpuu::inspect

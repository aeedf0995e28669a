// Writing a program's VGF delegates as standalone files with scenarios for
// Arm's scenario runner, and wrapping a standalone VGF file as a program.
#include "standalone_vgf/standalone_vgf.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <unordered_set>
#include <vector>

#include "base/json_writer.h"
#include "graph/graph.h"
#include "partition/backend_capability.h"
#include "program/program_writer.h"
#include "program/subgraph.h"
#include "vgf/vgf_constant_refs.h"
#include "vgf/vgf_graph.h"
#include "vgf/vgf_vulkan_names.h"

namespace gpuu::vgf {
namespace {

// NumPy's type string and element size for a tensor VkFormat.
struct NpyType {
  const char* descr;
  size_t size;
};

bool npy_type_of(uint32_t vk_format, NpyType* out) {
  switch (vk_format) {
    case 100: *out = {"<f4", 4}; return true;         // VK_FORMAT_R32_SFLOAT
    case 76: *out = {"<f2", 2}; return true;          // VK_FORMAT_R16_SFLOAT
    case 99: *out = {"<i4", 4}; return true;          // VK_FORMAT_R32_SINT
    case 98: *out = {"<u4", 4}; return true;          // VK_FORMAT_R32_UINT
    case 75: *out = {"<i2", 2}; return true;          // VK_FORMAT_R16_SINT
    case 74: *out = {"<u2", 2}; return true;          // VK_FORMAT_R16_UINT
    case 14: *out = {"|i1", 1}; return true;          // VK_FORMAT_R8_SINT
    case 13: *out = {"|u1", 1}; return true;          // VK_FORMAT_R8_UINT
    case 111: *out = {"<i8", 8}; return true;         // VK_FORMAT_R64_SINT
    case 110: *out = {"<u8", 8}; return true;         // VK_FORMAT_R64_UINT
    case 1000460000u: *out = {"|b1", 1}; return true;  // VK_FORMAT_R8_BOOL_ARM
  }
  return false;
}

// The descriptor set number holding `slot` in some segment of `file`, or -1.
int64_t set_of(const VgfFile& file, const BindingSlot& slot) {
  for (const Segment& segment : file.sequence.segments) {
    for (size_t k = 0; k < segment.descriptor_sets.size(); ++k) {
      for (const BindingSlot& s : segment.descriptor_sets[k].bindings) {
        if (s == slot) return segment.descriptor_sets[k].set_number(k);
      }
    }
  }
  return -1;
}

std::string file_stem(const std::string& vgf_file_name) {
  const std::string ext = ".vgf";
  if (vgf_file_name.size() > ext.size() &&
      vgf_file_name.compare(vgf_file_name.size() - ext.size(), ext.size(), ext) == 0) {
    return vgf_file_name.substr(0, vgf_file_name.size() - ext.size());
  }
  return vgf_file_name;
}

}  // namespace

Result<std::vector<uint8_t>> zero_npy(uint32_t vk_format, const std::vector<int64_t>& shape) {
  NpyType type;
  if (!npy_type_of(vk_format, &type)) {
    const char* name = vk_format_name(vk_format);
    return err(StatusCode::kUnsupported, "VkFormat ", name ? name : std::to_string(vk_format).c_str(),
               " has no NumPy element type");
  }
  uint64_t count = 1;
  std::string dims;
  for (int64_t d : shape) {
    if (d < 0) return err(StatusCode::kUnsupported, "a tensor of dynamic shape has no .npy placeholder");
    count *= static_cast<uint64_t>(d);
    dims += std::to_string(d) + ", ";
  }
  // NumPy's own spelling: (3,) for rank 1, (2, 3) above, () for a scalar.
  if (!dims.empty()) dims.resize(dims.size() - (shape.size() == 1 ? 1 : 2));
  std::string header = std::string("{'descr': '") + type.descr + "', 'fortran_order': False, 'shape': (" + dims +
                       "), }";
  // Magic, version 1.0, u16 header length; the header ends in '\n' at a multiple of 64 bytes.
  const size_t prefix = 10;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.push_back(static_cast<uint8_t>(header.size() & 0xFF));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.resize(out.size() + count * type.size, 0);
  return out;
}

Result<Scenario> scenario_for_vgf(const VgfFile& file, const std::string& vgf_file_name) {
  const std::string stem = file_stem(vgf_file_name);
  const bool compute = !file.sequence.segments.empty() &&
                       file.sequence.segments.front().type == ModuleType::kCompute;
  Scenario scenario;
  struct Io {
    std::string uid;
    const Resource* resource;
    int64_t set;
    uint32_t binding;
    std::string npy;
    bool output;
  };
  std::vector<Io> ios;
  std::unordered_set<std::string> uids = {"graph"};
  for (int pass = 0; pass < 2; ++pass) {
    const bool output = pass == 1;
    const std::vector<BindingSlot>& slots = output ? file.sequence.outputs : file.sequence.inputs;
    const std::vector<std::string>& names = output ? file.sequence.output_names : file.sequence.input_names;
    const char* kind = output ? "output" : "input";
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].mrt_index >= file.resources.size()) {
        return err(StatusCode::kInvalidFormat, "model ", kind, " ", i, " names resource ", slots[i].mrt_index,
                   " of ", file.resources.size());
      }
      Io io;
      io.resource = &file.resources[slots[i].mrt_index];
      io.output = output;
      io.binding = slots[i].binding;
      io.set = set_of(file, slots[i]);
      if (io.set < 0) {
        return err(StatusCode::kUnsupported, "model ", kind, " ", i, " (binding ", slots[i].binding,
                   ") is in no descriptor set of any segment: Arm's scenario runner cannot bind it");
      }
      // uid: the sequence's name; unnamed or repeated names get a fallback.
      std::string base = i < names.size() && !names[i].empty() ? names[i] : std::string(kind) + "_" + std::to_string(i);
      io.uid = base;
      for (int n = 1; !uids.insert(io.uid).second; ++n) io.uid = base + "_" + std::to_string(n);
      io.npy = stem + "." + kind + "_" + std::to_string(i) + ".npy";
      if (!output) {
        Result<std::vector<uint8_t>> npy = zero_npy(io.resource->vk_format, io.resource->shape);
        if (!npy.ok()) return err(npy.status().code(), "model input '", io.uid, "': ", npy.status().message());
        scenario.inputs.push_back(ScenarioFile{io.npy, std::move(npy).value()});
      } else {
        NpyType type;
        if (!npy_type_of(io.resource->vk_format, &type)) {
          return err(StatusCode::kUnsupported, "model output '", io.uid, "': VkFormat ", io.resource->vk_format,
                     " has no NumPy element type");
        }
        scenario.outputs.push_back(io.npy);
      }
      ios.push_back(std::move(io));
    }
  }

  JsonWriter w;
  w.begin_object();
  w.key("commands").begin_array();
  w.begin_object().key("dispatch_vgf").begin_object();
  w.key("bindings").begin_array();
  for (const Io& io : ios) {
    w.begin_object().field("id", io.binding).field("resource_ref", io.uid).field("set", io.set).end_object();
  }
  w.end_array();
  w.field("graph_ref", "graph");
  w.end_object().end_object();
  w.end_array();

  w.key("resources").begin_array();
  w.begin_object().key("graph").begin_object().field("src", vgf_file_name).field("uid", "graph").end_object()
      .end_object();
  for (const Io& io : ios) {
    const Resource& r = *io.resource;
    if (compute) {
      NpyType type;
      npy_type_of(r.vk_format, &type);  // checked above
      uint64_t bytes = type.size;
      for (int64_t d : r.shape) bytes *= static_cast<uint64_t>(d);
      w.begin_object().key("buffer").begin_object();
      w.field(io.output ? "dst" : "src", io.npy);
      w.field("shader_access", io.output ? "writeonly" : "readonly");
      w.field("size", bytes);
      w.field("uid", io.uid);
    } else {
      const char* format = vk_format_name(r.vk_format);
      if (!format) {
        return err(StatusCode::kUnsupported, "tensor '", io.uid, "' has VkFormat ", r.vk_format,
                   ", which has no name for the scenario");
      }
      w.begin_object().key("tensor").begin_object();
      w.key("dims").begin_array();
      for (int64_t d : r.shape) w.value(d);
      w.end_array();
      w.field(io.output ? "dst" : "src", io.npy);
      w.field("format", format);
      w.field("shader_access", io.output ? "writeonly" : "readonly");
      w.field("uid", io.uid);
    }
    w.end_object().end_object();
  }
  w.end_array();
  w.end_object();
  if (!w.ok()) return err(StatusCode::kInternal, "scenario JSON left unbalanced");
  scenario.json = w.take();
  scenario.json.push_back('\n');
  return scenario;
}

Status extract_vgf_delegates(const program::Program& program, const std::string& dir,
                             std::vector<std::string>* written) {
  if (dir.empty()) return err(StatusCode::kInvalidArgument, "extract VGF: the directory is empty");
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    return err(StatusCode::kIo, "extract VGF: cannot create directory '", dir, "': ", std::strerror(errno));
  }
  for (size_t i = 0; i < program.delegates().size(); ++i) {
    if (program.delegates()[i].backend_id != partition::kVgfId) continue;
    Blob blob = program.processed_blob(static_cast<int32_t>(i));
    GPUU_ASSIGN_OR_RETURN(VgfFile file, decode_vgf(blob));
    // Constants the program stores once for the delegate go back into the file.
    for (const CompileSpecEntry& spec : program.delegates()[i].compile_specs) {
      if (spec.key != kConstantRefsKey) continue;
      // The lookup lives only during this call: it need not own the program.
      std::shared_ptr<const program::Program> borrowed(&program, [](const program::Program*) {});
      Status filled =
          fill_constant_refs(&file, decode_constant_refs(spec.value), program::program_constant_lookup(borrowed));
      if (!filled.ok()) return err(filled.code(), "extract VGF: delegate ", i, ": ", filled.message());
      GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> complete, encode_vgf(file));
      blob = Blob::take(std::move(complete));
    }
    std::string base = std::to_string(i);
    std::string vgf_path = dir + "/" + base + ".vgf";
    std::string json_path = dir + "/" + base + ".json";
    Result<Scenario> scenario = scenario_for_vgf(file, base + ".vgf");
    if (!scenario.ok()) {
      return err(scenario.status().code(), "extract VGF: delegate ", i, ": ", scenario.status().message());
    }
    GPUU_RETURN_IF_ERROR(
        program::write_file_atomically(vgf_path, std::vector<uint8_t>(blob.data(), blob.data() + blob.size())));
    const std::string& json = scenario.value().json;
    GPUU_RETURN_IF_ERROR(program::write_file_atomically(json_path, std::vector<uint8_t>(json.begin(), json.end())));
    if (written) {
      written->push_back(vgf_path);
      written->push_back(json_path);
    }
    for (const ScenarioFile& f : scenario.value().inputs) {
      std::string path = dir + "/" + f.name;
      GPUU_RETURN_IF_ERROR(program::write_file_atomically(path, f.bytes));
      if (written) written->push_back(path);
    }
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> program_from_vgf(const uint8_t* bytes, size_t size, const SharedGpuCompileSpec& spec) {
  if (!bytes || size == 0) return err(StatusCode::kInvalidArgument, "VGF: no bytes given");
  Blob blob = Blob::copy_of(bytes, size);
  GPUU_ASSIGN_OR_RETURN(VgfFile file, decode_vgf(blob));
  if (file.sequence.segments.size() != 1) {
    return err(StatusCode::kUnsupported, "VGF: the file has ", file.sequence.segments.size(),
               " segments; gpuu runs standalone VGF files of exactly one segment");
  }
  // The graph gpuu would run: checks the module and gives each interface its name, type and shape.
  Result<graph::Graph> g = graph_from_vgf(file);
  if (!g.ok()) return err(g.status().code(), "VGF: ", g.status().message());
  const graph::Graph& graph = g.value();
  program::ProgramBuilder builder;
  program::DelegateDesc d;
  d.backend_id = partition::kVgfId;
  SharedGpuCompileSpec shared = spec;
  shared.present = true;
  d.compile_specs = make_shared_gpu_compile_specs(shared);
  d.processed = blob;
  std::set<std::string> names;
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<graph::ValueId>& ids = pass == 0 ? graph.inputs() : graph.outputs();
    std::vector<int32_t> tensors;
    for (graph::ValueId id : ids) {
      const graph::Value& v = graph.value(id);
      if (v.name.empty()) return err(StatusCode::kUnsupported, "VGF: a model input or output has no name");
      if (!names.insert(v.name).second) {
        return err(StatusCode::kUnsupported, "VGF: two model inputs/outputs are both named '", v.name, "'");
      }
      tensors.push_back(builder.add_tensor(v.name, v.dtype, v.shape));
    }
    (pass == 0 ? d.inputs : d.outputs) = tensors;
    if (pass == 0) {
      builder.set_inputs(tensors);
    } else {
      builder.set_outputs(tensors);
    }
  }
  for (const graph::Node& n : graph.nodes()) d.nodes.push_back(program::NodeRef{n.name, n.op});
  builder.add_delegate_call(builder.add_delegate(std::move(d)));
  return builder.finish();
}

}  // namespace gpuu::vgf

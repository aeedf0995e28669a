// VgfBackend: export (region -> VGF) and run (VGF -> executor on the shared context).
#include "backends/vgf/vgf_backend.h"

#include "backends/vgf/data_graph_executor.h"
#include "backends/vgf/vgf_region.h"
#include "base/log.h"
#include "context/vulkan_arm.h"
#include "graph/builder.h"
#include "kernels/kernel_graph.h"
#include "kernels/op_table.h"
#include "vgf/tosa_lowering.h"
#include "vgf/vgf_constant_refs.h"
#include "vgf/vgf_file.h"
#include "vgf/vgf_graph.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>

namespace gpuu::vgf {
namespace {

// The executor's KernelGraph memory as the contract counts it: an arena of
// its own and unit scratch are private; a planned arena is the runtime's
// workspace (init asks for it).
backends::DelegateMemory executor_memory(const kernels::KernelGraphMemory& m, bool planned = false) {
  backends::DelegateMemory d;
  d.shared_constants = m.weights;
  d.constant_bytes = m.constant_bytes;
  (planned ? d.workspace_bytes : d.private_bytes) = m.arena_bytes;
  d.private_bytes += m.scratch_bytes;
  return d;
}

// The blob's VGF file with the records it leaves to the program's store filled.
Result<VgfFile> decode_filled(const Blob& processed, const std::vector<CompileSpecEntry>& compile_specs,
                              const program::ConstantLookup& constants) {
  GPUU_ASSIGN_OR_RETURN(VgfFile file, decode_vgf(processed));
  for (const CompileSpecEntry& spec : compile_specs) {
    if (spec.key != kConstantRefsKey) continue;
    GPUU_RETURN_IF_ERROR(fill_constant_refs(&file, decode_constant_refs(spec.value), constants));
  }
  return file;
}

// One delegate: its graph runs either natively (data-graph pipelines) or on
// gpuu's TOSA executor (the Vulkan kernels); exactly one of the two is set.
class VgfHandle final : public backends::DelegateHandle {
 public:
  explicit VgfHandle(std::unique_ptr<kernels::KernelGraph> executor) : executor_(std::move(executor)) {}
  explicit VgfHandle(std::unique_ptr<DataGraphExecutor> native) : native_(std::move(native)) {}
  ~VgfHandle() override { log(LogLevel::kInfo, "VGF", "destroy: handle=", static_cast<const void*>(this)); }
  const SharedGpuContextPtr& context() const override {
    return native_ ? native_->context() : executor_->context();
  }
  VkCommandPool command_pool() const override { return native_ ? native_->command_pool() : executor_->command_pool(); }
  double last_gpu_time_us() const override {
    return native_ ? native_->last_gpu_time_us() : executor_->last_gpu_time_us();
  }
  size_t dispatch_count() const override { return native_ ? native_->dispatch_count() : executor_->dispatch_count(); }
  VkCommandBuffer command_buffer() const {
    return native_ ? native_->command_buffer() : executor_->command_buffer();
  }
  // The executor's kernels re-point; the native path's tensors alias the
  // memory bind_io gave, so it keeps the default (the runtime copies).
  Status rebind_io(const std::vector<backends::BufferRange>& inputs,
                   const std::vector<backends::BufferRange>& outputs) override {
    if (native_) return DelegateHandle::rebind_io(inputs, outputs);
    return executor_->rebind(inputs, outputs);
  }
  bool native() const { return native_ != nullptr; }
  std::vector<gpu::TimedStep> step_times() const override {
    return native_ ? std::vector<gpu::TimedStep>{} : executor_->step_times();
  }
  backends::DelegateMemory memory() const override {
    backends::DelegateMemory d;
    if (native_) {
      d.private_bytes = native_->memory_bytes();
      return d;
    }
    return executor_memory(executor_->memory());
  }

 private:
  std::unique_ptr<kernels::KernelGraph> executor_;
  std::unique_ptr<DataGraphExecutor> native_;
};

// RFC phase 4: a device that claims the data-graph extension must provide its
// entry points, or init fails with a clear error instead of crashing later.
Status check_native_path(const SharedGpuContext& ctx) {
  if (!ctx.has_extension(vk::kDataGraphExtension)) return Status::Ok();
  for (const char* name : data_graph_entry_points()) {
    if (!ctx.vki().vkGetDeviceProcAddr(ctx.device(), name)) {
      return err(StatusCode::kUnsupported, "device '", ctx.device_name(), "' has ", vk::kDataGraphExtension,
                 " enabled but its entry point ", name, " is unavailable");
    }
  }
  return Status::Ok();
}

void append_attr(std::ostringstream& out, int64_t v) { out << v; }
void append_attr(std::ostringstream& out, double v) { out << v; }
void append_attr(std::ostringstream& out, const std::string& v) { out << v; }
template <typename T>
void append_attr(std::ostringstream& out, const std::vector<T>& v) {
  for (const T& x : v) out << x << ',';
}

// The node alone, lowered to TOSA and raised back, checked node by node.
std::string check_round_trip(const graph::Graph& graph, const graph::Node& node) {
  graph::Graph one;
  std::vector<graph::ValueId> inputs;
  std::map<graph::ValueId, graph::ValueId> isolated;  // a value read twice (x * x) is one input
  for (graph::ValueId id : node.inputs) {
    if (id < 0) {
      inputs.push_back(graph::kNone);
      continue;
    }
    if (auto it = isolated.find(id); it != isolated.end()) {
      inputs.push_back(it->second);
      continue;
    }
    const graph::Value& v = graph.value(id);
    Result<graph::ValueId> in =
        v.constant >= 0
            ? graph::add_graph_constant(one, v.name, v.dtype, v.shape,
                                        graph.constants()[static_cast<size_t>(v.constant)].data)
            : graph::add_graph_input(one, v.name, v.dtype, v.shape);
    if (!in.ok()) return "cannot isolate node '" + node.name + "': " + in.status().message();
    isolated[id] = in.value();
    inputs.push_back(in.value());
  }
  Result<std::vector<graph::ValueId>> outs = graph::add_op(one, node.op, node.name, inputs, node.attrs);
  if (!outs.ok()) return "cannot isolate node '" + node.name + "': " + outs.status().message();
  for (graph::ValueId o : outs.value()) one.mark_output(o);
  Result<TosaGraph> tosa = lower_to_tosa(one);
  if (!tosa.ok()) return tosa.status().message();
  Result<graph::Graph> raised = tosa_to_gpuu(tosa.value());
  if (!raised.ok()) return "TOSA form cannot run here: " + raised.status().message();
  for (const graph::Node& n : raised.value().nodes()) {
    std::string why = kernels::vulkan_supports(raised.value(), n);
    if (!why.empty()) {
      return "in TOSA form '" + node.name + "' needs a " + n.op + " the Vulkan kernels lack (" + why + ")";
    }
  }
  return "";
}

}  // namespace

const std::vector<const char*>& data_graph_entry_points() { return vk::arm_device_entry_points(); }

bool VgfBackend::is_available() const { return vk::system_loader().ok(); }

Result<std::unique_ptr<backends::DelegateHandle>> VgfBackend::init(backends::BackendInitContext& context,
                                                                   const Blob& processed,
                                                                   const std::vector<CompileSpecEntry>& compile_specs) {
  GPUU_ASSIGN_OR_RETURN(SharedGpuContextPtr ctx, backends::resolve_delegate_context(context, "VGF"));
  auto fail = [&](const Status& s) {
    log(LogLevel::kInfo, "VGF", "init: ", backends::describe_init(processed, compile_specs), " failed");
    return err(s.code(), "VGF delegate ", context.delegate_index, ": ", s.message());
  };
  Result<DataGraphPath> path = data_graph_path(context.options);
  if (!path.ok()) return fail(path.status());
  if (Status s = check_native_path(*ctx); !s.ok()) return fail(s);
  Result<VgfFile> file = decode_filled(processed, compile_specs, context.constants);
  if (!file.ok()) return fail(file.status());
  Result<graph::Graph> graph = graph_from_vgf(file.value());
  if (!graph.ok()) return fail(graph.status());
  if (!context.bind_io) return err(StatusCode::kInvalidArgument, "VGF delegate: the runtime bound no buffers");
  GPUU_ASSIGN_OR_RETURN(auto io, context.bind_io(ctx, graph.value(), {}));

  // Which path, and why: native through VK_ARM_data_graph where the device
  // has it, unless the session asks for the executor; the executor otherwise.
  const DataGraphPath wanted = path.value();
  // A file of COMPUTE segments only (a custom shader) is a compute pipeline
  // from the file's own SPIR-V on either path: no data graph is involved.
  bool compute_only = !file->sequence.segments.empty();
  for (const Segment& segment : file->sequence.segments) compute_only = compute_only && segment.type == ModuleType::kCompute;
  std::string why = wanted == DataGraphPath::kExecutor ? std::string("the session asked for the executor")
                    : compute_only ? std::string("a COMPUTE segment: a compute pipeline from the file's SPIR-V")
                                   : data_graph_refusal(*ctx, file.value());
  std::unique_ptr<VgfHandle> handle;
  if (why.empty()) {
    Result<std::unique_ptr<DataGraphExecutor>> native = DataGraphExecutor::create(ctx, file.value(), io.first, io.second,
                                                                                  context.gpu_timing);
    if (native.ok()) {
      handle = std::make_unique<VgfHandle>(std::move(native).value());
    } else if (wanted == DataGraphPath::kNative) {
      return fail(err(native.status().code(), "the native VK_ARM_data_graph path failed: ", native.status().message()));
    } else {
      why = "the native path failed (" + native.status().message() + ")";
      log(LogLevel::kWarn, "VGF", "delegate ", context.delegate_index, ": ", why, "; running gpuu's TOSA executor");
    }
  } else if (wanted == DataGraphPath::kNative && !compute_only) {
    return fail(err(StatusCode::kUnsupported, "the session asked for the native VK_ARM_data_graph path, but ", why));
  }
  if (!handle) {
    kernels::KernelGraphOptions options;  // the executor fuses elementwise chains and reuses memory
    options.gpu_timing = context.gpu_timing;
    options.host_visible_results = !context.runtime_makes_host_visible;
    options.profile_steps = context.profile_steps;
    // Intermediates in the runtime's workspace, as the Vulkan backend's: one
    // set for every size of a program with dims, and counted by the session.
    if (context.workspace) {
      options.arena = [&context, ctx](VkDeviceSize bytes) { return context.workspace(ctx, bytes); };
    }
    Result<std::unique_ptr<kernels::KernelGraph>> executor =
        kernels::KernelGraph::create(ctx, graph.value(), io.first, io.second, options);
    if (!executor.ok()) return fail(executor.status());
    handle = std::make_unique<VgfHandle>(std::move(executor).value());
  }
  log(LogLevel::kInfo, "VGF", "init: ", backends::describe_init(processed, compile_specs), " path=",
      handle->native()  ? "native (VK_ARM_data_graph on '" + ctx->device_name() + "')"
      : compute_only ? "compute (" + why + ")"
                     : "executor (" + why + ")");
  log(LogLevel::kDebug, "VGF", "init: handle=", static_cast<const void*>(handle.get()), " dispatches=",
      handle->dispatch_count(), " on '", ctx->device_name(), "'");
  return std::unique_ptr<backends::DelegateHandle>(std::move(handle));
}

Result<backends::DelegateMemory> VgfBackend::plan_memory(const Blob& processed,
                                                          const std::vector<CompileSpecEntry>& compile_specs,
                                                          const program::ConstantLookup& constants) const {
  // The executor's plan: the native path's memory is the driver's to say, on its device.
  GPUU_ASSIGN_OR_RETURN(VgfFile file, decode_filled(processed, compile_specs, constants));
  GPUU_ASSIGN_OR_RETURN(graph::Graph graph, graph_from_vgf(file));
  return executor_memory(kernels::KernelGraph::plan_memory(graph), /*planned=*/true);
}

Status VgfBackend::execute(backends::DelegateHandle& handle, const backends::ExecuteArgs& args) {
  auto& h = static_cast<VgfHandle&>(handle);
  log(LogLevel::kInfo, "VGF", "execute: handle=", static_cast<const void*>(&handle), " args=", h.dispatch_count(),
      h.native() ? " data-graph dispatches" : " dispatches");
  return gpu::submit_recorded(*h.context(), h.command_buffer(), args);
}

std::string VgfBackend::check(const graph::Graph& graph, const graph::Node& node) const {
  // The executor runs the TOSA graph on the Vulkan kernels: what they cannot
  // run, this backend cannot take either (TOSA's own limits are the
  // partitioner's VGF table).
  std::string why = kernels::vulkan_supports(graph, node);
  if (!why.empty()) return "gpuu's TOSA executor runs on the Vulkan kernels, and " + why;
  if (node.op == "custom_shader") return "";  // a COMPUTE segment, not TOSA
  // Lowering may rewrite the node (a gather's flat offsets are i32
  // arithmetic, say): what comes back from TOSA must run too. Answers are
  // kept per node signature, so a large graph lowers each kind of node once.
  std::ostringstream key;
  key << node.op;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    graph::ValueId id = node.inputs[i];
    if (id < 0) {
      key << "|-";
      continue;
    }
    const graph::Value& v = graph.value(id);
    key << '|' << graph::dtype_name(v.dtype) << graph::shape_to_string(v.shape) << (v.constant >= 0 ? "c" : "");
    // x * x and x * y are different nodes: a repeated input names its first position.
    auto first = static_cast<size_t>(std::find(node.inputs.begin(), node.inputs.end(), id) - node.inputs.begin());
    if (first != i) key << '=' << first;
  }
  for (const auto& [name, value] : node.attrs) {
    key << '|' << name << '=';
    std::visit([&key](const auto& a) { append_attr(key, a); }, value);
  }
  static std::mutex mutex;
  static std::map<std::string, std::string> answers;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = answers.find(key.str());
    if (it != answers.end()) return it->second;
  }
  std::string answer = check_round_trip(graph, node);
  std::lock_guard<std::mutex> lock(mutex);
  answers.emplace(key.str(), answer);
  return answer;
}

Result<std::vector<uint8_t>> VgfBackend::preprocess(const graph::Graph& graph, const partition::Region& region,
                                                    const std::vector<CompileSpecEntry>& compile_specs) const {
  log(LogLevel::kInfo, "VGF", "preprocess: ", region.nodes.size(), " nodes ",
      backends::describe_compile_specs(compile_specs));
  GPUU_ASSIGN_OR_RETURN(graph::Graph sub, backends::region_graph(graph, region));
  GPUU_ASSIGN_OR_RETURN(VgfFile file, vgf_from_region(sub));
  return encode_vgf(file);
}

namespace {

// Records smaller than this stay in the blob: a program constant costs a
// tensor entry, a segment entry and up to 63 bytes of alignment.
constexpr size_t kMinProgramConstantBytes = 256;

// FNV-1a over a constant's type, shape and bytes: names a rearranged copy
// after its contents, so that regions making the same copy share one.
uint64_t content_hash(graph::DType dtype, const graph::Shape& shape, const Blob& data) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  const uint8_t type = static_cast<uint8_t>(dtype);
  mix(&type, 1);
  for (int64_t d : shape) mix(reinterpret_cast<const uint8_t*>(&d), sizeof d);
  mix(data.data(), data.size());
  return h;
}

}  // namespace

Result<program::PreprocessedRegion> VgfBackend::preprocess_for_program(
    const graph::Graph& graph, const partition::Region& region, const program::RegionIo& io,
    const std::vector<CompileSpecEntry>& compile_specs) const {
  log(LogLevel::kInfo, "VGF", "preprocess: ", region.nodes.size(), " nodes ",
      backends::describe_compile_specs(compile_specs));
  GPUU_ASSIGN_OR_RETURN(graph::Graph sub, backends::region_graph(graph, region));
  if (sub.nodes().size() == 1 && sub.node(0).op == "custom_shader") {  // a COMPUTE segment: no constants
    return Backend::preprocess_for_program(graph, region, io, compile_specs);
  }
  // A constant with another reader (a tied embedding's gather, another
  // backend's region), or whose bytes another constant has (the program
  // stores those once), is read in the model's layout: a rearranged copy
  // for this region would store it twice.
  TosaLoweringOptions lowering;
  const std::vector<std::vector<graph::NodeId>> readers = graph.consumers();
  std::multimap<size_t, size_t> constants_by_size;
  for (size_t c = 0; c < graph.constants().size(); ++c) constants_by_size.emplace(graph.constants()[c].data.size(), c);
  auto same_bytes_elsewhere = [&](size_t c) {
    const Blob& data = graph.constants()[c].data;
    auto [first, last] = constants_by_size.equal_range(data.size());
    return std::any_of(first, last, [&](const auto& other) {
      return other.second != c && graph.constants()[other.second].data.same_bytes(data);
    });
  };
  for (graph::ValueId v : io.inputs) {
    const graph::Value& value = graph.value(v);
    if (value.constant == graph::kNone) continue;
    const std::vector<graph::NodeId>& r = readers[static_cast<size_t>(v)];
    if (std::any_of(r.begin(), r.end(), [&](graph::NodeId n) { return n != r[0]; }) ||
        same_bytes_elsewhere(static_cast<size_t>(value.constant))) {
      lowering.model_layout.insert(value.name);
    }
  }
  GPUU_ASSIGN_OR_RETURN(TosaGraph tosa, lower_to_tosa(sub, lowering));
  std::vector<const TosaConstant*> sources;
  GPUU_ASSIGN_OR_RETURN(VgfFile file, vgf_from_tosa(tosa, &sources));
  std::map<std::string, graph::ValueId> constant_inputs;
  for (graph::ValueId v : io.inputs) {
    if (graph.value(v).constant != graph::kNone) constant_inputs.emplace(graph.value(v).name, v);
  }
  program::PreprocessedRegion out;
  out.constants_read.emplace();
  std::vector<std::string> refs(file.constants.size());
  bool any = false;
  for (size_t i = 0; i < file.constants.size(); ++i) {
    Constant& c = file.constants[i];
    const std::string name = i < sources.size() ? sources[i]->name : std::string();
    if (c.data.size() < kMinProgramConstantBytes || name.find(',') != std::string::npos) continue;
    const Resource& r = file.resources[c.mrt_index];
    Result<graph::DType> dtype = dtype_of_vk_format(r.vk_format);
    if (!dtype.ok()) continue;
    auto it = constant_inputs.find(name);
    if (it != constant_inputs.end()) {
      const graph::Value& v = graph.value(it->second);
      if (v.dtype == dtype.value() && v.shape == r.shape &&
          graph.constants()[static_cast<size_t>(v.constant)].data.same_bytes(c.data)) {
        refs[i] = v.name;
        if (std::find(out.constants_read->begin(), out.constants_read->end(), v.name) == out.constants_read->end()) {
          out.constants_read->push_back(v.name);
        }
        c.data = Blob();
        any = true;
        continue;
      }
    }
    // Rearranged or retyped for TOSA: a program constant of its own.
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(content_hash(dtype.value(), r.shape, c.data)));
    refs[i] = (name.empty() ? std::string("constant") : name) + ".vgf." + hash;
    program::AddedConstant added{refs[i], dtype.value(), r.shape, c.data};
    // A permutation of the region's constant (same type, same elements): the
    // program may keep only this copy (a source with dims names it so).
    if (it != constant_inputs.end() && !sources[i]->source_perm.empty()) {
      const graph::Value& v = graph.value(it->second);
      if (v.dtype == dtype.value() && graph::shape_numel(v.shape) == graph::shape_numel(sources[i]->source_view)) {
        added.rearranges = v.name;
        added.view = sources[i]->source_view;
        added.perm = sources[i]->source_perm;
      }
    }
    out.added_constants.push_back(std::move(added));
    c.data = Blob();
    any = true;
  }
  if (any) {
    out.extra_compile_specs.push_back(CompileSpecEntry{kConstantRefsKey, encode_constant_refs(refs)});
    out.format_major = program::kConstantRefsFormatMajor;  // a 2.x reader would not fill the records
  }
  GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, encode_vgf(file));
  out.processed = Blob::take(std::move(bytes));
  return out;
}

}  // namespace gpuu::vgf

// The backend registry and what both GPU backends share: context resolution
// and the init log text.
#include "backends/backend.h"

#include <sstream>

#include "context/vulkan_bootstrap.h"

namespace gpuu::backends {

Status DelegateHandle::rebind_io(const std::vector<BufferRange>&, const std::vector<BufferRange>&) {
  return err(StatusCode::kUnsupported, "this delegate reads and writes only the buffers it was initialised with");
}
namespace {

Backend* find_locked(const std::vector<std::unique_ptr<Backend>>& backends, const std::string& id) {
  for (const auto& b : backends) {
    if (id == b->id()) return b.get();
  }
  return nullptr;
}

}  // namespace

partition::Verdict CheckedCapability::check(const graph::Graph& graph, graph::NodeId node) const {
  partition::Verdict v;
  if (!backend_.check(graph, graph.node(node)).empty()) v.kind = partition::Verdict::Kind::kBackendRefused;
  return v;
}

std::string CheckedCapability::describe(const graph::Graph& graph, graph::NodeId node,
                                        const partition::Verdict&) const {
  return backend_.check(graph, graph.node(node));
}

Backend::Backend() : checked_(std::make_unique<CheckedCapability>(*this, 2.0)) {}
Backend::~Backend() = default;

const partition::BackendCapability& Backend::capability() const { return *checked_; }

Result<program::PreprocessedRegion> Backend::preprocess_for_program(
    const graph::Graph& graph, const partition::Region& region, const program::RegionIo&,
    const std::vector<CompileSpecEntry>& compile_specs) const {
  GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, preprocess(graph, region, compile_specs));
  program::PreprocessedRegion out;
  out.processed = Blob::take(std::move(blob));
  return out;
}

Result<DelegateMemory> Backend::plan_memory(const Blob&, const std::vector<CompileSpecEntry>&,
                                           const program::ConstantLookup&) const {
  return err(StatusCode::kUnsupported, "backend '", id(), "' does not plan its memory");
}

const std::vector<OptionDecl>& Backend::declared_options() const {
  static const std::vector<OptionDecl> none;
  return none;
}

Status BackendRegistry::register_backend(std::unique_ptr<Backend> backend) {
  if (!backend) return err(StatusCode::kInvalidArgument, "register_backend: null backend");
  std::lock_guard<std::mutex> lock(mutex_);
  if (find_locked(backends_, backend->id())) {
    return err(StatusCode::kAlreadyExists, "a backend with id '", backend->id(), "' is already registered");
  }
  backends_.push_back(std::move(backend));
  return Status::Ok();
}

Backend* BackendRegistry::find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return find_locked(backends_, id);
}

std::vector<Backend*> BackendRegistry::backends() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Backend*> out;
  for (const auto& b : backends_) out.push_back(b.get());
  return out;
}

std::vector<std::string> BackendRegistry::ids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& b : backends_) out.emplace_back(b->id());
  return out;
}

Result<SharedGpuContextPtr> resolve_delegate_context(const BackendInitContext& context, const char* backend_name) {
  SharedGpuCompileSpec s = context.shared;
  if (!s.enabled()) s.token = std::string(backend_name) + "-local";  // a private context (RFC: "vgf-local")
  Result<SharedGpuContextPtr> ctx = resolve_shared_context(s, vulkan_context_factory(context.device));
  if (!ctx.ok()) {
    return err(ctx.status().code(), backend_name, " delegate ", context.delegate_index, ": ", ctx.status().message());
  }
  if (!context.pipeline_cache_path.empty()) ctx.value()->pipeline_cache().load(context.pipeline_cache_path);
  return ctx;
}

Result<graph::Graph> region_graph(const graph::Graph& graph, const partition::Region& region) {
  GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, program::serialize_region(graph, region));
  program::ConstantLookup from_graph = [&graph](const std::string& name, graph::DType dtype,
                                                const graph::Shape& shape) -> Result<Blob> {
    for (const graph::Constant& c : graph.constants()) {
      const graph::Value& v = graph.value(c.value);
      if (c.name == name && v.dtype == dtype && v.shape == shape) return c.data;
    }
    return err(StatusCode::kNotFound, "no constant '", name, "' in the graph");
  };
  return program::parse_subgraph(bytes.data(), bytes.size(), from_graph);
}

std::string describe_init(const Blob& processed, const std::vector<CompileSpecEntry>& compile_specs) {
  return str_cat("processed=", processed.size(), "B ", describe_compile_specs(compile_specs));
}

std::string describe_compile_specs(const std::vector<CompileSpecEntry>& compile_specs) {
  std::ostringstream out;
  out << "compile_specs=";
  for (size_t i = 0; i < compile_specs.size(); ++i) {
    out << (i ? "," : "") << compile_specs[i].key << '=';
    for (uint8_t b : compile_specs[i].value) out << (b >= 0x20 && b < 0x7f ? static_cast<char>(b) : '?');
  }
  return out.str();
}

}  // namespace gpuu::backends

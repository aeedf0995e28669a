// A backend loaded from a plugin .so: adapts the C vtable of gpuu_backend.h to
// backends::Backend, so the runtime and the partitioner treat it as any other.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "gpuu_backend.h"

namespace gpuu::plugins {

// The smallest descriptor the loader takes: API 1.0's, which ends at destroy.
// Fields after it are read only where the plugin's struct_size reaches them.
inline constexpr size_t kFirstDescriptorSize =
    offsetof(gpuu_backend_plugin, destroy) + sizeof(gpuu_backend_plugin::destroy);

// The load-time options `plugin` declares (API 1.1; none for a descriptor
// that ends before them), or kInvalidArgument naming the first malformed one.
Result<std::vector<backends::OptionDecl>> plugin_option_decls(const gpuu_backend_plugin& plugin);

class PluginBackend : public backends::Backend {
 public:
  // `plugin` has passed the loader's checks; it and the .so outlive this.
  // `options`: plugin_option_decls(*plugin).
  PluginBackend(const gpuu_backend_plugin* plugin, std::string path, std::vector<backends::OptionDecl> options);

  const char* id() const override { return plugin_->id; }
  const char* log_name() const override { return plugin_->id; }
  uint32_t version() const override { return plugin_->backend_version; }
  bool is_available() const override { return plugin_->is_available() != 0; }
  const char* plugin_path() const override { return path_.c_str(); }
  const std::vector<backends::OptionDecl>& declared_options() const override { return options_; }
  bool runs_on_host() const { return (plugin_->flags & GPUU_BACKEND_PLUGIN_RUNS_ON_HOST) != 0; }
  const gpuu_backend_plugin& descriptor() const { return *plugin_; }

  Result<std::unique_ptr<backends::DelegateHandle>> init(backends::BackendInitContext& context, const Blob& processed,
                                                         const std::vector<CompileSpecEntry>& compile_specs) override;
  Status execute(backends::DelegateHandle& handle, const backends::ExecuteArgs& args) override;
  std::string check(const graph::Graph& graph, const graph::Node& node) const override;
  // The processed blob is the region's I/O signature (for the runtime's
  // bind_io) followed by the plugin's own bytes.
  Result<std::vector<uint8_t>> preprocess(const graph::Graph& graph, const partition::Region& region,
                                          const std::vector<CompileSpecEntry>& compile_specs) const override;
  // What the plugin declares (its node cost, ops and dtypes), with its check()
  // deciding each node: the partitioner, explain report and gpuu-inspect --ops
  // read the plugin as they read a built-in backend.
  const partition::BackendCapability& capability() const override { return *capability_; }

 private:
  const gpuu_backend_plugin* plugin_;
  std::string path_;
  std::vector<backends::OptionDecl> options_;
  std::unique_ptr<partition::BackendCapability> capability_;
};

}  // namespace gpuu::plugins

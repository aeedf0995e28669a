// VgfBackend's option declarations and their parsing.
#include "backends/vgf/vgf_options.h"

#include <iterator>
#include <string>

#include "partition/backend_capability.h"

namespace gpuu::vgf {
namespace {

// By DataGraphPath value.
const char* const kPathNames[] = {"auto", "native", "executor"};

}  // namespace

const char* data_graph_path_name(DataGraphPath path) { return kPathNames[static_cast<size_t>(path)]; }

const std::vector<backends::OptionDecl>& vgf_options() {
  static const std::vector<backends::OptionDecl> options = {
      {kDataGraphPathKey,
       {std::begin(kPathNames), std::end(kPathNames)},
       data_graph_path_name(DataGraphPath::kAuto),
       "how VGF graphs run: native (VK_ARM_data_graph pipelines, else init fails), executor (gpuu's TOSA "
       "executor) or auto (native where the device has it)"},
  };
  return options;
}

Result<DataGraphPath> data_graph_path(const backends::OptionValues& options) {
  auto it = options.find(kDataGraphPathKey);
  if (it == options.end()) return DataGraphPath::kAuto;
  std::string names;
  for (size_t i = 0; i < std::size(kPathNames); ++i) {
    if (it->second == kPathNames[i]) return static_cast<DataGraphPath>(i);
    names += (i ? ", " : "") + std::string(kPathNames[i]);
  }
  return err(StatusCode::kInvalidArgument, kDataGraphPathKey, " '", it->second, "' is not one of ", names);
}

backends::BackendOption data_graph_path_option(DataGraphPath path) {
  return {partition::kVgfId, kDataGraphPathKey, data_graph_path_name(path)};
}

}  // namespace gpuu::vgf

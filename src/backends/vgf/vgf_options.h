// VgfBackend's load-time options, declared in one place: data_graph_path.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend_options.h"

namespace gpuu::vgf {

// Whether a delegate's graph runs natively through VK_ARM_data_graph where
// the device has it (kAuto), must (kNative: init fails, saying why, where it
// cannot), or runs on gpuu's own kernels (kExecutor).
enum class DataGraphPath : uint8_t { kAuto = 0, kNative = 1, kExecutor = 2 };

inline constexpr const char* kDataGraphPathKey = "data_graph_path";

// The option value naming `path`: "auto", "native", "executor".
const char* data_graph_path_name(DataGraphPath path);

// What VgfBackend::declared_options() returns.
const std::vector<backends::OptionDecl>& vgf_options();

// The path a delegate's options choose; kInvalidArgument for a value the
// declaration does not allow (the session refuses those before init).
Result<DataGraphPath> data_graph_path(const backends::OptionValues& options);

// The session option choosing `path` for every VGF delegate.
backends::BackendOption data_graph_path_option(DataGraphPath path);

}  // namespace gpuu::vgf

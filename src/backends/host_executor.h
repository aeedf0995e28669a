// The host executor: what runs the nodes no delegate took (the CPU fallback),
// as the runtime sees it. The runtime reaches it through this interface,
// handed over by runtime/builtin_backends, never through its own headers.
#pragma once

#include <string_view>
#include <vector>

#include "backends/host_tensor.h"
#include "base/status.h"
#include "graph/graph.h"

namespace gpuu::backends {

class HostExecutor {
 public:
  virtual ~HostExecutor() = default;
  // The tag of its log lines ("CPU").
  virtual const char* log_name() const = 0;
  // Whether run_node has a kernel for `op`.
  virtual bool supports(std::string_view op) const = 0;
  // Runs one node of `graph`. `inputs` has one entry per node.inputs entry:
  // nullptr exactly where node.inputs holds kNone (an absent optional
  // input), otherwise a tensor of the dtype and shape the graph declares. On
  // success `outputs` is replaced by one tensor per node output. Errors name
  // the node and the input, attribute or index at fault.
  virtual Status run_node(const graph::Graph& graph, const graph::Node& node,
                          const std::vector<const HostTensor*>& inputs, std::vector<HostTensor>* outputs) const = 0;
};

}  // namespace gpuu::backends

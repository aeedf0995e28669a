// The CPU host executor: the reference kernels behind the contract's interface.
#include "backends/cpu/cpu_backend.h"

#include "backends/cpu/cpu_kernels.h"

namespace gpuu::cpu {
namespace {

class CpuHostExecutor final : public backends::HostExecutor {
 public:
  const char* log_name() const override { return "CPU"; }
  bool supports(std::string_view op) const override { return cpu_supports_op(op); }
  Status run_node(const graph::Graph& graph, const graph::Node& node, const std::vector<const HostTensor*>& inputs,
                  std::vector<HostTensor>* outputs) const override {
    return cpu::run_node(graph, node, inputs, outputs);
  }
};

}  // namespace

const backends::HostExecutor& cpu_host_executor() {
  static const CpuHostExecutor executor;
  return executor;
}

}  // namespace gpuu::cpu

// Test harness for Vulkan kernels: runs a graph through a real KernelGraph
// on the test device and compares it with the CPU reference kernels.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "graph/builder.h"
#include "kernels/kernel_graph.h"
#include "support/test_vulkan_device.h"

namespace gpuu::vulkan_test {

// One gpuu-created context for the whole test binary (GPUU_DEVICE picks it).
SharedGpuContextPtr test_context();

struct RunStats {
  size_t dispatches = 0;
  size_t barriers = 0;
  size_t pipelines = 0;
  size_t arena_bytes = 0;
  size_t scratch_bytes = 0;
  std::vector<gpu::TimedStep> steps;  // each dispatch's time and work (KernelGraphOptions::profile_steps)
};

// Binds host-visible buffers to the graph's inputs and outputs, builds a
// KernelGraph, submits it once and reads the outputs back.
Result<std::vector<cpu::HostTensor>> run_on_vulkan(const graph::Graph& graph, const std::vector<cpu::HostTensor>& inputs,
                                                   RunStats* stats = nullptr,
                                                   const kernels::KernelGraphOptions& options = {});

// Submits `region`'s recorded work once on the test context and waits for it.
Status submit_and_wait(const kernels::KernelGraph& region);

// Deterministic pseudo-random tensor with values in [lo, hi) (integers: whole numbers).
cpu::HostTensor random_tensor(graph::DType dtype, const graph::Shape& shape, uint32_t seed, double lo, double hi);

// |got - want| <= atol + rtol * |want| everywhere (NaNs must match NaNs), with
// the first few mismatches named.
testing::AssertionResult all_close(const cpu::HostTensor& got, const cpu::HostTensor& want, double atol, double rtol);

// Builds a one-node graph of `op` over `inputs` (graph inputs named in0, in1,
// ...; `constant_inputs[i]` true makes input i a graph constant), runs it on
// the CPU reference and on Vulkan, and compares every output.
testing::AssertionResult node_matches_cpu(const std::string& op, const std::vector<cpu::HostTensor>& inputs,
                                          const graph::AttrMap& attrs, double atol, double rtol,
                                          const std::vector<bool>& constant_inputs = {},
                                          const kernels::KernelGraphOptions& options = {});

// Wraps an application's device (owning nothing of it) as a shared context
// and registers it under (token, group), as an application would through
// the C ABI; `extensions` are what the context claims to have enabled.
Result<SharedGpuContextPtr> register_app_device(const gpuu_test::AppDevice& app, const std::string& token,
                                                int64_t group, std::vector<std::string> extensions = {});

// Compares one output with its reference (exact comparisons of index and shape ops, say).
using OutputComparison = testing::AssertionResult (*)(const cpu::HostTensor& got, const cpu::HostTensor& want);

// Runs `graph` on the CPU reference and on Vulkan and compares every output with `compare`.
testing::AssertionResult graph_matches_cpu(const graph::Graph& graph, const std::vector<cpu::HostTensor>& inputs,
                                           OutputComparison compare, RunStats* stats = nullptr);

// Runs `graph` on Vulkan with a timestamp after every step (profile_steps on
// top of `options`) and on the CPU reference, expects every output within
// atol + rtol * |want| (0, 0: exact), and returns the steps' labels in order
// (dispatches and copies: which nodes ran, which were folded or viewed away).
std::vector<std::string> step_labels(const graph::Graph& graph, const std::vector<cpu::HostTensor>& inputs,
                                     double atol, double rtol, kernels::KernelGraphOptions options = {});

// The labels joined by spaces, for messages and whole-sequence checks.
std::string joined(const std::vector<std::string>& labels);

// Values every dtype holds exactly: small whole numbers in [-100, 100) (bool: 0/1).
cpu::HostTensor exact_values(graph::DType dtype, const graph::Shape& shape, uint32_t seed);

// True when the test device can run f16 kernels.
bool device_has_f16();

// For the f16 tests: true when the device runs f16 kernels. Otherwise it
// checks what such a device must do instead — refuse an f16 node with
// kUnsupported naming f16 — and returns false, so the test ends there:
//   if (!f16_kernels_or_refused()) return;
bool f16_kernels_or_refused();

}  // namespace gpuu::vulkan_test

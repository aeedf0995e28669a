// ExecuteProfile: where one execute's time went, across delegates: each GPU
// dispatch's time (a timestamp after every dispatch, SessionOptions::
// profile_steps) with the work its lowering described, each CPU-fallback
// step's host time, against the devices' peak rates, which gpuu measures
// since Vulkan reports none (kernels/device_peaks.h). Rendered here as a JSON
// document, a Chrome trace (chrome://tracing, Perfetto) and a table for
// people: the C API, Python, gpuu-run and the benchmarks all read these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "context/shared_gpu_context.h"
#include "gpu/gpu_timer.h"

namespace gpuu::runtime {

struct ProfileDevice {
  std::string name;
  DevicePeaks peaks;  // measured when the first profiling session on its context began
};

struct DelegateProfile {
  int32_t index = 0;    // the program's delegate index
  std::string backend;  // its backend's id
  size_t device = 0;    // into ExecuteProfile::devices
  // The sum of its dispatches' times where it records them; else its own GPU
  // time (the native VGF path, plugins), or -1 where that is unknown too.
  double gpu_us = -1;
  std::vector<gpu::TimedStep> dispatches;  // in recorded order
};

struct CpuStepProfile {
  std::string node, op;
  double host_us = 0;  // the CPU kernel's wall time
};

// One step of the plan: a delegate's execute or a CPU-fallback node.
struct PlanStepProfile {
  bool cpu = false;
  DelegateProfile delegate;  // when !cpu
  CpuStepProfile cpu_step;   // when cpu
};

struct ExecuteProfile {
  std::vector<ProfileDevice> devices;
  std::vector<PlanStepProfile> plan;  // in plan order

  double gpu_us() const;   // the delegates' GPU time, where known
  double host_us() const;  // the CPU-fallback steps' time
  size_t dispatch_count() const;
};

// A rate achieved against a device's peaks: for a dispatch, an op's total.
struct Achieved {
  double tflops = 0;  // 10^12 FLOP/s; 0 without FLOPs
  double gbps = 0;    // 10^9 bytes/s; 0 without bytes
  // Of the device's peak: f16 matrix throughput where the FLOPs ran on
  // cooperative matrices, else f32 FMA; memory bandwidth for the bytes. -1
  // where there is no such work or no known peak.
  double flops_of_peak = -1;
  double bytes_of_peak = -1;
};
Achieved achieved(uint64_t flops, uint64_t bytes, bool matrix_cores, double us, const DevicePeaks& peaks);

// The dispatches of one gpuu op (a fused group's ops, joined, count as one),
// most GPU time first.
struct OpTotal {
  std::string ops;
  size_t count = 0;
  double us = 0;
  uint64_t flops = 0, bytes = 0;
  bool matrix_cores = false;  // any of its FLOPs on cooperative matrices
  int device = 0;             // where they ran; -1 when on several devices
};
std::vector<OpTotal> ops_by_time(const ExecuteProfile& profile);

// Profiles of several executes of one session (the same plan and dispatches),
// each time their mean: for benchmarks, which average over many runs.
ExecuteProfile mean_profile(const std::vector<ExecuteProfile>& runs);

// {"peaks_measured": true, "devices": [...], "gpu_us", "host_us",
//  "plan": [{"kind": "delegate", "index", "backend", "device", "gpu_us",
//  "begin_us", "dispatches": [{"label", "ops", "kernel", "choice", "why",
//  "gpu_us", "begin_us", "flops", "bytes", "tflops", "gbps",
//  "flops_of_peak", "bytes_of_peak"}]} | {"kind": "cpu", "node", "op",
//  "host_us", "begin_us"}], "by_op": [...]}: rates and fractions null where
// unknown. begin_us: on the trace's timeline (profile_trace_json).
std::string profile_json(const ExecuteProfile& profile);

// A Chrome trace ({"traceEvents": [...]}): one complete event ("ph": "X",
// begin "ts" and "dur" in microseconds) per dispatch on its delegate's track,
// one per CPU-fallback step on the host track, a delegate without dispatch
// times as one event. Steps lie end to end in plan order (the host's and the
// devices' clocks are not aligned); inside a delegate each dispatch begins
// where the one before it ended, as its timestamps say.
std::string profile_trace_json(const ExecuteProfile& profile);

// The same for people: the devices' peaks, the plan's steps, a table per op,
// and the `top_dispatches` dispatches of most GPU time.
std::string profile_text(const ExecuteProfile& profile, size_t top_dispatches);

}  // namespace gpuu::runtime

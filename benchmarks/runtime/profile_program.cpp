// Where an execute's wall time goes, for one program file: host time before
// the submit, the wait, GPU time (timestamps) and submits, with host I/O
// (set_input, get_output) and with the host wait sleeping at once or
// polling first; then where the GPU time goes, dispatch by dispatch and op by
// op against the device's peaks (the session's profile, as gpuu-run
// --profile and the C API give it). Prints one JSON object; medians (profile:
// means) after warm-up.
//
//   profile_program PROGRAM.gpuu [--runs N] [--warmup N] [--spirv NAME=FILE]...
//
// --spirv: FILE's SPIR-V stands in for built-in kernel NAME (a variant under
// measurement in the model, as bench_gemm's --spirv does for one GEMM). The
// shared contexts the program's delegates name are created here first, with
// the variants in their kernel caches, so that the sessions find them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "context/shared_gpu_context_registry.h"
#include "context/vulkan_bootstrap.h"
#include "kernels/kernel_cache.h"
#include "program/program_loader.h"
#include "runtime/session.h"
#include "spirv_file.h"
#include "stats.h"

namespace {

using namespace gpuu;
using bench::median;

int fail(const Status& s) {
  std::fprintf(stderr, "profile_program: %s\n", s.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: profile_program PROGRAM.gpuu [--runs N] [--warmup N]\n");
    return 2;
  }
  int runs = 1000, warmup = 100;
  std::vector<std::pair<std::string, std::string>> spirv;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--spirv") && !bench::take_spirv_variant(argv[i + 1], spirv, "profile_program")) return 2;
  }
  Result<std::shared_ptr<const program::Program>> program = program::load_program_file(argv[1]);
  if (!program.ok()) return fail(program.status());
  std::vector<SharedGpuContextPtr> contexts;  // held while the sessions run
  if (!spirv.empty()) {
    const ContextFactory factory = vulkan_context_factory(DeviceOptions{});
    for (const program::DelegateInfo& d : program.value()->delegates()) {
      if (!d.shared.enabled()) {
        std::fprintf(stderr, "profile_program: --spirv needs delegates on a shared context; a %s delegate has none\n",
                     d.backend_id.c_str());
        return 2;
      }
      Result<SharedGpuContextPtr> ctx = SharedGpuContextRegistry::get().lookup_or_create(
          ContextKey{d.shared.token, d.shared.group_id}, [&] { return factory(d.shared.token, d.shared.group_id); });
      if (!ctx.ok()) return fail(ctx.status());
      if (std::find(contexts.begin(), contexts.end(), ctx.value()) != contexts.end()) continue;  // delegates share it
      if (!bench::add_spirv_variants(*kernels::KernelCache::shared(ctx.value()), spirv, "profile_program")) return 2;
      contexts.push_back(ctx.value());
    }
  }
  std::printf("{\n  \"program\": \"%s\",\n  \"runs\": %d,\n  \"cases\": [\n", argv[1], runs);
  // Sleep at once; poll first (a GPU's default); poll first with timestamps
  // (GPU time, at the cost of the serialisation they bring).
  const double spins[] = {0, 1000, 1000};
  for (size_t k = 0; k < 3; ++k) {
    runtime::SessionOptions options;
    options.wait_spin_us = spins[k];
    options.gpu_timing = k == 2;
    Result<std::unique_ptr<runtime::Session>> session = runtime::Session::create(program.value(), options);
    if (!session.ok()) return fail(session.status());
    runtime::Session& s = *session.value();
    std::vector<std::vector<uint8_t>> ins, outs;
    for (const auto& d : s.inputs()) ins.emplace_back(d.bytes, 1);
    for (const auto& d : s.outputs()) outs.emplace_back(d.bytes);
    std::vector<double> wall, host, wait, gpu;
    runtime::ExecuteStats last;
    for (int i = 0; i < warmup + runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      for (size_t j = 0; j < ins.size(); ++j) {
        Status st = s.set_input(j, ins[j].data(), ins[j].size());
        if (!st.ok()) return fail(st);
      }
      runtime::ExecuteStats stats;
      Status st = s.execute(&stats);
      if (!st.ok()) return fail(st);
      for (size_t j = 0; j < outs.size(); ++j) {
        st = s.get_output(j, outs[j].data(), outs[j].size());
        if (!st.ok()) return fail(st);
      }
      double w = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (i < warmup) continue;
      wall.push_back(w);
      wait.push_back(stats.host_wait_us);
      host.push_back(w - stats.host_wait_us);
      gpu.push_back(stats.gpu_time_us);
      last = stats;
    }
    std::printf("    {\"wait_spin_us\": %.0f, \"gpu_timing\": %s, \"wall_us\": %.2f, \"host_us\": %.2f, \"wait_us\": %.2f, "
                "\"gpu_us\": %.2f, \"delegate_submits\": %u, \"queue_submits\": %u, \"host_waits\": %u}%s\n",
                spins[k], options.gpu_timing ? "true" : "false", median(wall), median(host), median(wait), median(gpu), last.delegate_submits,
                last.queue_submits, last.host_waits, k == 2 ? "" : ",");
  }
  std::printf("  ],\n");
  // Where the GPU time goes: the session's profile (runtime/execute_profile.h:
  // a timestamp after every dispatch, each dispatch's work, the device's
  // measured peaks), each time averaged over the runs.
  runtime::SessionOptions options;
  options.profile_steps = true;
  Result<std::unique_ptr<runtime::Session>> profiled = runtime::Session::create(program.value(), options);
  if (!profiled.ok()) return fail(profiled.status());
  runtime::Session& s = *profiled.value();
  for (size_t j = 0; j < s.inputs().size(); ++j) {
    std::vector<uint8_t> ones(s.inputs()[j].bytes, 1);
    Status st = s.set_input(j, ones.data(), ones.size());
    if (!st.ok()) return fail(st);
  }
  std::vector<runtime::ExecuteProfile> profiles;
  for (int i = 0; i < warmup + runs; ++i) {
    Status st = s.execute();
    if (!st.ok()) return fail(st);
    if (i < warmup) continue;
    Result<const runtime::ExecuteProfile*> profile = s.last_profile();
    if (!profile.ok()) return fail(profile.status());
    profiles.push_back(*profile.value());
  }
  std::printf("  \"profile\": %s\n}\n", runtime::profile_json(runtime::mean_profile(profiles)).c_str());
  return 0;
}

// Runtime benchmark: execute latency and host time for chains of 10, 100 and
// 1000 elementwise operators in one Vulkan delegate (the host time per execute
// must stay flat: command buffers are recorded once), and a 100-op chain split
// into 1 or 3 delegates under timeline and queue_wait_idle. Prints one JSON
// object; medians and p99 after warm-up. Run by benchmarks/runtime/run.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chain_program.h"
#include "context/vulkan_bootstrap.h"
#include "graph/builder.h"
#include "program/program_loader.h"
#include "runtime/session.h"

namespace {

using namespace gpuu;

struct Series {
  std::vector<double> wall, host, gpu;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

Result<Series> measure(const graph::Graph& g, int delegates, SyncMode sync, int warmup, int runs) {
  GPUU_ASSIGN_OR_RETURN(auto program, bench::vulkan_program(g, delegates, sync, "bench"));
  std::vector<float> x(static_cast<size_t>(graph::shape_numel(g.value(g.inputs()[0]).shape)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) / 97.0f;
  Series s;
  // Wall and host time without timestamps (they serialise the GPU), then GPU
  // time in a session that records them.
  for (bool timed : {false, true}) {
    runtime::SessionOptions options;
    options.gpu_timing = timed;
    GPUU_ASSIGN_OR_RETURN(auto session, runtime::Session::create(program, options));
    GPUU_RETURN_IF_ERROR(session->set_input(0, x.data(), x.size() * 4));
    for (int i = 0; i < warmup + runs; ++i) {
      runtime::ExecuteStats stats;
      auto t0 = std::chrono::steady_clock::now();
      GPUU_RETURN_IF_ERROR(session->execute(&stats));
      double wall = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (i < warmup) continue;
      if (timed) {
        s.gpu.push_back(stats.gpu_time_us);
      } else {
        s.wall.push_back(wall);
        s.host.push_back(wall - stats.host_wait_us);
      }
    }
  }
  return s;
}

void print_series(const char* label, const Series& s, bool last) {
  std::printf("    {%s, \"wall_median_us\": %.2f, \"wall_p99_us\": %.2f, \"host_median_us\": %.2f, "
              "\"host_p99_us\": %.2f, \"gpu_median_us\": %.2f}%s\n",
              label, percentile(s.wall, 0.5), percentile(s.wall, 0.99), percentile(s.host, 0.5),
              percentile(s.host, 0.99), percentile(s.gpu, 0.5), last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200, warmup = 20;
  int64_t elements = 4096;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--elements")) elements = std::atoll(argv[i + 1]);
  }
  Result<SharedGpuContextPtr> probe = create_vulkan_context("bench-probe", 0, DeviceOptions{});
  if (!probe.ok()) {
    std::fprintf(stderr, "bench_runtime: %s\n", probe.status().message().c_str());
    return 1;
  }
  std::printf("{\n  \"device\": \"%s\",\n  \"elements\": %lld,\n  \"runs\": %d,\n  \"warmup\": %d,\n",
              probe.value()->device_name().c_str(), static_cast<long long>(elements), runs, warmup);
  probe.value().reset();

  std::printf("  \"scaling\": [\n");
  const int sizes[] = {10, 100, 1000};
  for (int k = 0; k < 3; ++k) {
    Result<Series> s = measure(bench::make_chain(sizes[k], elements), 1, SyncMode::kTimeline, warmup, runs);
    if (!s.ok()) {
      std::fprintf(stderr, "bench_runtime: %s\n", s.status().message().c_str());
      return 1;
    }
    std::string label = "\"ops\": " + std::to_string(sizes[k]) + ", \"delegates\": 1, \"sync\": \"timeline\"";
    print_series(label.c_str(), s.value(), k == 2);
  }
  std::printf("  ],\n  \"split\": [\n");
  graph::Graph chain = bench::make_chain(100, elements);
  const std::pair<int, SyncMode> cases[] = {{1, SyncMode::kTimeline},
                                            {3, SyncMode::kTimeline},
                                            {1, SyncMode::kQueueWaitIdle},
                                            {3, SyncMode::kQueueWaitIdle}};
  for (int k = 0; k < 4; ++k) {
    Result<Series> s = measure(chain, cases[k].first, cases[k].second, warmup, runs);
    if (!s.ok()) {
      std::fprintf(stderr, "bench_runtime: %s\n", s.status().message().c_str());
      return 1;
    }
    std::string label = "\"ops\": 100, \"delegates\": " + std::to_string(cases[k].first) + ", \"sync\": \"" +
                        to_string(cases[k].second) + "\"";
    print_series(label.c_str(), s.value(), k == 3);
  }
  std::printf("  ]\n}\n");
  return 0;
}

// VGF paths benchmark: each program file given runs in two sessions, its VGF
// delegates natively (VK_ARM_data_graph, on whatever provides it: Arm's
// emulation layers here) and on gpuu's TOSA executor. Per VGF delegate: GPU
// time (timestamps around its work); per program: host wall time per execute.
// Medians after warm-up. Prints one JSON object. Run by benchmarks/vgf/run_paths.sh.
//
//   bench_vgf_paths [--runs N] [--warmup N] PROGRAM...
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/vgf/vgf_options.h"
#include "program/program_loader.h"
#include "runtime/session.h"
#include "stats.h"

namespace {

using namespace gpuu;
using bench::median;

struct PathResult {
  std::string error;
  std::vector<std::vector<float>> outputs;  // f32 outputs of the last execute
  double wall_us = -1;
  std::vector<double> vgf_gpu_us;  // per VGF delegate, plan order
  std::string device;
};

PathResult measure(const std::shared_ptr<const program::Program>& program, vgf::DataGraphPath path, int warmup,
                   int runs) {
  PathResult out;
  runtime::SessionOptions options;
  options.gpu_timing = true;  // per-region GPU time; the wall time includes the timestamps' cost
  options.backend_options = {vgf::data_graph_path_option(path)};
  options.overrides.context_mode = ContextMode::kDisabled;  // a private context: no state between paths
  auto session = runtime::Session::create(program, options);
  if (!session.ok()) {
    out.error = session.status().message();
    return out;
  }
  runtime::Session& s = *session.value();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < s.inputs().size(); ++i) {
    std::vector<uint8_t> bytes(s.inputs()[i].bytes);
    if (s.inputs()[i].dtype == graph::DType::kF32) {
      for (size_t k = 0; k + 4 <= bytes.size(); k += 4) {
        float f = dist(rng);
        std::memcpy(bytes.data() + k, &f, 4);
      }
    }
    Status st = s.set_input(i, bytes.data(), bytes.size());
    if (!st.ok()) {
      out.error = st.message();
      return out;
    }
  }
  std::vector<size_t> vgf;
  for (size_t d = 0; d < program->delegates().size(); ++d) {
    if (program->delegates()[d].backend_id == "VgfBackend") vgf.push_back(d);
  }
  std::vector<double> wall;
  std::vector<std::vector<double>> gpu(vgf.size());
  for (int i = 0; i < warmup + runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    Status st = s.execute();
    auto t1 = std::chrono::steady_clock::now();
    if (!st.ok()) {
      out.error = st.message();
      return out;
    }
    if (i < warmup) continue;
    wall.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    auto handles = s.delegate_handles();
    for (size_t k = 0; k < vgf.size(); ++k) gpu[k].push_back(handles[vgf[k]]->last_gpu_time_us());
  }
  for (size_t i = 0; i < s.outputs().size(); ++i) {
    std::vector<float> values(s.outputs()[i].bytes / 4);
    if (s.outputs()[i].dtype == graph::DType::kF32) {
      Status st = s.get_output(i, values.data(), values.size() * 4);
      if (!st.ok()) {
        out.error = st.message();
        return out;
      }
    }
    out.outputs.push_back(std::move(values));
  }
  out.wall_us = median(wall);
  for (auto& g : gpu) out.vgf_gpu_us.push_back(median(g));
  auto ctx = s.primary_context();
  out.device = ctx ? ctx->device_name() : "";
  return out;
}

void print_path(const char* name, const PathResult& r) {
  std::printf("      \"%s\": {", name);
  if (!r.error.empty()) {
    std::string e;
    for (char c : r.error) e += (c == '"' || c == '\\') ? '\'' : c;
    std::printf("\"error\": \"%s\"}", e.c_str());
    return;
  }
  std::printf("\"wall_us\": %.2f, \"vgf_gpu_us\": [", r.wall_us);
  for (size_t i = 0; i < r.vgf_gpu_us.size(); ++i) std::printf("%s%.2f", i ? ", " : "", r.vgf_gpu_us[i]);
  std::printf("]}");
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 100, warmup = 10;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
      warmup = std::atoi(argv[++i]);
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty() || runs < 1 || warmup < 0) {
    std::fprintf(stderr, "usage: bench_vgf_paths [--runs N] [--warmup N] PROGRAM...\n");
    return 2;
  }
  std::printf("{\n  \"runs\": %d, \"warmup\": %d,\n  \"programs\": [\n", runs, warmup);
  std::string device;
  for (size_t f = 0; f < files.size(); ++f) {
    auto program = program::load_program_file(files[f]);
    if (!program.ok()) {
      std::fprintf(stderr, "bench_vgf_paths: %s\n", program.status().message().c_str());
      return 1;
    }
    PathResult native = measure(program.value(), vgf::DataGraphPath::kNative, warmup, runs);
    PathResult executor = measure(program.value(), vgf::DataGraphPath::kExecutor, warmup, runs);
    if (device.empty()) device = !executor.device.empty() ? executor.device : native.device;
    std::string name = files[f].substr(files[f].find_last_of('/') + 1);
    double diff = -1;  // the native path's outputs against the executor's
    if (native.error.empty() && executor.error.empty()) {
      diff = 0;
      for (size_t i = 0; i < native.outputs.size(); ++i) {
        for (size_t k = 0; k < native.outputs[i].size(); ++k) {
          diff = std::max(diff, static_cast<double>(std::abs(native.outputs[i][k] - executor.outputs[i][k])));
        }
      }
    }
    std::printf("    {\"program\": \"%s\", \"max_abs_diff_native_vs_executor\": %.3g,\n", name.c_str(), diff);
    print_path("native", native);
    std::printf(",\n");
    print_path("executor", executor);
    std::printf("}%s\n", f + 1 < files.size() ? "," : "");
  }
  std::printf("  ],\n  \"device\": \"%s\"\n}\n", device.c_str());
  return 0;
}

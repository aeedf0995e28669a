// Benchmark suite, gpuu side (benchmarks/suite/run.sh merges it with
// torch_suite.py into benchmarks/results/summary-h100.json). Prints one JSON
// object with, per case, medians after warm-up:
//  - each exported program in --programs DIR (export_programs.py: the RFC
//    model, the model families at batch 1 and 8, the 224x224 conv net): wall
//    per execute with device-resident I/O (application buffers on the
//    session's primary context, bound with bind_input/output_buffer), GPU
//    time (ExecuteStats.gpu_time_us), wall with host I/O (set_input + execute
//    + get_output), and the output's largest difference from PyTorch eager;
//  - gemm_f32/f16 (matmul N^3, two inputs) and fused_chain (sin(x)*(1/cos(x))
//    over M floats) on the kernel layer (kernels::KernelGraph, as a delegate
//    runs them) with device-local buffers: GPU time, TFLOP/s or TB/s;
//  - delegates_3_vs_1: bench_runtime's 100-op chain in 1 and 3 Vulkan delegates.
//
//   bench_suite [--small] [--runs N] [--warmup N] [--programs DIR]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "base/half.h"
#include "chain_program.h"
#include "context/vulkan_bootstrap.h"
#include "gpu/submission.h"
#include "graph/builder.h"
#include "kernels/kernel_graph.h"
#include "program/program_loader.h"
#include "runtime/session.h"
#include "stats.h"

namespace {

using namespace gpuu;
using bench::median;
using Clock = std::chrono::steady_clock;

struct Options {
  int runs = 100, warmup = 10;
  bool small = false;
  bool programs_only = false;  // --programs-only: no kernel-level cases (benchmarks/real)
  std::string programs;
  // --backend_option ID:KEY=VALUE (as gpuu-run spells it), for every session.
  std::vector<backends::BackendOption> backend_options;
};

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '"' || c == '\\') ? '\'' : (c == '\n' ? ' ' : c);
  return out;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Input bytes for `d`: the file's (i64 narrowed to i32 where the program takes
// i32: PyTorch token ids are i64), else values in [-1, 1) (zeros for integers).
std::vector<uint8_t> input_bytes(const runtime::TensorDesc& d, const std::vector<uint8_t>& file) {
  if (file.size() == d.bytes) return file;
  std::vector<uint8_t> out(d.bytes);
  if (file.size() == 2 * d.bytes && d.dtype == graph::DType::kI32) {
    for (size_t i = 0; i < d.bytes / 4; ++i) {
      int64_t v;
      std::memcpy(&v, file.data() + 8 * i, 8);
      int32_t n = static_cast<int32_t>(v);
      std::memcpy(out.data() + 4 * i, &n, 4);
    }
    return out;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t k = 0; d.dtype == graph::DType::kF32 && k + 4 <= out.size(); k += 4) {
    float f = dist(rng);
    std::memcpy(out.data() + k, &f, 4);
  }
  return out;
}

// Element i of f32 (or, with `half`, f16) bytes.
float element(const std::vector<uint8_t>& bytes, size_t i, bool half) {
  if (half) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return half_to_float(h);
  }
  float f;
  std::memcpy(&f, bytes.data() + 4 * i, 4);
  return f;
}

// Runs `step` `warmup` times and then on for at least 300 ms: after the idle
// gap of loading a program the GPU has dropped its clock again, and a few
// short executes do not bring it back (medians came out 3x the GPU time).
Status warm(int warmup, const std::function<Status()>& step) {
  auto start = Clock::now();
  for (int i = 0; i < warmup || us_since(start) < 300e3; ++i) GPUU_RETURN_IF_ERROR(step());
  return Status::Ok();
}

struct SessionRun {
  size_t delegates = 0;
  double wall_us = -1, gpu_us = -1, host_io_wall_us = -1;
  // Of wall_us, the host's wait for the GPU (median): the rest is the host's
  // own work in execute (recording, submitting), of which host_submit_us
  // (median) in vkQueueSubmit.
  double host_wait_us = -1, host_submit_us = -1;
  double max_abs_diff = -1, ref_max_abs = -1;  // against the expected output, where given
};

// The device-resident and host-I/O measurements of one program; `expected`
// (f32, output 0) may be empty.
Result<SessionRun> run_session(std::shared_ptr<const program::Program> program, const std::vector<uint8_t>& input0,
                               const std::vector<uint8_t>& expected, const Options& o) {
  SessionRun r;
  runtime::SessionOptions options;
  options.backend_options = o.backend_options;
  GPUU_ASSIGN_OR_RETURN(auto session, runtime::Session::create(program, options));
  SharedGpuContextPtr ctx = session->primary_context();
  if (!ctx) return err(StatusCode::kFailedPrecondition, "the program has no GPU delegate");
  r.delegates = session->delegate_count();
  std::vector<std::vector<uint8_t>> inputs;
  for (size_t i = 0; i < session->inputs().size(); ++i) {
    inputs.push_back(input_bytes(session->inputs()[i], i == 0 ? input0 : std::vector<uint8_t>{}));
  }
  // Device-resident I/O: device-local application buffers, filled once.
  std::vector<gpu::DeviceBuffer> app;
  {
    VkCommandPool pool = VK_NULL_HANDLE;
    GPUU_VK_RETURN_IF_ERROR(ctx->create_command_pool(&pool), "vkCreateCommandPool");
    Status filled = Status::Ok();
    for (size_t i = 0; i < inputs.size() && filled.ok(); ++i) {
      auto b = gpu::DeviceBuffer::create(*ctx, inputs[i].size(), gpu::MemoryKind::kDevice, "suite input");
      if (!b.ok()) {
        filled = b.status();
        break;
      }
      filled = gpu::upload_once(*ctx, pool, b.value(), 0, inputs[i].data(), inputs[i].size());
      app.push_back(std::move(b.value()));
    }
    ctx->destroy_command_pool(pool);
    GPUU_RETURN_IF_ERROR(filled);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    GPUU_RETURN_IF_ERROR(session->bind_input_buffer(i, app[i].buffer(), 0, inputs[i].size()));
  }
  for (size_t i = 0; i < session->outputs().size(); ++i) {
    size_t n = session->outputs()[i].bytes;
    GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer b,
                          gpu::DeviceBuffer::create(*ctx, n, gpu::MemoryKind::kDevice, "suite output"));
    GPUU_RETURN_IF_ERROR(session->bind_output_buffer(i, b.buffer(), 0, n));
    app.push_back(std::move(b));
  }
  std::vector<double> wall, wait, submit, gpu;
  GPUU_RETURN_IF_ERROR(warm(o.warmup, [&] { return session->execute(); }));
  for (int i = 0; i < o.runs; ++i) {
    runtime::ExecuteStats stats;
    auto t0 = Clock::now();
    GPUU_RETURN_IF_ERROR(session->execute(&stats));
    wall.push_back(us_since(t0));
    wait.push_back(stats.host_wait_us);
    submit.push_back(stats.host_submit_us);
  }
  r.wall_us = median(wall);
  r.host_wait_us = median(wait);
  r.host_submit_us = median(submit);
  // The check: output 0 of the device-resident run against PyTorch eager.
  std::vector<std::vector<uint8_t>> outputs;
  for (const auto& d : session->outputs()) outputs.emplace_back(d.bytes);
  for (size_t i = 0; i < outputs.size(); ++i) {
    GPUU_RETURN_IF_ERROR(session->get_output(i, outputs[i].data(), outputs[i].size()));
  }
  // An f16 output is compared with the f32 reference as well (the error of running in f16).
  const bool half_out = !outputs.empty() && session->outputs()[0].dtype == graph::DType::kF16;
  const size_t esize = half_out ? 2 : 4;
  if (!outputs.empty() && (half_out || session->outputs()[0].dtype == graph::DType::kF32) &&
      expected.size() == outputs[0].size() / esize * 4) {
    r.max_abs_diff = r.ref_max_abs = 0;
    for (size_t k = 0; k < expected.size() / 4; ++k) {
      float got = element(outputs[0], k, half_out), want = element(expected, k, false);
      r.max_abs_diff = std::max(r.max_abs_diff, static_cast<double>(std::fabs(got - want)));
      r.ref_max_abs = std::max(r.ref_max_abs, static_cast<double>(std::fabs(want)));
    }
    if (std::isnan(r.max_abs_diff)) r.max_abs_diff = 1e30;
  }
  // Host I/O: back to host memory, the copies in the timing.
  for (size_t i = 0; i < inputs.size(); ++i) GPUU_RETURN_IF_ERROR(session->bind_input_buffer(i, VK_NULL_HANDLE, 0, 0));
  for (size_t i = 0; i < outputs.size(); ++i) GPUU_RETURN_IF_ERROR(session->bind_output_buffer(i, VK_NULL_HANDLE, 0, 0));
  std::vector<double> host_io;
  for (int i = 0; i < o.warmup + o.runs; ++i) {
    auto t0 = Clock::now();
    for (size_t k = 0; k < inputs.size(); ++k) GPUU_RETURN_IF_ERROR(session->set_input(k, inputs[k].data(), inputs[k].size()));
    GPUU_RETURN_IF_ERROR(session->execute());
    for (size_t k = 0; k < outputs.size(); ++k) {
      GPUU_RETURN_IF_ERROR(session->get_output(k, outputs[k].data(), outputs[k].size()));
    }
    double us = us_since(t0);
    if (i >= o.warmup) host_io.push_back(us);
  }
  r.host_io_wall_us = median(host_io);
  session.reset();  // before the application buffers it may still reference
  // GPU time in a session of its own: timestamps serialise the GPU, so the
  // wall-time runs above go without them.
  runtime::SessionOptions timed_options;
  timed_options.gpu_timing = true;
  timed_options.backend_options = o.backend_options;
  GPUU_ASSIGN_OR_RETURN(auto timed, runtime::Session::create(program, timed_options));
  for (size_t k = 0; k < inputs.size(); ++k) GPUU_RETURN_IF_ERROR(timed->set_input(k, inputs[k].data(), inputs[k].size()));
  GPUU_RETURN_IF_ERROR(warm(o.warmup, [&] { return timed->execute(); }));
  for (int i = 0; i < o.runs; ++i) {
    runtime::ExecuteStats stats;
    GPUU_RETURN_IF_ERROR(timed->execute(&stats));
    gpu.push_back(stats.gpu_time_us);
  }
  r.gpu_us = median(gpu);
  return r;
}


struct KernelRun {
  size_t dispatches = 0;
  double gpu_us = -1, wall_us = -1;
  std::vector<uint8_t> output;  // output 0, when asked for
};

// Runs `g` on the kernel layer with device-local inputs (filled with `inputs`)
// and outputs: medians of GPU time and of submit + wait. With `read_output`
// the output lives in host-readable memory instead and comes back after one run.
Result<KernelRun> run_kernels(const SharedGpuContextPtr& ctx, const graph::Graph& g,
                              const std::vector<std::vector<uint8_t>>& inputs, bool read_output, int warmup,
                              int runs) {
  std::vector<gpu::DeviceBuffer> buffers;
  std::vector<gpu::BufferRange> ins, outs;
  VkCommandPool pool = VK_NULL_HANDLE;
  GPUU_VK_RETURN_IF_ERROR(ctx->create_command_pool(&pool), "vkCreateCommandPool");
  Status filled = Status::Ok();
  for (size_t i = 0; i < inputs.size() && filled.ok(); ++i) {
    auto b = gpu::DeviceBuffer::create(*ctx, inputs[i].size(), gpu::MemoryKind::kDevice, "suite input");
    if (!b.ok()) filled = b.status();
    if (!filled.ok()) break;
    filled = gpu::upload_once(*ctx, pool, b.value(), 0, inputs[i].data(), inputs[i].size());
    ins.push_back(gpu::BufferRange{b.value().buffer(), 0, inputs[i].size()});
    buffers.push_back(std::move(b.value()));
  }
  ctx->destroy_command_pool(pool);
  GPUU_RETURN_IF_ERROR(filled);
  const graph::Value& out = g.value(g.outputs()[0]);
  size_t out_bytes = static_cast<size_t>(graph::shape_numel(out.shape)) * graph::dtype_size(out.dtype);
  GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer ob,
                        gpu::DeviceBuffer::create(*ctx, out_bytes,
                                                  read_output ? gpu::MemoryKind::kReadback : gpu::MemoryKind::kDevice,
                                                  "suite output"));
  outs.push_back(gpu::BufferRange{ob.buffer(), 0, out_bytes});
  GPUU_ASSIGN_OR_RETURN(auto kg, kernels::KernelGraph::create(ctx, g, ins, outs));
  KernelRun r;
  r.dispatches = kg->dispatch_count();
  VkCommandBuffer cb = kg->command_buffer();
  std::vector<double> gpu, wall;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cb;
  auto submit_and_wait = [&]() -> Status {
    GPUU_VK_RETURN_IF_ERROR(ctx->submit(1, &submit, VK_NULL_HANDLE), "vkQueueSubmit");
    GPUU_VK_RETURN_IF_ERROR(ctx->queue_wait_idle(), "vkQueueWaitIdle");
    return Status::Ok();
  };
  if (runs > 1) GPUU_RETURN_IF_ERROR(warm(warmup, submit_and_wait));
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    GPUU_RETURN_IF_ERROR(submit_and_wait());
    double us = us_since(t0);
    wall.push_back(us);
    gpu.push_back(kg->last_gpu_time_us());
  }
  r.gpu_us = median(gpu);
  r.wall_us = median(wall);
  if (read_output) {
    const uint8_t* p = static_cast<const uint8_t*>(ob.mapped());
    r.output.assign(p, p + out_bytes);
  }
  return r;
}

std::vector<uint8_t> random_f32(size_t n, uint32_t seed, bool half) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint8_t> out(n * (half ? 2 : 4));
  for (size_t i = 0; i < n; ++i) {
    float f = dist(rng);
    if (half) {
      uint16_t h = float_to_half(f);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(out.data() + 4 * i, &f, 4);
    }
  }
  return out;
}


// A discrete GPU idles at low clocks and takes seconds of steady work to
// reach its boost clock: measured cold, the same kernels ran 1.5-4x slower
// on the H100. Keeps a GEMM busy for `seconds` before anything is timed.
void warm_up_gpu(const SharedGpuContextPtr& ctx, double seconds, bool small) {
  const int64_t n = small ? 128 : 2048;
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", graph::DType::kF32, {n, n}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", graph::DType::kF32, {n, n}).value();
  g.mark_output(graph::add_op(g, "matmul", "mm", {a, b}, {}).value()[0]);
  std::vector<std::vector<uint8_t>> in(2, std::vector<uint8_t>(static_cast<size_t>(n * n) * 4, 0));
  auto start = Clock::now();
  while (us_since(start) < seconds * 1e6) {
    if (!run_kernels(ctx, g, in, false, 0, 20).ok()) return;
  }
}

// The same graph as one Vulkan delegate run by the runtime (Session), with
// device-resident and with host I/O: what an application sees, copies and all.
void print_runtime_run(const graph::Graph& g, const std::vector<uint8_t>& input0, const Options& o) {
  Result<std::shared_ptr<const program::Program>> program = bench::vulkan_program(g, 1, SyncMode::kTimeline, "bench_suite");
  Result<SessionRun> run = program.ok() ? run_session(program.value(), input0, {}, o) : program.status();
  if (!run.ok()) {
    std::printf(", \"runtime_error\": \"%s\"", json_escape(run.status().message()).c_str());
    return;
  }
  std::printf(", \"runtime_wall_us\": %.2f, \"runtime_gpu_us\": %.2f, \"runtime_host_io_wall_us\": %.2f",
              run->wall_us, run->gpu_us, run->host_io_wall_us);
}

// matmul [n,n] x [n,n]: a run with the output read back, 64 entries checked
// against double-precision dot products, then the timed run.
void gemm_case(const SharedGpuContextPtr& ctx, int64_t n, bool half, const Options& o, bool last) {
  const char* name = half ? "gemm_f16" : "gemm_f32";
  graph::DType dt = half ? graph::DType::kF16 : graph::DType::kF32;
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", dt, {n, n}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", dt, {n, n}).value();
  g.mark_output(graph::add_op(g, "matmul", "mm", {a, b}, {}).value()[0]);
  std::vector<std::vector<uint8_t>> in = {random_f32(static_cast<size_t>(n * n), 1, half),
                                          random_f32(static_cast<size_t>(n * n), 2, half)};
  std::printf("    {\"case\": \"%s_%lld\", \"kind\": \"gemm\", \"n\": %lld", name, static_cast<long long>(n),
              static_cast<long long>(n));
  double worst = 0;  // |error| / sum |a_k b_k| over the checked entries
  Result<KernelRun> check = run_kernels(ctx, g, in, true, 0, 1);
  Result<KernelRun> timed = check.ok() ? run_kernels(ctx, g, in, false, o.warmup, o.runs) : check;
  if (!timed.ok()) {
    std::printf(", \"error\": \"%s\"}%s\n", json_escape(timed.status().message()).c_str(), last ? "" : ",");
    return;
  }
  for (int s = 0; s < 64; ++s) {
    size_t i = static_cast<size_t>((s * 7919) % n), j = static_cast<size_t>((s * 104729 + 13) % n);
    double want = 0, scale = 0;
    for (size_t k = 0; k < static_cast<size_t>(n); ++k) {
      double p = static_cast<double>(element(in[0], i * n + k, half)) * element(in[1], k * n + j, half);
      want += p;
      scale += std::fabs(p);
    }
    double got = element(check->output, i * n + j, half);
    worst = std::max(worst, std::isnan(got) ? 1e30 : std::fabs(got - want) / std::max(scale, 1e-30));
  }
  double tflops = timed->gpu_us > 0 ? 2.0 * n * n * n / (timed->gpu_us * 1e-6) / 1e12 : -1;
  std::printf(", \"dispatches\": %zu, \"gpu_us\": %.2f, \"wall_us\": %.2f, \"tflops\": %.4g, "
              "\"max_rel_err\": %.3g, \"ok\": %s",
              timed->dispatches, timed->gpu_us, timed->wall_us, tflops, worst,
              worst < (half ? 1e-2 : 1e-4) ? "true" : "false");
  print_runtime_run(g, in[0], o);
  std::printf("}%s\n", last ? "" : ",");
}

// y = sin(x) * (1 / cos(x)) over `elements` floats: one fused dispatch wanted;
// useful bandwidth counts x read once and y written once.
void chain_case(const SharedGpuContextPtr& ctx, int64_t elements, const Options& o, bool last) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", graph::DType::kF32, {elements}).value();
  graph::ValueId s = graph::add_op(g, "sin", "sin", {x}, {}).value()[0];
  graph::ValueId c = graph::add_op(g, "cos", "cos", {x}, {}).value()[0];
  graph::ValueId r = graph::add_op(g, "reciprocal", "reciprocal", {c}, {}).value()[0];
  g.mark_output(graph::add_op(g, "mul", "mul", {s, r}, {}).value()[0]);
  std::vector<std::vector<uint8_t>> in = {random_f32(static_cast<size_t>(elements), 3, false)};
  std::printf("    {\"case\": \"fused_chain\", \"kind\": \"chain\", \"elements\": %lld",
              static_cast<long long>(elements));
  Result<KernelRun> check = run_kernels(ctx, g, in, true, 0, 1);
  Result<KernelRun> timed = check.ok() ? run_kernels(ctx, g, in, false, o.warmup, o.runs) : check;
  if (!timed.ok()) {
    std::printf(", \"error\": \"%s\"}%s\n", json_escape(timed.status().message()).c_str(), last ? "" : ",");
    return;
  }
  double worst = 0;
  for (size_t i = 0; i < static_cast<size_t>(elements); i += 4099) {
    double v = element(in[0], i, false);
    double got = element(check->output, i, false);
    worst = std::max(worst, std::isnan(got) ? 1e30 : std::fabs(got - std::tan(v)));
  }
  double tb_s = timed->gpu_us > 0 ? 8.0 * elements / (timed->gpu_us * 1e-6) / 1e12 : -1;
  std::printf(", \"dispatches\": %zu, \"gpu_us\": %.2f, \"wall_us\": %.2f, \"tb_s\": %.4g, \"max_abs_diff\": %.3g, "
              "\"ok\": %s",
              timed->dispatches, timed->gpu_us, timed->wall_us, tb_s, worst, worst < 1e-4 ? "true" : "false");
  print_runtime_run(g, in[0], o);
  std::printf("}%s\n", last ? "" : ",");
}

void print_session(const SessionRun& r) {
  std::printf(", \"delegates\": %zu, \"wall_us\": %.2f, \"host_wait_us\": %.2f, \"host_submit_us\": %.2f, "
              "\"gpu_us\": %.2f, \"host_io_wall_us\": %.2f",
              r.delegates, r.wall_us, r.host_wait_us, r.host_submit_us, r.gpu_us, r.host_io_wall_us);
}

// Every NAME.gpuu in `dir`, sorted by name.
std::vector<std::string> program_names(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string f = e->d_name;
      if (f.size() > 5 && f.compare(f.size() - 5, 5, ".gpuu") == 0) names.push_back(f.substr(0, f.size() - 5));
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string driver_of(const SharedGpuContext& ctx) {
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &driver;
  ctx.vki().vkGetPhysicalDeviceProperties2(ctx.physical_device(), &props);
  return std::string(driver.driverName) + " " + driver.driverInfo;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--small") {
      o.small = true;
    } else if (a == "--runs" && i + 1 < argc) {
      o.runs = std::atoi(argv[++i]);
    } else if (a == "--warmup" && i + 1 < argc) {
      o.warmup = std::atoi(argv[++i]);
    } else if (a == "--programs" && i + 1 < argc) {
      o.programs = argv[++i];
    } else if (a == "--programs-only") {
      o.programs_only = true;
    } else if (a == "--backend_option" && i + 1 < argc) {
      const std::string text = argv[++i];
      const size_t colon = text.find(':'), equals = text.find('=', colon == std::string::npos ? 0 : colon);
      if (colon == std::string::npos || colon == 0 || equals == std::string::npos || equals == colon + 1) {
        std::fprintf(stderr, "bench_suite: --backend_option takes ID:KEY=VALUE, got '%s'\n", text.c_str());
        return 2;
      }
      o.backend_options.push_back({text.substr(0, colon), text.substr(colon + 1, equals - colon - 1), text.substr(equals + 1)});
    } else {
      std::fprintf(stderr, "usage: bench_suite [--small] [--runs N] [--warmup N] [--programs DIR] [--programs-only] "
                           "[--backend_option ID:KEY=VALUE]...\n");
      return 2;
    }
  }
  if (o.runs < 1 || o.warmup < 0) {
    std::fprintf(stderr, "bench_suite: --runs must be at least 1, --warmup at least 0\n");
    return 2;
  }
  Result<SharedGpuContextPtr> ctx = create_vulkan_context("bench_suite", 0, DeviceOptions{});
  if (!ctx.ok()) {
    std::fprintf(stderr, "bench_suite: %s\n", ctx.status().message().c_str());
    return 1;
  }
  warm_up_gpu(ctx.value(), o.small ? 0.2 : 5.0, o.small);
  std::printf("{\n  \"device\": \"%s\",\n  \"driver\": \"%s\",\n  \"runs\": %d,\n  \"warmup\": %d,\n  \"small\": %s,\n"
              "  \"cases\": [\n",
              json_escape(ctx.value()->device_name()).c_str(), json_escape(driver_of(*ctx.value())).c_str(), o.runs,
              o.warmup, o.small ? "true" : "false");
  std::fflush(stdout);

  for (const std::string& name : program_names(o.programs)) {
    std::string base = o.programs + "/" + name;
    std::printf("    {\"case\": \"%s\", \"kind\": \"program\"", name.c_str());
    Result<std::shared_ptr<const program::Program>> program = program::load_program_file(base + ".gpuu");
    Result<SessionRun> r = program.ok() ? run_session(program.value(), read_file(base + ".in0.bin"),
                                                      read_file(base + ".out0.bin"), o)
                                        : Result<SessionRun>(program.status());
    if (r.ok()) {
      print_session(r.value());
      std::printf(", \"max_abs_diff\": %.3g, \"ref_max_abs\": %.3g", r->max_abs_diff, r->ref_max_abs);
    } else {
      std::printf(", \"error\": \"%s\"", json_escape(r.status().message()).c_str());
    }
    std::printf("},\n");
    std::fflush(stdout);
  }

  if (o.programs_only) {
    std::printf("    {\"case\": \"end\", \"kind\": \"none\"}\n  ]\n}\n");
    return 0;
  }
  // 1 vs 3 delegates of one 100-op chain (bench_runtime's split case).
  graph::Graph chain = bench::make_chain(100, 4096);
  std::printf("    {\"case\": \"delegates_3_vs_1\", \"kind\": \"delegates\", \"ops\": 100, \"elements\": 4096");
  for (int delegates : {1, 3}) {
    Result<std::shared_ptr<const program::Program>> program = bench::vulkan_program(chain, delegates, SyncMode::kTimeline, "bench_suite");
    Result<SessionRun> r = program.ok() ? run_session(program.value(), {}, {}, o) : Result<SessionRun>(program.status());
    std::printf(", \"d%d\": {", delegates);
    if (r.ok()) {
      std::printf("\"wall_us\": %.2f, \"gpu_us\": %.2f, \"host_io_wall_us\": %.2f, \"delegates\": %zu}", r->wall_us,
                  r->gpu_us, r->host_io_wall_us, r->delegates);
    } else {
      std::printf("\"error\": \"%s\"}", json_escape(r.status().message()).c_str());
    }
  }
  std::printf("},\n");
  std::fflush(stdout);

  // Large kernels: fewer runs (each is milliseconds on the H100).
  Options big = o;
  big.runs = std::max(1, std::min(o.runs, o.small ? 3 : 30));
  big.warmup = std::min(o.warmup, o.small ? 1 : 5);
  int64_t n = o.small ? 256 : 4096;
  gemm_case(ctx.value(), n, false, big, false);
  std::fflush(stdout);
  gemm_case(ctx.value(), n, true, big, false);
  std::fflush(stdout);
  chain_case(ctx.value(), o.small ? (int64_t{1} << 20) : (int64_t{64} << 20), big, true);
  std::printf("  ]\n}\n");
  return 0;
}

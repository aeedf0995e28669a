// What a dispatch costs the GPU beyond its work, and what the barrier between
// two dependent dispatches adds: chains of 1..N copies (peak_copy) of a tiny,
// a layer-norm-sized and a large buffer, recorded back to back in one command
// buffer with each barrier form the runtime could use, timed by timestamps
// around the chain and by the wall clock of submit + wait. The slope over N is
// the per-dispatch cost of that form. Prints one JSON object; medians after
// warm-up.
//
// Forms: "none" (no barrier: every copy writes the same buffer from the same
// source, so no result depends on another), "compute" (compute -> compute,
// shader writes -> shader reads and writes), "compute+transfer" (what
// DispatchSequence records today: transfer stages and accesses on both sides)
// "all" (ALL_COMMANDS, memory write -> memory read and write), "buffer" (as
// "compute", but a buffer barrier on the one buffer written) and "execution"
// (compute -> compute with no memory dependency: not a form the runtime may
// use, as a copy's writes need not be visible to the next; it isolates what
// waiting for the earlier dispatch costs from what making its writes visible
// costs).
//
// Then the same slope for chains of real kernels as the runtime records them
// (KernelGraph, its own barriers): f16 layer norms and linears of GPT-2's
// 768-wide activations (--rows, 128 by default), each kind alone and the two
// alternating; --spirv NAME=FILE runs them with a variant of kernel NAME.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_device.h"
#include "gpu/gpu_timer.h"
#include "graph/builder.h"
#include "kernels/kernel_cache.h"
#include "kernels/kernel_graph.h"
#include "kernels/op_table.h"
#include "spirv_file.h"
#include "stats.h"

namespace {

using namespace gpuu;

enum class Form { kNone, kCompute, kComputeTransfer, kAll, kBuffer, kExecution };
const char* form_name(Form f) {
  switch (f) {
    case Form::kNone: return "none";
    case Form::kCompute: return "compute";
    case Form::kComputeTransfer: return "compute+transfer";
    case Form::kAll: return "all";
    case Form::kBuffer: return "buffer";
    case Form::kExecution: return "execution";
  }
  return "?";
}

// `written`: the buffer the dispatch before the barrier wrote ("buffer" form).
void record_barrier(const vk::DeviceFunctions& vk, VkCommandBuffer cb, Form f, VkBuffer written) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  VkPipelineStageFlags src = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, dst = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  switch (f) {
    case Form::kNone: return;
    case Form::kExecution:
      vk.vkCmdPipelineBarrier(cb, src, dst, 0, 0, nullptr, 0, nullptr, 0, nullptr);
      return;
    case Form::kBuffer: {
      VkBufferMemoryBarrier bb{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
      bb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      bb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      bb.srcQueueFamilyIndex = bb.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
      bb.buffer = written;
      bb.size = VK_WHOLE_SIZE;
      vk.vkCmdPipelineBarrier(cb, src, dst, 0, 0, nullptr, 1, &bb, 0, nullptr);
      return;
    }
    case Form::kCompute:
      mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      break;
    case Form::kComputeTransfer:
      src = dst = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
      mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT;
      break;
    case Form::kAll:
      src = dst = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
      mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
      break;
  }
  vk.vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

struct Timing {
  double gpu_us = 0, wall_us = 0;
};

class Bench {
 public:
  Bench(bench::BenchDevice& d, std::shared_ptr<kernels::KernelCache> cache) : d_(d), cache_(std::move(cache)) {}
  ~Bench() {
    const auto& vk = d_.ctx->vkd();
    if (pool_) vk.vkDestroyDescriptorPool(d_.ctx->device(), pool_, nullptr);
  }

  Status init(VkDeviceSize max_bytes) {
    const auto& vk = d_.ctx->vkd();
    GPUU_ASSIGN_OR_RETURN(kernel_, cache_->get(kernels::KernelKey{"peak_copy", {}, 2, 4}));
    GPUU_RETURN_IF_ERROR(kernel_->wait());
    for (const char* what : {"a", "b"}) {
      GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, gpu::DeviceBuffer::create(*d_.ctx, max_bytes, gpu::MemoryKind::kDevice, what));
      buffers_.push_back(std::move(b));
    }
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = 2;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    GPUU_VK_RETURN_IF_ERROR(vk.vkCreateDescriptorPool(d_.ctx->device(), &info, nullptr, &pool_), "descriptor pool");
    for (int s = 0; s < 2; ++s) {  // set 0: a -> b, set 1: b -> a
      VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      alloc.descriptorPool = pool_;
      alloc.descriptorSetCount = 1;
      alloc.pSetLayouts = &kernel_->set_layout;
      GPUU_VK_RETURN_IF_ERROR(vk.vkAllocateDescriptorSets(d_.ctx->device(), &alloc, &sets_[s]), "descriptor set");
      VkDescriptorBufferInfo infos[2] = {{buffers_[s].buffer(), 0, VK_WHOLE_SIZE},
                                         {buffers_[1 - s].buffer(), 0, VK_WHOLE_SIZE}};
      VkWriteDescriptorSet w[2];
      for (uint32_t b = 0; b < 2; ++b) {
        w[b] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w[b].dstSet = sets_[s];
        w[b].dstBinding = b;
        w[b].descriptorCount = 1;
        w[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[b].pBufferInfo = &infos[b];
      }
      vk.vkUpdateDescriptorSets(d_.ctx->device(), 2, w, 0, nullptr);
    }
    return Status::Ok();
  }

  // `n` copies of `words` 16-byte words in one command buffer, each after a
  // barrier of form `f` (dependent: a -> b, b -> a, ...; none: a -> b each time).
  Result<Timing> measure(uint32_t words, int n, Form f, int warmup, int runs) {
    const auto& vk = d_.ctx->vkd();
    VkCommandBuffer cb;
    GPUU_VK_RETURN_IF_ERROR(d_.ctx->allocate_command_buffer(d_.pool, &cb), "command buffer");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    GPUU_VK_RETURN_IF_ERROR(vk.vkBeginCommandBuffer(cb, &begin), "begin");
    gpu::GpuTimer timer;
    GPUU_RETURN_IF_ERROR(timer.begin(*d_.ctx, cb));
    vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, kernel_->pipeline);
    vk.vkCmdPushConstants(cb, kernel_->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &words);
    const uint32_t groups = (words + kernels::kWorkgroupSize - 1) / kernels::kWorkgroupSize;
    for (int i = 0; i < n; ++i) {
      // Set s reads buffer s and writes the other: the last dispatch wrote buffer i % 2.
      if (i > 0) record_barrier(vk, cb, f, buffers_[i % 2].buffer());
      const VkDescriptorSet set = sets_[f == Form::kNone ? 0 : i % 2];
      vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, kernel_->layout, 0, 1, &set, 0, nullptr);
      vk.vkCmdDispatch(cb, groups, 1, 1);
    }
    timer.end(cb);
    GPUU_VK_RETURN_IF_ERROR(vk.vkEndCommandBuffer(cb), "end");
    std::vector<double> gpu, wall;
    for (int i = 0; i < warmup + runs; ++i) {
      GPUU_ASSIGN_OR_RETURN(const double us, bench::submit_and_wait(*d_.ctx, cb));
      if (i < warmup) continue;
      gpu.push_back(timer.elapsed_us());
      wall.push_back(us);
    }
    vk.vkFreeCommandBuffers(d_.ctx->device(), d_.pool, 1, &cb);
    return Timing{bench::median(gpu), bench::median(wall)};
  }

 private:
  bench::BenchDevice& d_;
  std::shared_ptr<kernels::KernelCache> cache_;
  const kernels::Kernel* kernel_ = nullptr;
  std::vector<gpu::DeviceBuffer> buffers_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet sets_[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
};

// A chain of `n` f16 ops on [rows, 768]: "layer_norm" (with weight and
// bias), "linear" (768 -> 768, one weight for all) or "mixed" (the two
// alternating), timed as KernelGraph records them: wall without timestamps,
// GPU time with them. The buffers hold whatever they hold: the time does not
// depend on the values.
Result<Timing> graph_chain(const SharedGpuContextPtr& ctx, const std::string& kind, int n, int64_t rows, int warmup,
                           int runs) {
  graph::Graph g;
  GPUU_ASSIGN_OR_RETURN(graph::ValueId x, graph::add_graph_input(g, "x", graph::DType::kF16, {rows, 768}));
  GPUU_ASSIGN_OR_RETURN(graph::ValueId w, graph::add_graph_input(g, "w", graph::DType::kF16, {768, 768}));
  GPUU_ASSIGN_OR_RETURN(graph::ValueId gamma, graph::add_graph_input(g, "gamma", graph::DType::kF16, {768}));
  GPUU_ASSIGN_OR_RETURN(graph::ValueId beta, graph::add_graph_input(g, "beta", graph::DType::kF16, {768}));
  graph::ValueId v = x;
  for (int i = 0; i < n; ++i) {
    const bool norm = kind == "layer_norm" || (kind == "mixed" && i % 2 == 0);
    const std::string name = "op" + std::to_string(i);
    GPUU_ASSIGN_OR_RETURN(std::vector<graph::ValueId> out,
                          norm ? graph::add_op(g, "layer_norm", name, {v, gamma, beta}, {{"normalized_ndim", int64_t{1}}})
                               : graph::add_op(g, "linear", name, {v, w}, {}));
    v = out[0];
  }
  g.mark_output(v);
  std::vector<gpu::DeviceBuffer> buffers;
  for (int64_t elements : {rows * 768, int64_t{768 * 768}, int64_t{768}, int64_t{768}, rows * 768}) {
    GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, gpu::DeviceBuffer::create(*ctx, static_cast<VkDeviceSize>(elements) * 2,
                                                                         gpu::MemoryKind::kDevice, "chain"));
    buffers.push_back(std::move(b));
  }
  Timing t;
  for (bool timed : {false, true}) {
    kernels::KernelGraphOptions options;
    options.gpu_timing = timed;
    GPUU_ASSIGN_OR_RETURN(std::unique_ptr<kernels::KernelGraph> kg,
                          kernels::KernelGraph::create(ctx, g,
                                                       {buffers[0].whole_range(), buffers[1].whole_range(),
                                                        buffers[2].whole_range(), buffers[3].whole_range()},
                                                       {buffers[4].whole_range()}, options));
    std::vector<double> samples;
    for (int i = 0; i < warmup + runs; ++i) {
      GPUU_ASSIGN_OR_RETURN(const double us, bench::submit_and_wait(*ctx, kg->command_buffer()));
      if (i >= warmup) samples.push_back(timed ? kg->last_gpu_time_us() : us);
    }
    (timed ? t.gpu_us : t.wall_us) = bench::median(samples);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 50, warmup = 10, chain = 100;
  std::vector<int64_t> chain_rows;
  std::vector<std::pair<std::string, std::string>> spirv;  // NAME=FILE: a variant for the graph chains
  bool usage = false;
  for (int i = 1; i < argc && !usage; i += 2) {
    if (i + 1 >= argc) usage = true;
    else if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--chain")) chain = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rows")) chain_rows.push_back(std::atoll(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--spirv")) {
      const std::optional<std::pair<std::string, std::string>> variant = bench::parse_spirv_variant(argv[i + 1]);
      usage = !variant;
      if (variant) spirv.push_back(*variant);
    } else {
      usage = true;
    }
  }
  // The slopes need two lengths of chain: 1 and `chain` copies, 1 and `chain` / 5 (>= 2) ops.
  if (usage || runs < 1 || warmup < 0 || chain < 10 ||
      std::any_of(chain_rows.begin(), chain_rows.end(), [](int64_t r) { return r < 1; })) {
    std::fprintf(stderr, "usage: bench_dispatch [--runs N >= 1] [--warmup N] [--chain N >= 10] [--rows R]... "
                         "[--spirv NAME=FILE]...\n");
    return 2;
  }
  auto device = bench::open_bench_device("bench_dispatch");
  if (!device) return 1;
  // The context's kernel cache (it lives as long as the context), for the variants.
  // A variant replaces its kernel for the whole run (the cache keeps the
  // pipelines it made: compare against a run without --spirv).
  const std::shared_ptr<kernels::KernelCache> kernel_cache = kernels::KernelCache::shared(device->ctx);
  if (!bench::add_spirv_variants(*kernel_cache, spirv, "bench_dispatch")) return 2;
  std::string variants;
  for (const auto& [name, file] : spirv) variants += (variants.empty() ? "\"" : ", \"") + name + "=" + file + "\"";
  const bool cpu = device->ctx->properties().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  // A workgroup's worth; GPT-2's 2048 x 768 f16 activations (3 MB, as a layer
  // norm moves); 32 MB.
  const std::vector<uint32_t> sizes = cpu ? std::vector<uint32_t>{256, 4096}
                                          : std::vector<uint32_t>{256, 2048 * 768 * 2 / 16, 2u << 20};
  Bench bench(*device, kernel_cache);
  if (Status s = bench.init(VkDeviceSize{sizes.back()} * 16); !s.ok()) {
    std::fprintf(stderr, "bench_dispatch: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("{\"benchmark\": \"dispatch\", \"device\": \"%s\", \"max_compute_shared_bytes\": %u, \"chain\": %d, "
              "\"runs\": %d, \"spirv\": [%s], \"cases\": [\n",
              device->ctx->device_name().c_str(), device->ctx->properties().limits.maxComputeSharedMemorySize, chain,
              runs, variants.c_str());
  bool first = true;
  for (uint32_t words : sizes) {
    for (Form f : {Form::kNone, Form::kCompute, Form::kComputeTransfer, Form::kAll, Form::kBuffer, Form::kExecution}) {
      Result<Timing> one = bench.measure(words, 1, f, warmup, runs);
      Result<Timing> many = bench.measure(words, chain, f, warmup, runs);
      if (!one.ok() || !many.ok()) {
        std::fprintf(stderr, "bench_dispatch: %s\n", (one.ok() ? many : one).status().message().c_str());
        return 1;
      }
      const double per_gpu = (many.value().gpu_us - one.value().gpu_us) / (chain - 1);
      const double per_wall = (many.value().wall_us - one.value().wall_us) / (chain - 1);
      std::printf("%s  {\"bytes\": %u, \"barrier\": \"%s\", \"one_gpu_us\": %.2f, \"one_wall_us\": %.2f, "
                  "\"chain_gpu_us\": %.2f, \"chain_wall_us\": %.2f, \"per_dispatch_gpu_us\": %.3f, "
                  "\"per_dispatch_wall_us\": %.3f}",
                  first ? "" : ",\n", words * 16, form_name(f), one.value().gpu_us, one.value().wall_us,
                  many.value().gpu_us, many.value().wall_us, per_gpu, per_wall);
      first = false;
    }
  }
  std::printf("\n], \"graph_chains\": [\n");
  first = true;
  if (chain_rows.empty()) chain_rows.push_back(cpu ? 16 : 128);
  for (int64_t rows : chain_rows) {
    for (const char* kind : {"layer_norm", "linear", "mixed"}) {
      const int n = chain / 5;
      Result<Timing> one = graph_chain(device->ctx, kind, 1, rows, warmup, runs);
      Result<Timing> many = graph_chain(device->ctx, kind, n, rows, warmup, runs);
      if (!one.ok() || !many.ok()) {
        std::fprintf(stderr, "bench_dispatch: %s\n", (one.ok() ? many : one).status().message().c_str());
        return 1;
      }
      std::printf("%s  {\"ops\": \"%s\", \"rows\": %lld, \"chain\": %d, \"one_gpu_us\": %.2f, \"one_wall_us\": %.2f, "
                  "\"chain_gpu_us\": %.2f, \"chain_wall_us\": %.2f, \"per_op_gpu_us\": %.3f, \"per_op_wall_us\": %.3f}",
                  first ? "" : ",\n", kind, static_cast<long long>(rows), n, one.value().gpu_us, one.value().wall_us,
                  many.value().gpu_us, many.value().wall_us, (many.value().gpu_us - one.value().gpu_us) / (n - 1),
                  (many.value().wall_us - one.value().wall_us) / (n - 1));
      first = false;
    }
  }
  std::printf("\n]}\n");
  return 0;
}

// Pipeline creation from embedded SPIR-V, once per (shader, constants).
#include "kernels/kernel_cache.h"

#include <algorithm>
#include <atomic>
#include <tuple>

#include "kernels/shader_library.h"

namespace gpuu::kernels {
namespace {

std::atomic<size_t> g_pipelines_created{0};

}  // namespace

std::shared_ptr<KernelCache> KernelCache::shared(const SharedGpuContextPtr& ctx) {
  return std::static_pointer_cast<KernelCache>(
      ctx->kept("kernels::KernelCache", [&] { return std::make_shared<KernelCache>(*ctx); }));
}

size_t KernelCache::pipelines_created() { return g_pipelines_created.load(); }

void KernelCache::add_spirv(const std::string& name, std::vector<uint32_t> words) {
  std::lock_guard<std::mutex> lock(mutex_);
  custom_spirv_[name] = std::move(words);
}

size_t KernelCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kernels_.size();
}

const EmbeddedShader* find_shader(std::string_view name) {
  for (const EmbeddedShader& s : embedded_shaders()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

KernelCache::~KernelCache() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();  // each finishes the queue first
  const auto& vk = ctx_->vkd();
  VkDevice dev = ctx_->device();
  for (auto& entry : kernels_) {
    vk.vkDestroyPipeline(dev, entry.second->pipeline, nullptr);
    vk.vkDestroyPipelineLayout(dev, entry.second->layout, nullptr);
    vk.vkDestroyDescriptorSetLayout(dev, entry.second->set_layout, nullptr);
  }
  for (auto& entry : modules_) vk.vkDestroyShaderModule(dev, entry.second, nullptr);
}

void KernelCache::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

Status KernelCache::make_pipeline(Kernel& kernel, VkShaderModule module) {
  const KernelKey& key = kernel.key;
  std::vector<VkSpecializationMapEntry> entries(key.spec_constants.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i] = VkSpecializationMapEntry{static_cast<uint32_t>(i), static_cast<uint32_t>(i * 4), 4};
  }
  VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(), key.spec_constants.size() * 4,
                            key.spec_constants.data()};
  VkComputePipelineCreateInfo pipe{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pipe.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipe.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipe.stage.module = module;
  pipe.stage.pName = key.entry_point.c_str();
  pipe.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
  pipe.layout = kernel.layout;
  PipelineCache::Use cache = ctx_->pipeline_cache().use();
  GPUU_VK_RETURN_IF_ERROR(
      ctx_->vkd().vkCreateComputePipelines(ctx_->device(), cache.cache, 1, &pipe, nullptr, &kernel.pipeline),
      "vkCreateComputePipelines");
  return Status::Ok();
}

Result<const Kernel*> KernelCache::get(const KernelKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = kernels_.find(key);
  if (found != kernels_.end()) return found->second.get();
  const auto& vk = ctx_->vkd();
  VkDevice dev = ctx_->device();

  VkShaderModule module = VK_NULL_HANDLE;
  auto mod = modules_.find(key.shader);
  if (mod != modules_.end()) {
    module = mod->second;
  } else {
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    // Added SPIR-V first: a benchmark may stand a variant in for a built-in
    // kernel (bench_gemm --spirv); custom shaders' names never clash.
    if (auto custom = custom_spirv_.find(key.shader); custom != custom_spirv_.end()) {
      info.codeSize = custom->second.size() * 4;
      info.pCode = custom->second.data();
    } else if (const EmbeddedShader* shader = find_shader(key.shader)) {
      info.codeSize = shader->word_count * 4;
      info.pCode = shader->words;
    } else {
      return err(StatusCode::kInternal, "no shader named '", key.shader, "'");
    }
    GPUU_VK_RETURN_IF_ERROR(vk.vkCreateShaderModule(dev, &info, nullptr, &module), "vkCreateShaderModule");
    modules_[key.shader] = module;
  }

  auto kernel = std::make_unique<Kernel>();
  kernel->key = key;
  std::vector<VkDescriptorSetLayoutBinding> bindings(key.bindings);
  for (uint32_t i = 0; i < key.bindings; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = key.bindings;
  set_info.pBindings = bindings.data();
  GPUU_VK_RETURN_IF_ERROR(vk.vkCreateDescriptorSetLayout(dev, &set_info, nullptr, &kernel->set_layout),
                          "vkCreateDescriptorSetLayout");
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, key.push_constant_bytes};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &kernel->set_layout;
  layout_info.pushConstantRangeCount = key.push_constant_bytes ? 1 : 0;
  layout_info.pPushConstantRanges = &push;
  VkResult r = vk.vkCreatePipelineLayout(dev, &layout_info, nullptr, &kernel->layout);
  if (r != VK_SUCCESS) {
    vk.vkDestroyDescriptorSetLayout(dev, kernel->set_layout, nullptr);
    return vk::vk_status(r, "vkCreatePipelineLayout");
  }

  // Compiled on a worker; a failure stays with the kernel (wait() reports it
  // to each delegate that records it), as it would recur.
  auto made = std::make_shared<std::promise<Status>>();
  kernel->made = made->get_future().share();
  Kernel* out = kernel.get();
  queue_.push_back([this, out, module, made] { made->set_value(make_pipeline(*out, module)); });
  if (workers_.empty()) {
    // A few: vkCreateComputePipelines is safe on distinct pipelines, and the
    // context's cache is internally synchronized.
    const unsigned count = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
    for (unsigned i = 0; i < count; ++i) workers_.emplace_back([this] { work(); });
  }
  work_ready_.notify_one();
  kernels_.emplace(key, std::move(kernel));
  ++g_pipelines_created;
  return static_cast<const Kernel*>(out);
}

}  // namespace gpuu::kernels

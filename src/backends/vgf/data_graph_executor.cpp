// Data-graph pipelines, sessions and tensors for the native VGF path.
#include "backends/vgf/data_graph_executor.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/log.h"
#include "context/vulkan_arm.h"
#include "gpu/gpu_timer.h"

namespace gpuu::vgf {

namespace {

// A tensor of the model resource table, with its memory (owned for
// intermediates, borrowed from a hand-off buffer for inputs and outputs).
struct Tensor {
  VkTensorARM tensor = VK_NULL_HANDLE;
  VkTensorViewARM view = VK_NULL_HANDLE;
  VkDeviceMemory owned_memory = VK_NULL_HANDLE;
};

struct GraphSegment {
  VkShaderModule module = VK_NULL_HANDLE;
  std::vector<VkDescriptorSetLayout> set_layouts;  // by set number, gaps filled with empty layouts
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDataGraphPipelineSessionARM session = VK_NULL_HANDLE;
  std::vector<VkDeviceMemory> session_memory;
  std::vector<VkDescriptorSet> sets;  // by set number
};

// A tensor description that outlives the create call it is chained into.
struct Description {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  VkTensorDescriptionARM vk{VK_STRUCTURE_TYPE_TENSOR_DESCRIPTION_ARM};
};

std::unique_ptr<Description> describe(const Resource& r) {
  auto d = std::make_unique<Description>();
  d->dims = r.shape;
  d->strides = r.strides;
  d->vk.tiling = VK_TENSOR_TILING_LINEAR_ARM;
  d->vk.format = static_cast<VkFormat>(r.vk_format);
  d->vk.dimensionCount = static_cast<uint32_t>(d->dims.size());
  d->vk.pDimensions = d->dims.data();
  d->vk.pStrides = d->strides.empty() ? nullptr : d->strides.data();  // null: packed
  d->vk.usage = VK_TENSOR_USAGE_DATA_GRAPH_BIT_ARM;
  return d;
}

Result<uint32_t> memory_type(const SharedGpuContext& ctx, uint32_t bits) {
  const VkPhysicalDeviceMemoryProperties& props = ctx.memory_properties();
  for (VkMemoryPropertyFlags want : {VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT), VkMemoryPropertyFlags(0)}) {
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
      if ((bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) return i;
    }
  }
  return err(StatusCode::kUnsupported, "no memory type fits memoryTypeBits 0x", bits);
}

}  // namespace

struct DataGraphExecutor::Impl {
  SharedGpuContextPtr ctx;
  vk::ArmDeviceFunctions arm;
  std::map<uint32_t, Tensor> tensors;  // by MRT index
  std::vector<GraphSegment> segments;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkCommandBuffer command_buffer = VK_NULL_HANDLE;
  gpu::GpuTimer timer;  // GPU time of each execute, when asked for (benchmarks read it)
  bool gpu_timing = true;
  uint64_t allocated = 0;  // bytes of every allocate(): intermediates and session memory

  ~Impl();
  Status load_entry_points();
  Status make_tensors(const VgfFile& file, const std::vector<gpu::BufferRange>& inputs,
                      const std::vector<gpu::BufferRange>& outputs);
  Status make_segment(const VgfFile& file, const Segment& segment);
  Status bind_session_memory(GraphSegment& g);
  Status record();
  Status allocate(const VkMemoryRequirements& req, const char* what, VkDeviceMemory* memory);
};

std::string data_graph_refusal(const SharedGpuContext& ctx, const VgfFile& file) {
  if (!ctx.has_feature(kFeatureDataGraph)) {
    return "device '" + ctx.device_name() + "' has no VK_ARM_data_graph (with VK_ARM_tensors, its TOSA instruction "
           "set and a data-graph queue); Arm's emulation layers add them to any Vulkan device";
  }
  for (const Segment& s : file.sequence.segments) {
    if (s.type != ModuleType::kGraph) {
      return "segment '" + s.name + "' is a COMPUTE segment; the native path runs files of GRAPH segments only";
    }
  }
  for (const Resource& r : file.resources) {
    for (int64_t d : r.shape) {
      if (d < 0) return "the file has a tensor of dynamic shape, which the native path does not bind";
    }
  }
  return "";
}

DataGraphExecutor::DataGraphExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DataGraphExecutor::~DataGraphExecutor() = default;
const SharedGpuContextPtr& DataGraphExecutor::context() const { return impl_->ctx; }
VkCommandPool DataGraphExecutor::command_pool() const { return impl_->command_pool; }
VkCommandBuffer DataGraphExecutor::command_buffer() const { return impl_->command_buffer; }
size_t DataGraphExecutor::dispatch_count() const { return impl_->segments.size(); }

double DataGraphExecutor::last_gpu_time_us() const { return impl_->timer.elapsed_us(); }
uint64_t DataGraphExecutor::memory_bytes() const { return impl_->allocated; }

Result<std::unique_ptr<DataGraphExecutor>> DataGraphExecutor::create(SharedGpuContextPtr ctx, const VgfFile& file,
                                                                     const std::vector<gpu::BufferRange>& inputs,
                                                                     const std::vector<gpu::BufferRange>& outputs,
                                                                     bool gpu_timing) {
  std::string why = data_graph_refusal(*ctx, file);
  if (!why.empty()) return err(StatusCode::kUnsupported, why);
  auto impl = std::make_unique<Impl>();
  impl->ctx = std::move(ctx);
  impl->gpu_timing = gpu_timing;
  GPUU_RETURN_IF_ERROR(impl->load_entry_points());
  GPUU_RETURN_IF_ERROR(impl->make_tensors(file, inputs, outputs));
  for (const Segment& s : file.sequence.segments) {
    Status st = impl->make_segment(file, s);
    if (!st.ok()) return err(st.code(), "segment '", s.name, "': ", st.message());
  }
  GPUU_RETURN_IF_ERROR(impl->record());
  return std::unique_ptr<DataGraphExecutor>(new DataGraphExecutor(std::move(impl)));
}

Status DataGraphExecutor::Impl::load_entry_points() {
  const auto& vki = ctx->vki();
#define GPUU_LOAD_ARM(name)                                                                                 \
  arm.name = reinterpret_cast<PFN_##name>(vki.vkGetDeviceProcAddr(ctx->device(), #name));                 \
  if (!arm.name) {                                                                                          \
    return err(StatusCode::kUnsupported, "device '", ctx->device_name(), "' has VK_ARM_data_graph enabled " \
               "but its entry point " #name " is unavailable");                                             \
  }
  GPUU_VK_ARM_DEVICE_FUNCTIONS(GPUU_LOAD_ARM)
#undef GPUU_LOAD_ARM
  return Status::Ok();
}

Status DataGraphExecutor::Impl::allocate(const VkMemoryRequirements& req, const char* what, VkDeviceMemory* memory) {
  GPUU_ASSIGN_OR_RETURN(uint32_t type, memory_type(*ctx, req.memoryTypeBits));
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = std::max<VkDeviceSize>(req.size, 4);
  info.memoryTypeIndex = type;
  VkResult r = ctx->vkd().vkAllocateMemory(ctx->device(), &info, nullptr, memory);
  if (r != VK_SUCCESS) return err(StatusCode::kOutOfMemory, "vkAllocateMemory for ", what, ": ", vk::vk_result_name(r));
  allocated += info.allocationSize;
  return Status::Ok();
}

Status DataGraphExecutor::Impl::make_tensors(const VgfFile& file, const std::vector<gpu::BufferRange>& inputs,
                                             const std::vector<gpu::BufferRange>& outputs) {
  // Which hand-off buffer backs each model input and output: the buffers come
  // in the graph's interface order (the segment's, for a file of one segment).
  const bool one = file.sequence.segments.size() == 1;
  const std::vector<BindingSlot>& in_slots = one ? file.sequence.segments[0].inputs : file.sequence.inputs;
  const std::vector<BindingSlot>& out_slots = one ? file.sequence.segments[0].outputs : file.sequence.outputs;
  if (in_slots.size() != inputs.size() || out_slots.size() != outputs.size()) {
    return err(StatusCode::kInvalidArgument, "the VGF graph has ", in_slots.size(), " inputs and ", out_slots.size(),
               " outputs but ", inputs.size(), " and ", outputs.size(), " buffers were bound");
  }
  std::map<uint32_t, const gpu::BufferRange*> backing;
  for (size_t i = 0; i < inputs.size(); ++i) backing[in_slots[i].mrt_index] = &inputs[i];
  for (size_t i = 0; i < outputs.size(); ++i) backing[out_slots[i].mrt_index] = &outputs[i];
  std::set<uint32_t> used;
  for (const Segment& s : file.sequence.segments) {
    for (const DescriptorSetInfo& set : s.descriptor_sets) {
      for (const BindingSlot& b : set.bindings) used.insert(b.mrt_index);
    }
  }
  const VkDevice device = ctx->device();
  for (uint32_t mrt : used) {
    if (mrt >= file.resources.size()) {
      return err(StatusCode::kInvalidFormat, "a descriptor names resource ", mrt, " of ", file.resources.size());
    }
    auto desc = describe(file.resources[mrt]);
    VkTensorCreateInfoARM info{VK_STRUCTURE_TYPE_TENSOR_CREATE_INFO_ARM};
    info.pDescription = &desc->vk;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    Tensor& t = tensors[mrt];
    GPUU_VK_RETURN_IF_ERROR(arm.vkCreateTensorARM(device, &info, nullptr, &t.tensor), "vkCreateTensorARM");
    VkTensorMemoryRequirementsInfoARM req_info{VK_STRUCTURE_TYPE_TENSOR_MEMORY_REQUIREMENTS_INFO_ARM};
    req_info.tensor = t.tensor;
    VkMemoryRequirements2 req{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    arm.vkGetTensorMemoryRequirementsARM(device, &req_info, &req);
    VkBindTensorMemoryInfoARM bind{VK_STRUCTURE_TYPE_BIND_TENSOR_MEMORY_INFO_ARM};
    bind.tensor = t.tensor;
    auto it = backing.find(mrt);
    if (it != backing.end()) {
      // Inputs and outputs alias the hand-off buffers: no copy in or out.
      const gpu::BufferRange& range = *it->second;
      if (range.memory == VK_NULL_HANDLE) {
        return err(StatusCode::kInternal, "resource ", mrt, ": its hand-off buffer came without its memory");
      }
      VkDeviceSize room = range.memory_size > range.offset ? range.memory_size - range.offset : range.size;
      if (req.memoryRequirements.size > room || (req.memoryRequirements.alignment > 1 &&
                                                  (range.memory_offset + range.offset) % req.memoryRequirements.alignment)) {
        return err(StatusCode::kInvalidArgument, "resource ", mrt, " needs ", req.memoryRequirements.size,
                   " bytes aligned to ", req.memoryRequirements.alignment,
                   " as a tensor but its hand-off buffer's memory has ", room, " at offset ",
                   range.memory_offset + range.offset);
      }
      bind.memory = range.memory;
      bind.memoryOffset = range.memory_offset + range.offset;
    } else {
      GPUU_RETURN_IF_ERROR(allocate(req.memoryRequirements, "an intermediate tensor", &t.owned_memory));
      bind.memory = t.owned_memory;
    }
    GPUU_VK_RETURN_IF_ERROR(arm.vkBindTensorMemoryARM(device, 1, &bind), "vkBindTensorMemoryARM");
    VkTensorViewCreateInfoARM view{VK_STRUCTURE_TYPE_TENSOR_VIEW_CREATE_INFO_ARM};
    view.tensor = t.tensor;
    view.format = desc->vk.format;
    GPUU_VK_RETURN_IF_ERROR(arm.vkCreateTensorViewARM(device, &view, nullptr, &t.view), "vkCreateTensorViewARM");
  }
  // One pool for every segment's sets.
  uint32_t set_count = 0, tensor_count = 0;
  for (const Segment& s : file.sequence.segments) {
    uint32_t max_set = 0;
    for (size_t k = 0; k < s.descriptor_sets.size(); ++k) {
      max_set = std::max(max_set, s.descriptor_sets[k].set_number(k) + 1);
      tensor_count += static_cast<uint32_t>(s.descriptor_sets[k].bindings.size());
    }
    set_count += max_set;
  }
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_TENSOR_ARM, std::max<uint32_t>(tensor_count, 1)};
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = std::max<uint32_t>(set_count, 1);
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  GPUU_VK_RETURN_IF_ERROR(ctx->vkd().vkCreateDescriptorPool(device, &pool_info, nullptr, &pool),
                          "vkCreateDescriptorPool");
  return Status::Ok();
}

Status DataGraphExecutor::Impl::make_segment(const VgfFile& file, const Segment& segment) {
  const auto& vkd = ctx->vkd();
  const VkDevice device = ctx->device();
  if (segment.module_index >= file.modules.size() || !file.modules[segment.module_index].has_code) {
    return err(StatusCode::kInvalidFormat, "module ", segment.module_index, " has no SPIR-V code");
  }
  const Module& module = file.modules[segment.module_index];
  segments.emplace_back();
  GraphSegment& g = segments.back();

  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = module.spirv.size() * sizeof(uint32_t);
  module_info.pCode = module.spirv.data();
  GPUU_VK_RETURN_IF_ERROR(vkd.vkCreateShaderModule(device, &module_info, nullptr, &g.module), "vkCreateShaderModule");

  // Descriptor set layouts by set number; the pipeline's resources with their tensor descriptions.
  std::map<uint32_t, const DescriptorSetInfo*> by_number;
  for (size_t k = 0; k < segment.descriptor_sets.size(); ++k) {
    by_number[segment.descriptor_sets[k].set_number(k)] = &segment.descriptor_sets[k];
  }
  uint32_t set_total = by_number.empty() ? 0 : by_number.rbegin()->first + 1;
  std::vector<std::unique_ptr<Description>> descriptions;
  std::vector<VkDataGraphPipelineResourceInfoARM> resources;
  for (uint32_t number = 0; number < set_total; ++number) {
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    auto it = by_number.find(number);
    if (it != by_number.end()) {
      for (const BindingSlot& b : it->second->bindings) {
        bindings.push_back({b.binding, VK_DESCRIPTOR_TYPE_TENSOR_ARM, 1, VK_SHADER_STAGE_ALL, nullptr});
        descriptions.push_back(describe(file.resources[b.mrt_index]));
        VkDataGraphPipelineResourceInfoARM info{VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_RESOURCE_INFO_ARM};
        info.pNext = &descriptions.back()->vk;
        info.descriptorSet = number;
        info.binding = b.binding;
        resources.push_back(info);
      }
    }
    VkDescriptorSetLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    layout_info.bindingCount = static_cast<uint32_t>(bindings.size());
    layout_info.pBindings = bindings.data();
    VkDescriptorSetLayout layout = VK_NULL_HANDLE;
    GPUU_VK_RETURN_IF_ERROR(vkd.vkCreateDescriptorSetLayout(device, &layout_info, nullptr, &layout),
                            "vkCreateDescriptorSetLayout");
    g.set_layouts.push_back(layout);
  }
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = static_cast<uint32_t>(g.set_layouts.size());
  layout_info.pSetLayouts = g.set_layouts.data();
  GPUU_VK_RETURN_IF_ERROR(vkd.vkCreatePipelineLayout(device, &layout_info, nullptr, &g.layout),
                          "vkCreatePipelineLayout");

  // Graph constants: each OpGraphConstantARM id takes its constant record's
  // data (format 0.5 binds them explicitly; 0.4 uses id = record index).
  std::vector<VkDataGraphPipelineConstantARM> constants;
  std::vector<const Blob*> constant_data;
  for (const GraphConstantBinding& b : segment.effective_constant_bindings()) {
    if (b.constant_table_index >= file.constants.size()) {
      return err(StatusCode::kInvalidFormat, "constant ", b.constant_table_index, " of ", file.constants.size(),
                 " is named");
    }
    const Constant& c = file.constants[b.constant_table_index];
    descriptions.push_back(describe(file.resources[c.mrt_index]));
    VkDataGraphPipelineConstantARM k{VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_CONSTANT_ARM};
    k.pNext = &descriptions.back()->vk;
    k.id = b.graph_constant_id;
    k.pConstantData = c.data.data();
    constants.push_back(k);
    constant_data.push_back(&c.data);
  }
  VkDataGraphPipelineShaderModuleCreateInfoARM shader{VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SHADER_MODULE_CREATE_INFO_ARM};
  shader.module = g.module;
  shader.pName = module.entry_point.c_str();
  shader.constantCount = static_cast<uint32_t>(constants.size());
  shader.pConstants = constants.data();
  VkDataGraphPipelineCreateInfoARM pipeline_info{VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_CREATE_INFO_ARM};
  pipeline_info.pNext = &shader;
  pipeline_info.layout = g.layout;
  pipeline_info.resourceInfoCount = static_cast<uint32_t>(resources.size());
  pipeline_info.pResourceInfos = resources.data();
  {
    // The context's cache, as the compute pipelines use: a session's pipeline cache file keeps these too.
    PipelineCache::Use cache = ctx->pipeline_cache().use();
    GPUU_VK_RETURN_IF_ERROR(arm.vkCreateDataGraphPipelinesARM(device, VK_NULL_HANDLE, cache.cache, 1, &pipeline_info,
                                                              nullptr, &g.pipeline),
                            "vkCreateDataGraphPipelinesARM");
  }
  // The driver has the weights now: the program file's pages of them go
  // (clean pages: read again, they come back from the file).
  for (const Blob* data : constant_data) data->drop_file_pages();

  VkDataGraphPipelineSessionCreateInfoARM session_info{VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_CREATE_INFO_ARM};
  session_info.dataGraphPipeline = g.pipeline;
  GPUU_VK_RETURN_IF_ERROR(arm.vkCreateDataGraphPipelineSessionARM(device, &session_info, nullptr, &g.session),
                          "vkCreateDataGraphPipelineSessionARM");
  GPUU_RETURN_IF_ERROR(bind_session_memory(g));

  // The descriptor sets, each tensor binding pointing at its tensor's view.
  g.sets.assign(set_total, VK_NULL_HANDLE);
  for (uint32_t number = 0; number < set_total; ++number) {
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = pool;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &g.set_layouts[number];
    GPUU_VK_RETURN_IF_ERROR(vkd.vkAllocateDescriptorSets(device, &alloc, &g.sets[number]), "vkAllocateDescriptorSets");
    auto it = by_number.find(number);
    if (it == by_number.end()) continue;
    std::vector<VkWriteDescriptorSetTensorARM> tensor_writes(it->second->bindings.size());
    std::vector<VkWriteDescriptorSet> writes(it->second->bindings.size());
    for (size_t i = 0; i < writes.size(); ++i) {
      const BindingSlot& b = it->second->bindings[i];
      tensor_writes[i] = VkWriteDescriptorSetTensorARM{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET_TENSOR_ARM};
      tensor_writes[i].tensorViewCount = 1;
      tensor_writes[i].pTensorViews = &tensors.at(b.mrt_index).view;
      writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].pNext = &tensor_writes[i];
      writes[i].dstSet = g.sets[number];
      writes[i].dstBinding = b.binding;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_TENSOR_ARM;
    }
    vkd.vkUpdateDescriptorSets(device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }
  return Status::Ok();
}

Status DataGraphExecutor::Impl::bind_session_memory(GraphSegment& g) {
  const VkDevice device = ctx->device();
  VkDataGraphPipelineSessionBindPointRequirementsInfoARM info{
      VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_REQUIREMENTS_INFO_ARM};
  info.session = g.session;
  uint32_t count = 0;
  GPUU_VK_RETURN_IF_ERROR(arm.vkGetDataGraphPipelineSessionBindPointRequirementsARM(device, &info, &count, nullptr),
                          "vkGetDataGraphPipelineSessionBindPointRequirementsARM");
  std::vector<VkDataGraphPipelineSessionBindPointRequirementARM> requirements(
      count, VkDataGraphPipelineSessionBindPointRequirementARM{
                 VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_REQUIREMENT_ARM});
  GPUU_VK_RETURN_IF_ERROR(
      arm.vkGetDataGraphPipelineSessionBindPointRequirementsARM(device, &info, &count, requirements.data()),
      "vkGetDataGraphPipelineSessionBindPointRequirementsARM");
  for (uint32_t r = 0; r < count; ++r) {
    if (requirements[r].bindPointType != VK_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_TYPE_MEMORY_ARM) {
      return err(StatusCode::kUnsupported, "the session asks for bind point type ", requirements[r].bindPointType,
                 ", which gpuu does not provide");
    }
    for (uint32_t object = 0; object < requirements[r].numObjects; ++object) {
      VkDataGraphPipelineSessionMemoryRequirementsInfoARM mem_info{
          VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_MEMORY_REQUIREMENTS_INFO_ARM};
      mem_info.session = g.session;
      mem_info.bindPoint = requirements[r].bindPoint;
      mem_info.objectIndex = object;
      VkMemoryRequirements2 req{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
      arm.vkGetDataGraphPipelineSessionMemoryRequirementsARM(device, &mem_info, &req);
      if (req.memoryRequirements.size == 0) continue;
      VkDeviceMemory memory = VK_NULL_HANDLE;
      GPUU_RETURN_IF_ERROR(allocate(req.memoryRequirements, "the data-graph session", &memory));
      g.session_memory.push_back(memory);
      VkBindDataGraphPipelineSessionMemoryInfoARM bind{VK_STRUCTURE_TYPE_BIND_DATA_GRAPH_PIPELINE_SESSION_MEMORY_INFO_ARM};
      bind.session = g.session;
      bind.bindPoint = requirements[r].bindPoint;
      bind.objectIndex = object;
      bind.memory = memory;
      GPUU_VK_RETURN_IF_ERROR(arm.vkBindDataGraphPipelineSessionMemoryARM(device, 1, &bind),
                              "vkBindDataGraphPipelineSessionMemoryARM");
    }
  }
  return Status::Ok();
}

Status DataGraphExecutor::Impl::record() {
  const auto& vkd = ctx->vkd();
  GPUU_VK_RETURN_IF_ERROR(ctx->create_command_pool(&command_pool), "vkCreateCommandPool");
  GPUU_VK_RETURN_IF_ERROR(ctx->allocate_command_buffer(command_pool, &command_buffer), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  GPUU_VK_RETURN_IF_ERROR(vkd.vkBeginCommandBuffer(command_buffer, &begin), "vkBeginCommandBuffer");
  if (gpu_timing) GPUU_RETURN_IF_ERROR(timer.begin(*ctx, command_buffer));
  // Whatever wrote the inputs before (another delegate, a host copy) is
  // visible; and each segment sees the previous one's writes.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  for (GraphSegment& g : segments) {
    vkd.vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0,
                             1, &barrier, 0, nullptr, 0, nullptr);
    vkd.vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_DATA_GRAPH_ARM, g.pipeline);
    if (!g.sets.empty()) {
      vkd.vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_DATA_GRAPH_ARM, g.layout, 0,
                                  static_cast<uint32_t>(g.sets.size()), g.sets.data(), 0, nullptr);
    }
    arm.vkCmdDispatchDataGraphARM(command_buffer, g.session, nullptr);
  }
  vkd.vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1,
                           &barrier, 0, nullptr, 0, nullptr);
  timer.end(command_buffer);
  GPUU_VK_RETURN_IF_ERROR(vkd.vkEndCommandBuffer(command_buffer), "vkEndCommandBuffer");
  return Status::Ok();
}

DataGraphExecutor::Impl::~Impl() {
  if (!ctx) return;
  const auto& vkd = ctx->vkd();
  const VkDevice device = ctx->device();
  if (command_pool) ctx->destroy_command_pool(command_pool);  // frees the command buffer too
  timer.reset();
  for (GraphSegment& g : segments) {
    if (g.session && arm.vkDestroyDataGraphPipelineSessionARM) {
      arm.vkDestroyDataGraphPipelineSessionARM(device, g.session, nullptr);
    }
    for (VkDeviceMemory m : g.session_memory) vkd.vkFreeMemory(device, m, nullptr);
    if (g.pipeline) vkd.vkDestroyPipeline(device, g.pipeline, nullptr);
    if (g.layout) vkd.vkDestroyPipelineLayout(device, g.layout, nullptr);
    for (VkDescriptorSetLayout l : g.set_layouts) vkd.vkDestroyDescriptorSetLayout(device, l, nullptr);
    if (g.module) vkd.vkDestroyShaderModule(device, g.module, nullptr);
  }
  if (pool) vkd.vkDestroyDescriptorPool(device, pool, nullptr);  // frees the sets
  for (auto& [mrt, t] : tensors) {
    if (t.view && arm.vkDestroyTensorViewARM) arm.vkDestroyTensorViewARM(device, t.view, nullptr);
    if (t.tensor && arm.vkDestroyTensorARM) arm.vkDestroyTensorARM(device, t.tensor, nullptr);
    if (t.owned_memory) vkd.vkFreeMemory(device, t.owned_memory, nullptr);
  }
}

}  // namespace gpuu::vgf

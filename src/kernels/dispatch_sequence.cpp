// Recording of a DispatchSequence with hazard-driven barriers.
#include "kernels/dispatch_sequence.h"

#include <algorithm>
#include <set>

namespace gpuu::kernels {
namespace {

bool touches(const std::vector<BufferRange>& set, const BufferRange& r) {
  return std::any_of(set.begin(), set.end(), [&](const BufferRange& s) { return gpu::overlaps(s, r); });
}

// Bytes a step reads plus bytes it writes: each bound range once per
// direction (a binding a kernel does not use stands in with a range it binds
// anyway, so counting each range once leaves those out).
uint64_t bound_bytes(const Step& s) {
  if (s.kind == Step::Kind::kCopy) {
    uint64_t bytes = s.copy_regions.empty() ? s.copy_src.size : 0;
    for (const VkBufferCopy& r : s.copy_regions) bytes += r.size;
    return 2 * bytes;
  }
  std::vector<std::pair<bool, BufferRange>> seen;
  uint64_t bytes = 0;
  for (const Binding& b : s.bindings) {
    bool repeat = std::any_of(seen.begin(), seen.end(), [&](const std::pair<bool, BufferRange>& r) {
      return r.first == b.written && r.second.buffer == b.range.buffer && r.second.offset == b.range.offset &&
             r.second.size == b.range.size;
    });
    if (repeat) continue;
    seen.emplace_back(b.written, b.range);
    bytes += b.range.size;
  }
  return bytes;
}

// Binds step `s`'s pipeline, descriptor set and push constants and
// dispatches `groups` workgroups (none: the warm-up's empty dispatch).
void record_dispatch(const vk::DeviceFunctions& vk, VkCommandBuffer cb, const Step& s, VkDescriptorSet set,
                     const uint32_t groups[3]) {
  vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, s.kernel->pipeline);
  vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, s.kernel->layout, 0, 1, &set, 0, nullptr);
  if (!s.push_constants.empty()) {
    vk.vkCmdPushConstants(cb, s.kernel->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                          static_cast<uint32_t>(s.push_constants.size()), s.push_constants.data());
  }
  vk.vkCmdDispatch(cb, groups[0], groups[1], groups[2]);
}

}  // namespace

void dispatch_groups(uint64_t invocations, uint32_t group_size, uint32_t max_groups_x, uint32_t out[3]) {
  uint64_t groups = (invocations + group_size - 1) / group_size;
  if (groups == 0) groups = 1;
  uint64_t x = std::min<uint64_t>(groups, max_groups_x);
  out[0] = static_cast<uint32_t>(x);
  out[1] = static_cast<uint32_t>((groups + x - 1) / x);
  out[2] = 1;
}

DispatchSequence::~DispatchSequence() {
  if (pool_) ctx_->vkd().vkDestroyDescriptorPool(ctx_->device(), pool_, nullptr);
  if (profile_pool_) ctx_->vkd().vkDestroyQueryPool(ctx_->device(), profile_pool_, nullptr);
}

void DispatchSequence::add(Step step) {
  if (step.work.bytes == 0) step.work.bytes = bound_bytes(step);
  steps_.push_back(std::move(step));
}

std::vector<gpu::TimedStep> DispatchSequence::step_times() const {
  if (!profile_pool_) return {};
  std::vector<uint64_t> ticks(steps_.size() + 1);
  VkResult r = ctx_->vkd().vkGetQueryPoolResults(ctx_->device(), profile_pool_, 0, static_cast<uint32_t>(ticks.size()),
                                                 ticks.size() * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
                                                 VK_QUERY_RESULT_64_BIT);
  if (r != VK_SUCCESS) return {};
  const double period_us = ctx_->properties().limits.timestampPeriod / 1000.0;
  std::vector<gpu::TimedStep> out;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    out.push_back(gpu::TimedStep{s.label, s.kind == Step::Kind::kCopy ? "copy" : s.kernel->key.shader,
                                 static_cast<double>(ticks[i + 1] - ticks[i]) * period_us, s.work});
  }
  return out;
}

void DispatchSequence::record_warm_up(VkCommandBuffer cb) const {
  const auto& vk = ctx_->vkd();
  // A barrier before each: synchronization validation counts an empty
  // dispatch's bindings as accesses (a GPU spends nothing on it).
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  std::set<const Kernel*> seen;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    if (s.kind != Step::Kind::kDispatch || !seen.insert(s.kernel).second) continue;
    vk.vkCmdPipelineBarrier(cb, stages, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    const uint32_t none[3] = {0, 0, 0};
    record_dispatch(vk, cb, s, set_of_step_[i], none);
  }
}

size_t DispatchSequence::dispatch_count() const {
  return static_cast<size_t>(
      std::count_if(steps_.begin(), steps_.end(), [](const Step& s) { return s.kind == Step::Kind::kDispatch; }));
}

void DispatchSequence::repoint(const std::vector<std::pair<BufferRange, BufferRange>>& moves) {
  auto move = [&](BufferRange& r) {
    for (const auto& [from, to] : moves) {
      if (r.buffer != from.buffer || r.offset < from.offset || r.offset + r.size > from.offset + from.size) continue;
      VkDeviceSize at = r.offset - from.offset;
      r = BufferRange{to.buffer, to.offset + at, std::min(r.size, to.size - std::min(at, to.size))};
      return;
    }
  };
  for (Step& s : steps_) {
    for (Binding& b : s.bindings) move(b.range);
    if (s.kind == Step::Kind::kCopy) {
      move(s.copy_src);
      move(s.copy_dst);
    }
  }
}

Status DispatchSequence::record(VkCommandBuffer cb) {
  const auto& vk = ctx_->vkd();
  VkDevice dev = ctx_->device();
  // The pipelines, compiled on the kernel cache's workers meanwhile.
  for (const Step& s : steps_) {
    if (s.kind == Step::Kind::kDispatch) GPUU_RETURN_IF_ERROR(s.kernel->wait());
  }
  barriers_ = 0;
  if (pool_) {  // a re-record: the sets go back to the pool, which has room for the same ones
    vk.vkDestroyDescriptorPool(dev, pool_, nullptr);
    pool_ = VK_NULL_HANDLE;
  }
  uint32_t sets = 0, descriptors = 0;
  // A binding wider than the device's storage-buffer range is undefined
  // behaviour that some drivers run (wrongly or not at all): refused, every
  // such binding named.
  const VkDeviceSize max_range = ctx_->properties().limits.maxStorageBufferRange;
  std::string too_wide;
  for (const Step& s : steps_) {
    if (s.kind != Step::Kind::kDispatch) continue;
    ++sets;
    descriptors += static_cast<uint32_t>(s.bindings.size());
    for (size_t b = 0; b < s.bindings.size(); ++b) {
      if (s.bindings[b].range.size <= max_range) continue;
      too_wide += str_cat(too_wide.empty() ? "" : "; ", "'", s.label, "' binding ", b, " (",
                          s.bindings[b].range.size, " bytes)");
    }
  }
  if (!too_wide.empty()) {
    return err(StatusCode::kUnsupported, "the device binds at most ", max_range,
               " bytes to a kernel's storage buffer (maxStorageBufferRange), and these need more: ", too_wide);
  }
  set_of_step_.assign(steps_.size(), VK_NULL_HANDLE);
  if (sets > 0) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max<uint32_t>(descriptors, 1)};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = sets;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    GPUU_VK_RETURN_IF_ERROR(vk.vkCreateDescriptorPool(dev, &pool_info, nullptr, &pool_), "vkCreateDescriptorPool");
    std::vector<VkDescriptorBufferInfo> infos;
    std::vector<VkWriteDescriptorSet> writes;
    infos.reserve(descriptors);
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& s = steps_[i];
      if (s.kind != Step::Kind::kDispatch) continue;
      VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      alloc.descriptorPool = pool_;
      alloc.descriptorSetCount = 1;
      alloc.pSetLayouts = &s.kernel->set_layout;
      GPUU_VK_RETURN_IF_ERROR(vk.vkAllocateDescriptorSets(dev, &alloc, &set_of_step_[i]), "vkAllocateDescriptorSets");
      for (uint32_t b = 0; b < s.bindings.size(); ++b) {
        const BufferRange& r = s.bindings[b].range;
        infos.push_back(VkDescriptorBufferInfo{r.buffer, r.offset, r.size});
        VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.dstSet = set_of_step_[i];
        w.dstBinding = b;
        w.descriptorCount = 1;
        w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w.pBufferInfo = &infos.back();
        writes.push_back(w);
      }
    }
    vk.vkUpdateDescriptorSets(dev, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }

  std::vector<BufferRange> written, read;  // since the last barrier
  // Every barrier orders compute and transfer both ways, so that the sets
  // above may be cleared at each whatever kind of step comes later (a
  // barrier naming only the next step's stage left a later copy unordered
  // after an earlier dispatch). On the H100 the transfer stages cost nothing
  // measurable: ~2.4 us a barrier either way (bench_dispatch).
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  auto barrier = [&] {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT;
    vk.vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
    written.clear();
    read.clear();
    ++barriers_;
  };
  // Work submitted earlier on this queue (another delegate, an input copy)
  // may write what we read: order it before us. Pipeline barriers reach back
  // across submissions on one queue, so this alone makes sync mode "none" safe.
  VkMemoryBarrier entry{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  entry.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  entry.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                        VK_ACCESS_TRANSFER_WRITE_BIT;
  vk.vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &entry, 0, nullptr, 0, nullptr);
  const auto query_count = static_cast<uint32_t>(steps_.size() + 1);
  if (options_.profile_steps && !profile_pool_) {
    VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = query_count;
    GPUU_VK_RETURN_IF_ERROR(vk.vkCreateQueryPool(dev, &query_info, nullptr, &profile_pool_), "vkCreateQueryPool");
  }
  if (profile_pool_) {
    vk.vkCmdResetQueryPool(cb, profile_pool_, 0, query_count);
    vk.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, profile_pool_, 0);
  }

  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    std::vector<BufferRange> reads, writes;
    if (s.kind == Step::Kind::kDispatch) {
      for (const Binding& b : s.bindings) (b.written ? writes : reads).push_back(b.range);
    } else {
      reads.push_back(s.copy_src);
      writes.push_back(s.copy_dst);
    }
    bool hazard = false;
    for (const auto& r : reads) hazard |= touches(written, r);
    for (const auto& w : writes) hazard |= touches(written, w) || touches(read, w);
    if (hazard) barrier();
    if (s.kind == Step::Kind::kDispatch) {
      record_dispatch(vk, cb, s, set_of_step_[i], s.groups);
    } else {
      std::vector<VkBufferCopy> regions{{s.copy_src.offset, s.copy_dst.offset, s.copy_src.size}};
      if (!s.copy_regions.empty()) {
        regions.clear();
        for (const VkBufferCopy& r : s.copy_regions) {
          regions.push_back({s.copy_src.offset + r.srcOffset, s.copy_dst.offset + r.dstOffset, r.size});
        }
      }
      vk.vkCmdCopyBuffer(cb, s.copy_src.buffer, s.copy_dst.buffer, static_cast<uint32_t>(regions.size()),
                         regions.data());
    }
    written.insert(written.end(), writes.begin(), writes.end());
    read.insert(read.end(), reads.begin(), reads.end());
    if (profile_pool_) {
      vk.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, profile_pool_, static_cast<uint32_t>(i + 1));
    }
  }

  // Make our writes visible to the host (outputs read after a fence or
  // semaphore wait), unless whoever submits us does it once for all.
  if (!options_.host_visible_exit) return Status::Ok();
  VkMemoryBarrier exit{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  exit.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  exit.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(cb, stages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &exit, 0, nullptr, 0, nullptr);
  return Status::Ok();
}

}  // namespace gpuu::kernels

// The GPU layer below the backends on a real device: upload_once and
// upload_staged place bytes where asked, submit_recorded orders work as the
// sync mode says, GpuTimer reads the GPU time of completed work.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "context/vulkan_bootstrap.h"
#include "gpu/device_buffer.h"
#include "gpu/gpu_timer.h"
#include "gpu/submission.h"

namespace gpuu::gpu {
namespace {

// A context, a command pool and a fence for each test.
class GpuLayer : public testing::Test {
 protected:
  void SetUp() override {
    Result<SharedGpuContextPtr> c = create_vulkan_context("gpu-tests", 0, DeviceOptions{});
    ASSERT_TRUE(c.ok()) << c.status().message();
    ctx_ = c.value();
    ASSERT_EQ(ctx_->create_command_pool(&pool_), VK_SUCCESS);
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    ASSERT_EQ(vk().vkCreateFence(ctx_->device(), &fence_info, nullptr, &fence_), VK_SUCCESS);
  }
  void TearDown() override {
    if (!ctx_) return;
    if (fence_) vk().vkDestroyFence(ctx_->device(), fence_, nullptr);
    if (pool_) ctx_->destroy_command_pool(pool_);
  }
  const vk::DeviceFunctions& vk() const { return ctx_->vkd(); }

  // Records "fill `buffer` with `word`" into a new command buffer, cb_ (the
  // pool frees them all at the end).
  void record_fill(const DeviceBuffer& buffer, uint32_t word, GpuTimer* timer = nullptr) {
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    ASSERT_EQ(vk().vkAllocateCommandBuffers(ctx_->device(), &alloc, &cb_), VK_SUCCESS);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    ASSERT_EQ(vk().vkBeginCommandBuffer(cb_, &begin), VK_SUCCESS);
    if (timer) {
      ASSERT_TRUE(timer->begin(*ctx_, cb_).ok());
    }
    vk().vkCmdFillBuffer(cb_, buffer.buffer(), 0, VK_WHOLE_SIZE, word);
    VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vk().vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                              nullptr, 0, nullptr);
    if (timer) timer->end(cb_);
    ASSERT_EQ(vk().vkEndCommandBuffer(cb_), VK_SUCCESS);
  }
  void wait_and_reset_fence() {
    ASSERT_EQ(vk().vkWaitForFences(ctx_->device(), 1, &fence_, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    ASSERT_EQ(vk().vkResetFences(ctx_->device(), 1, &fence_), VK_SUCCESS);
  }
  static std::vector<uint32_t> words(const DeviceBuffer& b) {
    std::vector<uint32_t> out(b.size() / 4);
    std::memcpy(out.data(), b.mapped(), b.size());
    return out;
  }

  SharedGpuContextPtr ctx_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
};

TEST_F(GpuLayer, UploadOnceWritesOnlyTheRangeAsked) {
  Result<DeviceBuffer> b = DeviceBuffer::create(*ctx_, 64, MemoryKind::kShared, "upload target");
  ASSERT_TRUE(b.ok()) << b.status().message();
  std::memset(b->mapped(), 0, 64);
  const uint8_t bytes[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  ASSERT_TRUE(upload_once(*ctx_, pool_, b.value(), 16, bytes, sizeof(bytes)).ok());
  const auto* got = static_cast<const uint8_t*>(b->mapped());
  for (size_t i = 0; i < 64; ++i) {
    uint8_t want = i >= 16 && i < 32 ? bytes[i - 16] : 0;
    EXPECT_EQ(got[i], want) << "byte " << i;
  }
}

TEST_F(GpuLayer, StagedUploadRefillsOneBoundedStagingBufferPieceByPiece) {
  // The path of device memory the host cannot write (discrete GPUs), here
  // forced: 100 bytes in pieces of 24, the last one short.
  Result<DeviceBuffer> b = DeviceBuffer::create(*ctx_, 128, MemoryKind::kShared, "upload target");
  ASSERT_TRUE(b.ok()) << b.status().message();
  std::memset(b->mapped(), 0, 128);
  std::vector<uint8_t> bytes(100);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE(upload_staged(*ctx_, pool_, b.value(), 8, bytes.data(), bytes.size(), 24).ok());
  const auto* got = static_cast<const uint8_t*>(b->mapped());
  for (size_t i = 0; i < 128; ++i) {
    uint8_t want = i >= 8 && i < 108 ? bytes[i - 8] : 0;
    EXPECT_EQ(got[i], want) << "byte " << i;
  }
}

TEST_F(GpuLayer, WholeRangeHandsOffTheBufferWithItsMemory) {
  Result<DeviceBuffer> b = DeviceBuffer::create(*ctx_, 10, MemoryKind::kShared, "hand-off");
  ASSERT_TRUE(b.ok()) << b.status().message();
  BufferRange r = b->whole_range();
  EXPECT_EQ(r.buffer, b->buffer());
  EXPECT_EQ(r.offset, 0u);
  EXPECT_EQ(r.size, 12u) << "sizes round up to whole words";
  EXPECT_EQ(r.memory, b->memory());
  EXPECT_EQ(r.memory_offset, 0u);
  EXPECT_GE(r.memory_size, r.size);
}

TEST_F(GpuLayer, TimelineSubmitsSignalGrowingValuesAndRunTheWork) {
  Result<DeviceBuffer> b = DeviceBuffer::create(*ctx_, 16, MemoryKind::kReadback, "fill target");
  ASSERT_TRUE(b.ok()) << b.status().message();
  uint64_t values[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    record_fill(b.value(), 0x11111111u * static_cast<uint32_t>(i + 1));
    SubmitArgs args;
    args.sync_mode = SyncMode::kTimeline;
    args.fence = fence_;
    args.signaled_value = &values[i];
    Status s = submit_recorded(*ctx_, cb_, args);
    ASSERT_TRUE(s.ok()) << s.message();
    wait_and_reset_fence();
    EXPECT_EQ(words(b.value()), std::vector<uint32_t>(4, 0x11111111u * static_cast<uint32_t>(i + 1)));
  }
  EXPECT_GT(values[0], 0u);
  EXPECT_GT(values[1], values[0]);
  EXPECT_EQ(values[1], ctx_->last_timeline_value());
}

TEST_F(GpuLayer, PlainSubmitLeavesTheTimelineAlone) {
  Result<DeviceBuffer> b = DeviceBuffer::create(*ctx_, 16, MemoryKind::kReadback, "fill target");
  ASSERT_TRUE(b.ok()) << b.status().message();
  record_fill(b.value(), 0xABCDEF01u);
  const uint64_t before = ctx_->last_timeline_value();
  uint64_t signaled = 12345;
  SubmitArgs args;
  args.sync_mode = SyncMode::kQueueWaitIdle;
  args.fence = fence_;
  args.signaled_value = &signaled;
  ASSERT_TRUE(submit_recorded(*ctx_, cb_, args).ok());
  wait_and_reset_fence();
  EXPECT_EQ(words(b.value()), std::vector<uint32_t>(4, 0xABCDEF01u));
  EXPECT_EQ(signaled, 12345u);
  EXPECT_EQ(ctx_->last_timeline_value(), before);
}

TEST_F(GpuLayer, TimerReadsCompletedWorkWhereTheQueueHasTimestamps) {
  uint32_t count = 0;
  ctx_->vki().vkGetPhysicalDeviceQueueFamilyProperties(ctx_->physical_device(), &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  ctx_->vki().vkGetPhysicalDeviceQueueFamilyProperties(ctx_->physical_device(), &count, families.data());
  const bool has_timestamps = families.at(ctx_->queue_family_index()).timestampValidBits > 0;

  Result<DeviceBuffer> b = DeviceBuffer::create(*ctx_, 1 << 20, MemoryKind::kReadback, "timed fill");
  ASSERT_TRUE(b.ok()) << b.status().message();
  GpuTimer timer;
  EXPECT_EQ(timer.elapsed_us(), -1) << "nothing recorded yet";
  record_fill(b.value(), 7u, &timer);
  SubmitArgs args;
  args.sync_mode = SyncMode::kQueueWaitIdle;
  args.fence = fence_;
  ASSERT_TRUE(submit_recorded(*ctx_, cb_, args).ok());
  wait_and_reset_fence();
  if (has_timestamps) {
    EXPECT_GE(timer.elapsed_us(), 0.0);
  } else {
    EXPECT_EQ(timer.elapsed_us(), -1);
  }
  timer.reset();
  EXPECT_EQ(timer.elapsed_us(), -1);
}

}  // namespace
}  // namespace gpuu::gpu

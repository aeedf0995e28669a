// SharedGpuContext and the Vulkan bootstrap on a real device (lavapipe here).
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "context/context_test_util.h"
#include "context/vulkan_bootstrap.h"

namespace gpuu {
namespace {

TEST(VulkanBootstrap, CreatesAContextThatOwnsEverything) {
  Result<SharedGpuContextPtr> ctx = create_vulkan_context("boot", 0, DeviceOptions{});
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  const SharedGpuContext& c = *ctx.value();
  EXPECT_TRUE(c.is_valid());
  EXPECT_FALSE(c.device_name().empty());
  EXPECT_TRUE(c.owns_instance());
  EXPECT_TRUE(c.owns_device());
  EXPECT_GE(c.properties().apiVersion, static_cast<uint32_t>(VK_API_VERSION_1_2));
  if (c.has_feature(kFeatureTimelineSemaphore)) {
    EXPECT_NE(c.timeline_semaphore(), VK_NULL_HANDLE);
    EXPECT_TRUE(c.owns_timeline_semaphore());
  }
}

TEST(VulkanBootstrap, ValidationMessagesReachTheLog) {
  ASSERT_TRUE(validation_layer_available()) << "VK_LAYER_KHRONOS_validation is not installed (a test dependency)";
  DeviceOptions options;
  options.validation = true;
  Result<SharedGpuContextPtr> ctx = create_vulkan_context("validated", 0, options);
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  uint64_t before = validation_message_count();
  // Reserved flags must be zero: a harmless misuse the layer reports.
  VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  info.flags = 0x10;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  ctx.value()->vkd().vkCreateSemaphore(ctx.value()->device(), &info, nullptr, &semaphore);
  if (semaphore) ctx.value()->vkd().vkDestroySemaphore(ctx.value()->device(), semaphore, nullptr);
  EXPECT_GT(validation_message_count(), before);
  std::vector<std::string> messages = gpuu_test::take_gpuu_validation_messages();
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.front().find("flags"), std::string::npos) << messages.front();
}

TEST(DeviceChoice, PrefersDiscreteThenIntegratedThenCpu) {
  std::vector<PhysicalDeviceInfo> devices = {{"llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU, 0},
                                             {"iGPU", VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, 0},
                                             {"dGPU", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, 0}};
  unsetenv("GPUU_DEVICE");
  EXPECT_EQ(choose_physical_device(devices, "").value(), 2u);
  devices.pop_back();
  EXPECT_EQ(choose_physical_device(devices, "").value(), 1u);
  devices.pop_back();
  EXPECT_EQ(choose_physical_device(devices, "").value(), 0u);
}

TEST(DeviceChoice, SelectorByIndexOrNameSubstring) {
  std::vector<PhysicalDeviceInfo> devices = {{"NVIDIA H100 PCIe", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, 0},
                                             {"llvmpipe (LLVM 15.0.6, 256 bits)", VK_PHYSICAL_DEVICE_TYPE_CPU, 0}};
  EXPECT_EQ(choose_physical_device(devices, "1").value(), 1u);
  EXPECT_EQ(choose_physical_device(devices, "LLVMPIPE").value(), 1u);
  EXPECT_EQ(choose_physical_device(devices, "h100").value(), 0u);
  Result<size_t> none = choose_physical_device(devices, "radeon");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("llvmpipe"), std::string::npos) << "lists what exists";
  EXPECT_EQ(choose_physical_device(devices, "5").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(choose_physical_device({}, "").status().code(), StatusCode::kUnsupported);
}

TEST(DeviceChoice, GpuuDeviceEnvironmentVariableIsHonoured) {
  std::vector<PhysicalDeviceInfo> devices = {{"dGPU", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, 0},
                                             {"llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU, 0}};
  setenv("GPUU_DEVICE", "llvm", 1);
  EXPECT_EQ(choose_physical_device(devices, "").value(), 1u);
  EXPECT_EQ(choose_physical_device(devices, "dgpu").value(), 0u) << "an explicit option wins over the variable";
  setenv("GPUU_DEVICE", "nothing-like-it", 1);
  Result<size_t> none = choose_physical_device(devices, "");
  EXPECT_NE(none.status().message().find("GPUU_DEVICE"), std::string::npos) << none.status().message();
  unsetenv("GPUU_DEVICE");
}

TEST(SharedGpuContext, CommandPoolsAreDistinctPerDelegate) {
  Result<SharedGpuContextPtr> ctx = make_borrowing_context("pools", 0);
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  const SharedGpuContext& c = *ctx.value();
  VkCommandPool vgf_pool = VK_NULL_HANDLE, vulkan_pool = VK_NULL_HANDLE;
  ASSERT_EQ(c.create_command_pool(&vgf_pool), VK_SUCCESS);
  ASSERT_EQ(c.create_command_pool(&vulkan_pool), VK_SUCCESS);
  EXPECT_NE(vgf_pool, vulkan_pool);
  // Each pool really works: allocate and record a command buffer from both.
  for (VkCommandPool pool : {vgf_pool, vulkan_pool}) {
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    ASSERT_EQ(c.vkd().vkAllocateCommandBuffers(c.device(), &alloc, &cb), VK_SUCCESS);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    ASSERT_EQ(c.vkd().vkBeginCommandBuffer(cb, &begin), VK_SUCCESS);
    ASSERT_EQ(c.vkd().vkEndCommandBuffer(cb), VK_SUCCESS);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    ASSERT_EQ(c.submit(1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
    ASSERT_EQ(c.queue_wait_idle(), VK_SUCCESS);
  }
  c.destroy_command_pool(vgf_pool);
  c.destroy_command_pool(vulkan_pool);
}

TEST(SharedGpuContext, QueueAccessIsSerialized) {
  Result<SharedGpuContextPtr> ctx = make_borrowing_context("queue", 0);
  ASSERT_TRUE(ctx.ok());
  const SharedGpuContext& c = *ctx.value();
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        SharedGpuContext::QueueGuard guard = c.lock_queue();
        if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
        c.vkd().vkQueueSubmit(c.queue(), 0, nullptr, VK_NULL_HANDLE);  // a real queue use while held
        inside.fetch_sub(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(c.queue_wait_idle(), VK_SUCCESS);
}

struct CountingLock {
  std::mutex mutex;
  std::atomic<int> locks{0};
  std::atomic<int> holders{0};
  std::atomic<int> overlaps{0};
  static void lock(void* self) {
    auto* l = static_cast<CountingLock*>(self);
    l->mutex.lock();
    l->locks.fetch_add(1);
    if (l->holders.fetch_add(1) != 0) l->overlaps.fetch_add(1);
  }
  static void unlock(void* self) {
    auto* l = static_cast<CountingLock*>(self);
    l->holders.fetch_sub(1);
    l->mutex.unlock();
  }
};

TEST(SharedGpuContext, EverySubmitGoesThroughTheApplicationsQueueLock) {
  gpuu_test::AppDevice& app = shared_app_device();
  CountingLock lock;
  SharedGpuContextCreateInfo info;
  info.token = "app-lock";
  info.instance = app.instance;
  info.physical_device = app.physical_device;
  info.device = app.device;
  info.queue = app.queue;
  info.queue_family_index = app.queue_family_index;
  info.external_queue_lock = ExternalQueueLock{&CountingLock::lock, &CountingLock::unlock, &lock};
  Result<SharedGpuContextPtr> ctx = SharedGpuContext::create(std::move(info));
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) ctx.value()->submit(0, nullptr, VK_NULL_HANDLE);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ctx.value()->queue_wait_idle(), VK_SUCCESS);
  EXPECT_EQ(lock.locks.load(), 101);
  EXPECT_EQ(lock.overlaps.load(), 0);
}

TEST(SharedGpuContext, InjectedDeviceIsNeverDestroyed) {
  gpuu_test::AppDevice app;
  std::string error;
  ASSERT_TRUE(app.create(&error)) << error;
  std::atomic<int> destroyed{0};
  {
    SharedGpuContextCreateInfo info;
    info.token = "injected";
    info.instance = app.instance;
    info.physical_device = app.physical_device;
    info.device = app.device;
    info.queue = app.queue;
    info.queue_family_index = app.queue_family_index;
    info.enabled_features = app.timeline_enabled ? static_cast<uint32_t>(kFeatureTimelineSemaphore) : 0u;
    info.on_destroy = [&] { destroyed.fetch_add(1); };
    Result<SharedGpuContextPtr> ctx = SharedGpuContext::create(std::move(info));
    ASSERT_TRUE(ctx.ok()) << ctx.status().message();
    EXPECT_FALSE(ctx.value()->owns_device());
    EXPECT_FALSE(ctx.value()->owns_instance());
    if (app.timeline_enabled) {
      EXPECT_TRUE(ctx.value()->owns_timeline_semaphore()) << "gpuu made its own semaphore";
    }
  }
  EXPECT_EQ(destroyed.load(), 1);
  std::string why;
  EXPECT_TRUE(app.still_usable(&why)) << why;
  app.destroy();  // the validation layer reports any child object gpuu leaked here
}

TEST(SharedGpuContext, RejectsMissingHandlesAndBadQueueFamily) {
  gpuu_test::AppDevice& app = shared_app_device();
  SharedGpuContextCreateInfo info;
  info.token = "bad";
  info.instance = app.instance;
  info.physical_device = app.physical_device;
  info.device = app.device;
  Result<SharedGpuContextPtr> no_queue = SharedGpuContext::create(info);
  ASSERT_FALSE(no_queue.ok());
  EXPECT_NE(no_queue.status().message().find("queue (null)"), std::string::npos) << no_queue.status().message();
  info.queue = app.queue;
  info.queue_family_index = 99;
  Result<SharedGpuContextPtr> bad_family = SharedGpuContext::create(info);
  ASSERT_FALSE(bad_family.ok());
  EXPECT_NE(bad_family.status().message().find("queue family 99"), std::string::npos);
  info.queue_family_index = app.queue_family_index;
  info.token = "";
  EXPECT_FALSE(SharedGpuContext::create(info).ok());
  info.token = "half-lock";
  info.external_queue_lock.lock = &CountingLock::lock;
  EXPECT_EQ(SharedGpuContext::create(info).status().code(), StatusCode::kInvalidArgument);
}

TEST(SharedGpuContext, TimelineSubmitsFormOneGrowingChain) {
  Result<SharedGpuContextPtr> ctx = create_vulkan_context("timeline", 0, DeviceOptions{});
  ASSERT_TRUE(ctx.ok());
  const SharedGpuContext& c = *ctx.value();
  // timelineSemaphore is a required Vulkan 1.2 feature, which gpuu enables.
  ASSERT_TRUE(c.timeline_semaphore()) << "no timeline semaphore on " << c.device_name();
  // Submits from several threads (as several sessions would): each waits on
  // the previous value, so the semaphore ends at the number of submits.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) ASSERT_TRUE(c.submit_timeline(VK_NULL_HANDLE, VK_NULL_HANDLE).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.last_timeline_value(), 40u);
  VkSemaphore sem = c.timeline_semaphore();
  uint64_t target = 40;
  VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wait.semaphoreCount = 1;
  wait.pSemaphores = &sem;
  wait.pValues = &target;
  ASSERT_EQ(c.vkd().vkWaitSemaphores(c.device(), &wait, UINT64_MAX), VK_SUCCESS);
  uint64_t value = 0;
  ASSERT_EQ(c.vkd().vkGetSemaphoreCounterValue(c.device(), sem, &value), VK_SUCCESS);
  EXPECT_EQ(value, 40u);
}

TEST(SharedGpuContext, TimelineSubmitWithoutSemaphoreIsRefused) {
  Result<SharedGpuContextPtr> ctx = make_borrowing_context("no-timeline", 0);  // feature not declared
  ASSERT_TRUE(ctx.ok());
  Result<uint64_t> v = ctx.value()->submit_timeline(VK_NULL_HANDLE, VK_NULL_HANDLE);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace gpuu

// Helpers for context tests: cheap, real SharedGpuContext objects that wrap
// one application device without owning it, with a destruction counter.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "context/shared_gpu_context.h"
#include "support/test_vulkan_device.h"

namespace gpuu {

// One application device for the whole test binary (made on first use).
inline gpuu_test::AppDevice& shared_app_device() {
  static gpuu_test::AppDevice* device = [] {
    auto* d = new gpuu_test::AppDevice;
    std::string error;
    if (!d->create(&error)) ADD_FAILURE() << "cannot create a Vulkan device: " << error;
    return d;
  }();
  return *device;
}

// A context over the shared application device that owns nothing; `destroyed`
// (if given) counts its destructions.
inline Result<SharedGpuContextPtr> make_borrowing_context(const std::string& token, int64_t group,
                                                          std::atomic<int>* destroyed = nullptr,
                                                          std::function<void()> on_destroy = nullptr) {
  gpuu_test::AppDevice& app = shared_app_device();
  SharedGpuContextCreateInfo info;
  info.token = token;
  info.group_id = group;
  info.instance = app.instance;
  info.physical_device = app.physical_device;
  info.device = app.device;
  info.queue = app.queue;
  info.queue_family_index = app.queue_family_index;
  info.on_destroy = [destroyed, on_destroy] {
    if (destroyed) destroyed->fetch_add(1);
    if (on_destroy) on_destroy();
  };
  return SharedGpuContext::create(std::move(info));
}

}  // namespace gpuu

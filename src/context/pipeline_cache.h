// PipelineCache: a device's one VkPipelineCache, which every pipeline gpuu
// makes on a context goes through, and the files that keep it across
// processes (gpuu_session_options.pipeline_cache_path). A file carries a
// header naming the device and driver its Vulkan data came from, so that a
// file from another device, driver or a damaged one is ignored (with a
// warning) instead of reaching the driver.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "context/vulkan_api.h"

namespace gpuu {

// The file: this header, then `data_bytes` bytes of vkGetPipelineCacheData.
// All integers little-endian.
struct PipelineCacheFileHeader {
  static constexpr char kMagic[8] = {'G', 'P', 'U', 'U', 'P', 'C', 'F', '\0'};
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr size_t kBytes = 8 + 4 * 4 + VK_UUID_SIZE + 8 + 8;  // magic, version, ids, uuid, size, hash
};

// The file's bytes for `data` made on `device`.
std::vector<uint8_t> encode_pipeline_cache_file(const VkPhysicalDeviceProperties& device,
                                                const std::vector<uint8_t>& data);
// The Vulkan data of `file` if it was made for `device` by this format; else
// kInvalidFormat saying why (not such a file, another format version,
// another device or driver, truncated, damaged).
Result<std::vector<uint8_t>> decode_pipeline_cache_file(const VkPhysicalDeviceProperties& device,
                                                        const std::vector<uint8_t>& file);

class PipelineCache {
 public:
  // Makes the (empty) VkPipelineCache; where the driver refuses, use() gives none.
  PipelineCache(const vk::DeviceFunctions& vkd, VkDevice device, const VkPhysicalDeviceProperties& properties);
  ~PipelineCache();
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  // The cache for vkCreate*Pipelines, usable while the lock is held: a file
  // merged in writes into it, which Vulkan lets no pipeline creation overlap.
  // VK_NULL_HANDLE where the driver made none (pipelines are made without).
  struct Use {
    VkPipelineCache cache = VK_NULL_HANDLE;
    std::shared_lock<std::shared_mutex> lock;
  };
  Use use();

  // Merges the file at `path` into the cache, once per path. Never fails: a
  // file that cannot be read or does not fit this device is ignored with one
  // warning naming it and why (a missing one is a first run: info only), and
  // is replaced at the next save().
  void load(const std::string& path);
  // Writes the cache's data to `path` (a temporary file renamed over it)
  // unless the file holds that data already. Never fails: a warning says why
  // it could not.
  void save(const std::string& path);

 private:
  const vk::DeviceFunctions& vkd_;
  VkDevice device_;
  VkPhysicalDeviceProperties properties_;
  std::shared_mutex mutex_;  // exclusive while a file is merged into cache_
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::mutex files_mutex_;  // serialises load() and save(), guards the two below
  std::set<std::string> loaded_;
  std::map<std::string, size_t> unwritten_;  // path -> bytes of data it could not take
};

}  // namespace gpuu

// The device's pipeline cache and its files: header, checks, atomic writes.
#include "context/pipeline_cache.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/log.h"

namespace gpuu {
namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// FNV-1a: catches a damaged file before its data reaches the driver, which
// checks only the Vulkan header.
uint64_t fnv1a(const uint8_t* data, size_t size) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

std::string uuid_hex(const uint8_t* uuid) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < VK_UUID_SIZE; ++i) {
    out += digits[uuid[i] >> 4];
    out += digits[uuid[i] & 15];
  }
  return out;
}

Result<std::vector<uint8_t>> read_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return err(errno == ENOENT ? StatusCode::kNotFound : StatusCode::kIo, std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof(chunk), f)) > 0) bytes.insert(bytes.end(), chunk, chunk + got);
  const bool failed = std::ferror(f) != 0;
  const int error = errno;
  std::fclose(f);
  if (failed) return err(StatusCode::kIo, std::strerror(error));
  return bytes;
}

// A reader sees the old file or the new one, never half of one: the bytes go
// to a temporary file beside it, renamed over it.
Status write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  static std::atomic<unsigned> counter{0};
  const std::string temp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) return err(StatusCode::kIo, "cannot create '", temp, "': ", std::strerror(errno));
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    const int error = errno;
    std::remove(temp.c_str());
    return err(StatusCode::kIo, "cannot write '", temp, "': ", std::strerror(error));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temp.c_str());
    return err(StatusCode::kIo, "cannot rename '", temp, "' over it: ", std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace

std::vector<uint8_t> encode_pipeline_cache_file(const VkPhysicalDeviceProperties& device,
                                                const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out(PipelineCacheFileHeader::kMagic, PipelineCacheFileHeader::kMagic + 8);
  out.reserve(PipelineCacheFileHeader::kBytes + data.size());
  put_u32(out, PipelineCacheFileHeader::kFormatVersion);
  put_u32(out, device.vendorID);
  put_u32(out, device.deviceID);
  put_u32(out, device.driverVersion);
  out.insert(out.end(), device.pipelineCacheUUID, device.pipelineCacheUUID + VK_UUID_SIZE);
  put_u64(out, data.size());
  put_u64(out, fnv1a(data.data(), data.size()));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Result<std::vector<uint8_t>> decode_pipeline_cache_file(const VkPhysicalDeviceProperties& device,
                                                        const std::vector<uint8_t>& file) {
  const uint8_t* p = file.data();
  if (file.size() < 12 || std::memcmp(p, PipelineCacheFileHeader::kMagic, 8) != 0) {
    return err(StatusCode::kInvalidFormat, "not a gpuu pipeline cache file (no GPUUPCF header)");
  }
  const uint64_t version = get_le(p + 8, 4);
  if (version != PipelineCacheFileHeader::kFormatVersion) {
    return err(StatusCode::kInvalidFormat, "format version ", version, ", this library reads ",
               PipelineCacheFileHeader::kFormatVersion);
  }
  if (file.size() < PipelineCacheFileHeader::kBytes) {
    return err(StatusCode::kInvalidFormat, "truncated: ", file.size(), " bytes, shorter than its header");
  }
  const uint64_t vendor = get_le(p + 12, 4), id = get_le(p + 16, 4), driver = get_le(p + 20, 4);
  const uint8_t* uuid = p + 24;
  if (vendor != device.vendorID || id != device.deviceID || driver != device.driverVersion ||
      std::memcmp(uuid, device.pipelineCacheUUID, VK_UUID_SIZE) != 0) {
    return err(StatusCode::kInvalidFormat, "made for another device or driver (vendor ", vendor, ", device ", id,
               ", driver ", driver, ", cache UUID ", uuid_hex(uuid), "; this one is ", device.vendorID, ", ",
               device.deviceID, ", ", device.driverVersion, ", ", uuid_hex(device.pipelineCacheUUID), ")");
  }
  const uint64_t size = get_le(p + 24 + VK_UUID_SIZE, 8), hash = get_le(p + 32 + VK_UUID_SIZE, 8);
  if (file.size() - PipelineCacheFileHeader::kBytes != size) {
    return err(StatusCode::kInvalidFormat, "truncated or padded: the header says ", size, " bytes of data, ",
               file.size() - PipelineCacheFileHeader::kBytes, " follow it");
  }
  const uint8_t* data = p + PipelineCacheFileHeader::kBytes;
  if (fnv1a(data, size) != hash) return err(StatusCode::kInvalidFormat, "damaged: its data fails its checksum");
  return std::vector<uint8_t>(data, data + size);
}

PipelineCache::PipelineCache(const vk::DeviceFunctions& vkd, VkDevice device,
                             const VkPhysicalDeviceProperties& properties)
    : vkd_(vkd), device_(device), properties_(properties) {
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VkResult r = vkd_.vkCreatePipelineCache(device_, &info, nullptr, &cache_);
  if (r != VK_SUCCESS) {
    cache_ = VK_NULL_HANDLE;
    log(LogLevel::kWarn, "context", "vkCreatePipelineCache failed (", vk::vk_result_name(r),
        "): pipelines are made without a cache");
  }
}

PipelineCache::~PipelineCache() {
  if (cache_) vkd_.vkDestroyPipelineCache(device_, cache_, nullptr);
}

PipelineCache::Use PipelineCache::use() { return Use{cache_, std::shared_lock<std::shared_mutex>(mutex_)}; }

void PipelineCache::load(const std::string& path) {
  std::lock_guard<std::mutex> files(files_mutex_);
  if (!cache_ || !loaded_.insert(path).second) return;
  Result<std::vector<uint8_t>> bytes = read_file(path);
  if (!bytes.ok()) {
    if (bytes.status().code() == StatusCode::kNotFound) {
      log(LogLevel::kInfo, "context", "pipeline cache '", path, "' does not exist yet: it will be written");
    } else {
      log(LogLevel::kWarn, "context", "pipeline cache '", path, "' ignored: cannot read it (",
          bytes.status().message(), ")");
    }
    return;
  }
  Result<std::vector<uint8_t>> data = decode_pipeline_cache_file(properties_, bytes.value());
  if (!data.ok()) {
    log(LogLevel::kWarn, "context", "pipeline cache '", path, "' ignored: ", data.status().message(),
        "; it will be replaced");
    return;
  }
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = data->size();
  info.pInitialData = data->data();
  VkPipelineCache from_file = VK_NULL_HANDLE;
  VkResult r = vkd_.vkCreatePipelineCache(device_, &info, nullptr, &from_file);
  if (r == VK_SUCCESS) {
    std::unique_lock<std::shared_mutex> exclusive(mutex_);
    r = vkd_.vkMergePipelineCaches(device_, cache_, 1, &from_file);
  }
  if (from_file) vkd_.vkDestroyPipelineCache(device_, from_file, nullptr);
  if (r != VK_SUCCESS) {
    log(LogLevel::kWarn, "context", "pipeline cache '", path, "' ignored: the driver refused its data (",
        vk::vk_result_name(r), "); it will be replaced");
    return;
  }
  log(LogLevel::kDebug, "context", "pipeline cache '", path, "': ", data->size(), " bytes of driver data read");
}

void PipelineCache::save(const std::string& path) {
  std::lock_guard<std::mutex> files(files_mutex_);
  if (!cache_) return;
  std::vector<uint8_t> data;
  VkResult r = VK_SUCCESS;
  {
    std::shared_lock<std::shared_mutex> shared(mutex_);
    size_t size = 0;
    r = vkd_.vkGetPipelineCacheData(device_, cache_, &size, nullptr);
    data.resize(size);
    // VK_INCOMPLETE where pipelines were added between the two calls: what fits is still valid data.
    if (r == VK_SUCCESS) r = vkd_.vkGetPipelineCacheData(device_, cache_, &size, data.data());
    data.resize(size);
  }
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    log(LogLevel::kWarn, "context", "pipeline cache '", path, "' not written: vkGetPipelineCacheData failed (",
        vk::vk_result_name(r), ")");
    return;
  }
  // The file itself says whether it is current (another process or session may have written it).
  Result<std::vector<uint8_t>> file = read_file(path);
  if (file.ok()) {
    Result<std::vector<uint8_t>> held = decode_pipeline_cache_file(properties_, file.value());
    if (held.ok() && held.value() == data) return;
  }
  Status written = write_file_atomically(path, encode_pipeline_cache_file(properties_, data));
  if (!written.ok()) {
    // Once per path and content: a session warns at create, not again at destroy.
    auto warned = unwritten_.find(path);
    if (warned == unwritten_.end() || warned->second != data.size()) {
      log(LogLevel::kWarn, "context", "pipeline cache '", path, "' not written: ", written.message());
    }
    unwritten_[path] = data.size();
    return;
  }
  unwritten_.erase(path);
  log(LogLevel::kDebug, "context", "pipeline cache '", path, "': ", data.size(), " bytes of driver data written");
}

}  // namespace gpuu

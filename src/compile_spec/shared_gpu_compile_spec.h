// The six shared compile-spec keys that both GPU backends read (RFC phase 1/2):
// parsing with the RFC's defaults, strict checking, and load-time overrides.
// Values are bytes: UTF-8 text for names, ASCII decimal for integers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace gpuu {

inline constexpr const char* kSpecContextToken = "gpu_shared_context_token";
inline constexpr const char* kSpecContextMode = "gpu_shared_context_mode";
inline constexpr const char* kSpecSyncMode = "gpu_shared_sync_mode";
inline constexpr const char* kSpecGroupId = "gpu_shared_group_id";
inline constexpr const char* kSpecMinPartitionSize = "gpu_shared_min_partition_size";
inline constexpr const char* kSpecPrefer = "gpu_shared_prefer";
inline constexpr const char* kSharedSpecPrefix = "gpu_shared_";
inline constexpr size_t kMaxTokenLength = 255;

enum class ContextMode : int32_t { kDisabled = 0, kLookupOnly = 1, kLookupOrCreate = 2, kCreateOnly = 3 };
enum class SyncMode : int32_t { kTimeline = 0, kQueueWaitIdle = 1, kNone = 2 };
enum class Prefer : int32_t { kAuto = 0, kVgfFirst = 1, kVulkanFirst = 2 };

// The shared keys' defaults, named once: SharedGpuCompileSpec, the
// partitioner's options and the C API's *_init functions start from these
// (and the Python package reads them back through those functions).
inline constexpr const char* kDefaultToken = "default";
inline constexpr int64_t kDefaultGroupId = 0;
inline constexpr ContextMode kDefaultContextMode = ContextMode::kLookupOrCreate;
inline constexpr SyncMode kDefaultSyncMode = SyncMode::kTimeline;
inline constexpr int64_t kDefaultMinPartitionSize = 3;
inline constexpr Prefer kDefaultPrefer = Prefer::kAuto;

// Each value as compile specs spell it ("lookup_or_create", ...); nullptr for
// a value outside the enum. The C API's gpuu_*_name functions return these.
const char* to_string(ContextMode mode);
const char* to_string(SyncMode mode);
const char* to_string(Prefer prefer);
bool parse_context_mode(const std::string& text, ContextMode* out);
bool parse_sync_mode(const std::string& text, SyncMode* out);
bool parse_prefer(const std::string& text, Prefer* out);

struct CompileSpecEntry {
  std::string key;
  std::vector<uint8_t> value;

  static CompileSpecEntry text(std::string key, const std::string& value) {
    return CompileSpecEntry{std::move(key), std::vector<uint8_t>(value.begin(), value.end())};
  }
};

struct SharedGpuCompileSpec {
  std::string token = kDefaultToken;
  int64_t group_id = kDefaultGroupId;
  ContextMode context_mode = kDefaultContextMode;
  SyncMode sync_mode = kDefaultSyncMode;
  int64_t min_partition_size = kDefaultMinPartitionSize;
  Prefer prefer = kDefaultPrefer;
  // False when the program carried none of the shared keys: backends then keep
  // to a private, unshared context (RFC: behaviour unchanged without the keys).
  bool present = false;

  bool enabled() const { return present && context_mode != ContextMode::kDisabled; }
};

// What the application may override at load time; set fields win over the file.
struct ContextOverrides {
  std::optional<std::string> token;
  std::optional<int64_t> group_id;
  std::optional<ContextMode> context_mode;
  std::optional<SyncMode> sync_mode;
};

// Reads the shared keys from `specs` (other backends' keys are left alone; an
// unknown key with the "gpu_shared_" prefix, a duplicate key, a bad value or an
// empty token is an error naming the key and the value), then applies `overrides`.
Result<SharedGpuCompileSpec> parse_shared_gpu_compile_spec(const std::vector<CompileSpecEntry>& specs,
                                                           const ContextOverrides* overrides = nullptr);

// `spec` with the set fields of `overrides` in place of the file's (checked
// first, as validate_overrides does).
Result<SharedGpuCompileSpec> apply_overrides(SharedGpuCompileSpec spec, const ContextOverrides& overrides);
// Checks override values alone (an empty token, say), before they meet a file.
Status validate_overrides(const ContextOverrides& overrides);

// The six entries for `spec`, in the RFC's key order.
std::vector<CompileSpecEntry> make_shared_gpu_compile_specs(const SharedGpuCompileSpec& spec);

}  // namespace gpuu

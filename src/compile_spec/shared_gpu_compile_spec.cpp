// Parsing of the shared compile-spec keys. Every refusal names key and value,
// so a user can tell which export option produced it.
#include "compile_spec/shared_gpu_compile_spec.h"

#include <cerrno>
#include <cstdlib>
#include <set>

#include "base/hex_escape.h"

namespace gpuu {
namespace {

template <typename Enum, size_t N>
bool parse_enum(const std::string& text, const char* const (&names)[N], Enum* out) {
  for (size_t i = 0; i < N; ++i) {
    if (text == names[i]) {
      *out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}

const char* const kContextModeNames[] = {"disabled", "lookup_only", "lookup_or_create", "create_only"};
const char* const kSyncModeNames[] = {"timeline", "queue_wait_idle", "none"};
const char* const kPreferNames[] = {"auto", "vgf_first", "vulkan_first"};

template <typename Enum, size_t N>
const char* name_of(const char* const (&names)[N], Enum value) {
  const auto i = static_cast<int64_t>(value);
  return i >= 0 && i < static_cast<int64_t>(N) ? names[i] : nullptr;
}

// Printable form of a value for error messages: text as is, other bytes escaped.
std::string quote(const std::vector<uint8_t>& bytes) {
  std::string out = "'";
  for (uint8_t b : bytes) {
    if (b >= 0x20 && b < 0x7f && b != '\'') {
      out.push_back(static_cast<char>(b));
    } else {
      append_hex_escape(out, b);
    }
  }
  return out + "'";
}

Result<int64_t> parse_int(const CompileSpecEntry& entry, int64_t min_value) {
  std::string text(entry.value.begin(), entry.value.end());
  bool digits_only = !text.empty();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!((c >= '0' && c <= '9') || (i == 0 && c == '-' && text.size() > 1))) digits_only = false;
  }
  if (!digits_only) {
    return err(StatusCode::kInvalidArgument, "compile spec '", entry.key, "': expected a decimal integer, got ",
               quote(entry.value));
  }
  errno = 0;
  long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) {
    return err(StatusCode::kInvalidArgument, "compile spec '", entry.key, "': integer ", quote(entry.value),
               " is out of range");
  }
  if (v < min_value) {
    return err(StatusCode::kInvalidArgument, "compile spec '", entry.key, "': value ", quote(entry.value),
               " must be >= ", min_value);
  }
  return static_cast<int64_t>(v);
}

Status check_token(const std::string& key, const std::vector<uint8_t>& bytes) {
  if (bytes.empty()) return err(StatusCode::kInvalidArgument, "compile spec '", key, "': the token is empty");
  if (bytes.size() > kMaxTokenLength) {
    return err(StatusCode::kInvalidArgument, "compile spec '", key, "': token of ", bytes.size(),
               " bytes is longer than ", kMaxTokenLength);
  }
  for (uint8_t b : bytes) {
    if (b < 0x20 || b == 0x7f) {
      return err(StatusCode::kInvalidArgument, "compile spec '", key, "': token ", quote(bytes),
                 " contains a control character");
    }
  }
  return Status::Ok();
}

template <typename Enum, size_t N>
Status parse_enum_entry(const CompileSpecEntry& entry, const char* const (&names)[N], Enum* out) {
  std::string text(entry.value.begin(), entry.value.end());
  if (parse_enum(text, names, out)) return Status::Ok();
  std::string allowed;
  for (size_t i = 0; i < N; ++i) allowed += std::string(i ? ", " : "") + names[i];
  return err(StatusCode::kInvalidArgument, "compile spec '", entry.key, "': unknown value ", quote(entry.value),
             " (expected one of: ", allowed, ")");
}

}  // namespace

const char* to_string(ContextMode mode) { return name_of(kContextModeNames, mode); }
const char* to_string(SyncMode mode) { return name_of(kSyncModeNames, mode); }
const char* to_string(Prefer prefer) { return name_of(kPreferNames, prefer); }
bool parse_context_mode(const std::string& text, ContextMode* out) { return parse_enum(text, kContextModeNames, out); }
bool parse_sync_mode(const std::string& text, SyncMode* out) { return parse_enum(text, kSyncModeNames, out); }
bool parse_prefer(const std::string& text, Prefer* out) { return parse_enum(text, kPreferNames, out); }

Status validate_overrides(const ContextOverrides& overrides) {
  if (overrides.token) {
    GPUU_RETURN_IF_ERROR(check_token(std::string("override of ") + kSpecContextToken,
                                     std::vector<uint8_t>(overrides.token->begin(), overrides.token->end())));
  }
  if (overrides.group_id && *overrides.group_id < 0) {
    return err(StatusCode::kInvalidArgument, "override of '", kSpecGroupId, "': value ", *overrides.group_id,
               " must be >= 0");
  }
  return Status::Ok();
}

Result<SharedGpuCompileSpec> parse_shared_gpu_compile_spec(const std::vector<CompileSpecEntry>& specs,
                                                           const ContextOverrides* overrides) {
  SharedGpuCompileSpec spec;
  std::set<std::string> seen;
  for (const CompileSpecEntry& entry : specs) {
    if (entry.key.rfind(kSharedSpecPrefix, 0) != 0) continue;  // another backend's key
    if (!seen.insert(entry.key).second) {
      return err(StatusCode::kInvalidArgument, "compile spec '", entry.key, "' appears more than once");
    }
    spec.present = true;
    if (entry.key == kSpecContextToken) {
      GPUU_RETURN_IF_ERROR(check_token(entry.key, entry.value));
      spec.token.assign(entry.value.begin(), entry.value.end());
    } else if (entry.key == kSpecContextMode) {
      GPUU_RETURN_IF_ERROR(parse_enum_entry(entry, kContextModeNames, &spec.context_mode));
    } else if (entry.key == kSpecSyncMode) {
      GPUU_RETURN_IF_ERROR(parse_enum_entry(entry, kSyncModeNames, &spec.sync_mode));
    } else if (entry.key == kSpecGroupId) {
      GPUU_ASSIGN_OR_RETURN(spec.group_id, parse_int(entry, 0));
    } else if (entry.key == kSpecMinPartitionSize) {
      GPUU_ASSIGN_OR_RETURN(spec.min_partition_size, parse_int(entry, 1));
    } else if (entry.key == kSpecPrefer) {
      GPUU_RETURN_IF_ERROR(parse_enum_entry(entry, kPreferNames, &spec.prefer));
    } else {
      return err(StatusCode::kInvalidArgument, "unknown shared compile spec key '", entry.key, "' (value ",
                 quote(entry.value), ")");
    }
  }
  if (overrides) return apply_overrides(spec, *overrides);
  return spec;
}

Result<SharedGpuCompileSpec> apply_overrides(SharedGpuCompileSpec spec, const ContextOverrides& overrides) {
  GPUU_RETURN_IF_ERROR(validate_overrides(overrides));
  if (overrides.token) spec.token = *overrides.token;
  if (overrides.group_id) spec.group_id = *overrides.group_id;
  if (overrides.context_mode) spec.context_mode = *overrides.context_mode;
  if (overrides.sync_mode) spec.sync_mode = *overrides.sync_mode;
  if (overrides.token || overrides.group_id || overrides.context_mode) spec.present = true;
  return spec;
}

std::vector<CompileSpecEntry> make_shared_gpu_compile_specs(const SharedGpuCompileSpec& spec) {
  return {
      CompileSpecEntry::text(kSpecContextToken, spec.token),
      CompileSpecEntry::text(kSpecContextMode, to_string(spec.context_mode)),
      CompileSpecEntry::text(kSpecSyncMode, to_string(spec.sync_mode)),
      CompileSpecEntry::text(kSpecGroupId, std::to_string(spec.group_id)),
      CompileSpecEntry::text(kSpecMinPartitionSize, std::to_string(spec.min_partition_size)),
      CompileSpecEntry::text(kSpecPrefer, to_string(spec.prefer)),
  };
}

}  // namespace gpuu

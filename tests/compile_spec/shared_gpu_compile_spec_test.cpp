// Parsing of the six shared compile-spec keys (RFC phase 2 test list).
#include <gtest/gtest.h>

#include "compile_spec/shared_gpu_compile_spec.h"

namespace gpuu {
namespace {

using Specs = std::vector<CompileSpecEntry>;

CompileSpecEntry text(const char* key, const std::string& value) { return CompileSpecEntry::text(key, value); }

TEST(SharedGpuCompileSpec, DefaultsMatchTheRfcWhenNoKeyIsGiven) {
  Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec({});
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->token, "default");
  EXPECT_EQ(spec->group_id, 0);
  EXPECT_EQ(spec->context_mode, ContextMode::kLookupOrCreate);
  EXPECT_EQ(spec->sync_mode, SyncMode::kTimeline);
  EXPECT_EQ(spec->min_partition_size, 3);
  EXPECT_EQ(spec->prefer, Prefer::kAuto);
  EXPECT_FALSE(spec->present);
  EXPECT_FALSE(spec->enabled()) << "without shared keys a backend keeps a private context";
}

TEST(SharedGpuCompileSpec, ParsesEveryKey) {
  Specs specs = {text(kSpecContextToken, "scene0"),       text(kSpecContextMode, "create_only"),
                 text(kSpecSyncMode, "queue_wait_idle"),  text(kSpecGroupId, "2"),
                 text(kSpecMinPartitionSize, "5"),        text(kSpecPrefer, "vulkan_first")};
  Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec(specs);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->token, "scene0");
  EXPECT_EQ(spec->context_mode, ContextMode::kCreateOnly);
  EXPECT_EQ(spec->sync_mode, SyncMode::kQueueWaitIdle);
  EXPECT_EQ(spec->group_id, 2);
  EXPECT_EQ(spec->min_partition_size, 5);
  EXPECT_EQ(spec->prefer, Prefer::kVulkanFirst);
  EXPECT_TRUE(spec->present);
  EXPECT_TRUE(spec->enabled());
}

TEST(SharedGpuCompileSpec, AcceptsEveryModeName) {
  for (const char* mode : {"disabled", "lookup_only", "lookup_or_create", "create_only"}) {
    Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec({text(kSpecContextMode, mode)});
    ASSERT_TRUE(spec.ok()) << mode;
    EXPECT_STREQ(to_string(spec->context_mode), mode);
  }
  for (const char* mode : {"timeline", "queue_wait_idle", "none"}) {
    Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec({text(kSpecSyncMode, mode)});
    ASSERT_TRUE(spec.ok()) << mode;
    EXPECT_STREQ(to_string(spec->sync_mode), mode);
  }
  for (const char* prefer : {"auto", "vgf_first", "vulkan_first"}) {
    Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec({text(kSpecPrefer, prefer)});
    ASSERT_TRUE(spec.ok()) << prefer;
    EXPECT_STREQ(to_string(spec->prefer), prefer);
  }
}

TEST(SharedGpuCompileSpec, DisabledModeIsNotEnabled) {
  Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec({text(kSpecContextMode, "disabled")});
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(spec->present);
  EXPECT_FALSE(spec->enabled());
}

void expect_rejected(const Specs& specs, const std::string& must_mention_1, const std::string& must_mention_2) {
  Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec(specs);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find(must_mention_1), std::string::npos) << spec.status().message();
  EXPECT_NE(spec.status().message().find(must_mention_2), std::string::npos) << spec.status().message();
}

TEST(SharedGpuCompileSpec, RejectsUnknownContextMode) {
  expect_rejected({text(kSpecContextMode, "lookup_maybe")}, kSpecContextMode, "lookup_maybe");
}

TEST(SharedGpuCompileSpec, RejectsUnknownSyncMode) {
  expect_rejected({text(kSpecSyncMode, "fence")}, kSpecSyncMode, "fence");
}

TEST(SharedGpuCompileSpec, RejectsUnknownPreference) {
  expect_rejected({text(kSpecPrefer, "cpu_first")}, kSpecPrefer, "cpu_first");
}

TEST(SharedGpuCompileSpec, RejectsNonIntegerGroupId) {
  expect_rejected({text(kSpecGroupId, "seven")}, kSpecGroupId, "seven");
  expect_rejected({text(kSpecGroupId, "7x")}, kSpecGroupId, "7x");
  expect_rejected({text(kSpecGroupId, "")}, kSpecGroupId, "''");
}

TEST(SharedGpuCompileSpec, RejectsOutOfRangeIntegers) {
  expect_rejected({text(kSpecGroupId, "-1")}, kSpecGroupId, "-1");
  expect_rejected({text(kSpecGroupId, "99999999999999999999")}, kSpecGroupId, "out of range");
  expect_rejected({text(kSpecMinPartitionSize, "0")}, kSpecMinPartitionSize, ">= 1");
}

TEST(SharedGpuCompileSpec, RejectsBinaryIntegerEncoding) {
  // A 4-byte little-endian int is the wrong type for these keys: the message shows the bytes.
  CompileSpecEntry entry{kSpecGroupId, {7, 0, 0, 0}};
  expect_rejected({entry}, kSpecGroupId, "\\x07");
}

TEST(SharedGpuCompileSpec, RejectsEmptyToken) { expect_rejected({text(kSpecContextToken, "")}, kSpecContextToken, "empty"); }

TEST(SharedGpuCompileSpec, RejectsControlCharactersInToken) {
  expect_rejected({CompileSpecEntry{kSpecContextToken, {'a', 0, 'b'}}}, kSpecContextToken, "control");
}

TEST(SharedGpuCompileSpec, RejectsUnknownSharedKey) {
  expect_rejected({text("gpu_shared_colour", "blue")}, "gpu_shared_colour", "blue");
}

TEST(SharedGpuCompileSpec, RejectsRepeatedKey) {
  expect_rejected({text(kSpecGroupId, "1"), text(kSpecGroupId, "2")}, kSpecGroupId, "more than once");
}

TEST(SharedGpuCompileSpec, IgnoresOtherBackendsKeys) {
  Result<SharedGpuCompileSpec> spec =
      parse_shared_gpu_compile_spec({text("vulkan_texture_limit", "4096"), text(kSpecGroupId, "3")});
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->group_id, 3);
}

TEST(SharedGpuCompileSpec, LoadTimeOverridesWinOverTheFile) {
  Specs specs = {text(kSpecContextToken, "from_file"), text(kSpecGroupId, "1"), text(kSpecContextMode, "create_only"),
                 text(kSpecSyncMode, "none")};
  ContextOverrides overrides;
  overrides.token = "from_app";
  overrides.group_id = 9;
  overrides.context_mode = ContextMode::kLookupOnly;
  overrides.sync_mode = SyncMode::kQueueWaitIdle;
  Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec(specs, &overrides);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->token, "from_app");
  EXPECT_EQ(spec->group_id, 9);
  EXPECT_EQ(spec->context_mode, ContextMode::kLookupOnly);
  EXPECT_EQ(spec->sync_mode, SyncMode::kQueueWaitIdle);
}

TEST(SharedGpuCompileSpec, PartialOverrideKeepsTheRest) {
  Specs specs = {text(kSpecContextToken, "from_file"), text(kSpecGroupId, "4")};
  ContextOverrides overrides;
  overrides.group_id = 5;
  Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec(specs, &overrides);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->token, "from_file");
  EXPECT_EQ(spec->group_id, 5);
}

TEST(SharedGpuCompileSpec, OverrideWithEmptyTokenIsRejected) {
  ContextOverrides overrides;
  overrides.token = "";
  Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec({}, &overrides);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("empty"), std::string::npos);
}

TEST(SharedGpuCompileSpec, MakeThenParseRoundTrips) {
  SharedGpuCompileSpec in;
  in.token = "vgf_vk_unified_e2e";
  in.group_id = 7;
  in.context_mode = ContextMode::kLookupOnly;
  in.sync_mode = SyncMode::kNone;
  in.min_partition_size = 1;
  in.prefer = Prefer::kVgfFirst;
  Specs specs = make_shared_gpu_compile_specs(in);
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs[0].key, kSpecContextToken);
  Result<SharedGpuCompileSpec> out = parse_shared_gpu_compile_spec(specs);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->token, in.token);
  EXPECT_EQ(out->group_id, in.group_id);
  EXPECT_EQ(out->context_mode, in.context_mode);
  EXPECT_EQ(out->sync_mode, in.sync_mode);
  EXPECT_EQ(out->min_partition_size, in.min_partition_size);
  EXPECT_EQ(out->prefer, in.prefer);
}

}  // namespace
}  // namespace gpuu

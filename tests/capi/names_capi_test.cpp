// The enum names of the C ABI (gpuu_*_name, gpuu_*_from_name), through
// gpuu.h and libgpuu.so only: every value's name and back, NULL outside the
// enum, and the same spelling the graph builder reads (the compile specs'
// are checked in context_capi_test).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpuu.h"

namespace {

std::string last_error() { return gpuu_last_error(); }

// Values 0..want.size()-1 are named `want` and parse back; every other value,
// including the FORCE32 one and 256 (past an 8-bit range), has no name.
template <typename E>
void expect_names(const char* (*name_of)(E), gpuu_status (*from_name)(const char*, E*),
                  const std::vector<std::string>& want) {
  for (size_t v = 0; v < want.size(); ++v) {
    const char* name = name_of(static_cast<E>(v));
    ASSERT_NE(name, nullptr) << "value " << v;
    EXPECT_EQ(std::string(name), want[v]);
    EXPECT_EQ(name_of(static_cast<E>(v)), name) << "a static string, the same each time";
    E back = static_cast<E>(0x7FFFFFFF);
    ASSERT_EQ(from_name(name, &back), GPUU_OK) << last_error();
    EXPECT_EQ(static_cast<int64_t>(back), static_cast<int64_t>(v)) << name;
  }
  for (int32_t outside : {static_cast<int32_t>(want.size()), -1, 256, 0x7FFFFFFF}) {
    EXPECT_EQ(name_of(static_cast<E>(outside)), nullptr) << "value " << outside;
  }
}

TEST(CApiNames, DtypesAreNamedAndParsed) {
  expect_names(&gpuu_dtype_name, &gpuu_dtype_from_name, {"f32", "f16", "i32", "i64", "i8", "bool", "i16"});
  EXPECT_STREQ(gpuu_dtype_name(GPUU_DTYPE_I64), "i64");
}

TEST(CApiNames, ContextModesSyncModesAndPoliciesAreNamedAndParsed) {
  expect_names(&gpuu_context_mode_name, &gpuu_context_mode_from_name,
               {"disabled", "lookup_only", "lookup_or_create", "create_only"});
  expect_names(&gpuu_sync_mode_name, &gpuu_sync_mode_from_name, {"timeline", "queue_wait_idle", "none"});
  expect_names(&gpuu_prefer_name, &gpuu_prefer_from_name, {"auto", "vgf_first", "vulkan_first"});
  EXPECT_STREQ(gpuu_context_mode_name(GPUU_CONTEXT_LOOKUP_OR_CREATE), "lookup_or_create");
  EXPECT_STREQ(gpuu_prefer_name(GPUU_PREFER_VULKAN_FIRST), "vulkan_first");
}

TEST(CApiNames, VgfPathsAndLogLevelsAreNamedAndParsed) {
  expect_names(&gpuu_vgf_path_name, &gpuu_vgf_path_from_name, {"auto", "native", "executor"});
  expect_names(&gpuu_log_level_name, &gpuu_log_level_from_name, {"error", "warn", "info", "debug", "trace"});
  EXPECT_STREQ(gpuu_vgf_path_name(GPUU_VGF_PATH_EXECUTOR), "executor");
  EXPECT_STREQ(gpuu_log_level_name(GPUU_LOG_TRACE), "trace");
}

TEST(CApiNames, UnknownNameIsRefusedWithTheKnownOnesAndOutUntouched) {
  gpuu_dtype dtype = GPUU_DTYPE_I8;
  EXPECT_EQ(gpuu_dtype_from_name("f64", &dtype), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dtype, GPUU_DTYPE_I8);
  EXPECT_NE(last_error().find("unknown dtype 'f64' (known: f32, f16, i32, i64, i8, bool, i16)"), std::string::npos)
      << last_error();

  gpuu_sync_mode sync = GPUU_SYNC_NONE;
  EXPECT_EQ(gpuu_sync_mode_from_name("Timeline", &sync), GPUU_ERROR_INVALID_ARGUMENT) << "names are exact";
  EXPECT_EQ(sync, GPUU_SYNC_NONE);
  EXPECT_NE(last_error().find("gpuu_sync_mode_from_name: unknown sync mode 'Timeline' (known: timeline, "
                              "queue_wait_idle, none)"),
            std::string::npos)
      << last_error();

  gpuu_context_mode mode = GPUU_CONTEXT_DISABLED;
  EXPECT_EQ(gpuu_context_mode_from_name("", &mode), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("unknown context mode ''"), std::string::npos) << last_error();
  gpuu_prefer prefer = GPUU_PREFER_AUTO;
  EXPECT_EQ(gpuu_prefer_from_name("vgf-first", &prefer), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("known: auto, vgf_first, vulkan_first"), std::string::npos) << last_error();
  gpuu_vgf_path path = GPUU_VGF_PATH_AUTO;
  EXPECT_EQ(gpuu_vgf_path_from_name("emulated", &path), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("unknown VGF path 'emulated'"), std::string::npos) << last_error();
  gpuu_log_level level = GPUU_LOG_WARN;
  EXPECT_EQ(gpuu_log_level_from_name("2", &level), GPUU_ERROR_INVALID_ARGUMENT) << "names only, not GPUU_LOG digits";
  EXPECT_EQ(level, GPUU_LOG_WARN);
}

TEST(CApiNames, NullArgumentsAreRefused) {
  gpuu_dtype dtype = GPUU_DTYPE_F32;
  EXPECT_EQ(gpuu_dtype_from_name(nullptr, &dtype), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("gpuu_dtype_from_name: `name` is NULL"), std::string::npos) << last_error();
  EXPECT_EQ(gpuu_dtype_from_name("f32", nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("`out` is NULL"), std::string::npos) << last_error();
  EXPECT_EQ(gpuu_vgf_path_from_name(nullptr, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
}

// The dtype names are the graph builder's: cast's dtype attribute takes each.
TEST(CApiNames, CastTakesTheDtypeNames) {
  gpuu_graph* graph = nullptr;
  ASSERT_EQ(gpuu_graph_create(&graph), GPUU_OK);
  const int64_t shape[] = {4};
  int32_t x = -1;
  ASSERT_EQ(gpuu_graph_add_input(graph, "x", GPUU_DTYPE_F32, shape, 1, &x), GPUU_OK) << last_error();
  for (int v = 0; const char* name = gpuu_dtype_name(static_cast<gpuu_dtype>(v)); ++v) {
    gpuu_attr attr;
    gpuu_attr_init(&attr);
    attr.name = "dtype";
    attr.kind = GPUU_ATTR_STRING;
    attr.s = name;
    int32_t y = -1;
    const std::string node = std::string("to_") + name;
    ASSERT_EQ(gpuu_graph_add_node(graph, "cast", node.c_str(), &x, 1, &attr, 1, &y, 1, nullptr), GPUU_OK)
        << last_error();
    gpuu_dtype got = GPUU_DTYPE_FORCE32;
    ASSERT_EQ(gpuu_graph_value_dtype(graph, y, &got), GPUU_OK);
    EXPECT_EQ(got, v) << name;
  }
  gpuu_graph_destroy(graph);
}

}  // namespace

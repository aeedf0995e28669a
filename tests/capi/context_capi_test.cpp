// The context part of the C ABI, used as an application would: through
// gpuu.h and libgpuu.so only, with its own Vulkan device.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpuu.h"
#include "support/test_vulkan_device.h"

namespace {

std::string last_error() { return gpuu_last_error(); }

TEST(CApiBase, VersionMatchesTheHeader) {
  EXPECT_EQ(gpuu_version(), static_cast<uint32_t>(GPUU_VERSION));
  EXPECT_EQ(gpuu_version() >> 22, static_cast<uint32_t>(GPUU_VERSION_MAJOR));
  EXPECT_EQ(std::string(gpuu_version_string()), std::to_string(GPUU_VERSION_MAJOR) + "." +
                                                    std::to_string(GPUU_VERSION_MINOR) + "." +
                                                    std::to_string(GPUU_VERSION_PATCH));
}

TEST(CApiBase, StatusStringsNameEveryCode) {
  EXPECT_STREQ(gpuu_status_string(GPUU_OK), "ok");
  EXPECT_STREQ(gpuu_status_string(GPUU_ERROR_NOT_FOUND), "not found");
  EXPECT_STREQ(gpuu_status_string(GPUU_ERROR_ALREADY_EXISTS), "already exists");
  EXPECT_STREQ(gpuu_status_string(static_cast<gpuu_status>(1234)), "unknown status");
  for (int s = GPUU_OK; s <= GPUU_ERROR_INTERNAL; ++s) {
    EXPECT_STRNE(gpuu_status_string(static_cast<gpuu_status>(s)), "unknown status") << s;
  }
  EXPECT_EQ(sizeof(gpuu_status), 4u);
}

TEST(CApiBase, LastErrorIsPerThread) {
  gpuu_context* ctx = nullptr;
  ASSERT_EQ(gpuu_context_lookup("no-such-token", 0, &ctx), GPUU_ERROR_NOT_FOUND);
  std::string here = last_error();
  EXPECT_NE(here.find("no-such-token"), std::string::npos) << here;
  std::string there;
  std::thread other([&] { there = gpuu_last_error(); });
  other.join();
  EXPECT_EQ(there, "") << "another thread has its own message";
  EXPECT_EQ(last_error(), here);
}

struct Captured {
  std::vector<std::string> lines;
};

TEST(CApiBase, LogCallbackReceivesMessagesAtOrAboveItsLevel) {
  Captured captured;
  gpuu_set_log_callback(
      [](void* user, gpuu_log_level, const char* component, const char* message) {
        static_cast<Captured*>(user)->lines.push_back(std::string(component) + ": " + message);
      },
      &captured, GPUU_LOG_DEBUG);
  gpuu_context* ctx = nullptr;
  gpuu_context_lookup("logged-token", 0, &ctx);  // failures are logged at debug level
  gpuu_test::install_log_hook();                 // back to the test harness hook
  bool seen = false;
  for (const auto& l : captured.lines) seen |= l.find("logged-token") != std::string::npos;
  EXPECT_TRUE(seen);
}

gpuu_compile_spec spec_of(const char* key, const char* text) {
  gpuu_compile_spec spec;
  gpuu_compile_spec_init(&spec);
  spec.key = key;
  spec.value = text;
  spec.value_size = std::strlen(text);
  return spec;
}

TEST(CApiSharedSpec, ParsesKeysAndAppliesOverrides) {
  const char* token = "scene0";
  const char* mode = "create_only";
  const char* group = "2";
  gpuu_compile_spec specs[] = {spec_of(GPUU_SPEC_CONTEXT_TOKEN, token), spec_of(GPUU_SPEC_CONTEXT_MODE, mode),
                               spec_of(GPUU_SPEC_GROUP_ID, group), spec_of("vulkan_private_key", "x")};
  gpuu_shared_spec out;
  gpuu_shared_spec_init(&out);
  EXPECT_STREQ(out.token, "default");
  EXPECT_EQ(out.min_partition_size, 3);
  ASSERT_EQ(gpuu_shared_spec_parse(specs, 4, nullptr, &out), GPUU_OK) << last_error();
  EXPECT_STREQ(out.token, "scene0");
  EXPECT_EQ(out.mode, GPUU_CONTEXT_CREATE_ONLY);
  EXPECT_EQ(out.group_id, 2);
  EXPECT_EQ(out.present, 1);

  gpuu_context_overrides overrides;
  gpuu_context_overrides_init(&overrides);
  overrides.token = "app_token";
  overrides.has_mode = 1;
  overrides.mode = GPUU_CONTEXT_LOOKUP_ONLY;
  ASSERT_EQ(gpuu_shared_spec_parse(specs, 4, &overrides, &out), GPUU_OK) << last_error();
  EXPECT_STREQ(out.token, "app_token");
  EXPECT_EQ(out.mode, GPUU_CONTEXT_LOOKUP_ONLY);
  EXPECT_EQ(out.group_id, 2) << "not overridden";
}

// The C ABI's names (gpuu_*_name) are the compile specs' spelling: each one
// parses there to its value.
TEST(CApiSharedSpec, TakesTheNamesOfTheCApi) {
  auto parsed = [](const char* key, const char* name) {
    gpuu_compile_spec spec = spec_of(key, name);
    gpuu_shared_spec out;
    gpuu_shared_spec_init(&out);
    EXPECT_EQ(gpuu_shared_spec_parse(&spec, 1, nullptr, &out), GPUU_OK) << key << " " << name << ": " << last_error();
    return out;
  };
  for (int v = 0; const char* name = gpuu_context_mode_name(static_cast<gpuu_context_mode>(v)); ++v) {
    EXPECT_EQ(parsed(GPUU_SPEC_CONTEXT_MODE, name).mode, v) << name;
  }
  for (int v = 0; const char* name = gpuu_sync_mode_name(static_cast<gpuu_sync_mode>(v)); ++v) {
    EXPECT_EQ(parsed(GPUU_SPEC_SYNC_MODE, name).sync_mode, v) << name;
  }
  for (int v = 0; const char* name = gpuu_prefer_name(static_cast<gpuu_prefer>(v)); ++v) {
    EXPECT_EQ(parsed(GPUU_SPEC_PREFER, name).prefer, v) << name;
  }
}

// The shared keys' defaults have one home: every *_init function gives them.
TEST(CApiSharedSpec, InitFunctionsGiveTheSameDefaults) {
  gpuu_shared_spec spec;
  gpuu_shared_spec_init(&spec);
  gpuu_program_write_options write;
  gpuu_program_write_options_init(&write);
  EXPECT_STREQ(write.token, spec.token);
  EXPECT_EQ(write.group_id, spec.group_id);
  EXPECT_EQ(write.mode, spec.mode);
  EXPECT_EQ(write.sync_mode, spec.sync_mode);
  gpuu_context_resolve_options resolve;
  gpuu_context_resolve_options_init(&resolve);
  EXPECT_STREQ(resolve.token, spec.token);
  EXPECT_EQ(resolve.group_id, spec.group_id);
  EXPECT_EQ(resolve.mode, spec.mode);
  gpuu_partition_options partition;
  gpuu_partition_options_init(&partition);
  EXPECT_EQ(partition.prefer, spec.prefer);
  EXPECT_EQ(partition.min_partition_size, spec.min_partition_size);
  gpuu_context_overrides overrides;
  gpuu_context_overrides_init(&overrides);
  EXPECT_EQ(overrides.token, nullptr) << "overrides nothing";
  EXPECT_EQ(overrides.has_mode, 0);
  EXPECT_EQ(overrides.mode, spec.mode);
  EXPECT_EQ(overrides.sync_mode, spec.sync_mode);
}

TEST(CApiSharedSpec, BadValueNamesKeyAndValue) {
  const char* mode = "sometimes";
  gpuu_compile_spec spec = spec_of(GPUU_SPEC_CONTEXT_MODE, mode);
  gpuu_shared_spec out;
  gpuu_shared_spec_init(&out);
  EXPECT_EQ(gpuu_shared_spec_parse(&spec, 1, nullptr, &out), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find(GPUU_SPEC_CONTEXT_MODE), std::string::npos);
  EXPECT_NE(last_error().find("sometimes"), std::string::npos);
  gpuu_shared_spec unsized{};
  EXPECT_EQ(gpuu_shared_spec_parse(&spec, 1, nullptr, &unsized), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("struct_size"), std::string::npos);
}

class CApiContext : public testing::Test {
 protected:
  void TearDown() override {
    // Leave nothing registered for the next test.
    for (const char* t : {"app", "owned", "created", "dup", "race"}) {
      for (int g = 0; g < 8; ++g) gpuu_context_unregister(t, g);
    }
  }

  void fill(gpuu_external_context_desc* desc, const gpuu_test::AppDevice& app, const char* token, int64_t group) {
    gpuu_external_context_desc_init(desc);
    desc->token = token;
    desc->group_id = group;
    desc->instance = app.instance;
    desc->physical_device = app.physical_device;
    desc->device = app.device;
    desc->queue = app.queue;
    desc->queue_family_index = app.queue_family_index;
    desc->enabled_features = app.timeline_enabled ? GPUU_FEATURE_TIMELINE_SEMAPHORE : 0;
  }
};

TEST_F(CApiContext, LookupOnlyFindsTheApplicationsDeviceAndLeavesItAlive) {
  gpuu_test::AppDevice app;
  std::string why;
  ASSERT_TRUE(app.create(&why)) << why;
  gpuu_external_context_desc desc;
  fill(&desc, app, "app", 1);
  ASSERT_EQ(gpuu_context_register_external(&desc, nullptr), GPUU_OK) << last_error();

  gpuu_context_resolve_options options;
  gpuu_context_resolve_options_init(&options);
  options.token = "app";
  options.group_id = 1;
  options.mode = GPUU_CONTEXT_LOOKUP_ONLY;
  gpuu_context* ctx = nullptr;
  ASSERT_EQ(gpuu_context_resolve(&options, &ctx), GPUU_OK) << last_error();
  gpuu_vulkan_handles handles;
  handles.struct_size = sizeof(handles);
  ASSERT_EQ(gpuu_context_get_vulkan_handles(ctx, &handles), GPUU_OK);
  EXPECT_EQ(handles.device, app.device);
  EXPECT_EQ(handles.queue, app.queue);
  EXPECT_EQ(handles.ownership, app.timeline_enabled ? GPUU_OWN_TIMELINE_SEMAPHORE : GPUU_OWN_NOTHING);
  EXPECT_EQ(std::string(gpuu_context_device_name(ctx)), app.device_name);
  EXPECT_STREQ(gpuu_context_token(ctx), "app");
  EXPECT_EQ(gpuu_context_group_id(ctx), 1);

  ASSERT_EQ(gpuu_context_unregister("app", 1), GPUU_OK);
  gpuu_context_release(ctx);
  EXPECT_TRUE(app.still_usable(&why)) << why;
}

TEST_F(CApiContext, CooperativeMatrixBitNeedsItsExtension) {
  // The application claims the matrix-core features without enabling
  // VK_KHR_cooperative_matrix on its device: gpuu keeps the memory-model bit
  // it was given and clears the cooperative-matrix one, so no matrix-core
  // kernel is ever built for a device that cannot run it.
  gpuu_test::AppDevice app;
  std::string why;
  ASSERT_TRUE(app.create(&why)) << why;
  gpuu_external_context_desc desc;
  fill(&desc, app, "app", 2);
  desc.enabled_features |= GPUU_FEATURE_VULKAN_MEMORY_MODEL | GPUU_FEATURE_COOPERATIVE_MATRIX;
  gpuu_context* ctx = nullptr;
  ASSERT_EQ(gpuu_context_register_external(&desc, &ctx), GPUU_OK) << last_error();
  gpuu_vulkan_handles handles;
  handles.struct_size = sizeof(handles);
  ASSERT_EQ(gpuu_context_get_vulkan_handles(ctx, &handles), GPUU_OK);
  EXPECT_NE(handles.enabled_features & GPUU_FEATURE_VULKAN_MEMORY_MODEL, 0u);
  EXPECT_EQ(handles.enabled_features & GPUU_FEATURE_COOPERATIVE_MATRIX, 0u);
  gpuu_context_release(ctx);
  ASSERT_EQ(gpuu_context_unregister("app", 2), GPUU_OK);
  EXPECT_TRUE(app.still_usable(&why)) << why;
}

TEST_F(CApiContext, LookupOnlyWithoutRegistrationIsNotFound) {
  gpuu_context_resolve_options options;
  gpuu_context_resolve_options_init(&options);
  options.token = "app";
  options.group_id = 5;
  options.mode = GPUU_CONTEXT_LOOKUP_ONLY;
  gpuu_context* ctx = reinterpret_cast<gpuu_context*>(0x1);
  EXPECT_EQ(gpuu_context_resolve(&options, &ctx), GPUU_ERROR_NOT_FOUND);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(last_error().find("'app' group 5"), std::string::npos) << last_error();
}

TEST_F(CApiContext, LookupOrCreateMakesOneContextAndHandsOutItsHandles) {
  gpuu_context_resolve_options options;
  gpuu_context_resolve_options_init(&options);
  options.token = "created";
  gpuu_context* a = nullptr;
  gpuu_context* b = nullptr;
  ASSERT_EQ(gpuu_context_resolve(&options, &a), GPUU_OK) << last_error();
  ASSERT_EQ(gpuu_context_resolve(&options, &b), GPUU_OK) << last_error();
  gpuu_vulkan_handles ha, hb;
  ha.struct_size = hb.struct_size = sizeof(gpuu_vulkan_handles);
  ASSERT_EQ(gpuu_context_get_vulkan_handles(a, &ha), GPUU_OK);
  ASSERT_EQ(gpuu_context_get_vulkan_handles(b, &hb), GPUU_OK);
  EXPECT_EQ(ha.device, hb.device) << "both delegates bind to one VkDevice";
  EXPECT_NE(ha.instance, nullptr);
  EXPECT_EQ(ha.ownership & (GPUU_OWN_INSTANCE | GPUU_OWN_DEVICE), GPUU_OWN_INSTANCE | GPUU_OWN_DEVICE);
  EXPECT_GE(ha.api_version, (1u << 22) | (2u << 12));
  // Unregistering does not pull the device from under the holders.
  ASSERT_EQ(gpuu_context_unregister("created", 0), GPUU_OK);
  EXPECT_NE(gpuu_context_device_name(a), nullptr);
  gpuu_context_release(a);
  gpuu_context_release(b);
}

TEST_F(CApiContext, CreateOnlyRefusesATakenKey) {
  gpuu_context_resolve_options options;
  gpuu_context_resolve_options_init(&options);
  options.token = "created";
  options.group_id = 2;
  options.mode = GPUU_CONTEXT_CREATE_ONLY;
  gpuu_context* first = nullptr;
  ASSERT_EQ(gpuu_context_resolve(&options, &first), GPUU_OK) << last_error();
  gpuu_context* second = nullptr;
  EXPECT_EQ(gpuu_context_resolve(&options, &second), GPUU_ERROR_ALREADY_EXISTS);
  EXPECT_EQ(second, nullptr);
  gpuu_context_release(first);
}

TEST_F(CApiContext, RegisteringATakenKeyIsRejected) {
  gpuu_test::AppDevice app;
  std::string why;
  ASSERT_TRUE(app.create(&why)) << why;
  gpuu_external_context_desc desc;
  fill(&desc, app, "dup", 0);
  ASSERT_EQ(gpuu_context_register_external(&desc, nullptr), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_context_register_external(&desc, nullptr), GPUU_ERROR_ALREADY_EXISTS);
  EXPECT_NE(last_error().find("'dup'"), std::string::npos);
  ASSERT_EQ(gpuu_context_unregister("dup", 0), GPUU_OK);
  EXPECT_EQ(gpuu_context_unregister("dup", 0), GPUU_ERROR_NOT_FOUND);
}

TEST_F(CApiContext, OwnershipTransferMakesGpuuDestroyTheDevice) {
  gpuu_test::AppDevice app;
  std::string why;
  ASSERT_TRUE(app.create(&why)) << why;
  gpuu_external_context_desc desc;
  fill(&desc, app, "owned", 0);
  desc.ownership = GPUU_OWN_DEVICE | GPUU_OWN_INSTANCE;
  gpuu_context* ctx = nullptr;
  ASSERT_EQ(gpuu_context_register_external(&desc, &ctx), GPUU_OK) << last_error();
  app.forget_device_and_instance_keep_messenger();
  ASSERT_EQ(gpuu_context_unregister("owned", 0), GPUU_OK);
  gpuu_context_release(ctx);  // gpuu destroys device and instance here; the layer reports leaks if not
}

// Registration is one step under the registry's lock: of 64 threads racing to
// register the same application device with ownership, exactly one wins, the
// others are refused without ever wrapping the handles, so the device is
// destroyed once (by gpuu, when the winner's references go) and no context
// leaks. Several rounds, each on a fresh device, to give the race a chance.
TEST_F(CApiContext, SixtyFourThreadsRegisteringOneKeyGiveOneWinner) {
  constexpr int kThreads = 64;
  constexpr int kRounds = 4;
  for (int round = 0; round < kRounds; ++round) {
    gpuu_test::AppDevice app;
    std::string why;
    ASSERT_TRUE(app.create(&why)) << why;
    gpuu_external_context_desc desc;
    fill(&desc, app, "race", round);
    desc.ownership = GPUU_OWN_DEVICE | GPUU_OWN_INSTANCE;

    std::atomic<int> ready{0};
    std::vector<gpuu_status> status(kThreads, GPUU_ERROR_INTERNAL);
    std::vector<gpuu_context*> refs(kThreads, nullptr);
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();  // start together
        status[t] = gpuu_context_register_external(&desc, &refs[t]);
        if (status[t] != GPUU_OK) errors[t] = gpuu_last_error();
      });
    }
    for (std::thread& t : threads) t.join();

    int winners = 0;
    gpuu_context* winner = nullptr;
    for (int t = 0; t < kThreads; ++t) {
      if (status[t] == GPUU_OK) {
        ++winners;
        winner = refs[t];
      } else {
        EXPECT_EQ(status[t], GPUU_ERROR_ALREADY_EXISTS) << errors[t];
        EXPECT_EQ(refs[t], nullptr);
        EXPECT_NE(errors[t].find("'race'"), std::string::npos) << errors[t];
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round;
    // Had a loser wrapped and dropped the handles, the device would be gone.
    ASSERT_TRUE(app.still_usable(&why)) << "round " << round << ": " << why;
    gpuu_vulkan_handles handles;
    handles.struct_size = sizeof(handles);
    ASSERT_EQ(gpuu_context_get_vulkan_handles(winner, &handles), GPUU_OK) << last_error();
    EXPECT_EQ(handles.device, app.device);

    app.forget_device_and_instance_keep_messenger();
    ASSERT_EQ(gpuu_context_unregister("race", round), GPUU_OK) << last_error();
    gpuu_context* none = nullptr;
    EXPECT_EQ(gpuu_context_lookup("race", round, &none), GPUU_ERROR_NOT_FOUND);
    gpuu_context_release(winner);  // the one destruction of device and instance
  }
}

TEST_F(CApiContext, BadArgumentsAreRefusedWithAMessage) {
  gpuu_external_context_desc desc;
  gpuu_external_context_desc_init(&desc);
  desc.token = "";
  EXPECT_EQ(gpuu_context_register_external(&desc, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("token"), std::string::npos);
  desc.token = "app";
  EXPECT_EQ(gpuu_context_register_external(&desc, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("null"), std::string::npos) << last_error();
  EXPECT_EQ(gpuu_context_register_external(nullptr, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  gpuu_context_resolve_options options;
  gpuu_context_resolve_options_init(&options);
  options.mode = static_cast<gpuu_context_mode>(42);
  gpuu_context* ctx = nullptr;
  EXPECT_EQ(gpuu_context_resolve(&options, &ctx), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("42"), std::string::npos);
  options.mode = GPUU_CONTEXT_DISABLED;
  gpuu_device_options device;
  gpuu_device_options_init(&device);
  device.device = "no-such-gpu-anywhere";
  options.device = &device;
  EXPECT_EQ(gpuu_context_resolve(&options, &ctx), GPUU_ERROR_NOT_FOUND);
  EXPECT_NE(last_error().find("no-such-gpu-anywhere"), std::string::npos) << last_error();
  EXPECT_EQ(gpuu_context_get_vulkan_handles(nullptr, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  gpuu_context_release(nullptr);  // harmless
}

TEST_F(CApiContext, DisabledModeGivesAPrivateContext) {
  gpuu_context_resolve_options options;
  gpuu_context_resolve_options_init(&options);
  options.token = "created";
  options.group_id = 3;
  options.mode = GPUU_CONTEXT_DISABLED;
  gpuu_context* ctx = nullptr;
  ASSERT_EQ(gpuu_context_resolve(&options, &ctx), GPUU_OK) << last_error();
  gpuu_context* found = nullptr;
  EXPECT_EQ(gpuu_context_lookup("created", 3, &found), GPUU_ERROR_NOT_FOUND) << "a private context is not registered";
  gpuu_context* extra = gpuu_context_retain(ctx);
  gpuu_context_release(ctx);
  EXPECT_NE(gpuu_context_device_name(extra), nullptr) << "retain keeps it alive";
  gpuu_context_release(extra);
}

TEST(CApiDevices, EnumeratesAtLeastOneDevice) {
  char name[256];
  int32_t type = -1;
  ASSERT_EQ(gpuu_enumerate_devices(0, name, sizeof(name), &type), GPUU_OK) << gpuu_last_error();
  EXPECT_GT(std::strlen(name), 0u);
  EXPECT_GE(type, 0);
  uint32_t n = 0;
  while (gpuu_enumerate_devices(n, name, sizeof(name), nullptr) == GPUU_OK) ++n;
  EXPECT_EQ(gpuu_enumerate_devices(n, name, sizeof(name), nullptr), GPUU_ERROR_NOT_FOUND);
}

}  // namespace

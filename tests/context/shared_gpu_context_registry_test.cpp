// SharedGpuContextRegistry and the RFC's resolution rules, on a real device.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "context/context_test_util.h"
#include "context/shared_gpu_context_registry.h"

namespace gpuu {
namespace {

class Registry : public testing::Test {
 protected:
  void TearDown() override { registry.clear_for_testing(); }
  SharedGpuContextRegistry registry;  // a private registry per test: no cross-talk

  SharedGpuContextPtr make(const std::string& token, int64_t group, std::atomic<int>* destroyed = nullptr) {
    Result<SharedGpuContextPtr> ctx = make_borrowing_context(token, group, destroyed);
    EXPECT_TRUE(ctx.ok()) << ctx.status().message();
    return ctx.ok() ? ctx.value() : nullptr;
  }
};

TEST_F(Registry, LookupOfMissingKeyIsNull) { EXPECT_EQ(registry.lookup({"absent", 0}), nullptr); }

TEST_F(Registry, RegisterThenLookupReturnsTheSameContext) {
  SharedGpuContextPtr ctx = make("scene0", 2);
  ASSERT_TRUE(registry.register_context({"scene0", 2}, ctx).ok());
  EXPECT_EQ(registry.lookup({"scene0", 2}), ctx);
  EXPECT_EQ(registry.lookup({"scene0", 3}), nullptr) << "group is part of the key";
  EXPECT_EQ(registry.lookup({"scene1", 2}), nullptr) << "token is part of the key";
}

TEST_F(Registry, DuplicateRegistrationOfAnotherContextIsRejected) {
  SharedGpuContextPtr first = make("dup", 0);
  SharedGpuContextPtr second = make("dup", 0);
  ASSERT_TRUE(registry.register_context({"dup", 0}, first).ok());
  Status again = registry.register_context({"dup", 0}, second);
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.message().find("'dup'"), std::string::npos) << again.message();
  EXPECT_EQ(registry.lookup({"dup", 0}), first);
  EXPECT_TRUE(registry.register_context({"dup", 0}, first).ok()) << "the same context again is harmless";
}

TEST_F(Registry, RegisteringNullIsRejected) {
  EXPECT_EQ(registry.register_context({"null", 0}, nullptr).code(), StatusCode::kInvalidArgument);
}

TEST_F(Registry, UnregisterRemovesTheEntry) {
  ASSERT_TRUE(registry.register_context({"u", 1}, make("u", 1)).ok());
  EXPECT_TRUE(registry.unregister({"u", 1}).ok());
  EXPECT_EQ(registry.lookup({"u", 1}), nullptr);
  Status again = registry.unregister({"u", 1});
  EXPECT_EQ(again.code(), StatusCode::kNotFound);
}

TEST_F(Registry, LookupOrCreateCreatesOnceThenReuses) {
  int calls = 0;
  auto creator = [&] {
    ++calls;
    return make_borrowing_context("loc", 0);
  };
  Result<SharedGpuContextPtr> a = registry.lookup_or_create({"loc", 0}, creator);
  Result<SharedGpuContextPtr> b = registry.lookup_or_create({"loc", 0}, creator);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value(), b.value());
  EXPECT_EQ(calls, 1);
}

TEST_F(Registry, LookupOrCreateRunsCreatorOnceUnderContention) {
  std::atomic<int> calls{0};
  std::promise<void> go;
  std::shared_future<void> start = go.get_future().share();
  auto creator = [&] {
    calls.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // widen the race window
    return make_borrowing_context("race", 7);
  };
  std::vector<std::future<Result<SharedGpuContextPtr>>> results;
  for (int i = 0; i < 16; ++i) {
    results.push_back(std::async(std::launch::async, [&] {
      start.wait();
      return registry.lookup_or_create({"race", 7}, creator);
    }));
  }
  go.set_value();
  SharedGpuContextPtr first;
  for (auto& f : results) {
    Result<SharedGpuContextPtr> r = f.get();
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (!first) first = r.value();
    EXPECT_EQ(r.value(), first) << "every thread gets the one context";
  }
  EXPECT_EQ(calls.load(), 1);
}

TEST_F(Registry, FailedCreationIsSharedByWaitersAndLeavesNoEntry) {
  std::atomic<int> calls{0};
  auto failing = [&]() -> Result<SharedGpuContextPtr> {
    calls.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return err(StatusCode::kUnsupported, "no device for you");
  };
  std::vector<std::future<Result<SharedGpuContextPtr>>> results;
  for (int i = 0; i < 4; ++i) {
    results.push_back(std::async(std::launch::async, [&] { return registry.lookup_or_create({"fail", 0}, failing); }));
  }
  for (auto& f : results) {
    Result<SharedGpuContextPtr> r = f.get();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "no device for you");
  }
  EXPECT_LE(calls.load(), 4);
  EXPECT_EQ(registry.lookup({"fail", 0}), nullptr);
  Result<SharedGpuContextPtr> later = registry.lookup_or_create({"fail", 0}, [] { return make_borrowing_context("fail", 0); });
  EXPECT_TRUE(later.ok()) << "a failed creation does not poison the key";
}

TEST_F(Registry, CreatorMayReenterTheRegistry) {
  // No lock is held while the creator runs: it may look up or register other keys.
  Result<SharedGpuContextPtr> ctx = registry.lookup_or_create({"outer", 0}, [&]() -> Result<SharedGpuContextPtr> {
    EXPECT_EQ(registry.lookup({"outer", 0}), nullptr);
    EXPECT_TRUE(registry.register_context({"inner", 0}, make("inner", 0)).ok());
    return make_borrowing_context("outer", 0);
  });
  ASSERT_TRUE(ctx.ok());
  EXPECT_NE(registry.lookup({"inner", 0}), nullptr);
}

TEST_F(Registry, ContextOutlivesUnregistrationWhileHeld) {
  std::atomic<int> destroyed{0};
  SharedGpuContextPtr held = make("held", 0, &destroyed);
  ASSERT_TRUE(registry.register_context({"held", 0}, held).ok());
  ASSERT_TRUE(registry.unregister({"held", 0}).ok());
  EXPECT_EQ(destroyed.load(), 0) << "a holder keeps it alive";
  EXPECT_TRUE(held->is_valid());
  VkCommandPool pool = VK_NULL_HANDLE;
  EXPECT_EQ(held->create_command_pool(&pool), VK_SUCCESS) << "still usable after unregistration";
  held->destroy_command_pool(pool);
  held.reset();
  EXPECT_EQ(destroyed.load(), 1) << "destroyed exactly once, when the last holder goes";
}

TEST_F(Registry, LastReferenceInRegistryIsDestroyedOutsideTheLock) {
  std::atomic<int> destroyed{0};
  std::atomic<bool> reentry_ok{false};
  auto on_destroy = [&] {
    // Re-enter from another thread with a deadline: if the registry lock were
    // still held, this would block.
    std::promise<void> done;
    std::future<void> finished = done.get_future();
    std::thread probe([&] {
      registry.lookup({"anything", 0});
      done.set_value();
    });
    reentry_ok = finished.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
    if (reentry_ok) {
      probe.join();
    } else {
      probe.detach();
    }
  };
  {
    Result<SharedGpuContextPtr> ctx = make_borrowing_context("last", 0, &destroyed, on_destroy);
    ASSERT_TRUE(ctx.ok());
    ASSERT_TRUE(registry.register_context({"last", 0}, ctx.value()).ok());
  }
  EXPECT_EQ(destroyed.load(), 0);
  ASSERT_TRUE(registry.unregister({"last", 0}).ok());
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_TRUE(reentry_ok.load()) << "the context was destroyed while the registry lock was held";
}

TEST_F(Registry, TeardownInAnyOrderDestroysOnce) {
  // Two delegates hold the context; registry entry, delegate A and delegate B go in every order.
  const std::vector<std::vector<int>> orders = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& order : orders) {
    std::atomic<int> destroyed{0};
    SharedGpuContextPtr a = make("order", 0, &destroyed);
    SharedGpuContextPtr b = a;
    ASSERT_TRUE(registry.register_context({"order", 0}, a).ok());
    for (int step : order) {
      EXPECT_EQ(destroyed.load(), 0);
      if (step == 0) {
        ASSERT_TRUE(registry.unregister({"order", 0}).ok());
      }
      if (step == 1) a.reset();
      if (step == 2) b.reset();
    }
    EXPECT_EQ(destroyed.load(), 1);
  }
}

// --- resolve_shared_context: the modes as a delegate sees them -------------

SharedGpuCompileSpec spec_for(const std::string& token, int64_t group, ContextMode mode) {
  SharedGpuCompileSpec spec;
  spec.token = token;
  spec.group_id = group;
  spec.context_mode = mode;
  spec.present = true;
  return spec;
}

ContextFactory counting_factory(std::atomic<int>* calls) {
  return [calls](const std::string& token, int64_t group) {
    calls->fetch_add(1);
    return make_borrowing_context(token, group);
  };
}

TEST_F(Registry, LookupOnlyWithoutContextIsNotFound) {
  std::atomic<int> calls{0};
  Result<SharedGpuContextPtr> ctx =
      resolve_shared_context(spec_for("missing", 4, ContextMode::kLookupOnly), counting_factory(&calls), registry);
  ASSERT_FALSE(ctx.ok());
  EXPECT_EQ(ctx.status().code(), StatusCode::kNotFound);
  EXPECT_NE(ctx.status().message().find("'missing' group 4"), std::string::npos) << ctx.status().message();
  EXPECT_EQ(calls.load(), 0) << "lookup_only never creates";
}

TEST_F(Registry, LookupOnlyFindsTheApplicationsContext) {
  SharedGpuContextPtr app = make("app", 1);
  ASSERT_TRUE(registry.register_context({"app", 1}, app).ok());
  std::atomic<int> calls{0};
  Result<SharedGpuContextPtr> ctx =
      resolve_shared_context(spec_for("app", 1, ContextMode::kLookupOnly), counting_factory(&calls), registry);
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ(ctx.value(), app);
}

TEST_F(Registry, CreateOnlyWithExistingContextIsAlreadyExists) {
  ASSERT_TRUE(registry.register_context({"taken", 0}, make("taken", 0)).ok());
  std::atomic<int> calls{0};
  Result<SharedGpuContextPtr> ctx =
      resolve_shared_context(spec_for("taken", 0, ContextMode::kCreateOnly), counting_factory(&calls), registry);
  ASSERT_FALSE(ctx.ok());
  EXPECT_EQ(ctx.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(calls.load(), 0);
}

TEST_F(Registry, CreateOnlyCreatesAndRegisters) {
  std::atomic<int> calls{0};
  Result<SharedGpuContextPtr> ctx =
      resolve_shared_context(spec_for("fresh", 0, ContextMode::kCreateOnly), counting_factory(&calls), registry);
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ(registry.lookup({"fresh", 0}), ctx.value());
  EXPECT_EQ(calls.load(), 1);
}

TEST_F(Registry, LookupOrCreateSharesOneContextBetweenDelegates) {
  std::atomic<int> calls{0};
  auto spec = spec_for("shared", 3, ContextMode::kLookupOrCreate);
  Result<SharedGpuContextPtr> vgf = resolve_shared_context(spec, counting_factory(&calls), registry);
  Result<SharedGpuContextPtr> vulkan = resolve_shared_context(spec, counting_factory(&calls), registry);
  ASSERT_TRUE(vgf.ok() && vulkan.ok());
  EXPECT_EQ(vgf.value(), vulkan.value());
  EXPECT_EQ(calls.load(), 1);
}

TEST_F(Registry, DisabledMakesPrivateUnregisteredContexts) {
  std::atomic<int> calls{0};
  auto spec = spec_for("private", 0, ContextMode::kDisabled);
  Result<SharedGpuContextPtr> a = resolve_shared_context(spec, counting_factory(&calls), registry);
  Result<SharedGpuContextPtr> b = resolve_shared_context(spec, counting_factory(&calls), registry);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a.value(), b.value());
  EXPECT_EQ(registry.size(), 0u);
  EXPECT_EQ(calls.load(), 2);
}

TEST_F(Registry, SpecWithoutSharedKeysBehavesAsDisabled) {
  std::atomic<int> calls{0};
  SharedGpuCompileSpec absent;  // present == false
  Result<SharedGpuContextPtr> a = resolve_shared_context(absent, counting_factory(&calls), registry);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(registry.size(), 0u);
}

}  // namespace
}  // namespace gpuu

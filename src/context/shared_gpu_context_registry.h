// SharedGpuContextRegistry: the process-local map (token, group_id) -> context.
// It holds strong references; entries leave only by unregister(). No lock is
// held while a creator runs or while a context is destroyed, so either may
// re-enter the registry.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "compile_spec/shared_gpu_compile_spec.h"
#include "context/shared_gpu_context.h"

namespace gpuu {

struct ContextKey {
  std::string token;
  int64_t group_id = 0;
  bool operator<(const ContextKey& o) const {
    return token < o.token || (token == o.token && group_id < o.group_id);
  }
};

class SharedGpuContextRegistry {
 public:
  using Creator = std::function<Result<SharedGpuContextPtr>()>;

  static SharedGpuContextRegistry& get();

  // Null when nothing (or only a creation in flight) is registered under `key`.
  SharedGpuContextPtr lookup(const ContextKey& key);
  // Returns the registered context, or runs `create` once (other callers for the
  // same key wait for it and share its result, success or failure).
  Result<SharedGpuContextPtr> lookup_or_create(const ContextKey& key, const Creator& create);
  // One atomic step: takes `key` under the lock (kAlreadyExists, without
  // running `create`, when anything holds it or is being created under it),
  // then runs `create` and registers its result (on failure the key is free
  // again). So a context that owns application handles is only ever made by
  // the one caller that won the key, and never destroyed by a loser.
  Result<SharedGpuContextPtr> create_registered(const ContextKey& key, const Creator& create);
  // kAlreadyExists when another context holds `key`; registering the same
  // context again is accepted.
  Status register_context(const ContextKey& key, SharedGpuContextPtr context);
  // kNotFound when nothing is registered under `key`.
  Status unregister(const ContextKey& key);
  size_t size();
  // Drops every entry (destruction happens after the lock is released).
  void clear_for_testing();

 private:
  struct Pending {
    bool done = false;
    Status status;
    SharedGpuContextPtr context;
  };
  struct Entry {
    SharedGpuContextPtr context;      // set once created
    std::shared_ptr<Pending> pending;  // set while a creator runs
  };

  // Runs `create` for the key `pending` holds, then publishes the outcome.
  Result<SharedGpuContextPtr> run_creator(const ContextKey& key, const std::shared_ptr<Pending>& pending,
                                          const Creator& create);

  std::mutex mutex_;
  std::condition_variable created_;
  std::map<ContextKey, Entry> entries_;
};

// What a delegate asks for at init: the RFC's resolution rules (phase 3/4).
struct DeviceOptions {
  std::string device;        // empty: GPUU_DEVICE, then the default choice
  bool validation = false;   // or GPUU_VALIDATION=1
};

using ContextFactory = std::function<Result<SharedGpuContextPtr>(const std::string& token, int64_t group_id)>;

// disabled -> a private context from `factory` (not registered);
// lookup_only -> the registered one or kNotFound; lookup_or_create -> created
// once; create_only -> kAlreadyExists when taken, else created and registered.
Result<SharedGpuContextPtr> resolve_shared_context(const SharedGpuCompileSpec& spec, const ContextFactory& factory,
                                                   SharedGpuContextRegistry& registry = SharedGpuContextRegistry::get());

}  // namespace gpuu

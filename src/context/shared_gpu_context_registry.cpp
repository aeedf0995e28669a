// The context registry and the RFC's context-resolution rules.
#include "context/shared_gpu_context_registry.h"

#include <exception>
#include <vector>

#include "base/log.h"

namespace gpuu {

SharedGpuContextRegistry& SharedGpuContextRegistry::get() {
  // Leaked on purpose: contexts still registered at exit must not be destroyed
  // after the Vulkan driver has unloaded.
  static SharedGpuContextRegistry* registry = new SharedGpuContextRegistry();
  return *registry;
}

SharedGpuContextPtr SharedGpuContextRegistry::lookup(const ContextKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second.context;
}

Result<SharedGpuContextPtr> SharedGpuContextRegistry::lookup_or_create(const ContextKey& key, const Creator& create) {
  std::shared_ptr<Pending> pending;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.context) return it->second.context;
    if (it != entries_.end()) {
      std::shared_ptr<Pending> waiting_on = it->second.pending;
      created_.wait(lock, [&] { return waiting_on->done; });
      if (!waiting_on->status.ok()) return waiting_on->status;
      return waiting_on->context;
    }
    pending = std::make_shared<Pending>();
    entries_[key].pending = pending;
  }

  return run_creator(key, pending, create);
}

Result<SharedGpuContextPtr> SharedGpuContextRegistry::create_registered(const ContextKey& key,
                                                                      const Creator& create) {
  std::shared_ptr<Pending> pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.count(key)) {
      return err(StatusCode::kAlreadyExists, "a shared GPU context is already registered under token '", key.token,
                 "' group ", key.group_id);
    }
    pending = std::make_shared<Pending>();
    entries_[key].pending = pending;  // the key is ours: later callers see it taken
  }
  return run_creator(key, pending, create);
}

Result<SharedGpuContextPtr> SharedGpuContextRegistry::run_creator(const ContextKey& key,
                                                                  const std::shared_ptr<Pending>& pending,
                                                                  const Creator& create) {
  Result<SharedGpuContextPtr> created = err(StatusCode::kInternal, "context creator did not run");
  try {
    created = create();
  } catch (const std::exception& e) {
    created = err(StatusCode::kInternal, "context creator threw: ", e.what());
  }
  if (created.ok() && !created.value()) {
    created = err(StatusCode::kInternal, "context creator returned no context for '", key.token, "'");
  }

  std::lock_guard<std::mutex> lock(mutex_);
  pending->done = true;
  if (created.ok()) {
    pending->context = created.value();
    entries_[key] = Entry{created.value(), nullptr};
  } else {
    pending->status = created.status();
    entries_.erase(key);
  }
  created_.notify_all();
  return created;
}

Status SharedGpuContextRegistry::register_context(const ContextKey& key, SharedGpuContextPtr context) {
  if (!context || !context->is_valid()) {
    return err(StatusCode::kInvalidArgument, "cannot register an invalid context under '", key.token, "' group ",
               key.group_id);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    if (it->second.context == context) return Status::Ok();
    return err(StatusCode::kAlreadyExists, "a different shared GPU context is already registered under token '",
               key.token, "' group ", key.group_id);
  }
  entries_[key] = Entry{std::move(context), nullptr};
  return Status::Ok();
}

Status SharedGpuContextRegistry::unregister(const ContextKey& key) {
  SharedGpuContextPtr released;  // destroyed, if last, after the lock is gone
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end() || !it->second.context) {
      return err(StatusCode::kNotFound, "no shared GPU context is registered under token '", key.token, "' group ",
                 key.group_id);
    }
    released = std::move(it->second.context);
    entries_.erase(it);
  }
  return Status::Ok();
}

size_t SharedGpuContextRegistry::size() {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& e : entries_) n += e.second.context ? 1 : 0;
  return n;
}

void SharedGpuContextRegistry::clear_for_testing() {
  std::vector<SharedGpuContextPtr> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.context) {
        released.push_back(std::move(it->second.context));
        it = entries_.erase(it);
      } else {
        ++it;  // a creation in flight finishes on its own
      }
    }
  }
}

Result<SharedGpuContextPtr> resolve_shared_context(const SharedGpuCompileSpec& spec, const ContextFactory& factory,
                                                   SharedGpuContextRegistry& registry) {
  ContextKey key{spec.token, spec.group_id};
  if (!spec.enabled()) return factory(spec.token, spec.group_id);
  switch (spec.context_mode) {
    case ContextMode::kLookupOnly: {
      SharedGpuContextPtr ctx = registry.lookup(key);
      if (!ctx) {
        return err(StatusCode::kNotFound, "no shared GPU context is registered under token '", key.token,
                   "' group ", key.group_id, " (mode lookup_only: register one first, or use lookup_or_create)");
      }
      return ctx;
    }
    case ContextMode::kLookupOrCreate:
      return registry.lookup_or_create(key, [&] { return factory(key.token, key.group_id); });
    case ContextMode::kCreateOnly: {
      Result<SharedGpuContextPtr> created =
          registry.create_registered(key, [&] { return factory(key.token, key.group_id); });
      if (!created.ok() && created.status().code() == StatusCode::kAlreadyExists) {
        return err(StatusCode::kAlreadyExists, created.status().message(), " (mode create_only)");
      }
      return created;
    }
    case ContextMode::kDisabled:
      break;
  }
  return factory(spec.token, spec.group_id);
}

}  // namespace gpuu

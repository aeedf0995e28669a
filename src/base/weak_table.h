// A table of shared values found by key while anyone holds them, the one
// mechanism behind gpuu's process-wide sharing (device copies of weights,
// a device's pipelines): a value lives as long as
// its holders do, and a key whose value is gone finds none.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "base/status.h"

namespace gpuu {

template <typename Key, typename Value>
class WeakTable {
 public:
  // The value kept under `key` while it lives, else the one `make` returns
  // (a Result<std::shared_ptr<Value>>), kept under it; a failure of `make`
  // is returned and nothing is kept. The lock is held while `make` runs, so
  // two callers asking for one key at once get one value. Entries whose
  // values are gone are dropped as new ones are kept.
  template <typename Make>
  Result<std::shared_ptr<Value>> find_or_make(const Key& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (std::shared_ptr<Value> held = it->second.lock()) return held;
    }
    Result<std::shared_ptr<Value>> made = std::forward<Make>(make)();
    if (!made.ok()) return made;
    for (auto e = entries_.begin(); e != entries_.end();) e = e->second.expired() ? entries_.erase(e) : std::next(e);
    entries_[key] = made.value();
    return made;
  }

  // How many values are held now.
  size_t held() const {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (const auto& entry : entries_) n += entry.second.expired() ? 0 : 1;
    return n;
  }

  // Whether a value is held now under a key for which `pred(key)` is true.
  template <typename Pred>
  bool held_any(Pred&& pred) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& entry : entries_) {
      if (!entry.second.expired() && pred(entry.first)) return true;
    }
    return false;
  }

 private:
  mutable std::mutex mutex_;
  std::map<Key, std::weak_ptr<Value>> entries_;
};

}  // namespace gpuu

#pragma once
// A small thread-safe cache of review answers (TokenReview, SubjectAccessReview) with a time to live
// per entry, as kube's delegated authentication and authorization keep them: an answer is reused
// for its TTL (10 s by default in kube), then asked again. Written by the HTTP client's I/O thread,
// read by the serving thread, hence the lock. Bounded: when full, expired entries are dropped, and
// if none has expired the oldest-expiring one goes, so a flood of distinct tokens costs memory in
// proportion to `capacity`, not to the flood. The clock is a parameter so tests need not wait.
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace kas::api {

template <class V>
class review_cache {
public:
  using clock = std::chrono::steady_clock;

  explicit review_cache(size_t capacity = 4096) : capacity_(capacity == 0 ? 1 : capacity) {}

  std::optional<V> get(const std::string& key, clock::time_point now = clock::now()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    if (it->second.expires <= now) {
      entries_.erase(it);
      return std::nullopt;
    }
    return it->second.value;
  }

  // A ttl of zero or less stores nothing (caching off).
  void put(const std::string& key, V value, clock::duration ttl, clock::time_point now = clock::now()) {
    if (ttl <= clock::duration::zero()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() >= capacity_ && entries_.find(key) == entries_.end()) evict(now);
    entries_[key] = entry{std::move(value), now + ttl};
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

private:
  struct entry {
    V value;
    clock::time_point expires;
  };

  void evict(clock::time_point now) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.expires <= now) it = entries_.erase(it);
      else ++it;
    }
    if (entries_.size() < capacity_) return;
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->second.expires < oldest->second.expires) oldest = it;
    entries_.erase(oldest);
  }

  mutable std::mutex mu_;
  size_t capacity_;
  std::map<std::string, entry> entries_;
};

}  // namespace kas::api

#include "cache/labels.hpp"

#include <functional>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace kas {

namespace {

// Interned label sets by content hash; weak, so a set no object uses any more is freed, and the
// expired entries are swept every `sweep_every` insertions.
struct label_sets {
  std::mutex mu;
  std::unordered_multimap<size_t, std::weak_ptr<const std::vector<label_map::entry>>> by_hash;
  size_t inserted = 0;
  static constexpr size_t sweep_every = 4096;
};
label_sets& sets() {
  static auto* s = new label_sets;  // never destroyed: compiled objects may outlive statics
  return *s;
}

size_t hash_of(const std::vector<label_map::entry>& entries) {
  size_t h = entries.size();
  std::hash<std::string> hs;
  for (const auto& [k, v] : entries) {
    h = h * 1000003u ^ hs(k);
    h = h * 1000003u ^ hs(v);
  }
  return h;
}

struct namespace_ids {
  std::shared_mutex mu;
  std::unordered_map<std::string, uint32_t> ids;
};
namespace_ids& namespaces() {
  static auto* n = new namespace_ids;
  return *n;
}

}  // namespace

const std::vector<label_map::entry>& label_map::no_entries() {
  static const std::vector<entry> none;
  return none;
}

label_map::label_map(std::vector<entry> entries) {
  if (entries.empty()) return;
  std::sort(entries.begin(), entries.end());
  const size_t h = hash_of(entries);
  auto& s = sets();
  std::lock_guard<std::mutex> lock(s.mu);
  auto range = s.by_hash.equal_range(h);
  for (auto it = range.first; it != range.second; ++it)
    if (auto alive = it->second.lock(); alive && *alive == entries) {
      data_ = std::move(alive);
      return;
    }
  data_ = std::make_shared<const std::vector<entry>>(std::move(entries));
  s.by_hash.emplace(h, data_);
  if (++s.inserted % label_sets::sweep_every == 0)
    for (auto it = s.by_hash.begin(); it != s.by_hash.end();) it = it->second.expired() ? s.by_hash.erase(it) : std::next(it);
}

uint32_t intern_namespace(std::string_view ns) {
  auto& n = namespaces();
  {
    std::shared_lock<std::shared_mutex> lock(n.mu);
    auto it = n.ids.find(std::string(ns));
    if (it != n.ids.end()) return it->second;
  }
  std::unique_lock<std::shared_mutex> lock(n.mu);
  return n.ids.emplace(std::string(ns), static_cast<uint32_t>(n.ids.size() + 1)).first->second;
}

}  // namespace kas

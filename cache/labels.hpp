#pragma once
// An immutable-by-convention label map: sorted (key, value) pairs, looked up by binary search.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kas {

class label_map {
public:
  using entry = std::pair<std::string, std::string>;
  label_map() = default;
  explicit label_map(std::vector<entry> entries) : entries_(std::move(entries)) {
    std::sort(entries_.begin(), entries_.end());
  }
  const std::string* get(std::string_view key) const {
    if (entries_.size() <= linear_scan_max) {
      // Objects carry a handful of labels: a scan that rejects on length first does one memcmp
      // (the match) where a binary search does one per probe. Selectors and spread constraints
      // look labels up for every pod on every node, so this is on the hot path.
      for (const auto& e : entries_)
        if (e.first.size() == key.size() && std::memcmp(e.first.data(), key.data(), key.size()) == 0) return &e.second;
      return nullptr;
    }
    auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                               [](const entry& e, std::string_view k) { return e.first < k; });
    if (it != entries_.end() && it->first == key) return &it->second;
    return nullptr;
  }
  bool has(std::string_view key) const { return get(key) != nullptr; }
  const std::vector<entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  bool operator==(const label_map& o) const { return entries_ == o.entries_; }

private:
  static constexpr size_t linear_scan_max = 12;
  std::vector<entry> entries_;
};

}  // namespace kas

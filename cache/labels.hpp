#pragma once
// An immutable-by-convention label map: sorted (key, value) pairs, looked up by binary search.
#include <algorithm>
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
  std::vector<entry> entries_;
};

}  // namespace kas

#pragma once
// An immutable-by-convention label map: sorted (key, value) pairs, looked up by binary search.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kas {

class label_map {
public:
  using entry = std::pair<std::string, std::string>;
  label_map() = default;
  // Sorts, then interns: label maps built from the same labels share one immutable copy (see
  // identity()). Built when objects are decoded and compiled, never per scheduling cycle.
  explicit label_map(std::vector<entry> entries);
  const std::string* get(std::string_view key) const {
    const auto& es = entries();
    if (es.size() <= linear_scan_max) {
      // Objects carry a handful of labels: a scan that rejects on length first does one memcmp
      // (the match) where a binary search does one per probe. Selectors and spread constraints
      // look labels up for every pod on every node, so this is on the hot path.
      for (const auto& e : es)
        if (e.first.size() == key.size() && std::memcmp(e.first.data(), key.data(), key.size()) == 0) return &e.second;
      return nullptr;
    }
    auto it = std::lower_bound(es.begin(), es.end(), key, [](const entry& e, std::string_view k) { return e.first < k; });
    if (it != es.end() && it->first == key) return &it->second;
    return nullptr;
  }
  bool has(std::string_view key) const { return get(key) != nullptr; }
  const std::vector<entry>& entries() const { return data_ ? *data_ : no_entries(); }
  size_t size() const { return entries().size(); }
  bool empty() const { return entries().empty(); }
  bool operator==(const label_map& o) const { return data_ == o.data_ || entries() == o.entries(); }
  // Equal identities mean equal labels (interned copies); null for no labels. So a selector's
  // verdict on one label map holds for every map with the same identity: loops over many pods
  // memoize by it. Different identities may still be equal in content (a map made before its
  // twin's last holder died), which only costs a memo miss.
  const void* identity() const { return data_.get(); }

private:
  static constexpr size_t linear_scan_max = 12;
  static const std::vector<entry>& no_entries();
  std::shared_ptr<const std::vector<entry>> data_;
};

// A label map from a map of string pairs: the protobuf maps of metadata.labels and
// spec.nodeSelector, as the compilers of every kind read them.
template <class Map>
label_map to_label_map(const Map& m) {
  std::vector<label_map::entry> entries;
  entries.reserve(m.size());
  for (auto& [k, v] : m) entries.emplace_back(k, v);
  return label_map(std::move(entries));
}

// Namespace names as small integers, interned on first sight (namespaces are few and long-lived;
// the table is never shrunk). 0 is never an id.
uint32_t intern_namespace(std::string_view ns);

}  // namespace kas

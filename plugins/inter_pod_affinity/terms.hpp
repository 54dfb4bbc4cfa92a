#pragma once
// InterPodAffinity internals shared by filtering.cpp, scoring.cpp and the hints: term matching as
// kube's filtering.go / plugin.go do it, and topology-pair counters.
//
// Namespaces: the incoming pod's terms have their namespaceSelector resolved against the cluster's
// namespaces once per cycle (kube's mergeAffinityTermNamespacesIfNotEmpty), so they are matched with
// empty namespace labels. Existing pods' terms keep their selector and are matched with the
// incoming pod's namespace labels.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/node_info.hpp"
#include "plugins/framework/cycle_state.hpp"

namespace kas::plugins::ipa {

// kube matches with a nil labels.Set when it has no namespace labels; an empty map is the same.
const label_map& no_labels();
inline const label_map& labels_or_none(const label_map* l) { return l ? *l : no_labels(); }

// kube's podMatchesAllAffinityTerms: false for no terms; otherwise every term matches `pod`
// (namespace labels empty: the terms' selectors are merged already, or kube passes nil too).
bool pod_matches_all_terms(const std::vector<affinity_term>& terms, const pod_info& pod);

// kube's mergeAffinityTermNamespacesIfNotEmpty: a namespaceSelector that is neither empty (every
// namespace) nor absent is replaced by the names of the namespaces it selects now.
affinity_term merge_namespaces(const affinity_term& t, const cluster_objects& objects);
std::vector<affinity_term> merge_namespaces(const std::vector<affinity_term>& terms, const cluster_objects& objects);
std::vector<weighted_affinity_term> merge_namespaces(const std::vector<weighted_affinity_term>& terms,
                                                     const cluster_objects& objects);

// kube's topologyToMatchedTermCount: counts per (topology key, value); a count that drops to 0 is
// removed, so empty() is kube's len(m) == 0. Lookups take string_views without allocating.
//
// Few keys (a pod's terms), but per-node keys (hostname) hold a value per node with a matching pod
// and Filter looks one up per node: values are hashed string_views into strings this object owns.
class topology_counts {
public:
  topology_counts() = default;
  topology_counts(const topology_counts& o) { copy_from(o); }
  topology_counts& operator=(const topology_counts& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  // Adds `delta` at (key, node's value for key) when the node has the label.
  void update(const label_map& node_labels, const std::string& key, int64_t delta);
  // Adds `delta` at (key, value).
  void add(const std::string& key, std::string_view value, int64_t delta);
  int64_t get(std::string_view key, std::string_view value) const;
  bool empty() const { return keys_.empty(); }

private:
  struct per_key {
    std::string key;
    std::unordered_map<std::string_view, int64_t> values;  // views into storage_
  };
  std::vector<per_key> keys_;
  std::deque<std::string> storage_;  // stable addresses; a value zeroed and erased keeps its string
  void copy_from(const topology_counts& o);
};

// What one node's pods add per topology key, summed before it goes into a per-(key, value) map
// once per node and key: a PreFilter or PreScore over every pod then does a map update per node,
// not per matching pod. Few keys: a linear list, cleared and reused across nodes.
class key_deltas {
public:
  struct entry {
    const std::string* key;
    int64_t sum;
  };
  void add(const std::string& key, int64_t delta) {
    for (auto& e : entries_)
      if (e.key == &key || *e.key == key) {
        e.sum += delta;
        return;
      }
    entries_.push_back({&key, delta});
  }
  const std::vector<entry>& entries() const { return entries_; }
  void clear() { entries_.clear(); }
  // Into `counts` as update() per matching pod would have (the node's value for each key).
  void flush_into(topology_counts& counts, const label_map& node_labels) {
    for (auto& e : entries_) counts.update(node_labels, *e.key, e.sum);
    entries_.clear();
  }

private:
  std::vector<entry> entries_;
};

}  // namespace kas::plugins::ipa

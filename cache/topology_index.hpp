#pragma once
// topology_index: pod counts per topology domain, kept incrementally by the cache and published with
// every snapshot, so PodTopologySpread's PreFilter and PreScore cost O(domains) instead of a walk
// over every pod of the cluster (kube's calPreFilterState / processAllNode), and InterPodAffinity's
// PreFilter reads its required anti-affinity counts without one (see topology_index::kind).
//
// What is counted. A counter is keyed by (namespace, label selector, topology key). For every node of
// the snapshot that carries the topology key, it holds, per value of that key (a domain), the number
// of pods on those nodes that are in the namespace, not terminating, and matched by a non-empty
// selector: exactly kube's countPodsMatchSelector summed per domain. Beside the counters, a table per
// topology key holds the domains and how many nodes of the snapshot carry each, and how many carry
// the key at all; the index also counts the nodes with a NoSchedule/NoExecute taint. With those a
// plugin can tell whether the counter equals its full scan for a given pod (see
// plugins/pod_topology_spread/common.hpp, index_exact) and falls back to the scan when it cannot.
//
// Immutability. A snapshot holds a topology_index by value; it shares its tables and counters with
// the cache's working copy through shared_ptr<const ...>. The writer changes a table or counter only
// when no published snapshot shares it, and copies it first otherwise; inside, the per-domain arrays
// are chunked (cow_array), so a copy costs one chunk of 64 values plus the chunk pointers, never the
// whole 5000-domain array. Readers of older snapshots keep their counts.
//
// Which counters exist: the cache keeps one for every spread constraint and required anti-affinity
// term of the pods it places, up to topology_index_writer::max_counters, evicting the least recently
// seen (see scheduler_cache). A reader finding no counter, or an incomplete set, scans as before.
#include <array>
#include <atomic>
#include <cstdint>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/node_info.hpp"
#include "cache/selectors.hpp"

namespace kas {

// A persistent array: chunks of 64 values shared between copies; a write copies only the chunk it
// touches, and only when another copy still shares it. Reads of indexes past the end give T{}.
template <class T>
class cow_array {
public:
  static constexpr size_t chunk_size = 64;
  size_t size() const { return chunks_.size() * chunk_size; }
  const T& get(size_t i) const {
    static const T none{};
    return i / chunk_size < chunks_.size() ? (*chunks_[i / chunk_size])[i % chunk_size] : none;
  }
  // For the owner of this copy only (the cache's writer); grows the array as needed.
  T& mut(size_t i) {
    while (i / chunk_size >= chunks_.size()) chunks_.push_back(std::make_shared<chunk>());
    auto& slot = chunks_[i / chunk_size];
    if (slot.use_count() != 1) {
      slot = std::make_shared<chunk>(*slot);
    } else {
      // Sole owner: the last other holder released it with an acq_rel decrement.
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    return (*slot)[i % chunk_size];
  }

private:
  using chunk = std::array<T, chunk_size>;
  std::vector<std::shared_ptr<chunk>> chunks_;
};

// The canonical text of a selector: equal selectors give equal texts (requirements in order; a
// selector with the same requirements in another order only misses the index).
std::string selector_text(const label_selector& s);

class topology_index {
public:
  static constexpr size_t id_shards = 16;
  using id_map = std::unordered_map<std::string, uint32_t>;
  // The domains of one topology key. Domain ids are dense and reused after a domain loses its last
  // node; an id with node_count 0 is not a domain of this snapshot.
  struct table {
    std::string topology_key;
    cow_array<std::string> values;  // id -> label value
    cow_array<int32_t> nodes;       // id -> snapshot nodes with that value
    // value -> id, sharded by hash so that a new domain copies one shard, not the whole map.
    std::array<std::shared_ptr<const id_map>, id_shards> by_value;
    size_t ids = 0;                 // ids in [0, ids) have been handed out
    int64_t nodes_with_key = 0;     // snapshot nodes carrying topology_key
    static size_t shard_of(std::string_view v) { return std::hash<std::string_view>{}(v) % id_shards; }
    // The id of a domain of this snapshot, or -1.
    long id_of(const std::string& value) const {
      const auto& m = by_value[shard_of(value)];
      if (!m) return -1;
      auto it = m->find(value);
      return it == m->end() ? -1 : static_cast<long>(it->second);
    }
  };
  // What a counter counts, per domain of its key, over the pods on the snapshot's nodes that carry
  // the key (each pod weighs as below).
  enum class kind : uint8_t {
    // PodTopologySpread (kube's countPodsMatchSelector): 1 for a pod in namespace `ns`, not
    // terminating, matched by a non-empty `selector`.
    spread,
    // An incoming pod's required anti-affinity term with its namespaces merged (kube's
    // AffinityTerm.Matches with nil namespace labels): 1 for a pod whose namespace is in
    // `namespaces` (any, with all_namespaces) matched by `selector`. Terminating pods count.
    term,
    // Existing pods' required anti-affinity terms equal to `held`: a pod weighs how many such terms
    // it has. `refs` counts them on every node of the snapshot, with or without the key.
    held,
  };
  struct counter_key {
    kind what = kind::spread;
    std::string text;  // the identity: kind, namespaces, selector, key (see the writer's *_text)
    uint32_t ns = 0;   // spread: intern_namespace
    std::vector<std::string> namespaces;  // term: sorted
    bool all_namespaces = false;          // term
    affinity_term held;                   // held
    label_selector selector;              // spread, term
    bool counts_nothing = false;  // spread with an empty selector: kube counts no pod
    std::string topology_key;
  };
  struct counter {
    std::shared_ptr<const counter_key> key;
    cow_array<int32_t> counts;  // domain id of the key's table -> weight of the pods in it
    int64_t total = 0;          // the sum of counts
    int64_t refs = 0;           // held: terms on the snapshot's nodes, with or without the key
  };

  const table* find_table(std::string_view topology_key) const;
  std::shared_ptr<const table> find_table_shared(std::string_view topology_key) const;
  // The counter of identity `text` (see spread_text, term_text, held_text).
  std::shared_ptr<const counter> find(std::string_view text) const;
  // Snapshot nodes with a NoSchedule or NoExecute taint (nodeTaintsPolicy Honor can exclude only those).
  int64_t hard_tainted_nodes() const { return hard_tainted_nodes_; }
  // Required anti-affinity terms of the pods on the snapshot's nodes. When the held counters' refs
  // add up to it, every such term is in one of them (held_complete).
  int64_t held_terms() const { return held_terms_; }
  bool held_complete() const;
  // Pods on the snapshot's nodes with a required affinity term or a preferred (anti-)affinity term:
  // the only existing pods InterPodAffinity's PreScore can score by their own terms. Known only in
  // a snapshot the cache built (maintained()); otherwise nothing may be concluded from it.
  bool maintained() const { return maintained_; }
  int64_t pods_with_scoring_terms() const { return scoring_pods_; }
  size_t counter_count() const { return counters_.size(); }
  const counter& counter_at(size_t i) const { return *counters_[i]; }
  const std::shared_ptr<const counter>& counter_ptr(size_t i) const { return counters_[i]; }

private:
  friend class topology_index_writer;
  std::vector<std::shared_ptr<const table>> tables_;
  std::vector<std::shared_ptr<const counter>> counters_;
  int64_t hard_tainted_nodes_ = 0;
  int64_t held_terms_ = 0;
  int64_t scoring_pods_ = 0;
  bool maintained_ = false;
};

// Counter identities.
std::string spread_text(uint32_t ns, const label_selector& selector, std::string_view topology_key);
// For a merged incoming term: namespaces listed, or every namespace (an empty namespaceSelector);
// nullopt when the term still has a non-empty namespaceSelector (it depends on namespace labels).
std::optional<std::string> term_text(const affinity_term& merged);
std::string held_text(const affinity_term& t);
std::shared_ptr<const topology_index::counter_key> spread_key(const std::string& ns, const spread_constraint& c);
std::shared_ptr<const topology_index::counter_key> term_key(const affinity_term& t);  // null: not indexable
std::shared_ptr<const topology_index::counter_key> held_key(const affinity_term& t);
// Structural equality of terms (held counters compare a pod's terms with theirs).
bool same_term(const affinity_term& a, const affinity_term& b);

// The cache's side: keeps a topology_index (the one inside its working snapshot) equal to a full
// recount of that snapshot after every change. Not thread-safe; one owner (scheduler_cache).
//
// Contract: every change to the snapshot's nodes or to the pods on them is reported, after the
// snapshot holds it: node_changed for a node entering, leaving or changing in the snapshot (with
// the same pods before and after when both exist), pod_changed for a pod placed on or removed from
// a node of the snapshot. Pods on nodes outside the snapshot (the cache's ghosts) are not counted,
// as PodTopologySpread and InterPodAffinity do not see them.
class topology_index_writer {
public:
  static constexpr size_t default_max_counters = 32;
  explicit topology_index_writer(size_t max_counters = default_max_counters) : max_counters_(max_counters) {}

  // Takes charge of `ix` (an empty snapshot's): from now on its totals are maintained.
  void adopt(topology_index& ix) { ix.maintained_ = true; }
  void node_changed(topology_index& ix, const node_info* before, const node_info* after);
  void pod_changed(topology_index& ix, const node_info& node, const pod_info& p, int delta);
  // Keeps the counters a placed pod's kind will ask for: one per spread constraint, one per
  // required anti-affinity term (as the incoming term, and as a held one). Marks them used, or
  // builds them by counting every pod of the snapshot (`nodes` calls f(node_info) for each of its
  // nodes), evicting the least recently used counter beyond the cap.
  template <class ForEachNode>
  void track(topology_index& ix, const pod_info& p, ForEachNode&& nodes) {
    auto keep = [&](std::shared_ptr<const topology_index::counter_key> k) {
      if (k && ensure(ix, std::move(k))) nodes([&](const node_info& n) { count_new(ix, n); });
    };
    for (auto& c : p.spread_constraints) keep(spread_key(p.ns, c));
    for (auto& t : p.required_anti_affinity) {
      keep(term_key(t));
      keep(held_key(t));
    }
  }
  size_t max_counters() const { return max_counters_; }

private:
  struct counter_use {
    uint64_t last_used = 0;
    // The last label set matched, and the verdict. Held (not a bare identity) so that its identity
    // cannot be freed and reused by other labels while the memo trusts it.
    label_map memo_labels;
    bool memo_verdict = false;
  };
  // True when the counter was created (last in ix.counters_) and, if its table is new, the table
  // too: the caller then feeds every node to count_new.
  bool ensure(topology_index& ix, std::shared_ptr<const topology_index::counter_key> key);
  void count_new(topology_index& ix, const node_info& n);
  void evict(topology_index& ix, size_t i);
  size_t table_index(const topology_index& ix, std::string_view key) const;
  topology_index::table& mutable_table(topology_index& ix, size_t t);
  topology_index::counter& mutable_counter(topology_index& ix, size_t c);
  uint32_t domain_id(topology_index& ix, size_t t, const std::string& value);  // counts one more node
  void release_node(topology_index& ix, size_t t, const std::string& value);   // one node fewer
  long known_id(const topology_index& ix, const std::string& key, const std::string& value) const;
  // A pod's weight in counter c (see topology_index::kind), memoized per counter by label identity.
  int weight(size_t c, const topology_index::counter_key& k, const pod_key& pk, const pod_info& p);
  // Adds delta times the weight of the pods of `n` to counter c at `id` (or, id < 0, to refs only).
  void add_node_pods(topology_index& ix, size_t c, const node_info& n, long id, int delta, bool refs);

  size_t max_counters_;
  uint64_t clock_ = 0;
  std::unordered_map<std::string, std::vector<uint32_t>> free_ids_;  // by topology key; writer-only
  std::vector<counter_use> uses_;  // parallel to ix.counters_
  // A new counter whose table already existed: count_new fills only it; a new table: the table too.
  bool pending_table_ = false;
};

}  // namespace kas

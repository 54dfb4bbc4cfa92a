// InterPodAffinity PreFilter, PreFilterExtensions and Filter (kube's interpodaffinity/filtering.go).
//
// State: pre_filter_state holds three topology-pair counters and the incoming pod's required terms
// with their namespaceSelector resolved. AddPod/RemovePod change only the counters; clone() copies
// them, and shares the terms and labels, which nothing changes after PreFilter.
#include "plugins/inter_pod_affinity/inter_pod_affinity.hpp"
#include "plugins/inter_pod_affinity/terms.hpp"

namespace kas::plugins {

namespace {

using ipa::topology_counts;

struct required_terms {
  std::vector<affinity_term> affinity;       // merged namespaces
  std::vector<affinity_term> anti_affinity;  // merged namespaces
  label_map ns_labels;                       // the incoming pod's namespace labels
};

// Counts read from the snapshot's topology index instead of a map: the sum of `counters` at the
// domain of one topology key. Index counts are never negative, so a sum is > 0 exactly when some
// counter's is, and the (key, value) pairs with a non-zero sum are the map's entries.
struct index_view {
  std::shared_ptr<const topology_index::table> table;
  std::vector<std::shared_ptr<const topology_index::counter>> counters;
  int64_t get(const std::string& value) const {
    const long id = table->id_of(value);
    if (id < 0) return 0;
    int64_t sum = 0;
    for (const auto& c : counters) sum += c->counts.get(static_cast<size_t>(id));
    return sum;
  }
};

// The view of `key` in `views`, created empty if absent.
index_view& view_of(std::vector<index_view>& views, const topology_index& ix, const std::string& key) {
  for (auto& v : views)
    if (v.table->topology_key == key) return v;
  views.push_back({ix.find_table_shared(key), {}});
  return views.back();
}

struct pre_filter_state final : fw::state_data {
  // Topology pairs -> existing pods whose required anti-affinity terms match the incoming pod.
  topology_counts existing_anti_affinity;
  // Topology pairs -> existing pods that match all the incoming pod's required affinity terms.
  topology_counts affinity;
  // Topology pairs -> existing pods that match the incoming pod's required anti-affinity terms.
  topology_counts anti_affinity;
  std::shared_ptr<const required_terms> terms;
  // When non-empty (anti_indexed), existing_anti_affinity's (anti_affinity's) counts are these
  // views' plus the map's: PreFilter leaves the map empty, and AddPod/RemovePod write their deltas
  // to it, so a count is kube's, the index's value plus the changes since. (kube's map emptiness
  // only shortcuts Filter, and decides PreFilter's Skip, before any change.) One view per key.
  std::vector<index_view> existing_views, anti_views;
  bool anti_indexed = false;

  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_filter_state>(*this); }

  bool existing_empty() const { return existing_views.empty() && existing_anti_affinity.empty(); }
  static int64_t view_get(const std::vector<index_view>& views, const std::string& key, const std::string& value) {
    for (const auto& v : views)
      if (v.table->topology_key == key) return v.get(value);
    return 0;
  }
  int64_t anti_get(const std::string& key, const std::string& value) const {
    return view_get(anti_views, key, value) + anti_affinity.get(key, value);
  }

  // kube's preFilterState.updateWithPod.
  void update_with_pod(const pod_info& incoming, const pod_info& other, const label_map& node_labels, int64_t mult) {
    for (const auto& t : other.required_anti_affinity)
      if (t.matches(incoming, &terms->ns_labels)) existing_anti_affinity.update(node_labels, t.topology_key, mult);
    if (ipa::pod_matches_all_terms(terms->affinity, other))
      for (const auto& t : terms->affinity) affinity.update(node_labels, t.topology_key, mult);
    for (const auto& t : terms->anti_affinity)
      if (t.matches(other, &ipa::no_labels())) anti_affinity.update(node_labels, t.topology_key, mult);
  }
};

std::string read_error(std::string_view key) {
  return "error reading \"" + std::string(key) + "\" from cycleState: not found";
}

// Existing pods' anti-affinity from the index, when its held counters cover every required
// anti-affinity term on the snapshot's nodes (topology_index::held_complete): kube adds 1 at the
// term's topology pair for each term of an existing pod that matches the incoming pod, and a held
// counter holds, per domain, how many terms equal to its own the pods there have; equal terms
// match alike, so summing the counters whose term matches gives kube's counts. O(held counters).
bool index_existing_anti_affinity(const pod_info& pod, const snapshot& snap, pre_filter_state& s) {
  const topology_index& ix = snap.topology();
  if (ix.held_terms() == 0 || !ix.held_complete()) return false;
  for (size_t c = 0; c < ix.counter_count(); ++c) {
    const auto& counter = ix.counter_ptr(c);
    if (counter->key->what != topology_index::kind::held || counter->total == 0) continue;
    if (!counter->key->held.matches(pod, &s.terms->ns_labels)) continue;
    view_of(s.existing_views, ix, counter->key->topology_key).counters.push_back(counter);
  }
  return true;
}

// The incoming pod's anti-affinity terms from the index, when each has a term counter: those
// count, per domain, the pods on nodes carrying the term's key that the merged term matches,
// which is what count_incoming_terms adds per term. O(terms).
bool index_incoming_anti_affinity(const snapshot& snap, pre_filter_state& s) {
  const topology_index& ix = snap.topology();
  const auto& anti = s.terms->anti_affinity;
  if (anti.empty() || ix.counter_count() == 0) return false;
  std::vector<std::shared_ptr<const topology_index::counter>> found;
  for (const auto& t : anti) {
    auto text = term_text(t);
    auto counter = text ? ix.find(*text) : nullptr;
    if (!counter) return false;
    found.push_back(std::move(counter));
  }
  for (size_t i = 0; i < anti.size(); ++i)
    view_of(s.anti_views, ix, anti[i].topology_key).counters.push_back(std::move(found[i]));
  s.anti_indexed = true;
  return true;
}

// Existing pods' anti-affinity, and the node labels they count under.
void count_existing_anti_affinity(const pod_info& pod, const snapshot& snap, pre_filter_state& s) {
  // Only nodes holding a pod with required anti-affinity can contribute (kube's
  // HavePodsWithRequiredAntiAffinityList).
  ipa::key_deltas d;
  for (uint32_t i : snap.nodes_with_required_anti_affinity_pods()) {
    const node_info& n = snap.node(i);
    for (const auto& existing : n.pods_with_required_anti_affinity)
      for (const auto& t : existing->required_anti_affinity)
        if (t.matches(pod, &s.terms->ns_labels)) d.add(t.topology_key, 1);
    d.flush_into(s.existing_anti_affinity, n.labels);
  }
}

void count_incoming_terms(const snapshot& snap, pre_filter_state& s) {
  static const std::vector<affinity_term> none;
  const auto& aff = s.terms->affinity;
  const auto& anti = s.anti_indexed ? none : s.terms->anti_affinity;
  if (aff.empty() && anti.empty()) return;
  ipa::key_deltas in_aff, in_anti;
  for (size_t i = 0; i < snap.size(); ++i) {
    const node_info& n = snap.node(i);
    for (const auto& existing : n.pods) {
      if (ipa::pod_matches_all_terms(aff, *existing))
        for (const auto& t : aff) in_aff.add(t.topology_key, 1);
      for (const auto& t : anti)
        if (t.matches(*existing, &ipa::no_labels())) in_anti.add(t.topology_key, 1);
    }
    in_aff.flush_into(s.affinity, n.labels);
    in_anti.flush_into(s.anti_affinity, n.labels);
  }
}

// kube's satisfyExistingPodsAntiAffinity.
bool satisfies_existing_pods_anti_affinity(const pre_filter_state& s, const node_info& node) {
  if (s.existing_empty()) return true;
  if (!s.existing_views.empty() && s.existing_anti_affinity.empty()) {
    // Only the views' keys have pairs: the node's value of each.
    for (const auto& v : s.existing_views) {
      const std::string* value = node.labels.get(v.table->topology_key);
      if (value && v.get(*value) > 0) return false;
    }
    return true;
  }
  for (const auto& [k, v] : node.labels.entries())
    if (pre_filter_state::view_get(s.existing_views, k, v) + s.existing_anti_affinity.get(k, v) > 0) return false;
  return true;
}

// kube's satisfyPodAntiAffinity.
bool satisfies_pod_anti_affinity(const pre_filter_state& s, const node_info& node) {
  if (!s.anti_indexed && s.anti_affinity.empty()) return true;
  for (const auto& t : s.terms->anti_affinity) {
    const std::string* v = node.labels.get(t.topology_key);
    if (v && s.anti_get(t.topology_key, *v) > 0) return false;
  }
  return true;
}

// kube's satisfyPodAffinity.
bool satisfies_pod_affinity(const pre_filter_state& s, const pod_info& pod, const node_info& node) {
  bool pods_exist = true;
  for (const auto& t : s.terms->affinity) {
    const std::string* v = node.labels.get(t.topology_key);
    if (!v) return false;  // every topology key must be on the node
    if (s.affinity.get(t.topology_key, *v) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  // The first pod of a group with affinity to itself: no pod anywhere matches the terms, but the
  // pod matches them itself, so it may go to any node that has the topology keys.
  return s.affinity.empty() && ipa::pod_matches_all_terms(s.terms->affinity, pod);
}

}  // namespace

fw::status inter_pod_affinity::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                          fw::pre_filter_result&) const {
  auto terms = std::make_shared<required_terms>();
  terms->affinity = ipa::merge_namespaces(pod.required_affinity, snap.objects());
  terms->anti_affinity = ipa::merge_namespaces(pod.required_anti_affinity, snap.objects());
  terms->ns_labels = ipa::labels_or_none(snap.objects().namespace_labels_of(pod.ns));

  auto s = std::make_shared<pre_filter_state>();
  s->terms = std::move(terms);
  if (!index_existing_anti_affinity(pod, snap, *s)) count_existing_anti_affinity(pod, snap, *s);
  index_incoming_anti_affinity(snap, *s);
  count_incoming_terms(snap, *s);

  if (s->existing_empty() && pod.required_affinity.empty() && pod.required_anti_affinity.empty())
    return fw::status::skip();
  state.write(pre_filter_key, std::move(s));
  return fw::status::ok();
}

fw::status inter_pod_affinity::add_pod(fw::cycle_state& state, const pod_info& pod_to_schedule,
                                       const pod_info& pod_to_add, const node_info& node) const {
  auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  if (!s) return fw::status::error(read_error(pre_filter_key));
  s->update_with_pod(pod_to_schedule, pod_to_add, node.labels, 1);
  return fw::status::ok();
}

fw::status inter_pod_affinity::remove_pod(fw::cycle_state& state, const pod_info& pod_to_schedule,
                                          const pod_info& pod_to_remove, const node_info& node) const {
  auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  if (!s) return fw::status::error(read_error(pre_filter_key));
  s->update_with_pod(pod_to_schedule, pod_to_remove, node.labels, -1);
  return fw::status::ok();
}

fw::status inter_pod_affinity::filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const {
  const auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  if (!s) return fw::status::error(read_error(pre_filter_key));
  if (!satisfies_pod_affinity(*s, pod, node)) return fw::status::unresolvable(err_reason_affinity);
  if (!satisfies_pod_anti_affinity(*s, node)) return fw::status::unschedulable(err_reason_anti_affinity);
  if (!satisfies_existing_pods_anti_affinity(*s, node))
    return fw::status::unschedulable(err_reason_existing_anti_affinity);
  return fw::status::ok();
}

}  // namespace kas::plugins

// InterPodAffinity PreScore, Score and NormalizeScore (kube's interpodaffinity/scoring.go).
//
// PreScore sums, per topology pair, the weights of preferred terms that match across the incoming
// pod and every existing pod (positive for affinity, negative for anti-affinity); a node scores the
// sum over the pairs of its labels.
#include <limits>
#include <unordered_map>

#include "plugins/inter_pod_affinity/inter_pod_affinity.hpp"
#include "plugins/inter_pod_affinity/terms.hpp"

namespace kas::plugins {

namespace {

// kube's scoreMap: topology key -> value -> summed weight. An entry exists once a term matched,
// even when its sum is 0. Hashed: with a per-node key (hostname) it holds an entry per node that
// has a matching pod, and Score looks one up per node.
using score_map = std::unordered_map<std::string, std::unordered_map<std::string, int64_t>>;

using ipa::key_deltas;

struct pre_score_state final : fw::state_data {
  score_map topology_score;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_score_state>(*this); }
};

// The incoming pod's side of a cycle, fixed before the existing pods are visited.
struct incoming_pod {
  const pod_info& pod;
  std::vector<weighted_affinity_term> preferred_affinity;       // merged namespaces
  std::vector<weighted_affinity_term> preferred_anti_affinity;  // merged namespaces
  const label_map& ns_labels;
};

void process_term(key_deltas& d, const affinity_term& t, int32_t weight, const pod_info& pod,
                  const label_map& ns_labels, int32_t multiplier) {
  if (t.matches(pod, &ns_labels)) d.add(t.topology_key, static_cast<int64_t>(weight * multiplier));
}

void process_terms(key_deltas& d, const std::vector<weighted_affinity_term>& terms, const pod_info& pod,
                   const label_map& ns_labels, int32_t multiplier) {
  for (const auto& t : terms) process_term(d, t.term, t.weight, pod, ns_labels, multiplier);
}

// kube's processExistingPod, into the node's deltas.
void process_existing_pod(key_deltas& d, const incoming_pod& in, const pod_info& existing, int32_t hard_weight) {
  // The incoming pod's preferred terms, matched against the existing pod (namespaces merged).
  process_terms(d, in.preferred_affinity, existing, ipa::no_labels(), 1);
  process_terms(d, in.preferred_anti_affinity, existing, ipa::no_labels(), -1);
  // The existing pod's terms, matched against the incoming pod and its namespace's labels.
  if (hard_weight > 0)
    for (const auto& t : existing.required_affinity) process_term(d, t, hard_weight, in.pod, in.ns_labels, 1);
  process_terms(d, existing.preferred_affinity, in.pod, in.ns_labels, 1);
  process_terms(d, existing.preferred_anti_affinity, in.pod, in.ns_labels, -1);
}

// A node's deltas into the map: a term counts on the node's value of its topology key, and not at
// all on a node without that label (as kube's processTerm).
void flush_deltas(score_map& m, key_deltas& d, const label_map& node_labels) {
  for (auto& e : d.entries())
    if (const std::string* v = node_labels.get(*e.key)) m[*e.key][*v] += e.sum;
  d.clear();
}

std::string read_error(std::string_view key) {
  return "failed to read \"" + std::string(key) + "\" from cycleState: not found";
}

}  // namespace

fw::status inter_pod_affinity::pre_score(fw::cycle_state& state, const pod_info& pod,
                                         const std::vector<const node_info*>& nodes) const {
  const bool has_constraints = !pod.preferred_affinity.empty() || !pod.preferred_anti_affinity.empty();
  // Optionally ignore the existing pods' preferences when the incoming pod has none.
  if (args_.ignore_preferred_terms_of_existing_pods && !has_constraints) return fw::status::skip();

  // kube walks every node of the cycle's snapshot. A cycle_state built by hand has none: the nodes
  // handed in are the best available.
  static const cluster_objects no_objects;
  const snapshot* snap = state.snapshot();
  // Without preferred terms of its own, only existing pods with a required affinity or preferred
  // term can add a score; when the cache's snapshot counts none, every visit below adds nothing,
  // the map stays empty and PreScore skips: skip now instead of visiting them.
  if (snap && !has_constraints && snap->topology().maintained() && snap->topology().pods_with_scoring_terms() == 0)
    return fw::status::skip();
  const cluster_objects& objects = snap ? snap->objects() : no_objects;
  const incoming_pod in{pod, ipa::merge_namespaces(pod.preferred_affinity, objects),
                        ipa::merge_namespaces(pod.preferred_anti_affinity, objects),
                        ipa::labels_or_none(objects.namespace_labels_of(pod.ns))};

  auto s = std::make_shared<pre_score_state>();
  key_deltas deltas;
  auto visit = [&](const node_info& n) {
    if (n.labels.empty()) return;
    // Unless the incoming pod has preferred terms, only pods with affinity terms can add a score.
    auto each = [&](const auto& pods) {
      for (const auto& existing : pods) process_existing_pod(deltas, in, *existing, args_.hard_pod_affinity_weight);
    };
    if (has_constraints)
      each(n.pods);
    else
      each(n.pods_with_affinity);
    flush_deltas(s->topology_score, deltas, n.labels);
  };
  if (snap && !has_constraints) {
    // Only pods with affinity terms can add a score: visit just their nodes (kube's
    // HavePodsWithAffinityList).
    for (uint32_t i : snap->nodes_with_affinity_pods()) visit(snap->node(i));
  } else if (snap) {
    for (size_t i = 0; i < snap->size(); ++i) visit(snap->node(i));
  } else {
    for (const node_info* n : nodes) visit(*n);
  }
  if (s->topology_score.empty()) return fw::status::skip();
  state.write(pre_score_key, std::move(s));
  return fw::status::ok();
}

fw::status inter_pod_affinity::score(const fw::cycle_state& state, const pod_info&, const node_info& node,
                                     int64_t& out) const {
  const auto* s = state.read_as<pre_score_state>(pre_score_key);
  if (!s) return fw::status::error(read_error(pre_score_key));
  out = 0;
  for (const auto& [key, values] : s->topology_score) {
    const std::string* v = node.labels.get(key);
    if (!v) continue;
    auto it = values.find(*v);
    if (it != values.end()) out += it->second;
  }
  return fw::status::ok();
}

fw::status inter_pod_affinity::normalize_score(const fw::cycle_state& state, const pod_info&,
                                               std::vector<fw::node_score>& scores) const {
  const auto* s = state.read_as<pre_score_state>(pre_score_key);
  if (!s) return fw::status::error(read_error(pre_score_key));
  if (s->topology_score.empty()) return fw::status::ok();
  int64_t min_count = std::numeric_limits<int64_t>::max();
  int64_t max_count = std::numeric_limits<int64_t>::min();
  for (const auto& ns : scores) {
    if (ns.score > max_count) max_count = ns.score;
    if (ns.score < min_count) min_count = ns.score;
  }
  const int64_t diff = max_count - min_count;
  for (auto& ns : scores) {
    // Same float64 arithmetic as kube, so truncation matches.
    double f = 0;
    if (diff > 0)
      f = static_cast<double>(fw::max_node_score) *
          (static_cast<double>(ns.score - min_count) / static_cast<double>(diff));
    ns.score = static_cast<int64_t>(f);
  }
  return fw::status::ok();
}

}  // namespace kas::plugins

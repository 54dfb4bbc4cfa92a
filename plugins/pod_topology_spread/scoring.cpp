// PodTopologySpread PreScore, Score and NormalizeScore (kube's podtopologyspread/scoring.go).
#include <climits>
#include <cmath>

#include "plugins/pod_topology_spread/common.hpp"
#include "plugins/pod_topology_spread/pod_topology_spread.hpp"
#include "plugins/pod_topology_spread/state.hpp"

namespace kas::plugins {

namespace {

constexpr int64_t invalid_score = -1;

// kube's topologyNormalizingWeight: log(size + 2), so the counts of small topologies are not watered
// down by big ones.
double topology_normalizing_weight(size_t size) { return std::log(static_cast<double>(size) + 2.0); }

// kube's scoreForCount: `maxSkew - 1` is added so that small differences between domains are
// tolerated.
double score_for_count(int64_t count, int32_t max_skew, double weight) {
  return static_cast<double>(count) * weight + static_cast<double>(max_skew - 1);
}

// kube's initPreScoreState over the feasible nodes: ignored nodes, one counter per topology value
// seen on a feasible node, and the per-constraint weights.
void init_pre_score(pts::pre_score_data& d, const std::vector<const node_info*>& feasible, bool require_all) {
  const size_t n = d.constraints.size();
  d.topology_value_to_pod_counts.resize(n);
  std::vector<size_t> topo_size(n, 0);
  for (const node_info* node : feasible) {
    if (require_all && !pts::node_has_all_topology_keys(node->labels, d.constraints)) {
      d.ignored_nodes.insert(node->name);
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      const auto& c = d.constraints[i];
      if (c.topology_key == pts::label_hostname) continue;  // counted per node at Score
      if (d.topology_value_to_pod_counts[i].emplace(pts::label_value(node->labels, c.topology_key), 0).second)
        ++topo_size[i];
    }
  }
  d.topology_normalizing_weight.resize(n);
  for (size_t i = 0; i < n; ++i) {
    size_t size = topo_size[i];
    if (d.constraints[i].topology_key == pts::label_hostname) size = feasible.size() - d.ignored_nodes.size();
    d.topology_normalizing_weight[i] = topology_normalizing_weight(size);
  }
}

// Adds one node's matching pods to the counters of its topology values (kube's processAllNode).
void count_node(pts::pre_score_data& d, const pod_info& pod, const node_info& node, bool require_all,
                std::vector<pts::selector_counter>& counters) {
  if (require_all && !pts::node_has_all_topology_keys(node.labels, d.constraints)) return;
  for (size_t i = 0; i < d.constraints.size(); ++i) {
    const auto& c = d.constraints[i];
    if (!pts::match_node_inclusion_policies(c, pod, node)) continue;
    auto& counts = d.topology_value_to_pod_counts[i];
    // Only topology values of feasible nodes are counted.
    auto it = counts.find(pts::label_value(node.labels, c.topology_key));
    if (it == counts.end()) continue;
    it->second += counters[i].count(node.pods);
  }
}

}  // namespace

fw::status pod_topology_spread::pre_score(fw::cycle_state& state, const pod_info& pod,
                                          const std::vector<const node_info*>& nodes) const {
  // Every node of the cycle's snapshot (kube lists them from the shared lister). A cycle_state built
  // by hand has none: the feasible nodes stand in, without cluster objects.
  const snapshot* snap = state.snapshot();
  static const cluster_objects no_objects;
  const cluster_objects& objects = snap ? snap->objects() : no_objects;
  const size_t all_count = snap ? snap->size() : nodes.size();
  if (all_count == 0) return fw::status::skip();

  auto d = std::make_shared<pts::pre_score_data>();
  // Only non-system-default constraints require every topology label, so that nodes without a zone
  // label still get hostname spreading.
  const bool require_all = !pod.spread_constraints.empty() || !system_defaulted_;
  d->constraints = pts::constraints_for(pod, false, defaults_, objects);
  if (d->constraints.empty()) return fw::status::skip();
  d->ns = intern_namespace(pod.ns);
  init_pre_score(*d, nodes, require_all);

  auto indexed = snap ? pts::exact_counters(*snap, pod, d->constraints, require_all, true)
                      : std::vector<const topology_index::counter*>{};
  if (!indexed.empty()) {
    // O(domains): the counter's count of a domain is what count_node sums over its nodes
    // (pts::exact_counters says why); only domains of feasible nodes have entries to fill.
    for (size_t i = 0; i < d->constraints.size(); ++i) {
      if (!indexed[i]) continue;  // hostname: counted per node at Score
      const auto* table = snap->topology().find_table(d->constraints[i].topology_key);
      auto& counts = d->topology_value_to_pod_counts[i];
      for (size_t id = 0; id < table->ids && !counts.empty(); ++id) {
        if (table->nodes.get(id) == 0) continue;
        auto it = counts.find(table->values.get(id));
        if (it != counts.end()) it->second = indexed[i]->counts.get(id);
      }
    }
    auto s = std::make_shared<pts::pre_score_state>();
    s->data = std::move(d);
    state.write(pre_score_key, std::move(s));
    return fw::status::ok();
  }

  std::vector<pts::selector_counter> counters;
  counters.reserve(d->constraints.size());
  for (const auto& c : d->constraints) counters.emplace_back(c.selector, pod.ns);
  if (snap) {
    for (size_t k = 0; k < snap->size(); ++k) count_node(*d, pod, snap->node(k), require_all, counters);
  } else {
    for (const node_info* node : nodes) count_node(*d, pod, *node, require_all, counters);
  }
  auto s = std::make_shared<pts::pre_score_state>();
  s->data = std::move(d);
  state.write(pre_score_key, std::move(s));
  return fw::status::ok();
}

fw::status pod_topology_spread::score(const fw::cycle_state& state, const pod_info&, const node_info& node,
                                      int64_t& out) const {
  out = 0;
  const auto* s = state.read_as<pts::pre_score_state>(pre_score_key);
  if (!s || !s->data) return fw::status::error("error reading \"PreScorePodTopologySpread\" from cycleState: not found");
  const auto& d = *s->data;
  if (d.ignored_nodes.count(node.name)) return fw::status::ok();
  double score = 0;
  for (size_t i = 0; i < d.constraints.size(); ++i) {
    const auto& c = d.constraints[i];
    const std::string* value = node.labels.get(c.topology_key);
    if (!value) continue;
    int64_t count = 0;
    if (c.topology_key == pts::label_hostname) {
      // countPodsMatchSelector on this node; the namespace was interned once at PreScore, not
      // per node (interning takes a shared lock).
      count = pts::selector_counter(c.selector, d.ns).count(node.pods);
    } else {
      auto it = d.topology_value_to_pod_counts[i].find(*value);
      if (it != d.topology_value_to_pod_counts[i].end()) count = it->second;
    }
    score += score_for_count(count, c.max_skew, d.topology_normalizing_weight[i]);
  }
  out = static_cast<int64_t>(std::round(score));  // Go's math.Round: half away from zero
  return fw::status::ok();
}

fw::status pod_topology_spread::normalize_score(const fw::cycle_state& state, const pod_info&,
                                                std::vector<fw::node_score>& scores) const {
  const auto* s = state.read_as<pts::pre_score_state>(pre_score_key);
  if (!s || !s->data) return fw::status::error("error reading \"PreScorePodTopologySpread\" from cycleState: not found");
  const auto& ignored = s->data->ignored_nodes;
  int64_t min_score = INT64_MAX;
  int64_t max_score = 0;
  for (auto& ns : scores) {
    if (ignored.count(ns.name)) {
      ns.score = invalid_score;
      continue;
    }
    min_score = std::min(min_score, ns.score);
    max_score = std::max(max_score, ns.score);
  }
  for (auto& ns : scores) {
    if (ns.score == invalid_score) {
      ns.score = 0;
    } else if (max_score == 0) {
      ns.score = fw::max_node_score;
    } else {
      ns.score = fw::max_node_score * (max_score + min_score - ns.score) / max_score;
    }
  }
  return fw::status::ok();
}

}  // namespace kas::plugins

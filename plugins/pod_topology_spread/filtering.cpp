// PodTopologySpread PreFilter, AddPod/RemovePod and Filter (kube's podtopologyspread/filtering.go).
#include <utility>

#include "plugins/pod_topology_spread/common.hpp"
#include "plugins/pod_topology_spread/pod_topology_spread.hpp"
#include "plugins/pod_topology_spread/state.hpp"

namespace kas::plugins {

namespace pts {

void critical_paths::update(const std::string& value, int num) {
  int i = value == p[0].value ? 0 : value == p[1].value ? 1 : -1;
  if (i >= 0) {
    p[i].match_num = num;
    if (p[0].match_num > p[1].match_num) std::swap(p[0], p[1]);
  } else if (num < p[0].match_num) {
    p[1] = p[0];
    p[0].value = value;
    p[0].match_num = num;
  } else if (num < p[1].match_num) {
    p[1].value = value;
    p[1].match_num = num;
  }
}

}  // namespace pts

namespace {

constexpr std::string_view err_no_state = "reading \"PreFilterPodTopologySpread\" from cycleState: not found";

// kube's calPreFilterState's count: over every node of the snapshot and every pod on it.
void count_by_scan(pts::pre_filter_state& s, const pod_info& pod, const snapshot& snap,
                   const std::vector<spread_constraint>& constraints);

// kube's calPreFilterState over every node of the snapshot: from the snapshot's topology index when
// it is exact for this pod, else by scanning.
std::shared_ptr<pts::pre_filter_state> cal_pre_filter_state(const pod_info& pod, const snapshot& snap,
                                                           std::vector<spread_constraint> constraints) {
  auto s = std::make_shared<pts::pre_filter_state>();
  const size_t n = constraints.size();
  s->tp_value_to_match_num.resize(n);
  s->paths.resize(n);
  auto indexed = pts::exact_counters(snap, pod, constraints, true, false);
  if (!indexed.empty()) {
    // O(domains): every domain of an eligible node gets its count (pts::exact_counters says why
    // these are the scan's counts; with every node eligible, the domains are the table's).
    for (size_t i = 0; i < n; ++i) {
      const auto* table = snap.topology().find_table(constraints[i].topology_key);
      auto& counts = s->tp_value_to_match_num[i];
      for (size_t id = 0; id < table->ids; ++id)
        if (table->nodes.get(id) > 0) counts[table->values.get(id)] = indexed[i]->counts.get(id);
    }
  } else {
    count_by_scan(*s, pod, snap, constraints);
  }
  for (size_t i = 0; i < n; ++i)
    for (auto& [value, num] : s->tp_value_to_match_num[i]) s->paths[i].update(value, num);
  s->self_labels = pod.labels;
  s->self_match.reserve(n);
  for (const auto& c : constraints) s->self_match.push_back(c.selector.matches(pod.labels) ? 1 : 0);
  s->constraints = std::make_shared<const std::vector<spread_constraint>>(std::move(constraints));
  return s;
}

void count_by_scan(pts::pre_filter_state& s, const pod_info& pod, const snapshot& snap,
                   const std::vector<spread_constraint>& constraints) {
  const size_t n = constraints.size();
  std::vector<pts::selector_counter> counters;
  counters.reserve(n);
  for (const auto& c : constraints) counters.emplace_back(c.selector, pod.ns);
  for (size_t k = 0; k < snap.size(); ++k) {
    const node_info& node = snap.node(k);
    if (!pts::node_has_all_topology_keys(node.labels, constraints)) continue;
    for (size_t i = 0; i < n; ++i) {
      const auto& c = constraints[i];
      if (!pts::match_node_inclusion_policies(c, pod, node)) continue;
      const std::string& value = pts::label_value(node.labels, c.topology_key);
      s.tp_value_to_match_num[i][value] += counters[i].count(node.pods);
    }
  }
}

}  // namespace

fw::status pod_topology_spread::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                           fw::pre_filter_result&) const {
  auto constraints = pts::constraints_for(pod, true, defaults_, snap.objects());
  if (constraints.empty()) return fw::status::skip();
  state.write(pre_filter_key, cal_pre_filter_state(pod, snap, std::move(constraints)));
  return fw::status::ok();
}

fw::status pod_topology_spread::update_with_pod(fw::cycle_state& state, const pod_info& updated,
                                                const pod_info& preemptor, const node_info& node, int delta) const {
  auto* s = state.read_as<pts::pre_filter_state>(pre_filter_key);
  if (!s) return fw::status::error(err_no_state);
  if (updated.ns != preemptor.ns) return fw::status::ok();
  const auto& constraints = *s->constraints;
  if (!pts::node_has_all_topology_keys(node.labels, constraints)) return fw::status::ok();
  for (size_t i = 0; i < constraints.size(); ++i) {
    const auto& c = constraints[i];
    // kube uses Selector.Matches here (not countPodsMatchSelector), so terminating pods and empty
    // selectors count.
    if (!c.selector.matches(updated.labels)) continue;
    if (!pts::match_node_inclusion_policies(c, preemptor, node)) continue;
    const std::string& value = pts::label_value(node.labels, c.topology_key);
    int& num = s->tp_value_to_match_num[i][value];
    num += delta;
    s->paths[i].update(value, num);
  }
  return fw::status::ok();
}

fw::status pod_topology_spread::add_pod(fw::cycle_state& state, const pod_info& pod_to_schedule,
                                        const pod_info& pod_to_add, const node_info& node) const {
  return update_with_pod(state, pod_to_add, pod_to_schedule, node, 1);
}

fw::status pod_topology_spread::remove_pod(fw::cycle_state& state, const pod_info& pod_to_schedule,
                                           const pod_info& pod_to_remove, const node_info& node) const {
  return update_with_pod(state, pod_to_remove, pod_to_schedule, node, -1);
}

fw::status pod_topology_spread::filter(const fw::cycle_state& state, const pod_info& pod,
                                       const node_info& node) const {
  const auto* s = state.read_as<pts::pre_filter_state>(pre_filter_key);
  if (!s) return fw::status::error(err_no_state);
  if (!s->constraints || s->constraints->empty()) return fw::status::ok();
  const auto& constraints = *s->constraints;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const auto& c = constraints[i];
    const std::string* value = node.labels.get(c.topology_key);
    if (!value) return fw::status::unresolvable(err_reason_node_label_not_match);
    // existing matching pods + self-match - global minimum must not exceed maxSkew.
    const int min_match = s->min_match_num(i, c.min_domains);
    const bool same_pod = s->self_labels.identity() == pod.labels.identity() && s->self_match.size() == constraints.size();
    const int self_match = same_pod ? s->self_match[i] : c.selector.matches(pod.labels) ? 1 : 0;
    const auto& counts = s->tp_value_to_match_num[i];
    auto it = counts.find(*value);
    const int match = it == counts.end() ? 0 : it->second;
    if (static_cast<int64_t>(match) + self_match - min_match > c.max_skew)
      return fw::status::unschedulable(err_reason_constraints_not_match);
  }
  return fw::status::ok();
}

}  // namespace kas::plugins

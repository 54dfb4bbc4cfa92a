#include "plugins/pod_topology_spread/common.hpp"

#include <map>

#include "plugins/node_affinity/node_affinity.hpp"
#include "plugins/taint_toleration/taint_toleration.hpp"

namespace kas::plugins::pts {

namespace {

const workload_selector* find_workload(const cluster_objects& objects, std::string_view kind, const std::string& ns,
                                       const std::string& name) {
  for (auto& w : objects.workloads)
    if (w.kind == kind && w.ns == ns && w.name == name) return &w;
  return nullptr;
}

// labels.Merge of a map-shaped selector (Service / ReplicationController spec.selector): its
// single-value In requirements are the map's entries. Anything else is kept as a requirement.
void merge_map_selector(const label_selector& s, std::map<std::string, std::string>& set,
                        std::vector<selector_requirement>& extra) {
  for (auto& r : s.requirements) {
    if (r.op == selector_op::in && r.values.size() == 1)
      set[r.key] = r.values.front();
    else
      extra.push_back(r);
  }
}

// metav1.GetControllerOf: the first owner reference with controller: true.
const k8s::meta::OwnerReference* controller_of(const pod_info& pod) {
  if (!pod.pod) return nullptr;
  for (auto& ref : pod.pod->metadata().owner_references())
    if (ref.controller()) return &ref;
  return nullptr;
}

}  // namespace

label_selector default_selector(const pod_info& pod, const cluster_objects& objects) {
  std::map<std::string, std::string> set;
  std::vector<selector_requirement> extra;
  for (auto& w : objects.workloads) {
    // Services with a nil selector match nothing, not everything (kube's GetPodServices).
    if (w.kind != "Service" || w.ns != pod.ns || w.selector.nothing) continue;
    if (w.selector.matches(pod.labels)) merge_map_selector(w.selector, set, extra);
  }
  if (const auto* owner = controller_of(pod)) {
    // The owner's group/version and kind must be exactly core/v1 ReplicationController or
    // apps/v1 ReplicaSet / StatefulSet (kube compares the parsed GroupVersionKind).
    const std::string& api = owner->api_version();
    const std::string& kind = owner->kind();
    if (api == "v1" && kind == "ReplicationController") {
      if (auto* rc = find_workload(objects, kind, pod.ns, owner->name()); rc && !rc->selector.nothing)
        merge_map_selector(rc->selector, set, extra);
    } else if (api == "apps/v1" && (kind == "ReplicaSet" || kind == "StatefulSet")) {
      // A nil selector converts to labels.Nothing(), whose requirements are not added.
      if (auto* w = find_workload(objects, kind, pod.ns, owner->name()); w && !w->selector.nothing)
        extra.insert(extra.end(), w->selector.requirements.begin(), w->selector.requirements.end());
    }
  }
  label_selector out;
  for (auto& [k, v] : set) {
    selector_requirement r;
    r.key = k;
    r.op = selector_op::in;
    r.values = {v};
    out.requirements.push_back(std::move(r));
  }
  out.requirements.insert(out.requirements.end(), extra.begin(), extra.end());
  return out;
}

std::vector<spread_constraint> constraints_for(const pod_info& pod, bool do_not_schedule,
                                               const std::vector<spread_constraint>& defaults,
                                               const cluster_objects& objects) {
  std::vector<spread_constraint> out;
  if (!pod.spread_constraints.empty()) {
    for (auto& c : pod.spread_constraints)
      if (c.do_not_schedule == do_not_schedule) out.push_back(c);
    return out;
  }
  for (auto& c : defaults)
    if (c.do_not_schedule == do_not_schedule) out.push_back(c);
  if (out.empty()) return out;
  label_selector sel = default_selector(pod, objects);
  if (selector_empty(sel)) return {};
  for (auto& c : out) c.selector = sel;
  return out;
}

bool node_has_all_topology_keys(const label_map& labels, const std::vector<spread_constraint>& constraints) {
  for (auto& c : constraints)
    if (!labels.has(c.topology_key)) return false;
  return true;
}

bool match_node_inclusion_policies(const spread_constraint& c, const pod_info& pod, const node_info& node) {
  if (c.node_affinity_policy == node_inclusion_policy::honor &&
      !pod_matches_node_selector_and_affinity(pod, node.labels, node.name))
    return false;
  if (c.node_taints_policy == node_inclusion_policy::honor &&
      find_untolerated_do_not_schedule_taint(node.taints, pod.tolerations) != nullptr)
    return false;
  return true;
}

std::vector<const topology_index::counter*> exact_counters(const snapshot& snap, const pod_info& pod,
                                                           const std::vector<spread_constraint>& constraints,
                                                           bool require_all, bool skip_hostname) {
  const topology_index& ix = snap.topology();
  std::vector<const topology_index::counter*> out;
  if (ix.counter_count() == 0) return out;
  const bool node_affinity_free = pod.node_selector.empty() && !pod.required_node_affinity;
  auto on_every_node = [&](std::string_view key) {
    const topology_index::table* t = ix.find_table(key);
    return t && t->nodes_with_key == static_cast<int64_t>(snap.size());
  };
  const uint32_t ns = intern_namespace(pod.ns);
  out.reserve(constraints.size());
  for (const auto& c : constraints) {
    if (c.node_affinity_policy == node_inclusion_policy::honor && !node_affinity_free) return {};
    if (c.node_taints_policy == node_inclusion_policy::honor && ix.hard_tainted_nodes() != 0) return {};
    if (require_all) {
      for (const auto& other : constraints)
        if (other.topology_key != c.topology_key && !on_every_node(other.topology_key)) return {};
    } else if (!on_every_node(c.topology_key)) {
      return {};
    }
    if (skip_hostname && c.topology_key == label_hostname) {
      out.push_back(nullptr);
      continue;
    }
    const topology_index::counter* counter = ix.find(spread_text(ns, c.selector, c.topology_key)).get();
    if (!counter) return {};
    out.push_back(counter);
  }
  return out;
}

bool is_terminating(const pod_info& pod) { return pod.pod && pod.pod->metadata().has_deletion_timestamp(); }

int count_pods_match_selector(const pod_list& pods, const label_selector& selector,
                              const std::string& ns) {
  return selector_counter(selector, ns).count(pods);
}

selector_counter::selector_counter(const label_selector& selector, const std::string& ns)
  : selector_counter(selector, intern_namespace(ns)) {}

selector_counter::selector_counter(const label_selector& selector, uint32_t ns)
  : selector_(selector), empty_(selector_empty(selector)), ns_(ns) {}

bool selector_counter::matches(const pod_info& pod, const pod_key& k) {
  if (k.labels)
    for (size_t m = 0; m < memo_used_; ++m)
      if (memo_[m].first == k.labels) return memo_[m].second;
  bool ok = selector_.matches(pod.labels);
  if (k.labels) {
    memo_[memo_next_] = {k.labels, ok};
    memo_next_ = (memo_next_ + 1) % memo_size;
    memo_used_ = std::min(memo_used_ + 1, memo_size);
  }
  return ok;
}

int selector_counter::count(const pod_list& pods) {
  if (empty_) return 0;
  int n = 0;
  pods.for_each([&](size_t, const pod_key& k, const pod_info_ptr& p) {
    // Terminating pods are bypassed (kube #87621).
    if (k.ns != ns_ || k.terminating) return;
    if (matches(*p, k)) ++n;
  });
  return n;
}

}  // namespace kas::plugins::pts

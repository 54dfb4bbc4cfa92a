#pragma once
// Helpers shared by PodTopologySpread's filtering and scoring halves (kube's podtopologyspread/
// common.go and helper/spread.go). Pure functions over compiled pods and nodes.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "cache/snapshot.hpp"

namespace kas::plugins::pts {

inline constexpr std::string_view label_hostname = "kubernetes.io/hostname";
inline constexpr std::string_view label_zone = "topology.kubernetes.io/zone";

// kube's labels.Selector.Empty(): no requirements and not the nil ("nothing") selector. kube's
// countPodsMatchSelector counts no pod for such a selector (v1.36 behaviour; see kube #141339).
inline bool selector_empty(const label_selector& s) { return !s.nothing && s.requirements.empty(); }

// The constraints that apply to `pod` for one whenUnsatisfiable action (kube's getConstraints /
// initPreScoreState): the pod's own constraints of that action, or, when the pod has none at all,
// `defaults` of that action with the selector deduced from the workloads that own or select the
// pod (empty when no selector can be deduced).
std::vector<spread_constraint> constraints_for(const pod_info& pod, bool do_not_schedule,
                                               const std::vector<spread_constraint>& defaults,
                                               const cluster_objects& objects);

// kube's helper.DefaultSelector: the union of the selectors of the Services in the pod's namespace
// that select it, and of its controller (ReplicationController, ReplicaSet or StatefulSet).
label_selector default_selector(const pod_info& pod, const cluster_objects& objects);

// kube's nodeLabelsMatchSpreadConstraints: every topology key is a label of the node.
bool node_has_all_topology_keys(const label_map& labels, const std::vector<spread_constraint>& constraints);

// kube's matchNodeInclusionPolicies: nodeAffinityPolicy Honor requires the pod's nodeSelector and
// required node affinity to match; nodeTaintsPolicy Honor requires every NoSchedule/NoExecute taint
// to be tolerated.
bool match_node_inclusion_policies(const spread_constraint& c, const pod_info& pod, const node_info& node);

// kube's countPodsMatchSelector: pods in `ns`, not terminating, whose labels match.
int count_pods_match_selector(const pod_list& pods, const label_selector& selector,
                              const std::string& ns);

// The same over many nodes' pods for one selector and namespace: reads the pod lists' pod_keys and
// remembers the selector's verdict per interned label set (a few recent ones), so a PreFilter or
// PreScore over every pod compares integers and pointers, not label strings, for most pods.
class selector_counter {
public:
  selector_counter(const label_selector& selector, const std::string& ns);
  // The same with the namespace already interned (intern_namespace takes a lock and hashes).
  selector_counter(const label_selector& selector, uint32_t ns);
  int count(const pod_list& pods);

private:
  bool matches(const pod_info& pod, const pod_key& k);
  const label_selector& selector_;
  const bool empty_;
  const uint32_t ns_;
  static constexpr size_t memo_size = 8;
  std::array<std::pair<const void*, bool>, memo_size> memo_{};
  size_t memo_used_ = 0, memo_next_ = 0;
};

// The snapshot's topology-index counters for `constraints` (one per constraint, in order) when each
// equals, for every domain, what a scan of every node and pod counts for `pod`; empty when any does
// not, and the caller scans. Constraints with skip_hostname and the hostname key get a null entry
// (PreScore counts those per node at Score). Why the counters are then exact:
// - a counter counts countPodsMatchSelector(pod.ns, selector) over the nodes carrying its key, the
//   scan over the nodes that pass the inclusion policies and (require_all) carry every key;
// - the policies pass on every node when nodeAffinityPolicy Honor meets a pod without nodeSelector
//   and required node affinity, and nodeTaintsPolicy Honor meets no node with a NoSchedule or
//   NoExecute taint (only those can be untolerated); otherwise we scan;
// - with require_all, "carries every key" equals "carries this constraint's key" when every other
//   key is on every node; without it (system defaults) the scan also counts nodes lacking the key
//   under the value "", so the key itself must be on every node.
std::vector<const topology_index::counter*> exact_counters(const snapshot& snap, const pod_info& pod,
                                                           const std::vector<spread_constraint>& constraints,
                                                           bool require_all, bool skip_hostname);

// metadata.deletionTimestamp is set.
bool is_terminating(const pod_info& pod);

// The node's value for `key`, or "" (kube's map lookup on node.Labels).
inline const std::string& label_value(const label_map& labels, std::string_view key) {
  static const std::string empty;
  const std::string* v = labels.get(key);
  return v ? *v : empty;
}

}  // namespace kas::plugins::pts

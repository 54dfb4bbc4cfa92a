#pragma once
// pod_info: the compiled, scheduling-ready form of a core/v1 Pod. Built once when the pod enters the
// scheduler (compile_pod); immutable afterwards and shared as std::shared_ptr<const pod_info>.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/labels.hpp"
#include "cache/pod_group.hpp"
#include "cache/resources.hpp"
#include "cache/selectors.hpp"
#include "cache/volume_objects.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/result.hpp"

namespace kas {

enum class taint_effect { none, no_schedule, prefer_no_schedule, no_execute };

struct taint {
  std::string key;
  std::string value;
  taint_effect effect = taint_effect::none;
  bool operator==(const taint& o) const { return key == o.key && value == o.value && effect == o.effect; }
};

struct toleration {
  std::string key;
  bool op_exists = false;  // operator Exists; otherwise Equal (the default)
  std::string value;
  taint_effect effect = taint_effect::none;  // none = all effects
  // kube's Toleration.ToleratesTaint.
  bool tolerates(const taint& t) const;
};

struct host_port {
  std::string protocol;  // TCP (default), UDP, SCTP
  std::string ip;        // "0.0.0.0" when unset
  int32_t port = 0;
  bool operator==(const host_port& o) const { return protocol == o.protocol && ip == o.ip && port == o.port; }
};

enum class preemption_policy { preempt_lower_priority, never };

struct pod_info;

// An inter-pod (anti-)affinity term, compiled (kube's framework.AffinityTerm). matchLabelKeys and
// mismatchLabelKeys are merged into `selector` at compile time (key In / NotIn the pod's own label
// value), as the apiserver does when the pod is created.
struct affinity_term {
  label_selector selector;
  // Explicit namespaces; when the term names neither namespaces nor a namespaceSelector this holds
  // the pod's own namespace.
  std::vector<std::string> namespaces;
  // `namespaces` is sorted and unique (binary search); set where a long list is built (a
  // namespaceSelector resolved to namespace names).
  bool namespaces_sorted = false;
  // nullopt = nil selector (matches no namespace by labels); an empty selector matches every one.
  std::optional<label_selector> namespace_selector;
  std::string topology_key;
  // kube's AffinityTerm.Matches: the pod's namespace is listed or its labels match the namespace
  // selector, and the pod's labels match the selector. `ns_labels` may be null (unknown namespace).
  bool matches(const pod_info& pod, const label_map* ns_labels) const;
};

struct weighted_affinity_term {
  affinity_term term;
  int32_t weight = 0;
};

enum class node_inclusion_policy { honor, ignore };

// A TopologySpreadConstraint, compiled. matchLabelKeys are merged into `selector` (key In the pod's
// own value), as kube does.
struct spread_constraint {
  int32_t max_skew = 1;
  std::string topology_key;
  bool do_not_schedule = true;  // whenUnsatisfiable: DoNotSchedule (true) or ScheduleAnyway
  label_selector selector;
  int32_t min_domains = 1;  // 1 when unset
  node_inclusion_policy node_affinity_policy = node_inclusion_policy::honor;
  node_inclusion_policy node_taints_policy = node_inclusion_policy::ignore;
};

// One entry of status.conditions. The scheduler writes PodScheduled: False/Unschedulable (or
// SchedulerError) with the FailedScheduling message, as kube-scheduler's updatePod does; a binding
// sets it True, as the apiserver's binding subresource does.
struct pod_condition {
  std::string type, status, reason, message;
  bool operator==(const pod_condition& o) const {
    return type == o.type && status == o.status && reason == o.reason && message == o.message;
  }
};

// One entry of spec.volumes, as the volume plugins read it.
struct pod_volume {
  std::string name;
  // The claim this volume uses: persistentVolumeClaim.claimName, or for a generic ephemeral
  // volume the claim the ephemeral controller creates, "<pod name>-<volume name>". Empty for other
  // kinds.
  std::string claim_name;
  bool ephemeral = false;
  bool read_only = false;  // persistentVolumeClaim.readOnly
  // An inline in-tree or CSI source (gcePersistentDisk, awsElasticBlockStore, rbd, iscsi, cinder,
  // azureDisk, csi); kind none for claims and for the kinds no volume plugin reads.
  volume_source inline_source;
};

struct pod_info {
  std::shared_ptr<const k8s::core::Pod> pod;  // the API object, as decoded

  std::string ns;
  // intern_namespace(ns), set by compile_pod: a pod is counted on its node (pod_list keys) every
  // time it is placed, and interning there took a lock and a string copy each time. 0 in a
  // pod_info built by hand, where it is interned when needed; whoever changes `ns` of a compiled
  // pod resets it.
  uint32_t ns_id = 0;
  std::string name;
  std::string uid;  // metadata.uid, or "<ns>/<name>" when the manifest has none
  std::string node_name;  // authoritative (the raw object may predate the binding)
  std::string phase;      // status.phase
  std::string scheduler_name;  // "default-scheduler" when unset
  std::string priority_class_name;
  int32_t priority = 0;
  preemption_policy preemption = preemption_policy::preempt_lower_priority;
  int64_t creation_ns = 0;  // metadata.creationTimestamp in ns since epoch (0 when unset)

  label_map labels;

  // Effective requests as kube computes them: regular containers summed, init containers (with
  // sidecars) maxed in, pod overhead added. `requests` is what Filter checks; `non_zero_requests`
  // substitutes 100m CPU / 200Mi memory for containers that request none, and is what scoring uses.
  resource_list requests;
  resource_list non_zero_requests;

  label_map node_selector;  // spec.nodeSelector
  std::optional<kas::node_selector> required_node_affinity;  // kas::: the member above hides the type
  std::vector<preferred_scheduling_term> preferred_node_affinity;
  std::vector<toleration> tolerations;
  std::vector<host_port> host_ports;
  std::vector<std::string> scheduling_gates;
  std::string nominated_node_name;  // status.nominatedNodeName
  std::vector<pod_condition> conditions;  // status.conditions (only what the scheduler writes)
  const pod_condition* condition(const std::string& type) const {
    for (auto& c : conditions)
      if (c.type == type) return &c;
    return nullptr;
  }

  // Inter-pod affinity (spec.affinity.podAffinity / podAntiAffinity) and topology spread.
  std::vector<affinity_term> required_affinity;
  std::vector<affinity_term> required_anti_affinity;
  std::vector<weighted_affinity_term> preferred_affinity;
  std::vector<weighted_affinity_term> preferred_anti_affinity;
  std::vector<spread_constraint> spread_constraints;
  bool has_pod_affinity() const {
    return !required_affinity.empty() || !required_anti_affinity.empty() || !preferred_affinity.empty() ||
           !preferred_anti_affinity.empty();
  }
  bool has_required_anti_affinity() const { return !required_anti_affinity.empty(); }
  std::vector<std::string> images;  // container image names (for ImageLocality)
  std::vector<pod_volume> volumes;  // spec.volumes
  bool has_claims() const {
    for (const auto& v : volumes)
      if (!v.claim_name.empty()) return true;
    return false;
  }

  bool has_scheduling_gates() const { return !scheduling_gates.empty(); }
  std::string key() const { return ns + "/" + name; }

  // The pod group it belongs to, in its own namespace: spec.schedulingGroup.podGroupName
  // (scheduling.k8s.io/v1beta1), else the label scheduling.x-k8s.io/pod-group (Coscheduling).
  pod_group_api group_api = pod_group_api::none;
  std::string group_name;
  bool in_group() const { return group_api != pod_group_api::none; }
  // pod_group_key(group_api, ns, group_name); empty when in no group.
  std::string group_key;
};

using pod_info_ptr = std::shared_ptr<const pod_info>;

// Compiles a Pod. Errors carry the field path ("spec.containers[0].resources.requests.cpu: ...").
// Requests that are negative or unparsable are errors. Containers with limits but no request get
// request = limit, as the apiserver's defaulting does.
result<pod_info_ptr> compile_pod(std::shared_ptr<const k8s::core::Pod> pod);

// A copy of `p` bound to `node` (used when a pod is assumed or confirmed on a node).
pod_info_ptr with_node_name(const pod_info& p, const std::string& node);

// Whether `b`, a later version of pod `a`, changes nothing that a plugin, the node's aggregates or
// the topology index read from a pod placed on a node: the same pod on the same node, the same
// namespace and labels, priority, requests (both kinds), host ports, inter-pod terms and spread
// constraints, neither terminating, and the same status.startTime (preemption orders victims by
// it). Then the cache may keep `a` where it is placed instead of replacing it with `b`.
// Conservative: false whenever in doubt (a terminating pod, a term count that moved).
bool same_placement(const pod_info& a, const pod_info& b);

// Shared compilers for the pieces plugins and config reuse.
result<node_selector> compile_node_selector(const k8s::core::NodeSelector& ns, const std::string& path);
result<node_selector_term> compile_node_selector_term(const k8s::core::NodeSelectorTerm& t,
                                                      const std::string& path);
taint_effect parse_taint_effect(const std::string& s);
// meta/v1 LabelSelector (null = matches nothing); an invalid requirement is an error naming the path.
result<label_selector> compile_label_selector(const k8s::meta::LabelSelector* ls, const std::string& path);

}  // namespace kas

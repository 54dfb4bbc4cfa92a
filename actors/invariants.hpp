#pragma once
// The placement invariants, checked on a final cluster state by tests and by every bench
// run: no node overcommitted (cpu, memory, pod count), no host port used twice on a node, no hard
// constraint violated (taints, node selector and required node affinity, required inter-pod
// affinity and anti-affinity, DoNotSchedule topology spread), and, from the storage objects
// (cluster_objects::volumes): no pod on a node that the node affinity of a volume bound to one of
// its claims excludes, and no node with more unique volumes of a CSI driver attached than its
// CSINode's drivers[].allocatable.count. Volumes count as NodeVolumeLimits counts them: a bound
// claim's CSI volume under its driver and handle; an in-tree volume kube migrates to CSI (AWS EBS,
// GCE PD, Azure Disk, Cinder), bound or inline, under the driver it migrates to, on nodes that have
// a CSINode. A claim not bound (or not found) adds nothing: at the end of a run every claim of a
// bound pod is bound. From the PodGroups (cluster_objects::pod_groups): no gang partly bound (0 or
// at least minCount members bound), and every bound member of a gang with topology keys in one
// domain of each key. And, for gangs a workload made to compete for capacity that fits only one of
// them (check_competing_gangs), that exactly one of them ended bound whole and the others wholly
// pending.
#include <string>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/node_info.hpp"
#include "cache/snapshot.hpp"

namespace kas {

struct invariant_options {
  // The spread check compares the final domain counts (max - min <= maxSkew), which only holds
  // while pods are only added; a workload that deletes pods (churn, preemption) turns it off.
  bool check_spread = true;
};

struct invariant_report {
  size_t checks = 0;                    // individual checks made
  std::vector<std::string> violations;  // one line each
};

// `nodes`: every node that ever existed (pods bound before a node was deleted still count against
// it). `pods`: the cluster's pods; unbound ones are ignored. `objects`: the cluster's final
// namespaces and storage objects; null skips the checks that need them.
invariant_report check_placement(const std::vector<node_info_ptr>& nodes, const std::vector<pod_info_ptr>& pods,
                                 const cluster_objects* objects, const invariant_options& opts = {});

// Nothing left reserved after a run: every pod the scheduler cache's snapshot places on a node
// (bound or assumed) is bound there in `pods`, the cluster's final pods. An assumed pod whose
// binding never happened (a pod waiting at Permit, a reservation never forgotten) is a violation;
// a pod the cluster deleted and the cache still holds is not (the cache's watch lags the cluster).
invariant_report check_nothing_reserved(const snapshot& snap, const std::vector<pod_info_ptr>& pods);

// Gangs created together to compete for capacity that fits exactly one of them (a bench workload's
// podGroup competingSet).
struct competing_gangs {
  std::string name;
  std::vector<std::string> group_keys;  // pod_group_key of each gang
};

struct competing_outcome {
  size_t sets = 0;
  size_t settled = 0;  // sets that ended as they must: one gang bound whole, the others with no member bound
};

// Each set ends with exactly one gang bound whole (at least minCount members bound) and every other
// gang with no member bound. A set with no gang bound is a deadlock (the gangs held parts of the
// capacity each, or none was let through); two gangs bound means the capacity was not contested; a
// losing gang with members bound is partly placed. One violation per set, listing each gang's bound
// members. `pods`: the cluster's final pods; `objects`: its PodGroups (a group missing is a violation).
invariant_report check_competing_gangs(const std::vector<competing_gangs>& sets, const std::vector<pod_info_ptr>& pods,
                                       const cluster_objects& objects, competing_outcome* outcome = nullptr);

}  // namespace kas

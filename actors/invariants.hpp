#pragma once
// The placement invariants, checked on a final cluster state by tests and by every bench
// run: no node overcommitted (cpu, memory, pod count), no host port used twice on a node, no hard
// constraint violated (taints, node selector and required node affinity, required inter-pod
// affinity and anti-affinity, DoNotSchedule topology spread).
#include <string>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/node_info.hpp"

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
// it). `pods`: the cluster's pods; unbound ones are ignored.
invariant_report check_placement(const std::vector<node_info_ptr>& nodes, const std::vector<pod_info_ptr>& pods,
                                 const cluster_objects* objects, const invariant_options& opts = {});

}  // namespace kas

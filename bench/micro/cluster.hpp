#pragma once
// The inputs of the plugin-kernel microbenchmarks: one cluster shaped like scheduler_perf's
// SchedulingBasic (test/integration/scheduler_perf, node-default.yaml and pod-default.yaml) and the
// incoming pods of its sibling workloads, decoded and compiled the way the scheduler does it.
//
// The cluster is built once per process, through scheduler_cache (the snapshot_cache actor's own
// store), so every benchmark reads the same snapshot the scheduler would publish:
// - `node_count` nodes: 4 CPU, 32Gi, 110 pods; labels kubernetes.io/hostname and
//   topology.kubernetes.io/zone (moon-1..3, scheduler_perf's TopologySpreading labels); the pause
//   image on every node, agnhost on every other node (for ImageLocality).
// - `pods_per_node` pods on each node, 100m/500Mi each. Half carry `color: blue` (what the
//   topology spread pods count), every fourth node's second pod holds hostPort 8080 (NodePorts
//   rejects there), and one node in ten runs a scheduler_perf anti-affinity pod (`color: green`,
//   required anti-affinity on `color: green` per hostname, namespace sched-0) that existing-pod
//   term checks of InterPodAffinity must visit; one node in ten (others) runs a plain `color: green`
//   pod in sched-0, which the incoming anti-affinity terms count.
#include <cstddef>
#include <string_view>
#include <vector>

#include "cache/pod_info.hpp"
#include "cache/snapshot.hpp"

namespace kas::bench {

inline constexpr size_t node_count = 5000;
inline constexpr size_t pods_per_node = 2;

struct cluster {
  snapshot_ptr snap;
  // The snapshot's nodes in index order, so the timed loops measure the kernel, not chunk lookups.
  std::vector<const node_info*> nodes;
};

// Built on first use; later calls return the same cluster.
const cluster& scheduling_basic_cluster();

// The incoming pods, each the pod template of a scheduler_perf workload (adapted to this cluster's
// zone names). Unknown names throw.
//   basic                    pod-default.yaml: pause, 100m/500Mi, no constraints (SchedulingBasic)
//   node-affinity            required zone In [moon-1, moon-2] (SchedulingNodeAffinity)
//   preferred-node-affinity  preferred zone In [moon-1], weight 1
//   green                    basic, labelled color: green in sched-1: the existing pods' anti-affinity
//                            terms match it, though it has no terms of its own
//   host-port                basic plus hostPort 8080
//   spread                   DoNotSchedule maxSkew 1 over zones, color: blue (TopologySpreading)
//   preferred-spread         ScheduleAnyway maxSkew 1 over zones, color: blue (PreferredTopologySpreading)
//   anti-affinity            required anti-affinity color: green per hostname (SchedulingPodAntiAffinity)
//   preferred-anti-affinity  preferred anti-affinity, weight 1 (SchedulingPreferredPodAntiAffinity)
pod_info_ptr incoming_pod(std::string_view kind);

}  // namespace kas::bench

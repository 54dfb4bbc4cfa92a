#pragma once
// embedded_cluster: the in-process stand-in for the apiserver and the kubelets.
//
// Owns: the object store (a cluster_store: nodes, pods, events) and the watchers. Every change is
// stamped with a resourceVersion and fanned out, in order, to every watcher. A new watcher first
// receives the current state as Add events (list) and a `synced` marker, then the stream (watch).
// Bind follows the pods/binding subresource: 404 if the pod is gone, 409 if it is already bound.
// Simulated node agents (node_agent) watch for pods bound to their nodes and report them Running.
//
// Flow control: the cluster sends each watcher batches of changes as requests and keeps at most
// `watch_window` batches unacknowledged; the watcher's reply (after it applied the batch) returns
// the credit. Changes waiting for credit coalesce per object (change_coalescer), so a slow watcher
// receives the latest state of each object, not every intermediate one, and the cluster's memory is
// bounded by the number of objects, not by the rate of change.
#include <caf/all.hpp>

#include "actors/protocol.hpp"

namespace kas::obs {
class metrics_registry;
}

namespace kas {

using watcher_actor = caf::typed_actor<
  // Changes in the cluster, in order; reply (the number applied) once applied: that returns credit.
  caf::replies_to<event_atom, cluster_change_batch_ptr>::with<uint64_t>>;

using cluster_actor = caf::typed_actor<
  // Subscribe: the current state as Add events, then every change.
  caf::reacts_to<watch_atom, watcher_actor>,
  // Create a node / a pod (pods with spec.nodeName are created bound).
  caf::reacts_to<create_atom, node_info_ptr>, caf::reacts_to<create_atom, pod_info_ptr>,
  // Replace the non-pod, non-node objects (namespaces, workload selectors, PDBs).
  caf::reacts_to<create_atom, cluster_objects_ptr>,
  // Delete a pod by uid (404 as an error status).
  caf::replies_to<delpod_atom, std::string>::with<fw::status>,
  // Evict a pod by uid for preemption: delete it and record a Preempted Event with the message.
  caf::replies_to<evict_atom, std::string, std::string>::with<fw::status>,
  // PATCH status.conditions of pod uid: set one condition (kube-scheduler's updatePod). An unchanged
  // condition writes nothing; a change is a pod update flagged conditions_only.
  caf::reacts_to<status_atom, std::string, pod_condition>,
  // PATCH status.nominatedNodeName of pod uid ("" clears it).
  caf::replies_to<nominate_atom, std::string, std::string>::with<fw::status>,
  // Delete a node by name.
  caf::reacts_to<delete_atom, std::string>,
  // POST pods/binding: bind pod uid to node (404 / 409 as error statuses).
  caf::replies_to<bind_atom, std::string, std::string>::with<fw::status>,
  // A node agent reports a pod's phase.
  caf::reacts_to<status_atom, std::string, std::string>,
  // Record an Event; the event correlator may fold it into a stored one (count, lastTimestamp).
  caf::reacts_to<record_atom, cluster_event_record>,
  // Counters.
  caf::replies_to<stats_atom>::with<cluster_stats>,
  // Every stored pod, in no particular order (read-only; tests check invariants on it).
  caf::replies_to<list_atom>::with<std::vector<pod_info_ptr>>,
  // Every stored Event, in creation order (an aggregated Event sits where it was first created).
  caf::replies_to<list_atom, cluster_event_record>::with<std::vector<cluster_event_record>>>;

struct cluster_options {
  size_t node_agents = 2;  // simulated kubelet actors (each serves a shard of the nodes)
  // Actor metrics ("embedded_cluster", "node_agent-<i>", actor_pool_workers{pool="node_agent"});
  // null = obs::default_registry(). Must outlive the cluster.
  obs::metrics_registry* metrics = nullptr;
  size_t watch_window = 2;   // batches in flight per watcher, unacknowledged
  size_t watch_batch = 256;  // changes per batch, at most
};

cluster_actor spawn_embedded_cluster(caf::actor_system& sys, const cluster_options& opts);

}  // namespace kas

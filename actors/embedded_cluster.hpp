#pragma once
// embedded_cluster: the in-process stand-in for the apiserver and the kubelets.
//
// Owns: the object store (a cluster_store: nodes, pods, events) and the watchers. Every change is
// stamped with a resourceVersion and fanned out, in order, to every watcher. A new watcher first
// receives the current state as Add events (list) and a `synced` marker, then the stream (watch).
// Bind follows the pods/binding subresource: 404 if the pod is gone, 409 if it is already bound.
// Storage objects are written as the apiserver would store them, and the store's PV controller
// (pv_controller.hpp) binds and provisions claims after each write; a PreBind waiting for its
// claims to bind is answered when they are, or at its timeout.
// Simulated node agents (node_agent) watch for pods bound to their nodes and report them Running.
//
// Flow control: credit, counted in changes. The cluster keeps at most `watch_window` changes sent
// and not yet credited per watcher, in batches of at most `watch_batch`. A watcher returns credit
// cumulatively (watch_credit below): one credit message per `watch_window / 4` changes applied, not
// one reply per batch, so a watcher that keeps up costs the cluster almost nothing beyond the
// batches. Changes waiting for credit coalesce per object (change_coalescer), so a slow watcher
// receives the latest state of each object, not every intermediate one, and the cluster's memory is
// bounded by the number of objects, not by the rate of change. The cluster monitors its watchers: a
// watcher that goes down gets nothing more.
#include <caf/all.hpp>

#include "actors/protocol.hpp"

namespace kas::obs {
class metrics_registry;
}

namespace kas {

using watcher_actor = caf::typed_actor<
  // Changes in the cluster, in order. Once applied, the watcher returns credit through watch_credit.
  caf::reacts_to<event_atom, cluster_change_batch_ptr>>;

using cluster_actor = caf::typed_actor<
  // Subscribe: the current state as Add events, then every change.
  caf::reacts_to<watch_atom, watcher_actor>,
  // The sending watcher applied n more changes: credit for n more.
  caf::reacts_to<credit_atom, uint64_t>,
  // Create a node / a pod (pods with spec.nodeName are created bound).
  caf::reacts_to<create_atom, node_info_ptr>, caf::reacts_to<create_atom, pod_info_ptr>,
  // Replace the non-pod, non-node objects (namespaces, workload selectors, PDBs, storage objects).
  caf::reacts_to<create_atom, cluster_objects_ptr>,
  // Create, replace or delete one storage object; the PV controller then runs.
  caf::reacts_to<create_atom, volume_change_ptr>,
  // VolumeBinding's PreBind: write volumes and claims, answer once the claims are bound (404 for a
  // missing object; "binding volumes: context deadline exceeded" when the timeout passes first).
  caf::replies_to<bind_atom, volume_write_ptr>::with<fw::status>,
  // A volume wait's deadline (the cluster's own timer).
  caf::reacts_to<timeout_atom, uint64_t>,
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
  // A node agent reports the same phase for several pods, in order.
  caf::reacts_to<status_atom, std::vector<std::string>, std::string>,
  // Record an Event; the event correlator may fold it into a stored one (count, lastTimestamp).
  caf::reacts_to<record_atom, cluster_event_record>,
  // Record several Events, in order (the event recorder's batch).
  caf::reacts_to<record_atom, std::vector<cluster_event_record>>,
  // Counters.
  caf::replies_to<stats_atom>::with<cluster_stats>,
  // Every stored pod, in no particular order (read-only; tests check invariants on it).
  caf::replies_to<list_atom>::with<std::vector<pod_info_ptr>>,
  // Every stored Event, in creation order (an aggregated Event sits where it was first created).
  caf::replies_to<list_atom, cluster_event_record>::with<std::vector<cluster_event_record>>,
  // Run a continuation the source posted to itself (the API source's completed requests).
  caf::reacts_to<run_atom, source_task>>;

struct cluster_options {
  size_t node_agents = 2;  // simulated kubelet actors (each serves a shard of the nodes)
  // Actor metrics ("embedded_cluster", "node_agent-<i>", actor_pool_workers{pool="node_agent"});
  // null = obs::default_registry(). Must outlive the cluster.
  obs::metrics_registry* metrics = nullptr;
  size_t watch_window = 512;  // changes in flight per watcher, sent and not yet credited
  size_t watch_batch = 256;   // changes per batch, at most
  // Changes waiting for a watcher are kept as they are up to this many; past it they fold per
  // object (change_coalescer), which bounds the memory a watcher far behind costs.
  size_t watch_fold_after = 32768;
};

// A watcher's side of the flow control (one watch per watcher). Call `applied` after applying a
// batch: it returns credit to the batch's sender once `ack_every` changes are owed (the cluster
// never waits on a watcher that owes fewer than that, since its window is larger).
class watch_credit {
public:
  template <class Self>
  void applied(Self* self, const cluster_change_batch& b) {
    owed_ += b.changes.size();
    if (owed_ < b.ack_every) return;
    if (auto to = caf::actor_cast<cluster_actor>(self->current_sender())) self->send(to, credit_atom::value, owed_);
    owed_ = 0;
  }

private:
  uint64_t owed_ = 0;
};

cluster_actor spawn_embedded_cluster(caf::actor_system& sys, const cluster_options& opts);

}  // namespace kas

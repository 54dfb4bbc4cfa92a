#pragma once
// The typed interfaces of the scheduling pipeline's actors, in one place so that actors can hold
// each other's handles without include cycles. Each signature carries a one-line comment; the
// actor's own header says what it owns.
#include <caf/all.hpp>

#include "actors/embedded_cluster.hpp"
#include "messages/protocol.hpp"

namespace kas {

using snapshot_cache_actor = caf::typed_actor<
  // A cluster change (from the cluster source's watch); applied, then forwarded to the queue.
  caf::reacts_to<event_atom, cluster_change_ptr>,
  // Reserve: assume a pod on a node, re-validating the node if it changed since evaluation.
  caf::replies_to<assume_atom, assume_request>::with<assume_reply>,
  // Forget an assumed pod (its binding failed or was rejected).
  caf::reacts_to<forget_atom, std::string>,
  // The binding of an assumed pod finished (starts its expiry clock, if any).
  caf::reacts_to<finished_atom, std::string>,
  // The latest snapshot.
  caf::replies_to<snap_atom>::with<snapshot_ptr>,
  // Periodic sweep of expired assumed pods.
  caf::reacts_to<tick_atom>>;

using queue_actor = caf::typed_actor<
  // A cluster change, forwarded by the cache after the cache applied it.
  caf::reacts_to<event_atom, cluster_change_ptr>,
  // Hand out up to n pods; the reply waits until at least one is available (backpressure).
  caf::replies_to<pop_atom, uint32_t>::with<std::vector<queued_pod_ptr>>,
  // The pod's binding succeeded: it leaves the queue.
  caf::reacts_to<done_atom, std::string>,
  // The pod's cycle failed: unschedulable pool or backoff.
  caf::reacts_to<requeue_atom, failure>,
  // Timer: flush backoffQ and old unschedulable pods.
  caf::reacts_to<tick_atom>,
  // Occupancy.
  caf::replies_to<stats_atom>::with<queue_stats>,
  // Reply once the queue is quiescent: synced, nothing active, in backoff or in flight.
  caf::replies_to<done_atom>::with<queue_stats>>;

using worker_actor = caf::typed_actor<
  // Filter one node range for one pod.
  caf::replies_to<work_atom, filter_work_ptr>::with<filter_reply>,
  // Score a set of feasible nodes for one pod.
  caf::replies_to<work_atom, score_work_ptr>::with<score_reply>>;

using binder_actor = caf::typed_actor<
  // Run the binding cycle (PreBind, Bind, PostBind) for a reserved and permitted pod.
  caf::reacts_to<bind_atom, cycle_ctx_ptr>,
  // A bind plugin's asynchronous result.
  caf::reacts_to<result_atom, cycle_ctx_ptr, fw::status>>;

using permit_actor = caf::typed_actor<
  // Park a pod whose Permit returned Wait.
  caf::reacts_to<wait_atom, cycle_ctx_ptr>,
  // A plugin allows a waiting pod.
  caf::reacts_to<allow_atom, std::string, std::string>,
  // A plugin rejects a waiting pod, with a message.
  caf::reacts_to<reject_atom, std::string, std::string, std::string>,
  // A waiting pod's timer fired (uid, wait sequence number).
  caf::reacts_to<timeout_atom, std::string, uint64_t>>;

using recorder_actor = caf::typed_actor<
  // A pod's (latest) outcome: Scheduled / Unschedulable / Error / Preempted.
  caf::reacts_to<record_atom, pod_outcome>,
  // An --explain record for one scheduling attempt.
  caf::reacts_to<record_atom, explain_record>,
  // Every pod's latest outcome.
  caf::replies_to<outcomes_atom>::with<std::vector<pod_outcome>>,
  // Every explain record, in order.
  caf::replies_to<outcomes_atom, explain_record>::with<std::vector<explain_record>>>;

using driver_actor = caf::typed_actor<
  // Start pulling pods from the queue.
  caf::reacts_to<start_atom>>;

// Every handle of one scheduler instance. The assembler fills it once, after spawning every actor
// and before any message flows; actors hold it as shared_ptr<const pipeline> and only read it.
struct pipeline {
  cluster_actor cluster;
  snapshot_cache_actor cache;
  queue_actor queue;
  std::vector<worker_actor> workers;
  permit_actor permit;
  std::vector<binder_actor> binders;
  recorder_actor recorder;
};

}  // namespace kas

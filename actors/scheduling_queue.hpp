#pragma once
// scheduling_queue: owns activeQ, backoffQ, the unschedulable pool and gated pods (queue_state).
// Pods are handed out on demand (pop replies wait until a pod is ready), so the drivers pull at
// their own pace and the queue is their backpressure. A 1 s timer flushes backoff and old
// unschedulable pods. Cluster changes arrive from the snapshot cache, already applied there.
#include "actors/handles.hpp"
#include "actors/queue_state.hpp"

namespace kas {

struct scheduling_queue_options {
  queue_options queue;
  // simulate: when nothing is active or in flight, release backoff pods at once instead of waiting
  // for the wall clock (the order of events is unchanged; only idle time is skipped).
  bool skip_idle_backoff = false;
  // With skip_idle_backoff: attempts after which a pod is parked instead of retried at once (kube
  // would keep retrying it every podMaxBackoffSeconds; a replay reports its last error instead).
  int idle_retry_limit = 8;
};

scheduling_queue_options default_queue_options();

// `wiring` supplies the metrics (pending_pods, queue_incoming_pods_total, unschedulable_pods, the
// actor probe) and the synced flag /readyz reads; the queue reads nothing else from it.
queue_actor spawn_scheduling_queue(caf::actor_system& sys, std::vector<fw::framework_ptr> frameworks,
                                   const scheduling_queue_options& opts, std::shared_ptr<const pipeline> wiring);

// Translates a cluster change into the framework's cluster event (kube's event handlers).
// Returns false when the change is not an event the queue reacts to (e.g. a phase-only update).
bool to_framework_event(const cluster_change& ch, fw::cluster_event& ev, fw::event_objects& objs);

}  // namespace kas

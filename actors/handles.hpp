#pragma once
// The typed interfaces of the scheduling pipeline's actors, in one place so that actors can hold
// each other's handles without include cycles. Each signature carries a one-line comment; the
// actor's own header says what it owns.
#include <caf/all.hpp>

#include <atomic>
#include <memory>
#include <string>

#include "actors/embedded_cluster.hpp"
#include "actors/scheduler_metrics.hpp"
#include "actors/protocol.hpp"

namespace kas {

using snapshot_cache_actor = caf::typed_actor<
  // Cluster changes (the cluster source's watch); applied, forwarded to the queue, then credited.
  caf::reacts_to<event_atom, cluster_change_batch_ptr>,
  // Reserve: assume a pod on a node, re-validating the node if it changed since evaluation.
  caf::replies_to<assume_atom, assume_request>::with<assume_reply>,
  // Forget an assumed pod (its binding failed or was rejected), and the storage it assumed.
  caf::reacts_to<forget_atom, std::string>,
  // Reserve assumed these storage objects for pod uid (VolumeBinding's bindings).
  caf::reacts_to<assume_atom, std::string, volume_changes_ptr>,
  // The bindings of these assumed pods finished (starts their expiry clocks, if any).
  caf::reacts_to<finished_atom, std::vector<std::string>>,
  // The latest snapshot.
  caf::replies_to<snap_atom>::with<snapshot_ptr>,
  // A PostFilter's nomination (empty node: cleared), counted in every later snapshot at once.
  caf::reacts_to<nominate_atom, pod_info_ptr, std::string>,
  // Periodic sweep of expired assumed pods.
  caf::reacts_to<tick_atom>>;

using queue_actor = caf::typed_actor<
  // Cluster changes, in order, forwarded by the cache after the cache applied them (the batch the
  // cache received, as it is: one message per batch, not per change).
  caf::reacts_to<event_atom, cluster_change_batch_ptr>,
  // Hand out up to n pods; the reply waits until at least one is available (backpressure).
  caf::replies_to<pop_atom, uint32_t>::with<std::vector<queued_pod_ptr>>,
  // These pods' bindings succeeded: they leave the queue.
  caf::reacts_to<done_atom, std::vector<std::string>>,
  // The pod's cycle failed: unschedulable pool or backoff.
  caf::reacts_to<requeue_atom, failure>,
  // Timer: flush backoffQ and old unschedulable pods.
  caf::reacts_to<tick_atom>,
  // Occupancy.
  caf::replies_to<stats_atom>::with<queue_stats>,
  // Reply once the queue is quiescent: synced, nothing active, in backoff or in flight.
  caf::replies_to<done_atom>::with<queue_stats>,
  // The permit coordinator admitted this round of this gang: the gang's turn ends.
  caf::reacts_to<gang_atom, std::string, uint64_t>>;

using worker_actor = caf::typed_actor<
  // Stage "filter a range": Filter one range of one pod's candidate nodes.
  caf::replies_to<work_atom, filter_work_ptr>::with<filtered_range>,
  // Stage "score a range": Score a set of feasible nodes for one pod.
  caf::replies_to<work_atom, score_work_ptr>::with<scored_range>,
  // The whole algorithm for one pod over the whole snapshot (pods spread over workers).
  caf::replies_to<work_atom, cycle_work_ptr>::with<cycle_reply_ptr>>;

using binder_actor = caf::typed_actor<
  // Run the binding cycle (PreBind, Bind, PostBind) for a reserved and permitted pod.
  caf::reacts_to<bind_atom, cycle_ctx_ptr>,
  // A bind plugin's asynchronous result.
  caf::reacts_to<result_atom, cycle_ctx_ptr, fw::status>,
  // A PreBind plugin's asynchronous result; the chain resumes after plugin index `at`.
  caf::reacts_to<result_atom, cycle_ctx_ptr, fw::status, uint64_t>>;

using permit_actor = caf::typed_actor<
  // Park a pod whose Permit returned Wait.
  caf::reacts_to<wait_atom, cycle_ctx_ptr>,
  // A plugin allows a waiting pod.
  caf::reacts_to<allow_atom, std::string, std::string>,
  // A plugin rejects a waiting pod, with a message.
  caf::reacts_to<reject_atom, std::string, std::string, std::string>,
  // A waiting pod's timer fired (uid, wait sequence number).
  caf::reacts_to<timeout_atom, std::string, uint64_t>,
  // A gang member failed outside the coordinator (report_failure).
  caf::reacts_to<gang_atom, gang_member_failed>,
  // The queue: every member of this gang (pod_group_key) popped so far has had its cycle reported,
  // so none can still reach the coordinator; the gang's state goes.
  caf::reacts_to<forget_atom, std::string>,
  // How many gangs the coordinator holds state for (tests, debugging).
  caf::replies_to<stats_atom>::with<uint64_t>>;

using recorder_actor = caf::typed_actor<
  // A pod's (latest) outcome: Scheduled / Unschedulable / Error / Preempted.
  caf::reacts_to<record_atom, pod_outcome>,
  // Several pods' outcomes, in order (a binder's successes since its mailbox was last empty).
  caf::reacts_to<record_atom, std::vector<pod_outcome>>,
  // An --explain record for one scheduling attempt.
  caf::reacts_to<record_atom, explain_record>,
  // Every pod's latest outcome.
  caf::replies_to<outcomes_atom>::with<std::vector<pod_outcome>>,
  // Every explain record, in order.
  caf::replies_to<outcomes_atom, explain_record>::with<std::vector<explain_record>>>;

// The cycle driver's stages, in kube's extension-point order. Each is a one-way message; the
// workers', the queue's and the cache's answers arrive as these typed messages (CAF delivers a
// handler's result for a non-request message to the sender as a message). A preemptor's wait for
// its victims' deletions is two requests instead (cycle_driver.cpp, await_evictions).
using driver_actor = caf::typed_actor<
  // Start pulling pods from the queue.
  caf::reacts_to<start_atom>,
  // Stage "popped": pods from the queue (its answer to pop_atom).
  caf::reacts_to<std::vector<queued_pod_ptr>>,
  // Stage "snapshot": the cache's latest snapshot, for the cycles (or the preemption) waiting on one.
  caf::reacts_to<snapshot_ptr>,
  // Stage "filtered range": a worker filtered one range of a pod's candidate nodes.
  caf::reacts_to<filtered_range>,
  // Stage "scored range": a worker scored one range of a pod's feasible nodes.
  caf::reacts_to<scored_range>,
  // Stage "pod scheduled": a worker ran a whole pod's algorithm.
  caf::reacts_to<cycle_reply_ptr>,
  // Stage "assumed": the cache assumed the pod on its node, or refused (conflict / error).
  caf::reacts_to<assume_reply>>;

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

  // --- observability (never null once start_scheduler returned) ---------------------------------
  // The registry every series below lives in (obs::default_registry() unless scheduler_options
  // names another); it outlives the instance.
  obs::metrics_registry* registry = nullptr;
  // kube-scheduler's metric families. The cycle driver records, with kube's semantics:
  //   metrics->scheduling_algorithm_duration          per cycle: PreFilter..selectHost (kube's
  //                                                   schedulingAlgorithm), success or not;
  //   metrics->framework_extension_point_duration     {extension_point, status, profile} per cycle and
  //                                                   extension point it ran (PreFilter, Filter,
  //                                                   PostFilter, PreScore, Score, Reserve, Permit);
  //                                                   resolve the series at spawn, not per cycle;
  //   metrics->plugin_execution_duration              {plugin, extension_point, status}, only in cycles
  //                                                   where obs::sample_plugin_metrics(rng) said yes;
  //   metrics->preemption_attempts / preemption_victims  once per PostFilter that ran preemption.
  // Every other kube metric is recorded by the actor that owns the state (see scheduler_metrics.hpp).
  std::shared_ptr<obs::kube_metrics> metrics;
  // Receives the framework's sampled per-plugin timings (plugin_execution_duration_seconds); the
  // frameworks hold a raw pointer to it, so it lives as long as the instance.
  std::shared_ptr<const plugin_duration_sink> plugin_durations;
  // The attempt, SLI, queue, permit and cache series, resolved for this instance's profiles.
  std::shared_ptr<const scheduler_series> series;
  // Set by the scheduling queue once the cluster source's initial list arrived (kube's
  // WaitForCacheSync); /readyz reads it from the HTTP thread.
  std::shared_ptr<std::atomic<bool>> synced = std::make_shared<std::atomic<bool>>(false);
};

// The per-actor probe (actor_mailbox_depth, actor_messages_processed_total,
// actor_message_processing_seconds) for one actor instance, e.g. "scheduling_queue", "binder-0",
// "cycle_driver-0", "filter_score_worker-3". Keep it in the actor's state and open every handler with
//   auto probe_scope = st.probe->begin_handler(self);
inline std::unique_ptr<obs::actor_probe> make_probe(const pipeline& p, const std::string& actor) {
  return std::make_unique<obs::actor_probe>(*p.registry, actor);
}

}  // namespace kas

#pragma once
// cycle_driver: runs scheduling cycles. Owns the cycle table (cycle id -> the stage a cycle waits in
// and what it has accumulated; at most `pipeline_depth` entries), the round-robin start index, the
// nominations of its own preemptions and the tie-breaking RNG.
//
// A cycle is moved on by typed stage messages (see driver_actor in handles.hpp), never by nested
// continuations:
//   popped (queue) -> snapshot (cache) -> [pod scheduled (a worker) | filtered ranges -> scored
//   ranges (workers)] -> assumed (cache) -> Reserve, Permit -> permit coordinator or a binder.
// The algorithm's steps are plugins/framework/runtime/schedule_one.hpp's; two ways to spread them:
// - by node range, when one pod is in flight (pipeline depth 1, or --explain): PreFilter and the
//   nominated node here, Filter fanned out to the workers by node range, merge (the first
//   numFeasibleNodesToFind feasible nodes from the start index, as kube), PreScore here, Score fanned
//   out, NormalizeScore and weights, select host;
// - by pod, when several are in flight: each pod's whole algorithm (fw::schedule_one) runs on one
//   worker, the least busy, so the workers' cores stay busy with plugin work instead of messages.
// Then: assume at the snapshot cache (optimistic validation; a conflict retries at once on a newer
// snapshot) -> Reserve -> Permit -> the binder pool (or the permit coordinator on Wait). A failure
// runs PostFilter (preemption) and reports to the queue (kube's FailureHandler).
//
// Errors: the driver monitors the queue, the cache, the cluster and the workers; when one goes down
// the cycles waiting on it fail back into the queue as Errors and the driver stops popping (the
// supervisor stops the process).
//
// Opportunistic batching (KEP-5598, `batching`): a pod whose SignPod signature equals the previous
// pod's takes the next node of that pod's ranked feasible list, without running Filter and Score
// again; the cache re-validates the node at assume, exactly as for any pipelined pod.
#include "actors/handles.hpp"

namespace kas {

struct driver_options {
  uint32_t pipeline_depth = 4;  // pods in their scheduling cycle at once
  bool explain = false;         // record per-plugin verdicts and scores (simulate --explain)
  uint64_t seed = 1;            // tie-breaking RNG seed
  bool batching = false;        // opportunistic batching by pod signature
};

driver_actor spawn_cycle_driver(caf::actor_system& sys, std::vector<fw::framework_ptr> frameworks,
                                const driver_options& opts, std::shared_ptr<const pipeline> wiring);

}  // namespace kas

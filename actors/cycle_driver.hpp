#pragma once
// cycle_driver: runs scheduling cycles. Owns the pods in flight (up to `pipeline_depth`), their
// CycleStates, the round-robin start index and the tie-breaking RNG.
//
// Two ways to spread the work over the filter_score_worker pool:
// - by node range, when one pod is in flight (pipeline depth 1, or --explain): latest snapshot ->
//   PreFilter -> Filter fanned out to the workers by node range -> merge (the first
//   numFeasibleNodesToFind feasible nodes from the start index, as kube) -> PreScore -> Score fanned
//   out -> NormalizeScore and weights -> select host;
// - by pod, when several are in flight: each pod's whole algorithm (fw::schedule_one) runs on one
//   worker, the least busy, so the workers' cores stay busy with plugin work instead of messages.
// Then: assume at the snapshot cache (optimistic validation; a conflict retries at once on a newer
// snapshot) -> Reserve -> Permit -> the binder pool (or the permit coordinator on Wait).
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

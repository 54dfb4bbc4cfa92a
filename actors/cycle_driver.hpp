#pragma once
// cycle_driver: runs scheduling cycles. Owns the pods in flight (up to `pipeline_depth`), their
// CycleStates, the round-robin start index and the tie-breaking RNG.
//
// Per pod: latest snapshot -> PreFilter -> Filter fanned out to the workers by node range -> merge
// (the first numFeasibleNodesToFind feasible nodes from the start index, as kube) -> PreScore ->
// Score fanned out -> NormalizeScore and weights -> select host -> assume at the snapshot cache
// (optimistic validation; a conflict retries at once on a newer snapshot) -> Reserve -> Permit ->
// the binder pool (or the permit coordinator on Wait).
#include "actors/handles.hpp"

namespace kas {

struct driver_options {
  uint32_t pipeline_depth = 4;  // pods in their scheduling cycle at once
  bool explain = false;         // record per-plugin verdicts and scores (simulate --explain)
  uint64_t seed = 1;            // tie-breaking RNG seed
};

driver_actor spawn_cycle_driver(caf::actor_system& sys, std::vector<fw::framework_ptr> frameworks,
                                const driver_options& opts, std::shared_ptr<const pipeline> wiring);

}  // namespace kas

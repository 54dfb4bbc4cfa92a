#pragma once
// snapshot_cache: owns the scheduler_cache (every node_info, bound and assumed pods) and is the
// only writer of scheduling state. Publishes immutable snapshots. Takes reservations atomically:
// inside one handler it re-checks a node that changed since the driver evaluated it (node-local
// filters against the current node_info), then assumes or rejects, so nothing can interleave.
// After applying a cluster change it forwards it to the queue, so the queue never requeues a pod
// on an event the snapshot does not show yet (kube's handler order: cache first, then queue).
#include "actors/handles.hpp"

namespace kas {

struct cache_options {
  std::chrono::nanoseconds assumed_ttl{0};  // 0: assumed pods never expire (kube's default)
};

// `wiring` is filled once by the assembler before any message flows; read-only afterwards.
snapshot_cache_actor spawn_snapshot_cache(caf::actor_system& sys, const cache_options& opts,
                                          std::shared_ptr<const pipeline> wiring);

}  // namespace kas

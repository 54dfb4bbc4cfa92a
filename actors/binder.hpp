#pragma once
// binder: runs binding cycles, several per message. Owns the bindings in flight. PreBindPreFlight
// and PreBind run in the handler; Bind asks the bind plugins in order (the first non-Skip wins).
// DefaultBinder's API calls of one handler leave as one request to the cluster, whose answer (one
// status per binding) completes them in one handler, so a binder never blocks and pays one round
// trip per batch, not per pod. Success: finish binding in the cache, PostBind, Scheduled. Failure:
// forget, Unreserve, requeue.
#include "actors/handles.hpp"

namespace kas {

// `index` names the instance in the actor metrics ("binder-<index>").
binder_actor spawn_binder(caf::actor_system& sys, std::shared_ptr<const pipeline> wiring, size_t index = 0);

}  // namespace kas

#pragma once
// binder: runs binding cycles. Owns the bindings in flight. PreBindPreFlight and PreBind run in
// the handler; Bind asks the bind plugins in order (the first non-Skip wins) and DefaultBinder's
// API call completes asynchronously as a message back to this actor, so a binder never blocks.
// Success: finish binding in the cache, PostBind, Scheduled. Failure: forget, Unreserve, requeue.
#include "actors/handles.hpp"

namespace kas {

// `index` names the instance in the actor metrics ("binder-<index>").
binder_actor spawn_binder(caf::actor_system& sys, std::shared_ptr<const pipeline> wiring, size_t index = 0);

}  // namespace kas

#pragma once
// event_recorder: turns cycle outcomes into Events on the cluster source (Scheduled,
// FailedScheduling) and keeps each pod's latest outcome and the --explain records, which
// `simulate` reads at the end.
#include "actors/handles.hpp"

namespace kas {

recorder_actor spawn_event_recorder(caf::actor_system& sys, std::shared_ptr<const pipeline> wiring);

}  // namespace kas

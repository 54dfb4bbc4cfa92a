#include "actors/event_recorder.hpp"

#include <unordered_map>

namespace kas {

namespace {

struct recorder_state {
  std::shared_ptr<const pipeline> wiring;
  std::unordered_map<std::string, pod_outcome> outcomes;  // by uid
  std::vector<explain_record> explains;
  static inline const char* name = "event_recorder";
};

using self_ptr = recorder_actor::stateful_pointer<recorder_state>;

}  // namespace

recorder_actor spawn_event_recorder(caf::actor_system& sys, std::shared_ptr<const pipeline> wiring) {
  return sys.spawn([wiring](self_ptr self) -> recorder_actor::behavior_type {
    self->state.wiring = wiring;
    return {
      [=](record_atom, pod_outcome& o) {
        cluster_event_record ev;
        ev.type = o.status == "Scheduled" ? "Normal" : "Warning";
        ev.reason = o.status == "Scheduled" ? "Scheduled" : "FailedScheduling";
        ev.pod_uid = o.uid;
        ev.pod_key = o.ns + "/" + o.name;
        ev.message = o.message;
        self->send(self->state.wiring->cluster, record_atom::value, std::move(ev));
        auto uid = o.uid;
        self->state.outcomes[uid] = std::move(o);
      },
      [=](record_atom, explain_record& e) { self->state.explains.push_back(std::move(e)); },
      [=](outcomes_atom) {
        std::vector<pod_outcome> out;
        out.reserve(self->state.outcomes.size());
        for (auto& [uid, o] : self->state.outcomes) out.push_back(o);
        return out;
      },
      [=](outcomes_atom, const explain_record&) { return self->state.explains; },
    };
  });
}

}  // namespace kas

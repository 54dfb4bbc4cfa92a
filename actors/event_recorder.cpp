#include "actors/event_recorder.hpp"

#include <unordered_map>

namespace kas {

namespace {

struct recorder_state {
  std::shared_ptr<const pipeline> wiring;
  std::unordered_map<std::string, pod_outcome> outcomes;  // by uid
  std::vector<explain_record> explains;
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "event_recorder";
};

using self_ptr = recorder_actor::stateful_pointer<recorder_state>;

// Keeps the pod's latest outcome and returns its Event; a failure also patches the pod's status.
cluster_event_record record(self_ptr self, pod_outcome& o) {
  if (o.status != "Scheduled") {
    // kube's handleSchedulingFailure also patches the pod's status (updatePod): PodScheduled
    // False, reason Unschedulable or SchedulerError, with the same message. The cluster skips
    // the write when the condition is unchanged, as podutil.UpdatePodCondition does.
    pod_condition c{"PodScheduled", "False", o.status == "Error" ? "SchedulerError" : "Unschedulable", o.message};
    self->send(self->state.wiring->cluster, status_atom::value, o.uid, std::move(c));
  }
  cluster_event_record ev;
  ev.type = o.status == "Scheduled" ? "Normal" : "Warning";
  ev.reason = o.status == "Scheduled" ? "Scheduled" : "FailedScheduling";
  ev.pod_uid = o.uid;
  ev.pod_key = o.ns + "/" + o.name;
  ev.message = o.message;
  ev.node = o.node;
  auto uid = o.uid;
  self->state.outcomes[uid] = std::move(o);
  return ev;
}

}  // namespace

recorder_actor spawn_event_recorder(caf::actor_system& sys, std::shared_ptr<const pipeline> wiring) {
  return sys.spawn([wiring](self_ptr self) -> recorder_actor::behavior_type {
    self->state.wiring = wiring;
    self->state.probe = make_probe(*wiring, "event_recorder");
    return {
      [=](record_atom, pod_outcome& o) {
        auto probe_scope = self->state.probe->begin_handler(self);
        self->send(self->state.wiring->cluster, record_atom::value, record(self, o));
      },
      [=](record_atom, std::vector<pod_outcome>& os) {
        auto probe_scope = self->state.probe->begin_handler(self);
        std::vector<cluster_event_record> evs;
        evs.reserve(os.size());
        for (auto& o : os) evs.push_back(record(self, o));
        self->send(self->state.wiring->cluster, record_atom::value, std::move(evs));
      },
      [=](record_atom, explain_record& e) {
        auto probe_scope = self->state.probe->begin_handler(self);
        self->state.explains.push_back(std::move(e));
      },
      [=](outcomes_atom) {
        auto probe_scope = self->state.probe->begin_handler(self);
        std::vector<pod_outcome> out;
        out.reserve(self->state.outcomes.size());
        for (auto& [uid, o] : self->state.outcomes) out.push_back(o);
        return out;
      },
      [=](outcomes_atom, const explain_record&) {
        auto probe_scope = self->state.probe->begin_handler(self);
        return self->state.explains;
      },
    };
  });
}

}  // namespace kas

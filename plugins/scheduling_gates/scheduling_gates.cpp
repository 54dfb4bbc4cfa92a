#include "plugins/scheduling_gates/scheduling_gates.hpp"

namespace kas::plugins {

result<std::shared_ptr<fw::plugin>> scheduling_gates::make(const YAML::Node&, const std::string&,
                                                           const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<scheduling_gates>());
}

fw::status scheduling_gates::pre_enqueue(const pod_info& pod, const fw::group_directory&) const {
  if (pod.scheduling_gates.empty()) return fw::status::ok();
  std::string msg = "waiting for scheduling gates: [";
  for (size_t i = 0; i < pod.scheduling_gates.size(); ++i) {
    if (i) msg += ' ';
    msg += pod.scheduling_gates[i];
  }
  msg += ']';
  return fw::status::unresolvable(fw::intern(msg));
}

std::vector<fw::cluster_event_with_hint> scheduling_gates::events_to_register() const {
  // kube registers TargetPod/UpdatePodSchedulingGatesEliminated with an always-Queue hint; the
  // event applies to the gated pod itself, hence the uid check.
  fw::cluster_event ev{fw::event_resource::pod, fw::act_update_pod_scheduling_gates_eliminated,
                       "PodUpdateSchedulingGatesEliminated"};
  auto hint = [](const pod_info& pod, const fw::event_objects& o) {
    return o.new_pod && o.new_pod->uid == pod.uid ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  };
  return {{ev, hint}};
}

}  // namespace kas::plugins

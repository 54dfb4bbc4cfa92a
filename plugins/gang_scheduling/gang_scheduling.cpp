#include "plugins/gang_scheduling/gang_scheduling.hpp"

namespace kas::plugins {

result<std::shared_ptr<fw::plugin>> gang_scheduling::make(const YAML::Node&, const std::string&, const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<gang_scheduling>());
}

fw::status gang_scheduling::pre_enqueue(const pod_info& pod, const fw::group_directory& groups) const {
  if (!pod.in_group()) return fw::status::ok();
  const pod_group* g = groups.group(pod.group_key);
  if (!g)
    return fw::status(fw::code::unschedulable_and_unresolvable,
                      fw::intern("waiting for pod's pod group \"" + pod.group_name + "\" to appear in scheduling queue"));
  if (!g->gang) return fw::status::ok();
  if (groups.members(pod.group_key) < static_cast<size_t>(g->min_count))
    return fw::status(fw::code::unschedulable_and_unresolvable,
                      "waiting for minCount pods from a gang to appear in scheduling queue");
  return fw::status::ok();
}

fw::status gang_scheduling::permit(fw::cycle_state& state, const pod_info&, const std::string&,
                                   std::chrono::milliseconds& timeout) const {
  // The queue gives a ticket only to members of an existing gang group.
  if (!state.gang || !state.gang->group || !state.gang->group->gang) return fw::status::ok();
  auto t = state.gang->group->schedule_timeout;
  timeout = t.count() > 0 ? std::chrono::duration_cast<std::chrono::milliseconds>(t)
                          : std::chrono::duration_cast<std::chrono::milliseconds>(default_timeout);
  return fw::status(fw::code::wait, wait_message);
}

std::vector<fw::cluster_event_with_hint> gang_scheduling::events_to_register() const {
  // A pod joining the group (unscheduled or bound) may complete its quorum: kube's
  // isSchedulableAfterPodAdded. (PodGroup adds and updates re-run PreEnqueue in the queue, which
  // sees the objects change.)
  auto same_group = [](const pod_info& pod, const fw::event_objects& o) {
    const pod_info* added = o.new_pod;
    if (!pod.in_group() || !added || !added->in_group()) return fw::queueing_hint::skip;
    return added->group_key == pod.group_key ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  };
  return {
    {{fw::event_resource::unscheduled_pod, fw::act_add, "UnscheduledPodAdd"}, same_group},
    {{fw::event_resource::assigned_pod, fw::act_add, "AssignedPodAdd"}, same_group},
  };
}

std::string gang_failure_message(const pod_group& g, size_t placed, size_t members) {
  return "pod group " + g.display() + ": " + std::to_string(placed) + "/" + std::to_string(members) +
         " members could be placed (minCount " + std::to_string(g.min_count) + ")";
}

}  // namespace kas::plugins

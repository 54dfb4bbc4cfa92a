#include "plugins/node_unschedulable/node_unschedulable.hpp"

#include "plugins/taint_toleration/taint_toleration.hpp"

namespace kas::plugins {

namespace {

bool tolerates_unschedulable(const pod_info& pod) {
  static const taint unschedulable_taint{"node.kubernetes.io/unschedulable", "", taint_effect::no_schedule};
  return tolerations_tolerate(pod.tolerations, unschedulable_taint);
}

}  // namespace

result<std::shared_ptr<fw::plugin>> node_unschedulable::make(const YAML::Node&, const std::string&,
                                                             const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<node_unschedulable>());
}

fw::status node_unschedulable::filter(const fw::cycle_state&, const pod_info& pod, const node_info& node) const {
  if (!node.unschedulable || tolerates_unschedulable(pod)) return fw::status::ok();
  return fw::status::unresolvable(err_reason);
}

bool node_unschedulable::hot_filter(const fw::cycle_state&, const pod_info& pod, fw::hot_filter& out) const {
  if (!tolerates_unschedulable(pod)) out.reject_unschedulable = true;
  return true;
}

std::vector<fw::cluster_event_with_hint> node_unschedulable::events_to_register() const {
  // QueueingHints on: Node Add|UpdateNodeTaint (spec.unschedulable changes come with the taint
  // update) and the pod's own toleration updates.
  auto node_hint = [](const pod_info&, const fw::event_objects& o) {
    if (!o.new_node) return fw::queueing_hint::queue;
    bool became_schedulable = (o.old_node && o.old_node->unschedulable && !o.new_node->unschedulable) ||
                              (!o.old_node && !o.new_node->unschedulable);
    return became_schedulable ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  };
  auto pod_hint = [](const pod_info& pod, const fw::event_objects& o) {
    if (!o.new_pod || o.new_pod->uid != pod.uid) return fw::queueing_hint::skip;
    return tolerates_unschedulable(*o.new_pod) ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  };
  return {
    {{fw::event_resource::node, fw::act_add | fw::act_update_node_taint, "NodeAdd|NodeTaintChange"}, node_hint},
    {{fw::event_resource::pod, fw::act_update_pod_toleration, "PodTolerationChange"}, pod_hint},
  };
}

bool node_unschedulable::sign_pod(const pod_info& pod, std::string& out) const {
  out += sign_tolerations(pod.tolerations);
  return true;
}

}  // namespace kas::plugins

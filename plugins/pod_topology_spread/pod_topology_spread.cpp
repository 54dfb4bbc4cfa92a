// PodTopologySpread: factory, EnqueueExtensions with kube's queueing hints, and SignPod
// (kube's podtopologyspread/plugin.go).
#include "plugins/pod_topology_spread/pod_topology_spread.hpp"

#include <optional>

#include "plugins/pod_topology_spread/common.hpp"

namespace kas::plugins {

namespace {

// The hard constraints the hints reason about (kube's getConstraints). Default constraints need the
// cluster's workloads, which hints do not see: nullopt then, and the hint queues the pod.
std::optional<std::vector<spread_constraint>> hint_constraints(const pod_info& pod,
                                                               const std::vector<spread_constraint>& defaults) {
  if (pod.spread_constraints.empty()) {
    for (auto& c : defaults)
      if (c.do_not_schedule) return std::nullopt;
    return std::vector<spread_constraint>{};
  }
  static const cluster_objects unused;
  return pts::constraints_for(pod, true, defaults, unused);
}

// kube's involvedInTopologySpreading: the pod itself, or an assigned pod of its namespace.
bool involved(const pod_info& incoming, const pod_info& pod) {
  return incoming.uid == pod.uid || (!incoming.node_name.empty() && incoming.ns == pod.ns);
}

bool same_tolerations(const std::vector<toleration>& a, const std::vector<toleration>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].key != b[i].key || a[i].op_exists != b[i].op_exists || a[i].value != b[i].value ||
        a[i].effect != b[i].effect)
      return false;
  return true;
}

bool any_selector_matches(const std::vector<spread_constraint>& cs, const label_map& labels) {
  for (auto& c : cs)
    if (c.selector.matches(labels)) return true;
  return false;
}

fw::queueing_hint after_pod_change(const pod_info& pod, const fw::event_objects& o,
                                   const std::vector<spread_constraint>& defaults) {
  const pod_info* old_pod = o.old_pod;
  const pod_info* new_pod = o.new_pod;
  if ((new_pod && !involved(*new_pod, pod)) || (old_pod && !involved(*old_pod, pod))) return fw::queueing_hint::skip;
  auto cs = hint_constraints(pod, defaults);
  if (!cs) return fw::queueing_hint::queue;
  if (old_pod && new_pod) {
    if (pod.uid == new_pod->uid && !same_tolerations(new_pod->tolerations, old_pod->tolerations)) {
      for (auto& c : *cs)
        if (c.node_taints_policy == node_inclusion_policy::honor) return fw::queueing_hint::queue;
    }
    if (new_pod->labels == old_pod->labels) return fw::queueing_hint::skip;
    for (auto& c : *cs)
      if (c.selector.matches(old_pod->labels) != c.selector.matches(new_pod->labels)) return fw::queueing_hint::queue;
    return fw::queueing_hint::skip;
  }
  if (new_pod) return any_selector_matches(*cs, new_pod->labels) ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  if (old_pod) return any_selector_matches(*cs, old_pod->labels) ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  return fw::queueing_hint::queue;
}

bool topology_labels_changed(const label_map& a, const label_map& b, const std::vector<spread_constraint>& cs) {
  for (auto& c : cs)
    if (pts::label_value(a, c.topology_key) != pts::label_value(b, c.topology_key)) return true;
  return false;
}

fw::queueing_hint after_node_change(const pod_info& pod, const fw::event_objects& o,
                                    const std::vector<spread_constraint>& defaults) {
  auto cs = hint_constraints(pod, defaults);
  if (!cs) return fw::queueing_hint::queue;
  const bool old_matching = o.old_node && pts::node_has_all_topology_keys(o.old_node->labels, *cs);
  const bool new_matching = o.new_node && pts::node_has_all_topology_keys(o.new_node->labels, *cs);
  if (o.old_node && o.new_node) {
    if (old_matching != new_matching) return fw::queueing_hint::queue;
    if (new_matching && (topology_labels_changed(o.old_node->labels, o.new_node->labels, *cs) ||
                         o.old_node->taints != o.new_node->taints))
      return fw::queueing_hint::queue;
    return fw::queueing_hint::skip;
  }
  if (o.new_node) return new_matching ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  if (o.old_node) return old_matching ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  return fw::queueing_hint::queue;
}

}  // namespace

pod_topology_spread::pod_topology_spread(pod_topology_spread_args args)
  : defaults_(args.system_defaulting ? system_default_constraints() : std::move(args.default_constraints)),
    system_defaulted_(args.system_defaulting) {}

result<std::shared_ptr<fw::plugin>> pod_topology_spread::make(const YAML::Node& args, const std::string& path,
                                                              const fw::handle&) {
  auto parsed = parse_pod_topology_spread_args(args, path);
  if (!parsed) return parsed.err();
  return std::shared_ptr<fw::plugin>(std::make_shared<pod_topology_spread>(std::move(*parsed)));
}

std::vector<fw::cluster_event_with_hint> pod_topology_spread::events_to_register() const {
  // QueueingHints on (kube's default): Pod Add|UpdatePodLabel|UpdatePodToleration|Delete and Node
  // Add|Delete|UpdateNodeLabel|UpdateNodeTaint. The hints copy the defaults so they do not depend
  // on this plugin's lifetime.
  auto defaults = defaults_;
  auto pod_hint = [defaults](const pod_info& pod, const fw::event_objects& o) {
    return after_pod_change(pod, o, defaults);
  };
  auto node_hint = [defaults](const pod_info& pod, const fw::event_objects& o) {
    return after_node_change(pod, o, defaults);
  };
  std::vector<fw::cluster_event_with_hint> out(2);
  out[0].event.resource = fw::event_resource::pod;
  out[0].event.actions = fw::act_add | fw::act_update_pod_label | fw::act_update_pod_toleration | fw::act_delete;
  out[0].event.label = "PodAdd|PodLabelChange|PodTolerationChange|PodDelete";
  out[0].hint = std::move(pod_hint);
  out[1].event.resource = fw::event_resource::node;
  out[1].event.actions = fw::act_add | fw::act_delete | fw::act_update_node_label | fw::act_update_node_taint;
  out[1].event.label = "NodeAdd|NodeDelete|NodeLabelChange|NodeTaintChange";
  out[1].hint = std::move(node_hint);
  return out;
}

bool pod_topology_spread::sign_pod(const pod_info& pod, std::string&) const {
  // Spreading depends on pods across a whole domain, so a pod with constraints (its own or
  // defaulted) cannot share another pod's verdicts.
  const bool own = !pod.spread_constraints.empty() ||
                   (pod.pod && pod.pod->spec().topology_spread_constraints_size() > 0);
  return !own && defaults_.empty();
}

}  // namespace kas::plugins

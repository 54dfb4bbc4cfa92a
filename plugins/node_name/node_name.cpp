#include "plugins/node_name/node_name.hpp"

namespace kas::plugins {

result<std::shared_ptr<fw::plugin>> node_name::make(const YAML::Node&, const std::string&, const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<node_name>());
}

fw::status node_name::filter(const fw::cycle_state&, const pod_info& pod, const node_info& node) const {
  if (pod.node_name.empty() || pod.node_name == node.name) return fw::status::ok();
  return fw::status::unresolvable(err_reason);
}

bool node_name::hot_filter(const fw::cycle_state&, const pod_info& pod, fw::hot_filter&) const {
  return pod.node_name.empty();  // passes everywhere; a named node is a name compare, not in node_hot
}

std::vector<fw::cluster_event_with_hint> node_name::events_to_register() const {
  // No hint: kube retries on every Node/Add.
  return {{{fw::event_resource::node, fw::act_add, "NodeAdd"}, {}}};
}

bool node_name::sign_pod(const pod_info& pod, std::string& out) const {
  out += pod.node_name;
  return true;
}

}  // namespace kas::plugins

// Small value types of the framework: PreFilterResult merge, node_to_status lookup, event matching.
#include "plugins/framework/interfaces.hpp"
#include "plugins/framework/registry.hpp"

namespace kas::fw {

pre_filter_result pre_filter_result::merge(const pre_filter_result& other) const {
  if (all_nodes()) return other;
  if (other.all_nodes()) return *this;
  pre_filter_result out;
  out.from_plugins = from_plugins;
  out.from_plugins.insert(out.from_plugins.end(), other.from_plugins.begin(), other.from_plugins.end());
  out.node_names.emplace();
  for (auto& n : *node_names)
    if (other.node_names->count(n)) out.node_names->insert(n);
  return out;
}

const status* node_to_status::get(const std::string& node) const {
  auto it = statuses.find(node);
  if (it != statuses.end()) return &it->second;
  return absent ? &*absent : nullptr;
}

bool cluster_event::matches(const cluster_event& incoming) const {
  if (resource != event_resource::wildcard && incoming.resource != resource) {
    // AssignedPod / UnscheduledPod events are also Pod events.
    bool pod_family = resource == event_resource::pod &&
                      (incoming.resource == event_resource::assigned_pod ||
                       incoming.resource == event_resource::unscheduled_pod);
    if (!pod_family) return false;
  }
  return (actions & incoming.actions) != 0;
}

status_or_error registry::add(std::string_view name, factory f) {
  if (factories_.count(name)) return error{"plugin \"" + std::string(name) + "\" is registered twice"};
  factories_.emplace(std::string(name), std::move(f));
  return ok_t{};
}

const factory* registry::find(std::string_view name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

}  // namespace kas::fw

// Small value types of the framework: PreFilterResult merge, node_to_status lookup, event matching.
#include <algorithm>
#include <iterator>

#include "plugins/framework/interfaces.hpp"
#include "plugins/framework/registry.hpp"

namespace kas::fw {

bool pre_filter_result::empty() const {
  if (node_indexes) return node_indexes->empty();
  return node_names && node_names->empty();
}

bool pre_filter_result::contains(const snapshot& snap, std::string_view name) const {
  if (node_names) return node_names->count(std::string(name)) > 0;
  if (!node_indexes) return true;
  long i = snap.index_of(name);
  return i >= 0 && std::binary_search(node_indexes->begin(), node_indexes->end(), static_cast<uint32_t>(i));
}

std::optional<std::set<std::string>> pre_filter_result::names(const snapshot& snap) const {
  if (!node_indexes) return node_names;
  std::set<std::string> out;
  for (uint32_t i : *node_indexes)
    if (i < snap.size()) out.insert(snap.node(i).name);
  return out;
}

pre_filter_result pre_filter_result::merge(const pre_filter_result& other, const snapshot& snap) const {
  if (all_nodes()) return other;
  if (other.all_nodes()) return *this;
  pre_filter_result out;
  out.from_plugins = from_plugins;
  out.from_plugins.insert(out.from_plugins.end(), other.from_plugins.begin(), other.from_plugins.end());
  if (node_names && other.node_names) {
    out.node_names.emplace();
    for (auto& n : *node_names)
      if (other.node_names->count(n)) out.node_names->insert(n);
    return out;
  }
  auto both = std::make_shared<std::vector<uint32_t>>();
  if (node_indexes && other.node_indexes) {
    std::set_intersection(node_indexes->begin(), node_indexes->end(), other.node_indexes->begin(),
                          other.node_indexes->end(), std::back_inserter(*both));
  } else {
    // One side by index, the other by name: keep the indexes whose node is named.
    const auto& idx = node_indexes ? *node_indexes : *other.node_indexes;
    const auto& names = node_names ? *node_names : *other.node_names;
    for (uint32_t i : idx)
      if (i < snap.size() && names.count(snap.node(i).name)) both->push_back(i);
  }
  out.node_indexes = std::move(both);
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

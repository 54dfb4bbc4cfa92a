#pragma once
// NodePorts (PreFilter + Filter): the pod's host ports must be free on the node
// (kube-scheduler's plugins/nodeports). PreFilter returns Skip for pods without host ports, so the
// Filter never runs for them.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

class node_ports final : public fw::pre_filter_plugin,
                         public fw::filter_plugin,
                         public fw::enqueue_extensions,
                         public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "NodePorts";
  static constexpr std::string_view pre_filter_key = "PreFilterNodePorts";
  static constexpr std::string_view err_reason = "node(s) didn't have free ports for the requested pod ports";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  std::string_view name() const override { return plugin_name; }
  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;
};

// kube's HostPortInfo.CheckConflict between two port lists (used by the delete-event hint).
bool host_ports_overlap(const std::vector<host_port>& want, const std::vector<host_port>& used);

}  // namespace kas::plugins

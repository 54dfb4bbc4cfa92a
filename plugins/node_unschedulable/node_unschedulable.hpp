#pragma once
// NodeUnschedulable (Filter): rejects nodes with spec.unschedulable unless the pod tolerates the
// node.kubernetes.io/unschedulable:NoSchedule taint (kube-scheduler's plugins/nodeunschedulable).
#include <memory>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

class node_unschedulable final : public fw::filter_plugin,
                                 public fw::enqueue_extensions,
                                 public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "NodeUnschedulable";
  static constexpr std::string_view err_reason = "node(s) were unschedulable";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  std::string_view name() const override { return plugin_name; }
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  bool hot_filter(const fw::cycle_state& state, const pod_info& pod, fw::hot_filter& out) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;
};

}  // namespace kas::plugins

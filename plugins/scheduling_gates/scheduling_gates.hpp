#pragma once
// SchedulingGates (PreEnqueue): a pod with spec.schedulingGates stays out of activeQ until every
// gate is removed (kube-scheduler's plugins/schedulinggates).
#include <memory>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

class scheduling_gates final : public fw::pre_enqueue_plugin, public fw::enqueue_extensions {
public:
  static constexpr std::string_view plugin_name = "SchedulingGates";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  std::string_view name() const override { return plugin_name; }
  // UnschedulableAndUnresolvable "waiting for scheduling gates: [a b]" (Go's %v of a []string).
  fw::status pre_enqueue(const pod_info& pod, const fw::group_directory& groups) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
};

}  // namespace kas::plugins

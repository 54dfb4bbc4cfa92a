#pragma once
// PrioritySort (QueueSort): higher priority first, then the earlier queue timestamp
// (kube-scheduler's plugins/queuesort/priority_sort.go). The members of a pod group are ordered
// as one unit, so two groups' pods never interleave in activeQ: by the group's priority
// (spec.priority, else the member's own), then the group's creation time, then its namespace and
// name, and only then by their own timestamps; as the Coscheduling plugin's QueueSort orders them
// and as kube's workload-aware queue is to order PodGroups (KEP-4671). A pod in no group is
// ordered exactly as upstream orders it.
#include <memory>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

class priority_sort final : public fw::queue_sort_plugin {
public:
  static constexpr std::string_view plugin_name = "PrioritySort";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  std::string_view name() const override { return plugin_name; }
  bool less(const fw::queued_pod_info& a, const fw::queued_pod_info& b) const override;
};

}  // namespace kas::plugins

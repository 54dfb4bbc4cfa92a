#pragma once
// NodeResourcesBalancedAllocation (kube-scheduler's plugins/noderesources/balanced_allocation.go):
// favours nodes whose resource fractions (requested / allocatable, after placing the pod) are close
// to each other. Score = (1 - standard deviation of the fractions) * 100, over the configured
// resources (cpu and memory by default).
// - Unlike NodeResourcesFit's strategies it uses the actual requests (kube's useRequested: true), of
//   the pod and of the node's pods, not the 100m / 200Mi non-zero defaults.
// - PreScore returns Skip for a pod that requests none of the resources (kube #129138), so
//   best-effort pods are not all piled onto one node.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"
#include "plugins/node_resources_fit/fit_args.hpp"
#include "plugins/node_resources_fit/resource_allocation.hpp"

namespace kas::plugins {

// NodeResourcesBalancedAllocationArgs, defaulted (v1 SetDefaults_NodeResourcesBalancedAllocationArgs)
// and validated (ValidateNodeResourcesBalancedAllocationArgs: unique names, every weight 1).
struct balanced_allocation_args {
  std::vector<resource_spec> resources{{"cpu", 1}, {"memory", 1}};
};

result<balanced_allocation_args> parse_balanced_allocation_args(const YAML::Node& args, const std::string& path);

// kube's balancedResourceScorer: fractions capped at 1, resources with allocatable 0 left out.
int64_t balanced_resource_score(const resource_values& requested, const resource_values& allocatable);

class node_resources_balanced_allocation final : public fw::pre_score_plugin,
                                                 public fw::score_plugin,
                                                 public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "NodeResourcesBalancedAllocation";
  static constexpr std::string_view pre_score_key = "PreScoreNodeResourcesBalancedAllocation";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);
  explicit node_resources_balanced_allocation(balanced_allocation_args args) : args_(std::move(args)) {
    classify_resources(args_.resources);
  }

  std::string_view name() const override { return plugin_name; }
  const balanced_allocation_args& args() const { return args_; }

  fw::status pre_score(fw::cycle_state& state, const pod_info& pod,
                       const std::vector<const node_info*>& nodes) const override;
  fw::status score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                   int64_t& out) const override;
  fw::status score_nodes(const fw::cycle_state& state, const pod_info& pod, const node_info* const* nodes, size_t n,
                         int64_t* out) const override;
  bool score_hot(const fw::cycle_state& state, const pod_info& pod, const node_hot* const* hot, size_t n,
                 int64_t* out) const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;

  // The pod's actual request for each configured resource.
  std::vector<int64_t> pod_requests(const pod_info& pod) const;
  int64_t score_requests(const node_info& node, const std::vector<int64_t>& pod_requests) const;

private:
  // Configuration, immutable after make(); no per-cycle state.
  balanced_allocation_args args_;
};

}  // namespace kas::plugins

#pragma once
// NodeResourcesFit (kube-scheduler's plugins/noderesources/fit.go):
// - PreFilter: stores the pod's effective requests in the cycle state.
// - Filter: pod count, cpu, memory, ephemeral-storage and every requested scalar resource must fit
//   the node's allocatable minus what its pods request. Every shortfall is reported (one reason
//   each); the code is UnschedulableAndUnresolvable when the request exceeds the node's whole
//   allocatable (preemption cannot help), Unschedulable otherwise.
// - PreScore/Score: the configured strategy (LeastAllocated by default, cpu and memory weight 1).
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

// One shortfall found by fits_request.
struct insufficient_resource {
  std::string_view reason;  // "Insufficient cpu", "Too many pods", ... (interned)
  bool unresolvable = false;
};

// kube's fitsRequest: the shortfalls of placing `request` on a node with this allocatable, these
// requested totals and `pod_count` pods. Extended resources named in `ignored` (or whose domain is
// in `ignored_groups`) are not checked.
void fits_request(const resource_list& request, const resource_list& allocatable, const resource_list& requested,
                  size_t pod_count, const std::set<std::string, std::less<>>& ignored,
                  const std::set<std::string, std::less<>>& ignored_groups, std::vector<insufficient_resource>& out);

class node_resources_fit final : public fw::pre_filter_plugin,
                                 public fw::filter_plugin,
                                 public fw::pre_score_plugin,
                                 public fw::score_plugin,
                                 public fw::enqueue_extensions,
                                 public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "NodeResourcesFit";
  static constexpr std::string_view pre_filter_key = "PreFilterNodeResourcesFit";
  static constexpr std::string_view pre_score_key = "PreScoreNodeResourcesFit";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);
  explicit node_resources_fit(node_resources_fit_args args) : args_(std::move(args)) {
    classify_resources(args_.resources);
  }

  std::string_view name() const override { return plugin_name; }
  const node_resources_fit_args& args() const { return args_; }

  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  bool hot_filter(const fw::cycle_state& state, const pod_info& pod, fw::hot_filter& out) const override;
  bool score_hot(const fw::cycle_state& state, const pod_info& pod, const node_hot* const* hot, size_t n,
                 int64_t* out) const override;
  fw::status pre_score(fw::cycle_state& state, const pod_info& pod,
                       const std::vector<const node_info*>& nodes) const override;
  fw::status score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                   int64_t& out) const override;
  fw::status score_nodes(const fw::cycle_state& state, const pod_info& pod, const node_info* const* nodes, size_t n,
                         int64_t* out) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;

private:
  int64_t score_requests(const node_info& node, const std::vector<int64_t>& pod_requests) const;
  // The scoring strategy over per-resource requested (the pod's included) and allocatable values.
  int64_t score_values(const resource_values& requested, const resource_values& allocatable) const;

  // Configuration, immutable after make(); no per-cycle state.
  node_resources_fit_args args_;
};

}  // namespace kas::plugins

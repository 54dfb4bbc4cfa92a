#pragma once
// InterPodAffinity (kube-scheduler's plugins/interpodaffinity):
// - PreFilter counts, per topology pair (key, value), the existing pods that match the incoming
//   pod's required affinity / anti-affinity terms, and the existing pods whose required
//   anti-affinity terms match the incoming pod. Skip when all three are irrelevant.
//   AddPod/RemovePod adjust the counts (preemption, nominated pods).
// - Filter: affinity (UnschedulableAndUnresolvable), then the pod's anti-affinity and then the
//   existing pods' anti-affinity (both Unschedulable: preemption may help).
// - PreScore/Score: preferred terms of the incoming pod, and the existing pods' preferred terms and
//   required affinity terms (weighted by hardPodAffinityWeight) that match it, summed per topology
//   pair; NormalizeScore min-max scales to [0, 100].
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

// InterPodAffinityArgs, defaulted as kube's v1 SetDefaults_InterPodAffinityArgs.
struct inter_pod_affinity_args {
  int32_t hard_pod_affinity_weight = 1;  // [0, 100]
  bool ignore_preferred_terms_of_existing_pods = false;
};

// Decodes and validates InterPodAffinityArgs; errors name `path` ("<path>.hardPodAffinityWeight: ...").
result<inter_pod_affinity_args> parse_inter_pod_affinity_args(const YAML::Node& args, const std::string& path);

class inter_pod_affinity final : public fw::pre_filter_plugin,
                                 public fw::pre_filter_extensions,
                                 public fw::filter_plugin,
                                 public fw::pre_score_plugin,
                                 public fw::score_plugin,
                                 public fw::enqueue_extensions,
                                 public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "InterPodAffinity";
  static constexpr std::string_view err_reason_affinity = "node(s) didn't match pod affinity rules";
  static constexpr std::string_view err_reason_anti_affinity = "node(s) didn't match pod anti-affinity rules";
  static constexpr std::string_view err_reason_existing_anti_affinity =
    "node(s) didn't satisfy existing pods anti-affinity rules";
  // cycle_state keys (kube's preFilterStateKey / preScoreStateKey).
  static constexpr std::string_view pre_filter_key = "PreFilterInterPodAffinity";
  static constexpr std::string_view pre_score_key = "PreScoreInterPodAffinity";

  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path, const fw::handle& h);
  explicit inter_pod_affinity(inter_pod_affinity_args args) : args_(args) {}

  std::string_view name() const override { return plugin_name; }

  // filtering.cpp
  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  const fw::pre_filter_extensions* extensions() const override { return this; }
  fw::status add_pod(fw::cycle_state& state, const pod_info& pod_to_schedule, const pod_info& pod_to_add,
                     const node_info& node) const override;
  fw::status remove_pod(fw::cycle_state& state, const pod_info& pod_to_schedule, const pod_info& pod_to_remove,
                        const node_info& node) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  // Existing pods on other nodes decide the verdict (topology domains span nodes).
  bool cross_node() const override { return true; }
  // PreFilter skips only when no existing pod's required anti-affinity matches the pod (and the pod
  // has no required terms): only a pod with required anti-affinity terms can change that.
  bool skip_may_change_with(const pod_info& changed) const override { return !changed.required_anti_affinity.empty(); }

  // scoring.cpp
  fw::status pre_score(fw::cycle_state& state, const pod_info& pod,
                       const std::vector<const node_info*>& nodes) const override;
  fw::status score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                   int64_t& out) const override;
  bool has_normalize() const override { return true; }
  fw::status normalize_score(const fw::cycle_state& state, const pod_info& pod,
                             std::vector<fw::node_score>& scores) const override;

  // inter_pod_affinity.cpp
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;

  const inter_pod_affinity_args& args() const { return args_; }

private:
  // Configuration, immutable after make(); no per-cycle state.
  inter_pod_affinity_args args_;
};

}  // namespace kas::plugins

#pragma once
// PodTopologySpread (kube-scheduler's plugins/podtopologyspread):
// - PreFilter: counts, per DoNotSchedule constraint and topology value, the matching pods on every
//   eligible node (nodeAffinityPolicy / nodeTaintsPolicy, all topology keys present), and the two
//   smallest domains; Skip when the pod has no hard constraints. AddPod/RemovePod adjust the counts.
// - Filter: a node without a topology key is UnschedulableAndUnresolvable; otherwise
//   count(domain) + self-match - global minimum (0 when fewer domains than minDomains) must not
//   exceed maxSkew.
// - PreScore/Score: ScheduleAnyway constraints; a node scores the matching pods of its domains,
//   weighted by log(#domains + 2), plus maxSkew - 1. NormalizeScore reverses (fewer = better) and
//   gives 0 to nodes missing a topology key.
// Pods without constraints of their own get the default constraints (kube's system defaults, or
// the List from the args) with a selector deduced from the Services and controller that own them.
//
// Cycle state: the PreFilter counts (deep-copied on clone, since preemption's AddPod/RemovePod
// mutate them) and the PreScore counts (immutable once written, shared by clones). PreScore counts
// over every node of the cycle's snapshot (cycle_state::snapshot()), as kube's does through the
// shared lister, not only over the feasible nodes it is handed.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"
#include "plugins/pod_topology_spread/spread_args.hpp"

namespace kas::plugins {

class pod_topology_spread final : public fw::pre_filter_plugin,
                                  public fw::pre_filter_extensions,
                                  public fw::filter_plugin,
                                  public fw::pre_score_plugin,
                                  public fw::score_plugin,
                                  public fw::enqueue_extensions,
                                  public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "PodTopologySpread";
  static constexpr std::string_view pre_filter_key = "PreFilterPodTopologySpread";
  static constexpr std::string_view pre_score_key = "PreScorePodTopologySpread";
  static constexpr std::string_view err_reason_constraints_not_match =
    "node(s) didn't match pod topology spread constraints";
  static constexpr std::string_view err_reason_node_label_not_match =
    "node(s) didn't match pod topology spread constraints (missing required label)";

  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);
  explicit pod_topology_spread(pod_topology_spread_args args);

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
  // Skew is counted over every node of the topology domain, so the verdict spans nodes.
  bool cross_node() const override { return true; }
  // PreFilter skips when the pod has no constraints (its own, or defaulted from the workload objects,
  // whose changes force a full re-validation anyway): no other pod can change that.
  bool skip_may_change_with(const pod_info&) const override { return false; }

  // scoring.cpp
  fw::status pre_score(fw::cycle_state& state, const pod_info& pod,
                       const std::vector<const node_info*>& nodes) const override;
  fw::status score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                   int64_t& out) const override;
  bool has_normalize() const override { return true; }
  fw::status normalize_score(const fw::cycle_state& state, const pod_info& pod,
                             std::vector<fw::node_score>& scores) const override;

  // pod_topology_spread.cpp
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;

  const std::vector<spread_constraint>& default_constraints() const { return defaults_; }
  bool system_defaulted() const { return system_defaulted_; }

private:
  fw::status update_with_pod(fw::cycle_state& state, const pod_info& updated, const pod_info& preemptor,
                             const node_info& node, int delta) const;

  // Configuration, immutable after make(); no per-cycle state.
  std::vector<spread_constraint> defaults_;
  bool system_defaulted_ = false;
};

}  // namespace kas::plugins

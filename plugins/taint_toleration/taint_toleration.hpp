#pragma once
// TaintToleration (kube-scheduler's plugins/tainttoleration):
// - Filter: the node's NoSchedule/NoExecute taints must all be tolerated.
// - PreScore/Score: counts the node's PreferNoSchedule taints the pod does not tolerate;
//   NormalizeScore reverses (fewer intolerable taints = higher score).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

class taint_toleration final : public fw::filter_plugin,
                               public fw::pre_score_plugin,
                               public fw::score_plugin,
                               public fw::enqueue_extensions,
                               public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "TaintToleration";
  static constexpr std::string_view pre_score_key = "PreScoreTaintToleration";
  static constexpr std::string_view err_reason = "node(s) had untolerated taint(s)";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  std::string_view name() const override { return plugin_name; }
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  bool hot_filter(const fw::cycle_state& state, const pod_info& pod, fw::hot_filter& out) const override;
  bool score_hot(const fw::cycle_state& state, const pod_info& pod, const node_hot* const* hot, size_t n,
                 int64_t* out) const override;
  std::string explain(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  fw::status pre_score(fw::cycle_state& state, const pod_info& pod,
                       const std::vector<const node_info*>& nodes) const override;
  fw::status score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                   int64_t& out) const override;
  fw::status score_nodes(const fw::cycle_state& state, const pod_info& pod, const node_info* const* nodes, size_t n,
                         int64_t* out) const override;
  bool has_normalize() const override { return true; }
  fw::status normalize_score(const fw::cycle_state& state, const pod_info& pod,
                             std::vector<fw::node_score>& scores) const override;
  fw::status normalize_row(const fw::cycle_state& state, const pod_info& pod, const node_info* const* nodes, size_t n,
                           int64_t* scores) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;
};

// kube's FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc: the first NoSchedule or
// NoExecute taint that no toleration tolerates, or null.
const taint* find_untolerated_do_not_schedule_taint(const std::vector<taint>& taints,
                                                     const std::vector<toleration>& tolerations);
bool tolerations_tolerate(const std::vector<toleration>& tolerations, const taint& t);
// A canonical text of the tolerations (order-insensitive), for SignPod.
std::string sign_tolerations(const std::vector<toleration>& tolerations);

}  // namespace kas::plugins

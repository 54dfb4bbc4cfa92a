#pragma once
// NodeAffinity (kube-scheduler's plugins/nodeaffinity):
// - PreFilter: Skip when the pod has neither nodeSelector nor required node affinity (and no
//   addedAffinity); narrows the candidate nodes when every required term pins metadata.name.
// - Filter: spec.nodeSelector and required node affinity (plus args.addedAffinity) must match.
// - PreScore/Score: sum of the weights of matching preferred terms; NormalizeScore max-scales.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

struct node_affinity_args {
  std::optional<node_selector> added_required;
  std::vector<preferred_scheduling_term> added_preferred;
};

// Decodes and validates NodeAffinityArgs; errors name `path` ("<path>.addedAffinity...").
result<node_affinity_args> parse_node_affinity_args(const YAML::Node& args, const std::string& path);

class node_affinity final : public fw::pre_filter_plugin,
                            public fw::filter_plugin,
                            public fw::pre_score_plugin,
                            public fw::score_plugin,
                            public fw::enqueue_extensions,
                            public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "NodeAffinity";
  static constexpr std::string_view err_reason_pod = "node(s) didn't match Pod's node affinity/selector";
  static constexpr std::string_view err_reason_enforced = "node(s) didn't match scheduler-enforced node affinity";
  static constexpr std::string_view err_reason_conflict = "pod affinity terms conflict";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);
  explicit node_affinity(node_affinity_args args) : args_(std::move(args)) {}

  std::string_view name() const override { return plugin_name; }
  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  std::string explain(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  fw::status pre_score(fw::cycle_state& state, const pod_info& pod,
                       const std::vector<const node_info*>& nodes) const override;
  fw::status score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                   int64_t& out) const override;
  bool has_normalize() const override { return true; }
  fw::status normalize_score(const fw::cycle_state& state, const pod_info& pod,
                             std::vector<fw::node_score>& scores) const override;
  fw::status normalize_row(const fw::cycle_state& state, const pod_info& pod, const node_info* const* nodes, size_t n,
                           int64_t* scores) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;

private:
  // Configuration, immutable after make(); no per-cycle state.
  node_affinity_args args_;
};

// kube's GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector and the required terms.
bool pod_matches_node_selector_and_affinity(const pod_info& pod, const label_map& labels,
                                            const std::string& node_name);

}  // namespace kas::plugins

#pragma once
// ImageLocality (kube-scheduler's plugins/imagelocality/image_locality.go): favours nodes that
// already hold the pod's container images. Each image found on the node adds its size, scaled by
// how widely it has spread (nodes holding it / all nodes, against the "node heating" problem); the
// sum is clamped to [23 MiB, 1000 MiB x containers] and mapped onto [0, 100].
//
// kube's ImageLocality is Score-only: Score reads ImageStateSummary.NumNodes and the node count from
// the shared lister's snapshot. Ours adds a PreScore that is a pure precomputation: over the cycle's
// snapshot (cycle_state::snapshot()) it counts, for each of the pod's images, the nodes holding it,
// once per pod (O(nodes x pod images)); Score then only looks up the node's images. Without that
// state (a profile enabling the plugin at score only), Score counts the spread of each pod image the
// node holds by scanning the snapshot itself: slower (O(nodes) per node scored) but exact. Without a
// snapshot either (a cycle_state built by hand), the node is taken as the whole cluster: each image
// it holds has spread 1/1.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

inline constexpr int64_t image_mb = 1024 * 1024;
inline constexpr int64_t image_min_threshold = 23 * image_mb;
inline constexpr int64_t image_max_container_threshold = 1000 * image_mb;

// kube's normalizedImageName: ":latest" is added when the name carries no tag.
std::string normalized_image_name(const std::string& name);
// kube's calculatePriority.
int64_t image_priority(int64_t sum_scores, int64_t num_containers);

class image_locality final : public fw::pre_score_plugin, public fw::score_plugin {
public:
  static constexpr std::string_view plugin_name = "ImageLocality";
  static constexpr std::string_view pre_score_key = "PreScoreImageLocality";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  std::string_view name() const override { return plugin_name; }

  // Skip when the pod has no images (every node would score 0).
  fw::status pre_score(fw::cycle_state& state, const pod_info& pod,
                       const std::vector<const node_info*>& nodes) const override;
  fw::status score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                   int64_t& out) const override;
  fw::status score_nodes(const fw::cycle_state& state, const pod_info& pod, const node_info* const* nodes, size_t n,
                         int64_t* out) const override;
  bool score_hot(const fw::cycle_state& state, const pod_info& pod, const node_hot* const* hot, size_t n,
                 int64_t* out) const override;
};

}  // namespace kas::plugins

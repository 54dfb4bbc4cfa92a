// kube-scheduler v1.36's default profile (no config file), as the framework sees it after the
// multiPoint expansion.
//
// Upstream (pkg/scheduler/apis/config/v1/default_plugins.go, getDefaultPlugins) enables, in this
// multiPoint order (score weight in parentheses):
//   SchedulingGates, PrioritySort, NodeUnschedulable, NodeName, TaintToleration (3),
//   NodeAffinity (2), NodePorts, NodeResourcesFit (1), VolumeRestrictions, NodeVolumeLimits,
//   VolumeBinding, VolumeZone, PodTopologySpread (2), InterPodAffinity (2),
//   [DynamicResources — inserted just before DefaultPreemption while the DRA gate is on, the default],
//   DefaultPreemption, NodeResourcesBalancedAllocation (1), ImageLocality (1), DefaultBinder.
// The framework expands multiPoint by walking this list once per extension point and appending
// every plugin that implements that point, so each point's order is the multiPoint order. Filter
// order matters: the first failing filter is the one a node's status reports.
//
// This build registers only the rows below (plugins/in_tree.cpp). A later plugin is added as a row
// at its position in the upstream order above, with the extension points it implements;
// tests/plugins/default_profile_test.cpp checks every row against the registered plugin.
#include <cstdint>
#include <string>
#include <vector>

#include "config/profile.hpp"

namespace kas {

namespace {

enum point : uint32_t {
  pre_enqueue = 1u << 0,
  queue_sort = 1u << 1,
  pre_filter = 1u << 2,
  filter = 1u << 3,
  post_filter = 1u << 4,
  pre_score = 1u << 5,
  score = 1u << 6,
  reserve = 1u << 7,
  permit = 1u << 8,
  pre_bind = 1u << 9,
  bind = 1u << 10,
  post_bind = 1u << 11,
};

struct multi_point_plugin {
  const char* name;
  int32_t weight;  // score weight; 0 for plugins without Score
  uint32_t points;
};

// The upstream multiPoint list, restricted to the plugins this build registers, in upstream order.
const std::vector<multi_point_plugin>& default_multi_point() {
  static const std::vector<multi_point_plugin> list = {
    {"SchedulingGates", 0, pre_enqueue},
    {"PrioritySort", 0, queue_sort},
    {"NodeUnschedulable", 0, filter},
    {"NodeName", 0, filter},
    {"TaintToleration", 3, filter | pre_score | score},
    {"NodeAffinity", 2, pre_filter | filter | pre_score | score},
    {"NodePorts", 0, pre_filter | filter},
    {"NodeResourcesFit", 1, pre_filter | filter | pre_score | score},
    {"VolumeRestrictions", 0, pre_filter | filter},
    {"NodeVolumeLimits", 0, pre_filter | filter},
    // Score (and PreScore) only do something with the StorageCapacityScoring gate, alpha and off
    // in v1.36: PreScore skips. The weight is kube's default for a multiPoint plugin without one.
    {"VolumeBinding", 1, pre_filter | filter | pre_score | score | reserve | pre_bind},
    {"VolumeZone", 0, pre_filter | filter},
    {"PodTopologySpread", 2, pre_filter | filter | pre_score | score},
    {"InterPodAffinity", 2, pre_filter | filter | pre_score | score},
    // DynamicResources goes here when it is implemented.
    // GangScheduling (PodGroups, KEP-4671): before DefaultPreemption, as upstream places the
    // plugins a PostFilter should not pre-empt for. Only pods of a gang PodGroup are affected.
    {"GangScheduling", 0, pre_enqueue | pre_filter | filter | permit},
    {"DefaultPreemption", 0, pre_enqueue | post_filter},
    {"NodeResourcesBalancedAllocation", 1, pre_score | score},
    // ImageLocality is Score-only upstream. Its PreScore here is a pure precomputation (each pod
    // image's node count over the cycle's snapshot, once per pod instead of once per node scored);
    // a profile enabling it at score only gets the same scores, computed more slowly.
    {"ImageLocality", 1, pre_score | score},
    {"DefaultBinder", 0, bind},
  };
  return list;
}

}  // namespace

profile_config default_profile() {
  profile_config p;
  std::vector<std::string>* lists[] = {&p.pre_enqueue, &p.queue_sort, &p.pre_filter, &p.filter,
                                       &p.post_filter, &p.pre_score,  &p.score,      &p.reserve,
                                       &p.permit,      &p.pre_bind,   &p.bind,       &p.post_bind};
  for (const auto& pl : default_multi_point()) {
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); ++i)
      if (pl.points & (1u << i)) lists[i]->push_back(pl.name);
    if (pl.points & score) p.score_weights[pl.name] = pl.weight;
  }
  return p;
}

}  // namespace kas

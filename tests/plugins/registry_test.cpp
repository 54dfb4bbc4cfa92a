// The in-tree registry and the default profile: every default plugin is registered, builds with
// no args, and implements exactly the extension points the profile lists it under.
#include <algorithm>

#include <gtest/gtest.h>

#include "config/profile.hpp"
#include "plugins/framework/registry.hpp"

namespace kas {
namespace {

bool listed(const std::vector<std::string>& v, const std::string& n) { return std::find(v.begin(), v.end(), n) != v.end(); }

TEST(InTreeRegistry, EveryPluginBuildsWithDefaultArgsAndKnowsItsName) {
  auto reg = fw::in_tree_registry();
  // The 18 plugins of kube v1.36's default set this build implements (DynamicResources is not
  // implemented yet).
  EXPECT_EQ(reg.all().size(), 19u);
  for (auto& [name, f] : reg.all()) {
    auto p = f(YAML::Node(), "profiles[0].pluginConfig[0].args", fw::handle{});
    ASSERT_TRUE(p.ok()) << name << ": " << p.err().message;
    EXPECT_EQ((*p)->name(), name);
  }
  EXPECT_FALSE(reg.add("NodeName", reg.all().begin()->second).ok()) << "duplicate names are rejected";
}

TEST(DefaultProfile, MatchesKubeOrderAndWeights) {
  using v = std::vector<std::string>;
  auto p = default_profile();
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_EQ(p.pre_enqueue, (v{"SchedulingGates", "GangScheduling", "DefaultPreemption"}));
  EXPECT_EQ(p.queue_sort, (v{"PrioritySort"}));
  EXPECT_EQ(p.pre_filter, (v{"NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
                              "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "GangScheduling"}));
  EXPECT_EQ(p.filter, (v{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                         "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
                         "PodTopologySpread", "InterPodAffinity", "GangScheduling"}));
  EXPECT_EQ(p.post_filter, (v{"DefaultPreemption"}));
  EXPECT_EQ(p.pre_score, (v{"TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                            "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"}));
  EXPECT_EQ(p.score, (v{"TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                        "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"}));
  EXPECT_EQ(p.score_weights,
            (std::map<std::string, int32_t>{{"TaintToleration", 3}, {"NodeAffinity", 2}, {"NodeResourcesFit", 1},
                                            {"PodTopologySpread", 2}, {"InterPodAffinity", 2},
                                            {"NodeResourcesBalancedAllocation", 1}, {"ImageLocality", 1},
                                            {"VolumeBinding", 1}}));
  EXPECT_EQ(p.bind, (v{"DefaultBinder"}));
  EXPECT_EQ(p.reserve, (v{"VolumeBinding"}));
  EXPECT_EQ(p.permit, (v{"GangScheduling"}));
  EXPECT_EQ(p.pre_bind, (v{"VolumeBinding"}));
  EXPECT_TRUE(p.post_bind.empty());
}

TEST(DefaultProfile, EachListedPluginImplementsItsPoints) {
  auto p = default_profile();
  auto reg = fw::in_tree_registry();
  for (auto& [name, f] : reg.all()) {
    auto built = f(YAML::Node(), "args", fw::handle{});
    ASSERT_TRUE(built.ok());
    fw::plugin* pl = built->get();
    EXPECT_EQ(listed(p.pre_enqueue, name), dynamic_cast<fw::pre_enqueue_plugin*>(pl) != nullptr) << name;
    EXPECT_EQ(listed(p.queue_sort, name), dynamic_cast<fw::queue_sort_plugin*>(pl) != nullptr) << name;
    EXPECT_EQ(listed(p.pre_filter, name), dynamic_cast<fw::pre_filter_plugin*>(pl) != nullptr) << name;
    EXPECT_EQ(listed(p.filter, name), dynamic_cast<fw::filter_plugin*>(pl) != nullptr) << name;
    EXPECT_EQ(listed(p.pre_score, name), dynamic_cast<fw::pre_score_plugin*>(pl) != nullptr) << name;
    EXPECT_EQ(listed(p.score, name), dynamic_cast<fw::score_plugin*>(pl) != nullptr) << name;
    EXPECT_EQ(listed(p.bind, name), dynamic_cast<fw::bind_plugin*>(pl) != nullptr) << name;
  }
}

}  // namespace
}  // namespace kas

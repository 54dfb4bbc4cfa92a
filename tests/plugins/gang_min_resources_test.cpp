// Coscheduling's minResources, as GangScheduling's PreFilter checks it: the free resources of the
// whole cluster, the group's own pods counted as free, must cover minResources and minMember pods.
#include <gtest/gtest.h>

#include "cache/snapshot.hpp"
#include "plugins/gang_scheduling/gang_scheduling.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::test {
namespace {

const std::string group_key = pod_group_key(pod_group_api::coscheduling, "default", "train");

pod_group_ptr coscheduling_group(int32_t min_member, int64_t milli_cpu, int64_t memory = 0) {
  auto g = std::make_shared<pod_group>();
  g->api = pod_group_api::coscheduling;
  g->ns = "default";
  g->name = "train";
  g->gang = true;
  g->min_count = min_member;
  g->min_resources.milli_cpu = milli_cpu;
  g->min_resources.memory = memory;
  return g;
}

// A pod on a node: `group` empty for a pod of no group.
pod_info_ptr running(const std::string& name, const std::string& cpu, const std::string& group = "") {
  auto p = std::make_shared<pod_info>(*pod_with_requests(name, {{cpu, "1Gi"}}));
  if (!group.empty()) {
    p->group_api = pod_group_api::coscheduling;
    p->group_name = group;
    p->group_key = pod_group_key(p->group_api, p->ns, group);
  }
  return p;
}

// Two nodes of 4 CPUs and 8 pods; n0 runs 3 CPUs of other pods, n1 one CPU of the group's own pod.
snapshot cluster() {
  snapshot s;
  s.add_node(node_with_allocatable("n0", "4", "16Gi", "8", {running("other-0", "2"), running("other-1", "1")}), 1);
  s.add_node(node_with_allocatable("n1", "4", "16Gi", "8", {running("own-0", "1", "train")}), 2);
  return s;
}

TEST(GangMinResourcesTest, AGroupWithoutMinResourcesIsNotChecked) {
  auto g = coscheduling_group(4, 0);
  EXPECT_FALSE(plugins::has_min_resources(*g));
  EXPECT_TRUE(plugins::check_min_resources(*g, group_key, cluster()).is_success());
}

TEST(GangMinResourcesTest, TheGroupsOwnPodsCountAsFree) {
  // Free: n0 1 CPU, n1 4 CPUs (its one CPU is the group's own): 5 CPUs.
  EXPECT_TRUE(plugins::check_min_resources(*coscheduling_group(4, 5000), group_key, cluster()).is_success());
  auto s = plugins::check_min_resources(*coscheduling_group(4, 5500, 40LL << 30), group_key, cluster());
  EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable);
  // Memory free: n0 16Gi less the other pods' 2Gi, n1 all 16Gi (the own pod's 1Gi counted free):
  // 30Gi against 40Gi.
  EXPECT_EQ(s.message(), "resource gap: cpu 500m, memory 10737418240");
}

TEST(GangMinResourcesTest, MinMemberPodsMustFitTheFreePodSlots) {
  // 8 + 8 pod slots less the two other pods: 14; minMember 15 leaves a gap of one pod.
  auto s = plugins::check_min_resources(*coscheduling_group(15, 1000), group_key, cluster());
  EXPECT_EQ(s.message(), "resource gap: pods 1");
  EXPECT_TRUE(plugins::check_min_resources(*coscheduling_group(14, 1000), group_key, cluster()).is_success());
}

// Through PreFilter: a member of a group whose minResources the cluster lacks is rejected before
// any Filter runs, with the gap named.
TEST(GangMinResourcesTest, PreFilterRejectsAMemberWhileTheClusterLacksMinResources) {
  plugins::gang_scheduling pl;
  fw::gang_ticket ticket;
  ticket.group = coscheduling_group(2, 6000);
  ticket.key = group_key;
  fw::cycle_state state;
  state.gang = &ticket;
  auto pod = running("m0", "1", "train");
  auto snap = cluster();
  fw::pre_filter_result r;
  auto s = pl.pre_filter(state, *pod, snap, r);
  EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable);
  EXPECT_EQ(s.message(), "resource gap: cpu 1000m");
  ticket.group = coscheduling_group(2, 5000);
  EXPECT_TRUE(pl.pre_filter(state, *pod, snap, r).is_skip()) << "no topology: nothing more to do";
}

}  // namespace
}  // namespace kas::test

// Coscheduling's minResources, as GangScheduling's PreFilter checks it: the free resources of the
// whole cluster, the group's own pods counted as free, must cover minResources and minMember pods.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

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
  EXPECT_EQ(s.message(), "resource gap: cpu 500m, memory 10Gi");
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
  EXPECT_EQ(s.message(), "resource gap: cpu 1");
  ticket.group = coscheduling_group(2, 5000);
  EXPECT_TRUE(pl.pre_filter(state, *pod, snap, r).is_skip()) << "no topology: nothing more to do";
}


// --- permittedPG: a group that passed is not checked again for the attempt's other members ------

using namespace std::chrono_literals;
using permitted_clock = plugins::permitted_groups::clock;

// Both nodes full of other pods: no group with minResources passes here.
snapshot full_cluster() {
  snapshot s;
  s.add_node(node_with_allocatable("n0", "4", "16Gi", "8", {running("other-0", "4")}), 1);
  s.add_node(node_with_allocatable("n1", "4", "16Gi", "8", {running("other-1", "4")}), 2);
  return s;
}

// One member's PreFilter in attempt `round` of the group `g`.
struct member {
  fw::gang_ticket ticket;
  fw::cycle_state state;
  pod_info_ptr pod = running("m", "1", "train");
  member(pod_group_ptr g, uint64_t round, const std::string& key = group_key) {
    ticket.group = std::move(g);
    ticket.key = key;
    ticket.round = round;
    state.gang = &ticket;
  }
  member(const member&) = delete;
  fw::status pre_filter(const plugins::gang_scheduling& pl, const snapshot& snap) {
    fw::pre_filter_result r;
    return pl.pre_filter(state, *pod, snap, r);
  }
};

// A plugin whose permittedPG reads `now`.
struct timed_plugin {
  plugins::gang_scheduling pl;
  permitted_clock::time_point now = permitted_clock::time_point(std::chrono::hours(1));
  timed_plugin() {
    pl.permitted().set_clock([this] { return now; });
  }
};

TEST(GangMinResourcesTest, TheAttemptsOtherMembersSkipTheCheckOnceTheGroupPassed) {
  timed_plugin t;
  auto g = coscheduling_group(2, 5000);
  member first(g, 1);
  EXPECT_TRUE(first.pre_filter(t.pl, cluster()).is_skip());
  EXPECT_EQ(t.pl.permitted().walks(), 1u);
  EXPECT_TRUE(t.pl.permitted().permitted(first.ticket));

  // The cluster filled up since: a check would fail, but the second member does not run it.
  auto full = full_cluster();
  ASSERT_EQ(plugins::check_min_resources(*g, group_key, full).message(), "resource gap: cpu 5");
  member second(g, 1);
  EXPECT_TRUE(second.pre_filter(t.pl, full).is_skip());
  EXPECT_EQ(t.pl.permitted().walks(), 1u) << "no walk over the nodes' pods";
}

TEST(GangMinResourcesTest, APassLastsTheGroupsScheduleTimeoutOrUpstreamsDefault) {
  struct tc {
    std::string name;
    std::chrono::seconds schedule_timeout;
    std::chrono::seconds lasts;
  };
  for (auto& c : std::vector<tc>{{"scheduleTimeoutSeconds 30", 30s, 30s},
                                 {"unset: upstream's 60 s", 0s, plugins::permitted_groups::default_ttl}}) {
    SCOPED_TRACE(c.name);
    timed_plugin t;
    auto g = std::make_shared<pod_group>(*coscheduling_group(2, 5000));
    g->schedule_timeout = c.schedule_timeout;
    member first(g, 1);
    ASSERT_TRUE(first.pre_filter(t.pl, cluster()).is_skip());
    auto full = full_cluster();
    auto passed = t.now;
    t.now = passed + c.lasts - 1ns;
    member second(g, 1);
    EXPECT_TRUE(second.pre_filter(t.pl, full).is_skip());
    EXPECT_EQ(t.pl.permitted().walks(), 1u);
    // Expired: checked again, and the full cluster fails it.
    t.now = passed + c.lasts;
    EXPECT_FALSE(t.pl.permitted().permitted(second.ticket));
    member third(g, 1);
    auto s = third.pre_filter(t.pl, full);
    EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable);
    EXPECT_EQ(s.message(), "resource gap: cpu 5");
    EXPECT_EQ(t.pl.permitted().walks(), 2u);
  }
}

TEST(GangMinResourcesTest, AGroupThatFailedIsCheckedEachTime) {
  timed_plugin t;
  auto g = coscheduling_group(2, 6000);
  for (int i = 0; i < 3; ++i) {
    member m(g, 1);
    EXPECT_EQ(m.pre_filter(t.pl, cluster()).message(), "resource gap: cpu 1");
  }
  EXPECT_EQ(t.pl.permitted().walks(), 3u);
  EXPECT_EQ(t.pl.permitted().size(), 0u);
  // Room appears (the other pods went): the next member passes, and the one after skips the check.
  snapshot freed;
  freed.add_node(node_with_allocatable("n0", "4", "16Gi", "8", {}), 1);
  freed.add_node(node_with_allocatable("n1", "4", "16Gi", "8", {}), 2);
  member passes(g, 1);
  EXPECT_TRUE(passes.pre_filter(t.pl, freed).is_skip());
  member skips(g, 1);
  EXPECT_TRUE(skips.pre_filter(t.pl, full_cluster()).is_skip());
  EXPECT_EQ(t.pl.permitted().walks(), 4u);
}

// Upstream drops the entry when a member fails (PostFilter, Unreserve), so the group's next attempt
// is checked again: here a pass holds for its attempt (the ticket's round). A changed PodGroup (a
// new object) is checked again too.
TEST(GangMinResourcesTest, TheNextAttemptOrAChangedGroupIsCheckedAgain) {
  timed_plugin t;
  auto g = coscheduling_group(2, 5000);
  member first(g, 1);
  ASSERT_TRUE(first.pre_filter(t.pl, cluster()).is_skip());
  auto full = full_cluster();

  member next_attempt(g, 2);
  EXPECT_EQ(next_attempt.pre_filter(t.pl, full).message(), "resource gap: cpu 5");
  EXPECT_EQ(t.pl.permitted().walks(), 2u);

  member again(g, 2);
  ASSERT_TRUE(again.pre_filter(t.pl, cluster()).is_skip());
  auto changed = coscheduling_group(2, 5000);  // the PodGroup object was replaced
  member after_change(changed, 2);
  EXPECT_EQ(after_change.pre_filter(t.pl, full).message(), "resource gap: cpu 5");
  EXPECT_EQ(t.pl.permitted().walks(), 4u);
}

// Workers run PreFilter concurrently: members of passing and failing groups on several threads get
// the right answer, a passing group is walked at most once per thread (members that missed at the
// same time), a failing one on every call.
TEST(GangMinResourcesTest, ConcurrentMembersOfSeveralGroups) {
  timed_plugin t;
  const auto snap = cluster();
  struct group_case {
    pod_group_ptr g;
    std::string key;
    bool passes;
  };
  std::vector<group_case> groups;
  for (int i = 0; i < 6; ++i)
    groups.push_back({coscheduling_group(2, i % 2 ? 6000 : 4000), "x/default/g" + std::to_string(i), i % 2 == 0});
  constexpr int threads = 4, rounds = 300;
  std::atomic<int> wrong{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w)
    workers.emplace_back([&] {
      for (int r = 0; r < rounds; ++r)
        for (auto& c : groups) {
          member m(c.g, 1, c.key);
          if (m.pre_filter(t.pl, snap).is_skip() != c.passes) ++wrong;
        }
    });
  for (auto& w : workers) w.join();
  EXPECT_EQ(wrong.load(), 0);
  const uint64_t failing_calls = threads * rounds * 3;
  EXPECT_GE(t.pl.permitted().walks(), failing_calls + 3);
  EXPECT_LE(t.pl.permitted().walks(), failing_calls + 3 * threads);
  EXPECT_EQ(t.pl.permitted().size(), 3u);
}

}  // namespace
}  // namespace kas::test

// GangScheduling's own parts: PreEnqueue's quorum of pods with kube's messages, and Permit's Wait.
// The admission of a whole gang is the permit coordinator's (tests/actors/permit_actor_test.cpp);
// the queue's turns are queue_state's (tests/actors/queue_state_test.cpp).
#include <gtest/gtest.h>

#include <unordered_map>

#include "plugins/gang_scheduling/gang_scheduling.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::test {
namespace {

struct directory : fw::group_directory {
  std::unordered_map<std::string, pod_group_ptr> groups;
  std::unordered_map<std::string, size_t> counts;
  const pod_group* group(const std::string& key) const override {
    auto it = groups.find(key);
    return it == groups.end() ? nullptr : it->second.get();
  }
  size_t members(const std::string& key) const override {
    auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  }
};

pod_group_ptr gang(const std::string& name, int32_t min, bool is_gang = true) {
  auto g = std::make_shared<pod_group>();
  g->ns = "default";
  g->name = name;
  g->gang = is_gang;
  g->min_count = min;
  return g;
}

pod_info_ptr member(const std::string& name, const std::string& group) {
  return pod_from_yaml("metadata: {name: " + name + ", namespace: default, labels: {scheduling.x-k8s.io/pod-group: " +
                       group + "}}\nspec: {containers: [{name: c}]}\n");
}

TEST(GangSchedulingTest, PreEnqueueWaitsForTheGroupAndItsQuorum) {
  plugins::gang_scheduling pl;
  directory d;
  auto p = member("m0", "train");
  ASSERT_EQ(p->group_api, pod_group_api::coscheduling);
  auto s = pl.pre_enqueue(*p, d);
  EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable);
  EXPECT_EQ(s.message(), "waiting for pod's pod group \"train\" to appear in scheduling queue");

  auto stored = std::make_shared<pod_group>(*gang("train", 3));
  stored->api = pod_group_api::coscheduling;
  d.groups[p->group_key] = stored;
  d.counts[p->group_key] = 2;
  s = pl.pre_enqueue(*p, d);
  EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable);
  EXPECT_EQ(s.message(), "waiting for minCount pods from a gang to appear in scheduling queue");
  d.counts[p->group_key] = 3;
  EXPECT_TRUE(pl.pre_enqueue(*p, d).is_success());

  // A pod in no group, and a group with a basic policy, are not held.
  EXPECT_TRUE(pl.pre_enqueue(*pod_from_yaml("metadata: {name: plain, namespace: default}\nspec: {containers: [{name: c}]}\n"), d)
                .is_success());
  auto basic = std::make_shared<pod_group>(*stored);
  basic->gang = false;
  basic->min_count = 10;
  d.groups[p->group_key] = basic;
  d.counts[p->group_key] = 1;
  EXPECT_TRUE(pl.pre_enqueue(*p, d).is_success());
}

TEST(GangSchedulingTest, PermitWaitsForTheGangWithItsTimeout) {
  plugins::gang_scheduling pl;
  auto p = member("m0", "train");
  fw::cycle_state state;
  std::chrono::milliseconds timeout{0};
  EXPECT_TRUE(pl.permit(state, *p, "n1", timeout).is_success()) << "no ticket: not a gang member";

  fw::gang_ticket t;
  t.group = gang("train", 3);
  t.key = p->group_key;
  state.gang = &t;
  auto s = pl.permit(state, *p, "n1", timeout);
  EXPECT_TRUE(s.is_wait());
  EXPECT_EQ(s.message(), "waiting for minCount pods from a gang to be scheduled");
  EXPECT_EQ(timeout, std::chrono::minutes(5)) << "kube's permitTimeoutDuration";

  auto timed = std::make_shared<pod_group>(*t.group);
  timed->schedule_timeout = std::chrono::seconds(30);
  t.group = timed;
  ASSERT_TRUE(pl.permit(state, *p, "n1", timeout).is_wait());
  EXPECT_EQ(timeout, std::chrono::seconds(30)) << "Coscheduling's scheduleTimeoutSeconds";
}

TEST(GangSchedulingTest, TheFailureMessageNamesTheGroup) {
  auto g = gang("train-1", 8);
  auto named = std::make_shared<pod_group>(*g);
  named->ns = "team-a";
  EXPECT_EQ(plugins::gang_failure_message(*named, 6, 8), "pod group team-a/train-1: 6/8 members could be placed (minCount 8)");
}

}  // namespace
}  // namespace kas::test

// GangScheduling's own parts: PreEnqueue's quorum of pods with kube's messages, PreFilter's
// topology domain (the PreFilterResult of its nodes) and Filter, and Permit's Wait.
// The admission of a whole gang is the permit coordinator's (tests/actors/permit_actor_test.cpp);
// the queue's turns are queue_state's (tests/actors/queue_state_test.cpp).
#include <gtest/gtest.h>

#include <set>
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

// A member of group `group` that joins through `api`'s way: the Coscheduling label, or upstream's
// spec.schedulingGroup.podGroupName.
pod_info_ptr member_of(pod_group_api api, const std::string& name, const std::string& group) {
  if (api == pod_group_api::coscheduling) return member(name, group);
  return pod_from_yaml("metadata: {name: " + name + ", namespace: default}\nspec: {schedulingGroup: {podGroupName: " +
                       group + "}, containers: [{name: c}]}\n");
}

// PreEnqueue holds a pod until its group exists and has minCount pods, in either API form.
class GangPreEnqueueTest : public ::testing::TestWithParam<pod_group_api> {};

TEST_P(GangPreEnqueueTest, WaitsForTheGroupAndItsQuorum) {
  plugins::gang_scheduling pl;
  directory d;
  auto p = member_of(GetParam(), "m0", "train");
  ASSERT_EQ(p->group_api, GetParam());
  ASSERT_EQ(p->group_name, "train");
  auto s = pl.pre_enqueue(*p, d);
  EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable);
  EXPECT_EQ(s.message(), "waiting for pod's pod group \"train\" to appear in scheduling queue");

  auto stored = std::make_shared<pod_group>(*gang("train", 3));
  stored->api = GetParam();
  d.groups[p->group_key] = stored;
  d.counts[p->group_key] = 2;
  s = pl.pre_enqueue(*p, d);
  EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable);
  EXPECT_EQ(s.message(), "waiting for minCount pods from a gang to appear in scheduling queue");
  d.counts[p->group_key] = 3;
  EXPECT_TRUE(pl.pre_enqueue(*p, d).is_success());

  // The same name in the other API form is another group: this one's quorum does not count.
  auto other = member_of(GetParam() == pod_group_api::coscheduling ? pod_group_api::workload : pod_group_api::coscheduling,
                         "m1", "train");
  EXPECT_NE(other->group_key, p->group_key);
  EXPECT_EQ(pl.pre_enqueue(*other, d).get_code(), fw::code::unschedulable_and_unresolvable);

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

INSTANTIATE_TEST_SUITE_P(Api, GangPreEnqueueTest,
                         ::testing::Values(pod_group_api::coscheduling, pod_group_api::workload),
                         [](const auto& info) {
                           return std::string(info.param == pod_group_api::coscheduling ? "coscheduling" : "workload");
                         });

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

// --- topology: PreFilter's domain and its PreFilterResult -----------------------------------------

const char* zone_key = "topology.kubernetes.io/zone";

// A node with 4 CPUs, 32Gi and 110 pods, and these labels.
node_info_ptr labelled(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string y = "metadata:\n  name: " + name + "\n  labels: {";
  for (size_t i = 0; i < labels.size(); ++i) y += (i ? ", " : "") + labels[i].first + ": " + labels[i].second;
  y += "}\nstatus:\n  allocatable: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n";
  return node_from_yaml(y);
}

// Zones a (2 nodes), b (3 nodes) and c (1 node), and a node without the key: room for pods of one
// CPU: a 8, b 12, c 4.
snapshot zones() {
  snapshot s;
  uint64_t gen = 0;
  for (auto& [z, n] : std::vector<std::pair<std::string, int>>{{"c", 1}, {"a", 2}, {"b", 3}})
    for (int i = 0; i < n; ++i) s.add_node(labelled(z + "-" + std::to_string(i), {{zone_key, z}}), ++gen);
  s.add_node(labelled("keyless", {}), ++gen);
  return s;
}

struct topology_gang {
  fw::gang_ticket ticket;
  fw::cycle_state state;
  pod_info_ptr pod = pod_with_requests("m0", {{"1", "1Gi"}});
  explicit topology_gang(int32_t min, std::vector<std::string> keys = {zone_key}) {
    auto g = std::make_shared<pod_group>(*gang("train", min));
    g->topology_keys = std::move(keys);
    ticket.group = g;
    ticket.key = "default/train";
    state.gang = &ticket;
  }
  void tried(std::vector<std::string> domains) {
    state.gang_tried = std::make_shared<const std::vector<std::string>>(std::move(domains));
  }
};

std::set<std::string> names(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }

TEST(GangSchedulingTest, PreFilterNarrowsTheNodesToTheDomainWithTheMostRoom) {
  plugins::gang_scheduling pl;
  auto snap = zones();
  topology_gang t(4);
  fw::pre_filter_result r;
  ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, snap, r).is_success());
  EXPECT_EQ(t.state.gang_domain, "b");
  ASSERT_FALSE(r.all_nodes());
  EXPECT_EQ(*r.names(snap), names({"b-0", "b-1", "b-2"}));

  // Filter, for callers that check a given node, still rejects the other domains' nodes.
  EXPECT_TRUE(pl.filter(t.state, *t.pod, *snap.find("b-1")).is_success());
  for (const char* other : {"a-0", "c-0", "keyless"}) {
    auto s = pl.filter(t.state, *t.pod, *snap.find(other));
    EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable) << other;
    EXPECT_EQ(s.message(), plugins::gang_scheduling::wrong_domain);
  }
  // The hot path sees only the candidates PreFilter kept, where Filter passes.
  fw::hot_filter hot;
  EXPECT_TRUE(pl.hot_filter(t.state, *t.pod, hot));

  // A pod of no topology gang: Skip, and every node.
  fw::cycle_state plain;
  fw::pre_filter_result all;
  EXPECT_TRUE(pl.pre_filter(plain, *t.pod, snap, all).is_skip());
  EXPECT_TRUE(all.all_nodes());
}

TEST(GangSchedulingTest, PreFilterTriesTheDomainsTheGangFailedInLast) {
  plugins::gang_scheduling pl;
  auto snap = zones();
  {
    topology_gang t(4);
    t.tried({"b"});
    fw::pre_filter_result r;
    ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, snap, r).is_success());
    EXPECT_EQ(t.state.gang_domain, "a") << "b failed before; a has room for 4";
    EXPECT_EQ(*r.names(snap), names({"a-0", "a-1"}));
  }
  {
    topology_gang t(10);
    t.tried({"b"});
    fw::pre_filter_result r;
    ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, snap, r).is_success());
    EXPECT_EQ(t.state.gang_domain, "b") << "no other domain has room for 10: the tried one again";
    EXPECT_EQ(*r.names(snap), names({"b-0", "b-1", "b-2"}));
  }
  {
    topology_gang t(4);
    t.tried({"b", "a"});
    fw::pre_filter_result r;
    ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, snap, r).is_success());
    EXPECT_EQ(t.state.gang_domain, "c");
    EXPECT_EQ(*r.names(snap), names({"c-0"}));
  }
}

TEST(GangSchedulingTest, PreFilterKeepsTheAttemptsDomain) {
  plugins::gang_scheduling pl;
  auto snap = zones();
  topology_gang t(4);
  t.state.gang_domain = "c";  // an earlier member of the attempt chose it (the cycle driver says so)
  fw::pre_filter_result r;
  ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, snap, r).is_success());
  EXPECT_EQ(t.state.gang_domain, "c");
  EXPECT_EQ(*r.names(snap), names({"c-0"}));

  // A domain with no node left: no node at all (the framework rejects the pod naming the plugin).
  topology_gang gone(4);
  gone.state.gang_domain = "z";
  fw::pre_filter_result none;
  ASSERT_TRUE(pl.pre_filter(gone.state, *gone.pod, snap, none).is_success());
  ASSERT_FALSE(none.all_nodes());
  EXPECT_TRUE(none.empty());
}

TEST(GangSchedulingTest, AGangNoSingleDomainHasRoomForFails) {
  plugins::gang_scheduling pl;
  auto snap = zones();
  topology_gang t(13);
  fw::pre_filter_result r;
  auto s = pl.pre_filter(t.state, *t.pod, snap, r);
  EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable);
  EXPECT_EQ(s.message(), "no single topology.kubernetes.io/zone domain has room for 13 members of the pod group");
  EXPECT_TRUE(t.state.gang_domain.empty());

  // Members already bound count: 2 of 14 are, so 12 remain, and b has room for them.
  topology_gang bound(14);
  bound.ticket.bound = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"u1", "u2"});
  fw::pre_filter_result rb;
  ASSERT_TRUE(pl.pre_filter(bound.state, *bound.pod, snap, rb).is_success());
  EXPECT_EQ(bound.state.gang_domain, "b");
}

TEST(GangSchedulingTest, SeveralKeysMakeOneDomainOfTheirValues) {
  plugins::gang_scheduling pl;
  snapshot snap;
  snap.add_node(labelled("r1-0", {{zone_key, "a"}, {"rack", "r1"}}), 1);
  snap.add_node(labelled("r1-1", {{zone_key, "a"}, {"rack", "r1"}}), 2);
  snap.add_node(labelled("r2-0", {{zone_key, "a"}, {"rack", "r2"}}), 3);
  snap.add_node(labelled("norack", {{zone_key, "a"}}), 4);
  topology_gang t(5, {zone_key, "rack"});
  fw::pre_filter_result r;
  ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, snap, r).is_success());
  EXPECT_EQ(t.state.gang_domain, std::string("a\x1fr1"));
  EXPECT_EQ(*r.names(snap), names({"r1-0", "r1-1"}));
  EXPECT_TRUE(plugins::in_topology_domain(*t.ticket.group, *snap.find("r1-0"), "a\x1fr1"));
  EXPECT_FALSE(plugins::in_topology_domain(*t.ticket.group, *snap.find("r2-0"), "a\x1fr1"));
  EXPECT_FALSE(plugins::in_topology_domain(*t.ticket.group, *snap.find("norack"), "a"));
  EXPECT_FALSE(plugins::in_topology_domain(*t.ticket.group, *snap.find("r1-0"), "a\x1fr"));
  EXPECT_FALSE(plugins::in_topology_domain(*t.ticket.group, *snap.find("r1-0"), "a\x1fr1\x1f"));
  EXPECT_EQ(plugins::topology_domain(*t.ticket.group, *snap.find("norack")), "");

  topology_gang big(9, {zone_key, "rack"});
  fw::pre_filter_result rb;
  EXPECT_EQ(pl.pre_filter(big.state, *big.pod, snap, rb).message(),
            "no single topology.kubernetes.io/zone,rack domain has room for 9 members of the pod group");
}

// The plugin's index of domains follows the snapshots: a node that changes zone, a node added, a
// node's pods (its room), each seen in the next PreFilter.
TEST(GangSchedulingTest, TheDomainsFollowTheSnapshot) {
  plugins::gang_scheduling pl;
  auto snap = zones();
  {
    topology_gang t(4);
    fw::pre_filter_result r;
    ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, snap, r).is_success());
    EXPECT_EQ(t.state.gang_domain, "b");
  }
  // c-0 moves to zone a; a node joins zone c.
  auto moved = snap.with_node(static_cast<size_t>(snap.index_of("c-0")), labelled("c-0", {{zone_key, "a"}}), 100);
  moved.add_node(labelled("c-new", {{zone_key, "c"}}), 101);
  {
    topology_gang t(4);
    t.state.gang_domain = "a";
    fw::pre_filter_result r;
    ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, moved, r).is_success());
    EXPECT_EQ(*r.names(moved), names({"a-0", "a-1", "c-0"}));
    topology_gang c(1);
    c.state.gang_domain = "c";
    fw::pre_filter_result rc;
    ASSERT_TRUE(pl.pre_filter(c.state, *c.pod, moved, rc).is_success());
    EXPECT_EQ(*rc.names(moved), names({"c-new"}));
  }
  // b's nodes fill up (pods of 3 CPUs each): a, now 3 nodes, has the most room.
  auto full = moved;
  for (const char* b : {"b-0", "b-1", "b-2"}) {
    auto n = std::make_shared<node_info>(*full.find(b));
    n->add_pod(with_node_name(*pod_with_requests(std::string("big-") + b, {{"3", "1Gi"}}), b));
    full = full.with_node(static_cast<size_t>(full.index_of(b)), n, 200);
  }
  {
    topology_gang t(4);
    fw::pre_filter_result r;
    ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, full, r).is_success());
    EXPECT_EQ(t.state.gang_domain, "a");
  }
  // An older snapshot still gets its own answer.
  {
    topology_gang t(4);
    fw::pre_filter_result r;
    ASSERT_TRUE(pl.pre_filter(t.state, *t.pod, snap, r).is_success());
    EXPECT_EQ(t.state.gang_domain, "b");
    EXPECT_EQ(*r.names(snap), names({"b-0", "b-1", "b-2"}));
  }
}

}  // namespace
}  // namespace kas::test

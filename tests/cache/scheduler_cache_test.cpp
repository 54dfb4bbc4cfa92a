#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "builders.hpp"
#include "cache/scheduler_cache.hpp"

namespace kas {
namespace {

using test::Gi;
using namespace std::chrono_literals;
using clock_t_ = scheduler_cache::clock;

// An unbound pod (as it is when the scheduler assumes it).
pod_info_ptr pending(const std::string& name, const std::string& cpu = "1") {
  return test::simple_pod(name, "", cpu, "1Gi", {8080});
}

TEST(SchedulerCache, AssumeThenAddConfirms) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  auto p = pending("a");
  ASSERT_TRUE(c.assume_pod(p, "n1").ok());
  EXPECT_TRUE(c.is_assumed("uid-a"));
  EXPECT_EQ(c.assumed_count(), 1u);
  EXPECT_EQ(c.node("n1")->requested.milli_cpu, 1000);
  EXPECT_EQ(c.node("n1")->pods[0]->node_name, "n1");

  EXPECT_FALSE(c.assume_pod(p, "n1").ok()) << "already cached";

  ASSERT_TRUE(c.add_pod(with_node_name(*p, "n1")).ok());
  EXPECT_FALSE(c.is_assumed("uid-a"));
  EXPECT_EQ(c.pod_count(), 1u);
  EXPECT_EQ(c.node("n1")->pods.size(), 1u);
  EXPECT_EQ(c.node("n1")->requested.milli_cpu, 1000);
  EXPECT_FALSE(c.add_pod(with_node_name(*p, "n1")).ok()) << "already added";
  EXPECT_FALSE(c.forget_pod("uid-a").ok()) << "added pods cannot be forgotten";
}

TEST(SchedulerCache, PodChangesSinceASnapshotAreLoggedInOrder) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  c.add_or_update_node(test::simple_node("n2"));
  uint64_t g = c.current()->generation();
  auto a = pending("a"), b = pending("b");
  ASSERT_TRUE(c.assume_pod(a, "n1").ok());
  ASSERT_TRUE(c.assume_pod(b, "n2").ok());
  ASSERT_TRUE(c.forget_pod("uid-a").ok());
  std::vector<const scheduler_cache::pod_change*> ch;
  ASSERT_TRUE(c.pod_changes_since(g, ch));
  ASSERT_EQ(ch.size(), 3u);
  EXPECT_TRUE(ch[0]->added && ch[0]->pod->uid == "uid-a" && ch[0]->pod->node_name == "n1");
  EXPECT_TRUE(ch[1]->added && ch[1]->pod->uid == "uid-b" && ch[1]->pod->node_name == "n2");
  EXPECT_TRUE(!ch[2]->added && ch[2]->pod->uid == "uid-a");
  // Nothing since the current snapshot.
  ASSERT_TRUE(c.pod_changes_since(c.current()->generation(), ch));
  EXPECT_TRUE(ch.empty());
  // Confirming b (assumed -> bound) with new labels is a removal and a placement.
  uint64_t g2 = c.current()->generation();
  auto relabelled = std::make_shared<pod_info>(*with_node_name(*b, "n2"));
  relabelled->labels = label_map(std::vector<label_map::entry>{{"app", "b"}});
  ASSERT_TRUE(c.add_pod(relabelled).ok());
  ASSERT_TRUE(c.pod_changes_since(g2, ch));
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_FALSE(ch[0]->added);
  EXPECT_TRUE(ch[1]->added);
}

// The cluster's bound copy of an assumed pod usually differs only in what no reader of the node
// looks at (resourceVersion, spec.nodeName in the object, the PodScheduled condition): the
// confirmation then leaves the node, its generation and the snapshot alone.
TEST(SchedulerCache, AConfirmationThatChangesNothingReadKeepsTheNode) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  auto p = pending("a");
  ASSERT_TRUE(c.assume_pod(p, "n1").ok());
  auto snap = c.current();
  const node_info* before = c.node("n1");
  const uint64_t node_gen = before->generation;
  const pod_info* placed = before->find_pod("uid-a");
  auto seen = test::simple_pod("a", "n1", "1", "1Gi", {8080});  // decoded anew, as from the API
  ASSERT_TRUE(c.add_pod(seen).ok());
  EXPECT_FALSE(c.is_assumed("uid-a"));
  EXPECT_EQ(c.node("n1"), before) << "the node was not copied";
  EXPECT_EQ(c.node("n1")->generation, node_gen);
  EXPECT_EQ(c.node("n1")->find_pod("uid-a"), placed);
  EXPECT_EQ(c.current(), snap) << "nothing to publish";
  std::vector<const scheduler_cache::pod_change*> ch;
  ASSERT_TRUE(c.pod_changes_since(snap->generation(), ch));
  EXPECT_TRUE(ch.empty());
  EXPECT_FALSE(c.add_pod(seen).ok()) << "already added";
  EXPECT_FALSE(c.forget_pod("uid-a").ok()) << "added pods cannot be forgotten";

  // It then updates and leaves like any added pod: the Running update (status.startTime, which
  // preemption reads) replaces the placed object.
  auto running_obj = std::make_shared<k8s::core::Pod>(*seen->pod);
  running_obj->mutable_status()->set_phase("Running");
  running_obj->mutable_status()->mutable_start_time()->set_seconds(1700000000);
  auto running = test::compile_ok(running_obj);
  ASSERT_TRUE(c.update_pod(seen, running).ok());
  EXPECT_GT(c.node("n1")->generation, node_gen);
  EXPECT_EQ(c.node("n1")->find_pod("uid-a"), running.get());
  EXPECT_EQ(c.node("n1")->pods.size(), 1u);
  EXPECT_EQ(c.node("n1")->requested.milli_cpu, 1000);
  EXPECT_EQ(c.node("n1")->used_ports.size(), 1u);
  ASSERT_TRUE(c.remove_pod(running).ok());
  EXPECT_EQ(c.node("n1")->pods.size(), 0u);
  EXPECT_EQ(c.node("n1")->requested.milli_cpu, 0);
  EXPECT_TRUE(c.node("n1")->used_ports.empty());
}

// Whatever a plugin could read differently makes the confirmation a replacement.
TEST(SchedulerCache, AConfirmationThatChangesWhatIsReadReplacesThePod) {
  auto bound_copy = [](const pod_info_ptr& p, auto&& edit) {
    auto obj = std::make_shared<k8s::core::Pod>(*p->pod);
    obj->mutable_spec()->set_node_name("n1");
    edit(*obj);
    return test::compile_ok(obj);
  };
  struct edit_case {
    const char* name;
    std::function<void(k8s::core::Pod&)> edit;
  };
  const std::vector<edit_case> cases = {
    {"labels", [](k8s::core::Pod& o) { (*o.mutable_metadata()->mutable_labels())["app"] = "web"; }},
    {"requests (an in-place resize)",
     [](k8s::core::Pod& o) {
       (*o.mutable_spec()->mutable_containers(0)->mutable_resources()->mutable_requests())["cpu"].set_string("2");
     }},
    {"deletionTimestamp", [](k8s::core::Pod& o) { o.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(5); }},
    {"startTime", [](k8s::core::Pod& o) { o.mutable_status()->mutable_start_time()->set_seconds(5); }},
    {"priority", [](k8s::core::Pod& o) { o.mutable_spec()->set_priority(7); }},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    scheduler_cache c;
    c.add_or_update_node(test::simple_node("n1"));
    auto p = pending("a");
    ASSERT_TRUE(c.assume_pod(p, "n1").ok());
    const uint64_t node_gen = c.node("n1")->generation;
    auto seen = bound_copy(p, tc.edit);
    ASSERT_TRUE(seen);
    EXPECT_FALSE(same_placement(*c.node("n1")->pods[0], *seen));
    ASSERT_TRUE(c.add_pod(seen).ok());
    EXPECT_FALSE(c.is_assumed("uid-a"));
    EXPECT_GT(c.node("n1")->generation, node_gen);
    EXPECT_EQ(c.node("n1")->find_pod("uid-a"), seen.get());
    EXPECT_EQ(c.node("n1")->pods.size(), 1u);
    EXPECT_EQ(c.node("n1")->requested.milli_cpu, seen->requests.milli_cpu);
  }
}

TEST(SchedulerCache, PodChangesAreUnknownAcrossNodeChangesAndPastTheLog) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  uint64_t g = c.current()->generation();
  ASSERT_TRUE(c.assume_pod(pending("a"), "n1").ok());
  std::vector<const scheduler_cache::pod_change*> ch;
  EXPECT_TRUE(c.pod_changes_since(g, ch));
  c.add_or_update_node(test::simple_node("n2"));  // a node change: labels, capacity may differ
  EXPECT_FALSE(c.pod_changes_since(g, ch));
  uint64_t g2 = c.current()->generation();
  EXPECT_TRUE(c.pod_changes_since(g2, ch));
  c.remove_node("n2");
  EXPECT_FALSE(c.pod_changes_since(g2, ch));

  // The log keeps change_log_limit entries: older generations are no longer answerable.
  uint64_t g3 = c.current()->generation();
  for (size_t i = 0; i <= scheduler_cache::change_log_limit / 2; ++i) {
    auto p = pending("p" + std::to_string(i), "0");
    ASSERT_TRUE(c.assume_pod(p, "n1").ok());
    ASSERT_TRUE(c.forget_pod(p->uid).ok());
  }
  EXPECT_FALSE(c.pod_changes_since(g3, ch));
  uint64_t g4 = c.current()->generation();
  EXPECT_TRUE(c.pod_changes_since(g4, ch));
}

TEST(SchedulerCache, AddOfAssumedPodOnAnotherNodeMovesIt) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  c.add_or_update_node(test::simple_node("n2"));
  auto p = pending("a");
  ASSERT_TRUE(c.assume_pod(p, "n1").ok());
  ASSERT_TRUE(c.add_pod(with_node_name(*p, "n2")).ok());
  EXPECT_TRUE(c.node("n1")->pods.empty());
  EXPECT_EQ(c.node("n1")->requested.milli_cpu, 0);
  EXPECT_EQ(c.node("n2")->pods.size(), 1u);
}

TEST(SchedulerCache, AssumeThenForgetUndoes) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  auto before = c.current();
  ASSERT_TRUE(c.assume_pod(pending("a"), "n1").ok());
  EXPECT_TRUE(c.node("n1")->port_conflicts(host_port{"TCP", "0.0.0.0", 8080}));
  ASSERT_TRUE(c.forget_pod("uid-a").ok());
  EXPECT_FALSE(c.contains("uid-a"));
  EXPECT_EQ(c.node("n1")->requested, resource_list{});
  EXPECT_TRUE(c.node("n1")->used_ports.empty());
  EXPECT_FALSE(c.forget_pod("uid-a").ok()) << "not in the cache";
  EXPECT_GT(c.generation(), before->generation());
}

TEST(SchedulerCache, ForgetOfNonAssumedPodIsAnError) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  ASSERT_TRUE(c.add_pod(test::simple_pod("b", "n1", "1", "1Gi")).ok());
  auto st = c.forget_pod("uid-b");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.err().message.find("wasn't assumed"), std::string::npos) << st.err().message;
  EXPECT_FALSE(c.forget_pod("never-seen").ok());
}

TEST(SchedulerCache, ExpiryAfterFinishBindingPlusTtl) {
  scheduler_cache c(30s);
  c.add_or_update_node(test::simple_node("n1"));
  const auto t0 = clock_t_::time_point{} + 1h;
  ASSERT_TRUE(c.assume_pod(pending("a"), "n1").ok());
  ASSERT_TRUE(c.assume_pod(pending("b"), "n1").ok());
  // Not expired before finish_binding, whatever the time.
  EXPECT_TRUE(c.cleanup_expired(t0 + 10h).empty());
  c.finish_binding("uid-a", t0);
  EXPECT_TRUE(c.cleanup_expired(t0 + 30s).empty()) << "deadline is exclusive";
  auto gone = c.cleanup_expired(t0 + 31s);
  ASSERT_EQ(gone, std::vector<std::string>{"uid-a"});
  EXPECT_FALSE(c.contains("uid-a"));
  EXPECT_TRUE(c.is_assumed("uid-b"));
  EXPECT_EQ(c.node("n1")->pods.size(), 1u);
  // The cluster's Add of an expired pod adds it back.
  ASSERT_TRUE(c.add_pod(test::simple_pod("a", "n1", "1", "1Gi")).ok());
  EXPECT_EQ(c.node("n1")->pods.size(), 2u);
}

TEST(SchedulerCache, ZeroTtlNeverExpires) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  ASSERT_TRUE(c.assume_pod(pending("a"), "n1").ok());
  c.finish_binding("uid-a", clock_t_::time_point{});
  EXPECT_TRUE(c.cleanup_expired(clock_t_::time_point{} + 1000h).empty());
  EXPECT_TRUE(c.is_assumed("uid-a"));
}

TEST(SchedulerCache, UpdateAndRemove) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  auto v1 = test::simple_pod("a", "n1", "1", "1Gi");
  auto v2 = test::simple_pod("a", "n1", "2", "2Gi");
  EXPECT_FALSE(c.update_pod(v1, v2).ok()) << "not added yet";
  ASSERT_TRUE(c.add_pod(v1).ok());
  ASSERT_TRUE(c.update_pod(v1, v2).ok());
  EXPECT_EQ(c.node("n1")->requested.milli_cpu, 2000);
  EXPECT_EQ(c.node("n1")->requested.memory, 2 * Gi);
  EXPECT_EQ(c.node("n1")->pods.size(), 1u);
  ASSERT_TRUE(c.remove_pod(v2).ok());
  EXPECT_EQ(c.pod_count(), 0u);
  EXPECT_EQ(c.node("n1")->requested, resource_list{});
  EXPECT_FALSE(c.remove_pod(v2).ok()) << "already removed";

  auto assumed = pending("x");
  ASSERT_TRUE(c.assume_pod(assumed, "n1").ok());
  EXPECT_FALSE(c.update_pod(with_node_name(*assumed, "n1"), with_node_name(*assumed, "n1")).ok())
      << "assumed pods are updated by add, not update";
  ASSERT_TRUE(c.remove_pod(with_node_name(*assumed, "n1")).ok()) << "an assumed pod can be deleted";
  EXPECT_EQ(c.assumed_count(), 0u);
}

// A bound pod's update replaces it on its node in one step: aggregates, ports and the affinity
// lists count it once, earlier snapshots keep the old node, and the change log has the removal then
// the placement (the cache's re-validation replays them in that order).
TEST(SchedulerCache, UpdateOnTheSameNodeReplacesInOneStep) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  auto other = test::simple_pod("b", "n1", "1", "1Gi", {8080});
  auto v1 = test::simple_pod("a", "n1", "1", "1Gi", {8080});
  ASSERT_TRUE(c.add_pod(other).ok());
  ASSERT_TRUE(c.add_pod(v1).ok());
  auto before = c.current();
  uint64_t g = before->generation();
  auto v2 = std::make_shared<pod_info>(*v1);
  v2->phase = "Running";
  ASSERT_TRUE(c.update_pod(v1, v2).ok());
  const node_info* n = c.node("n1");
  EXPECT_EQ(n->pods.size(), 2u);
  EXPECT_EQ(n->requested.milli_cpu, 2000);
  EXPECT_EQ(n->used_ports.size(), 2u);
  EXPECT_TRUE(n->port_conflicts(host_port{"TCP", "0.0.0.0", 8080}));
  EXPECT_EQ(n->find_pod("uid-a"), v2.get());
  EXPECT_EQ(before->find("n1")->find_pod("uid-a"), v1.get()) << "an earlier snapshot keeps its node";
  std::vector<const scheduler_cache::pod_change*> ch;
  ASSERT_TRUE(c.pod_changes_since(g, ch));
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_TRUE(!ch[0]->added && ch[0]->pod == v1);
  EXPECT_TRUE(ch[1]->added && ch[1]->pod == v2);
  ASSERT_TRUE(c.remove_pod(v2).ok());
  EXPECT_EQ(c.node("n1")->requested.milli_cpu, 1000);
  EXPECT_EQ(c.node("n1")->used_ports.size(), 1u);
}

// The cache remembers where each pod sits on its node and fixes that up when a swap-remove moves
// the last pod: over a random history of assumes, confirmations, status updates and deletions on
// one node, the node holds exactly the cache's pods, each object once.
TEST(SchedulerCache, ACrowdedNodeHoldsExactlyItsPodsThroughAnyOrderOfChanges) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  std::mt19937 rng(11);
  std::map<std::string, pod_info_ptr> placed;  // uid -> the object the node must hold
  std::vector<std::string> assumed;
  for (int step = 0; step < 3000; ++step) {
    unsigned op = rng() % 4;
    if (op == 0 || placed.empty()) {
      auto p = pending("p" + std::to_string(step), "10m");
      ASSERT_TRUE(c.assume_pod(p, "n1").ok());
      placed[p->uid] = c.node("n1")->pods.back();
      assumed.push_back(p->uid);
      continue;
    }
    auto it = std::next(placed.begin(), static_cast<long>(rng() % placed.size()));
    auto a = std::find(assumed.begin(), assumed.end(), it->first);
    if (op == 1 && a != assumed.end()) {
      // The binding seen back, with more requested than assumed: it replaces the assumed object.
      auto seen = test::simple_pod(it->second->name, "n1", "20m", "1Gi");
      ASSERT_TRUE(c.add_pod(seen).ok());
      it->second = seen;
      assumed.erase(a);
    } else if (op == 2 && a == assumed.end()) {
      auto running = std::make_shared<pod_info>(*it->second);
      running->phase = "Running";
      ASSERT_TRUE(c.update_pod(it->second, running).ok());
      it->second = running;
    } else if (op == 3) {
      ASSERT_TRUE(c.remove_pod(it->second).ok());
      if (a != assumed.end()) assumed.erase(a);
      placed.erase(it);
    }
  }
  const node_info* n = c.node("n1");
  ASSERT_EQ(n->pods.size(), placed.size());
  std::set<const pod_info*> held;
  for (const auto& p : n->pods) held.insert(p.get());
  for (auto& [uid, p] : placed) EXPECT_TRUE(held.count(p.get())) << uid;
  EXPECT_EQ(c.pod_count(), placed.size());
}

TEST(SchedulerCache, GenerationIncreasesOnEveryChange) {
  scheduler_cache c;
  uint64_t last = c.generation();
  auto bumped = [&] {
    bool up = c.generation() > last;
    last = c.generation();
    return up;
  };
  c.add_or_update_node(test::simple_node("n1"));
  EXPECT_TRUE(bumped());
  const uint64_t node_gen = c.node("n1")->generation;
  ASSERT_TRUE(c.assume_pod(pending("a"), "n1").ok());
  EXPECT_TRUE(bumped());
  EXPECT_GT(c.node("n1")->generation, node_gen);
  ASSERT_TRUE(c.forget_pod("uid-a").ok());
  EXPECT_TRUE(bumped());
  c.add_or_update_node(test::simple_node("n1", "8"));
  EXPECT_TRUE(bumped());
  c.remove_node("n1");
  EXPECT_TRUE(bumped());
}

TEST(SchedulerCache, SnapshotsReflectAssumedPodsAndStayImmutable) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  c.add_or_update_node(test::simple_node("n2"));
  auto s1 = c.current();
  EXPECT_EQ(c.current(), s1) << "no change, same published snapshot";
  ASSERT_TRUE(c.assume_pod(pending("a"), "n2").ok());
  auto s2 = c.current();
  EXPECT_NE(s2, s1);
  EXPECT_GT(s2->generation(), s1->generation());
  EXPECT_EQ(s2->find("n2")->requested.milli_cpu, 1000);
  EXPECT_EQ(s1->find("n2")->requested.milli_cpu, 0) << "old snapshot unchanged";
  EXPECT_NE(&s2->node_ptr(0), &s1->node_ptr(0)) << "both nodes live in one chunk, which was copied";
  EXPECT_EQ(s2->find("n1"), s1->find("n1")) << "the untouched node is the same object";
}

TEST(SchedulerCache, NodeUpdateKeepsPods) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1", "4"));
  ASSERT_TRUE(c.add_pod(test::simple_pod("a", "n1", "1", "1Gi", {80})).ok());
  c.add_or_update_node(test::simple_node("n1", "16"));
  const node_info* n = c.node("n1");
  EXPECT_EQ(n->allocatable.milli_cpu, 16000);
  EXPECT_EQ(n->pods.size(), 1u);
  EXPECT_EQ(n->requested.milli_cpu, 1000);
  EXPECT_EQ(n->used_ports.size(), 1u);
  EXPECT_EQ(c.node_count(), 1u);
}

// A pod with a required anti-affinity term, bound to `node`.
pod_info_ptr anti_affine_pod(const std::string& name, const std::string& node) {
  auto p = test::make_pod(name, "uid-" + name);
  test::add_container(p->mutable_spec(), {{"cpu", "100m"}});
  p->mutable_spec()->set_node_name(node);
  auto* term = p->mutable_spec()->mutable_affinity()->mutable_pod_anti_affinity()
                 ->add_required_during_scheduling_ignored_during_execution();
  term->set_topology_key("kubernetes.io/hostname");
  (*term->mutable_label_selector()->mutable_match_labels())["app"] = "web";
  return test::compile_ok(p);
}

TEST(SchedulerCache, NodeUpdateKeepsAffinityPodLists) {
  // Regression: a node update used to drop pods_with_affinity / pods_with_required_anti_affinity,
  // so InterPodAffinity stopped seeing the node's existing anti-affinity pods.
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  c.add_or_update_node(test::simple_node("n2"));
  ASSERT_TRUE(c.add_pod(anti_affine_pod("a", "n2")).ok());
  c.add_or_update_node(test::simple_node("n2", "16"));
  const node_info* n = c.node("n2");
  EXPECT_EQ(n->pods_with_affinity.size(), 1u);
  EXPECT_EQ(n->pods_with_required_anti_affinity.size(), 1u);
  auto snap = c.current();
  EXPECT_EQ(snap->nodes_with_required_anti_affinity_pods(), (std::vector<uint32_t>{1}));
  EXPECT_EQ(snap->nodes_with_affinity_pods(), (std::vector<uint32_t>{1}));
}

TEST(SchedulerCache, SnapshotAffinityNodeListsFollowPodsAndNodes) {
  scheduler_cache c;
  for (auto name : {"n0", "n1", "n2"}) c.add_or_update_node(test::simple_node(name));
  EXPECT_TRUE(c.current()->nodes_with_affinity_pods().empty());
  auto a = anti_affine_pod("a", "n0");
  auto b = anti_affine_pod("b", "n2");
  ASSERT_TRUE(c.add_pod(a).ok());
  ASSERT_TRUE(c.add_pod(b).ok());
  auto before = c.current();
  EXPECT_EQ(before->nodes_with_required_anti_affinity_pods(), (std::vector<uint32_t>{0, 2}));
  ASSERT_TRUE(c.remove_pod(a).ok());
  EXPECT_EQ(c.current()->nodes_with_required_anti_affinity_pods(), (std::vector<uint32_t>{2}));
  EXPECT_EQ(before->nodes_with_required_anti_affinity_pods(), (std::vector<uint32_t>{0, 2})) << "immutable";
  // Removing n0 moves n2 into index 0: the list follows the node, not the old index.
  c.remove_node("n0");
  auto after = c.current();
  ASSERT_EQ(after->nodes_with_required_anti_affinity_pods().size(), 1u);
  EXPECT_EQ(after->node(after->nodes_with_required_anti_affinity_pods()[0]).name, "n2");
}

TEST(SchedulerCache, GhostNodesStayOutOfTheSnapshot) {
  scheduler_cache c;
  // A bound pod arrives before its node.
  ASSERT_TRUE(c.add_pod(test::simple_pod("a", "late", "1", "1Gi")).ok());
  EXPECT_EQ(c.node_count(), 0u);
  EXPECT_EQ(c.current()->find("late"), nullptr);
  c.add_or_update_node(test::simple_node("late"));
  ASSERT_NE(c.current()->find("late"), nullptr);
  EXPECT_EQ(c.node("late")->requested.milli_cpu, 1000) << "the pod counted before the node arrived";

  // A removed node with pods leaves the snapshot, and its pods' accounting survives a re-add.
  c.remove_node("late");
  EXPECT_EQ(c.current()->find("late"), nullptr);
  EXPECT_EQ(c.node_count(), 0u);
  c.add_or_update_node(test::simple_node("late"));
  EXPECT_EQ(c.node("late")->pods.size(), 1u);

  // Once the node is gone and its last pod too, nothing is left behind.
  c.remove_node("late");
  ASSERT_TRUE(c.remove_pod(test::simple_pod("a", "late", "1", "1Gi")).ok());
  c.add_or_update_node(test::simple_node("late"));
  EXPECT_TRUE(c.node("late")->pods.empty());
  EXPECT_EQ(c.node("late")->requested, resource_list{});
}

TEST(SchedulerCache, RemovingAnEmptyNode) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  c.add_or_update_node(test::simple_node("n2"));
  c.remove_node("n1");
  EXPECT_EQ(c.node_count(), 1u);
  EXPECT_EQ(c.node("n1"), nullptr);
  EXPECT_NE(c.current()->find("n2"), nullptr);
  c.remove_node("unknown");
  EXPECT_EQ(c.node_count(), 1u);
}

// kube's nominator, as the cache keeps it: from status.nominatedNodeName, or from the scheduler's
// own PostFilter before that write is seen.
pod_info_ptr nominated_to(const pod_info_ptr& p, const std::string& node) {
  auto q = std::make_shared<pod_info>(*p);
  q->nominated_node_name = node;
  return q;
}

std::vector<std::string> nominated_uids(scheduler_cache& c, const std::string& node) {
  std::vector<std::string> out;
  if (const auto* v = c.current()->nominated_pods(node))
    for (auto& p : *v) out.push_back(p->uid);
  return out;
}

TEST(SchedulerCacheNominator, InMemoryNominationHoldsUntilItsWriteIsSeen) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  auto p = pending("a");
  c.update_nominated(nullptr, p);  // the pod is added, unbound
  ASSERT_TRUE(c.nominate(p, "n1"));
  EXPECT_EQ(nominated_uids(c, "n1"), std::vector<std::string>{"uid-a"});
  // An update from before the nomination's write (no nomination, after none) keeps it.
  auto p2 = std::make_shared<pod_info>(*p);
  c.update_nominated(p, p2);
  EXPECT_EQ(nominated_uids(c, "n1"), std::vector<std::string>{"uid-a"});
  // The write is seen; then a write that clears it clears it.
  auto p3 = nominated_to(p, "n1");
  c.update_nominated(p2, p3);
  EXPECT_EQ(nominated_uids(c, "n1"), std::vector<std::string>{"uid-a"});
  c.update_nominated(p3, pending("a"));
  EXPECT_TRUE(nominated_uids(c, "n1").empty());
  EXPECT_FALSE(c.current()->has_nominated_pods());
}

TEST(SchedulerCacheNominator, ANominationIsMovedNotDuplicated) {
  scheduler_cache c;
  auto p = pending("a");
  c.update_nominated(nullptr, nominated_to(p, "n1"));
  ASSERT_TRUE(c.nominate(p, "n2"));
  EXPECT_TRUE(nominated_uids(c, "n1").empty());
  EXPECT_EQ(nominated_uids(c, "n2"), std::vector<std::string>{"uid-a"});
  ASSERT_TRUE(c.nominate(p, ""));  // a failed preemption clears it
  EXPECT_FALSE(c.current()->has_nominated_pods());
}

TEST(SchedulerCacheNominator, NoNominationForAPodThatIsGoneBoundOrAssumed) {
  scheduler_cache c;
  c.add_or_update_node(test::simple_node("n1"));
  auto gone = pending("gone");
  c.update_nominated(nullptr, gone);
  c.update_nominated(gone, nullptr);  // deleted before the scheduler's nomination arrived
  EXPECT_FALSE(c.nominate(gone, "n1"));
  EXPECT_FALSE(c.nominate(pending("never-seen"), "n1"));
  auto bound = pending("bound");
  c.update_nominated(nullptr, bound);
  c.update_nominated(bound, with_node_name(*bound, "n1"));
  EXPECT_FALSE(c.nominate(bound, "n1"));
  EXPECT_FALSE(c.current()->has_nominated_pods());

  // Assume deletes the nomination (kube's assume does), and a late nomination does not bring it back.
  auto a = pending("a");
  c.update_nominated(nullptr, nominated_to(a, "n1"));
  EXPECT_EQ(nominated_uids(c, "n1"), std::vector<std::string>{"uid-a"});
  ASSERT_TRUE(c.assume_pod(a, "n1").ok());
  EXPECT_FALSE(c.current()->has_nominated_pods()) << "an assumed pod counted twice on its node";
  EXPECT_FALSE(c.nominate(a, "n1"));
  EXPECT_FALSE(c.current()->has_nominated_pods());
}

TEST(SchedulerCacheNominator, DeletionClearsAnInMemoryNomination) {
  scheduler_cache c;
  auto p = pending("a");
  c.update_nominated(nullptr, p);
  ASSERT_TRUE(c.nominate(p, "n1"));
  c.update_nominated(p, nullptr);  // the delete carries no nomination: the uid still clears it
  EXPECT_FALSE(c.current()->has_nominated_pods());
}

}  // namespace
}  // namespace kas

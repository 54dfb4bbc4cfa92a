// cluster_store and change_coalescer: the embedded cluster's store semantics without an actor system.
#include "actors/cluster_store.hpp"

#include <gtest/gtest.h>

namespace kas::test {
namespace {

using t = cluster_event_type;

pod_info_ptr pod(const std::string& name, const std::string& node = "") {
  auto p = std::make_shared<pod_info>();
  p->name = name;
  p->ns = "ns";
  p->uid = "uid-" + name;
  p->node_name = node;
  return p;
}

node_info_ptr node(const std::string& name) {
  auto n = std::make_shared<node_info>();
  n->name = name;
  return n;
}

std::vector<t> types(const std::vector<cluster_change_ptr>& cs) {
  std::vector<t> out;
  for (auto& c : cs) out.push_back(c->type);
  return out;
}

TEST(ClusterStoreTest, ResourceVersionsIncreaseInOrder) {
  cluster_store s;
  std::vector<cluster_change_ptr> all;
  auto add = [&](cluster_store::outcome o) { all.insert(all.end(), o.changes.begin(), o.changes.end()); };
  add(s.put_node(node("n1")));
  add(s.create_pod(pod("a")));
  add(s.bind("uid-a", "n1"));
  add(s.set_phase("uid-a", "Running"));
  add(s.put_node(node("n1")));
  add(s.delete_pod("uid-a"));
  add(s.remove_node("n1"));
  ASSERT_EQ(all.size(), 7u);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i]->resource_version, i + 1);
  EXPECT_EQ(types(all), (std::vector<t>{t::node_add, t::pod_add, t::pod_update, t::pod_update, t::node_update,
                                        t::pod_delete, t::node_delete}));
  EXPECT_EQ(s.resource_version(), 7u);
}

TEST(ClusterStoreTest, ListIsObjectsNodesPodsInCreationOrderThenSynced) {
  cluster_store s;
  s.create_pod(pod("b"));
  s.put_node(node("n2"));
  s.create_pod(pod("a"));
  s.put_node(node("n1"));
  s.delete_pod("uid-b");
  s.create_pod(pod("c"));
  auto l = s.list();
  EXPECT_EQ(types(l), (std::vector<t>{t::objects, t::node_add, t::node_add, t::pod_add, t::pod_add, t::synced}));
  EXPECT_EQ(l[1]->new_node->name, "n2");
  EXPECT_EQ(l[2]->new_node->name, "n1");
  EXPECT_EQ(l[3]->new_pod->name, "a");
  EXPECT_EQ(l[4]->new_pod->name, "c");
  for (auto& c : l) EXPECT_EQ(c->resource_version, s.resource_version());
  // Watch continues after the list: the next change has the next resourceVersion.
  auto next = s.create_pod(pod("d"));
  ASSERT_EQ(next.changes.size(), 1u);
  EXPECT_EQ(next.changes[0]->resource_version, s.resource_version());
  EXPECT_GT(next.changes[0]->resource_version, l.back()->resource_version);
}

TEST(ClusterStoreTest, BindOutcomes) {
  struct row {
    std::string name, uid, node, want_error;
  };
  std::vector<row> rows = {
    {"binds", "uid-free", "n1", ""},
    {"pod gone is 404", "uid-nope", "n1", "pods \"uid-nope\" not found"},
    {"already bound is 409", "uid-bound", "n1",
     "Operation cannot be fulfilled on pods/binding \"bound\": pod bound is already assigned to node \"n0\""},
    {"node gone", "uid-free", "n9", "node \"n9\" not found"},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    cluster_store s;
    s.put_node(node("n0"));
    s.put_node(node("n1"));
    s.create_pod(pod("free"));
    s.create_pod(pod("bound", "n0"));
    auto rv = s.resource_version();
    auto o = s.bind(r.uid, r.node);
    if (r.want_error.empty()) {
      EXPECT_TRUE(o.status.is_success());
      ASSERT_EQ(o.changes.size(), 1u);
      auto& ch = *o.changes[0];
      EXPECT_EQ(ch.type, t::pod_update);
      EXPECT_FALSE(ch.conditions_only);
      EXPECT_TRUE(ch.old_pod->node_name.empty());
      EXPECT_EQ(ch.new_pod->node_name, r.node);
      const pod_condition* c = ch.new_pod->condition("PodScheduled");
      ASSERT_NE(c, nullptr);
      EXPECT_EQ(c->status, "True");
      EXPECT_EQ(s.stats().bound, 2u);
    } else {
      EXPECT_FALSE(o.status.is_success());
      EXPECT_EQ(o.status.message(), r.want_error);
      EXPECT_TRUE(o.changes.empty());
      EXPECT_EQ(s.resource_version(), rv);
    }
  }
  cluster_store s;
  s.put_node(node("n0"));
  s.create_pod(pod("bound", "n0"));
  s.bind("uid-bound", "n0");
  EXPECT_EQ(s.stats().bind_conflicts, 1u);
}

TEST(ClusterStoreTest, DeleteAndEvict) {
  cluster_store s;
  auto gone = s.delete_pod("uid-x");
  EXPECT_EQ(gone.status.message(), "pods \"uid-x\" not found");
  EXPECT_TRUE(gone.changes.empty());
  EXPECT_EQ(s.evict_pod("uid-x", "why").status.message(), "pods \"uid-x\" not found");
  EXPECT_TRUE(s.events().empty());

  s.put_node(node("n1"));
  s.create_pod(pod("v", "n1"));
  auto ev = s.evict_pod("uid-v", "Preempted by ns/p on node n1");
  EXPECT_TRUE(ev.status.is_success());
  ASSERT_EQ(ev.changes.size(), 1u);
  EXPECT_EQ(ev.changes[0]->type, t::pod_delete);
  ASSERT_EQ(s.events().size(), 1u);
  EXPECT_EQ(s.events()[0].reason, "Preempted");
  EXPECT_EQ(s.events()[0].pod_key, "ns/v");
  EXPECT_EQ(s.events()[0].node, "n1");
  EXPECT_EQ(s.events()[0].message, "Preempted by ns/p on node n1");
  EXPECT_EQ(s.stats().bound, 0u);
  EXPECT_EQ(s.stats().pods, 0u);
}

TEST(ClusterStoreTest, WritesThatChangeNothingEmitNothing) {
  cluster_store s;
  s.put_node(node("n1"));
  s.create_pod(pod("a"));
  EXPECT_TRUE(s.create_pod(pod("a")).changes.empty());  // AlreadyExists
  EXPECT_TRUE(s.nominate("uid-a", "").changes.empty());
  EXPECT_EQ(s.nominate("uid-a", "n1").changes.size(), 1u);
  EXPECT_TRUE(s.nominate("uid-a", "n1").changes.empty());
  EXPECT_EQ(s.nominate("uid-z", "n1").status.message(), "pods \"uid-z\" not found");
  EXPECT_TRUE(s.set_phase("uid-a", "Pending").changes.size() == 1u);
  EXPECT_TRUE(s.set_phase("uid-a", "Pending").changes.empty());
  EXPECT_TRUE(s.set_phase("uid-z", "Running").changes.empty());
  EXPECT_TRUE(s.remove_node("nope").changes.empty());
}

TEST(ClusterStoreTest, ConditionUpdates) {
  cluster_store s;
  s.put_node(node("n1"));
  s.create_pod(pod("a"));
  pod_condition unsched{"PodScheduled", "False", "Unschedulable", "0/1 nodes are available"};
  auto o = s.set_condition("uid-a", unsched);
  ASSERT_EQ(o.changes.size(), 1u);
  EXPECT_TRUE(o.changes[0]->conditions_only);
  EXPECT_TRUE(s.set_condition("uid-a", unsched).changes.empty());  // unchanged: nothing written
  s.bind("uid-a", "n1");
  EXPECT_TRUE(s.set_condition("uid-a", unsched).changes.empty());  // bound keeps True
  EXPECT_TRUE(s.set_condition("uid-z", unsched).changes.empty());
}

TEST(ClusterStoreTest, CorrelatorFoldsRepeatedEvents) {
  cluster_store s;
  cluster_event_record ev;
  ev.type = "Warning";
  ev.reason = "FailedScheduling";
  ev.pod_uid = "uid-a";
  ev.pod_key = "ns/a";
  ev.message = "0/1 nodes are available";
  s.record_event(ev);
  s.record_event(ev);
  ASSERT_EQ(s.events().size(), 1u);
  EXPECT_EQ(s.events()[0].count, 2);
  ev.message = "other";
  s.record_event(ev);
  EXPECT_EQ(s.events().size(), 2u);
  EXPECT_EQ(s.stats().events, 2u);
}

// --- change_coalescer ------------------------------------------------------------------------------

struct feed {
  cluster_store s;
  change_coalescer c;
  void push(cluster_store::outcome o) {
    for (auto& ch : o.changes) c.push(ch);
  }
};

TEST(ChangeCoalescerTest, UnfoldedChangesPassThroughUnchanged) {
  feed f;
  auto o = f.s.put_node(node("n1"));
  f.push(o);
  auto out = f.c.take(10);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], o.changes[0]);  // the very object, shared with other watchers
  EXPECT_TRUE(f.c.empty());
}

TEST(ChangeCoalescerTest, Folding) {
  struct row {
    std::string name;
    std::function<void(feed&)> run;
    std::vector<t> want;
  };
  std::vector<row> rows = {
    {"add then delete cancels",
     [](feed& f) {
       f.push(f.s.create_pod(pod("a")));
       f.push(f.s.delete_pod("uid-a"));
     },
     {}},
    {"add then updates is one add of the latest",
     [](feed& f) {
       f.push(f.s.put_node(node("n1")));
       f.push(f.s.create_pod(pod("a")));
       f.push(f.s.bind("uid-a", "n1"));
       f.push(f.s.set_phase("uid-a", "Running"));
     },
     {t::node_add, t::pod_add}},
    {"updates fold to seen -> latest",
     [](feed& f) {
       f.s.put_node(node("n1"));
       f.s.create_pod(pod("a"));
       f.push(f.s.bind("uid-a", "n1"));
       f.push(f.s.set_phase("uid-a", "Running"));
     },
     {t::pod_update}},
    {"update then delete is a delete",
     [](feed& f) {
       f.s.put_node(node("n1"));
       f.s.create_pod(pod("a"));
       f.push(f.s.bind("uid-a", "n1"));
       f.push(f.s.delete_pod("uid-a"));
     },
     {t::pod_delete}},
    {"node delete then add is an update",
     [](feed& f) {
       f.s.put_node(node("n1"));
       f.push(f.s.remove_node("n1"));
       f.push(f.s.put_node(node("n1")));
     },
     {t::node_update}},
    {"synced never folds, objects keep the latest",
     [](feed& f) {
       for (auto& ch : f.s.list()) f.c.push(ch);
       f.push(f.s.set_objects(std::make_shared<const cluster_objects>()));
     },
     {t::objects, t::synced}},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    feed f;
    r.run(f);
    EXPECT_EQ(f.c.size(), r.want.size());
    EXPECT_EQ(types(f.c.take(100)), r.want);
    EXPECT_TRUE(f.c.empty());
  }
}

TEST(ChangeCoalescerTest, FoldedChangesCarrySeenAndLatestState) {
  feed f;
  f.s.put_node(node("n1"));
  f.s.create_pod(pod("a"));
  f.s.create_pod(pod("b"));
  pod_condition unsched{"PodScheduled", "False", "Unschedulable", "x"};
  f.push(f.s.set_condition("uid-b", unsched));  // b first: order is first appearance
  f.push(f.s.bind("uid-a", "n1"));
  f.push(f.s.set_condition("uid-b", pod_condition{"PodScheduled", "False", "Unschedulable", "y"}));
  f.push(f.s.set_phase("uid-a", "Running"));
  auto out = f.c.take(100);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]->new_pod->name, "b");
  EXPECT_TRUE(out[0]->conditions_only);  // only conditions changed, across both folds
  EXPECT_EQ(out[0]->new_pod->conditions.at(0).message, "y");
  EXPECT_EQ(out[1]->type, t::pod_update);
  EXPECT_TRUE(out[1]->old_pod->node_name.empty());  // what the watcher last saw
  EXPECT_EQ(out[1]->new_pod->node_name, "n1");
  EXPECT_EQ(out[1]->new_pod->phase, "Running");
  EXPECT_FALSE(out[1]->conditions_only);
  EXPECT_EQ(out[1]->resource_version, f.s.resource_version());
  // A delete carries the last state (bound), so a cache that assumed the pod can drop it.
  f.push(f.s.set_phase("uid-b", "Pending"));
  f.push(f.s.bind("uid-b", "n1"));
  f.push(f.s.delete_pod("uid-b"));
  out = f.c.take(100);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->type, t::pod_delete);
  EXPECT_EQ(out[0]->old_pod->node_name, "n1");
}

TEST(ChangeCoalescerTest, TakeRespectsMaxAndKeepsFoldingTheRest) {
  feed f;
  for (int i = 0; i < 5; ++i) f.push(f.s.put_node(node("n" + std::to_string(i))));
  EXPECT_EQ(f.c.take(2).size(), 2u);
  f.push(f.s.put_node(node("n4")));  // folds into the waiting add
  f.push(f.s.put_node(node("n0")));  // n0 was delivered: a new update
  EXPECT_EQ(types(f.c.take(100)), (std::vector<t>{t::node_add, t::node_add, t::node_add, t::node_update}));
}

}  // namespace
}  // namespace kas::test

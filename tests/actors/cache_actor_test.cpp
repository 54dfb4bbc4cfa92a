// The snapshot_cache actor, stepped by hand on CAF's test coordinator: snapshot replies, Reserve
// (assume) accepted or refused when the node changed since the driver's snapshot, forget, and the
// cluster-change flow (a batch is applied, then each change is forwarded to the queue, then the
// batch is credited to the cluster). The cluster and queue are recorders
// (deterministic_fixture.hpp); scheduler_cache_test covers the cache's data structure alone.
#include <gtest/gtest.h>

#include "actors/snapshot_cache.hpp"
#include "tests/actors/actor_fixtures.hpp"
#include "tests/actors/deterministic_fixture.hpp"

namespace kas::test {
namespace {

class cache_actor_test : public deterministic_fixture {
protected:
  // A cache holding `nodes`, fed as one batch from the "cluster" recorder.
  snapshot_cache_actor start(const std::vector<node_info_ptr>& nodes) {
    wiring = make_wiring();
    wiring->cache = track(spawn_snapshot_cache(sys, cache_options{}, wiring));
    std::vector<cluster_change_ptr> changes;
    for (auto& n : nodes) changes.push_back(node_added(n));
    changes.push_back(synced());
    send_as("cluster", wiring->cache, event_atom::value, batch(changes));
    run();
    return wiring->cache;
  }

  snapshot_ptr snapshot() { return ask<snapshot_ptr>(wiring->cache, snap_atom::value).value_or(nullptr); }

  // A Reserve request as the driver builds it: PreFilter ran on `snap`, the host is `node`.
  assume_request reserve(const pod_info_ptr& p, const std::string& node, const snapshot_ptr& snap) {
    assume_request r;
    r.fwk = frameworks().front();
    r.pod = p;
    auto state = std::make_shared<fw::cycle_state>();
    state->set_snapshot(snap);
    fw::pre_filter_result pr;
    auto s = r.fwk->run_pre_filter(*state, *p, *snap, pr);
    EXPECT_TRUE(s.is_success()) << s.message();
    r.state = state;
    r.node = node;
    const node_info* n = snap->find(node);
    r.node_generation = n ? n->generation : 0;
    r.snapshot_generation = snap->generation();
    return r;
  }

  assume_reply assume(const assume_request& r) {
    return ask<assume_reply>(wiring->cache, assume_atom::value, r).value_or(assume_reply{});
  }

  int64_t requested_cpu(const std::string& node) {
    auto snap = snapshot();
    const node_info* n = snap ? snap->find(node) : nullptr;
    return n ? n->requested.milli_cpu : -1;
  }

  std::shared_ptr<pipeline> wiring;
};

TEST_F(cache_actor_test, snapshot_reply_shows_every_node) {
  start({make_node(node("n1")), make_node(node("n2"))});
  auto snap = snapshot();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->size(), 2u);
  EXPECT_NE(snap->find("n1"), nullptr);
  EXPECT_NE(snap->find("n2"), nullptr);
}

TEST_F(cache_actor_test, assume_accepts_a_pod_that_fits_and_places_it) {
  start({make_node(node("n1", "4"))});
  auto p = make_pod(pod("web", "1", "1Gi"));
  auto rep = assume(reserve(p, "n1", snapshot()));
  EXPECT_TRUE(rep.ok) << rep.message;
  EXPECT_FALSE(rep.conflict);
  ASSERT_TRUE(rep.assumed);
  EXPECT_EQ(rep.assumed->node_name, "n1");
  EXPECT_EQ(requested_cpu("n1"), 1000) << "the next snapshot counts the assumed pod";
}

TEST_F(cache_actor_test, assume_refuses_when_the_node_changed_and_no_longer_fits) {
  start({make_node(node("n1", "4"))});
  auto snap = snapshot();  // both cycles evaluated n1 on this snapshot
  auto a = make_pod(pod("a", "3", "1Gi"));
  auto b = make_pod(pod("b", "3", "1Gi"));
  auto ra = reserve(a, "n1", snap);
  auto rb = reserve(b, "n1", snap);
  EXPECT_TRUE(assume(ra).ok);
  auto rep = assume(rb);
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(rep.conflict) << "a conflict retries the pod on a newer snapshot";
  EXPECT_NE(rep.message.find("Insufficient cpu"), std::string::npos) << rep.message;
  EXPECT_EQ(requested_cpu("n1"), 3000);
}

TEST_F(cache_actor_test, assume_on_a_node_that_is_gone_is_a_conflict) {
  start({make_node(node("n1"))});
  auto r = reserve(make_pod(pod("web", "1", "1Gi")), "n1", snapshot());
  r.node = "gone";
  auto rep = assume(r);
  EXPECT_TRUE(rep.conflict);
  EXPECT_NE(rep.message.find("no longer exists"), std::string::npos) << rep.message;
}

TEST_F(cache_actor_test, forget_releases_the_assumed_pod) {
  auto cache = start({make_node(node("n1", "4"))});
  auto snap = snapshot();
  auto a = make_pod(pod("a", "3", "1Gi"));
  ASSERT_TRUE(assume(reserve(a, "n1", snap)).ok);
  EXPECT_EQ(requested_cpu("n1"), 3000);
  send(cache, forget_atom::value, a->uid);
  ASSERT_TRUE((step<forget_atom, std::string>(cache)));
  EXPECT_EQ(requested_cpu("n1"), 0);
  auto b = make_pod(pod("b", "3", "1Gi"));
  EXPECT_TRUE(assume(reserve(b, "n1", snapshot())).ok) << "the room a forgotten pod held is free again";
}

TEST_F(cache_actor_test, a_change_is_applied_then_forwarded_to_the_queue_then_acknowledged) {
  auto cache = start({make_node(node("n1"))});
  run();
  size_t forwarded_before = 0;
  for (auto& [atom, b] : log("queue").all<event_atom, cluster_change_batch_ptr>()) forwarded_before += b->changes.size();
  EXPECT_EQ(forwarded_before, 2u) << "the initial list (one node, then synced) reached the queue";
  auto ch = node_added(make_node(node("n2")));
  auto sent = batch({ch});
  send_as("cluster", cache, event_atom::value, sent);
  ASSERT_TRUE((step<event_atom, cluster_change_batch_ptr>(cache)));
  // Within that one handler the cache applied the change, sent it on to the queue, and answered.
  auto queue = caf::actor_cast<caf::actor>(wiring->queue);
  ASSERT_TRUE(has_pending(queue));
  auto fwd = step<event_atom, cluster_change_batch_ptr>(queue);
  ASSERT_TRUE(fwd);
  EXPECT_EQ(std::get<1>(*fwd), sent) << "the same immutable batch is forwarded, in one message";
  auto snap = snapshot();
  ASSERT_TRUE(snap);
  EXPECT_NE(snap->find("n2"), nullptr) << "the queue never sees a change the snapshot does not show";
  auto credits = log("cluster").all<credit_atom, uint64_t>();
  ASSERT_EQ(credits.size(), 2u) << "batches that ask for credit after every change";
  EXPECT_EQ(std::get<1>(credits.back()), 1u);
}

TEST_F(cache_actor_test, credit_goes_back_once_ack_every_changes_are_applied_not_per_batch) {
  auto cache = start({make_node(node("n1"))});
  size_t before = log("cluster").count<credit_atom, uint64_t>();
  for (int i = 2; i <= 7; ++i) {
    auto b = std::make_shared<cluster_change_batch>();
    b->changes = {node_added(make_node(node("n" + std::to_string(i))))};
    b->ack_every = 3;
    send_as("cluster", cache, event_atom::value, cluster_change_batch_ptr(b));
    run();
    auto credits = log("cluster").all<credit_atom, uint64_t>();
    ASSERT_EQ(credits.size() - before, static_cast<size_t>((i - 1) / 3)) << "after change " << i - 1;
    if (credits.size() > before) {
      EXPECT_EQ(std::get<1>(credits.back()), 3u) << "every change owed, at once";
    }
  }
}

}  // namespace
}  // namespace kas::test

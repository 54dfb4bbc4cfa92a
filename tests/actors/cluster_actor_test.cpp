// The embedded cluster's flow control, stepped by hand on CAF's test coordinator: a watcher gets at
// most `watch_window` changes it has not credited, changes waiting for credit coalesce per object,
// credit is returned cumulatively (one credit message per window/4 changes, not one reply per
// batch), and a watcher that goes down is dropped without stopping the cluster. The watcher under
// test is a recorder (deterministic_fixture.hpp), so it credits only when the test says so.
#include <gtest/gtest.h>

#include "actors/embedded_client.hpp"
#include "actors/embedded_cluster.hpp"
#include "tests/actors/actor_fixtures.hpp"
#include "tests/actors/deterministic_fixture.hpp"

namespace kas::test {
namespace {

class cluster_actor_test : public deterministic_fixture {
protected:
  cluster_actor start(size_t window, size_t batch, size_t fold_after = 0) {
    cluster_options opts;
    opts.watch_fold_after = fold_after;
    opts.node_agents = 1;
    opts.metrics = &registry;
    opts.watch_window = window;
    opts.watch_batch = batch;
    cluster = track(spawn_embedded_cluster(sys, opts));
    run();
    return cluster;
  }
  void add_nodes(size_t n, const std::string& cpu = "4") {
    for (size_t i = 0; i < n; ++i) send(cluster, create_atom::value, make_node(node("n" + std::to_string(i), cpu)));
    run();
  }
  void watch(const std::string& watcher) {
    send(cluster, watch_atom::value, caf::actor_cast<watcher_actor>(recorder_handle(watcher)));
    run();
  }
  // Every batch the recorder named `watcher` received.
  std::vector<cluster_change_batch_ptr> batches(const std::string& watcher) {
    std::vector<cluster_change_batch_ptr> out;
    for (auto& [atom, b] : log(watcher).all<event_atom, cluster_change_batch_ptr>()) out.push_back(b);
    return out;
  }
  static size_t changes_in(const std::vector<cluster_change_batch_ptr>& bs) {
    size_t n = 0;
    for (auto& b : bs) n += b->changes.size();
    return n;
  }
  void credit(const std::string& watcher, uint64_t n) {
    send_as(watcher, cluster, credit_atom::value, n);
    run();
  }
  cluster_stats stats() { return ask<cluster_stats>(cluster, stats_atom::value).value_or(cluster_stats{}); }

  cluster_actor cluster;
};

TEST_F(cluster_actor_test, a_watcher_that_does_not_credit_gets_at_most_the_window) {
  start(8, 4);
  add_nodes(20);
  watch("w");
  auto bs = batches("w");
  ASSERT_EQ(bs.size(), 2u) << "two batches of 4 fill the window of 8";
  EXPECT_EQ(changes_in(bs), 8u) << "the initial list is the objects, 20 nodes and synced; only 8 are sent";
  for (auto& b : bs) EXPECT_EQ(b->ack_every, 2u) << "credit is owed every window/4 changes";
  // Changes go on while the watcher is behind: none is sent.
  add_nodes(5);  // n0..n4 again: updates
  EXPECT_EQ(changes_in(batches("w")), 8u);
  // Credit for 8: the next 8 changes, in order.
  credit("w", 8);
  bs = batches("w");
  EXPECT_EQ(changes_in(bs), 16u);
  EXPECT_EQ(bs.back()->changes.back()->new_node->name, "n14") << "after the objects and n0..n6, n7..n14";
}

TEST_F(cluster_actor_test, changes_waiting_for_credit_fold_into_the_latest_state_per_object) {
  start(4, 4);
  add_nodes(4);
  watch("w");
  auto bs = batches("w");
  ASSERT_EQ(changes_in(bs), 4u);
  // The objects and n0..n2 went; n3 and synced wait. n0 is updated three times meanwhile.
  for (auto cpu : {"5", "6", "7"}) {
    send(cluster, create_atom::value, make_node(node("n0", cpu)));
    run();
  }
  credit("w", 4);
  bs = batches("w");
  ASSERT_EQ(bs.size(), 2u);
  auto& second = bs[1]->changes;
  ASSERT_EQ(second.size(), 3u) << "n3, synced, then one folded update for n0 (not three)";
  EXPECT_EQ(second[0]->type, cluster_event_type::node_add);
  EXPECT_EQ(second[1]->type, cluster_event_type::synced);
  EXPECT_EQ(second[2]->type, cluster_event_type::node_update);
  EXPECT_EQ(second[2]->new_node->allocatable.milli_cpu, 7000) << "the latest state";
  EXPECT_EQ(second[2]->old_node->allocatable.milli_cpu, 4000) << "against the state the watcher last saw";
}

TEST_F(cluster_actor_test, changes_fold_only_once_more_than_fold_after_wait) {
  start(4, 4, 3);
  add_nodes(1);
  watch("w");
  ASSERT_EQ(changes_in(batches("w")), 3u) << "the objects, n0, synced";
  // Six updates of n0: the first fits the window; three wait as they are (fold_after 3); the last
  // two fold into one.
  for (int cpu = 5; cpu <= 10; ++cpu) {
    send(cluster, create_atom::value, make_node(node("n0", std::to_string(cpu))));
    run();
  }
  EXPECT_EQ(changes_in(batches("w")), 4u);
  credit("w", 4);
  auto bs = batches("w");
  ASSERT_EQ(bs.size(), 3u);
  auto& last = bs[2]->changes;
  ASSERT_EQ(last.size(), 4u) << "three updates as they were, then one folded";
  EXPECT_EQ(last[0]->new_node->allocatable.milli_cpu, 6000);
  EXPECT_EQ(last[2]->new_node->allocatable.milli_cpu, 8000);
  EXPECT_EQ(last[3]->old_node->allocatable.milli_cpu, 8000) << "folded against what the watcher then knew";
  EXPECT_EQ(last[3]->new_node->allocatable.milli_cpu, 10000);
}

TEST_F(cluster_actor_test, watchers_that_keep_up_share_one_batch_object) {
  start(64, 16);
  watch("a");
  watch("b");
  add_nodes(1);
  auto a = batches("a"), b = batches("b");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(a.back().get(), b.back().get()) << "one allocation, not one per watcher";
  EXPECT_EQ(a.back()->changes.front()->new_node->name, "n0");
}

TEST_F(cluster_actor_test, a_real_watcher_credits_as_it_applies_and_the_stream_goes_on) {
  // The node agent (a kubelet) credits through watch_credit. With a window of 4 and batches of 1,
  // 12 bound pods reach it only if its credit keeps coming back; it reports each Running.
  start(4, 1);
  add_nodes(3);
  for (int i = 0; i < 12; ++i) {
    auto p = std::make_shared<pod_info>(*make_pod(pod("p" + std::to_string(i), "100m", "64Mi")));
    p->node_name = "n" + std::to_string(i % 3);
    send(cluster, create_atom::value, pod_info_ptr(p));
  }
  run();
  EXPECT_EQ(stats().running, 12u);
}

TEST_F(cluster_actor_test, a_watcher_that_goes_down_is_dropped_and_the_cluster_goes_on) {
  start(8, 4);
  add_nodes(2);
  watch("w");
  ASSERT_EQ(changes_in(batches("w")), 4u) << "the objects, two nodes, synced";
  caf::anon_send_exit(recorder_handle("w"), caf::exit_reason::user_shutdown);
  run();
  add_nodes(30);  // would block on the dead watcher's window, were it still counted
  EXPECT_EQ(stats().nodes, 30u);
  watch("w2");
  EXPECT_EQ(changes_in(batches("w2")), 8u);
}

// A binding requested through the client from inside an actor (the binder's requester_scope): the
// reply is the cluster's status, and a cluster that is gone answers with an error (CAF bounces the
// request). Requests carry no timeout, so that is their failure path.
class cluster_request_test : public cluster_actor_test {
protected:
  // Spawns an actor that binds pod p0 to n0 through the client; returns once the request is sent.
  void request_bind() {
    auto client = std::make_shared<embedded_client>(cluster);
    auto out = got;
    requester = sys.spawn([client, out](caf::event_based_actor* self) -> caf::behavior {
      requester_scope<caf::event_based_actor*> scope{self};
      client->bind(*make_pod(pod("p0", "100m", "64Mi")), "n0", [out](fw::status s) { *out = s; });
      return {[](int) {}};
    });
    track(requester);
  }
  std::shared_ptr<std::optional<fw::status>> got = std::make_shared<std::optional<fw::status>>();
  caf::actor requester;
};

TEST_F(cluster_request_test, the_cluster_answers_with_its_status) {
  start(8, 4);
  request_bind();
  run();
  ASSERT_TRUE(*got);
  EXPECT_FALSE((*got)->is_success()) << "no pod p0: 404";
  EXPECT_NE((*got)->message().find("not found"), std::string::npos) << (*got)->message();
}

TEST_F(cluster_request_test, a_cluster_that_is_gone_answers_with_an_error) {
  start(8, 4);
  caf::anon_send_exit(cluster, caf::exit_reason::kill);
  run();
  request_bind();
  run();
  ASSERT_TRUE(*got) << "done was called";
  EXPECT_EQ((*got)->get_code(), fw::code::error);
  EXPECT_NE((*got)->message().find("cluster request failed"), std::string::npos) << (*got)->message();
}

}  // namespace
}  // namespace kas::test

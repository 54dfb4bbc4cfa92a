// The cycle driver, stepped by hand on CAF's test coordinator: every stage of a pod's cycle is a
// typed message, so a test plays the queue and the cache (recorders) and checks each stage message
// the driver sends, in kube's order. The workers are real filter_score_workers.
#include <gtest/gtest.h>

#include "actors/cycle_driver.hpp"
#include "actors/filter_score_worker.hpp"
#include "cache/scheduler_cache.hpp"
#include "tests/actors/actor_fixtures.hpp"
#include "tests/actors/deterministic_fixture.hpp"

namespace kas::test {
namespace {

using pods = std::vector<queued_pod_ptr>;

class driver_actor_test : public deterministic_fixture {
protected:
  // A driver over the default profile with `workers` real workers; the queue, cache, permit and
  // binder are recorders.
  driver_actor start(uint32_t depth, size_t workers = 2, bool batching = false) {
    wiring = make_wiring();
    wiring->workers.clear();
    for (size_t i = 0; i < workers; ++i)
      wiring->workers.push_back(track(spawn_filter_score_worker(sys, i + 1, &registry)));
    driver_options opts;
    opts.pipeline_depth = depth;
    opts.batching = batching;
    driver = track(spawn_cycle_driver(sys, frameworks(), opts, wiring));
    run();
    send(driver, start_atom::value);
    run();
    return driver;
  }

  snapshot_ptr cluster(const std::vector<node_spec>& nodes) {
    for (auto& n : nodes) cache.add_or_update_node(std::make_shared<node_info>(*make_node(n)));
    return cache.current();
  }

  static queued_pod_ptr queued(const pod_spec& s) {
    auto q = std::make_shared<fw::queued_pod_info>();
    q->pod = make_pod(s);
    q->attempts = 1;
    return q;
  }

  // The queue hands out `qs`; the driver asks the cache for a snapshot, which the test gives.
  void pop_and_snapshot(const pods& qs, const snapshot_ptr& snap) {
    send_as("queue", driver, qs);
    run();
    ASSERT_EQ(log("cache").count<snap_atom>(), ++snapshots_asked);
    send_as("cache", driver, snap);
    run();
  }

  // The driver's last assume request (the stage after host selection).
  std::optional<assume_request> last_assume() {
    auto m = log("cache").last<assume_atom, assume_request>();
    if (!m) return std::nullopt;
    return std::get<1>(*m);
  }

  assume_reply accepted(const assume_request& req) {
    assume_reply rep;
    rep.cycle = req.cycle;
    rep.ok = true;
    rep.assumed = with_node_name(*req.pod, req.node);
    return rep;
  }

  scheduler_cache cache;
  std::shared_ptr<pipeline> wiring;
  driver_actor driver;
  size_t snapshots_asked = 0;
};

TEST_F(driver_actor_test, start_pops_as_many_pods_as_the_pipeline_holds) {
  start(3);
  auto pop = log("queue").last<pop_atom, uint32_t>();
  ASSERT_TRUE(pop);
  EXPECT_EQ(std::get<1>(*pop), 3u);
}

TEST_F(driver_actor_test, node_range_cycle_runs_the_stages_in_order_to_a_binder) {
  start(1);
  auto snap = cluster({node("n1", "1"), node("n2", "4"), node("n3", "4")});
  pop_and_snapshot({queued(pod("p", "2", "1Gi"))}, snap);
  // PreFilter, Filter fanned out by node range, merge, PreScore, Score fanned out, select: the cycle
  // reaches the cache's assume with a node that fits (n1 has 1 CPU).
  auto req = last_assume();
  ASSERT_TRUE(req);
  EXPECT_NE(req->node, "n1");
  EXPECT_EQ(req->snapshot_generation, snap->generation());
  // Nothing was popped meanwhile: the one pipeline slot is taken.
  EXPECT_EQ((log("queue").count<pop_atom, uint32_t>()), 1u);
  send_as("cache", driver, accepted(*req));
  run();
  // Reserve and Permit passed: the pod goes to a binder, the slot frees and the next pop goes out.
  EXPECT_EQ((log("binder-0").count<bind_atom, cycle_ctx_ptr>()), 1u);
  EXPECT_EQ((log("queue").count<pop_atom, uint32_t>()), 2u);
  EXPECT_EQ(log("permit").messages.size(), 0u);
}

TEST_F(driver_actor_test, whole_pod_cycle_on_a_worker_reaches_assume) {
  start(4);
  auto snap = cluster({node("n1", "4"), node("n2", "4")});
  pop_and_snapshot({queued(pod("a", "1", "1Gi")), queued(pod("b", "1", "1Gi"))}, snap);
  std::set<std::string> pods_assumed;
  for (auto& [atom, req] : log("cache").all<assume_atom, assume_request>()) pods_assumed.insert(req.pod->name);
  EXPECT_EQ(pods_assumed, (std::set<std::string>{"a", "b"}));
}

// Opportunistic batching: once a pod's ranked list exists, the next pods of its signature take the
// list's next nodes at once, without asking the cache for a snapshot they would not read.
TEST_F(driver_actor_test, batched_pods_start_without_a_snapshot_round_trip) {
  // PodTopologySpread without system defaults: kube's SignPod refuses pods it would default.
  auto profile = default_profile();
  profile.plugin_args["PodTopologySpread"] = YAML::Load("defaultingType: List");
  fw::handle h;
  h.client = fw::unowned_client(&client);
  auto f = fw::framework::build(profile, fw::in_tree_registry(), h, "profiles[0]");
  ASSERT_TRUE(f.ok()) << f.err().message;
  frameworks_built = {*f};
  start(4, 2, true);
  auto snap = cluster({node("n1", "4"), node("n2", "4"), node("n3", "4")});
  pop_and_snapshot({queued(pod("a", "1", "1Gi"))}, snap);  // a whole cycle on a worker ranks the nodes
  auto first = last_assume();
  ASSERT_TRUE(first);
  send_as("cache", driver, accepted(*first));
  run();

  send_as("queue", driver, pods{queued(pod("b", "1", "1Gi"))});
  run();
  EXPECT_EQ(log("cache").count<snap_atom>(), 1u) << "a batched pod asked for a snapshot";
  auto second = last_assume();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->pod->name, "b");
  EXPECT_NE(second->node, first->node) << "the next node of a's ranked list";
  EXPECT_EQ(second->snapshot_generation, snap->generation()) << "read on the batch's snapshot";

  // Another signature is scheduled in full, on a snapshot of its own.
  send_as("queue", driver, pods{queued(pod("c", "2", "1Gi"))});
  run();
  EXPECT_EQ(log("cache").count<snap_atom>(), 2u);
}

TEST_F(driver_actor_test, an_unschedulable_pod_fails_back_into_the_queue_with_the_fit_error) {
  start(1);
  auto snap = cluster({node("n1", "1"), node("n2", "1")});
  pop_and_snapshot({queued(pod("big", "8", "1Gi"))}, snap);
  EXPECT_FALSE(last_assume());
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  const auto& fail = std::get<1>(*f);
  EXPECT_EQ(fail.message, "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                          "2 Preemption is not helpful for scheduling.");
  EXPECT_EQ(fail.unschedulable_plugins.count("NodeResourcesFit"), 1u);
  EXPECT_EQ((log("queue").count<pop_atom, uint32_t>()), 2u);
}

TEST_F(driver_actor_test, an_empty_cluster_is_unresolvable_without_postfilter) {
  start(1);
  pop_and_snapshot({queued(pod("p", "1", "1Gi"))}, cluster({}));
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_EQ(std::get<1>(*f).message, "no nodes available to schedule pods");
  EXPECT_EQ(std::get<1>(*f).result.get_code(), fw::code::unschedulable_and_unresolvable);
}

TEST_F(driver_actor_test, a_conflict_at_assume_retries_on_a_new_snapshot_without_backoff) {
  start(1);
  auto snap = cluster({node("n1", "4")});
  pop_and_snapshot({queued(pod("p", "1", "1Gi"))}, snap);
  auto req = last_assume();
  ASSERT_TRUE(req);
  assume_reply conflict;
  conflict.cycle = req->cycle;
  conflict.conflict = true;
  conflict.message = "node changed";
  send_as("cache", driver, conflict);
  run();
  EXPECT_EQ(log("cache").count<snap_atom>(), 2u);
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 0u);
  send_as("cache", driver, cluster({node("n2", "4")}));
  run();
  EXPECT_EQ((log("cache").count<assume_atom, assume_request>()), 2u);
}

TEST_F(driver_actor_test, a_refused_assume_fails_the_cycle_as_an_error) {
  start(1);
  pop_and_snapshot({queued(pod("p", "1", "1Gi"))}, cluster({node("n1", "4")}));
  auto req = last_assume();
  ASSERT_TRUE(req);
  assume_reply refused;
  refused.cycle = req->cycle;
  refused.message = "pod already assumed";
  send_as("cache", driver, refused);
  run();
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_EQ(std::get<1>(*f).result.get_code(), fw::code::error);
  EXPECT_EQ(std::get<1>(*f).message, "pod already assumed");
}

TEST_F(driver_actor_test, the_cache_going_down_fails_the_cycles_waiting_on_it_back_into_the_queue) {
  start(1);
  auto snap = cluster({node("n1", "4")});
  pop_and_snapshot({queued(pod("p", "1", "1Gi"))}, snap);
  ASSERT_TRUE(last_assume());
  // The cycle waits on the cache's assume answer; the cache dies instead.
  caf::anon_send_exit(wiring->cache, caf::exit_reason::kill);
  run();
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_EQ(std::get<1>(*f).result.get_code(), fw::code::error);
  EXPECT_NE(std::get<1>(*f).message.find("scheduling cycle lost its snapshot_cache ("), std::string::npos);
  // And it pulls no more pods: the pipeline is broken.
  EXPECT_EQ((log("queue").count<pop_atom, uint32_t>()), 1u);
}

TEST_F(driver_actor_test, a_stage_message_for_an_unknown_cycle_is_dropped) {
  start(1);
  assume_reply stray;
  stray.cycle = 99;
  stray.ok = true;
  send_as("cache", driver, stray);
  run();
  EXPECT_EQ(log("binder-0").messages.size(), 0u);
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 0u);
}

TEST_F(driver_actor_test, every_handled_message_is_counted_by_the_probe) {
  start(1);
  pop_and_snapshot({queued(pod("p", "1", "1Gi"))}, cluster({node("n1", "4"), node("n2", "4")}));
  // start, popped, snapshot, 2 filtered ranges or 1, scored ranges: at least 5 handled messages.
  auto text = registry.render_text();
  auto pos = text.find("actor_messages_processed_total{actor=\"cycle_driver-0\"}");
  ASSERT_NE(pos, std::string::npos);
  double n = std::stod(text.substr(text.find(' ', pos) + 1));
  EXPECT_GE(n, 5.0);
}

}  // namespace
}  // namespace kas::test

// The scheduling_queue actor, stepped by hand on CAF's test coordinator: cluster changes in, pop
// replies out (and held back while nothing is ready), requeue to the unschedulable pool or backoff,
// the tick that flushes backoff, and the quiescence reply. The cache, driver and app around it are
// recorders (deterministic_fixture.hpp). queue_state_test covers the queue's rules without actors.
#include <gtest/gtest.h>

#include "actors/scheduling_queue.hpp"
#include "tests/actors/actor_fixtures.hpp"
#include "tests/actors/deterministic_fixture.hpp"

namespace kas::test {
namespace {

using pods = std::vector<queued_pod_ptr>;

class queue_actor_test : public deterministic_fixture {
protected:
  // A queue over the default profile, with backoff `initial`, already past the initial list unless
  // told otherwise. With `windows` off (kube's SchedulerPopFromBackoffQ off), a backoff of 0 is over
  // by the next tick; with them, only once the wall clock enters the next 1 s window.
  queue_actor start(std::chrono::nanoseconds initial = std::chrono::seconds(1), bool sync = true, bool windows = true) {
    wiring = make_wiring();
    auto opts = default_queue_options();
    opts.queue.initial_backoff = initial;
    opts.queue.pop_from_backoff = windows;
    opts.queue.max_backoff = std::max<std::chrono::nanoseconds>(initial, std::chrono::seconds(10));
    wiring->queue = track(spawn_scheduling_queue(sys, frameworks(), opts, wiring));
    run();
    if (sync) {
      send(wiring->queue, event_atom::value, batch({synced()}));
      run();
    }
    return wiring->queue;
  }

  queue_stats stats() { return ask<queue_stats>(wiring->queue, stats_atom::value).value_or(queue_stats{}); }

  // Pops `p` as the driver would and checks it is the pod handed out.
  queued_pod_ptr pop_one(const pod_info_ptr& p) {
    auto got = ask<pods>(wiring->queue, pop_atom::value, uint32_t{1});
    if (!got || got->size() != 1 || (*got)[0]->pod->uid != p->uid) {
      ADD_FAILURE() << "expected to pop " << p->uid;
      return nullptr;
    }
    return (*got)[0];
  }

  failure failed(const queued_pod_ptr& q, fw::status s) {
    failure f;
    f.pod = q;
    f.result = std::move(s);
    f.message = "0/1 nodes are available: 1 Insufficient cpu.";
    f.unschedulable_plugins = {"NodeResourcesFit"};
    f.cycle = 1;
    return f;
  }

  std::shared_ptr<pipeline> wiring;
};

TEST_F(queue_actor_test, cluster_change_in_pop_reply_out) {
  auto q = start();
  auto p = make_pod(pod("web", "100m", "128Mi"));
  send(q, event_atom::value, batch({pod_added(p)}));
  auto in = step<event_atom, cluster_change_batch_ptr>(q);
  ASSERT_TRUE(in);
  ASSERT_EQ(std::get<1>(*in)->changes.size(), 1u);
  EXPECT_EQ(std::get<1>(*in)->changes[0]->new_pod, p);
  EXPECT_EQ(stats().active, 1u);
  auto popped = pop_one(p);
  ASSERT_TRUE(popped);
  EXPECT_EQ(popped->attempts, 1);
  auto s = stats();
  EXPECT_EQ(s.active, 0u);
  EXPECT_EQ(s.in_flight, 1u);
}

TEST_F(queue_actor_test, pop_waits_until_a_pod_is_available) {
  auto q = start();
  send_as("driver", q, pop_atom::value, uint32_t{2});
  run();
  EXPECT_EQ(log("driver").count<pods>(), 0u) << "an empty queue must hold the pop, not answer it";
  auto p = make_pod(pod("late", "100m", "128Mi"));
  send(q, event_atom::value, batch({pod_added(p)}));
  run();
  auto reply = log("driver").last<pods>();
  ASSERT_TRUE(reply);
  ASSERT_EQ(std::get<0>(*reply).size(), 1u);
  EXPECT_EQ(std::get<0>(*reply)[0]->pod->uid, "late");
}

TEST_F(queue_actor_test, nothing_is_handed_out_before_the_initial_list_arrived) {
  auto q = start(std::chrono::seconds(1), /*sync=*/false);
  send_as("driver", q, pop_atom::value, uint32_t{1});
  send(q, event_atom::value, batch({pod_added(make_pod(pod("early", "100m", "128Mi")))}));
  run();
  EXPECT_EQ(log("driver").count<pods>(), 0u);
  EXPECT_FALSE(wiring->synced->load());
  send(q, event_atom::value, batch({synced()}));
  run();
  EXPECT_EQ(log("driver").count<pods>(), 1u);
  EXPECT_TRUE(wiring->synced->load()) << "/readyz reads this flag";
}

TEST_F(queue_actor_test, requeue_after_rejection_parks_the_pod_as_unschedulable) {
  auto q = start();
  auto p = make_pod(pod("big", "64", "1Gi"));
  send(q, event_atom::value, batch({pod_added(p)}));
  run();
  auto popped = pop_one(p);
  ASSERT_TRUE(popped);
  send(q, requeue_atom::value, failed(popped, fw::status::unschedulable("Insufficient cpu")));
  run();
  auto s = stats();
  EXPECT_EQ(s.unschedulable, 1u);
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_EQ(s.active, 0u);
  // A tick does not release it: only a relevant event (or 5 minutes) does.
  ASSERT_TRUE(tick());
  EXPECT_EQ(stats().unschedulable, 1u);
}

// A binding cycle that failed forgot its assumed pod: the room it held is free again, and the pods it
// kept out come back as on AssignedPodDelete (kube's handleBindingCycleError). The forgotten pod
// itself, rejected, stays parked.
TEST_F(queue_actor_test, a_failed_binding_cycle_moves_the_pods_its_assumed_pod_kept_out) {
  auto q = start(std::chrono::nanoseconds(0), true, false);
  auto kept_out = make_pod(pod("kept-out", "2", "1Gi"));
  auto assumed = make_pod(pod("assumed", "2", "1Gi"));
  send(q, event_atom::value, batch({pod_added(kept_out), pod_added(assumed)}));
  run();
  auto first = pop_one(kept_out);
  auto second = pop_one(assumed);
  ASSERT_TRUE(first && second);
  send(q, requeue_atom::value, failed(first, fw::status::unschedulable("Insufficient cpu")));
  run();
  ASSERT_EQ(stats().unschedulable, 1u);
  pod_spec on_node = pod("assumed", "2", "1Gi");
  on_node.node = "n1";
  auto f = failed(second, fw::status::unschedulable("rejected at Permit"));
  f.forgotten = make_pod(on_node);
  send(q, requeue_atom::value, f);
  run();
  EXPECT_EQ(stats().unschedulable, 1u) << "only the forgotten pod stays parked";
  ASSERT_TRUE(tick());
  auto again = ask<pods>(q, pop_atom::value, uint32_t{2});
  ASSERT_TRUE(again);
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0]->pod->uid, "kept-out");
}

TEST_F(queue_actor_test, requeue_after_error_backs_off_until_a_tick_flushes_it) {
  auto q = start(std::chrono::nanoseconds(0), true, false);
  auto p = make_pod(pod("flaky", "100m", "128Mi"));
  send(q, event_atom::value, batch({pod_added(p)}));
  run();
  auto popped = pop_one(p);
  ASSERT_TRUE(popped);
  send(q, requeue_atom::value, failed(popped, fw::status::error("bind failed")));
  run();
  EXPECT_EQ(stats().backoff, 1u);
  send_as("driver", q, pop_atom::value, uint32_t{1});
  run();
  EXPECT_EQ(log("driver").count<pods>(), 0u) << "a pod in backoff is not handed out";
  ASSERT_TRUE(tick());  // the queue's 1 s timer, on the test clock
  auto reply = log("driver").last<pods>();
  ASSERT_TRUE(reply) << "the flushed pod goes to the waiting pop";
  ASSERT_EQ(std::get<0>(*reply).size(), 1u);
  EXPECT_EQ(std::get<0>(*reply)[0]->attempts, 2);
  EXPECT_EQ(stats().backoff, 0u);
}

// kube's SchedulerPopFromBackoffQ: with activeQ empty, a pod a plugin rejected is handed out from
// backoffQ at once instead of after its backoff (a preemptor whose victims are gone, here a NodeAdd
// that arrived during its cycle).
TEST_F(queue_actor_test, a_waiting_pop_takes_a_rejected_pod_from_backoff_when_active_is_empty) {
  auto q = start();
  auto p = make_pod(pod("big", "6", "1Gi"));
  send(q, event_atom::value, batch({pod_added(p)}));
  run();
  auto popped = pop_one(p);
  ASSERT_TRUE(popped);
  send(q, event_atom::value, batch({node_added(make_node(node("n9", "8", "16Gi")))}));
  run();
  send_as("driver", q, pop_atom::value, uint32_t{1});
  run();
  EXPECT_EQ(log("driver").count<pods>(), 0u) << "nothing to hand out yet";
  send(q, requeue_atom::value, failed(popped, fw::status::unschedulable("Insufficient cpu")));
  run();
  auto reply = log("driver").last<pods>();
  ASSERT_TRUE(reply) << "the backing-off pod goes to the waiting pop without a tick";
  ASSERT_EQ(std::get<0>(*reply).size(), 1u);
  EXPECT_EQ(std::get<0>(*reply)[0]->attempts, 2);
  EXPECT_EQ(stats().backoff, 0u);
}

TEST_F(queue_actor_test, quiescence_reply_waits_for_the_pods_in_flight) {
  auto q = start();
  auto p = make_pod(pod("web", "100m", "128Mi"));
  send(q, event_atom::value, batch({pod_added(p)}));
  run();
  auto popped = pop_one(p);
  ASSERT_TRUE(popped);
  send_as("app", q, done_atom::value);
  run();
  EXPECT_EQ(log("app").count<queue_stats>(), 0u) << "a pod is still in flight";
  send(q, done_atom::value, std::vector<std::string>{p->uid});  // its binding succeeded
  run();
  auto reply = log("app").last<queue_stats>();
  ASSERT_TRUE(reply);
  EXPECT_EQ(std::get<0>(*reply).in_flight, 0u);
  EXPECT_EQ(std::get<0>(*reply).popped, 1u);
}

// The permit coordinator forgets a gang when the queue says so: once every member popped has had its
// cycle reported (here one bound, one failed), never while one still runs.
TEST_F(queue_actor_test, the_permit_coordinator_hears_when_a_gangs_popped_members_all_reported) {
  auto q = start();
  auto g = std::make_shared<pod_group>();
  g->api = pod_group_api::coscheduling;
  g->ns = "default";
  g->name = "train";
  g->gang = true;
  g->min_count = 2;
  auto objs = std::make_shared<cluster_objects>();
  objs->pod_groups[pod_group_key(*g)] = g;
  auto objects = std::make_shared<cluster_change>();
  objects->type = cluster_event_type::objects;
  objects->objects = objs;
  std::vector<pod_info_ptr> members;
  for (auto name : {"t0", "t1"}) {
    pod_spec ps = pod(name, "100m", "128Mi");
    ps.labels = {{coscheduling_pod_group_label, "train"}};
    members.push_back(make_pod(ps));
  }
  send(q, event_atom::value, batch({objects, pod_added(members[0]), pod_added(members[1])}));
  run();
  auto got = ask<pods>(q, pop_atom::value, uint32_t{2});
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 2u);
  ASSERT_TRUE((*got)[0]->gang);
  send(q, done_atom::value, std::vector<std::string>{members[0]->uid});
  run();
  EXPECT_EQ((log("permit").count<forget_atom, std::string>()), 0u) << "t1's cycle still runs";
  auto t1 = (*got)[0]->pod->uid == members[1]->uid ? (*got)[0] : (*got)[1];
  send(q, requeue_atom::value, failed(t1, fw::status::unschedulable("Insufficient cpu")));
  run();
  auto forget = log("permit").last<forget_atom, std::string>();
  ASSERT_TRUE(forget);
  EXPECT_EQ(std::get<1>(*forget), pod_group_key(*g));
  EXPECT_EQ((log("permit").count<forget_atom, std::string>()), 1u);

  // The next attempt: new members t2 and t3 join (with t0 bound the gang has its quorum) and are
  // popped in a new round. t2 is deleted while its cycle runs: t3's report does not make the gang
  // idle (t2's cycle may still reach Permit); t2's cycle's report, however late, does.
  std::vector<pod_info_ptr> next;
  for (auto name : {"t2", "t3"}) {
    pod_spec ps = pod(name, "100m", "128Mi");
    ps.labels = {{coscheduling_pod_group_label, "train"}};
    next.push_back(make_pod(ps));
  }
  auto t0_bound = std::make_shared<cluster_change>();  // the cluster shows t0's binding
  t0_bound->type = cluster_event_type::pod_update;
  t0_bound->old_pod = members[0];
  t0_bound->new_pod = with_node_name(*members[0], "n1");
  send(q, event_atom::value, batch({t0_bound, pod_added(next[0]), pod_added(next[1])}));
  run();
  auto again = ask<pods>(q, pop_atom::value, uint32_t{2});
  ASSERT_TRUE(again);
  ASSERT_EQ(again->size(), 2u);
  std::map<std::string, queued_pod_ptr> by_uid;
  for (auto& p : *again) by_uid[p->pod->uid] = p;
  ASSERT_EQ(by_uid.count(next[0]->uid) + by_uid.count(next[1]->uid), 2u);
  ASSERT_TRUE(by_uid[next[0]->uid]->gang);
  EXPECT_GT(by_uid[next[0]->uid]->gang->round, t1->gang->round);
  send(q, event_atom::value, batch({pod_deleted(next[0])}));
  run();
  send(q, done_atom::value, std::vector<std::string>{next[1]->uid});
  run();
  EXPECT_EQ((log("permit").count<forget_atom, std::string>()), 1u) << "t2's cycle has not reported";
  send(q, requeue_atom::value, failed(by_uid[next[0]->uid], fw::status::error("pods \"t2\" not found")));
  run();
  EXPECT_EQ((log("permit").count<forget_atom, std::string>()), 2u);
}

}  // namespace
}  // namespace kas::test

// The permit coordinator (waitingPods), stepped by hand on CAF's test coordinator: a pod parked by
// Permit's Wait goes to a binder once every waiting plugin allowed it, and fails back into the queue
// (Unreserve, forget) on a Reject or when its timer fires. Binders, cache and queue are recorders;
// the timer is the test clock.
#include <gtest/gtest.h>

#include "actors/permit_coordinator.hpp"
#include "tests/actors/actor_fixtures.hpp"
#include "tests/actors/deterministic_fixture.hpp"

namespace kas::test {
namespace {

class permit_actor_test : public deterministic_fixture {
protected:
  void SetUp() override {
    wiring = make_wiring();
    wiring->permit = track(spawn_permit_coordinator(sys, wiring));
    run();
  }

  // A reserved pod whose Permit returned Wait at `plugins`, each with `timeout`.
  cycle_ctx_ptr waiting(const std::string& name, std::vector<std::string_view> plugins,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto ctx = std::make_shared<cycle_ctx>();
    ctx->fwk = frameworks().front();
    auto q = std::make_shared<fw::queued_pod_info>();
    q->pod = make_pod(pod(name, "1", "1Gi"));
    q->attempts = 1;
    ctx->queued = q;
    ctx->assumed = with_node_name(*q->pod, "n1");
    ctx->node = "n1";
    for (auto p : plugins) ctx->permit_waits.emplace_back(p, timeout);
    return ctx;
  }

  // A member of gang team-a/train (minCount `min`) in round `round`, waiting at GangScheduling.
  cycle_ctx_ptr member(const std::string& name, int32_t min, uint64_t round = 1,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    if (!group) {
      auto g = std::make_shared<pod_group>();
      g->ns = "default";
      g->name = "train";
      g->gang = true;
      g->min_count = min;
      group = g;
    }
    auto ctx = waiting(name, {"GangScheduling"}, timeout);
    auto q = std::make_shared<fw::queued_pod_info>(*ctx->queued);
    auto t = std::make_shared<fw::gang_ticket>();
    t->group = group;
    t->key = pod_group_key(*group);
    t->round = round;
    t->members = static_cast<size_t>(min);
    t->bound = std::make_shared<const std::vector<std::string>>();
    q->gang = t;
    ctx->queued = q;
    return ctx;
  }

  // How many gangs the coordinator holds state for.
  uint64_t gangs() { return ask<uint64_t>(wiring->permit, stats_atom::value).value_or(~uint64_t{0}); }
  // The queue's word that none of the gang's popped members is left to report.
  void forget_gang() {
    send(wiring->permit, forget_atom::value, pod_group_key(*group));
    run();
  }
  // A member's own failure, as report_failure tells the coordinator.
  void member_failed(const cycle_ctx_ptr& m, bool in_binding) {
    send(wiring->permit, gang_atom::value,
         gang_member_failed{m->queued->gang, m->assumed->uid, {"NodeResourcesFit"}, "0/1 nodes are available",
                            in_binding});
    run();
  }
  size_t binds() { return log("binder-0").count<bind_atom, cycle_ctx_ptr>(); }
  size_t requeues() { return log("queue").count<requeue_atom, failure>(); }

  std::shared_ptr<pipeline> wiring;
  pod_group_ptr group;
};

// --- the gang state's life ---------------------------------------------------------------------------

TEST_F(permit_actor_test, a_gang_admitted_and_then_forgotten_by_the_queue_leaves_no_state) {
  EXPECT_EQ(gangs(), 0u);
  send(wiring->permit, wait_atom::value, member("a", 2));
  send(wiring->permit, wait_atom::value, member("b", 2));
  run();
  EXPECT_EQ(binds(), 2u);
  EXPECT_EQ(gangs(), 1u) << "held while the attempt's members may still arrive";
  forget_gang();
  EXPECT_EQ(gangs(), 0u);
  // The word for a gang it does not know changes nothing.
  forget_gang();
  EXPECT_EQ(gangs(), 0u);
  EXPECT_EQ(requeues(), 0u);
}

TEST_F(permit_actor_test, a_late_member_of_a_failed_round_is_rejected_until_the_queue_forgets_the_gang) {
  auto a = member("a", 3, 1, std::chrono::milliseconds(50));
  send(wiring->permit, wait_atom::value, a);
  run();
  ASSERT_TRUE(tick());  // the gang's timeout: round 1 failed
  run();
  ASSERT_EQ(requeues(), 1u);
  EXPECT_EQ(gangs(), 1u) << "round 1's other members are still on their way";
  send(wiring->permit, wait_atom::value, member("late", 3, 1));
  run();
  ASSERT_EQ(requeues(), 2u) << "a member of the failed round is turned back when it arrives";
  auto f = log("queue").last<requeue_atom, failure>();
  EXPECT_EQ(std::get<1>(*f).message, "pod group default/train: 1/3 members could be placed (minCount 3)");
  EXPECT_TRUE(std::get<1>(*f).gang_rejection);
  EXPECT_EQ(binds(), 0u);
  // Every member of round 1 reported: the queue has the coordinator forget the gang.
  forget_gang();
  EXPECT_EQ(gangs(), 0u);
  // The next round (any pop after that is a later round) starts afresh and waits for its quorum.
  send(wiring->permit, wait_atom::value, member("a", 3, 2));
  run();
  EXPECT_EQ(requeues(), 2u);
  EXPECT_EQ(gangs(), 1u);
}

TEST_F(permit_actor_test, a_forget_while_members_wait_keeps_them_and_their_gang) {
  send(wiring->permit, wait_atom::value, member("a", 2));
  run();
  forget_gang();  // cannot come from the queue while a waits; the coordinator does not strand it
  EXPECT_EQ(gangs(), 1u);
  send(wiring->permit, wait_atom::value, member("b", 2));
  run();
  EXPECT_EQ(binds(), 2u) << "a still counts toward the quorum";
}

TEST_F(permit_actor_test, once_the_quorum_was_reached_a_later_member_failing_does_not_undo_it) {
  send(wiring->permit, wait_atom::value, member("a", 2));
  send(wiring->permit, wait_atom::value, member("b", 2));
  run();
  ASSERT_EQ(binds(), 2u);
  member_failed(member("c", 2), /*in_binding=*/false);  // fails its Filter, in the same round
  EXPECT_EQ(requeues(), 0u);
  send(wiring->permit, wait_atom::value, member("d", 2));
  run();
  EXPECT_EQ(binds(), 3u) << "a later member of the admitted round goes on at once";
  EXPECT_EQ(requeues(), 0u);
}

TEST_F(permit_actor_test, a_member_whose_binding_failed_no_longer_holds_its_place) {
  auto a = member("a", 2);
  auto b = member("b", 2);
  send(wiring->permit, wait_atom::value, a);
  send(wiring->permit, wait_atom::value, b);
  run();
  ASSERT_EQ(binds(), 2u);
  member_failed(a, /*in_binding=*/true);
  member_failed(b, /*in_binding=*/true);
  // Round 2: a alone does not make the quorum (b, failed, is not counted as admitted).
  send(wiring->permit, wait_atom::value, member("a", 2, 2));
  run();
  EXPECT_EQ(binds(), 2u);
  send(wiring->permit, wait_atom::value, member("b", 2, 2));
  run();
  EXPECT_EQ(binds(), 4u);
}

TEST_F(permit_actor_test, a_gang_is_admitted_whole_when_its_last_member_arrives) {
  std::vector<cycle_ctx_ptr> members;
  for (int i = 0; i < 4; ++i) members.push_back(member("m" + std::to_string(i), 4));
  for (int i = 0; i < 3; ++i) send(wiring->permit, wait_atom::value, members[i]);
  run();
  EXPECT_EQ((log("binder-0").count<bind_atom, cycle_ctx_ptr>()), 0u) << "3 of minCount 4: all wait";
  send(wiring->permit, wait_atom::value, members[3]);
  run();
  EXPECT_EQ((log("binder-0").count<bind_atom, cycle_ctx_ptr>()), 4u) << "the fourth admits all four at once";
  auto turn = log("queue").last<gang_atom, std::string, uint64_t>();
  ASSERT_TRUE(turn) << "the queue hears that the gang's turn is over";
  EXPECT_EQ(std::get<1>(*turn), pod_group_key(*group));
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 0u);
}

TEST_F(permit_actor_test, a_gang_that_times_out_is_rejected_whole_with_one_message) {
  auto a = member("a", 3, 1, std::chrono::milliseconds(50));
  auto b = member("b", 3, 1, std::chrono::milliseconds(50));
  send(wiring->permit, wait_atom::value, a);
  send(wiring->permit, wait_atom::value, b);
  run();
  ASSERT_TRUE(tick());  // a's 50 ms timer
  run();
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 2u) << "both waiting members go back";
  EXPECT_EQ((log("cache").count<forget_atom, std::string>()), 2u) << "nothing stays reserved";
  EXPECT_EQ((log("binder-0").count<bind_atom, cycle_ctx_ptr>()), 0u);
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_EQ(std::get<1>(*f).message, "pod group default/train: 2/3 members could be placed (minCount 3)");
  EXPECT_TRUE(std::get<1>(*f).gang_rejection);
  EXPECT_EQ(std::get<1>(*f).unschedulable_plugins.count("GangScheduling"), 1u);
}

TEST_F(permit_actor_test, a_member_failing_elsewhere_rejects_the_waiting_ones_and_the_stragglers) {
  auto a = member("a", 3);
  auto b = member("b", 3);
  auto late = member("late", 3);
  send(wiring->permit, wait_atom::value, a);
  run();
  // b failed its Filter: the gang cannot be whole in this round.
  send(wiring->permit, gang_atom::value,
       gang_member_failed{b->queued->gang, b->assumed->uid, {"NodeResourcesFit"}, "0/1 nodes are available", false});
  run();
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_EQ(std::get<1>(*f).pod->pod->uid, a->assumed->uid);
  EXPECT_EQ(std::get<1>(*f).unschedulable_plugins.count("NodeResourcesFit"), 1u)
    << "the waiting member comes back on the failed member's events";
  // A member of the same round still on its way to Permit is turned back when it arrives.
  send(wiring->permit, wait_atom::value, late);
  run();
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 2u);
  EXPECT_EQ((log("binder-0").count<bind_atom, cycle_ctx_ptr>()), 0u);
  // The next round starts afresh.
  auto again = member("a", 3, 2);
  send(wiring->permit, wait_atom::value, again);
  run();
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 2u);
}

TEST_F(permit_actor_test, a_pod_allowed_by_every_waiting_plugin_goes_to_a_binder) {
  auto ctx = waiting("p", {"GangA", "GangB"});
  send(wiring->permit, wait_atom::value, ctx);
  ASSERT_TRUE((step<wait_atom, cycle_ctx_ptr>(wiring->permit)));
  send(wiring->permit, allow_atom::value, ctx->assumed->uid, std::string("GangA"));
  run();
  EXPECT_EQ((log("binder-0").count<bind_atom, cycle_ctx_ptr>()), 0u);  // GangB still waits
  send(wiring->permit, allow_atom::value, ctx->assumed->uid, std::string("GangB"));
  run();
  EXPECT_EQ((log("binder-0").count<bind_atom, cycle_ctx_ptr>()), 1u);
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 0u);
}

TEST_F(permit_actor_test, a_reject_unreserves_forgets_and_requeues_with_the_plugin) {
  auto ctx = waiting("p", {"GangA"});
  send(wiring->permit, wait_atom::value, ctx);
  run();
  send(wiring->permit, reject_atom::value, ctx->assumed->uid, std::string("GangA"), std::string("gang broke up"));
  run();
  EXPECT_EQ((log("binder-0").count<bind_atom, cycle_ctx_ptr>()), 0u);
  auto forget = log("cache").last<forget_atom, std::string>();
  ASSERT_TRUE(forget);
  EXPECT_EQ(std::get<1>(*forget), ctx->assumed->uid);
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_EQ(std::get<1>(*f).message, "gang broke up");
  EXPECT_EQ(std::get<1>(*f).unschedulable_plugins.count("GangA"), 1u);
}

TEST_F(permit_actor_test, the_timer_rejects_a_pod_still_waiting) {
  auto ctx = waiting("p", {"GangA"}, std::chrono::milliseconds(50));
  send(wiring->permit, wait_atom::value, ctx);
  run();
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 0u);
  ASSERT_TRUE(tick());  // the 50 ms timer
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_EQ(std::get<1>(*f).message, "rejected due to timeout after waiting at plugin(s) GangA");
  EXPECT_EQ((log("cache").count<forget_atom, std::string>()), 1u);
}

TEST_F(permit_actor_test, a_timer_after_the_pod_was_allowed_changes_nothing) {
  auto ctx = waiting("p", {"GangA"}, std::chrono::milliseconds(50));
  send(wiring->permit, wait_atom::value, ctx);
  run();
  send(wiring->permit, allow_atom::value, ctx->assumed->uid, std::string("GangA"));
  run();
  ASSERT_TRUE(tick());
  EXPECT_EQ((log("binder-0").count<bind_atom, cycle_ctx_ptr>()), 1u);
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 0u);
  EXPECT_EQ((log("cache").count<forget_atom, std::string>()), 0u);
}

TEST_F(permit_actor_test, allow_and_reject_for_unknown_pods_are_ignored) {
  send(wiring->permit, allow_atom::value, std::string("nobody"), std::string("GangA"));
  send(wiring->permit, reject_atom::value, std::string("nobody"), std::string("GangA"), std::string("x"));
  run();
  EXPECT_EQ(log("binder-0").messages.size() + log("queue").messages.size() + log("cache").messages.size(), 0u);
}

}  // namespace
}  // namespace kas::test

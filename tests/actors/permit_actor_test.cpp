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

  std::shared_ptr<pipeline> wiring;
};

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

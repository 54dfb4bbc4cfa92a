// The binder, stepped by hand on CAF's test coordinator: DefaultBinder's pods/binding goes to the
// cluster (a recorder that answers with the status a test chooses); a success is reported to the
// cache, the recorder and the queue, a failure forgotten, unreserved and requeued as an Error with
// kube's message, and a failed request fails the binding the same way.
#include <gtest/gtest.h>

#include "actors/binder.hpp"
#include "actors/embedded_client.hpp"
#include "tests/actors/actor_fixtures.hpp"
#include "tests/actors/deterministic_fixture.hpp"

namespace kas::test {
namespace {

class binder_actor_test : public deterministic_fixture {
protected:
  // A binder whose frameworks bind through the cluster recorder; `answer` decides each binding's
  // status by pod uid (fail_request: the request fails instead).
  void start(std::function<fw::status(const std::string& uid)> answer, bool fail_request = false) {
    auto cluster = recorder_handle("cluster", [answer, fail_request](const caf::message& m) {
      if (!m.match_elements<bind_atom, std::string, std::string>()) return caf::message{};
      if (fail_request) return caf::make_message(caf::make_error(caf::sec::runtime_error, "apiserver gone"));
      return caf::make_message(answer(m.get_as<std::string>(1)));
    });
    wiring = make_wiring();
    client = std::make_shared<embedded_client>(caf::actor_cast<cluster_actor>(cluster));
    fw::handle h;
    h.client = client;
    auto f = fw::framework::build(default_profile(), fw::in_tree_registry(), h, "profiles[0]");
    ASSERT_TRUE(f.ok()) << f.err().message;
    fwk = *f;
    binder = track(spawn_binder(sys, wiring));
    run();
  }

  cycle_ctx_ptr reserved(const std::string& name, const std::string& node) {
    auto ctx = std::make_shared<cycle_ctx>();
    ctx->fwk = fwk;
    auto q = std::make_shared<fw::queued_pod_info>();
    q->pod = make_pod(pod(name, "1", "1Gi"));
    q->attempts = 1;
    ctx->queued = q;
    ctx->assumed = with_node_name(*q->pod, node);
    ctx->node = node;
    ctx->started = std::chrono::steady_clock::now();
    // The scheduling cycle's part of the state the binding cycle reads (VolumeBinding's): PreFilter
    // on an empty snapshot (these pods have no claims), then Reserve.
    fw::pre_filter_result pf;
    fwk->run_pre_filter(ctx->state, *q->pod, snapshot{}, pf);
    EXPECT_TRUE(fwk->run_reserve(ctx->state, *ctx->assumed, node).is_success());
    return ctx;
  }

  // The uids of every message's vector<string> of `atom` the recorder `who` got, flattened.
  template <class Atom>
  std::vector<std::string> uids(const std::string& who) {
    std::vector<std::string> out;
    for (auto& [a, v] : log(who).all<Atom, std::vector<std::string>>()) out.insert(out.end(), v.begin(), v.end());
    return out;
  }

  std::shared_ptr<pipeline> wiring;
  std::shared_ptr<embedded_client> client;
  fw::framework_ptr fwk;
  binder_actor binder;
};

TEST_F(binder_actor_test, a_bound_pod_is_reported_to_the_cache_the_recorder_and_the_queue) {
  start([](const std::string&) { return fw::status::ok(); });
  auto a = reserved("a", "n1");
  send(binder, bind_atom::value, a);
  run();
  auto request = log("cluster").last<bind_atom, std::string, std::string>();
  ASSERT_TRUE(request);
  EXPECT_EQ(std::get<1>(*request), a->assumed->uid);
  EXPECT_EQ(std::get<2>(*request), "n1");
  EXPECT_EQ(uids<done_atom>("queue"), std::vector<std::string>{a->assumed->uid});
  EXPECT_EQ(uids<finished_atom>("cache"), std::vector<std::string>{a->assumed->uid});
  auto outcomes = log("recorder").all<record_atom, std::vector<pod_outcome>>();
  ASSERT_EQ(outcomes.size(), 1u);
  ASSERT_EQ(std::get<1>(outcomes.front()).size(), 1u);
  EXPECT_EQ(std::get<1>(outcomes.front())[0].message, "Successfully assigned default/a to n1");
  EXPECT_EQ((log("queue").count<requeue_atom, failure>()), 0u);
}

TEST_F(binder_actor_test, a_refused_binding_is_forgotten_and_requeued_as_an_error) {
  start([](const std::string&) { return fw::status::error("pods \"b\" is already assigned to node \"n9\""); });
  auto b = reserved("b", "n2");
  send(binder, bind_atom::value, b);
  run();
  EXPECT_TRUE(uids<done_atom>("queue").empty());
  auto forget = log("cache").last<forget_atom, std::string>();
  ASSERT_TRUE(forget);
  EXPECT_EQ(std::get<1>(*forget), b->assumed->uid);
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_EQ(std::get<1>(*f).pod->pod->name, "b");
  EXPECT_EQ(std::get<1>(*f).message, "Binding rejected: pods \"b\" is already assigned to node \"n9\"");
  EXPECT_EQ(std::get<1>(*f).result.get_code(), fw::code::error);
}

TEST_F(binder_actor_test, a_failed_cluster_request_fails_the_binding) {
  start([](const std::string&) { return fw::status::ok(); }, true);
  auto a = reserved("a", "n1");
  send(binder, bind_atom::value, a);
  run();
  EXPECT_TRUE(uids<done_atom>("queue").empty());
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_NE(std::get<1>(*f).message.find("Binding rejected: cluster request failed"), std::string::npos)
    << std::get<1>(*f).message;
  EXPECT_NE(std::get<1>(*f).message.find("apiserver gone"), std::string::npos) << std::get<1>(*f).message;
  EXPECT_EQ((log("cache").count<forget_atom, std::string>()), 1u);
}

}  // namespace
}  // namespace kas::test

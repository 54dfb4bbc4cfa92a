// The binder, stepped by hand on CAF's test coordinator: it takes several reserved pods per message,
// sends the bindings DefaultBinder asks for as one request to the cluster (a recorder that answers
// with the statuses a test chooses), and finishes every binding cycle from the one answer: the
// successes reported once per receiver, a failure forgotten, unreserved and requeued on its own.
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
  // status by pod name (an empty message: the cluster answers with an error instead).
  void start(std::function<fw::status(const std::string& uid)> answer, bool fail_request = false) {
    auto cluster = recorder_handle("cluster", [answer, fail_request](const caf::message& m) {
      if (!m.match_elements<bind_atom, std::vector<pod_binding>>()) return caf::message{};
      if (fail_request) return caf::make_message(caf::make_error(caf::sec::runtime_error, "apiserver gone"));
      std::vector<fw::status> out;
      for (auto& b : m.get_as<std::vector<pod_binding>>(1)) out.push_back(answer(b.uid));
      return caf::make_message(std::move(out));
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

TEST_F(binder_actor_test, several_pods_bind_through_one_cluster_request) {
  start([](const std::string&) { return fw::status::ok(); });
  auto a = reserved("a", "n1"), b = reserved("b", "n2"), c = reserved("c", "n1");
  send(binder, bind_atom::value, std::vector<cycle_ctx_ptr>{a, b, c});
  run();
  auto requests = log("cluster").all<bind_atom, std::vector<pod_binding>>();
  ASSERT_EQ(requests.size(), 1u) << "one request for the three bindings";
  auto& bindings = std::get<1>(requests.front());
  ASSERT_EQ(bindings.size(), 3u);
  EXPECT_EQ(bindings[0].uid, a->assumed->uid);
  EXPECT_EQ(bindings[1].node, "n2");
  // One answer finishes the three cycles, reported once per receiver.
  std::vector<std::string> all{a->assumed->uid, b->assumed->uid, c->assumed->uid};
  EXPECT_EQ(uids<done_atom>("queue"), all);
  EXPECT_EQ((log("queue").count<done_atom, std::vector<std::string>>()), 1u);
  EXPECT_EQ(uids<finished_atom>("cache"), all);
  auto outcomes = log("recorder").all<record_atom, std::vector<pod_outcome>>();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(std::get<1>(outcomes.front()).size(), 3u);
  EXPECT_EQ(std::get<1>(outcomes.front())[1].message, "Successfully assigned default/b to n2");
}

TEST_F(binder_actor_test, a_refused_binding_fails_only_its_own_pod) {
  std::string refused;
  start([&](const std::string& uid) {
    return uid == refused ? fw::status::error("pods \"b\" is already assigned to node \"n9\"") : fw::status::ok();
  });
  auto a = reserved("a", "n1"), b = reserved("b", "n2"), c = reserved("c", "n1");
  refused = b->assumed->uid;
  send(binder, bind_atom::value, std::vector<cycle_ctx_ptr>{a, b, c});
  run();
  EXPECT_EQ(uids<done_atom>("queue"), (std::vector<std::string>{a->assumed->uid, c->assumed->uid}));
  auto forget = log("cache").last<forget_atom, std::string>();
  ASSERT_TRUE(forget);
  EXPECT_EQ(std::get<1>(*forget), b->assumed->uid);
  auto f = log("queue").last<requeue_atom, failure>();
  ASSERT_TRUE(f);
  EXPECT_EQ(std::get<1>(*f).pod->pod->name, "b");
  EXPECT_EQ(std::get<1>(*f).message, "Binding rejected: pods \"b\" is already assigned to node \"n9\"");
  EXPECT_EQ(std::get<1>(*f).result.get_code(), fw::code::error);
}

TEST_F(binder_actor_test, a_failed_cluster_request_fails_every_binding_it_carried) {
  start([](const std::string&) { return fw::status::ok(); }, true);
  auto a = reserved("a", "n1"), b = reserved("b", "n2");
  send(binder, bind_atom::value, std::vector<cycle_ctx_ptr>{a, b});
  run();
  EXPECT_TRUE(uids<done_atom>("queue").empty());
  auto failures = log("queue").all<requeue_atom, failure>();
  ASSERT_EQ(failures.size(), 2u);
  for (auto& [atom, f] : failures) {
    EXPECT_NE(f.message.find("Binding rejected: cluster request failed"), std::string::npos) << f.message;
    EXPECT_NE(f.message.find("apiserver gone"), std::string::npos) << f.message;
  }
  EXPECT_EQ((log("cache").count<forget_atom, std::string>()), 2u);
}

}  // namespace
}  // namespace kas::test

// Supervision of the core actors: each one is killed in turn inside a running scheduler instance
// (an embedded cluster with a few nodes and pods, on CAF's test coordinator, so every message is
// stepped by hand and nothing sleeps), and the test checks what an operator sees: the supervisor's
// notice names the actor and the reason, /livez and /healthz fail naming it (over real HTTP), and a
// requested stop is not a death. The binary's side (exit code 3, the stderr line) is checked end to
// end by tests/integration/supervision_cli_test.sh.
#include <gtest/gtest.h>

#include "actors/embedded_cluster.hpp"
#include "actors/scheduler.hpp"
#include "actors/supervisor.hpp"
#include "observability/http_server.hpp"
#include "tests/actors/actor_fixtures.hpp"
#include "tests/actors/deterministic_fixture.hpp"
#include "tests/observability/http_client.hpp"

namespace kas::test {
namespace {

using died = std::tuple<died_atom, std::string, std::string>;

// --- supervision_state, without actors -----------------------------------------------------------

TEST(supervision_state, a_termination_before_stop_is_a_failure_and_after_it_is_not) {
  struct row {
    const char* name;
    bool stop_first;
    bool want_failure;
  };
  for (auto r : {row{"unrequested termination", false, true}, row{"requested stop", true, false}}) {
    SCOPED_TRACE(r.name);
    supervision_state st;
    st.watch("binder-0");
    if (r.stop_first) st.begin_stop();
    EXPECT_EQ(st.on_terminated("binder-0", "exit_reason(kill)"), r.want_failure);
    EXPECT_EQ(st.first_failure().has_value(), r.want_failure);
    auto checks = st.checks();
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_EQ(checks[0].name, "ping");
    EXPECT_EQ(checks[1].name, "actor/binder-0");
    EXPECT_EQ(checks[1].ok, !r.want_failure);
  }
}

TEST(supervision_state, the_first_failure_is_the_cause) {
  supervision_state st;
  st.watch("snapshot_cache");
  st.watch("cycle_driver-0");
  st.on_terminated("snapshot_cache", "exit_reason(kill)");
  st.on_terminated("cycle_driver-0", "system_error(request_receiver_down)");
  ASSERT_TRUE(st.first_failure());
  EXPECT_EQ(st.first_failure()->actor, "snapshot_cache");
  EXPECT_EQ(st.failures().size(), 2u);
}

// --- the health endpoints over HTTP --------------------------------------------------------------

struct served_health {
  explicit served_health(std::shared_ptr<supervision_state> st) {
    obs::http_server_config cfg;
    cfg.bind_address = "127.0.0.1:0";
    cfg.live = [st] { return st->checks(); };
    auto s = obs::http_server::start(std::move(cfg));
    if (!s) throw std::runtime_error(s.err().message);
    server = std::move(*s);
  }
  obs::testing::http_reply get(const std::string& path) {
    return obs::testing::http_request("http://127.0.0.1:" + std::to_string(server->port()) + path);
  }
  std::unique_ptr<obs::http_server> server;
};

TEST(health_endpoints, kube_healthz_style_for_passing_and_failing_checks) {
  auto st = std::make_shared<supervision_state>();
  st->watch("cycle_driver-0");
  st->watch("binder-0");
  served_health h(st);
  struct row {
    const char* path;
    long code;
    std::string body;
  };
  for (auto r : {row{"/livez", 200, "ok"}, row{"/healthz", 200, "ok"},
                 row{"/livez?verbose", 200, "[+]ping ok\n[+]actor/cycle_driver-0 ok\n[+]actor/binder-0 ok\nlivez check passed\n"}}) {
    SCOPED_TRACE(r.path);
    auto rep = h.get(r.path);
    EXPECT_EQ(rep.code, r.code);
    EXPECT_EQ(rep.body, r.body);
  }
  st->on_terminated("cycle_driver-0", "exit_reason(kill)");
  for (auto r : {row{"/livez", 500, "[+]ping ok\n[-]actor/cycle_driver-0 failed: exit_reason(kill)\n[+]actor/binder-0 ok\nlivez check failed\n"},
                 row{"/healthz", 500, "[+]ping ok\n[-]actor/cycle_driver-0 failed: exit_reason(kill)\n[+]actor/binder-0 ok\nhealthz check failed\n"}}) {
    SCOPED_TRACE(r.path);
    auto rep = h.get(r.path);
    EXPECT_EQ(rep.code, r.code);
    EXPECT_EQ(rep.body, r.body);
  }
}

// --- killing each core actor of a running instance -----------------------------------------------

class supervision_test : public deterministic_fixture, public ::testing::WithParamInterface<const char*> {
protected:
  // A scheduler on an embedded cluster with three nodes and four pending pods, scheduled to the end;
  // the "operator" recorder subscribed to the supervisor.
  void start() {
    cluster_options copts;
    copts.node_agents = 1;
    copts.metrics = &registry;
    cluster = track(spawn_embedded_cluster(sys, copts));
    for (auto& n : {"n1", "n2", "n3"}) send(cluster, create_atom::value, make_node(node(n)));
    for (auto& p : {"a", "b", "c", "d"}) send(cluster, create_atom::value, make_pod(pod(p, "500m", "256Mi")));
    scheduler_options opts;
    opts.profiles.push_back(default_profile());
    opts.runtime.workers = 2;
    opts.runtime.binders = 2;
    opts.metrics = &registry;
    auto r = start_scheduler(sys, opts, cluster);
    ASSERT_TRUE(r.ok()) << r.err().message;
    inst = std::make_unique<scheduler_instance>(*r);
    supervise(inst->supervisor, cluster, "embedded_cluster");  // as the app does
    send_as("operator", inst->supervisor, watch_atom::value);
    run();
  }

  void TearDown() override {
    if (inst) stop_scheduler(*inst);
    run();
  }

  caf::actor find(const std::string& name) {
    if (name == "embedded_cluster") return caf::actor_cast<caf::actor>(cluster);
    for (auto& [n, a] : core_actors(*inst))
      if (n == name) return a;
    ADD_FAILURE() << "no core actor named " << name;
    return {};
  }

  cluster_actor cluster;
  std::unique_ptr<scheduler_instance> inst;
};

TEST_F(supervision_test, a_healthy_run_and_a_requested_stop_report_nothing) {
  start();
  auto stats = ask<queue_stats>(inst->wiring->queue, stats_atom::value);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->popped, 4u) << "the instance scheduled every pod";
  stop_scheduler(*inst);
  caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
  run();
  inst.reset();
  EXPECT_EQ((log("operator").count<died_atom, std::string, std::string>()), 0u);
}

TEST_P(supervision_test, killing_a_core_actor_is_reported_and_fails_livez) {
  const std::string victim = GetParam();
  start();
  ASSERT_FALSE(HasFatalFailure());
  auto health = inst->health;
  for (auto& c : health->checks()) EXPECT_TRUE(c.ok) << c.name << " before the kill";
  caf::anon_send_exit(find(victim), caf::exit_reason::kill);
  run();

  // The owner's notice (what makes simulate and bench stop waiting and exit 3).
  auto notices = log("operator").all<died_atom, std::string, std::string>();
  ASSERT_EQ(notices.size(), 1u) << "one notice, for the first death";
  EXPECT_EQ(std::get<1>(notices[0]), victim);
  EXPECT_EQ(std::get<2>(notices[0]), "exit_reason(kill)");
  ASSERT_TRUE(health->first_failure());
  EXPECT_EQ(health->first_failure()->actor, victim) << "peers that die of it come after the cause";

  // /livez, as an operator's probe sees it.
  served_health h(health);
  auto rep = h.get("/livez");
  EXPECT_EQ(rep.code, 500);
  EXPECT_NE(rep.body.find("[-]actor/" + victim + " failed: exit_reason(kill)\n"), std::string::npos) << rep.body;
  EXPECT_NE(rep.body.find("livez check failed"), std::string::npos) << rep.body;

  // A late subscriber hears about it at once.
  send_as("late", inst->supervisor, watch_atom::value);
  run();
  auto late = log("late").last<died_atom, std::string, std::string>();
  ASSERT_TRUE(late);
  EXPECT_EQ(std::get<1>(*late), victim);
}

INSTANTIATE_TEST_SUITE_P(each_core_actor, supervision_test,
                         ::testing::Values("snapshot_cache", "scheduling_queue", "filter_score_worker-0",
                                           "filter_score_worker-1", "permit_coordinator", "binder-0", "binder-1",
                                           "event_recorder", "cycle_driver-0", "embedded_cluster"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (auto& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

TEST_F(supervision_test, an_error_reason_is_reported_as_given) {
  start();
  ASSERT_FALSE(HasFatalFailure());
  self->send_exit(find("binder-1"), caf::make_error(caf::sec::runtime_error, "disk on fire"));
  run();
  auto notice = log("operator").last<died_atom, std::string, std::string>();
  ASSERT_TRUE(notice);
  EXPECT_EQ(std::get<1>(*notice), "binder-1");
  EXPECT_NE(std::get<2>(*notice).find("disk on fire"), std::string::npos) << std::get<2>(*notice);
}

TEST_F(supervision_test, await_reply_returns_the_death_instead_of_waiting_forever) {
  start();
  ASSERT_FALSE(HasFatalFailure());
  auto p = make_pod(pod("stuck", "500m", "256Mi"));
  caf::anon_send_exit(find("cycle_driver-0"), caf::exit_reason::kill);
  send(cluster, create_atom::value, p);  // a pod nobody will schedule: quiescence never comes
  run();
  self->send(inst->supervisor, watch_atom::value);
  run();
  bool replied = false;
  auto d = await_reply(self, inst->wiring->queue, [&](queue_stats&) { replied = true; }, [&](caf::error&) {},
                       done_atom::value);
  ASSERT_TRUE(d) << "the died notice ends the wait";
  EXPECT_FALSE(replied);
  EXPECT_EQ(d->actor, "cycle_driver-0");
}

}  // namespace
}  // namespace kas::test

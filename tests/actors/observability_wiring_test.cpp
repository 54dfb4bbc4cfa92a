// Observability wired into the pipeline: after a run over an embedded cluster, the registry the
// scheduler wrote holds kube-scheduler's series with the values kube would show, every actor's probe
// counted messages, and the cluster holds correlated Events and the PodScheduled condition. Each run
// gets its own registry, so runs never add up. Nothing sleeps: every wait is a reply with a timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>

#include <caf/all.hpp>

#include "actors/embedded_cluster.hpp"
#include "actors/event_correlator.hpp"
#include "actors/scheduler.hpp"
#include "config/profile.hpp"
#include "observability/metrics.hpp"
#include "tests/actors/actor_fixtures.hpp"
#include "tests/observability/recording_guard.hpp"

namespace kas::test {
namespace {

constexpr auto reply_timeout = std::chrono::seconds(20);

struct test_system_config : caf::actor_system_config {
  test_system_config() {
    set("scheduler.max-threads", static_cast<size_t>(2));
    set("logger.verbosity", caf::atom("quiet"));
  }
};

// The value of one series in the text exposition ("name{labels} value"), or -1 when absent.
double series_value(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, series.size() + 1, series + " ") == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

class wiring_env {
public:
  explicit wiring_env(obs::metrics_registry& reg) : reg_(reg), sys_(cfg_), self_(sys_) {
    cluster_options copts;
    copts.node_agents = 2;
    copts.metrics = &reg_;
    cluster_ = spawn_embedded_cluster(sys_, copts);
  }
  ~wiring_env() {
    if (inst_) stop_scheduler(*inst_);
    caf::anon_send_exit(cluster_, caf::exit_reason::user_shutdown);
  }
  cluster_actor& cluster() { return cluster_; }
  scheduler_instance& inst() { return *inst_; }

  bool start() {
    scheduler_options opts;
    opts.profiles.push_back(default_profile());
    opts.runtime.binders = 2;
    opts.skip_idle_backoff = true;
    opts.metrics = &reg_;
    auto r = start_scheduler(sys_, opts, cluster_);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.err().message);
    if (!r.ok()) return false;
    inst_ = std::make_unique<scheduler_instance>(*r);
    return true;
  }
  bool wait_quiescent() {
    bool ok = false;
    self_->request(inst_->wiring->queue, reply_timeout, done_atom::value)
      .receive([&](const queue_stats&) { ok = true; },
               [&](const caf::error& e) { ADD_FAILURE() << "queue never quiescent: " << sys_.render(e); });
    return ok;
  }
  // A request round trip to each actor that records, so every message sent before it was handled.
  void settle() {
    self_->request(inst_->wiring->recorder, reply_timeout, outcomes_atom::value)
      .receive([](const std::vector<pod_outcome>&) {}, [](const caf::error&) {});
    self_->request(inst_->wiring->cache, reply_timeout, snap_atom::value)
      .receive([](const snapshot_ptr&) {}, [](const caf::error&) {});
    self_->request(inst_->wiring->queue, reply_timeout, stats_atom::value)
      .receive([](const queue_stats&) {}, [](const caf::error&) {});
  }
  std::vector<pod_info_ptr> pods() {
    std::vector<pod_info_ptr> out;
    self_->request(cluster_, reply_timeout, list_atom::value)
      .receive([&](const std::vector<pod_info_ptr>& v) { out = v; },
               [&](const caf::error& e) { ADD_FAILURE() << sys_.render(e); });
    return out;
  }
  std::vector<cluster_event_record> events() {
    std::vector<cluster_event_record> out;
    self_->request(cluster_, reply_timeout, list_atom::value, cluster_event_record{})
      .receive([&](const std::vector<cluster_event_record>& v) { out = v; },
               [&](const caf::error& e) { ADD_FAILURE() << sys_.render(e); });
    return out;
  }

private:
  obs::metrics_registry& reg_;
  test_system_config cfg_;
  caf::actor_system sys_;
  caf::scoped_actor self_;
  cluster_actor cluster_;
  std::unique_ptr<scheduler_instance> inst_;
};

TEST(ObservabilityWiring, PipelineRunRecordsKubeAndActorMetrics) {
  obs::metrics_registry reg;  // outlives the actor system below
  wiring_env env(reg);
  for (auto& n : {"n1", "n2", "n3"}) caf::anon_send(env.cluster(), create_atom::value, make_node(node(n, "2", "4Gi")));
  for (auto& p : {"a", "b", "c"}) caf::anon_send(env.cluster(), create_atom::value, make_pod(pod(p, "1", "1Gi")));
  caf::anon_send(env.cluster(), create_atom::value, make_pod(pod("huge", "16", "1Gi")));
  ASSERT_TRUE(env.start());
  ASSERT_TRUE(env.wait_quiescent());
  env.settle();

  size_t bound = 0;
  for (auto& p : env.pods()) {
    const pod_condition* c = p->condition("PodScheduled");
    ASSERT_NE(c, nullptr) << p->name;
    if (!p->node_name.empty()) {
      ++bound;
      EXPECT_EQ(c->status, "True") << p->name;
    } else {
      EXPECT_EQ(p->name, "huge");
      EXPECT_EQ(c->status, "False");
      EXPECT_EQ(c->reason, "Unschedulable");
      EXPECT_NE(c->message.find("Insufficient cpu"), std::string::npos) << c->message;
    }
  }
  ASSERT_EQ(bound, 3u);

  auto text = reg.render_text();
  auto v = [&](const std::string& s) { return series_value(text, s); };
  EXPECT_EQ(v("scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default-scheduler\"}"), 3) << text;
  EXPECT_GE(v("scheduler_schedule_attempts_total{result=\"unschedulable\",profile=\"default-scheduler\"}"), 1);
  EXPECT_EQ(v("scheduler_scheduling_attempt_duration_seconds_count{result=\"scheduled\",profile=\"default-scheduler\"}"), 3);
  EXPECT_EQ(v("scheduler_pod_scheduling_attempts_count"), 3);
  EXPECT_EQ(v("scheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"1\"}"), 3);
  EXPECT_EQ(v("scheduler_pending_pods{queue=\"active\"}"), 0);
  EXPECT_EQ(v("scheduler_pending_pods{queue=\"backoff\"}"), 0);
  EXPECT_EQ(v("scheduler_pending_pods{queue=\"unschedulable\"}"), 1);
  EXPECT_EQ(v("scheduler_pending_pods{queue=\"gated\"}"), 0);
  EXPECT_EQ(v("scheduler_queue_incoming_pods_total{queue=\"active\",event=\"PodAdd\"}"), 4);
  EXPECT_GE(v("scheduler_queue_incoming_pods_total{queue=\"unschedulable\",event=\"ScheduleAttemptFailure\"}"), 1);
  EXPECT_EQ(v("scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",profile=\"default-scheduler\"}"), 1);
  EXPECT_EQ(v("scheduler_scheduler_cache_size{type=\"nodes\"}"), 3);
  EXPECT_EQ(v("scheduler_scheduler_cache_size{type=\"pods\"}"), 3);
  EXPECT_GE(v("scheduler_scheduler_cache_size{type=\"assumed_pods\"}"), 0);
  for (auto* actor : {"scheduling_queue", "snapshot_cache", "event_recorder", "embedded_cluster"})
    EXPECT_GT(v(std::string("actor_messages_processed_total{actor=\"") + actor + "\"}"), 0) << actor;
  EXPECT_GT(v("actor_messages_processed_total{actor=\"binder-0\"}") +
              v("actor_messages_processed_total{actor=\"binder-1\"}"), 0);
  EXPECT_GE(v("actor_mailbox_depth{actor=\"scheduling_queue\"}"), 0);
  EXPECT_EQ(v("actor_pool_workers{pool=\"binder\"}"), 2);
  EXPECT_EQ(v("actor_pool_workers{pool=\"node_agent\"}"), 2);
  EXPECT_GE(v("actor_pool_workers{pool=\"filter_score_worker\"}"), 1);
  EXPECT_TRUE(env.inst().wiring->synced->load());

  size_t scheduled = 0, failed = 0;
  for (auto& ev : env.events()) {
    if (ev.reason == "Scheduled") {
      ++scheduled;
      EXPECT_EQ(ev.type, "Normal");
      EXPECT_EQ(ev.message, "Successfully assigned default/" + ev.pod_key.substr(8) + " to " + ev.node);
    }
    if (ev.reason == "FailedScheduling") {
      ++failed;
      EXPECT_EQ(ev.pod_key, "default/huge");
    }
  }
  EXPECT_EQ(scheduled, 3u);
  EXPECT_EQ(failed, 1u);  // however often it failed, one Event (count grows)
}

TEST(PluginDurationSink, ResolvesKubesLabelsOnceAndCountsEveryReport) {
  obs::metrics_registry reg;
  obs::kube_metrics km(reg);
  plugin_duration_sink sink(km);
  static constexpr std::string_view fit = "NodeResourcesFit", ports = "NodePorts";
  sink.observe(fw::metric_point::filter, fit, fw::code::success, std::chrono::microseconds(3));
  sink.observe(fw::metric_point::filter, fit, fw::code::success, std::chrono::microseconds(5));
  sink.observe(fw::metric_point::filter, fit, fw::code::unschedulable, std::chrono::microseconds(1));
  sink.observe(fw::metric_point::score_normalize, ports, fw::code::success, std::chrono::microseconds(2));
  // One sampled per-node call standing for 16.
  sink.observe(fw::metric_point::score, ports, fw::code::success, std::chrono::microseconds(1), 16);
  // Another view of the same text (a different pointer) still lands in the same series.
  std::string copy(fit);
  sink.observe(fw::metric_point::filter, copy, fw::code::success, std::chrono::microseconds(1));
  auto text = reg.render_text();
  auto v = [&](const std::string& s) { return series_value(text, s); };
  const std::string fam = "scheduler_plugin_execution_duration_seconds_count";
  EXPECT_EQ(v(fam + "{plugin=\"NodeResourcesFit\",extension_point=\"Filter\",status=\"Success\"}"), 3) << text;
  EXPECT_EQ(v(fam + "{plugin=\"NodeResourcesFit\",extension_point=\"Filter\",status=\"Unschedulable\"}"), 1);
  EXPECT_EQ(v(fam + "{plugin=\"NodePorts\",extension_point=\"ScoreExtensionNormalize\",status=\"Success\"}"), 1);
  EXPECT_EQ(v(fam + "{plugin=\"NodePorts\",extension_point=\"Score\",status=\"Success\"}"), 16);
  EXPECT_NEAR(v("scheduler_plugin_execution_duration_seconds_sum{plugin=\"NodeResourcesFit\",extension_point=\"Filter\","
                "status=\"Success\"}"), 9e-6, 1e-9);
}

// recordMetrics: false (obs::set_recording(false) before the actors start): the same run schedules the
// same pods, and no series of any actor moves, pool sizes and cache sizes included.
TEST(ObservabilityWiring, RecordingOffSchedulesAndLeavesEverySeriesAtZero) {
  obs::metrics_registry reg;
  test::recording_guard off(false);  // declared after reg, so the actors stop before it is restored
  {
    wiring_env env(reg);
    for (auto& n : {"n1", "n2"}) caf::anon_send(env.cluster(), create_atom::value, make_node(node(n, "2", "4Gi")));
    for (auto& p : {"a", "b"}) caf::anon_send(env.cluster(), create_atom::value, make_pod(pod(p, "1", "1Gi")));
    caf::anon_send(env.cluster(), create_atom::value, make_pod(pod("huge", "16", "1Gi")));
    ASSERT_TRUE(env.start());
    ASSERT_TRUE(env.wait_quiescent());
    env.settle();
    size_t bound = 0;
    for (auto& p : env.pods()) bound += p->node_name.empty() ? 0 : 1;
    EXPECT_EQ(bound, 2u);
    EXPECT_TRUE(env.inst().wiring->synced->load());  // readiness is not a metric
  }
  auto text = reg.render_text();
  size_t samples = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    ++samples;
    EXPECT_EQ(line.substr(line.rfind(' ') + 1), "0") << line;
  }
  // The series exist (declared at spawn), so dashboards see them; they just never moved.
  EXPECT_GT(samples, 0u);
  EXPECT_NE(text.find("actor_messages_processed_total{actor=\"scheduling_queue\"} 0\n"), std::string::npos) << text;
}

TEST(ObservabilityWiring, IdenticalFailedSchedulingEventsBecomeOneEventWithCount) {
  obs::metrics_registry reg;
  wiring_env env(reg);
  cluster_event_record ev;
  ev.type = "Warning";
  ev.reason = "FailedScheduling";
  ev.pod_uid = "u1";
  ev.pod_key = "default/p";
  ev.message = "0/3 nodes are available: 3 Insufficient cpu.";
  caf::anon_send(env.cluster(), record_atom::value, ev);
  caf::anon_send(env.cluster(), record_atom::value, ev);
  auto other = ev;
  other.pod_uid = "u2";
  other.pod_key = "default/q";
  caf::anon_send(env.cluster(), record_atom::value, other);
  auto evs = env.events();
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].pod_key, "default/p");
  EXPECT_EQ(evs[0].count, 2);
  EXPECT_GE(evs[0].last_timestamp, evs[0].first_timestamp);
  EXPECT_EQ(evs[1].count, 1);
}

// client-go's EventCorrelator rules, table-driven over one object's stream of messages.
TEST(EventCorrelator, AggregatesDedupesAndFiltersSpam) {
  struct row {
    const char* name;
    std::vector<std::string> messages;
    size_t want_events;
    std::string want_last_message;
    int32_t want_last_count;
  };
  std::vector<std::string> ten_distinct, thirty_same(30, "same");
  for (int i = 0; i < 10; ++i) ten_distinct.push_back("m" + std::to_string(i));
  std::vector<row> rows = {
    {"identical messages dedupe", {"x", "x", "x"}, 1, "x", 3},
    {"distinct messages are distinct events", {"x", "y"}, 2, "y", 1},
    {"the 10th distinct message is combined", ten_distinct, 10, "(combined from similar events): m9", 1},
    // 25 writes pass the spam filter's burst; the stored count stops at 25.
    {"spam filter caps writes per object", thirty_same, 1, "same", 25},
  };
  for (auto& r : rows) {
    event_correlator c;
    std::vector<cluster_event_record> store;
    auto now = event_correlator::clock::now();
    for (auto& m : r.messages) {
      cluster_event_record ev;
      ev.type = "Warning";
      ev.reason = "FailedScheduling";
      ev.pod_uid = "u";
      ev.pod_key = "default/p";
      ev.message = m;
      auto v = c.correlate(ev, now, store.size());
      if (v.what == event_correlator::verdict::create) store.push_back(v.event);
      if (v.what == event_correlator::verdict::update) store[v.index] = v.event;
    }
    ASSERT_EQ(store.size(), r.want_events) << r.name;
    auto& last = r.want_events == 1 ? store.front() : store.back();
    EXPECT_EQ(last.message, r.want_last_message) << r.name;
    EXPECT_EQ(last.count, r.want_last_count) << r.name;
  }
}

}  // namespace
}  // namespace kas::test

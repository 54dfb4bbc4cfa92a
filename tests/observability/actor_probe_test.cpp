#include "observability/actor_probe.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "tests/observability/recording_guard.hpp"

namespace kas::obs {
namespace {

histogram& seconds_of(metrics_registry& r, const std::string& actor) {
  return r.add_family({"actor_message_processing_seconds",
                       "Time the actor spent inside a message handler; timed messages may be sampled 1-in-N and "
                       "weighted by N.",
                       metric_kind::histogram, {"actor"}, actor_processing_buckets()})
      .histogram_series({actor});
}

TEST(ActorProbe, CountsEveryMessageAndRecordsDepthAndTime) {
  metrics_registry r;
  actor_probe p(r, "cycle_driver", 1);
  for (size_t depth : {3, 7, 2}) auto t = p.begin(depth);
  std::string text = r.render_text();
  EXPECT_NE(text.find("actor_messages_processed_total{actor=\"cycle_driver\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("actor_mailbox_depth{actor=\"cycle_driver\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("actor_message_processing_seconds_count{actor=\"cycle_driver\"} 3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("actor_message_processing_seconds_bucket{actor=\"cycle_driver\",le=\"1e-06\"}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("actor_message_processing_seconds_bucket{actor=\"cycle_driver\",le=\"2.5\"}"), std::string::npos)
      << text;
}

struct sampling_case {
  const char* name;
  uint32_t every;
  int messages;
  uint64_t want_count;  // histogram _count: timed messages times their weight
};

TEST(ActorProbe, SampledTimingIsWeightedSoCountTracksMessages) {
  const sampling_case cases[] = {
      {"default is 1 in 16", actor_probe::default_timing_sample_every, 40, 32},
      {"every message", 1, 10, 10},
      {"0 means every message", 0, 10, 10},
      {"1 in 4, whole periods", 4, 12, 12},
      {"1 in 4, a partial period is not yet timed", 4, 14, 12},
      {"fewer messages than N", 8, 7, 0},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    metrics_registry r;
    actor_probe p(r, "filter_score_worker-0", c.every);
    for (int i = 0; i < c.messages; ++i) auto t = p.begin(0);
    EXPECT_EQ(seconds_of(r, "filter_score_worker-0").count(), c.want_count);
    EXPECT_NE(r.render_text().find("actor_messages_processed_total{actor=\"filter_score_worker-0\"} " +
                                   std::to_string(c.messages) + "\n"),
              std::string::npos);
  }
}

TEST(ActorProbe, RecordTakesAMeasuredDuration) {
  metrics_registry r;
  actor_probe p(r, "binder", 1);
  p.record(4, std::chrono::milliseconds(3));
  histogram& h = seconds_of(r, "binder");
  EXPECT_EQ(h.count(), 1u);
  EXPECT_NEAR(h.sum(), 0.003, 1e-12);
}

// The value of one series line ("name{labels} value") in the exposition, or -1 when absent.
double series_value(const metrics_registry& r, const std::string& series) {
  std::istringstream in(r.render_text());
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, series.size() + 1, series + " ") == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

// Stands in for a CAF actor pointer: begin_handler needs only self->mailbox().size().
struct fake_self {
  struct mailbox_t {
    size_t depth = 0;
    int reads = 0;
    size_t size() { return ++reads, depth; }
  } box;
  mailbox_t& mailbox() { return box; }
};

TEST(ActorProbe, RecordingOffLeavesEverySeriesAndTheMailboxAlone) {
  metrics_registry r;
  actor_probe p(r, "binder-0", 1);
  fake_self self;
  self.box.depth = 9;
  {
    test::recording_guard off(false);
    for (size_t depth : {3, 7}) auto t = p.begin(depth);
    { auto t = p.begin_handler(&self); }
    p.record(4, std::chrono::milliseconds(3));
    EXPECT_EQ(self.box.reads, 0) << "the mailbox size is read only while recording";
    EXPECT_EQ(series_value(r, "actor_messages_processed_total{actor=\"binder-0\"}"), 0);
    EXPECT_EQ(series_value(r, "actor_mailbox_depth{actor=\"binder-0\"}"), 0);
    EXPECT_EQ(seconds_of(r, "binder-0").count(), 0u);
  }
  test::recording_guard on(true);
  { auto t = p.begin_handler(&self); }
  EXPECT_EQ(self.box.reads, 1);
  EXPECT_EQ(series_value(r, "actor_messages_processed_total{actor=\"binder-0\"}"), 1);
  EXPECT_EQ(series_value(r, "actor_mailbox_depth{actor=\"binder-0\"}"), 9);
  EXPECT_EQ(seconds_of(r, "binder-0").count(), 1u);
  p.record(4, std::chrono::milliseconds(3));
  EXPECT_EQ(seconds_of(r, "binder-0").count(), 2u);
}

// Messages handled while recording is off do not advance the 1-in-N countdown, so sampling resumes
// where it stopped and the timed messages still stand for N recorded ones each.
TEST(ActorProbe, SamplingCountdownStandsStillWhileOff) {
  metrics_registry r;
  actor_probe p(r, "cycle_driver-0", 4);
  for (int i = 0; i < 3; ++i) auto t = p.begin(0);
  {
    test::recording_guard off(false);
    for (int i = 0; i < 10; ++i) auto t = p.begin(0);
  }
  EXPECT_EQ(seconds_of(r, "cycle_driver-0").count(), 0u);
  { auto t = p.begin(0); }  // the 4th recorded message: timed, weight 4
  EXPECT_EQ(seconds_of(r, "cycle_driver-0").count(), 4u);
  EXPECT_EQ(series_value(r, "actor_messages_processed_total{actor=\"cycle_driver-0\"}"), 4);
}

// A handler during which recording goes off records nothing at its end (its depth was already set).
TEST(ActorProbe, ScopeEndingWhileOffCountsNothing) {
  metrics_registry r;
  actor_probe p(r, "scheduling_queue", 1);
  test::recording_guard restore(true);
  {
    auto t = p.begin(2);
    set_recording(false);
  }
  EXPECT_EQ(series_value(r, "actor_messages_processed_total{actor=\"scheduling_queue\"}"), 0);
  EXPECT_EQ(seconds_of(r, "scheduling_queue").count(), 0u);
  EXPECT_EQ(series_value(r, "actor_mailbox_depth{actor=\"scheduling_queue\"}"), 2);
}

TEST(ActorProbe, PoolWorkersGauge) {
  metrics_registry r;
  pool_workers_gauge(r, "filter_score_worker").set(4);
  EXPECT_EQ(&pool_workers_gauge(r, "filter_score_worker"), &pool_workers_gauge(r, "filter_score_worker"));
  EXPECT_NE(r.render_text().find("actor_pool_workers{pool=\"filter_score_worker\"} 4\n"), std::string::npos);
}

}  // namespace
}  // namespace kas::obs

#include "observability/actor_probe.hpp"

#include <gtest/gtest.h>

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

TEST(ActorProbe, PoolWorkersGauge) {
  metrics_registry r;
  pool_workers_gauge(r, "filter_score_worker").set(4);
  EXPECT_EQ(&pool_workers_gauge(r, "filter_score_worker"), &pool_workers_gauge(r, "filter_score_worker"));
  EXPECT_NE(r.render_text().find("actor_pool_workers{pool=\"filter_score_worker\"} 4\n"), std::string::npos);
}

}  // namespace
}  // namespace kas::obs

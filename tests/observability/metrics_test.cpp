#include "observability/metrics.hpp"

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "tests/observability/recording_guard.hpp"

namespace kas::obs {
namespace {

struct bucket_case {
  const char* name;
  std::vector<double> observations;
  std::vector<uint64_t> want_buckets;  // per bucket, +Inf last, for bounds {1, 2, 5}
  double want_sum;
};

TEST(Histogram, BucketsCountAndSum) {
  const double inf = std::numeric_limits<double>::infinity();
  const bucket_case cases[] = {
      {"empty", {}, {0, 0, 0, 0}, 0},
      {"on a bound counts in that bucket (le)", {1, 2, 5}, {1, 1, 1, 0}, 8},
      {"just above a bound goes to the next", {1.0000001, 2.5}, {0, 1, 1, 0}, 3.5000001},
      {"below the first bound", {-3, 0, 0.5}, {3, 0, 0, 0}, -2.5},
      {"above every bound goes to +Inf", {5.5, 1e9}, {0, 0, 0, 2}, 1e9 + 5.5},
      {"+Inf lands in +Inf", {inf}, {0, 0, 0, 1}, inf},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    histogram h({1, 2, 5});
    for (double v : c.observations) h.observe(v);
    EXPECT_EQ(h.bucket_counts(), c.want_buckets);
    EXPECT_EQ(h.count(), c.observations.size());
    EXPECT_DOUBLE_EQ(h.sum(), c.want_sum);
  }
}

TEST(Histogram, WeightedObservationStandsForSeveral) {
  histogram h({1, 2});
  h.observe(1.5, 8);
  EXPECT_EQ(h.bucket_counts(), (std::vector<uint64_t>{0, 8, 0}));
  EXPECT_EQ(h.count(), 8u);
  EXPECT_DOUBLE_EQ(h.sum(), 12.0);
}

TEST(Histogram, TrailingInfBoundIsImplicit) {
  histogram h({1, std::numeric_limits<double>::infinity()});
  EXPECT_EQ(h.bounds(), std::vector<double>{1});
  EXPECT_EQ(h.bucket_counts().size(), 2u);
}

TEST(Histogram, ConcurrentWritersLoseNothing) {
  histogram h({0.5});
  counter c;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 100000; ++i) {
        h.observe(1.0);
        c.inc();
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(h.count(), 400000u);
  EXPECT_DOUBLE_EQ(h.sum(), 400000.0);
  EXPECT_EQ(c.value(), 400000u);
}

TEST(Histogram, BadBoundsAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(histogram({2, 1}), "strictly increasing");
  EXPECT_DEATH(histogram({1, 1}), "strictly increasing");
  EXPECT_DEATH(histogram({std::nan("")}), "finite");
}

TEST(CounterGauge, Semantics) {
  counter c;
  c.inc();
  c.inc(41);
  EXPECT_EQ(c.value(), 42u);
  gauge g;
  g.set(3);
  g.add(-1.5);
  EXPECT_DOUBLE_EQ(g.value(), 1.5);
}

TEST(RecordingSwitch, OnByDefault) { EXPECT_TRUE(recording()); }

// Every write of every series kind: with recording off it leaves the series at zero; switched back
// on, the same write moves it.
TEST(RecordingSwitch, OffFreezesEverySeriesAndOnResumes) {
  struct series {
    counter c;
    gauge g;
    histogram h{{1, 2}};
  };
  struct switch_case {
    const char* name;
    std::function<void(series&)> write;
    std::function<double(const series&)> read;
    double want_when_on;
  };
  const switch_case cases[] = {
      {"counter inc", [](series& s) { s.c.inc(3); }, [](const series& s) { return double(s.c.value()); }, 3},
      {"counter inc_single_writer", [](series& s) { s.c.inc_single_writer(2); },
       [](const series& s) { return double(s.c.value()); }, 2},
      {"gauge set", [](series& s) { s.g.set(7); }, [](const series& s) { return s.g.value(); }, 7},
      {"gauge add", [](series& s) { s.g.add(-2.5); }, [](const series& s) { return s.g.value(); }, -2.5},
      {"histogram observe: count", [](series& s) { s.h.observe(1.5); },
       [](const series& s) { return double(s.h.count()); }, 1},
      {"histogram weighted observe: sum", [](series& s) { s.h.observe(1.5, 4); },
       [](const series& s) { return s.h.sum(); }, 6},
      {"histogram observe_duration: +Inf bucket", [](series& s) { s.h.observe_duration(std::chrono::seconds(3)); },
       [](const series& s) { return double(s.h.bucket_counts().back()); }, 1},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    series s;
    {
      test::recording_guard off(false);
      EXPECT_FALSE(recording());
      c.write(s);
      EXPECT_EQ(c.read(s), 0);
    }
    test::recording_guard on(true);
    c.write(s);
    EXPECT_EQ(c.read(s), c.want_when_on);
  }
}

TEST(RecordingSwitch, ExpositionStillRendersFrozenSeries) {
  metrics_registry r;
  counter& c = r.add_family({"frozen_total", "help", metric_kind::counter, {"a"}, {}}).counter_series({"x"});
  test::recording_guard off(false);
  c.inc(5);
  EXPECT_NE(r.render_text().find("frozen_total{a=\"x\"} 0\n"), std::string::npos) << r.render_text();
}

TEST(ExponentialBuckets, MatchesGoClient) {
  EXPECT_EQ(exponential_buckets(0.001, 2, 4), (std::vector<double>{0.001, 0.002, 0.004, 0.008}));
  // Repeated multiplication, as prometheus.ExponentialBuckets does, not start * pow(factor, i).
  auto b = exponential_buckets(0.00001, 1.5, 20);
  double x = 0.00001;
  for (int i = 0; i < 19; ++i) x *= 1.5;
  EXPECT_EQ(b.back(), x);
}

TEST(Registry, SeriesAreStableAndSharedByLabels) {
  metrics_registry r;
  family& f = r.add_family({"test_total", "help", metric_kind::counter, {"a", "b"}, {}});
  counter& x = r.counter_series(f, {"1", "2"});
  counter& y = f.counter_series({"1", "2"});
  for (int i = 0; i < 100; ++i) f.counter_series({"k", std::to_string(i)});  // no reference invalidation
  EXPECT_EQ(&x, &y);
  EXPECT_NE(&x, &f.counter_series({"2", "1"}));
}

TEST(Registry, RedeclaringIdenticalFamilyReturnsIt) {
  metrics_registry r;
  family_spec spec{"test_seconds", "help", metric_kind::histogram, {"a"}, {0.1, 1}};
  EXPECT_EQ(&r.add_family(spec), &r.add_family(spec));
}

struct misuse_case {
  const char* name;
  std::function<void(metrics_registry&)> f;
  const char* message;
};

TEST(Registry, MisuseAbortsNamingTheFamily) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const misuse_case cases[] = {
      {"conflicting redeclaration",
       [](metrics_registry& r) {
         r.add_family({"x_total", "h", metric_kind::counter, {}, {}});
         r.add_family({"x_total", "h", metric_kind::gauge, {}, {}});
       },
       "x_total: declared twice"},
      {"label count", [](metrics_registry& r) { r.add_family({"y_total", "h", metric_kind::counter, {"a"}, {}}).counter_series({}); },
       "y_total: 1 label values expected, got 0"},
      {"kind", [](metrics_registry& r) { r.add_family({"z", "h", metric_kind::gauge, {}, {}}).counter_series({}); },
       "z: is a gauge"},
      {"metric name", [](metrics_registry& r) { r.add_family({"1bad", "h", metric_kind::gauge, {}, {}}); },
       "invalid metric name"},
      {"label name", [](metrics_registry& r) { r.add_family({"w", "h", metric_kind::gauge, {"a-b"}, {}}); },
       "invalid label name"},
      {"le on a histogram", [](metrics_registry& r) { r.add_family({"v", "h", metric_kind::histogram, {"le"}, {1}}); },
       "invalid label name"},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_DEATH(
        {
          metrics_registry r;
          c.f(r);
        },
        c.message);
  }
}

TEST(Registry, CollectRendersCumulativeBucketsAndOmitsEmptyFamilies) {
  metrics_registry r;
  r.add_family({"unused_total", "never used", metric_kind::counter, {"a"}, {}});
  family& f = r.add_family({"lat_seconds", "latency", metric_kind::histogram, {"op"}, {0.5, 1}});
  histogram& h = f.histogram_series({"read"});
  h.observe(0.2);
  h.observe(0.7);
  h.observe(3);
  auto fams = r.Collect();
  ASSERT_EQ(fams.size(), 1u);
  ASSERT_EQ(fams[0].metric.size(), 1u);
  auto& m = fams[0].metric[0].histogram;
  ASSERT_EQ(m.bucket.size(), 3u);
  EXPECT_EQ(m.bucket[0].cumulative_count, 1u);
  EXPECT_EQ(m.bucket[1].cumulative_count, 2u);
  EXPECT_EQ(m.bucket[2].cumulative_count, 3u);
  EXPECT_TRUE(std::isinf(m.bucket[2].upper_bound));
  EXPECT_EQ(m.sample_count, 3u);
  EXPECT_DOUBLE_EQ(m.sample_sum, 3.9);

  std::string text = r.render_text();
  EXPECT_NE(text.find("# TYPE lat_seconds histogram"), std::string::npos) << text;
  EXPECT_NE(text.find("lat_seconds_bucket{op=\"read\",le=\"0.5\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("lat_seconds_bucket{op=\"read\",le=\"+Inf\"} 3"), std::string::npos) << text;
  EXPECT_NE(text.find("lat_seconds_count{op=\"read\"} 3"), std::string::npos) << text;
  EXPECT_EQ(text.find("unused_total"), std::string::npos) << text;
}

TEST(Registry, UnlabelledFamilyIsExposedAtZero) {
  metrics_registry r;
  r.add_family({"idle_total", "h", metric_kind::counter, {}, {}});
  EXPECT_NE(r.render_text().find("idle_total 0"), std::string::npos) << r.render_text();
}

TEST(Registry, DefaultRegistryIsOnePerProcess) { EXPECT_EQ(&default_registry(), &default_registry()); }

}  // namespace
}  // namespace kas::obs

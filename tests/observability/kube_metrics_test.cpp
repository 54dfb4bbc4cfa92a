#include "observability/kube_metrics.hpp"

#include <random>

#include <gtest/gtest.h>

#include "kube_fixture.hpp"
#include "recording_guard.hpp"

namespace kas::obs {
namespace {

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::string exposition() {
  metrics_registry r;
  testing::populate(r);
  return r.render_text();
}

// name, first series' labels (before le), first and last finite bound as kube-scheduler exposes them, count.
struct histogram_case {
  const char* name;
  const char* labels;
  const char* first_le;
  const char* last_le;
  size_t buckets;
};

TEST(KubeMetrics, HistogramBucketLayoutsMatchKubeScheduler) {
  const histogram_case cases[] = {
      {"scheduler_scheduling_attempt_duration_seconds", "result=\"scheduled\",profile=\"default-scheduler\",",
       "0.001", "16.384", 15},
      {"scheduler_scheduling_algorithm_duration_seconds", "", "0.001", "16.384", 15},
      {"scheduler_pod_scheduling_sli_duration_seconds", "attempts=\"1\",", "0.01", "5242.88", 20},
      {"scheduler_pod_scheduling_attempts", "", "1", "16", 5},
      {"scheduler_framework_extension_point_duration_seconds",
       "extension_point=\"Filter\",status=\"Success\",profile=\"default-scheduler\",", "0.0001", "0.2048", 12},
      {"scheduler_plugin_execution_duration_seconds",
       "plugin=\"NodeResourcesFit\",extension_point=\"Filter\",status=\"Success\",", "1e-05", "0.0221683", 20},
      {"scheduler_permit_wait_duration_seconds", "result=\"Success\",", "0.001", "16.384", 15},
      {"scheduler_preemption_victims", "", "1", "64", 7},
  };
  const std::string text = exposition();
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string prefix = std::string(c.name) + "_bucket{" + c.labels + "le=\"";
    EXPECT_TRUE(contains(text, "# TYPE " + std::string(c.name) + " histogram\n"));
    EXPECT_TRUE(contains(text, prefix + c.first_le + "\"}")) << prefix + c.first_le << "\n" << text;
    EXPECT_TRUE(contains(text, prefix + c.last_le)) << prefix + c.last_le << "\n" << text;
    EXPECT_TRUE(contains(text, prefix + "+Inf\"}")) << text;
    size_t n = 0;
    for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) ++n;
    EXPECT_EQ(n, c.buckets + 1) << "finite buckets plus +Inf";
  }
}

struct series_case {
  const char* name;
  const char* type;
  const char* help_start;  // after "# HELP <name> "
  const char* sample;      // one exact sample line
};

TEST(KubeMetrics, NamesHelpTypesAndLabelsMatchKubeScheduler) {
  const series_case cases[] = {
      {"scheduler_schedule_attempts_total", "counter", "[STABLE] Number of attempts to schedule pods, by the result.",
       "scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default-scheduler\"} 3"},
      {"scheduler_scheduling_attempt_duration_seconds", "histogram",
       "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
       "scheduler_scheduling_attempt_duration_seconds_count{result=\"scheduled\",profile=\"default-scheduler\"} 1"},
      {"scheduler_scheduling_algorithm_duration_seconds", "histogram", "[ALPHA] Scheduling algorithm latency in seconds",
       "scheduler_scheduling_algorithm_duration_seconds_count 1"},
      {"scheduler_pending_pods", "gauge", "[STABLE] Number of pending pods, by the queue type.",
       "scheduler_pending_pods{queue=\"gated\"} 0"},
      {"scheduler_queue_incoming_pods_total", "counter",
       "[STABLE] Number of pods added to scheduling queues by event and queue type.",
       "scheduler_queue_incoming_pods_total{queue=\"active\",event=\"PodAdd\"} 9"},
      {"scheduler_pod_scheduling_sli_duration_seconds", "histogram",
       "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
       "involve multiple scheduling attempts.",
       "scheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"1\"} 1"},
      {"scheduler_pod_scheduling_attempts", "histogram", "[STABLE] Number of attempts to successfully schedule a pod.",
       "scheduler_pod_scheduling_attempts_sum 1"},
      {"scheduler_framework_extension_point_duration_seconds", "histogram",
       "[STABLE] Latency for running all plugins of a specific extension point.",
       "scheduler_framework_extension_point_duration_seconds_count{extension_point=\"Filter\",status=\"Success\","
       "profile=\"default-scheduler\"} 1"},
      {"scheduler_plugin_execution_duration_seconds", "histogram",
       "[ALPHA] Duration for running a plugin at a specific extension point.",
       "scheduler_plugin_execution_duration_seconds_count{plugin=\"NodeResourcesFit\",extension_point=\"Filter\","
       "status=\"Success\"} 1"},
      {"scheduler_unschedulable_pods", "gauge", "[ALPHA] The number of unschedulable pods broken down by plugin name.",
       "scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",profile=\"default-scheduler\"} 1"},
      {"scheduler_permit_wait_duration_seconds", "histogram", "[ALPHA] Duration of waiting on permit.",
       "scheduler_permit_wait_duration_seconds_count{result=\"Success\"} 1"},
      {"scheduler_preemption_attempts_total", "counter", "[STABLE] Total preemption attempts in the cluster till now",
       "scheduler_preemption_attempts_total 1"},
      {"scheduler_preemption_victims", "histogram", "[STABLE] Number of selected preemption victims",
       "scheduler_preemption_victims_sum 2"},
      {"scheduler_scheduler_cache_size", "gauge",
       "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
       "scheduler_scheduler_cache_size{type=\"assumed_pods\"} 3"},
  };
  const std::string text = exposition();
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(contains(text, "# HELP " + std::string(c.name) + " " + c.help_start)) << text;
    EXPECT_TRUE(contains(text, "# TYPE " + std::string(c.name) + " " + c.type + "\n")) << text;
    EXPECT_TRUE(contains(text, std::string(c.sample) + "\n")) << text;
  }
}

TEST(KubeMetrics, TwoInstancesOnOneRegistryShareSeries) {
  metrics_registry r;
  kube_metrics a(r);
  kube_metrics b(r);
  EXPECT_EQ(&a.preemption_attempts, &b.preemption_attempts);
  EXPECT_EQ(&a.schedule_attempts, &b.schedule_attempts);
}

TEST(KubeMetrics, PluginMetricsSampledAtKubesTenPercent) {
  EXPECT_EQ(plugin_metrics_sample_percent, 10);
  std::mt19937_64 rng(42);
  int sampled = 0;
  const int cycles = 100000;
  for (int i = 0; i < cycles; ++i) sampled += sample_plugin_metrics(rng) ? 1 : 0;
  EXPECT_GT(sampled, cycles * 9 / 100);
  EXPECT_LT(sampled, cycles * 11 / 100);
}

TEST(KubeMetrics, NoCycleIsSampledWhileRecordingIsOff) {
  test::recording_guard off(false);
  std::mt19937_64 rng(42);
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(sample_plugin_metrics(rng));
}

}  // namespace
}  // namespace kas::obs

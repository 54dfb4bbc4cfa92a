#pragma once
// A registry holding every kube-scheduler family with at least one non-zero series, plus actor metrics,
// as a scheduler would after a few cycles. Shared by the exposition, promtool and Prometheus tests.
#include "observability/actor_probe.hpp"
#include "observability/kube_metrics.hpp"

namespace kas::obs::testing {

inline void populate(metrics_registry& r) {
  namespace kl = kube_label;
  kube_metrics km(r);
  const std::string profile = "default-scheduler";
  km.schedule_attempts.counter_series({kl::scheduled, profile}).inc(3);
  km.schedule_attempts.counter_series({kl::unschedulable, profile}).inc(1);
  km.scheduling_attempt_duration.histogram_series({kl::scheduled, profile}).observe(0.0015);
  km.scheduling_algorithm_duration.observe(0.0007);
  km.pending_pods.gauge_series({kl::queue_active}).set(5);
  km.pending_pods.gauge_series({kl::queue_backoff}).set(1);
  km.pending_pods.gauge_series({kl::queue_unschedulable}).set(2);
  km.pending_pods.gauge_series({kl::queue_gated}).set(0);
  km.queue_incoming_pods.counter_series({kl::queue_active, "PodAdd"}).inc(9);
  km.pod_scheduling_sli_duration.histogram_series({"1"}).observe(0.02);
  km.pod_scheduling_attempts.observe(1);
  km.framework_extension_point_duration.histogram_series({"Filter", kl::status_success, profile}).observe(0.00012);
  km.plugin_execution_duration.histogram_series({"NodeResourcesFit", "Filter", kl::status_success}).observe(0.00002);
  km.unschedulable_pods.gauge_series({"NodeResourcesFit", profile}).set(1);
  km.permit_wait_duration.histogram_series({kl::status_success}).observe(0.003);
  km.preemption_attempts.inc();
  km.preemption_victims.observe(2);
  km.cache_size.gauge_series({kl::cache_nodes}).set(100);
  km.cache_size.gauge_series({kl::cache_pods}).set(40);
  km.cache_size.gauge_series({kl::cache_assumed_pods}).set(3);

  pool_workers_gauge(r, "filter_score_worker").set(2);
  for (const char* actor : {"cycle_driver", "filter_score_worker-0"}) {
    actor_probe p(r, actor, 1);
    for (size_t i = 0; i < 4; ++i) auto t = p.begin(i);
  }
}

}  // namespace kas::obs::testing

#pragma once
// kube-scheduler's metric families, with kube's exact names, HELP texts (including the "[STABLE]" /
// "[ALPHA]" / "[BETA]" prefix k8s.io/component-base adds), label names and bucket layouts, taken from
// kubernetes/kubernetes pkg/scheduler/metrics/metrics.go. Dashboards built for kube-scheduler read them
// unchanged. The label values kube uses are listed below so callers cannot drift from them.
#include <random>

#include "observability/metrics.hpp"

namespace kas::obs {

// kube-scheduler records plugin-level metrics (plugin_execution_duration_seconds) for only this share of
// scheduling cycles: schedule_one.go draws rand.Intn(100) < pluginMetricsSamplePercent once per cycle
// and stores the verdict in the CycleState, so every plugin of a sampled cycle is timed.
inline constexpr int plugin_metrics_sample_percent = 10;

// The per-cycle draw, kube's rule. Call once per scheduling cycle and keep the answer in cycle_state.
// With recording off (recordMetrics: false) no cycle is sampled, so nothing reads the clock for it.
template <class Rng>
bool sample_plugin_metrics(Rng& rng) {
  if (!recording()) return false;
  return std::uniform_int_distribution<int>(0, 99)(rng) < plugin_metrics_sample_percent;
}

// Label values kube-scheduler writes.
namespace kube_label {
// scheduler_schedule_attempts_total / scheduling_attempt_duration_seconds {result}
inline constexpr const char* scheduled = "scheduled";
inline constexpr const char* unschedulable = "unschedulable";
inline constexpr const char* error = "error";
// scheduler_pending_pods / queue_incoming_pods_total {queue}
inline constexpr const char* queue_active = "active";
inline constexpr const char* queue_backoff = "backoff";
inline constexpr const char* queue_unschedulable = "unschedulable";
inline constexpr const char* queue_gated = "gated";
// scheduler_scheduler_cache_size {type}
inline constexpr const char* cache_nodes = "nodes";
inline constexpr const char* cache_pods = "pods";
inline constexpr const char* cache_assumed_pods = "assumed_pods";
// {status} and permit_wait_duration_seconds {result}: framework.Code.String()
inline constexpr const char* status_success = "Success";
inline constexpr const char* status_error = "Error";
inline constexpr const char* status_unschedulable = "Unschedulable";
inline constexpr const char* status_unschedulable_and_unresolvable = "UnschedulableAndUnresolvable";
inline constexpr const char* status_wait = "Wait";
inline constexpr const char* status_skip = "Skip";
inline constexpr const char* status_pending = "Pending";
}  // namespace kube_label

// Every family kube-scheduler exposes that this scheduler produces. Constructing it declares the
// families in `r` (idempotent: a second kube_metrics on the same registry shares the series).
// Labelled families are handed out as family&: resolve series once at setup, e.g.
//   counter& ok = km.schedule_attempts.counter_series({"scheduled", "default-scheduler"});
struct kube_metrics {
  explicit kube_metrics(metrics_registry& r);

  family& schedule_attempts;                   // scheduler_schedule_attempts_total{result,profile}
  family& scheduling_attempt_duration;         // scheduler_scheduling_attempt_duration_seconds{result,profile}
  histogram& scheduling_algorithm_duration;    // scheduler_scheduling_algorithm_duration_seconds
  family& pending_pods;                        // scheduler_pending_pods{queue}
  family& queue_incoming_pods;                 // scheduler_queue_incoming_pods_total{queue,event}
  family& pod_scheduling_sli_duration;         // scheduler_pod_scheduling_sli_duration_seconds{attempts}
  histogram& pod_scheduling_attempts;          // scheduler_pod_scheduling_attempts
  // scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}
  family& framework_extension_point_duration;
  // scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}; record it only in cycles
  // where sample_plugin_metrics() said yes.
  family& plugin_execution_duration;
  family& unschedulable_pods;                  // scheduler_unschedulable_pods{plugin,profile}
  family& permit_wait_duration;                // scheduler_permit_wait_duration_seconds{result}
  counter& preemption_attempts;                // scheduler_preemption_attempts_total
  histogram& preemption_victims;               // scheduler_preemption_victims
  family& cache_size;                          // scheduler_scheduler_cache_size{type} (sic: kube's name)
};

}  // namespace kas::obs

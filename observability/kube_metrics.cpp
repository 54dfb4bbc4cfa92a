#include "observability/kube_metrics.hpp"

namespace kas::obs {

namespace {

// k8s.io/component-base prefixes every HELP text with the metric's stability level.
std::string stable(const char* help) { return std::string("[STABLE] ") + help; }
std::string beta(const char* help) { return std::string("[BETA] ") + help; }
std::string alpha(const char* help) { return std::string("[ALPHA] ") + help; }

family& counter_family(metrics_registry& r, const char* name, std::string help, std::vector<std::string> labels) {
  return r.add_family({name, std::move(help), metric_kind::counter, std::move(labels), {}});
}

family& gauge_family(metrics_registry& r, const char* name, std::string help, std::vector<std::string> labels) {
  return r.add_family({name, std::move(help), metric_kind::gauge, std::move(labels), {}});
}

family& histogram_family(metrics_registry& r, const char* name, std::string help, std::vector<std::string> labels,
                         std::vector<double> buckets) {
  return r.add_family({name, std::move(help), metric_kind::histogram, std::move(labels), std::move(buckets)});
}

}  // namespace

kube_metrics::kube_metrics(metrics_registry& r)
    : schedule_attempts(counter_family(
          r, "scheduler_schedule_attempts_total",
          stable("Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
                 "scheduled, while 'error' means an internal scheduler problem."),
          {"result", "profile"})),
      scheduling_attempt_duration(histogram_family(
          r, "scheduler_scheduling_attempt_duration_seconds",
          stable("Scheduling attempt latency in seconds (scheduling algorithm + binding)"), {"result", "profile"},
          exponential_buckets(0.001, 2, 15))),
      scheduling_algorithm_duration(
          histogram_family(r, "scheduler_scheduling_algorithm_duration_seconds",
                           alpha("Scheduling algorithm latency in seconds"), {}, exponential_buckets(0.001, 2, 15))
              .histogram_series({})),
      pending_pods(gauge_family(
          r, "scheduler_pending_pods",
          stable("Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' "
                 "means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that "
                 "the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that "
                 "the scheduler never attempted to schedule because they are gated."),
          {"queue"})),
      queue_incoming_pods(counter_family(
          r, "scheduler_queue_incoming_pods_total",
          stable("Number of pods added to scheduling queues by event and queue type."), {"queue", "event"})),
      pod_scheduling_sli_duration(histogram_family(
          r, "scheduler_pod_scheduling_sli_duration_seconds",
          beta("E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
               "involve multiple scheduling attempts."),
          {"attempts"}, exponential_buckets(0.01, 2, 20))),
      pod_scheduling_attempts(
          histogram_family(r, "scheduler_pod_scheduling_attempts",
                           stable("Number of attempts to successfully schedule a pod."), {}, exponential_buckets(1, 2, 5))
              .histogram_series({})),
      framework_extension_point_duration(histogram_family(
          r, "scheduler_framework_extension_point_duration_seconds",
          stable("Latency for running all plugins of a specific extension point."),
          {"extension_point", "status", "profile"}, exponential_buckets(0.0001, 2, 12))),
      plugin_execution_duration(histogram_family(
          r, "scheduler_plugin_execution_duration_seconds",
          alpha("Duration for running a plugin at a specific extension point."),
          {"plugin", "extension_point", "status"}, exponential_buckets(0.00001, 1.5, 20))),
      unschedulable_pods(gauge_family(
          r, "scheduler_unschedulable_pods",
          alpha("The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all "
                "plugins that caused it to not schedule and so this metric have meaning only when broken down by "
                "plugin."),
          {"plugin", "profile"})),
      permit_wait_duration(histogram_family(r, "scheduler_permit_wait_duration_seconds",
                                            alpha("Duration of waiting on permit."), {"result"},
                                            exponential_buckets(0.001, 2, 15))),
      preemption_attempts(counter_family(r, "scheduler_preemption_attempts_total",
                                         stable("Total preemption attempts in the cluster till now"), {})
                              .counter_series({})),
      preemption_victims(histogram_family(r, "scheduler_preemption_victims",
                                          stable("Number of selected preemption victims"), {},
                                          exponential_buckets(1, 2, 7))
                             .histogram_series({})),
      // kube declares Subsystem "scheduler" + Name "scheduler_cache_size", so the series kube exposes (and
      // dashboards query) is scheduler_scheduler_cache_size.
      cache_size(gauge_family(r, "scheduler_scheduler_cache_size",
                              alpha("Number of nodes, pods, and assumed (bound) pods in the scheduler cache."),
                              {"type"})) {}

}  // namespace kas::obs

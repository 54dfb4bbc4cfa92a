#pragma once
// scheduler_metrics: the series one scheduler instance writes, resolved once at setup so the actors'
// hot paths do no label lookup (see observability/metrics.hpp's ownership rule).
//
// Where each kube-scheduler metric is recorded, with kube's semantics (pkg/scheduler):
//   schedule_attempts_total / scheduling_attempt_duration_seconds {result,profile}
//     scheduled      binder, after Bind succeeded (kube's bindingCycle end: metrics.PodScheduled);
//                    duration from cycle_ctx::started (the pod's pop) to then, binding included.
//     unschedulable  report_failure, for a rejected status (kube's handleSchedulingFailure);
//     error          report_failure, for an Error status (a failed binding is an error, as in kube).
//   pod_scheduling_sli_duration_seconds{attempts}, pod_scheduling_attempts
//                    binder, after Bind, from queued_pod_info::initial_attempt_ns (first pop).
//   pending_pods{queue}, queue_incoming_pods_total{queue,event}, unschedulable_pods{plugin,profile}
//                    scheduling_queue.
//   permit_wait_duration_seconds{result}  permit_coordinator.
//   scheduler_cache_size{type}            snapshot_cache.
//   The cycle driver (actors/cycle_driver.cpp) records the rest, through pipeline::metrics:
//     scheduling_algorithm_duration_seconds, framework_extension_point_duration_seconds,
//     plugin_execution_duration_seconds (sampled per cycle with obs::sample_plugin_metrics),
//     preemption_attempts_total and preemption_victims.
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "observability/actor_probe.hpp"
#include "observability/kube_metrics.hpp"
#include "plugins/framework/plugin_metrics.hpp"

namespace kas {

enum class attempt_result : uint8_t { scheduled = 0, unschedulable = 1, error = 2 };

class scheduler_series {
public:
  // `profiles`: every profile's schedulerName (kube's profile label).
  scheduler_series(obs::metrics_registry& r, obs::kube_metrics& km, const std::vector<std::string>& profiles);
  scheduler_series(const scheduler_series&) = delete;
  scheduler_series& operator=(const scheduler_series&) = delete;

  // One scheduling attempt ended. `took` < 0 counts the attempt without observing its duration
  // (a caller that does not know when the attempt started).
  void attempt(std::string_view profile, attempt_result r, std::chrono::steady_clock::duration took) const;
  // A pod was bound: scheduler_pod_scheduling_attempts and the SLI histogram (attempts label "1".."15+").
  void pod_scheduled(int attempts, std::chrono::steady_clock::duration since_first_attempt) const;

  obs::histogram& permit_wait(bool allowed) const { return allowed ? permit_success_ : permit_unschedulable_; }
  obs::gauge& pending(size_t queue) const { return *pending_[queue]; }  // index: active, backoff, unschedulable, gated
  obs::gauge& cache_nodes() const { return cache_nodes_; }
  obs::gauge& cache_pods() const { return cache_pods_; }
  obs::gauge& cache_assumed() const { return cache_assumed_; }

  obs::kube_metrics& kube() const { return km_; }

private:
  struct profile_series {
    std::string profile;
    std::array<obs::counter*, 3> attempts;
    std::array<obs::histogram*, 3> durations;
  };
  const profile_series& for_profile(std::string_view profile) const;

  obs::kube_metrics& km_;
  std::vector<profile_series> profiles_;
  profile_series other_;  // a pod whose schedulerName matches no profile (cannot happen past the queue)
  mutable std::array<std::atomic<obs::histogram*>, 16> sli_{};  // resolved on first use (idempotent)
  obs::histogram& permit_success_;
  obs::histogram& permit_unschedulable_;
  std::array<obs::gauge*, 4> pending_;
  obs::gauge& cache_nodes_;
  obs::gauge& cache_pods_;
  obs::gauge& cache_assumed_;
};

// scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}: the framework reports each
// plugin call of a sampled cycle here, from any worker or binder thread. Series are resolved on first
// use and cached in atomics indexed by (extension point, plugin, code), so a report after the first is
// a pointer scan, two loads and the histogram's own atomics: no lock, no allocation.
class plugin_duration_sink final : public fw::plugin_metrics_sink {
public:
  static constexpr size_t max_plugins = 64;
  explicit plugin_duration_sink(obs::kube_metrics& km) : km_(km) {}
  void observe(fw::metric_point point, std::string_view plugin, fw::code result,
               std::chrono::steady_clock::duration took, uint32_t weight = 1) const override;

private:
  // Plugin names are the plugins' own string literals (name() returns the same view every call), so a
  // plugin's id is found by pointer; a new pointer takes the next free slot.
  size_t plugin_id(std::string_view plugin) const;
  static constexpr size_t codes = 7;
  obs::kube_metrics& km_;
  mutable std::array<std::atomic<const char*>, max_plugins> names_{};
  mutable std::array<std::atomic<size_t>, max_plugins> sizes_{};
  mutable std::atomic<size_t> used_{0};
  mutable std::mutex grow_;
  mutable std::array<std::atomic<obs::histogram*>, fw::metric_point_count * max_plugins * codes> series_{};
};

}  // namespace kas

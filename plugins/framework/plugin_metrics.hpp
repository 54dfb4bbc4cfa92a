#pragma once
// Per-plugin execution timing (kube's scheduler_plugin_execution_duration_seconds). kube times every
// plugin call of a cycle only when that cycle was sampled (schedule_one.go draws once per cycle and
// keeps the verdict in CycleState.ShouldRecordPluginMetrics); the framework runners below do the
// same with cycle_state::record_plugin_metrics, and hand each duration to the sink. The sink lives
// outside the framework (actors/ resolves it to Prometheus series), so plugins stay metrics-free.
#include <chrono>
#include <cstdint>
#include <string_view>

#include "plugins/framework/status.hpp"

namespace kas::fw {

// kube's extension_point label values (pkg/scheduler/metrics: PreFilter, Filter, ...).
enum class metric_point : uint8_t {
  pre_enqueue,
  pre_filter,
  pre_filter_add_pod,
  pre_filter_remove_pod,
  filter,
  post_filter,
  pre_score,
  score,
  score_normalize,
  reserve,
  unreserve,
  permit,
  pre_bind_pre_flight,
  pre_bind,
  bind,
  post_bind,
  count_,
};
inline constexpr size_t metric_point_count = static_cast<size_t>(metric_point::count_);

std::string_view to_string(metric_point p);

class plugin_metrics_sink {
public:
  virtual ~plugin_metrics_sink() = default;
  // Called from any thread (workers, binders) concurrently; must be thread-safe.
  virtual void observe(metric_point point, std::string_view plugin, code result,
                       std::chrono::steady_clock::duration took) const = 0;
};

}  // namespace kas::fw

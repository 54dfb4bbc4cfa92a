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

// Filter and Score run once per node: a sampled cycle on 5000 nodes makes thousands of calls of a
// few nanoseconds each, and timing every one (two clock reads and a histogram update, ~50 ns) cost
// about a third of all scheduling time in `bench`. Within a sampled cycle, Filter calls are
// therefore timed 1 in this many, chosen at random per call, and observed with this weight, so the
// histogram's count and sum stay unbiased estimates of kube's. Score, which runs one plugin over all
// feasible nodes at once (score_plugin::score_nodes), times that pass and observes its mean per
// node with weight n (exact count and sum). Every other point is timed per call.
inline constexpr uint32_t per_node_timing_every = 16;

class plugin_metrics_sink {
public:
  virtual ~plugin_metrics_sink() = default;
  // Called from any thread (workers, binders) concurrently; must be thread-safe.
  // `weight`: how many calls this one observation stands for (see per_node_timing_every).
  virtual void observe(metric_point point, std::string_view plugin, code result,
                       std::chrono::steady_clock::duration took, uint32_t weight = 1) const = 0;
};

}  // namespace kas::fw

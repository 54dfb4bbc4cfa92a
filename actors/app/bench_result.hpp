#pragma once
// What one `bench` run measured: the value the table, JSON and HTML report writers all print.
// Plain data, filled by the bench runner (bench.cpp) and only read afterwards.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kas {

// Percentile summary of a sample set (nearest-rank, as scheduler_perf computes it).
struct percentiles {
  double avg = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
  size_t samples = 0;
};

// Nearest-rank percentiles of `v` (sorted in place); all zero when empty.
percentiles summarize(std::vector<double>& v);

struct bench_result {
  std::string workload;             // workload name ("SchedulingBasic")
  std::string workload_file;        // path it came from ("" = built-in default)
  double threshold = 0;             // scheduler_perf's SchedulingThroughput threshold, pods/s (0 = none)

  // Sizes.
  size_t nodes = 0;
  size_t init_pods = 0;
  size_t measured_pods = 0;

  // Outcomes of the measured pods.
  size_t scheduled = 0;       // bound
  size_t unschedulable = 0;   // still pending at the end, with a reason
  bool stalled = false;       // a wait for bindings gave up (--stall-timeout): the run is a failure
  size_t bound_at_stall = 0;  // pods of the stalled wait bound when it gave up (more may bind later)
  size_t preempted = 0;       // victims evicted during the run (any pod)
  uint64_t attempts = 0;      // scheduling attempts (cycles), all pods
  uint64_t conflicts = 0;     // optimistic-validation rejections (retried without backoff)
  size_t events_scheduled = 0;          // Scheduled events recorded
  size_t events_failed_scheduling = 0;  // FailedScheduling events recorded

  // Throughput of the measured phase: pods bound per window (scheduler_perf's throughputCollector).
  double window_seconds = 1.0;
  std::vector<double> throughput_windows;  // pods/s of each window, in time order
  percentiles throughput;                  // over throughput_windows
  double measured_seconds = 0;             // first measured pod created -> last one bound
  double overall_pods_per_second = 0;      // measured_pods / measured_seconds

  // End-to-end latency of the measured pods: creation -> bound, milliseconds.
  std::vector<double> latencies_ms;  // sorted ascending
  percentiles latency_ms;

  // Gangs (createPods ops with podGroup) among the measured pods; all zero without them.
  size_t gangs = 0;              // measured gangs
  size_t gangs_bound = 0;        // of which at least minCount members bound
  size_t gangs_pending = 0;      // of which no member bound
  // Competing sets (podGroup competingSet): gangs made to compete for capacity that fits one of them.
  size_t competing_sets = 0;
  size_t competing_sets_settled = 0;  // one gang bound whole, every other with no member bound
  // The queue once no cycle was in flight at the end: where the losers were (see bench.cpp's
  // wait_for_no_cycle; losers keep retrying, so some sit in backoff rather than unschedulable).
  size_t queue_backoff_at_end = 0, queue_unschedulable_at_end = 0;
  double gangs_per_second = 0;   // gangs_bound / measured_seconds
  // Gang members bound per second, from the first gang member created to the last one bound (with
  // plain pods in the same phase, the gang pods' own rate).
  double gang_pods_per_second = 0;
  // Per bound gang: its last member created -> its last member bound, milliseconds.
  std::vector<double> gang_latencies_ms;  // sorted ascending
  percentiles gang_latency_ms;

  // Each measured createPods op: its pods bound per second from their creation to the last one
  // bound, so a gang op can be set against the same op of a plain baseline.
  struct op_rate {
    size_t op = 0;          // index in the workload's ops
    size_t pods = 0, bound = 0;
    size_t gang_size = 0;   // 0: plain pods
    double pods_per_second = 0;
  };
  std::vector<op_rate> measured_ops;

  // The same pods over the same snapshot, one plain loop, no actors (one core).
  double raw_pods_per_second = 0;
  double efficiency = 0;  // throughput.avg / raw_pods_per_second

  size_t peak_rss_bytes = 0;
  double wall_seconds = 0;  // whole run, set-up included

  // Runtime sizing used.
  uint32_t threads = 0, workers = 0, binders = 0, pipeline_depth = 0;
  bool batching = false;
  bool record_metrics = true;
  std::string malloc_tcache = "default";  // glibc's tcache_count in GLIBC_TUNABLES (app/malloc_tuning.hpp)

  // The placement invariants (actors/invariants.hpp) over the final cluster state; empty = all hold.
  size_t invariant_checks = 0;             // individual checks made
  std::vector<std::string> violations;     // one line per violation
  std::vector<std::string> warnings;       // the workload's (unknown fields in its templates)
};

}  // namespace kas

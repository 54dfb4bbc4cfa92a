#pragma once
// ActorRuntimeConfiguration: how the actor runtime is sized. A second YAML document in the
// scheduler's config file:
//
//   apiVersion: kube-actor-scheduler.io/v1alpha1
//   kind: ActorRuntimeConfiguration
//   threads: 2          # CAF scheduler threads (scheduler.max-threads)
//   workers: 2          # filter_score_worker pool size
//   binders: 2          # binder pool size
//   pipelineDepth: 4    # pods in their scheduling cycle at once
//   nodeAgents: 2       # embedded mode: simulated kubelet actors
//   batching: false     # opportunistic batching by pod signature (SignPod, KEP-5598)
//   recordMetrics: true # false: no metric series moves (counters, gauges, histograms, actor probes)
//
// Defaults are sized for 2 cores. Unknown fields are errors.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/kube_scheduler_config.hpp"
#include "config/profile.hpp"
#include "messages/result.hpp"

namespace kas {

struct runtime_config {
  uint32_t threads = 2;
  uint32_t workers = 2;
  uint32_t binders = 2;
  // Pods in their scheduling cycle at once. Above 1, a pod may be scored on a snapshot that lacks
  // the reservations of pods still ahead of it in the pipeline (feasibility is always re-validated
  // at reservation), so placements can differ from kube-scheduler's strictly serial cycles.
  // `simulate` therefore uses 1 unless the config sets it.
  uint32_t pipeline_depth = 4;
  bool pipeline_depth_set = false;
  uint32_t node_agents = 2;
  // Opportunistic batching (KEP-5598): a pod with the same SignPod signature as the previous one
  // reuses its sorted feasible-node list, re-validating only the head.
  bool batching = false;
  // Metric recording (observability/metrics.hpp obs::set_recording). Off, every series stays where it
  // is, so /metrics reads zeros; it exists to measure what recording costs and for runs that want none.
  bool record_metrics = true;
  // From KubeSchedulerConfiguration (podInitialBackoffSeconds / podMaxBackoffSeconds).
  std::chrono::nanoseconds pod_initial_backoff = std::chrono::seconds(1);
  std::chrono::nanoseconds pod_max_backoff = std::chrono::seconds(10);
};

// Decodes one ActorRuntimeConfiguration document; `where` prefixes errors ("cfg.yaml: document 2").
status_or_error decode_runtime_config(const YAML::Node& doc, const std::string& where, runtime_config& out);

struct scheduler_config {
  std::vector<profile_config> profiles;  // resolved, in config order
  runtime_config runtime;
  // The decoded KubeSchedulerConfiguration (defaults when the file has none).
  kube_scheduler_configuration kube;
  // Settings accepted but not acted on; the caller prints them.
  std::vector<std::string> warnings;
};

// Reads a config file: a KubeSchedulerConfiguration and/or an ActorRuntimeConfiguration document,
// through load_yaml (yaml_guard.hpp: at most 3 MiB a document, 100 levels deep, bounded aliases).
// No file (empty path) gives kube-scheduler's defaults: one default-scheduler profile. Profiles
// are resolved against `catalog` (which plugins exist and which extension points they implement);
// the default catalog knows only default_profile()'s plugins and checks no args, so callers with a
// plugin registry pass fw::registry_catalog (plugins/framework/runtime/profile_resolver.hpp).
result<scheduler_config> load_scheduler_config(const std::string& path,
                                               const plugin_catalog& catalog = default_plugin_catalog());

}  // namespace kas

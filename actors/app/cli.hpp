#pragma once
// The command-line front end (see README: simulate, bench). Each command returns the process exit code:
// 0 success, 2 bad input (one clear message on stderr), 1 internal failure.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/app/secure_serving.hpp"

namespace kas {

struct simulate_args {
  std::vector<std::string> clusters;
  std::string config;
  std::string output = "table";  // json | table
  bool explain = false;
  std::string explain_pod;   // --explain NAMESPACE/NAME: explain only this pod
  uint32_t explain_top = 0;  // --explain-top N: list at most N nodes per pod (0: all)
  bool fail_on_unschedulable = false;  // exit 1 when a pending pod of ours stays pending
  bool strict = false;                 // unknown fields in manifests are errors, not warnings
  // --metrics-bind-address: /metrics, /healthz, /livez, /readyz while the run lasts. Empty (the
  // default for this batch command) or "0" = off. Validated by main.
  std::string metrics_bind_address;
};

int run_simulate(const simulate_args& args);

struct bench_args {
  std::string workload;  // empty: the built-in SchedulingBasic
  std::string config;    // KubeSchedulerConfiguration and/or ActorRuntimeConfiguration
  std::string output = "table";  // json | table
  std::string report;    // directory for the HTML report, or empty
  std::string batching;  // "", on, off: overrides the config's batching
  uint32_t window_ms = 1000;       // throughput sample window
  uint32_t stall_timeout_s = 30;   // give up waiting when no awaited pod binds for this long
  bool quiet = false;              // no progress line
  uint32_t linger_s = 0;           // keep serving /metrics this long after the run
  std::string metrics_bind_address;  // as simulate_args: empty or "0" = off (see metrics_endpoint.hpp)
  std::string kubeconfig;  // through this apiserver instead of the embedded cluster
};

int run_bench(const bench_args& args);

struct run_args {
  std::string config;      // KubeSchedulerConfiguration and/or ActorRuntimeConfiguration
  std::string kubeconfig;  // --kubeconfig (ignored when --config is given, as in kube-scheduler)
  std::string master;      // --master: overrides the kubeconfig's server
  std::string context;     // --context: a kubeconfig context other than the current one
  // The plain HTTP endpoint: off by default, as kube-scheduler has no insecure port any more; the
  // secure port below serves the same paths over HTTPS with authentication. "0" = off.
  std::string metrics_bind_address;
  secure_serving_flags secure;  // --secure-port, --bind-address, --tls-*, delegated auth (secure_serving.hpp)
  // The leader election flags. Each one given overrides the config file's leaderElection field, as
  // kube-scheduler's ApplyLeaderElectionTo does; unset ones leave the file's (or the default) value.
  std::optional<bool> leader_elect;
  std::optional<std::string> lease_duration, renew_deadline, retry_period, resource_lock, resource_name,
    resource_namespace;
};

int run_cluster(const run_args& args);

// Accepts argv[i] as "--flag value" or "--flag=value" into `out` (a flag last on the line takes "").
bool take_flag(int argc, char** argv, int& i, const char* flag, std::string& out);

}  // namespace kas

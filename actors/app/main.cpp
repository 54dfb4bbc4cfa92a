// kube-actor-scheduler: a Kubernetes pod scheduler built on actors. The README documents the
// command-line contract.
#include <csignal>
#include <cstring>
#include <iostream>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "actors/app/cli.hpp"
#include "actors/app/logging.hpp"
#include "actors/app/malloc_tuning.hpp"
#include "actors/app/metrics_endpoint.hpp"
#include "messages/descriptors.hpp"

namespace {

#ifndef KAS_VERSION
#define KAS_VERSION "unknown"
#endif

const char* const simulate_help =
  "usage: kube-actor-scheduler simulate --cluster FILE [flags]\n"
  "\n"
  "Replays Kubernetes manifests (Nodes, Pods, PriorityClasses, PodDisruptionBudgets, PodGroups, workloads, in\n"
  "YAML or JSON, one or many documents, List objects included) in an embedded cluster and schedules\n"
  "every pending pod through the whole pipeline, as kube-scheduler would. Prints where each pod landed\n"
  "or why it did not. Exit codes: 0 done, 1 internal failure (or --fail-on-unschedulable), 2 bad input,\n"
  "3 a core actor died.\n"
  "\n"
  "flags:\n"
  "  --cluster FILE|DIR|-           a manifest file, a directory's .yaml/.yml/.json files, or - for\n"
  "                                 standard input; repeat for several (required)\n"
  "  --strict                       unknown fields in manifests are errors (default: warnings)\n"
  "  --config FILE                  KubeSchedulerConfiguration and/or ActorRuntimeConfiguration (YAML)\n"
  "  --output, -o json|table        output format (default table)\n"
  "  --explain [NAMESPACE/NAME]     every node's Filter verdicts and the Score plugins' scores, per\n"
  "                                 pod or for one pod; the placement is the same as without it\n"
  "  --explain-top N                with --explain: list at most N nodes per pod (the selected and\n"
  "                                 the best scored first)\n"
  "  --fail-on-unschedulable        exit 1 when a pending pod of ours stays unschedulable (for CI)\n"
  "  --metrics-bind-address H:P     serve /metrics, /healthz, /livez, /readyz while the run lasts\n"
  "                                 (default off; \"0\" is off)\n"
  "  --logging-format text|json     log format on stderr (default text)\n"
  "  -v N                           log verbosity as kube-scheduler's -v (2: decisions, 4+: detail)\n"
  "  --help, -h                     this text\n";

const char* const bench_help =
  "usage: kube-actor-scheduler bench [flags]\n"
  "\n"
  "Runs a scheduler_perf-style workload (createNodes, createPods, churn, barrier ops) against the\n"
  "embedded cluster and reports throughput (pods/s, windows, percentiles), latency, the raw kernel's\n"
  "rate, peak RSS and invariant checks. Exit codes: 0 done, 1 a stall or an invariant violation,\n"
  "2 bad input, 3 a core actor died.\n"
  "\n"
  "flags:\n"
  "  --workload FILE                a workload file (default: the built-in SchedulingBasic)\n"
  "  --config FILE                  KubeSchedulerConfiguration and/or ActorRuntimeConfiguration (YAML)\n"
  "  --output, -o json|table        output format (default table)\n"
  "  --report DIR                   also write an HTML report into DIR\n"
  "  --batching on|off              override the config's batching of pods per cycle\n"
  "  --window-ms N                  throughput sample window in milliseconds (default 1000)\n"
  "  --stall-timeout S              give up when no awaited pod binds, or no created node arrives,\n"
  "                                 for S seconds (default 30)\n"
  "  --linger S                     keep serving /metrics S seconds after the run\n"
  "  --quiet                        no progress line on stderr\n"
  "  --kubeconfig FILE              run through this apiserver instead of the embedded cluster: nodes\n"
  "                                 and pods are created through its API (an empty cluster is assumed)\n"
  "  --metrics-bind-address H:P     serve /metrics, /healthz, /livez, /readyz (default off)\n"
  "  --logging-format text|json     log format on stderr (default text)\n"
  "  -v N                           log verbosity as kube-scheduler's -v\n"
  "  --help, -h                     this text\n";

const char* const run_help =
  "usage: kube-actor-scheduler run [flags]\n"
  "\n"
  "Schedules a real Kubernetes cluster through its API, next to or instead of kube-scheduler: lists and\n"
  "watches Nodes, Pods (not Succeeded/Failed), Namespaces, PodDisruptionBudgets and PodGroups (either API\n"
  "may be absent), schedules the pods\n"
  "whose spec.schedulerName matches a profile (every other pod still counts in the cache), and writes\n"
  "bindings, Events, the PodScheduled condition and nominations back. Runs until SIGTERM or SIGINT,\n"
  "then stops scheduling and lets the API writes in flight finish (at most 30 s).\n"
  "Exit codes: 0 stopped by a signal, 2 bad input (flags, config, kubeconfig, TLS material),\n"
  "1 the Lease was lost (\"leaderelection lost\"), 3 a core actor died.\n"
  "\n"
  "flags:\n"
  "  --config FILE                  KubeSchedulerConfiguration and/or ActorRuntimeConfiguration (YAML);\n"
  "                                 clientConnection.kubeconfig, contentType, qps and burst are used\n"
  "  --kubeconfig FILE              kubeconfig (ignored when --config is given, as in kube-scheduler;\n"
  "                                 default: $KUBECONFIG, then in-cluster config, then ~/.kube/config)\n"
  "  --context NAME                 a kubeconfig context other than current-context\n"
  "  --master URL                   the apiserver's address (overrides the kubeconfig's server)\n"
  "  --metrics-bind-address H:P     also serve /metrics, /healthz, /livez, /readyz over plain HTTP,\n"
  "                                 without authentication (default off)\n"
  "  --leader-elect[=true|false]    leader election on a Lease before scheduling (default true, or\n"
  "                                 the config's leaderElection.leaderElect)\n"
  "  --leader-elect-lease-duration D, --leader-elect-renew-deadline D, --leader-elect-retry-period D\n"
  "                                 Go durations (defaults 15s, 10s, 2s)\n"
  "  --leader-elect-resource-lock leases, --leader-elect-resource-name NAME,\n"
  "  --leader-elect-resource-namespace NS\n"
  "                                 the Lease (default kube-system/kube-actor-scheduler); each flag\n"
  "                                 given overrides the config file's leaderElection field\n"
  "  --logging-format text|json     log format on stderr (default text)\n"
  "  -v N                           log verbosity as kube-scheduler's -v (2: decisions, 4+: detail)\n"
  "  --help, -h                     this text\n";

// A positive integer flag value (at most 86400000); false after one line on stderr naming the flag.
bool positive_number(const std::string& flag, const std::string& v, uint32_t& out) {
  try {
    size_t used = 0;
    long n = std::stol(v, &used);
    if (used != v.size() || n < 1 || n > 86400000) throw std::out_of_range(v);
    out = static_cast<uint32_t>(n);
    return true;
  } catch (const std::exception&) {
    std::cerr << "error: " << flag << ": expected a positive number, got \"" << v << "\"\n";
    return false;
  }
}

bool wants_help(const char* arg) { return std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0; }

void usage(std::ostream& os) {
  os << "usage:\n"
        "  kube-actor-scheduler simulate --cluster FILE [--cluster FILE...] [--config FILE]\n"
        "                                [--output json|table] [--explain [NS/NAME]] [--explain-top N]\n"
        "                                [--fail-on-unschedulable] [--strict] [-v N]\n"
        "                                [--metrics-bind-address HOST:PORT] [--logging-format text|json]\n"
        "  kube-actor-scheduler bench    [--workload FILE] [--config FILE] [--output json|table]\n"
        "                                [--report DIR] [--batching on|off] [--window-ms N]\n"
        "                                [--stall-timeout S] [--linger S] [--quiet] [--kubeconfig FILE]\n"
        "                                [-v N]\n"
        "                                [--metrics-bind-address HOST:PORT] [--logging-format text|json]\n"
        "  kube-actor-scheduler run      [--config FILE] [--kubeconfig FILE] [--context NAME]\n"
        "                                [--master URL] [--metrics-bind-address HOST:PORT] [-v N]\n"
        "                                [--secure-port N] [--bind-address IP] [--tls-cert-file FILE]\n"
        "                                [--tls-private-key-file FILE] (see run --help)\n"
        "                                [--logging-format text|json]\n"
        "  kube-actor-scheduler SUBCOMMAND --help | --version\n";
}

bool take(int argc, char** argv, int& i, const char* flag, std::string& out) {
  return kas::take_flag(argc, argv, i, flag, out);
}

void set_verbosity(int v) {
  // kube-scheduler's -v: 2 shows scheduling decisions, 4 and more the per-step detail.
  kas::set_log_verbosity(v);
}

// The flags simulate and bench share: --metrics-bind-address, --logging-format and -v. Returns true when
// argv[i] was one of them; `rc` is set to 2 on a bad value (one line on stderr naming the flag).
bool take_common(int argc, char** argv, int& i, std::string& metrics_bind, int& rc) {
  std::string v;
  if (take(argc, argv, i, "--metrics-bind-address", v)) {
    auto r = kas::check_metrics_bind_address(v);
    if (!r) {
      std::cerr << "error: " << r.err().message << "\n";
      rc = 2;
      return true;
    }
    metrics_bind = *r ? v : std::string{};
    return true;
  }
  if (take(argc, argv, i, "--logging-format", v)) {
    if (!kas::set_log_format(v))
      std::cerr << "error: --logging-format: must be text or json, got \"" << v << "\"\n", rc = 2;
    return true;
  }
  if (take(argc, argv, i, "-v", v) || take(argc, argv, i, "--v", v)) {
    try {
      set_verbosity(std::stoi(v));
    } catch (const std::exception&) {
      std::cerr << "error: -v: expected a number, got \"" << v << "\"\n", rc = 2;
    }
    return true;
  }
  return false;
}

// What every subcommand does with an argument its own flags did not take: --help (exit 0), the shared
// flags (take_common), or an unknown argument (exit 2, with the usage). Returns the exit code when
// the command must stop, -1 when the argument was taken and parsing goes on.
int other_argument(const char* cmd, const char* help, int argc, char** argv, int& i, std::string& metrics_bind) {
  if (wants_help(argv[i])) {
    std::cout << help;
    return 0;
  }
  if (int rc = 0; take_common(argc, argv, i, metrics_bind, rc)) return rc ? rc : -1;
  std::cerr << "error: " << cmd << ": unknown argument \"" << argv[i] << "\"\n";
  usage(std::cerr);
  return 2;
}

// `simulate FLAGS...`: parses argv[2..] and runs it.
int simulate_command(int argc, char** argv) {
  kas::simulate_args a;
  for (int i = 2; i < argc; ++i) {
    std::string v;
    if (take(argc, argv, i, "--cluster", v)) {
      if (v.empty()) return std::cerr << "error: --cluster needs a file, a directory or -\n", 2;
      a.clusters.push_back(v);
    } else if (take(argc, argv, i, "--config", v)) {
      a.config = v;
    } else if (take(argc, argv, i, "--output", v) || take(argc, argv, i, "-o", v)) {
      a.output = v;
    } else if (std::strcmp(argv[i], "--explain") == 0) {
      a.explain = true;
      // An optional NAMESPACE/NAME: the next argument when it is not a flag.
      if (i + 1 < argc && argv[i + 1][0] != '-') {
        a.explain_pod = argv[++i];
        if (a.explain_pod.find('/') == std::string::npos) a.explain_pod = "default/" + a.explain_pod;
      }
    } else if (take(argc, argv, i, "--explain-top", v)) {
      uint32_t n = 0;
      if (!positive_number("--explain-top", v, n)) return 2;
      a.explain = true;
      a.explain_top = n;
    } else if (std::strcmp(argv[i], "--fail-on-unschedulable") == 0) {
      a.fail_on_unschedulable = true;
    } else if (std::strcmp(argv[i], "--strict") == 0) {
      a.strict = true;
    } else if (int rc = other_argument("simulate", simulate_help, argc, argv, i, a.metrics_bind_address); rc >= 0) {
      return rc;
    }
  }
  return kas::run_simulate(a);
}

// `bench FLAGS...`: parses argv[2..] and runs it.
int bench_command(int argc, char** argv) {
  kas::bench_args a;
  auto number = positive_number;
  for (int i = 2; i < argc; ++i) {
    std::string v;
    if (take(argc, argv, i, "--workload", v)) {
      if (v.empty()) return std::cerr << "error: --workload needs a file\n", 2;
      a.workload = v;
    } else if (take(argc, argv, i, "--config", v)) {
      a.config = v;
    } else if (take(argc, argv, i, "--output", v) || take(argc, argv, i, "-o", v)) {
      a.output = v;
    } else if (take(argc, argv, i, "--report", v)) {
      if (v.empty()) return std::cerr << "error: --report needs a directory\n", 2;
      a.report = v;
    } else if (take(argc, argv, i, "--batching", v)) {
      a.batching = v.empty() ? "?" : v;
    } else if (take(argc, argv, i, "--window-ms", v)) {
      if (!number("--window-ms", v, a.window_ms)) return 2;
    } else if (take(argc, argv, i, "--stall-timeout", v)) {
      if (!number("--stall-timeout", v, a.stall_timeout_s)) return 2;
    } else if (take(argc, argv, i, "--linger", v)) {
      if (!number("--linger", v, a.linger_s)) return 2;
    } else if (std::strcmp(argv[i], "--quiet") == 0) {
      a.quiet = true;
    } else if (take(argc, argv, i, "--kubeconfig", v)) {
      if (v.empty()) return std::cerr << "error: --kubeconfig needs a file\n", 2;
      a.kubeconfig = v;
    } else if (int rc = other_argument("bench", bench_help, argc, argv, i, a.metrics_bind_address); rc >= 0) {
      return rc;
    }
  }
  return kas::run_bench(a);
}

// `run FLAGS...`: parses argv[2..] and runs it.
int run_command(int argc, char** argv) {
  kas::run_args a;
  for (int i = 2; i < argc; ++i) {
    std::string v;
    if (take(argc, argv, i, "--config", v)) {
      a.config = v;
    } else if (take(argc, argv, i, "--kubeconfig", v)) {
      a.kubeconfig = v;
    } else if (take(argc, argv, i, "--master", v)) {
      a.master = v;
    } else if (take(argc, argv, i, "--context", v)) {
      a.context = v;
    } else if (std::strcmp(argv[i], "--leader-elect") == 0) {
      a.leader_elect = true;  // a boolean flag: its value, if any, is given with "="
    } else if (std::strncmp(argv[i], "--leader-elect=", 15) == 0) {
      std::string b = argv[i] + 15;
      if (b == "true" || b == "1" || b == "t" || b == "T" || b == "TRUE" || b == "True") a.leader_elect = true;
      else if (b == "false" || b == "0" || b == "f" || b == "F" || b == "FALSE" || b == "False") a.leader_elect = false;
      else {
        std::cerr << "error: --leader-elect: invalid argument \"" << b << "\": expected true or false\n";
        return 2;
      }
    } else if (take(argc, argv, i, "--leader-elect-lease-duration", v)) {
      a.lease_duration = v;
    } else if (take(argc, argv, i, "--leader-elect-renew-deadline", v)) {
      a.renew_deadline = v;
    } else if (take(argc, argv, i, "--leader-elect-retry-period", v)) {
      a.retry_period = v;
    } else if (take(argc, argv, i, "--leader-elect-resource-lock", v)) {
      a.resource_lock = v;
    } else if (take(argc, argv, i, "--leader-elect-resource-name", v)) {
      a.resource_name = v;
    } else if (take(argc, argv, i, "--leader-elect-resource-namespace", v)) {
      a.resource_namespace = v;
    } else if (kas::take_secure_serving_flag(argc, argv, i, a.secure)) {
      continue;
    } else if (wants_help(argv[i])) {
      std::cout << run_help << "\nsecure serving (as kube-scheduler's port 10259):\n" << kas::secure_serving_help;
      return 0;
    } else if (int rc = other_argument("run", run_help, argc, argv, i, a.metrics_bind_address); rc >= 0) {
      return rc;
    }
  }
  return kas::run_cluster(a);
}

}  // namespace

int main(int argc, char** argv) {
  // `run` dumps its cache on SIGUSR2 (kube-scheduler's cache debugger), taken by sigwait once it is
  // up. Blocked from the first instruction, not from then: a SIGUSR2 that arrives while it starts
  // (config, the apiserver's /version) waits instead of killing the process with the signal's
  // default action. The mask holds across the re-exec below and into every thread started later.
  if (argc >= 2 && std::strcmp(argv[1], "run") == 0) {
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    sigprocmask(SIG_BLOCK, &usr2, nullptr);
  }
  // Before anything else (no thread, no allocation worth keeping): may replace this process image.
  const std::string untuned = kas::reexec_with_malloc_tuning(argv);
  // Before any thread starts (messages/descriptors.hpp says why).
  kas::codec::build_all_descriptors();
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  std::string cmd = argv[1];
  // Logs go to stderr: stdout carries the command's output (JSON or table).
  spdlog::set_default_logger(spdlog::stderr_color_mt("kube-actor-scheduler"));
  set_verbosity(0);
  if (!untuned.empty()) spdlog::warn("malloc tuning not applied, running with glibc's defaults: {}", untuned);
  if (cmd == "simulate") return simulate_command(argc, argv);
  if (cmd == "bench") return bench_command(argc, argv);
  if (cmd == "run") return run_command(argc, argv);
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(std::cout);
    return 0;
  }
  if (cmd == "--version" || cmd == "version") {
    std::cout << "kube-actor-scheduler " << KAS_VERSION << "\n";
    return 0;
  }
  std::cerr << "error: unknown command \"" << cmd << "\"\n";
  usage(std::cerr);
  return 2;
}

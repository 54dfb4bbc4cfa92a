// kube-actor-scheduler: a Kubernetes pod scheduler built on actors. See DESIGN.md §2 for the
// command-line contract.
#include <cstring>
#include <iostream>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "actors/app/cli.hpp"
#include "actors/app/logging.hpp"
#include "actors/app/metrics_endpoint.hpp"

namespace {

void usage(std::ostream& os) {
  os << "usage:\n"
        "  kube-actor-scheduler simulate --cluster FILE [--cluster FILE...] [--config FILE]\n"
        "                                [--output json|table] [--explain] [-v N]\n"
        "                                [--metrics-bind-address HOST:PORT] [--logging-format text|json]\n"
        "  kube-actor-scheduler bench    [--workload FILE] [--config FILE] [--output json|table]\n"
        "                                [--report DIR] [--batching on|off] [--window-ms N]\n"
        "                                [--stall-timeout S] [--linger S] [--quiet] [-v N]\n"
        "                                [--metrics-bind-address HOST:PORT] [--logging-format text|json]\n";
}

// Accepts "--flag value" and "--flag=value".
bool take(int argc, char** argv, int& i, const char* flag, std::string& out) {
  size_t n = std::strlen(flag);
  if (std::strncmp(argv[i], flag, n) != 0) return false;
  if (argv[i][n] == '=') {
    out = argv[i] + n + 1;
    return true;
  }
  if (argv[i][n] != '\0') return false;
  if (i + 1 >= argc) {
    out.clear();
    return true;
  }
  out = argv[++i];
  return true;
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  std::string cmd = argv[1];
  // Logs go to stderr: stdout carries the command's output (JSON or table).
  spdlog::set_default_logger(spdlog::stderr_color_mt("kube-actor-scheduler"));
  set_verbosity(0);
  if (cmd == "simulate") {
    kas::simulate_args a;
    for (int i = 2; i < argc; ++i) {
      std::string v;
      if (take(argc, argv, i, "--cluster", v)) {
        if (v.empty()) return std::cerr << "error: --cluster needs a file\n", 2;
        a.clusters.push_back(v);
      } else if (take(argc, argv, i, "--config", v)) {
        a.config = v;
      } else if (take(argc, argv, i, "--output", v) || take(argc, argv, i, "-o", v)) {
        a.output = v;
      } else if (std::strcmp(argv[i], "--explain") == 0) {
        a.explain = true;
      } else if (int rc = 0; take_common(argc, argv, i, a.metrics_bind_address, rc)) {
        if (rc) return rc;
      } else {
        std::cerr << "error: simulate: unknown argument \"" << argv[i] << "\"\n";
        usage(std::cerr);
        return 2;
      }
    }
    return kas::run_simulate(a);
  }
  if (cmd == "bench") {
    kas::bench_args a;
    auto number = [](const std::string& flag, const std::string& v, uint32_t& out) {
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
    };
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
      } else if (int rc = 0; take_common(argc, argv, i, a.metrics_bind_address, rc)) {
        if (rc) return rc;
      } else {
        std::cerr << "error: bench: unknown argument \"" << argv[i] << "\"\n";
        usage(std::cerr);
        return 2;
      }
    }
    return kas::run_bench(a);
  }
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(std::cout);
    return 0;
  }
  std::cerr << "error: unknown command \"" << cmd << "\"\n";
  usage(std::cerr);
  return 2;
}

// kube-actor-test-apiserver: a stand-in for kube-apiserver that tests (and kubectl) talk to. It is a
// test fixture, not a cluster: state lives in memory and nothing runs pods. See server.hpp for the
// design and --help for the flags.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "messages/descriptors.hpp"
#include "tests/apiserver/auth_reviews.hpp"
#include "tests/apiserver/request_log.hpp"
#include "tests/apiserver/server.hpp"

namespace {

const char* kUsage =
    "usage: kube-actor-test-apiserver [flags]\n"
    "  --listen HOST:PORT                 address to serve on (default 127.0.0.1:0 = a free port);\n"
    "                                     prints `listening on https://HOST:PORT` once ready\n"
    "  --kubeconfig-out FILE              write a kubeconfig (CA, server, client cert inline)\n"
    "  --cert-dir DIR                     write ca.crt, client.crt, client.key, kubeconfig (and\n"
    "                                     kubeconfig-token with --token)\n"
    "  --token T                          also accept `Authorization: Bearer T`\n"
    "  --no-tls                           plain HTTP/1.1 (and h2c upgrade)\n"
    "  --watch-history N                  changes kept for watches (default 200000)\n"
    "  --bookmark-seconds N               bookmark interval for allowWatchBookmarks (default 5)\n"
    "  --disable-admission-plugins LIST   admission plugins to turn off; the one kept is Priority\n"
    "                                     (pods get spec.priority from their PriorityClass), on by\n"
    "                                     default as in kube-apiserver\n"
    "  --fault-watch-close-every N        end every watch after N events\n"
    "  --fault-write-500-percent X        answer X% of writes with 500\n"
    "  --fault-binding-409-percent X      answer X% of bindings with 409 Conflict (without binding)\n"
    "  --fault-slow-ms N                  delay every response by N ms\n"
    "  --fault-compact-every-seconds N    compact the watch history every N s (open watches get 410)\n"
    "  --fault-restart-every-seconds N    restart every N s, as kube-apiserver with its etcd intact:\n"
    "                                     every connection (watches included) is closed abruptly,\n"
    "                                     new ones are refused for --fault-restart-down-ms, objects\n"
    "                                     and the resourceVersion are kept but the watch history\n"
    "                                     starts empty (a watch from an older rv gets 410); prints\n"
    "                                     `listening on URL` again when it is back\n"
    "  --fault-restart-down-ms N          how long a restart refuses connections (default 500)\n"
    "  --request-log FILE                 one JSON line per request received (userAgent, method,\n"
    "                                     path, query), for tests/deploy's RBAC coverage check\n"
    "  --auth-table FILE                  answer TokenReviews and SubjectAccessReviews from this JSON\n"
    "                                     table (tokens -> users, rules: user/group, verbs, paths);\n"
    "                                     see auth_reviews.hpp. Without it none authenticates or is allowed\n"
    "  GET /debug/faults returns the counts of injected faults as JSON; POST /debug/restart restarts\n"
    "  now (after answering), as --fault-restart-every-seconds does. POST\n"
    "  /debug/partition-lease-holder?holder=ID refuses (503) every later Lease write whose body names\n"
    "  that holder identity: the leader's renewals fail as if it were cut off from the apiserver.\n";

bool parse_number(const char* flag, const char* text, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  if (end == text || *end != '\0' || out < 0) {
    fprintf(stderr, "kube-actor-test-apiserver: %s: expected a non-negative number, got \"%s\"\n", flag, text);
    return false;
  }
  return true;
}

bool parse_args(int argc, char** argv, kas::testapi::server_options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      fputs(kUsage, stdout);
      std::exit(0);
    }
    if (a == "--no-tls") { o.tls = false; continue; }
    if (i + 1 >= argc) {
      fprintf(stderr, "kube-actor-test-apiserver: %s needs a value\n%s", a.c_str(), kUsage);
      return false;
    }
    const char* v = argv[++i];
    double n = 0;
    if (a == "--listen") {
      std::string s = v;
      size_t colon = s.rfind(':');
      if (colon == std::string::npos || !parse_number("--listen", s.substr(colon + 1).c_str(), n)) return false;
      o.host = s.substr(0, colon);
      o.port = static_cast<int>(n);
    } else if (a == "--kubeconfig-out") o.kubeconfig_out = v;
    else if (a == "--cert-dir") o.cert_dir = v;
    else if (a == "--token") o.token = v;
    else if (a == "--watch-history") { if (!parse_number(a.c_str(), v, n)) return false; o.history = static_cast<size_t>(n); }
    else if (a == "--disable-admission-plugins") {
      std::string list = v;
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        std::string plugin = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (plugin == "Priority") o.priority_admission_plugin = false;
        else if (!plugin.empty()) {
          fprintf(stderr, "kube-actor-test-apiserver: --disable-admission-plugins: unknown plugin \"%s\" (known: Priority)\n",
                  plugin.c_str());
          return false;
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (a == "--bookmark-seconds") { if (!parse_number(a.c_str(), v, n)) return false; o.bookmark_seconds = static_cast<uint64_t>(n); }
    else if (a == "--fault-watch-close-every") { if (!parse_number(a.c_str(), v, n)) return false; o.faults.watch_close_every = static_cast<uint64_t>(n); }
    else if (a == "--fault-write-500-percent") { if (!parse_number(a.c_str(), v, n)) return false; o.faults.write_500_percent = n; }
    else if (a == "--fault-binding-409-percent") { if (!parse_number(a.c_str(), v, n)) return false; o.faults.binding_409_percent = n; }
    else if (a == "--fault-slow-ms") { if (!parse_number(a.c_str(), v, n)) return false; o.faults.slow_ms = static_cast<uint64_t>(n); }
    else if (a == "--fault-compact-every-seconds") { if (!parse_number(a.c_str(), v, n)) return false; o.faults.compact_every_seconds = static_cast<uint64_t>(n); }
    else if (a == "--fault-restart-every-seconds") { if (!parse_number(a.c_str(), v, n)) return false; o.faults.restart_every_seconds = static_cast<uint64_t>(n); }
    else if (a == "--fault-restart-down-ms") { if (!parse_number(a.c_str(), v, n)) return false; o.faults.restart_down_ms = static_cast<uint64_t>(n); }
    else if (a == "--auth-table") {
      std::string err;
      if (!kas::testapi::load_auth_table(v, err)) {
        fprintf(stderr, "kube-actor-test-apiserver: %s\n", err.c_str());
        return false;
      }
    }
    else if (a == "--request-log") {
      std::string err;
      if (!kas::testapi::open_request_log(v, err)) {
        fprintf(stderr, "kube-actor-test-apiserver: %s\n", err.c_str());
        return false;
      }
    }
    else {
      fprintf(stderr, "kube-actor-test-apiserver: unknown flag %s\n%s", a.c_str(), kUsage);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  kas::codec::build_all_descriptors();  // before any thread starts (messages/descriptors.hpp)
  kas::testapi::server_options o;
  if (!parse_args(argc, argv, o)) return 2;
  kas::testapi::server s(o);
  return s.run();
}

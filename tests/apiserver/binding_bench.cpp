// Throughput of pods/binding against the test apiserver fixture, through the project's HTTP/2 client:
// creates N pods, then POSTs N bindings at once (multiplexed on one connection), then N
// events.k8s.io/v1 Events (what the scheduler posts per pod), and reports each phase's rate. Given
// the server's pid, it also reports the server's CPU time per request of each phase (from
// /proc/PID/stat). Not a test; run by hand:
//   kube-actor-test-apiserver --listen 127.0.0.1:0 --kubeconfig-out /tmp/kc &
//   apiserver_binding_bench /tmp/kc 20000 [SERVER_PID]
#include <atomic>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>

#include "client/http_transport.hpp"
#include "client/kubeconfig.hpp"

using namespace kas::api;

namespace {

// Starts `n` requests made by `make(i)` and waits for all; returns the failures.
int run_all(http_transport& t, int n, const std::function<http_request(int)>& make, int expect_status) {
  std::atomic<int> left{n}, failed{0};
  std::promise<void> done;
  for (int i = 0; i < n; ++i)
    t.start(make(i), http_callbacks{nullptr, nullptr, [&, expect_status](http_response r) {
                                      if (r.status != expect_status) ++failed;
                                      if (--left == 0) done.set_value();
                                    }});
  done.get_future().wait();
  return failed.load();
}

// utime+stime of a process, in microseconds (0 when unknown).
double cpu_us(int pid) {
  if (pid <= 0) return 0;
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream in(text.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && in >> field; ++i)
    if (i == 14 || i == 15) ticks += std::stod(field);
  return ticks * 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void report(const char* what, int n, double secs, int failed, int pid, double cpu_before, double cpu_after) {
  printf("%s: %d in %.3f s (%.0f/s, %d failed)", what, n, secs, n / secs, failed);
  if (pid > 0) printf(", server CPU %.1f us/request", (cpu_after - cpu_before) / n);
  printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s KUBECONFIG N [SERVER_PID]\n", argv[0]);
    return 2;
  }
  auto conn = kas::load_kubeconfig(argv[1]);
  if (!conn) { fprintf(stderr, "%s\n", conn.err().message.c_str()); return 1; }
  auto t = http_transport::create(*conn);
  if (!t) { fprintf(stderr, "%s\n", t.err().message.c_str()); return 1; }
  int n = std::stoi(argv[2]);
  int pid = argc > 3 ? std::stoi(argv[3]) : 0;
  std::string run = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
  auto pod = [&](int i) {
    http_request r;
    r.method = "POST";
    r.path = "/api/v1/namespaces/default/pods";
    r.content_type = r.accept = "application/json";
    r.body = R"({"metadata":{"name":"bench-)" + run + "-" + std::to_string(i) +
             R"("},"spec":{"containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"100m"}}}]}})";
    return r;
  };
  auto bind = [&](int i) {
    http_request r;
    r.method = "POST";
    std::string name = "bench-" + run + "-" + std::to_string(i);
    r.path = "/api/v1/namespaces/default/pods/" + name + "/binding";
    r.content_type = r.accept = "application/json";
    r.body = R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" + name +
             R"("},"target":{"kind":"Node","name":"node-)" + std::to_string(i % 100) + "\"}}";
    return r;
  };
  auto event = [&](int i) {
    http_request r;
    r.method = "POST";
    std::string name = "bench-" + run + "-" + std::to_string(i);
    r.path = "/apis/events.k8s.io/v1/namespaces/default/events";
    r.content_type = r.accept = "application/json";
    r.body = R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":")" + name +
             R"(.scheduled"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"kube-actor-scheduler",)"
             R"("reportingInstance":"kube-actor-scheduler-0","action":"Binding","reason":"Scheduled","type":"Normal",)"
             R"("note":"Successfully assigned default/)" + name + " to node-" + std::to_string(i % 100) +
             R"(","regarding":{"kind":"Pod","namespace":"default","name":")" + name + "\"}}";
    return r;
  };
  using clock = std::chrono::steady_clock;
  auto phase = [&](const char* what, const std::function<http_request(int)>& make) {
    double c0 = cpu_us(pid);
    auto t0 = clock::now();
    int failed = run_all(**t, n, make, 201);
    double secs = std::chrono::duration<double>(clock::now() - t0).count();
    report(what, n, secs, failed, pid, c0, cpu_us(pid));
    return failed;
  };
  int cf = phase("creates", pod);
  // A pods watch from here on, as the scheduler keeps one: each binding is also a watch event.
  auto list = [&] {
    std::promise<http_response> p;
    http_request r;
    r.path = "/api/v1/namespaces/kube-system/pods?limit=1";
    r.accept = "application/json";
    t->get()->start(std::move(r), http_callbacks{nullptr, nullptr, [&](http_response resp) { p.set_value(std::move(resp)); }});
    return p.get_future().get();
  }();
  size_t at = list.body.find("\"resourceVersion\":\"");
  std::string rv = at == std::string::npos ? "0" : list.body.substr(at + 19, list.body.find('"', at + 19) - at - 19);
  std::atomic<long> watch_events{0};
  http_request w;
  w.path = "/api/v1/pods?watch=1&resourceVersion=" + rv;
  w.accept = "application/json";
  w.stream = true;
  auto watch_id = (*t)->start(std::move(w), http_callbacks{nullptr, [&](std::string_view chunk) {
                                  for (char c : chunk) watch_events += c == '\n';
                                }, [](http_response) {}});
  int bf = phase("bindings", bind);
  int ef = phase("events", event);
  printf("pods watch: %ld events received\n", watch_events.load());
  (*t)->cancel(watch_id);
  return (cf || bf || ef) ? 1 : 0;
}

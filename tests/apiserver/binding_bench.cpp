// Throughput of pods/binding against the test apiserver fixture, through the project's HTTP/2 client:
// creates N pods, then POSTs N bindings at once (multiplexed on one connection) and reports
// bindings/s. Not a test; run by hand:
//   kube-actor-test-apiserver --listen 127.0.0.1:0 --kubeconfig-out /tmp/kc &
//   apiserver_binding_bench /tmp/kc 20000
#include <atomic>
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s KUBECONFIG N\n", argv[0]);
    return 2;
  }
  auto conn = kas::load_kubeconfig(argv[1]);
  if (!conn) { fprintf(stderr, "%s\n", conn.err().message.c_str()); return 1; }
  auto t = http_transport::create(*conn);
  if (!t) { fprintf(stderr, "%s\n", t.err().message.c_str()); return 1; }
  int n = std::stoi(argv[2]);
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
  auto t0 = std::chrono::steady_clock::now();
  int cf = run_all(**t, n, pod, 201);
  auto t1 = std::chrono::steady_clock::now();
  int bf = run_all(**t, n, bind, 201);
  auto t2 = std::chrono::steady_clock::now();
  double cs = std::chrono::duration<double>(t1 - t0).count(), bs = std::chrono::duration<double>(t2 - t1).count();
  printf("creates: %d in %.3f s (%.0f/s, %d failed)\nbindings: %d in %.3f s (%.0f/s, %d failed)\n", n, cs, n / cs, cf,
         n, bs, n / bs, bf);
  return (cf || bf) ? 1 : 0;
}

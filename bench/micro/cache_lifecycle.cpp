// The snapshot cache's work per scheduled pod, without the actors around it: what the
// snapshot_cache actor does for one pod of SchedulingBasic, in the order the pipeline drives it.
//
// Per iteration (one pod), on a cache holding the 5000 nodes of the kernel benchmarks' cluster:
//   - the pod arrives unbound (the pod_add event: the nominator's bookkeeping);
//   - a cycle takes a snapshot (current()) and the pod is assumed on the next node, round robin;
//   - the binding of the pod assumed `confirm_lag` pods earlier is seen (the pod_update that sets
//     spec.nodeName: the assumed pod's confirmation);
//   - the pod bound `running_lag` pods earlier starts (the status update to Running, which sets
//     status.startTime).
// The lags stand for the pods in flight between the stages; each stage's pod is on another node,
// as in a real run (Cache/crowded-node: all on one node, as in SchedulingDaemonset). Items/s is
// pods/s for the cache alone.
#include <benchmark/benchmark.h>

#include <deque>
#include <stdexcept>
#include <string>

#include "bench/micro/cluster.hpp"
#include "cache/scheduler_cache.hpp"

namespace kas::bench {
namespace {

constexpr size_t confirm_lag = 64;
constexpr size_t running_lag = 128;

// One pod's lifecycle per iteration, the pod going to the node `node_of(i)` names.
template <class NodeOf>
void run_lifecycle(benchmark::State& st, scheduler_cache& cache, NodeOf&& node_of) {
  const pod_info_ptr tmpl = incoming_pod("basic");
  std::deque<pod_info_ptr> assumed, bound;  // waiting for confirmation, for Running
  size_t i = 0;
  for (auto _ : st) {
    auto pod = std::make_shared<pod_info>(*tmpl);
    pod->name = "p-" + std::to_string(i);
    pod->uid = "default-" + pod->name;
    cache.update_nominated(nullptr, pod);
    snapshot_ptr snap = cache.current();
    benchmark::DoNotOptimize(snap.get());
    const std::string& node = node_of(i);
    auto placed = with_node_name(*pod, node);
    if (!cache.assume_pod(placed, node)) return st.SkipWithError("assume failed");
    assumed.push_back(placed);
    if (assumed.size() > confirm_lag) {
      pod_info_ptr seen = with_node_name(*assumed.front(), assumed.front()->node_name);  // the API's copy
      cache.update_nominated(nullptr, seen);
      if (!cache.add_pod(seen)) return st.SkipWithError("confirmation failed");
      bound.push_back(seen);
      assumed.pop_front();
    }
    if (bound.size() > running_lag) {
      pod_info_ptr running = with_node_name(*bound.front(), bound.front()->node_name);
      cache.update_nominated(bound.front(), running);
      if (!cache.update_pod(bound.front(), running)) return st.SkipWithError("update failed");
      bound.pop_front();
    }
    ++i;
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}

void load_nodes(scheduler_cache& cache, const cluster& cl) {
  for (const node_info* n : cl.nodes) {
    auto copy = std::make_shared<node_info>(*n);
    cache.add_or_update_node(std::move(copy));  // a new node: the cache drops the copied pods
  }
}

void cache_lifecycle(benchmark::State& st) {
  const cluster& cl = scheduling_basic_cluster();
  scheduler_cache cache;
  load_nodes(cache, cl);
  run_lifecycle(st, cache, [&](size_t i) -> const std::string& { return cl.nodes[(i * 7) % cl.nodes.size()]->name; });
}

// SchedulingDaemonset's shape: every pod on one node, which already holds 15000 bound pods, so
// each iteration changes a node holding 15000 to 30000 pods.
void cache_crowded_node(benchmark::State& st) {
  const cluster& cl = scheduling_basic_cluster();
  scheduler_cache cache;
  load_nodes(cache, cl);
  const std::string& node = cl.nodes.front()->name;
  const pod_info_ptr tmpl = incoming_pod("basic");
  for (size_t k = 0; k < 15000; ++k) {
    auto pod = std::make_shared<pod_info>(*tmpl);
    pod->name = "bound-" + std::to_string(k);
    pod->uid = "default-" + pod->name;
    if (!cache.add_pod(with_node_name(*pod, node))) return st.SkipWithError("prefill failed");
  }
  run_lifecycle(st, cache, [&](size_t) -> const std::string& { return node; });
}

BENCHMARK(cache_lifecycle)->Name("Cache/lifecycle")->Unit(benchmark::kMicrosecond);
BENCHMARK(cache_crowded_node)->Name("Cache/crowded-node")->Iterations(15000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kas::bench

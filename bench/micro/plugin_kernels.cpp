// Plugin-kernel microbenchmarks: Filter per node and Score per node for every default plugin that
// has them, and for the whole default profile (framework::run_filter, framework::score_node).
//
// Each case is one row: the plugin, and the incoming pod (bench/micro/cluster.hpp) chosen so the
// kernel does real work rather than returning early. The plugin's PreFilter or PreScore runs once,
// outside the timed loop, into a cycle_state holding the cluster's snapshot, as the cycle driver
// does; the timed loop then sweeps the kernel over the nodes. One iteration is one sweep, so
// items_per_second is nodes per second and `per_node` its inverse.
//
// Score cases sweep the nodes the default profile finds feasible for the pod (all of them except
// where noted), because Score only ever sees those; PreScore is handed the same list.
//
// A row whose PreFilter / PreScore returns Skip (the plugin would not run for that pod) is reported
// as an error rather than timing a kernel the scheduler never calls.
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "actors/scheduler_metrics.hpp"
#include "bench/micro/cluster.hpp"
#include "config/profile.hpp"
#include "plugins/framework/runtime/framework.hpp"
#include "plugins/framework/registry.hpp"
#include "plugins/framework/runtime/schedule_one.hpp"

namespace kas::bench {
namespace {

constexpr const char* whole_profile = "DefaultProfile";

struct kernel_case {
  const char* plugin;  // a registered plugin name, or whole_profile
  const char* pod;     // an incoming_pod() kind
};

// Filter rows. NodeAffinity and NodePorts skip their Filter for a pod without a node selector /
// host port, so they get pods that have one.
const std::vector<kernel_case> filter_cases = {
  {"NodeUnschedulable", "basic"},
  {"NodeName", "basic"},
  {"TaintToleration", "basic"},
  {"NodeAffinity", "node-affinity"},
  {"NodePorts", "host-port"},
  {"NodeResourcesFit", "basic"},
  {"PodTopologySpread", "spread"},
  {"InterPodAffinity", "anti-affinity"},
  // Only the existing pods' anti-affinity terms. (For an unlabelled pod they match nothing, and
  // PreFilter skips, as kube's does.)
  {"InterPodAffinity", "green"},
  {whole_profile, "basic"},
  {whole_profile, "spread"},
  {whole_profile, "anti-affinity"},
};

// Score rows. preferred-anti-affinity is green, so the existing pods' required anti-affinity
// filters out their nodes (one in ten) before Score.
const std::vector<kernel_case> score_cases = {
  {"TaintToleration", "basic"},
  {"NodeAffinity", "preferred-node-affinity"},
  {"NodeResourcesFit", "basic"},
  {"PodTopologySpread", "preferred-spread"},
  {"InterPodAffinity", "preferred-anti-affinity"},
  {"NodeResourcesBalancedAllocation", "basic"},
  {"ImageLocality", "basic"},
  {whole_profile, "basic"},
  {whole_profile, "preferred-spread"},
  {whole_profile, "preferred-anti-affinity"},
};

std::shared_ptr<fw::plugin> make_plugin(std::string_view name) {
  static const fw::registry reg = fw::in_tree_registry();
  const fw::factory* f = reg.find(name);
  if (f == nullptr) throw std::invalid_argument("no plugin named " + std::string(name));
  auto p = (*f)(YAML::Node(), "bench", fw::handle{});
  if (!p) throw std::runtime_error(std::string(name) + ": " + p.err().message);
  return *p;
}

const fw::framework& default_framework() {
  static const std::shared_ptr<fw::framework> f = [] {
    auto r = fw::framework::build(default_profile(), fw::in_tree_registry(), fw::handle{}, "profiles[0]");
    if (!r) throw std::runtime_error("default profile: " + r.err().message);
    return *r;
  }();
  return *f;
}

fw::cycle_state new_state(const cluster& cl) {
  fw::cycle_state state;
  state.set_snapshot(cl.snap);
  return state;
}

// Times `kernel` over `nodes`, one sweep per iteration; `kernel` returns what the counter sums.
void sweep(benchmark::State& st, const std::vector<const node_info*>& nodes,
           const std::function<int64_t(const node_info&)>& kernel, const char* sum_name) {
  int64_t sum = 0;
  for (auto _ : st) {
    int64_t s = 0;
    for (const node_info* n : nodes) s += kernel(*n);
    benchmark::DoNotOptimize(s);
    sum += s;
  }
  const auto count = static_cast<double>(nodes.size());
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(nodes.size()));
  st.counters["nodes"] = count;
  st.counters["per_node"] =
    benchmark::Counter(count, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  // The mean of what the kernel returned per node: the feasible fraction, or the mean raw score.
  if (st.iterations() > 0 && count > 0)
    st.counters[sum_name] = static_cast<double>(sum) / static_cast<double>(st.iterations()) / count;
}

std::string skipped(std::string_view point, const kernel_case& c, const fw::status& s) {
  return std::string(point) + " of " + c.plugin + " for pod " + c.pod + " returned " +
         std::string(fw::to_string(s.get_code())) + ": nothing to time";
}

void filter_kernel(benchmark::State& st, const kernel_case& c) {
  const cluster& cl = scheduling_basic_cluster();
  const pod_info_ptr pod = incoming_pod(c.pod);
  fw::cycle_state state = new_state(cl);
  fw::pre_filter_result pre;

  if (std::string_view(c.plugin) == whole_profile) {
    const fw::framework& f = default_framework();
    if (auto s = f.run_pre_filter(state, *pod, *cl.snap, pre); !s.is_success())
      return st.SkipWithError(skipped("PreFilter", c, s).c_str());
    sweep(
      st, cl.nodes, [&](const node_info& n) { return f.run_filter(state, *pod, n).is_success() ? 1 : 0; },
      "feasible");
    return;
  }
  const auto plugin = make_plugin(c.plugin);
  const auto* filter = dynamic_cast<const fw::filter_plugin*>(plugin.get());
  if (filter == nullptr) return st.SkipWithError((std::string(c.plugin) + " has no Filter").c_str());
  if (const auto* pf = dynamic_cast<const fw::pre_filter_plugin*>(plugin.get())) {
    if (auto s = pf->pre_filter(state, *pod, *cl.snap, pre); !s.is_success())
      return st.SkipWithError(skipped("PreFilter", c, s).c_str());
  }
  sweep(
    st, cl.nodes, [&](const node_info& n) { return filter->filter(state, *pod, n).is_success() ? 1 : 0; },
    "feasible");
}

// The nodes the default profile accepts for `pod`: what Score would be handed.
std::vector<const node_info*> feasible_nodes(const cluster& cl, const pod_info& pod) {
  const fw::framework& f = default_framework();
  fw::cycle_state state = new_state(cl);
  fw::pre_filter_result pre;
  if (auto s = f.run_pre_filter(state, pod, *cl.snap, pre); !s.is_success()) return {};
  std::vector<const node_info*> out;
  for (const node_info* n : cl.nodes)
    if (f.run_filter(state, pod, *n).is_success()) out.push_back(n);
  return out;
}

void score_kernel(benchmark::State& st, const kernel_case& c) {
  const cluster& cl = scheduling_basic_cluster();
  const pod_info_ptr pod = incoming_pod(c.pod);
  const std::vector<const node_info*> nodes = feasible_nodes(cl, *pod);
  if (nodes.empty()) return st.SkipWithError((std::string("pod ") + c.pod + " fits no node").c_str());
  fw::cycle_state state = new_state(cl);

  if (std::string_view(c.plugin) == whole_profile) {
    const fw::framework& f = default_framework();
    if (auto s = f.run_pre_score(state, *pod, nodes); !s.is_success())
      return st.SkipWithError(skipped("PreScore", c, s).c_str());
    std::vector<int64_t> out(f.score_plugin_count());
    for (const node_info* n : nodes)
      if (auto s = f.score_node(state, *pod, *n, out.data()); !s.is_success())
        return st.SkipWithError(skipped("Score", c, s).c_str());
    sweep(
      st, nodes,
      [&](const node_info& n) {
        f.score_node(state, *pod, n, out.data());
        int64_t weighted = 0;
        for (size_t i = 0; i < out.size(); ++i) weighted += out[i] * f.score_weight(i);
        return weighted;
      },
      "mean_raw_weighted");
    return;
  }
  const auto plugin = make_plugin(c.plugin);
  const auto* score = dynamic_cast<const fw::score_plugin*>(plugin.get());
  if (score == nullptr) return st.SkipWithError((std::string(c.plugin) + " has no Score").c_str());
  if (const auto* ps = dynamic_cast<const fw::pre_score_plugin*>(plugin.get())) {
    if (auto s = ps->pre_score(state, *pod, nodes); !s.is_success())
      return st.SkipWithError(skipped("PreScore", c, s).c_str());
  }
  // Untimed: every node must score, so the timed loop need not look at the status.
  for (const node_info* n : nodes) {
    int64_t out = 0;
    if (auto s = score->score(state, *pod, *n, out); !s.is_success())
      return st.SkipWithError(skipped("Score", c, s).c_str());
  }
  sweep(
    st, nodes,
    [&](const node_info& n) {
      int64_t out = 0;
      score->score(state, *pod, n, out);
      return out;
    },
    "mean_raw");
}

// The whole scheduling algorithm for one pod (PreFilter .. selectHost, kube's schedulePod) with the
// default profile over the 5000-node snapshot: what `bench` reports as the raw kernel. One
// iteration is one pod; the round-robin start advances by the nodes examined, as the driver does.
//
// The ".../sampled" rows sample every cycle for plugin_execution_duration_seconds (kube samples 10%),
// reporting to the scheduler's real sink: their difference to the plain row, times 0.1, is what
// plugin-level metrics cost per pod.
const fw::framework& sampled_framework() {
  static obs::metrics_registry registry;
  static obs::kube_metrics km(registry);
  static plugin_duration_sink sink(km);
  static const std::shared_ptr<fw::framework> f = [] {
    fw::handle h;
    h.plugin_metrics = &sink;
    auto r = fw::framework::build(default_profile(), fw::in_tree_registry(), h, "profiles[0]");
    if (!r) throw std::runtime_error("default profile: " + r.err().message);
    return *r;
  }();
  return *f;
}

// The cluster's snapshot with one pod (priority 1000) nominated to node-0, as while a preemptor
// waits for its victims to go: every cycle of a lower-priority pod must count it there.
snapshot_ptr with_one_nomination(const cluster& cl) {
  auto nominee = std::make_shared<pod_info>(*incoming_pod("basic"));
  nominee->name = "preemptor";
  nominee->uid = "default-preemptor";
  nominee->priority = 1000;
  snapshot::nominated_map m;
  m[cl.nodes[0]->name].push_back(nominee);
  return std::make_shared<const snapshot>(
    cl.snap->with_nominated(std::make_shared<const snapshot::nominated_map>(std::move(m)), cl.snap->generation() + 1));
}

void schedule_one_kernel(benchmark::State& st, const char* pod_kind, bool sampled, bool nominated) {
  const cluster& cl = scheduling_basic_cluster();
  const fw::framework& f = sampled ? sampled_framework() : default_framework();
  auto pod = incoming_pod(pod_kind);
  const snapshot_ptr snap = nominated ? with_one_nomination(cl) : cl.snap;
  std::mt19937_64 rng(1);
  size_t start = 0, examined = 0;
  for (auto _ : st) {
    fw::cycle_state state;
    state.set_snapshot(snap);
    state.record_plugin_metrics = sampled;
    auto r = fw::schedule_one(f, state, *pod, *snap, start, rng);
    if (!r.result.is_success()) return st.SkipWithError(("schedule_one: " + r.result.message()).c_str());
    start += r.examined;
    examined += r.examined;
    benchmark::DoNotOptimize(r.node);
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
  st.counters["nodes_examined"] =
    benchmark::Counter(static_cast<double>(examined) / static_cast<double>(std::max<int64_t>(1, st.iterations())));
}

void register_all() {
  for (const char* kind : {"basic", "preferred-spread", "anti-affinity"})
    benchmark::RegisterBenchmark((std::string("ScheduleOne/") + kind).c_str(), schedule_one_kernel, kind, false, false)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("ScheduleOne/basic/sampled", schedule_one_kernel, "basic", true, false)
    ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("ScheduleOne/basic/one-nomination", schedule_one_kernel, "basic", false, true)
    ->Unit(benchmark::kMicrosecond);
  for (const kernel_case& c : filter_cases)
    benchmark::RegisterBenchmark((std::string("Filter/") + c.plugin + "/" + c.pod).c_str(), filter_kernel, c)
      ->Unit(benchmark::kMicrosecond);
  for (const kernel_case& c : score_cases)
    benchmark::RegisterBenchmark((std::string("Score/") + c.plugin + "/" + c.pod).c_str(), score_kernel, c)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace kas::bench

int main(int argc, char** argv) {
  kas::bench::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

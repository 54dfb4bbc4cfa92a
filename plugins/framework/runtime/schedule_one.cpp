#include "plugins/framework/runtime/schedule_one.hpp"

#include <algorithm>
#include <chrono>

namespace kas::fw {

void candidate_order(const snapshot& snap, const pre_filter_result& pr, size_t start, std::vector<uint32_t>& order,
                     node_to_status& statuses) {
  size_t n = snap.size();
  order.clear();
  if (pr.all_nodes()) {
    order.resize(n);
    size_t s = n ? start % n : 0;
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>((s + i) % n);
    return;
  }
  std::vector<uint32_t> named;
  named.reserve(pr.node_names->size());
  for (auto& name : *pr.node_names) {
    long idx = snap.index_of(name);
    if (idx >= 0) named.push_back(static_cast<uint32_t>(idx));
  }
  std::sort(named.begin(), named.end());
  size_t s = named.empty() ? 0 : start % named.size();
  order.reserve(named.size());
  for (size_t i = 0; i < named.size(); ++i) order.push_back(named[(s + i) % named.size()]);
  std::vector<std::string_view> plugins = pr.from_plugins;
  std::sort(plugins.begin(), plugins.end());
  std::string msg = "node(s) didn't satisfy plugin(s) [";
  for (size_t i = 0; i < plugins.size(); ++i) msg += (i ? " " : "") + std::string(plugins[i]);
  msg += "]";
  // Named after the narrowing plugin, so the queue requeues the pod on that plugin's events.
  statuses.absent = status(code::unschedulable_and_unresolvable, intern(msg));
  if (!plugins.empty()) statuses.absent->with_plugin(pr.from_plugins.front());
}

size_t select_host(const std::vector<int64_t>& totals, std::mt19937_64& rng) {
  size_t best = 0;
  size_t ties = 1;
  for (size_t i = 1; i < totals.size(); ++i) {
    if (totals[i] > totals[best]) {
      best = i;
      ties = 1;
    } else if (totals[i] == totals[best]) {
      ++ties;
      if (std::uniform_int_distribution<size_t>(0, ties - 1)(rng) == 0) best = i;
    }
  }
  return best;
}

namespace {
constexpr size_t prefetch_distance = 4;

void prefetch_node(const node_info& n) {
  // From `taints` to the end of `non_zero_requested`: what the default Filter and Score plugins read.
  const char* p = reinterpret_cast<const char*>(&n.taints);
  const char* end = reinterpret_cast<const char*>(&n.used_ports);
  for (; p < end; p += 64) __builtin_prefetch(p);
}

int64_t since(std::chrono::steady_clock::time_point& t) {
  auto now = std::chrono::steady_clock::now();
  int64_t d = std::chrono::duration_cast<std::chrono::nanoseconds>(now - t).count();
  t = now;
  return d;
}
}  // namespace

schedule_result schedule_one(const framework& fwk, cycle_state& state, const pod_info& pod, const snapshot& snap,
                             size_t start, std::mt19937_64& rng, std::vector<uint32_t>* ranked) {
  schedule_result out;
  if (snap.size() == 0) {
    out.result = status(code::unschedulable_and_unresolvable, "no nodes available to schedule pods");
    return out;
  }
  auto clock = std::chrono::steady_clock::now();
  pre_filter_result pr;
  auto s = fwk.run_pre_filter(state, pod, snap, pr);
  out.pre_filter_ns = since(clock);
  if (!s.is_success()) {
    if (s.is_rejected()) {
      out.statuses.absent = s;
      out.pre_filter_message = s.message();
    }
    out.result = s;
    return out;
  }
  // Every node from the start index (not materialized: only about a tenth is examined on a big
  // cluster), or the PreFilter result's nodes.
  thread_local std::vector<uint32_t> order;
  size_t n = snap.size();
  size_t first = start % n;
  size_t candidates = n;
  if (!pr.all_nodes()) {
    candidate_order(snap, pr, start, order, out.statuses);
    candidates = order.size();
  }
  size_t want = static_cast<size_t>(
    num_feasible_nodes_to_find(fwk.profile().percentage_of_nodes_to_score, static_cast<int64_t>(candidates)));
  thread_local std::vector<const node_info*> feasible;
  thread_local std::vector<uint32_t> feasible_idx;
  feasible.clear();
  feasible_idx.clear();
  bool nominated = snap.has_nominated_pods();
  auto index_at = [&](size_t i) {
    return pr.all_nodes() ? static_cast<uint32_t>(first + i < n ? first + i : first + i - n) : order[i];
  };
  for (size_t i = 0; i < candidates && feasible.size() < want; ++i) {
    uint32_t idx = index_at(i);
    const node_info& node = snap.node(idx);
    // The nodes are separate heap objects and each is read once per pod: fetch the fields the
    // filters read a few nodes ahead, so the misses overlap instead of stalling each Filter.
    if (i + prefetch_distance < candidates) prefetch_node(snap.node(index_at(i + prefetch_distance)));
    ++out.examined;
    auto fs = nominated ? fwk.run_filter_with_nominated_pods(state, pod, node, snap) : fwk.run_filter(state, pod, node);
    if (fs.is_success()) {
      feasible.push_back(&node);
      feasible_idx.push_back(idx);
    } else if (fs.get_code() == code::error) {
      out.result = fs;
      return out;
    } else {
      out.statuses.statuses.emplace(node.name, std::move(fs));
    }
  }
  out.filter_ns = since(clock);
  out.feasible = feasible.size();
  if (feasible.empty()) {
    out.result = status(code::unschedulable);
    return out;
  }
  if (feasible.size() == 1) {
    out.node = feasible_idx.front();
    return out;
  }
  s = fwk.run_pre_score(state, pod, feasible);
  out.pre_score_ns = since(clock);
  if (!s.is_success()) {
    out.result = status::error(s.message());
    return out;
  }
  size_t k = fwk.score_plugin_count();
  // Per plugin, per node (NormalizeScore's shape); reused across pods on this thread.
  thread_local std::vector<std::vector<node_score>> raw;
  s = fwk.score_nodes(state, pod, feasible, raw);
  if (!s.is_success()) {
    out.result = status::error(s.message());
    return out;
  }
  thread_local std::vector<int64_t> totals;
  s = fwk.normalize_and_weigh(state, pod, raw, totals);
  if (!s.is_success()) {
    out.result = status::error(s.message());
    return out;
  }
  if (k == 0) totals.assign(feasible.size(), 1);  // kube: with no score plugins every node scores 1
  out.score_ns = since(clock);
  size_t best = select_host(totals, rng);
  out.node = feasible_idx[best];
  if (ranked) {
    thread_local std::vector<uint32_t> by_score;
    by_score.resize(feasible.size());
    for (size_t i = 0; i < by_score.size(); ++i) by_score[i] = static_cast<uint32_t>(i);
    std::stable_sort(by_score.begin(), by_score.end(), [&](uint32_t a, uint32_t b) { return totals[a] > totals[b]; });
    ranked->clear();
    ranked->reserve(by_score.size());
    for (uint32_t i : by_score)
      if (i != best) ranked->push_back(feasible_idx[i]);
  }
  return out;
}

}  // namespace kas::fw

#include "plugins/framework/runtime/schedule_one.hpp"

#include <algorithm>
#include <chrono>

namespace kas::fw {

namespace {
constexpr size_t prefetch_distance = 4;
constexpr size_t hot_prefetch_distance = 8;

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

status no_nodes_available() {
  return status(code::unschedulable_and_unresolvable, "no nodes available to schedule pods");
}

status pre_filter_step(const framework& fwk, cycle_state& state, const pod_info& pod, const snapshot& snap,
                       pre_filter_result& pr, schedule_result& out) {
  if (snap.size() == 0) return no_nodes_available();
  auto s = fwk.run_pre_filter(state, pod, snap, pr);
  if (s.is_rejected()) {
    out.statuses.absent = s;
    out.pre_filter_message = s.message();
  }
  return s;
}

long nominated_node_step(const framework& fwk, const cycle_state& state, const pod_info& pod, const snapshot& snap,
                         const std::string& nominated) {
  if (nominated.empty()) return -1;
  long idx = snap.index_of(nominated);
  if (idx < 0) return -1;
  const node_info& node = snap.node(static_cast<size_t>(idx));
  return fwk.run_filter_with_nominated_pods(state, pod, node, snap).is_success() ? idx : -1;
}

candidate_nodes::candidate_nodes(const snapshot& snap, const pre_filter_result& pr, size_t start,
                                 node_to_status& statuses) {
  n_ = snap.size();
  first_ = n_ ? start % n_ : 0;
  if (pr.all_nodes()) return;
  all_ = false;
  if (pr.node_indexes) {
    // Already ascending snapshot indexes (a plugin's out-of-range index is dropped, not trusted).
    order_.reserve(pr.node_indexes->size());
    for (uint32_t idx : *pr.node_indexes)
      if (idx < n_) order_.push_back(idx);
  } else {
    order_.reserve(pr.node_names->size());
    for (auto& name : *pr.node_names) {
      long idx = snap.index_of(name);
      if (idx >= 0) order_.push_back(static_cast<uint32_t>(idx));
    }
    std::sort(order_.begin(), order_.end());
  }
  if (!order_.empty()) std::rotate(order_.begin(), order_.begin() + start % order_.size(), order_.end());
  std::vector<std::string_view> plugins = pr.from_plugins;
  std::sort(plugins.begin(), plugins.end());
  std::string msg = "node(s) didn't satisfy plugin(s) [";
  for (size_t i = 0; i < plugins.size(); ++i) msg += (i ? " " : "") + std::string(plugins[i]);
  msg += "]";
  // Named after the narrowing plugin, so the queue requeues the pod on that plugin's events.
  statuses.absent = status(code::unschedulable_and_unresolvable, intern(msg));
  if (!plugins.empty()) statuses.absent->with_plugin(pr.from_plugins.front());
}

size_t candidate_nodes::want(const framework& fwk) const {
  return static_cast<size_t>(
    num_feasible_nodes_to_find(fwk.profile().percentage_of_nodes_to_score, static_cast<int64_t>(size())));
}

void filtered_nodes::clear() {
  feasible.clear();
  failed.clear();
  examined = 0;
  error = status();
  verdicts.clear();
}

status filter_node(const framework& fwk, const cycle_state& state, const pod_info& pod, const node_info& node,
                   const snapshot& snap) {
  // The plain path when no pod is nominated anywhere: the same verdict, without the nominated-pod pass.
  return snap.has_nominated_pods() ? fwk.run_filter_with_nominated_pods(state, pod, node, snap)
                                   : fwk.run_filter(state, pod, node);
}

namespace {

// The snapshot indexes of the nodes where a nominated pod counts for `pod` (another pod, priority
// at least the pod's: kube's RunFilterPluginsWithNominatedPods adds exactly those), as a bitmap; null
// when there is no such node. On every other node the nominated pass is a plain Filter, so the hot
// verdict stands there. Built per call from the nominated map (usually a few nodes), into a
// per-thread buffer that lives until the next call on this thread.
const std::vector<uint64_t>* nominated_nodes_mask(const pod_info& pod, const snapshot& snap) {
  if (!snap.has_nominated_pods()) return nullptr;
  thread_local std::vector<uint64_t> mask;
  bool any = false;
  for (const auto& [name, pods] : snap.nominated()) {
    const bool counts = std::any_of(pods.begin(), pods.end(), [&](const pod_info_ptr& p) {
      return p->uid != pod.uid && p->priority >= pod.priority;
    });
    if (!counts) continue;
    const long i = snap.index_of(name);
    if (i < 0) continue;
    if (!any) mask.assign((snap.size() + 63) / 64, 0);
    any = true;
    mask[static_cast<size_t>(i) / 64] |= uint64_t{1} << (static_cast<size_t>(i) % 64);
  }
  return any ? &mask : nullptr;
}

bool in_mask(const std::vector<uint64_t>* mask, uint32_t idx) {
  return mask && ((*mask)[idx / 64] >> (idx % 64) & 1) != 0;
}

}  // namespace

void find_nodes_that_pass_filters(const framework& fwk, const cycle_state& state, const pod_info& pod,
                                  const snapshot& snap, const candidate_nodes& candidates, size_t begin, size_t end,
                                  size_t want, bool explain, filtered_nodes& out) {
  end = std::min(end, candidates.size());
  // The hot path: when the cycle's Filter can be read from node_hot records, a node they pass is
  // feasible without touching its node_info; the rest get the Filters, which word the reasons.
  // Sampled cycles (plugin metrics) and --explain run every Filter. So do the nodes where nominated
  // pods count for this pod: the full pass adds them there.
  hot_filter hot;
  const bool use_hot = !explain && !state.record_plugin_metrics && fwk.hot_filter_for(state, pod, hot);
  const std::vector<uint64_t>* nominated = use_hot ? nominated_nodes_mask(pod, snap) : nullptr;
  // One node's verdict; false on an Error, which ends the scan.
  auto record = [&](uint32_t idx, status s) {
    if (s.is_success()) {
      out.feasible.push_back(idx);
    } else if (s.get_code() == code::error) {
      out.error = std::move(s);
      return false;
    } else {
      out.failed.emplace_back(idx, std::move(s));
    }
    return true;
  };
  if (use_hot && candidates.all_nodes()) {
    // Every node from the round-robin start: the candidates are runs of consecutive snapshot
    // indexes, and each run's records lie contiguous in one chunk, so the scan walks them with a
    // pointer instead of looking each node's chunk up.
    size_t i = begin;
    while (i < end) {
      const uint32_t first = candidates[i];
      const size_t run = std::min(end - i, snap.hot_run(first));
      const node_hot* h = &snap.hot(first);
      // The next run's chunk is its own allocation: fetch its first records while this one is scanned.
      if (i + run < end) __builtin_prefetch(&snap.hot(candidates[i + run]));
      for (size_t r = 0; r < run; ++r) {
        if (want && out.feasible.size() >= want) return;
        const uint32_t idx = first + static_cast<uint32_t>(r);
        ++out.examined;
        if (hot.passes(h[r]) && !in_mask(nominated, idx)) {
          out.feasible.push_back(idx);
        } else if (!record(idx, filter_node(fwk, state, pod, snap.node(idx), snap))) {
          return;
        }
      }
      i += run;
    }
    return;
  }
  if (use_hot) {
    for (size_t i = begin; i < end; ++i) {
      if (want && out.feasible.size() >= want) break;
      uint32_t idx = candidates[i];
      // Each chunk's records are a separate allocation, and the round robin crosses chunks every
      // 64 nodes: fetch a few records ahead so a chunk's first lines are not a stall each.
      if (i + hot_prefetch_distance < end) __builtin_prefetch(&snap.hot(candidates[i + hot_prefetch_distance]));
      ++out.examined;
      if (hot.passes(snap.hot(idx)) && !in_mask(nominated, idx)) {
        out.feasible.push_back(idx);
      } else if (!record(idx, filter_node(fwk, state, pod, snap.node(idx), snap))) {
        return;
      }
    }
    return;
  }
  for (size_t i = begin; i < end; ++i) {
    bool enough = want && out.feasible.size() >= want;
    if (enough && !explain) break;
    uint32_t idx = candidates[i];
    const node_info& node = snap.node(idx);
    // The nodes are separate heap objects and each is read once per pod: fetch the fields the
    // filters read a few nodes ahead, so the misses overlap instead of stalling each Filter.
    if (i + prefetch_distance < end) prefetch_node(snap.node(candidates[i + prefetch_distance]));
    if (explain) out.verdicts.emplace_back(idx, fwk.explain_filter(state, pod, node));
    // --explain reports every node, but the scan that places the pod stops where it would without
    // it: nodes past `want` feasible ones are neither feasible, failed nor examined.
    if (enough) continue;
    ++out.examined;
    if (!record(idx, filter_node(fwk, state, pod, node, snap))) return;
  }
}

status merge_filtered(const std::vector<filtered_nodes>& ranges, size_t want, const snapshot& snap,
                      std::vector<uint32_t>& feasible, schedule_result& out) {
  for (auto& r : ranges) {
    if (r.error.get_code() == code::error) return r.error;
    for (auto idx : r.feasible)
      if (feasible.size() < want) feasible.push_back(idx);
    for (auto& [idx, s] : r.failed) out.statuses.statuses.emplace(snap.node(idx).name, s);
    out.examined += r.examined;
  }
  out.feasible = feasible.size();
  return status::ok();
}

after_filter decide_after_filter(size_t feasible) {
  if (feasible == 0) return after_filter::unschedulable;
  if (feasible == 1) return after_filter::only_one;
  return after_filter::prioritize;
}

status pre_score_step(const framework& fwk, cycle_state& state, const pod_info& pod,
                      const std::vector<const node_info*>& feasible) {
  auto s = fwk.run_pre_score(state, pod, feasible);
  return s.is_success() ? s : status::error(s.message());
}

status score_step(const framework& fwk, const cycle_state& state, const pod_info& pod,
                  const std::vector<const node_info*>& nodes, std::vector<std::vector<node_score>>& raw,
                  const node_hot* const* hot) {
  auto s = fwk.score_nodes(state, pod, nodes, raw, hot);
  return s.is_success() ? s : status::error(s.message());
}

status finish_scores(const framework& fwk, const cycle_state& state, const pod_info& pod,
                     size_t nodes, std::vector<std::vector<node_score>>& raw, std::vector<int64_t>& totals) {
  auto s = fwk.normalize_and_weigh(state, pod, raw, totals);
  if (!s.is_success()) return status::error(s.message());
  if (fwk.score_plugin_count() == 0) totals.assign(nodes, 1);
  return s;
}

size_t select_host(const std::vector<int64_t>& totals, std::mt19937_64& rng) {
  // kube's reservoir sampling draws once per node tied with the running maximum, so each of the
  // max-score nodes ends up selected with probability 1/ties. Counting the ties first and drawing
  // once over that count gives the same uniform choice for one draw per pod instead of one per tie
  // (in SchedulingBasic nearly every scored node ties).
  if (totals.empty()) return 0;
  int64_t best = totals[0];
  size_t ties = 0;
  for (int64_t t : totals) {
    if (t > best) {
      best = t;
      ties = 1;
    } else {
      ties += t == best;
    }
  }
  size_t pick = ties > 1 ? std::uniform_int_distribution<size_t>(0, ties - 1)(rng) : 0;
  for (size_t i = 0; i < totals.size(); ++i)
    if (totals[i] == best && pick-- == 0) return i;
  return 0;
}

namespace {

void rank_others(const std::vector<int64_t>& totals, size_t best, const std::vector<uint32_t>& feasible_idx,
                 std::vector<uint32_t>& ranked) {
  thread_local std::vector<uint32_t> by_score;
  by_score.resize(totals.size());
  for (size_t i = 0; i < by_score.size(); ++i) by_score[i] = static_cast<uint32_t>(i);
  std::stable_sort(by_score.begin(), by_score.end(), [&](uint32_t a, uint32_t b) { return totals[a] > totals[b]; });
  ranked.clear();
  ranked.reserve(by_score.size());
  for (uint32_t i : by_score)
    if (i != best) ranked.push_back(feasible_idx[i]);
}

}  // namespace

schedule_result schedule_one(const framework& fwk, cycle_state& state, const pod_info& pod, const snapshot& snap,
                             size_t start, std::mt19937_64& rng, std::vector<uint32_t>* ranked,
                             const std::string& nominated) {
  schedule_result out;
  auto clock = std::chrono::steady_clock::now();
  pre_filter_result pr;
  out.result = pre_filter_step(fwk, state, pod, snap, pr, out);
  out.pre_filter_ns = since(clock);
  if (!out.result.is_success()) return out;
  if (long idx = nominated_node_step(fwk, state, pod, snap, nominated); idx >= 0) {
    out.node = idx;
    out.nominated = true;
    out.feasible = 1;
    return out;
  }
  candidate_nodes candidates(snap, pr, start, out.statuses);
  thread_local filtered_nodes found;
  found.clear();
  find_nodes_that_pass_filters(fwk, state, pod, snap, candidates, 0, candidates.size(), candidates.want(fwk), false,
                               found);
  out.filter_ns = since(clock);
  out.examined = found.examined;
  out.feasible = found.feasible.size();
  if (found.error.get_code() == code::error) {
    out.result = found.error;
    return out;
  }
  switch (decide_after_filter(found.feasible.size())) {
    case after_filter::unschedulable:
      for (auto& [idx, s] : found.failed) out.statuses.statuses.emplace(snap.node(idx).name, std::move(s));
      out.result = status(code::unschedulable);
      return out;
    case after_filter::only_one:
      out.node = found.feasible.front();
      return out;
    case after_filter::prioritize: break;
  }
  thread_local std::vector<const node_info*> feasible;
  thread_local std::vector<const node_hot*> hot;
  feasible.clear();
  hot.clear();
  for (auto idx : found.feasible) {
    feasible.push_back(&snap.node(idx));
    hot.push_back(&snap.hot(idx));
  }
  out.result = pre_score_step(fwk, state, pod, feasible);
  out.pre_score_ns = since(clock);
  if (!out.result.is_success()) return out;
  // score_step then finish_scores, fused over plain rows: the whole pod is scored on this thread,
  // so nothing needs NormalizeScore's node_score lists (reused across pods on this thread).
  thread_local std::vector<int64_t> totals;
  out.result = fwk.score_and_weigh(state, pod, feasible, hot.data(), totals);
  // As score_step and finish_scores report it: an Error with the plugin's message.
  if (!out.result.is_success()) out.result = status::error(out.result.message());
  out.score_ns = since(clock);
  if (!out.result.is_success()) return out;
  size_t best = select_host(totals, rng);
  out.node = found.feasible[best];
  if (ranked) rank_others(totals, best, found.feasible, *ranked);
  return out;
}

status recheck_node(const framework& fwk, const pod_info& pod, const node_info& node, const snapshot_ptr& snap) {
  cycle_state fresh;
  fresh.set_snapshot(snap);
  pre_filter_result pr;
  schedule_result ignored;
  auto s = pre_filter_step(fwk, fresh, pod, *snap, pr, ignored);
  if (!s.is_success()) return s;
  if (!pr.contains(*snap, node.name))
    return status::unresolvable("node(s) didn't satisfy plugin(s)");
  return fwk.run_filter_with_nominated_pods(fresh, pod, node, *snap);
}

}  // namespace kas::fw

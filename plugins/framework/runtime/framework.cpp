#include "plugins/framework/runtime/framework.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace kas::fw {

namespace {

template <class Iface>
status_or_error collect(const std::vector<std::string>& names, std::string_view point,
                        const std::map<std::string, std::shared_ptr<plugin>>& built,
                        std::vector<const Iface*>& out, const std::string& path) {
  for (auto& n : names) {
    auto it = built.find(n);
    auto* p = it == built.end() ? nullptr : dynamic_cast<const Iface*>(it->second.get());
    if (!p)
      return error{path + ".plugins." + std::string(point) + ": plugin \"" + n + "\" does not extend " +
                   std::string(point)};
    out.push_back(p);
  }
  return ok_t{};
}

template <class Iface>
int index_of(const std::vector<const Iface*>& v, std::string_view name) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i]->name() == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

result<std::shared_ptr<framework>> framework::build(const profile_config& profile, const registry& reg,
                                                    const handle& h, const std::string& path) {
  auto fw = std::make_shared<framework>();
  fw->profile_ = profile;
  fw->plugin_metrics_ = h.plugin_metrics;

  // Instantiate each named plugin once, whatever the number of points it serves.
  std::map<std::string, std::shared_ptr<plugin>> built;
  auto lists = {&profile.pre_enqueue, &profile.queue_sort, &profile.pre_filter, &profile.filter,
                &profile.post_filter, &profile.pre_score,  &profile.score,      &profile.reserve,
                &profile.permit,      &profile.pre_bind,   &profile.bind,       &profile.post_bind};
  for (auto* list : lists) {
    for (auto& name : *list) {
      if (built.count(name)) continue;
      auto* f = reg.find(name);
      if (!f) return error{path + ": unknown plugin \"" + name + "\""};
      auto args_it = profile.plugin_args.find(name);
      YAML::Node args = args_it == profile.plugin_args.end() ? YAML::Node{} : args_it->second;
      auto path_it = profile.plugin_args_path.find(name);
      std::string args_path = path_it == profile.plugin_args_path.end() ? path + ".pluginConfig[" + name + "].args"
                                                                         : path_it->second;
      auto p = (*f)(args, args_path, h);
      if (!p) return p.err();
      built.emplace(name, *p);
      fw->owned_.push_back(*p);
    }
  }

#define KAS_COLLECT(list, point, member)                                              \
  if (auto r = collect(profile.list, point, built, fw->member, path); !r) return r.err();
  KAS_COLLECT(pre_enqueue, "preEnqueue", pre_enqueue_)
  KAS_COLLECT(pre_filter, "preFilter", pre_filter_)
  KAS_COLLECT(filter, "filter", filter_)
  KAS_COLLECT(post_filter, "postFilter", post_filter_)
  KAS_COLLECT(pre_score, "preScore", pre_score_)
  KAS_COLLECT(score, "score", score_)
  KAS_COLLECT(reserve, "reserve", reserve_)
  KAS_COLLECT(permit, "permit", permit_)
  KAS_COLLECT(pre_bind, "preBind", pre_bind_)
  KAS_COLLECT(bind, "bind", bind_)
  KAS_COLLECT(post_bind, "postBind", post_bind_)
#undef KAS_COLLECT

  std::vector<const queue_sort_plugin*> qs;
  if (auto r = collect(profile.queue_sort, "queueSort", built, qs, path); !r) return r.err();
  if (qs.size() != 1)
    return error{path + ".plugins.queueSort: exactly one queue sort plugin must be enabled, got " +
                 std::to_string(qs.size())};
  fw->queue_sort_ = qs.front();
  if (fw->bind_.empty()) return error{path + ".plugins.bind: at least one bind plugin is required"};
  if (fw->filter_.size() > 64 || fw->score_.size() > 64)
    return error{path + ": at most 64 filter and 64 score plugins per profile"};

  for (auto* p : fw->pre_filter_) fw->pre_filter_to_filter_.push_back(index_of(fw->filter_, p->name()));
  for (auto* p : fw->pre_score_) fw->pre_score_to_score_.push_back(index_of(fw->score_, p->name()));
  for (auto* s : fw->score_) {
    auto it = profile.score_weights.find(std::string(s->name()));
    fw->weights_.push_back(it == profile.score_weights.end() ? 1 : it->second);
  }
  for (auto& [name, p] : built) {
    if (auto* s = dynamic_cast<const sign_plugin*>(p.get())) fw->sign_.push_back(s);
    if (auto* e = dynamic_cast<const enqueue_extensions*>(p.get()))
      for (auto& ev : e->events_to_register()) fw->hints_.emplace_back(p->name(), ev);
  }
  return fw;
}

status framework::run_pre_enqueue(const pod_info& pod, const group_directory& groups,
                                  bool record_plugin_metrics) const {
  for (auto* p : pre_enqueue_) {
    auto s = call(record_plugin_metrics, metric_point::pre_enqueue, p, [&] { return p->pre_enqueue(pod, groups); });
    if (!s.is_success()) return s.with_plugin(p->name());
  }
  return status::ok();
}

const group_directory& no_groups() {
  struct none : group_directory {
    const pod_group* group(const std::string&) const override { return nullptr; }
    size_t members(const std::string&) const override { return 0; }
  };
  static const none directory;
  return directory;
}

bool framework::queue_less(const queued_pod_info& a, const queued_pod_info& b) const {
  return queue_sort_->less(a, b);
}

status framework::run_pre_filter(cycle_state& state, const pod_info& pod, const snapshot& snap,
                                 pre_filter_result& out) const {
  out = pre_filter_result{};
  status unschedulable;
  for (size_t i = 0; i < pre_filter_.size(); ++i) {
    auto* p = pre_filter_[i];
    pre_filter_result r;
    auto s = call(state.record_plugin_metrics, metric_point::pre_filter, p, [&] { return p->pre_filter(state, pod, snap, r); });
    if (s.is_skip()) {
      if (pre_filter_to_filter_[i] >= 0) state.skip_filter_mask |= uint64_t{1} << pre_filter_to_filter_[i];
      continue;
    }
    if (!s.is_success()) {
      // UnschedulableAndUnresolvable ends the cycle (no preemption). Unschedulable lets the other
      // PreFilters run, so preemption finds their cycle state (kube #119770). Anything else is an Error.
      if (s.get_code() == code::unschedulable_and_unresolvable) return s.with_plugin(p->name());
      if (s.get_code() == code::unschedulable) {
        unschedulable = s.with_plugin(p->name());
        continue;
      }
      return status::error("running PreFilter plugin \"" + std::string(p->name()) + "\": " + s.message())
        .with_plugin(p->name());
    }
    if (!r.all_nodes()) r.from_plugins = {p->name()};
    // kube's Merge; the first narrowing result is taken as is, not copied (GangScheduling's
    // topology domain hands over hundreds of names per member).
    if (out.all_nodes()) out = std::move(r);
    else if (!r.all_nodes()) out = out.merge(r, snap);
    if (out.empty()) {
      // kube keeps these plugins in a set: the message lists them sorted.
      std::vector<std::string_view> names = out.from_plugins;
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
      std::string msg;
      if (names.size() == 1) {
        msg = "node(s) didn't satisfy plugin " + std::string(names.front());
      } else {
        msg = "node(s) didn't satisfy plugin(s) [";
        for (size_t j = 0; j < names.size(); ++j) msg += (j ? " " : "") + std::string(names[j]);
        msg += "] simultaneously";
      }
      return status(code::unschedulable_and_unresolvable, intern(msg)).with_plugin(p->name());
    }
  }
  return unschedulable;
}

status framework::run_filter(const cycle_state& state, const pod_info& pod, const node_info& node) const {
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (state.skip_filter(i)) continue;
    auto* f = filter_[i];
    auto s = call_per_node(state.record_plugin_metrics, metric_point::filter, f, [&] { return f->filter(state, pod, node); });
    if (!s.is_success()) {
      if (s.get_code() != code::error && !s.is_rejected()) {
        // Wait/Skip/Pending are not valid Filter results; kube turns them into an error.
        return status::error("filter plugin \"" + std::string(filter_[i]->name()) + "\" returned " +
                             std::string(to_string(s.get_code())))
          .with_plugin(filter_[i]->name());
      }
      return s.with_plugin(filter_[i]->name());
    }
  }
  return status::ok();
}

bool framework::hot_filter_for(const cycle_state& state, const pod_info& pod, hot_filter& out) const {
  out = hot_filter{};
  for (size_t i = 0; i < filter_.size(); ++i)
    if (!state.skip_filter(i) && !filter_[i]->hot_filter(state, pod, out)) return false;
  return true;
}

bool framework::needs_global_validation(const cycle_state& state) const {
  for (size_t i = 0; i < filter_.size(); ++i)
    if (!state.skip_filter(i) && filter_[i]->cross_node()) return true;
  return false;
}

bool framework::incremental_validation_safe(const cycle_state& state, const pod_info& changed) const {
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (!filter_[i]->cross_node()) continue;
    if (state.skip_filter(i)) {
      if (filter_[i]->skip_may_change_with(changed)) return false;
      continue;
    }
    // An active cross-node filter must see the change through its PreFilter's AddPod/RemovePod.
    bool has_extensions = false;
    for (size_t k = 0; k < pre_filter_.size(); ++k)
      if (pre_filter_to_filter_[k] == static_cast<int>(i) && pre_filter_[k]->extensions()) has_extensions = true;
    if (!has_extensions) return false;
  }
  return true;
}

std::vector<filter_verdict> framework::explain_filter(const cycle_state& state, const pod_info& pod,
                                                      const node_info& node) const {
  std::vector<filter_verdict> out;
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (state.skip_filter(i)) {
      out.push_back({filter_[i]->name(), status::skip(), {}});
      continue;
    }
    auto s = filter_[i]->filter(state, pod, node);
    std::string detail = s.is_success() ? std::string{} : filter_[i]->explain(state, pod, node);
    out.push_back({filter_[i]->name(), std::move(s), std::move(detail)});
  }
  return out;
}

status framework::run_pre_filter_add_pod(cycle_state& state, const pod_info& pod, const pod_info& to_add,
                                         const node_info& node) const {
  for (size_t i = 0; i < pre_filter_.size(); ++i) {
    int fi = pre_filter_to_filter_[i];
    if (fi >= 0 && state.skip_filter(static_cast<size_t>(fi))) continue;
    if (auto* ext = pre_filter_[i]->extensions()) {
      auto s = call(state.record_plugin_metrics, metric_point::pre_filter_add_pod, pre_filter_[i],
                    [&] { return ext->add_pod(state, pod, to_add, node); });
      if (!s.is_success()) return s.with_plugin(pre_filter_[i]->name());
    }
  }
  return status::ok();
}

status framework::run_pre_filter_remove_pod(cycle_state& state, const pod_info& pod, const pod_info& to_remove,
                                            const node_info& node) const {
  for (size_t i = 0; i < pre_filter_.size(); ++i) {
    int fi = pre_filter_to_filter_[i];
    if (fi >= 0 && state.skip_filter(static_cast<size_t>(fi))) continue;
    if (auto* ext = pre_filter_[i]->extensions()) {
      auto s = call(state.record_plugin_metrics, metric_point::pre_filter_remove_pod, pre_filter_[i],
                    [&] { return ext->remove_pod(state, pod, to_remove, node); });
      if (!s.is_success()) return s.with_plugin(pre_filter_[i]->name());
    }
  }
  return status::ok();
}

status framework::run_filter_with_nominated_pods(const cycle_state& state, const pod_info& pod,
                                                 const node_info& node, const snapshot& snap) const {
  // kube's RunFilterPluginsWithNominatedPods: pods nominated to this node with priority >= the
  // pod's count as running there (first pass); if that passes, the filters run again without them,
  // because a nominated pod may never arrive and some filters (anti-affinity) fail only with it.
  const auto* nominated = snap.nominated_pods(node.name);
  if (!nominated) return run_filter(state, pod, node);
  std::shared_ptr<node_info> with_nominated;
  std::optional<cycle_state> state_with;
  for (auto& p : *nominated) {
    if (p->uid == pod.uid || p->priority < pod.priority) continue;
    if (!with_nominated) {
      with_nominated = node.clone();
      state_with = state.clone();
    }
    with_nominated->add_pod(p);
    auto s = run_pre_filter_add_pod(*state_with, pod, *p, *with_nominated);
    if (!s.is_success()) return s;
  }
  if (!with_nominated) return run_filter(state, pod, node);
  auto s = run_filter(*state_with, pod, *with_nominated);
  if (!s.is_success()) return s;
  return run_filter(state, pod, node);
}

status framework::run_post_filter(cycle_state& state, const pod_info& pod, const snapshot& snap,
                                  const node_to_status& filtered, post_filter_result& out) const {
  // kube: the first plugin that returns Success or Error ends PostFilter; otherwise the rejection
  // messages are collected.
  std::vector<std::string_view> reasons;
  std::string_view rejector;
  for (auto* p : post_filter_) {
    auto s = call(state.record_plugin_metrics, metric_point::post_filter, p, [&] { return p->post_filter(state, pod, snap, filtered, *this, out); });
    if (s.is_success() || s.get_code() == code::unschedulable_and_unresolvable) return s.with_plugin(p->name());
    if (!s.is_rejected()) {
      // Error, and any code PostFilter may not return (Wait, Skip), is an Error.
      if (s.get_code() == code::error) return s.with_plugin(p->name());
      return status::error("post filter plugin \"" + std::string(p->name()) + "\" returned " +
                           std::string(to_string(s.get_code())))
        .with_plugin(p->name());
    }
    for (auto r : s.reasons()) reasons.push_back(r);
    if (rejector.empty()) rejector = p->name();
  }
  return status(code::unschedulable, reasons).with_plugin(rejector);
}

status framework::run_pre_score(cycle_state& state, const pod_info& pod,
                                const std::vector<const node_info*>& nodes) const {
  for (size_t i = 0; i < pre_score_.size(); ++i) {
    auto* p = pre_score_[i];
    auto s = call(state.record_plugin_metrics, metric_point::pre_score, p, [&] { return p->pre_score(state, pod, nodes); });
    if (s.is_skip()) {
      if (pre_score_to_score_[i] >= 0) state.skip_score_mask |= uint64_t{1} << pre_score_to_score_[i];
      continue;
    }
    if (!s.is_success()) return s.with_plugin(pre_score_[i]->name());
  }
  return status::ok();
}

status framework::score_node(const cycle_state& state, const pod_info& pod, const node_info& node,
                             int64_t* out) const {
  for (size_t i = 0; i < score_.size(); ++i) {
    out[i] = 0;
    if (state.skip_score(i)) continue;
    auto* p = score_[i];
    auto s = call_per_node(state.record_plugin_metrics, metric_point::score, p, [&] { return p->score(state, pod, node, out[i]); });
    if (!s.is_success()) return s.with_plugin(score_[i]->name());
  }
  return status::ok();
}

status framework::score_row(size_t i, const cycle_state& state, const pod_info& pod,
                            const std::vector<const node_info*>& nodes, const node_hot* const* hot,
                            int64_t* row) const {
  const size_t n = nodes.size();
  auto* p = score_[i];
  status s;
  if (state.record_plugin_metrics && plugin_metrics_ && n > 0) {
    // A sampled cycle times the plugin's whole pass and reports it as n calls of the mean
    // duration: count and sum are exact, the buckets hold the per-node mean. (Timing each call
    // took the pass off score_nodes and cost ~8% of bench throughput with metrics on.)
    auto start = std::chrono::steady_clock::now();
    if (!hot || !p->score_hot(state, pod, hot, n, row)) s = p->score_nodes(state, pod, nodes.data(), n, row);
    plugin_metrics_->observe(metric_point::score, p->name(), s.get_code(),
                             (std::chrono::steady_clock::now() - start) / n, static_cast<uint32_t>(n));
  } else if (!hot || !p->score_hot(state, pod, hot, n, row)) {
    s = p->score_nodes(state, pod, nodes.data(), n, row);
  }
  return s.is_success() ? s : s.with_plugin(p->name());
}

status framework::invalid_score(size_t i, int64_t v) const {
  return status::error("plugin \"" + std::string(score_[i]->name()) + "\" returns an invalid score " +
                       std::to_string(v) + ", it should in the range of [0, 100] after normalizing")
    .with_plugin(score_[i]->name());
}

status framework::score_nodes(const cycle_state& state, const pod_info& pod,
                              const std::vector<const node_info*>& nodes,
                              std::vector<std::vector<node_score>>& raw, const node_hot* const* hot) const {
  const size_t n = nodes.size();
  raw.resize(score_.size());
  thread_local std::vector<int64_t> row;
  row.assign(n, 0);
  for (size_t i = 0; i < score_.size(); ++i) {
    auto& out = raw[i];
    out.resize(n);
    if (state.skip_score(i)) continue;  // NormalizeScore and the weights skip this row too
    if (auto s = score_row(i, state, pod, nodes, hot, row.data()); !s.is_success()) return s;
    for (size_t k = 0; k < n; ++k) out[k] = {nodes[k]->name, row[k]};
  }
  return status::ok();
}

status framework::normalize_and_weigh(const cycle_state& state, const pod_info& pod,
                                      std::vector<std::vector<node_score>>& raw,
                                      std::vector<int64_t>& totals) const {
  size_t n = raw.empty() ? 0 : raw.front().size();
  totals.assign(n, 0);
  for (size_t i = 0; i < score_.size(); ++i) {
    if (state.skip_score(i)) continue;
    if (score_[i]->has_normalize()) {
      auto* p = score_[i];
      auto s = call(state.record_plugin_metrics, metric_point::score_normalize, p, [&] { return p->normalize_score(state, pod, raw[i]); });
      if (!s.is_success()) return s.with_plugin(score_[i]->name());
    }
    for (size_t k = 0; k < n; ++k) {
      int64_t v = raw[i][k].score;
      if (v < min_node_score || v > max_node_score) return invalid_score(i, v);
      totals[k] += v * weights_[i];
    }
  }
  return status::ok();
}

namespace {

// totals[k] += row[k] * weight over a row, and whether every score is within [min_node_score,
// max_node_score]; one pass (the totals do not matter when a score is out of range: that is an
// Error). SSE2 has neither a 64-bit compare nor a 64-bit multiply: v is in [0, 100] iff its sign
// bit is clear and that of v - 101 is set, which vectorizes, and the usual weight 1 adds without
// multiplying.
bool weigh_row(const int64_t* row, size_t n, int64_t weight, int64_t* totals) {
  static_assert(min_node_score == 0, "the sign-bit check assumes scores start at 0");
  uint64_t any_negative = 0, all_below = ~uint64_t{0};
  constexpr auto above = static_cast<uint64_t>(max_node_score + 1);
  if (weight == 1) {
    for (size_t k = 0; k < n; ++k) {
      const auto v = static_cast<uint64_t>(row[k]);
      any_negative |= v;
      all_below &= v - above;
      totals[k] += row[k];
    }
  } else {
    for (size_t k = 0; k < n; ++k) {
      const auto v = static_cast<uint64_t>(row[k]);
      any_negative |= v;
      all_below &= v - above;
      totals[k] += row[k] * weight;
    }
  }
  return (any_negative >> 63) == 0 && (all_below >> 63) == 1;
}

}  // namespace

status framework::score_and_weigh(const cycle_state& state, const pod_info& pod,
                                  const std::vector<const node_info*>& nodes, const node_hot* const* hot,
                                  std::vector<int64_t>& totals) const {
  const size_t n = nodes.size();
  if (score_.empty()) {
    totals.assign(n, 1);
    return status::ok();
  }
  // Every plugin scores before any normalizes, as score_nodes then normalize_and_weigh do, so the
  // first failure reported is the same: rows[i * n ..] is plugin i's row.
  // Not zeroed: a plugin that scores writes its whole row, and a skipped plugin's row is not read.
  thread_local std::vector<int64_t> rows;
  rows.resize(score_.size() * n);
  for (size_t i = 0; i < score_.size(); ++i)
    if (!state.skip_score(i))
      if (auto s = score_row(i, state, pod, nodes, hot, rows.data() + i * n); !s.is_success()) return s;
  totals.assign(n, 0);
  for (size_t i = 0; i < score_.size(); ++i) {
    if (state.skip_score(i)) continue;
    auto* p = score_[i];
    int64_t* row = rows.data() + i * n;
    if (p->has_normalize()) {
      auto s = call(state.record_plugin_metrics, metric_point::score_normalize, p,
                    [&] { return p->normalize_row(state, pod, nodes.data(), n, row); });
      if (!s.is_success()) return s.with_plugin(p->name());
    }
    if (!weigh_row(row, n, weights_[i], totals.data()))
      return invalid_score(i, *std::find_if(row, row + n, [](int64_t v) { return v < min_node_score || v > max_node_score; }));
  }
  return status::ok();
}

status framework::run_reserve(cycle_state& state, const pod_info& pod, const std::string& node) const {
  for (auto* p : reserve_) {
    auto s = call(state.record_plugin_metrics, metric_point::reserve, p, [&] { return p->reserve(state, pod, node); });
    if (!s.is_success()) return s.with_plugin(p->name());
  }
  return status::ok();
}

void framework::run_unreserve(cycle_state& state, const pod_info& pod, const std::string& node) const {
  // Reverse order, every plugin, even those whose Reserve never ran: Unreserve must be idempotent.
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it) {
    auto* p = *it;
    call(state.record_plugin_metrics, metric_point::unreserve, p, [&] {
      p->unreserve(state, pod, node);
      return status::ok();
    });
  }
}

status framework::run_permit(cycle_state& state, const pod_info& pod, const std::string& node,
                             std::vector<std::pair<std::string_view, std::chrono::milliseconds>>& waits) const {
  waits.clear();
  for (auto* p : permit_) {
    std::chrono::milliseconds timeout{0};
    auto s = call(state.record_plugin_metrics, metric_point::permit, p, [&] { return p->permit(state, pod, node, timeout); });
    if (s.is_wait()) {
      // kube caps a plugin's wait at 15 minutes.
      waits.emplace_back(p->name(), std::min(timeout, std::chrono::milliseconds(15 * 60 * 1000)));
      continue;
    }
    if (!s.is_success()) {
      if (s.is_rejected()) return s.with_plugin(p->name());
      return status::error("running Permit plugin \"" + std::string(p->name()) + "\": " + s.message())
        .with_plugin(p->name());
    }
  }
  if (!waits.empty()) return status(code::wait);
  return status::ok();
}

status framework::run_pre_bind_pre_flight(cycle_state& state, const pod_info& pod, const std::string& node) const {
  // Skip from every plugin means PreBind has nothing to do.
  bool any = false;
  for (auto* p : pre_bind_) {
    auto s = call(state.record_plugin_metrics, metric_point::pre_bind_pre_flight, p, [&] { return p->pre_bind_pre_flight(state, pod, node); });
    if (s.is_skip()) continue;
    if (!s.is_success()) return s.with_plugin(p->name());
    any = true;
  }
  return any ? status::ok() : status::skip();
}

status framework::run_pre_bind(cycle_state& state, const pod_info& pod, const std::string& node) const {
  for (auto* p : pre_bind_) {
    auto s = call(state.record_plugin_metrics, metric_point::pre_bind, p, [&] { return p->pre_bind(state, pod, node); });
    if (s.is_skip()) continue;
    if (!s.is_success()) return s.with_plugin(p->name());
  }
  return status::ok();
}

status framework::run_pre_bind_from(cycle_state& state, const pod_info& pod, const std::string& node, size_t from,
                                    std::function<void(status, size_t)> done) const {
  for (size_t i = from; i < pre_bind_.size(); ++i) {
    auto* p = pre_bind_[i];
    std::string_view name = p->name();
    auto s = call(state.record_plugin_metrics, metric_point::pre_bind, p, [&] {
      return p->pre_bind_async(state, pod, node, [done, name, i](status r) {
        done(r.is_success() || r.is_skip() ? r : r.with_plugin(name), i);
      });
    });
    if (s.get_code() == code::pending) return s;
    if (s.is_skip()) continue;
    if (!s.is_success()) return s.with_plugin(name);
  }
  return status::ok();
}

status framework::run_bind(const cycle_state& state, const pod_info& pod, const std::string& node,
                           bind_callback done) const {
  for (auto* p : bind_) {
    auto s = call(state.record_plugin_metrics, metric_point::bind, p, [&] { return p->bind(state, pod, node, done); });
    if (s.is_skip()) continue;
    return s.with_plugin(p->name());
  }
  return status(code::skip);
}

void framework::run_post_bind(const cycle_state& state, const pod_info& pod, const std::string& node) const {
  for (auto* p : post_bind_)
    call(state.record_plugin_metrics, metric_point::post_bind, p, [&] {
      p->post_bind(state, pod, node);
      return status::ok();
    });
}

std::string framework::sign_pod(const pod_info& pod) const {
  std::string sig = profile_.scheduler_name;
  for (auto* p : sign_) {
    std::string part;
    if (!p->sign_pod(pod, part)) return {};
    sig += '\x1f';
    sig += part;
  }
  return sig;
}

std::string_view to_string(metric_point p) {
  switch (p) {
    case metric_point::pre_enqueue: return "PreEnqueue";
    case metric_point::pre_filter: return "PreFilter";
    case metric_point::pre_filter_add_pod: return "PreFilterExtensionAddPod";
    case metric_point::pre_filter_remove_pod: return "PreFilterExtensionRemovePod";
    case metric_point::filter: return "Filter";
    case metric_point::post_filter: return "PostFilter";
    case metric_point::pre_score: return "PreScore";
    case metric_point::score: return "Score";
    case metric_point::score_normalize: return "ScoreExtensionNormalize";
    case metric_point::reserve: return "Reserve";
    case metric_point::unreserve: return "Unreserve";
    case metric_point::permit: return "Permit";
    case metric_point::pre_bind_pre_flight: return "PreBindPreFlight";
    case metric_point::pre_bind: return "PreBind";
    case metric_point::bind: return "Bind";
    case metric_point::post_bind: return "PostBind";
    case metric_point::count_: break;
  }
  return "Unknown";
}

int64_t num_feasible_nodes_to_find(std::optional<int32_t> percentage, int64_t n) {
  constexpr int64_t min_feasible = 100;
  if (n < min_feasible) return n;
  int64_t pct = percentage.value_or(0);
  if (pct <= 0 || pct > 100) {
    if (pct >= 100) return n;
    pct = 50 - n / 125;
    if (pct < 5) pct = 5;
  }
  int64_t k = n * pct / 100;
  return k < min_feasible ? min_feasible : k;
}

std::string fit_error_message(size_t num_all_nodes, const node_to_status& statuses,
                              const std::string& pre_filter_msg, const std::string& post_filter_msg) {
  std::string msg = "0/" + std::to_string(num_all_nodes) + " nodes are available:";
  if (!pre_filter_msg.empty()) {
    msg += " " + pre_filter_msg + ".";
  } else {
    std::map<std::string_view, int64_t> histogram;
    for (auto& [node, s] : statuses.statuses)
      for (auto r : s.reasons()) histogram[r]++;
    if (statuses.absent) {
      int64_t absent = static_cast<int64_t>(num_all_nodes) - static_cast<int64_t>(statuses.statuses.size());
      if (absent > 0)
        for (auto r : statuses.absent->reasons()) histogram[r] += absent;
    }
    std::vector<std::string> parts;
    for (auto& [reason, count] : histogram) parts.push_back(std::to_string(count) + " " + std::string(reason));
    std::sort(parts.begin(), parts.end());
    // kube adds the histogram only when it has entries: no reasons leaves "0/N nodes are available:".
    if (!parts.empty()) {
      msg += " ";
      for (size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
      msg += ".";
    }
  }
  // The PostFilter message brings its own final period (it is itself a FitError text).
  if (!post_filter_msg.empty()) msg += " " + post_filter_msg;
  return msg;
}

}  // namespace kas::fw

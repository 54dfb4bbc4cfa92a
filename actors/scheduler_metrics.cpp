#include "actors/scheduler_metrics.hpp"

#include <algorithm>

namespace kas {

namespace {

constexpr const char* result_labels[3] = {obs::kube_label::scheduled, obs::kube_label::unschedulable,
                                          obs::kube_label::error};

}  // namespace

scheduler_series::scheduler_series(obs::metrics_registry& r, obs::kube_metrics& km,
                                   const std::vector<std::string>& profiles)
  : km_(km),
    permit_success_(r.histogram_series(km.permit_wait_duration, {obs::kube_label::status_success})),
    permit_unschedulable_(r.histogram_series(km.permit_wait_duration, {obs::kube_label::status_unschedulable})),
    pending_{&r.gauge_series(km.pending_pods, {obs::kube_label::queue_active}),
             &r.gauge_series(km.pending_pods, {obs::kube_label::queue_backoff}),
             &r.gauge_series(km.pending_pods, {obs::kube_label::queue_unschedulable}),
             &r.gauge_series(km.pending_pods, {obs::kube_label::queue_gated})},
    cache_nodes_(r.gauge_series(km.cache_size, {obs::kube_label::cache_nodes})),
    cache_pods_(r.gauge_series(km.cache_size, {obs::kube_label::cache_pods})),
    cache_assumed_(r.gauge_series(km.cache_size, {obs::kube_label::cache_assumed_pods})) {
  auto resolve = [&](const std::string& profile) {
    profile_series ps;
    ps.profile = profile;
    for (size_t i = 0; i < 3; ++i) {
      ps.attempts[i] = &r.counter_series(km.schedule_attempts, {result_labels[i], profile});
      ps.durations[i] = &r.histogram_series(km.scheduling_attempt_duration, {result_labels[i], profile});
    }
    return ps;
  };
  for (auto& p : profiles) profiles_.push_back(resolve(p));
  other_ = profiles_.empty() ? resolve("default-scheduler") : profiles_.front();
}

const scheduler_series::profile_series& scheduler_series::for_profile(std::string_view profile) const {
  for (auto& p : profiles_)
    if (p.profile == profile) return p;
  return other_;
}

void scheduler_series::attempt(std::string_view profile, attempt_result r,
                               std::chrono::steady_clock::duration took) const {
  auto& ps = for_profile(profile);
  auto i = static_cast<size_t>(r);
  ps.attempts[i]->inc();
  if (took.count() >= 0) ps.durations[i]->observe_duration(took);
}

void scheduler_series::pod_scheduled(int attempts, std::chrono::steady_clock::duration since_first_attempt) const {
  if (!obs::recording()) return;  // nor create an {attempts} series that would stay at zero
  km_.pod_scheduling_attempts.observe(static_cast<double>(attempts));
  // kube's getAttemptsLabel: "1".."14", then "15+".
  size_t i = static_cast<size_t>(std::clamp(attempts, 0, 15));
  obs::histogram* h = sli_[i].load(std::memory_order_acquire);
  if (!h) {
    // family::histogram_series returns the same series to racing callers, so a lost race is harmless.
    h = &km_.pod_scheduling_sli_duration.histogram_series({i >= 15 ? std::string("15+") : std::to_string(i)});
    sli_[i].store(h, std::memory_order_release);
  }
  h->observe_duration(since_first_attempt);
}

size_t plugin_duration_sink::plugin_id(std::string_view plugin) const {
  size_t n = used_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i)
    if (names_[i].load(std::memory_order_relaxed) == plugin.data() &&
        sizes_[i].load(std::memory_order_relaxed) == plugin.size())
      return i;
  std::lock_guard<std::mutex> lock(grow_);
  n = used_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; ++i)
    if (names_[i].load(std::memory_order_relaxed) == plugin.data() &&
        sizes_[i].load(std::memory_order_relaxed) == plugin.size())
      return i;
  if (n == max_plugins) return max_plugins;  // more distinct plugins than any profile set has
  names_[n].store(plugin.data(), std::memory_order_relaxed);
  sizes_[n].store(plugin.size(), std::memory_order_relaxed);
  used_.store(n + 1, std::memory_order_release);
  return n;
}

void plugin_duration_sink::observe(fw::metric_point point, std::string_view plugin, fw::code result,
                                   std::chrono::steady_clock::duration took, uint32_t weight) const {
  size_t id = plugin_id(plugin);
  if (id == max_plugins) return;
  size_t slot = (static_cast<size_t>(point) * max_plugins + id) * codes + static_cast<size_t>(result);
  obs::histogram* h = series_[slot].load(std::memory_order_acquire);
  if (!h) {
    // Two threads may both resolve it: the family hands both the same series.
    h = &km_.plugin_execution_duration.histogram_series(
      {std::string(plugin), std::string(fw::to_string(point)), std::string(fw::to_string(result))});
    series_[slot].store(h, std::memory_order_release);
  }
  h->observe(std::chrono::duration<double>(took).count(), weight);
}

}  // namespace kas

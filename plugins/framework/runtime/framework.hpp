#pragma once
// framework: one profile's plugins, ordered per extension point, and the runners that call them with
// kube-scheduler's semantics (framework/runtime/framework.go). Synchronous and CAF-free: actors call
// these from their handlers. Const runners are thread-safe (plugins are stateless between cycles).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "config/profile.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"
#include "plugins/framework/plugin_metrics.hpp"
#include "plugins/framework/registry.hpp"

namespace kas::fw {

// A plugin's verdict on one node, for --explain.
struct filter_verdict {
  std::string_view plugin;
  status result;
  std::string detail;  // the plugin's explain() on a rejection: what exactly did not fit
};

class framework : public framework_ops {
public:
  static result<std::shared_ptr<framework>> build(const profile_config& profile, const registry& reg,
                                                  const handle& h, const std::string& path);

  const std::string& scheduler_name() const { return profile_.scheduler_name; }
  const profile_config& profile() const { return profile_; }

  // Queueing.
  // record_plugin_metrics: time each plugin (the queue samples PreEnqueue runs as kube does).
  status run_pre_enqueue(const pod_info& pod, const group_directory& groups = no_groups(),
                         bool record_plugin_metrics = false) const;
  bool queue_less(const queued_pod_info& a, const queued_pod_info& b) const;
  // Events each plugin registered (EnqueueExtensions), keyed by plugin name.
  const std::vector<std::pair<std::string_view, cluster_event_with_hint>>& queueing_hints() const {
    return hints_;
  }

  // Scheduling cycle.
  status run_pre_filter(cycle_state& state, const pod_info& pod, const snapshot& snap,
                        pre_filter_result& out) const;
  status run_filter(const cycle_state& state, const pod_info& pod, const node_info& node) const;
  // The cycle's Filter over node_hot records (after PreFilter): true when every Filter plugin that
  // runs could express its part in `out`; then out.passes(hot) implies run_filter succeeds.
  bool hot_filter_for(const cycle_state& state, const pod_info& pod, hot_filter& out) const;
  // Every filter plugin's verdict on one node (no early exit), for explanations.
  std::vector<filter_verdict> explain_filter(const cycle_state& state, const pod_info& pod,
                                             const node_info& node) const;
  status run_pre_filter_add_pod(cycle_state& state, const pod_info& pod, const pod_info& to_add,
                                const node_info& node) const override;
  status run_pre_filter_remove_pod(cycle_state& state, const pod_info& pod, const pod_info& to_remove,
                                   const node_info& node) const override;
  status run_filter_with_nominated_pods(const cycle_state& state, const pod_info& pod, const node_info& node,
                                        const snapshot& snap) const override;
  bool has_post_filter() const { return !post_filter_.empty(); }
  status run_post_filter(cycle_state& state, const pod_info& pod, const snapshot& snap,
                         const node_to_status& filtered, post_filter_result& out) const;
  status run_pre_score(cycle_state& state, const pod_info& pod, const std::vector<const node_info*>& nodes) const;

  // Score: raw scores, one row per score plugin (index = position in score_plugins()).
  size_t score_plugin_count() const { return score_.size(); }
  std::string_view score_plugin_name(size_t i) const { return score_[i]->name(); }
  int64_t score_weight(size_t i) const { return weights_[i]; }
  bool has_score_plugins() const { return !score_.empty(); }
  // Scores one node with every non-skipped plugin; out has score_plugin_count() entries.
  status score_node(const cycle_state& state, const pod_info& pod, const node_info& node, int64_t* out) const;
  // Scores every node with every plugin, plugin by plugin (each plugin's score_nodes loop):
  // raw[p][i] = {nodes[i]->name, plugin p's raw score}; a skipped plugin's row is sized but not written
  // (normalize_and_weigh skips it).
  // With `hot` (hot[i] the record of nodes[i]), plugins that can score from it do.
  status score_nodes(const cycle_state& state, const pod_info& pod, const std::vector<const node_info*>& nodes,
                     std::vector<std::vector<node_score>>& raw, const node_hot* const* hot = nullptr) const;
  // NormalizeScore (per plugin, over all scored nodes) then weights; totals[i] for node i.
  // `raw` is per plugin, per node, in the same node order; it is normalized in place.
  status normalize_and_weigh(const cycle_state& state, const pod_info& pod,
                             std::vector<std::vector<node_score>>& raw, std::vector<int64_t>& totals) const;
  // score_nodes then normalize_and_weigh for nodes scored on one thread, over plain int64 rows
  // (normalize_row) instead of node_score lists: the same totals, the same first failure. Every
  // node totals 1 without Score plugins (finish_scores' rule).
  status score_and_weigh(const cycle_state& state, const pod_info& pod, const std::vector<const node_info*>& nodes,
                         const node_hot* const* hot, std::vector<int64_t>& totals) const;

  status run_reserve(cycle_state& state, const pod_info& pod, const std::string& node) const;
  void run_unreserve(cycle_state& state, const pod_info& pod, const std::string& node) const;
  // Success, Wait (timeouts filled per waiting plugin) or a rejection.
  status run_permit(cycle_state& state, const pod_info& pod, const std::string& node,
                    std::vector<std::pair<std::string_view, std::chrono::milliseconds>>& waits) const;

  // Binding cycle.
  status run_pre_bind_pre_flight(cycle_state& state, const pod_info& pod, const std::string& node) const;
  status run_pre_bind(cycle_state& state, const pod_info& pod, const std::string& node) const;
  // PreBind from plugin index `from` on, in order, through pre_bind_async. Pending: a plugin went
  // asynchronous and calls `done` once, with its result and its index; on success the caller
  // resumes the chain at index + 1 (on its own thread: the binder gets the result as a message).
  status run_pre_bind_from(cycle_state& state, const pod_info& pod, const std::string& node, size_t from,
                           std::function<void(status, size_t)> done) const;
  // Asks bind plugins in order; the first non-Skip wins. Returns Pending if `done` will be called.
  status run_bind(const cycle_state& state, const pod_info& pod, const std::string& node, bind_callback done) const;
  void run_post_bind(const cycle_state& state, const pod_info& pod, const std::string& node) const;

  // SignPod: the pod's batching signature, or empty if any plugin declines to sign it.
  std::string sign_pod(const pod_info& pod) const;

  // Whether a cross-node Filter plugin is active (not skipped) in this cycle.
  bool needs_global_validation(const cycle_state& state) const;
  // Whether this cycle's PreFilter state stays exact when `changed` is added or removed through the
  // PreFilterExtensions: no skipped cross-node plugin would have run with it (skip_may_change_with),
  // and every active cross-node plugin has extensions.
  bool incremental_validation_safe(const cycle_state& state, const pod_info& changed) const;

  size_t filter_plugin_count() const { return filter_.size(); }
  std::string_view filter_plugin_name(size_t i) const { return filter_[i]->name(); }

private:
  // Score plugin i's pass over `nodes` into `row` (from the hot records when it can), timed as one
  // sampled observation when the cycle records plugin metrics.
  status score_row(size_t i, const cycle_state& state, const pod_info& pod, const std::vector<const node_info*>& nodes,
                   const node_hot* const* hot, int64_t* row) const;
  // The Error for plugin i's score v outside [min_node_score, max_node_score] after NormalizeScore.
  status invalid_score(size_t i, int64_t v) const;
  // Runs one plugin call; in a sampled cycle (record_plugin_metrics) it is timed and reported.
  template <class F>
  status call(bool record, metric_point point, const plugin* p, F&& f, uint32_t weight = 1) const {
    if (!record || !plugin_metrics_) return f();
    auto start = std::chrono::steady_clock::now();
    status s = f();
    plugin_metrics_->observe(point, p->name(), s.get_code(), std::chrono::steady_clock::now() - start, weight);
    return s;
  }
  // The same for calls made once per node (Filter, score_node): timed 1 in per_node_timing_every.
  template <class F>
  status call_per_node(bool record, metric_point point, const plugin* p, F&& f) const {
    return call(record && draw_per_node_timing(), point, p, std::forward<F>(f), per_node_timing_every);
  }
  // True 1 time in per_node_timing_every, from a per-thread xorshift generator.
  static bool draw_per_node_timing() {
    thread_local uint32_t x = 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x % per_node_timing_every == 0;
  }

  profile_config profile_;
  const plugin_metrics_sink* plugin_metrics_ = nullptr;
  std::vector<std::shared_ptr<plugin>> owned_;
  std::vector<const pre_enqueue_plugin*> pre_enqueue_;
  const queue_sort_plugin* queue_sort_ = nullptr;
  std::vector<const pre_filter_plugin*> pre_filter_;
  std::vector<const filter_plugin*> filter_;
  // For each pre_filter_ entry, the index of the same plugin in filter_ (or -1): Skip at PreFilter
  // skips exactly that Filter.
  std::vector<int> pre_filter_to_filter_;
  std::vector<const post_filter_plugin*> post_filter_;
  std::vector<const pre_score_plugin*> pre_score_;
  std::vector<int> pre_score_to_score_;
  std::vector<const score_plugin*> score_;
  std::vector<int64_t> weights_;
  std::vector<const reserve_plugin*> reserve_;
  std::vector<const permit_plugin*> permit_;
  std::vector<const pre_bind_plugin*> pre_bind_;
  std::vector<const bind_plugin*> bind_;
  std::vector<const post_bind_plugin*> post_bind_;
  std::vector<const sign_plugin*> sign_;
  std::vector<std::pair<std::string_view, cluster_event_with_hint>> hints_;
};

using framework_ptr = std::shared_ptr<const framework>;

// kube's numFeasibleNodesToFind: adaptive percentage max(50 - n/125, 5)% with at least 100 nodes.
int64_t num_feasible_nodes_to_find(std::optional<int32_t> percentage, int64_t num_all_nodes);

// kube's FitError message: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated
// taint(s)." (reasons counted per node, sorted as strings), with a PreFilter message replacing the
// histogram and an optional PostFilter message appended.
std::string fit_error_message(size_t num_all_nodes, const node_to_status& statuses,
                              const std::string& pre_filter_msg, const std::string& post_filter_msg);

}  // namespace kas::fw

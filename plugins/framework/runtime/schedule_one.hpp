#pragma once
// The scheduling algorithm (kube's schedulePod), once, as named steps over node ranges:
//
//   pre_filter_step ─ rejected/error ─────────────────────────────────────> FitError / Error
//        │ (no nodes at all: no_nodes_available, UnschedulableAndUnresolvable)
//   nominated_node_step ─ the nominated node passes Filter ───────────────> that node, no scoring
//        │
//   candidate_nodes(start)  every node, or the PreFilterResult's, round robin from `start`
//   find_nodes_that_pass_filters over [begin, end) of the candidates, until `want` feasible
//   merge_filtered          ranges in examination order -> the first `want` feasible (fan-out only)
//   decide_after_filter     none -> FitError; one -> selected without scoring; else prioritize
//   pre_score_step          a failure is an Error
//   score_step              raw scores per plugin over some nodes (concatenated across ranges)
//   finish_scores           NormalizeScore, weights, totals (every node scores 1 without Score plugins)
//   select_host             highest total, ties broken uniformly at random
//
// Three callers compose them: schedule_one (a whole pod on one thread: a worker when pods are spread
// over workers, and bench's raw-kernel loop), the cycle driver's node-range fan-out (it runs the
// steps that need the whole picture and sends ranges of find_nodes_that_pass_filters / score_step to
// the workers), and the snapshot cache's re-validation at assume (recheck_node). PostFilter,
// Reserve and Permit are the caller's: they need the cluster and the actors.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "plugins/framework/runtime/framework.hpp"

namespace kas::fw {

struct schedule_result {
  status result;                 // Success, or the rejection / Error that ended the cycle
  long node = -1;                // snapshot index of the selected node (Success)
  size_t examined = 0;           // nodes filtered: the caller advances its start index by this
  size_t feasible = 0;           // feasible nodes found
  bool nominated = false;        // the node is the pod's nominated node (kube's evaluateNominatedNode)
  node_to_status statuses;       // per-node rejections (failure only; filled for the FitError)
  std::string pre_filter_message;  // a PreFilter rejection's message (FitError replaces the histogram)
  // Time spent per extension point (kube's framework_extension_point_duration_seconds), in ns; a
  // phase that did not run stays 0.
  int64_t pre_filter_ns = 0, filter_ns = 0, pre_score_ns = 0, score_ns = 0;
};

// kube's ErrNoNodesAvailable. UnschedulableAndUnresolvable, not an Error: the pod waits in the
// unschedulable pool for a node event instead of backing off and retrying forever.
status no_nodes_available();

// Step 1: PreFilter. A rejection sets the FitError's PreFilter message and the status of every node
// (statuses.absent) in `out`; an empty snapshot is no_nodes_available().
status pre_filter_step(const framework& fwk, cycle_state& state, const pod_info& pod, const snapshot& snap,
                       pre_filter_result& pr, schedule_result& out);

// Step 2: kube's evaluateNominatedNode. The snapshot index of `nominated` if it exists and passes
// Filter (nominated pods counted), else -1.
long nominated_node_step(const framework& fwk, const cycle_state& state, const pod_info& pod, const snapshot& snap,
                         const std::string& nominated);

// Step 3a: the candidate nodes in examination order: every node from the round-robin `start`
// (not materialized), or a PreFilterResult's nodes sorted by snapshot index, from `start`. For the
// latter the nodes left out get "node(s) didn't satisfy plugin(s) [...]" in `statuses.absent`.
class candidate_nodes {
public:
  candidate_nodes() = default;
  candidate_nodes(const snapshot& snap, const pre_filter_result& pr, size_t start, node_to_status& statuses);
  size_t size() const { return all_ ? n_ : order_.size(); }
  uint32_t operator[](size_t i) const {
    return all_ ? static_cast<uint32_t>(first_ + i < n_ ? first_ + i : first_ + i - n_) : order_[i];
  }
  // Every node, in snapshot order from the start index: candidate i + 1 is node (*this)[i] + 1
  // until the index wraps to 0.
  bool all_nodes() const { return all_; }
  // kube's numFeasibleNodesToFind over these candidates.
  size_t want(const framework& fwk) const;

private:
  bool all_ = true;
  size_t first_ = 0, n_ = 0;
  std::vector<uint32_t> order_;
};

// Step 3b: one range of kube's findNodesThatPassFilters.
struct filtered_nodes {
  std::vector<uint32_t> feasible;                    // snapshot indexes, in examination order
  std::vector<std::pair<uint32_t, status>> failed;   // snapshot index, rejection
  size_t examined = 0;
  status error;                                      // the first Error from a plugin (ends the range)
  std::vector<std::pair<uint32_t, std::vector<filter_verdict>>> verdicts;  // explain only
  void clear();
};

// One node through Filter, nominated pods counted when any pod is nominated (kube's
// RunFilterPluginsWithNominatedPods).
status filter_node(const framework& fwk, const cycle_state& state, const pod_info& pod, const node_info& node,
                   const snapshot& snap);

// Filters candidates [begin, end) in order until `want` are feasible (0: all of them). With
// `explain`, every plugin's verdict on every node of the range is recorded as well; what is
// feasible, failed and examined is the same as without it (--explain never changes the answer).
void find_nodes_that_pass_filters(const framework& fwk, const cycle_state& state, const pod_info& pod,
                                  const snapshot& snap, const candidate_nodes& candidates, size_t begin, size_t end,
                                  size_t want, bool explain, filtered_nodes& out);

// Step 3c, the node-range fan-out's only own code: ranges (each searched for the full `want`) merged
// in examination order, keeping the first `want` feasible nodes, as one sequential scan would. Adds
// the rejections to out.statuses and the examined counts to out.examined; returns the first Error.
status merge_filtered(const std::vector<filtered_nodes>& ranges, size_t want, const snapshot& snap,
                      std::vector<uint32_t>& feasible, schedule_result& out);

// Step 4: after filtering. No feasible node is a FitError; exactly one is taken without scoring
// (--explain included: it then shows no scores, as nothing was scored).
enum class after_filter { unschedulable, only_one, prioritize };
after_filter decide_after_filter(size_t feasible);

// Step 5: PreScore. A failure is an Error.
status pre_score_step(const framework& fwk, cycle_state& state, const pod_info& pod,
                      const std::vector<const node_info*>& feasible);

// Step 6: the Score plugins' raw scores for `nodes`, raw[plugin][i] (NormalizeScore's shape). Ranges
// scored apart are concatenated per plugin, in order. A failure is an Error.
// With `hot` (hot[i] is nodes[i]'s record), plugins that can score from node_hot do.
status score_step(const framework& fwk, const cycle_state& state, const pod_info& pod,
                  const std::vector<const node_info*>& nodes, std::vector<std::vector<node_score>>& raw,
                  const node_hot* const* hot = nullptr);

// Step 7: NormalizeScore and weights into totals for `nodes` nodes; every node scores 1 without
// Score plugins.
status finish_scores(const framework& fwk, const cycle_state& state, const pod_info& pod, size_t nodes,
                     std::vector<std::vector<node_score>>& raw, std::vector<int64_t>& totals);

// Step 8: kube's selectHost: the highest total, ties broken uniformly at random (kube samples a
// reservoir; one draw over the number of ties gives the same distribution).
size_t select_host(const std::vector<int64_t>& totals, std::mt19937_64& rng);

// The whole algorithm over `snap` for `pod` with a fresh `state` (whose snapshot must be `snap`),
// from the round-robin index `start`; `nominated` names the pod's nominated node, if any. With
// `ranked`, it also lists the other scored nodes by descending total (opportunistic batching places
// the next pod of the same signature on the head of that list).
schedule_result schedule_one(const framework& fwk, cycle_state& state, const pod_info& pod, const snapshot& snap,
                             size_t start, std::mt19937_64& rng, std::vector<uint32_t>* ranked = nullptr,
                             const std::string& nominated = {});

// The reservation check the snapshot cache runs when a cross-node plugin is active and the cluster
// changed since the pod's snapshot: PreFilter again on `snap` (a fresh state), the node must be
// among a PreFilterResult's nodes, and pass Filter.
status recheck_node(const framework& fwk, const pod_info& pod, const node_info& node, const snapshot_ptr& snap);

}  // namespace kas::fw

#pragma once
// schedule_one: one pod's scheduling algorithm, start to end, on one thread (kube's schedulePod):
// PreFilter, Filter from the round-robin start index until the adaptive feasible count is found,
// PreScore, Score, NormalizeScore and weights, then selectHost. PostFilter, Reserve and Permit are
// the caller's: they need the cluster and the actors.
//
// A filter_score_worker runs it for a whole pod when pods are spread over workers, and `bench`
// runs it in a plain loop to measure the raw kernel throughput.
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
  node_to_status statuses;       // per-node rejections (failure only; filled for the FitError)
  std::string pre_filter_message;  // a PreFilter rejection's message (FitError replaces the histogram)
  // Time spent per extension point (kube's framework_extension_point_duration_seconds), in ns; a
  // phase that did not run stays 0.
  int64_t pre_filter_ns = 0, filter_ns = 0, pre_score_ns = 0, score_ns = 0;
};

// Candidate nodes in examination order: every node from `start` round robin, or a PreFilter
// result's named nodes (sorted by snapshot index) from `start`. Also sets the "didn't satisfy
// plugin(s)" status for nodes a PreFilter result excluded.
void candidate_order(const snapshot& snap, const pre_filter_result& pr, size_t start, std::vector<uint32_t>& order,
                     node_to_status& statuses);

// kube's selectHost: the highest total, ties broken uniformly at random (reservoir sampling).
size_t select_host(const std::vector<int64_t>& totals, std::mt19937_64& rng);

// Runs the algorithm over `snap` for `pod` with a fresh `state` (whose snapshot must be `snap`).
// With `ranked`, it also lists the other scored nodes by descending total (opportunistic batching
// places the next pod of the same signature on the head of that list).
schedule_result schedule_one(const framework& fwk, cycle_state& state, const pod_info& pod, const snapshot& snap,
                             size_t start, std::mt19937_64& rng, std::vector<uint32_t>* ranked = nullptr);

}  // namespace kas::fw

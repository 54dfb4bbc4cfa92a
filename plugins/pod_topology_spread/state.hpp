#pragma once
// PodTopologySpread's cycle-state entries (kube's preFilterState and preScoreState).
#include <climits>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/pod_info.hpp"
#include "plugins/framework/cycle_state.hpp"

namespace kas::plugins::pts {

// The two domains with the fewest matching pods (kube's criticalPaths). paths[0] always holds the
// minimum; paths[1] is >= it but not necessarily the second minimum. This suffices because
// preemption only removes pods of one node from its own copy of the state.
struct critical_paths {
  struct path {
    std::string value;
    int match_num = INT_MAX;  // kube starts both at math.MaxInt32
  };
  path p[2];
  void update(const std::string& value, int num);
};

struct pre_filter_state final : fw::state_data {
  // Immutable once PreFilter wrote it, so clones share it.
  std::shared_ptr<const std::vector<spread_constraint>> constraints;
  std::vector<critical_paths> paths;  // indexed by constraint
  std::vector<std::unordered_map<std::string, int>> tp_value_to_match_num;  // indexed by constraint
  // Filter's selfMatchNum per constraint: whether the selector matches self_labels (the cycle's
  // pod's). A pure function of those labels, so Filter need not match the selector again on every
  // node; a pod with other labels (another identity) recomputes it. Held, so the identity stays
  // theirs.
  label_map self_labels;
  std::vector<int> self_match;

  // kube's minMatchNum: the global minimum, or 0 when fewer domains than minDomains are eligible.
  int min_match_num(size_t i, int32_t min_domains) const {
    if (tp_value_to_match_num[i].size() < static_cast<size_t>(min_domains < 0 ? 0 : min_domains)) return 0;
    return paths[i].p[0].match_num;
  }
  // Copies the counts (AddPod/RemovePod on the clone must not reach the original).
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_filter_state>(*this); }
};

struct pre_score_data {
  std::vector<spread_constraint> constraints;
  uint32_t ns = 0;  // intern_namespace(pod.ns), for Score's per-node count of hostname constraints
  // Feasible nodes missing some topology key: scored 0.
  std::set<std::string, std::less<>> ignored_nodes;
  // Matching pods per topology value, indexed by constraint (hostname constraints are counted at
  // Score, per node, and have no entries).
  std::vector<std::unordered_map<std::string, int64_t>> topology_value_to_pod_counts;
  std::vector<double> topology_normalizing_weight;
};

struct pre_score_state final : fw::state_data {
  std::shared_ptr<const pre_score_data> data;  // immutable after PreScore; clones share it
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_score_state>(*this); }
};

}  // namespace kas::plugins::pts

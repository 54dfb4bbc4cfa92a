#pragma once
// cycle_state: per-scheduling-cycle plugin data (kube's framework.CycleState).
//
// Ownership: the cycle driver owns the cycle_state of each pod in flight. Workers receive it as
// const. clone() deep-copies every entry through state_data::clone(), so AddPod/RemovePod on a clone
// (preemption) never touch the original.
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace kas::fw {

struct state_data {
  virtual ~state_data() = default;
  virtual std::shared_ptr<state_data> clone() const = 0;
};

class cycle_state {
public:
  void write(std::string_view key, std::shared_ptr<state_data> data);
  // Null when absent.
  state_data* read(std::string_view key) const;
  template <class T>
  T* read_as(std::string_view key) const {
    return dynamic_cast<T*>(read(key));
  }
  void erase(std::string_view key);

  cycle_state clone() const;

  // Plugin indexes (positions in the profile's filter / score lists) skipped for this cycle,
  // because their PreFilter / PreScore returned Skip.
  uint64_t skip_filter_mask = 0;
  uint64_t skip_score_mask = 0;
  bool skip_filter(size_t i) const { return (skip_filter_mask >> i) & 1u; }
  bool skip_score(size_t i) const { return (skip_score_mask >> i) & 1u; }

  // Whether this cycle was a preemption dry run / a cycle that may record per-plugin metrics.
  bool record_plugin_metrics = false;

private:
  std::vector<std::pair<std::string_view, std::shared_ptr<state_data>>> entries_;
};

}  // namespace kas::fw

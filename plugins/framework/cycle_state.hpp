#pragma once
// cycle_state: per-scheduling-cycle plugin data (kube's framework.CycleState).
//
// Ownership: the cycle driver owns the cycle_state of each pod in flight. Workers receive it as
// const. clone() deep-copies every entry through state_data::clone(), so AddPod/RemovePod on a clone
// (preemption) never touch the original. The cycle's snapshot is immutable, so clones share it.
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/snapshot.hpp"

namespace kas::fw {

struct gang_ticket;  // groups.hpp

struct state_data {
  virtual ~state_data() = default;
  virtual std::shared_ptr<state_data> clone() const = 0;
};

class cycle_state {
public:
  void write(std::string_view key, std::shared_ptr<state_data> data);
  // Null when absent. Keys are string literals: a pointer match is tried before the text.
  state_data* read(std::string_view key) const {
    for (auto& e : entries_)
      if (e.first.data() == key.data() && e.first.size() == key.size()) return e.second.get();
    return read_slow(key);
  }
  // Each key belongs to one plugin, which always writes the same type under it, so the cast is
  // static: this runs per node in Filter and Score.
  template <class T>
  T* read_as(std::string_view key) const {
    return static_cast<T*>(read(key));
  }
  void erase(std::string_view key);

  cycle_state clone() const;

  // The snapshot this cycle schedules against: kube's SnapshotSharedLister, which every plugin
  // reaches through its framework handle at any extension point (PreScore and Score need every
  // node, not only the ones they are handed). Set by whoever starts a cycle (the cycle driver, the
  // cache's global re-validation); null in a cycle_state built by hand (unit tests).
  void set_snapshot(std::shared_ptr<const kas::snapshot> s) { snapshot_ = std::move(s); }
  const kas::snapshot* snapshot() const { return snapshot_.get(); }

  // Plugin indexes (positions in the profile's filter / score lists) skipped for this cycle,
  // because their PreFilter / PreScore returned Skip.
  uint64_t skip_filter_mask = 0;
  uint64_t skip_score_mask = 0;
  bool skip_filter(size_t i) const { return (skip_filter_mask >> i) & 1u; }
  bool skip_score(size_t i) const { return (skip_score_mask >> i) & 1u; }

  // Whether this cycle was a preemption dry run / a cycle that may record per-plugin metrics.
  bool record_plugin_metrics = false;

  // Storage objects Reserve assumed for this pod (VolumeBinding: each volume with the claimRef it
  // will write, each claim with its selected node). The cycle driver hands them to the cache, so
  // later cycles see those volumes taken before PreBind writes them; Unreserve clears them.
  std::vector<volume_change> assumed_storage;

  // The gang attempt this pod is part of (the queued pod's ticket, which outlives the cycle), or
  // null. GangScheduling's Permit reads it.
  const gang_ticket* gang = nullptr;
  // A gang with a topology constraint: the domain its members go to (the values of the group's
  // topology keys, joined by '\x1f'), set by the cycle driver when an earlier member of the round
  // chose it, else by GangScheduling's PreFilter; and the domains the gang failed in before, which
  // PreFilter tries last.
  std::string gang_domain;
  std::shared_ptr<const std::vector<std::string>> gang_tried;

private:
  state_data* read_slow(std::string_view key) const;
  std::vector<std::pair<std::string_view, std::shared_ptr<state_data>>> entries_;
  std::shared_ptr<const kas::snapshot> snapshot_;
};

}  // namespace kas::fw

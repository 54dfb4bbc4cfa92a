#pragma once
// Coscheduling's minResources (scheduler-plugins' PodGroupManager.PreFilter and
// CheckClusterResource), as GangScheduling's PreFilter checks it, and upstream's permittedPG: the
// groups that passed the check recently, whose other members skip it.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/pod_group.hpp"
#include "plugins/framework/groups.hpp"
#include "plugins/framework/status.hpp"

namespace kas {
class snapshot;
}

namespace kas::plugins {

// The free resources summed over the snapshot's nodes, the group's own pods counted as free, must
// cover spec.minResources and minMember pods. Else UnschedulableAndUnresolvable "resource gap:
// <what is missing>" (upstream's words before its Go map of quantities). A walk over every pod of
// every node: PreFilter runs it through permitted_groups, once per attempt of a group.
bool has_min_resources(const pod_group& g);
fw::status check_min_resources(const pod_group& g, const std::string& group_key, const snapshot& snap);

// Upstream's permittedPG: a group that passed check_min_resources is not checked again for its
// other members until the entry expires (after the group's scheduleTimeoutSeconds, or upstream's
// default schedule timeout, 60 s, when it sets none). Upstream also drops the entry when a member
// fails (PostFilter, Unreserve), so the group's next attempt is checked again; here an entry holds
// for the attempt (the queue's round on the gang ticket) it was made in, which ends when the gang
// is admitted or its members failed. A changed PodGroup (a new object: the cluster's objects are
// immutable and shared) is checked again, and a group that failed the check is checked each time.
//
// PreFilter runs on several workers at once: the entries are guarded by a mutex, held only to
// look an entry up or to store one, never during the walk. Two members that miss at once both walk
// the snapshot; either's pass makes the entry.
class permitted_groups {
public:
  using clock = std::chrono::steady_clock;
  // scheduler-plugins' default permitWaitingTimeSeconds, Coscheduling's scheduleTimeout.
  static constexpr std::chrono::seconds default_ttl{60};

  // check_min_resources for the ticket's group, unless it passed in this attempt and not longer ago
  // than its entry lasts.
  fw::status check(const fw::gang_ticket& t, const snapshot& snap);

  // Whether a member of the ticket's attempt would skip the check now.
  bool permitted(const fw::gang_ticket& t) const;
  // How many times check walked a snapshot.
  uint64_t walks() const { return walks_.load(std::memory_order_relaxed); }
  size_t size() const;
  // Tests: the clock that times the entries (steady_clock::now by default). Set it before the
  // workers run.
  void set_clock(std::function<clock::time_point()> now);

private:
  struct entry {
    pod_group_ptr group;  // the object that passed; holding it keeps the pointer comparison sound
    uint64_t round = 0;
    clock::time_point expiry;
  };
  static bool current(const entry& e, const fw::gang_ticket& t, clock::time_point now) {
    return e.group == t.group && e.round == t.round && now < e.expiry;
  }
  clock::time_point now_locked() const { return clock_ ? clock_() : clock::now(); }

  mutable std::mutex mu_;
  std::unordered_map<std::string, entry> entries_;  // by group key
  size_t sweep_at_ = 64;                            // entries_ size that triggers the next sweep of expired ones
  std::function<clock::time_point()> clock_;
  std::atomic<uint64_t> walks_{0};
};

}  // namespace kas::plugins

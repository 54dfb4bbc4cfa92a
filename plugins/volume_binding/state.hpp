#pragma once
// VolumeBinding's cycle state. PreFilter writes it; Filter, running on many workers at once,
// adds one plan per feasible node under the mutex; Reserve and PreBind run once per pod, after
// every Filter, and read it without contention. clone() is a deep copy, so a preemption dry run
// on a clone never touches the original's plans.
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "cache/cluster_objects.hpp"
#include "plugins/framework/cycle_state.hpp"
#include "plugins/volume_binding/binder.hpp"
#include "plugins/volume_binding/volume_binding.hpp"

namespace kas::plugins::volume_binding_detail {

struct state final : fw::state_data {
  // The storage objects the pointers in `claims` and `by_node` point into; kept alive here.
  cluster_objects_ptr objects;
  bool has_claims = false;  // false: PreFilter skipped, the pod has no claims
  pod_volume_claims claims;

  mutable std::mutex mu;  // guards by_node and has_static_bindings during Filter
  std::unordered_map<std::string, pod_volumes> by_node;
  bool has_static_bindings = false;

  bool all_bound = false;                   // set by Reserve
  std::optional<volume_bindings> assumed;   // set by Reserve, cleared by Unreserve

  state() = default;
  state(const state& o) {
    std::lock_guard<std::mutex> lock(o.mu);
    objects = o.objects;
    has_claims = o.has_claims;
    claims = o.claims;
    by_node = o.by_node;
    has_static_bindings = o.has_static_bindings;
    all_bound = o.all_bound;
    assumed = o.assumed;
  }
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<state>(*this); }
};

inline constexpr std::string_view err_no_state = "reading \"VolumeBinding\" from cycleState: not found";

}  // namespace kas::plugins::volume_binding_detail

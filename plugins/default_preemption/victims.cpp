// Victim selection on one node and the choice among candidate nodes (kube's SelectVictimsOnNode,
// filterPodsWithPDBViolation, pickOneNodeForPreemption and util.MoreImportantPod).
#include <algorithm>
#include <functional>
#include <limits>

#include "plugins/default_preemption/default_preemption.hpp"

namespace kas::plugins {

int64_t pod_start_time_ns(const pod_info& p) {
  // kube's GetPodStartTime falls back to "now" for a pod that has not started: later than every
  // recorded start. The maximum keeps that order and stays deterministic.
  if (!p.pod || !p.pod->status().has_start_time()) return std::numeric_limits<int64_t>::max();
  const auto& t = p.pod->status().start_time();
  return t.seconds() * 1000000000LL + t.nanos();
}

bool more_important_pod(const pod_info& a, const pod_info& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return pod_start_time_ns(a) < pod_start_time_ns(b);
}

bool pod_terminating_by_preemption(const pod_info& p) {
  if (!p.pod || !p.pod->metadata().has_deletion_timestamp()) return false;
  for (const auto& c : p.pod->status().conditions())
    if (c.type() == "DisruptionTarget") return c.status() == "True" && c.reason() == "PreemptionByScheduler";
  return false;
}

std::pair<std::vector<pod_info_ptr>, std::vector<pod_info_ptr>> filter_pods_with_pdb_violation(
  const std::vector<pod_info_ptr>& pods, const std::vector<disruption_budget>& pdbs) {
  std::vector<int32_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& pdb : pdbs) allowed.push_back(pdb.disruptions_allowed);
  std::pair<std::vector<pod_info_ptr>, std::vector<pod_info_ptr>> out;
  for (const auto& p : pods) {
    bool violated = false;
    // A pod with no labels matches no PDB.
    if (!p->labels.empty()) {
      for (size_t i = 0; i < pdbs.size(); ++i) {
        const auto& pdb = pdbs[i];
        if (pdb.ns != p->ns) continue;
        // A nil or empty selector matches nothing.
        if (pdb.selector.nothing || pdb.selector.requirements.empty() || !pdb.selector.matches(p->labels)) continue;
        // Already counted by the API server as disrupted: not a violation, and no decrement.
        if (std::find(pdb.disrupted_pods.begin(), pdb.disrupted_pods.end(), p->name) != pdb.disrupted_pods.end())
          continue;
        if (--allowed[i] < 0) violated = true;
      }
    }
    (violated ? out.first : out.second).push_back(p);
  }
  return out;
}

fw::status default_preemption::select_victims_on_node(fw::cycle_state& state, const pod_info& pod, node_info& node,
                                                      const snapshot& snap, const fw::framework_ops& fwk,
                                                      std::vector<pod_info_ptr>& victims,
                                                      int64_t& num_pdb_violations) const {
  victims.clear();
  num_pdb_violations = 0;
  // PreFilter extension failures are errors here, as kube's status.AsError().
  auto as_error = [](const fw::status& s) { return fw::status::error(s.message()); };
  auto remove = [&](const pod_info_ptr& p) {
    node.remove_pod(p->uid);
    return fwk.run_pre_filter_remove_pod(state, pod, *p, node);
  };
  // Remove every lower-priority pod, then check that the pod fits without them.
  std::vector<pod_info_ptr> potential;
  for (const auto& p : node.pods)
    if (p->priority < pod.priority) potential.push_back(p);
  for (const auto& p : potential)
    if (auto s = remove(p); !s.is_success()) return as_error(s);
  if (potential.empty()) return fw::status::unresolvable(no_victims_reason);
  if (auto s = fwk.run_filter_with_nominated_pods(state, pod, node, snap); !s.is_success()) return s;

  // Reprieve as many as possible, most important first, PDB-violating ones before the others.
  // Stable, so equally important pods keep the node's order (kube's sort.Slice leaves it open).
  std::stable_sort(potential.begin(), potential.end(),
                   [](const pod_info_ptr& a, const pod_info_ptr& b) { return more_important_pod(*a, *b); });
  auto [violating, non_violating] = filter_pods_with_pdb_violation(potential, snap.objects().pdbs);
  fw::status err = fw::status::ok();
  auto reprieve = [&](const pod_info_ptr& p) -> bool {
    node.add_pod(p);
    if (auto s = fwk.run_pre_filter_add_pod(state, pod, *p, node); !s.is_success()) {
      err = as_error(s);
      return true;
    }
    if (fwk.run_filter_with_nominated_pods(state, pod, node, snap).is_success()) return true;
    if (auto s = remove(p); !s.is_success()) err = as_error(s);
    victims.push_back(p);
    return false;
  };
  for (const auto& p : violating) {
    if (!reprieve(p)) ++num_pdb_violations;
    if (!err.is_success()) return err;
  }
  for (const auto& p : non_violating) {
    reprieve(p);
    if (!err.is_success()) return err;
  }
  if (!violating.empty() && !non_violating.empty())
    std::stable_sort(victims.begin(), victims.end(),
                     [](const pod_info_ptr& a, const pod_info_ptr& b) { return more_important_pod(*a, *b); });
  return fw::status::ok();
}

const preemption_candidate* pick_one_node_for_preemption(const std::vector<preemption_candidate>& candidates) {
  if (candidates.empty()) return nullptr;
  using score_fn = std::function<int64_t(const preemption_candidate&)>;
  const score_fn funcs[] = {
    // Fewest PDB violations.
    [](const preemption_candidate& c) { return -c.num_pdb_violations; },
    // Lowest highest-priority victim (victims are sorted most important first).
    [](const preemption_candidate& c) { return -static_cast<int64_t>(c.victims.front()->priority); },
    // Smallest sum of priorities, each shifted by MaxInt32+1 so negative priorities count right.
    [](const preemption_candidate& c) {
      int64_t sum = 0;
      for (const auto& v : c.victims) sum += static_cast<int64_t>(v->priority) + (int64_t{1} << 31);
      return -sum;
    },
    // Fewest victims.
    [](const preemption_candidate& c) { return -static_cast<int64_t>(c.victims.size()); },
    // Latest start time among the highest-priority victims (kube's GetEarliestPodStartTime).
    [](const preemption_candidate& c) {
      int32_t max_priority = c.victims.front()->priority;
      int64_t earliest = pod_start_time_ns(*c.victims.front());
      for (const auto& v : c.victims) {
        if (v->priority == max_priority) {
          earliest = std::min(earliest, pod_start_time_ns(*v));
        } else if (v->priority > max_priority) {
          max_priority = v->priority;
          earliest = pod_start_time_ns(*v);
        }
      }
      return earliest;
    },
  };
  std::vector<const preemption_candidate*> all;
  for (const auto& c : candidates) all.push_back(&c);
  for (const auto& f : funcs) {
    std::vector<const preemption_candidate*> best;
    int64_t max_score = std::numeric_limits<int64_t>::min();
    for (const auto* c : all) {
      int64_t s = f(*c);
      if (s > max_score) {
        max_score = s;
        best.clear();
      }
      if (s == max_score) best.push_back(c);
    }
    if (best.size() == 1) return best.front();
    all = std::move(best);
  }
  // Still tied: the first one (kube: the first of a Go map's iteration, i.e. unspecified).
  return all.front();
}

}  // namespace kas::plugins

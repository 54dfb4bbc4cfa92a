#include "plugins/default_preemption/default_preemption.hpp"

#include <random>

#include "plugins/framework/runtime/framework.hpp"
#include "plugins/framework/preemption.hpp"

namespace kas::plugins {

namespace {

// kube's DefaultPreemption.PostFilter prefixes every message of the evaluator with "preemption: ";
// the framework appends it to the FailedScheduling message.
fw::status with_prefix(fw::code c, const std::string& msg) {
  return fw::status(c, fw::intern("preemption: " + msg));
}

void ignore_result(fw::status) {}

}  // namespace

result<std::shared_ptr<fw::plugin>> default_preemption::make(const YAML::Node& args, const std::string& path,
                                                             const fw::handle& h) {
  auto parsed = parse_default_preemption_args(args, path);
  if (!parsed) return parsed.err();
  return std::shared_ptr<fw::plugin>(std::make_shared<default_preemption>(*parsed, h));
}

int32_t default_preemption::calculate_num_candidates(int32_t num_nodes) const {
  int32_t n = static_cast<int32_t>(static_cast<int64_t>(num_nodes) * args_.min_candidate_nodes_percentage / 100);
  if (n < args_.min_candidate_nodes_absolute) n = args_.min_candidate_nodes_absolute;
  if (n > num_nodes) n = num_nodes;
  return n;
}

int32_t default_preemption::offset_for(const pod_info& pod, int32_t num_nodes) {
  if (num_nodes <= 0) return 0;
  // FNV-1a of the uid seeds the generator: the same pod gets the same offset in every replay.
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : pod.uid) h = (h ^ c) * 1099511628211ULL;
  std::mt19937_64 rng(h);
  return static_cast<int32_t>(rng() % static_cast<uint64_t>(num_nodes));
}

std::string default_preemption::pod_eligible_to_preempt_others(const pod_info& pod, const snapshot& snap,
                                                               const fw::node_to_status& filtered) const {
  if (pod.preemption == preemption_policy::never) return "not eligible due to preemptionPolicy=Never.";
  const std::string& nominated = pod.nominated_node_name;
  if (nominated.empty()) return "";
  // A nominated node the filters now call unresolvable (kube's default for an unexamined node
  // too) no longer holds the pod: it may preempt again.
  const fw::status* s = filtered.get(nominated);
  if (!s || s->get_code() == fw::code::unschedulable_and_unresolvable) return "";
  if (const node_info* n = snap.find(nominated))
    for (const auto& p : n->pods)
      if (p->priority < pod.priority && pod_terminating_by_preemption(*p))
        return "not eligible due to a terminating pod on the nominated node.";
  return "";
}

dry_run_result default_preemption::dry_run_preemption(const fw::cycle_state& state, const pod_info& pod,
                                                      const std::vector<const node_info*>& potential,
                                                      const snapshot& snap, const fw::framework_ops& fwk,
                                                      int32_t offset, int32_t num_candidates,
                                                      std::string* fits_as_is) const {
  dry_run_result out;
  std::vector<preemption_candidate> non_violating, violating;
  const size_t n = potential.size();
  const size_t cap = static_cast<size_t>(std::max<int32_t>(num_candidates, 0));
  for (size_t i = 0; i < n; ++i) {
    const node_info& orig = *potential[(static_cast<size_t>(offset) + i) % n];
    // A node without lower-priority pods gets SelectVictimsOnNode's verdict without paying for
    // the clones (on a large cluster most nodes of a failed low-priority pod are like this).
    bool any_lower = false;
    for (const auto& p : orig.pods) any_lower = any_lower || p->priority < pod.priority;
    if (!any_lower) {
      out.statuses.statuses.insert_or_assign(orig.name, fw::status::unresolvable(no_victims_reason));
      continue;
    }
    // AddPod/RemovePod run on clones of the node and of the CycleState.
    auto node_copy = orig.clone();
    fw::cycle_state state_copy = state.clone();
    preemption_candidate c;
    auto s = select_victims_on_node(state_copy, pod, *node_copy, snap, fwk, c.victims, c.num_pdb_violations);
    if (s.is_success() && c.victims.empty() && fits_as_is) {
      *fits_as_is = orig.name;
      break;
    }
    if (s.is_success() && !c.victims.empty()) {
      c.node = orig.name;
      // kube's candidate lists have a fixed capacity; adds beyond it are dropped.
      auto& list = c.num_pdb_violations == 0 ? non_violating : violating;
      if (list.size() < cap) list.push_back(std::move(c));
      // kube cancels the parallel search once a PDB-respecting candidate exists and enough are found.
      if (!non_violating.empty() && non_violating.size() + violating.size() >= cap) break;
      continue;
    }
    if (s.is_success()) s = fw::status::error("expected at least one victim pod on node \"" + orig.name + "\"");
    if (s.get_code() == fw::code::error && out.error.empty()) out.error = s.message();
    out.statuses.statuses.insert_or_assign(orig.name, s);
  }
  out.candidates = std::move(non_violating);
  for (auto& c : violating) out.candidates.push_back(std::move(c));
  return out;
}

void default_preemption::prepare_candidate(const preemption_candidate& c, const pod_info& pod,
                                           const snapshot& snap) const {
  if (!handle_.client) return;
  // The nomination goes out first: the cluster applies requests in order, so every snapshot
  // without the victims already reserves their room for this pod (kube's nominator is updated in
  // the same cycle, before the asynchronous evictions complete).
  handle_.client->set_nominated_node(pod, c.node, ignore_result);
  // Lower-priority pods nominated to this node may no longer fit there: clear their nomination.
  if (const auto* nominated = snap.nominated_pods(c.node))
    for (const auto& p : *nominated)
      if (p->uid != pod.uid && p->priority < pod.priority) handle_.client->set_nominated_node(*p, "", ignore_result);
  // kube's Event on each victim: "Preempted by pod <preemptor uid> on node <node>".
  const std::string message = "Preempted by pod " + pod.uid + " on node " + c.node;
  for (const auto& v : c.victims) {
    // Graceful deletion already started: kube sends no second request.
    if (v->pod && v->pod->metadata().has_deletion_timestamp()) continue;
    handle_.client->delete_pod(*v, message, ignore_result);
  }
}

fw::status default_preemption::post_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                           const fw::node_to_status& filtered, const fw::framework_ops& fwk,
                                           fw::post_filter_result& result) const {
  // 0) A member of a gang preempts for its whole group, or not at all (gang_preemption.cpp).
  if (state.gang && state.gang->group && state.gang->group->gang)
    return gang_post_filter(state, pod, snap, filtered, fwk, result);
  // 1) Eligibility.
  if (auto msg = pod_eligible_to_preempt_others(pod, snap, filtered); !msg.empty())
    return with_prefix(fw::code::unschedulable, msg);

  // 2) Candidates.
  auto potential = fw::nodes_where_preemption_might_help(snap, filtered);
  dry_run_result dr;
  if (!potential.empty()) {
    auto n = static_cast<int32_t>(potential.size());
    dr = dry_run_preemption(state, pod, potential, snap, fwk, offset_for(pod, n), calculate_num_candidates(n));
  }
  if (dr.candidates.empty()) {
    if (!dr.error.empty()) return fw::status::error("preemption: " + dr.error);
    // kube's FitError over the dry run's statuses; nodes it did not examine are "not helpful".
    dr.statuses.absent = fw::status::unresolvable(not_helpful_reason);
    result.nominated_node_name.clear();
    if (!pod.nominated_node_name.empty() && handle_.client)
      handle_.client->set_nominated_node(pod, "", ignore_result);
    return with_prefix(fw::code::unschedulable, fw::fit_error_message(snap.size(), dr.statuses, "", ""));
  }

  // 3) No extenders. 4) The best candidate.
  const preemption_candidate* best = pick_one_node_for_preemption(dr.candidates);
  if (!best || best->node.empty()) return with_prefix(fw::code::unschedulable, "no candidate node for preemption");

  // 5) Evict and nominate.
  prepare_candidate(*best, pod, snap);
  result.nominated_node_name = best->node;
  result.victims = best->victims;
  return fw::status::ok();
}

}  // namespace kas::plugins

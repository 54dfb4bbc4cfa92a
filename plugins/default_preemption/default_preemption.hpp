#pragma once
// DefaultPreemption (kube-scheduler's plugins/defaultpreemption with framework/preemption's
// Evaluator): the PostFilter plugin that, when a pod fits nowhere, looks for a node where evicting
// lower-priority pods makes it fit, evicts them and nominates the node for the pod.
//
// PostFilter, in kube's order:
//   1. PodEligibleToPreemptOthers (preemptionPolicy Never; terminating victims on the nominated node).
//   2. Candidates: the nodes whose Filter failure removing pods may fix, visited from an offset for
//      at most calculateNumCandidates candidates; on each, SelectVictimsOnNode on a CLONE of the
//      cycle_state and of the node_info (the original state is never touched).
//   3. The best candidate (pickOneNodeForPreemption), then its victims are deleted with kube's
//      "Preempted" Event, lower-priority nominations on the node are cleared, and the pod is
//      nominated to the node.
// kube's random offset (rand.Int31n) is drawn here from an RNG seeded with the pod's uid, so a replay
// examines nodes in the same order and plugins keep no state between cycles.
//
// A member of a gang PodGroup preempts for its whole group (gang_preemption.cpp): a dry run places
// every member still to place on a working copy of the snapshot, each with the per-pod victim
// selection above, and evicts nobody unless all of them fit.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

// DefaultPreemptionArgs with kube's v1 defaults; validated as ValidateDefaultPreemptionArgs.
struct default_preemption_args {
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
};

result<default_preemption_args> parse_default_preemption_args(const YAML::Node& args, const std::string& path);

// A node where preemption makes room: the victims, most important first, and how many of them
// violate a PodDisruptionBudget (kube's candidate with extenderv1.Victims).
struct preemption_candidate {
  std::string node;
  std::vector<pod_info_ptr> victims;
  int64_t num_pdb_violations = 0;
};

// The outcome of a dry run over the potential nodes (kube's DryRunPreemption).
struct dry_run_result {
  std::vector<preemption_candidate> candidates;  // PDB-respecting ones first, each in visit order
  fw::node_to_status statuses;                   // nodes where no victims make the pod fit
  std::string error;                             // first Error status text, if any
};

// The outcome of a gang's dry run (plan_gang_preemption): where each member still to place goes,
// and the victims that makes room for them.
struct gang_preemption_plan {
  bool fits = false;
  size_t need = 0;                   // members still to place: minCount minus the members bound
  std::vector<std::string> members;  // a node per member placed, in placement order (this pod's first)
  // The victims per node, each list most important first, nodes in the order they were chosen.
  std::vector<preemption_candidate> evictions;
  std::string domain;  // the topology domain the gang was planned in (empty without a constraint)
  bool no_victims = false;  // no lower-priority pod on any node where preemption might help
  std::string error;   // an Error status' text from the dry run, if any
  size_t victim_count() const {
    size_t n = 0;
    for (auto& e : evictions) n += e.victims.size();
    return n;
  }
};

class default_preemption final : public fw::pre_enqueue_plugin, public fw::post_filter_plugin {
public:
  static constexpr std::string_view plugin_name = "DefaultPreemption";
  static constexpr std::string_view no_victims_reason = "No preemption victims found for incoming pod";
  static constexpr std::string_view not_helpful_reason = "Preemption is not helpful for scheduling";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  default_preemption(default_preemption_args args, fw::handle h) : args_(args), handle_(h) {}
  std::string_view name() const override { return plugin_name; }
  // kube (async preemption, on by default) holds a preemptor out of activeQ while its evictions run.
  // Here the evictions reach the queue before the preemptor's failure does (cycle_driver), so the
  // pod never re-enters while they run: always Success, kept so profiles naming the point carry over.
  fw::status pre_enqueue(const pod_info&, const fw::group_directory&) const override { return fw::status::ok(); }
  fw::status post_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                         const fw::node_to_status& filtered, const fw::framework_ops& fwk,
                         fw::post_filter_result& result) const override;

  // The steps of post_filter, public for tests.
  // kube's calculateNumCandidates: max(numNodes * percentage / 100, absolute), at most numNodes.
  int32_t calculate_num_candidates(int32_t num_nodes) const;
  // kube's getOffsetRand(numNodes): uniform in [0, numNodes), seeded with the pod's uid.
  static int32_t offset_for(const pod_info& pod, int32_t num_nodes);
  // kube's PodEligibleToPreemptOthers: empty when eligible, else the reason.
  std::string pod_eligible_to_preempt_others(const pod_info& pod, const snapshot& snap,
                                             const fw::node_to_status& filtered) const;
  // kube's SelectVictimsOnNode. `state` and `node` must be copies: they are changed.
  fw::status select_victims_on_node(fw::cycle_state& state, const pod_info& pod, node_info& node,
                                    const snapshot& snap, const fw::framework_ops& fwk,
                                    std::vector<pod_info_ptr>& victims, int64_t& num_pdb_violations) const;
  // `fits_as_is`: when given, a node where SelectVictimsOnNode reprieves every pod (the pod fits
  // there as it is) ends the run and is written there (the gang's dry run places a member there);
  // without it such a node is an Error, as in kube.
  dry_run_result dry_run_preemption(const fw::cycle_state& state, const pod_info& pod,
                                    const std::vector<const node_info*>& potential, const snapshot& snap,
                                    const fw::framework_ops& fwk, int32_t offset, int32_t num_candidates,
                                    std::string* fits_as_is = nullptr) const;
  // The gang's dry run (state.gang set, a gang group): see gang_preemption.cpp. Changes nothing.
  gang_preemption_plan plan_gang_preemption(const fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                            const fw::node_to_status& filtered,
                                            const fw::framework_ops& fwk) const;
  // kube v1.36's PodGroupPostFilter texts (KEP-5710) where it has them.
  static constexpr std::string_view group_prefix = "pod group preemption: ";
  static constexpr std::string_view group_no_victims_reason = "No preemption victims found for incoming preemptor";

private:
  // kube's prepareCandidate: evict, clear lower-priority nominations, nominate.
  void prepare_candidate(const preemption_candidate& c, const pod_info& pod, const snapshot& snap) const;
  // PostFilter for a member of a gang: the group's dry run, then the evictions of every member's
  // victims, or none.
  fw::status gang_post_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                              const fw::node_to_status& filtered, const fw::framework_ops& fwk,
                              fw::post_filter_result& result) const;

  default_preemption_args args_;
  fw::handle handle_;
};

// kube's util.MoreImportantPod: higher priority, then the earlier start time.
bool more_important_pod(const pod_info& a, const pod_info& b);
// status.startTime in ns; INT64_MAX when the pod has not started (kube: "now", later than any start).
int64_t pod_start_time_ns(const pod_info& p);
// kube's filterPodsWithPDBViolation: (violating, non-violating), each in input order.
std::pair<std::vector<pod_info_ptr>, std::vector<pod_info_ptr>> filter_pods_with_pdb_violation(
  const std::vector<pod_info_ptr>& pods, const std::vector<disruption_budget>& pdbs);
// kube's pickOneNodeForPreemption with the default score functions; null when `candidates` is empty.
const preemption_candidate* pick_one_node_for_preemption(const std::vector<preemption_candidate>& candidates);
// kube's podTerminatingByPreemption: deletionTimestamp set and a DisruptionTarget condition
// (True, PreemptionByScheduler).
bool pod_terminating_by_preemption(const pod_info& p);

}  // namespace kas::plugins

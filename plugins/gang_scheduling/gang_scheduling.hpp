#pragma once
// GangScheduling: all-or-nothing placement for the pods of a PodGroup with a gang policy (either
// API form, cache/pod_group.hpp). Its parts:
//   - PreEnqueue holds a member until its PodGroup exists and at least minCount of its pods do
//     (kube's messages: "waiting for pod's pod group %q to appear in scheduling queue", "waiting
//     for minCount pods from a gang to appear in scheduling queue").
//   - PreFilter and Filter, for a group with schedulingConstraints.topology: every member lands
//     in one domain of the keys (one zone, one rack). The first member of an attempt picks the
//     domain with the most room for the members still to place, skipping domains the gang failed
//     in before while another fits; the cycle driver keeps that choice for the attempt's other
//     members. A gang no single domain has room for fails with a message that says so.
//     PreFilter returns the domain's nodes as its PreFilterResult, so the framework runs Filter
//     only there (a zone of 500 nodes out of 5000 is scanned, not the whole cluster); Filter
//     still rejects a node of another domain for callers that filter a given node (a nominated
//     node, preemption's dry runs). The domains and their nodes come from an index the plugin
//     keeps over the snapshots it sees (see domain_index in the .cpp), brought up to date by
//     comparing node pointers, so a cycle builds no string per node.
//   - Permit makes every member Wait ("waiting for minCount pods from a gang to be scheduled"),
//     for the group's scheduleTimeoutSeconds, or kube's 5 minutes. The permit coordinator counts
//     the members holding reservations and admits the whole gang at once when minCount is
//     reached, or rejects every waiting member when one fails or times out (the coordinator
//     owns waitingPods, so the counting lives there, not in this const plugin).
// The scheduling queue hands a gang's members out together, one gang at a time (queue_state).
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"
#include "plugins/gang_scheduling/min_resources.hpp"

namespace kas::plugins {

class gang_scheduling final : public fw::pre_enqueue_plugin,
                              public fw::pre_filter_plugin,
                              public fw::filter_plugin,
                              public fw::permit_plugin,
                              public fw::enqueue_extensions,
                              public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "GangScheduling";
  // kube's permitTimeoutDuration: how long a member waits when its group sets no timeout.
  static constexpr std::chrono::minutes default_timeout{5};
  static constexpr const char* wait_message = "waiting for minCount pods from a gang to be scheduled";
  static constexpr const char* wrong_domain = "node(s) didn't match the pod group's topology domain";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  gang_scheduling();
  ~gang_scheduling() override;
  std::string_view name() const override { return plugin_name; }
  fw::status pre_enqueue(const pod_info& pod, const fw::group_directory& groups) const override;
  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  fw::status permit(fw::cycle_state& state, const pod_info& pod, const std::string& node,
                    std::chrono::milliseconds& timeout) const override;
  // PreFilter narrowed the candidates to the domain's nodes: there Filter passes, so it adds
  // nothing to the hot path's checks.
  bool hot_filter(const fw::cycle_state& state, const pod_info& pod, fw::hot_filter& out) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  // Members of one group batch only with each other.
  bool sign_pod(const pod_info& pod, std::string& out) const override;

  // The domains of a set of topology keys over one snapshot's nodes (defined in the .cpp).
  struct domain_index;

  // Coscheduling's permittedPG (min_resources.hpp): groups that passed the minResources check in
  // their current attempt, whose other members skip it. Exposed for tests (its clock, its walks).
  permitted_groups& permitted() const { return permitted_; }

private:
  // One index per set of topology keys seen (usually one), updated under index_mu_ to the
  // snapshot of the cycle that uses it. The workers run PreFilter concurrently; each holds the
  // lock for a comparison of node pointers and, for an attempt's first member, a count of room.
  mutable std::mutex index_mu_;
  mutable std::vector<std::unique_ptr<domain_index>> indexes_;
  mutable permitted_groups permitted_;  // its own mutex
};

// The message every member of a gang that could not be placed whole reports, e.g.
// "pod group team-a/train-1: 6/8 members could be placed (minCount 8)".
std::string gang_failure_message(const pod_group& g, size_t placed, size_t members);

// A node's domain for the group's topology keys (their values joined by '\x1f'); empty when the
// node lacks one of the keys.
std::string topology_domain(const pod_group& g, const node_info& node);
// Whether topology_domain(g, node) == domain, compared in place (no string is built). False for an
// empty domain.
bool in_topology_domain(const pod_group& g, const node_info& node, std::string_view domain);

}  // namespace kas::plugins

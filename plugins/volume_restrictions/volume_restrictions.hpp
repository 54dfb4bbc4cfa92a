#pragma once
// VolumeRestrictions (kube-scheduler's plugins/volumerestrictions):
// - Disk conflicts: an inline GCE PD, AWS EBS, RBD or iSCSI volume of the pod may not be mounted
//   by a pod already on the node (GCE PD, RBD and iSCSI allow it when both mount read-only; EBS
//   never does).
// - ReadWriteOncePod: a claim with that access mode may be used by one pod in the whole cluster.
//   PreFilter counts how many of the pod's RWOP claims assigned pods already use; Filter rejects
//   every node while that count is positive (Unschedulable: preemption can free the claim), and
//   AddPod/RemovePod keep the count for preemption's what-ifs.
// PreFilter Skips a pod with neither an in-tree disk volume nor a claim in use.
//
// kube reads the used claims from the snapshot's used-PVC set; the snapshot here keeps no such
// index, so PreFilter scans every assigned pod, and only for pods that have RWOP claims.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

// kube's isVolumeConflict: whether the inline source `v` conflicts with a volume of `existing`.
bool is_volume_conflict(const volume_source& v, const pod_info& existing);
// Whether any restricted (GCE PD, EBS, RBD, iSCSI) volume of `pod` conflicts with `existing`.
bool pods_have_volume_conflict(const pod_info& pod, const pod_info& existing);

class volume_restrictions final : public fw::pre_filter_plugin,
                                  public fw::pre_filter_extensions,
                                  public fw::filter_plugin,
                                  public fw::enqueue_extensions,
                                  public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "VolumeRestrictions";
  static constexpr std::string_view pre_filter_key = "PreFilterVolumeRestrictions";
  static constexpr std::string_view err_reason_disk_conflict = "node(s) had no available disk";
  static constexpr std::string_view err_reason_rwop_conflict =
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  std::string_view name() const override { return plugin_name; }
  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  const fw::pre_filter_extensions* extensions() const override { return this; }
  fw::status add_pod(fw::cycle_state& state, const pod_info& pod_to_schedule, const pod_info& pod_to_add,
                     const node_info& node) const override;
  fw::status remove_pod(fw::cycle_state& state, const pod_info& pod_to_schedule, const pod_info& pod_to_remove,
                        const node_info& node) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  // A ReadWriteOncePod claim used by a pod on any node rejects every node.
  bool cross_node() const override { return true; }
  // PreFilter skips only while no assigned pod uses one of the pod's RWOP claims: only a pod with a
  // persistentVolumeClaim volume can change that.
  bool skip_may_change_with(const pod_info& changed) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;
};

}  // namespace kas::plugins

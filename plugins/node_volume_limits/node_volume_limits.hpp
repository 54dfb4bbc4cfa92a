#pragma once
// NodeVolumeLimits (kube-scheduler's plugins/nodevolumelimits, the CSILimits plugin):
// - PreFilter: Skip unless the pod has a claim, a generic ephemeral volume or an in-tree volume
//   kube can translate to CSI; otherwise resolves the pod's own volumes (claim -> PV -> CSI driver
//   and handle, an unbound claim through its StorageClass's provisioner) once for the cycle.
// - Filter: per CSI driver, the unique volumes the pod adds to the node plus the unique volumes
//   the node's pods already use must stay within the CSINode's drivers[].allocatable.count. The
//   node's VolumeAttachments count too (under their attacher), unless a pod there uses the volume:
//   a volume still attached after its pod left, or attached before its pod arrives, takes a slot.
//   In-tree AWS EBS / GCE PD / Azure Disk / Cinder (and Portworx, by StorageClass) volumes count
//   under the CSI driver they migrate to, on nodes that have a CSINode. What the node's pods use
//   comes resolved in node_info::volume_usage, kept by the scheduler cache (attachable_volumes.hpp);
//   on a node copy changed outside the cache (nominated pods, preemption) Filter resolves them.
// - QueueingHints: CSINode add/update (a limit raised), assigned pod delete, claim add,
//   VolumeAttachment delete.
//
// Lenient where kube is: a claim of a pod already on the node that cannot be found, a PV that is
// missing (the StorageClass then decides), a claim without StorageClass, a PV kube cannot
// translate: each is skipped, not counted. Only the pod being scheduled must have its claims.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cache/attachable_volumes.hpp"
#include "cache/csi_translation.hpp"
#include "cache/volume_objects.hpp"
#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

class node_volume_limits final : public fw::pre_filter_plugin,
                                 public fw::filter_plugin,
                                 public fw::enqueue_extensions,
                                 public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "NodeVolumeLimits";
  static constexpr std::string_view pre_filter_key = "PreFilterNodeVolumeLimits";
  static constexpr std::string_view err_reason_max_volume_count = "node(s) exceed max volume count";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  std::string_view name() const override { return plugin_name; }
  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  std::string explain(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;

private:
  struct verdict;
  verdict count_on_node(const std::vector<attachable_volume>& wanted, const volume_objects& objects,
                        const node_info& node) const;
};

// The QueueingHints, exposed for tests.
namespace node_volume_limits_hints {
// isSchedulableAfterAssignedPodDeleted.
fw::queueing_hint assigned_pod_deleted(const pod_info& pod, const pod_info* deleted);
// isSchedulableAfterPVCAdded.
fw::queueing_hint claim_added(const pod_info& pod, const pvc_info* added);
// isSchedulableAfterCSINodeUpdated: some driver's allocatable count went up (absent counts as 0).
fw::queueing_hint csi_node_updated(const pod_info& pod, const csi_node_info* old_node, const csi_node_info* new_node);
// isSchedulableAfterVolumeAttachmentDeleted: the pod has a claim (any claim: kube does not
// resolve it to the detached volume), or an inline volume migrating to the deleted attachment's
// attacher. Null `deleted` (an event without its object) queues, as kube does.
fw::queueing_hint volume_attachment_deleted(const pod_info& pod, const volume_attachment_info* deleted);
}  // namespace node_volume_limits_hints

}  // namespace kas::plugins

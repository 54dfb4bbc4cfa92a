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
//   under the CSI driver they migrate to, on nodes that have a CSINode.
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

#include "cache/volume_objects.hpp"
#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

// kube's csi-translation-lib, for the in-tree kinds the scheduler models (csi_translation.cpp).
namespace csi_migration {

inline constexpr std::string_view aws_ebs_plugin = "kubernetes.io/aws-ebs";
inline constexpr std::string_view gce_pd_plugin = "kubernetes.io/gce-pd";
inline constexpr std::string_view azure_disk_plugin = "kubernetes.io/azure-disk";
inline constexpr std::string_view cinder_plugin = "kubernetes.io/cinder";
inline constexpr std::string_view aws_ebs_driver = "ebs.csi.aws.com";
inline constexpr std::string_view gce_pd_driver = "pd.csi.storage.gke.io";
inline constexpr std::string_view azure_disk_driver = "disk.csi.azure.com";
inline constexpr std::string_view cinder_driver = "cinder.csi.openstack.org";

// The in-tree plugin that serves a source kind when kube can translate it to CSI
// (IsPVMigratable / IsInlineMigratable and GetInTreePluginNameFromSpec), else empty.
std::string_view in_tree_plugin(volume_source::kind_t kind);
// IsMigratableIntreePluginByName: a provisioner name with translation logic.
bool is_migratable_plugin(std::string_view plugin);
// GetCSINameFromInTreeName; empty for a name without translation logic.
std::string_view csi_driver_of(std::string_view plugin);
// Whether the plugin's migration is on wherever the node has a CSINode: GA for AWS EBS, GCE PD,
// Azure Disk, Cinder and Portworx.
bool migration_ga(std::string_view plugin);
// isCSIMigrationOn (utils.go): the node has a CSINode and migration_ga(plugin). v1.36 no longer
// reads the CSINode's migrated-plugins annotation for it.
bool migration_on(const csi_node_info* csi_node, std::string_view plugin);
// The CSI volume handle TranslateInTreeInlineVolumeToCSI gives an inline in-tree volume, or its
// error text.
result<std::string> inline_volume_handle(const volume_source& source);
// The CSI volume handle TranslateInTreePVToCSI gives an in-tree PV, or its error text.
result<std::string> pv_volume_handle(const pv_info& pv);

}  // namespace csi_migration

// One pod volume as Filter counts it, resolved from the storage objects before the node is known:
// what is left to decide per node is only whether the node has a CSINode (migration).
struct counted_volume {
  std::string driver;  // the CSI driver, the one an in-tree plugin migrates to for in-tree volumes
  std::string handle;  // the volume handle (for an unbound claim, a name unique to the claim)
  // The volume is in-tree and counts only on a node with a CSINode; so does `failure` below.
  bool needs_csi_node = false;
  // Set when resolving this volume fails: Filter returns it (on every node, or only on nodes with
  // a CSINode when needs_csi_node) and counts nothing after it.
  std::optional<fw::status> failure;
};

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
  // `unbound_prefix` keeps the names given to unbound claims apart from real volume handles (kube
  // uses 32 random characters; make() does too).
  explicit node_volume_limits(std::string unbound_prefix) : unbound_prefix_(std::move(unbound_prefix)) {}

  std::string_view name() const override { return plugin_name; }
  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  std::string explain(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;

  // kube's filterAttachableVolumes for one pod: its volumes in spec order. `new_pod`: the pod
  // being scheduled, whose claims must exist (a pod already on the node skips a missing claim).
  std::vector<counted_volume> resolve(const pod_info& pod, const volume_objects& objects, bool new_pod) const;

private:
  struct verdict;
  verdict count_on_node(const std::vector<counted_volume>& wanted, const volume_objects& objects,
                        const node_info& node) const;
  void resolve_claim(const pod_info& pod, const pod_volume& v, const volume_objects& objects, bool new_pod,
                     std::vector<counted_volume>& out) const;
  std::optional<counted_volume> from_storage_class(const pvc_info& claim, const volume_objects& objects) const;

  std::string unbound_prefix_;
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

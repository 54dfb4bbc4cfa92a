#pragma once
// The part of kube's csi-translation-lib the scheduler needs: which in-tree volume kinds migrate to
// a CSI driver, and the volume handle a translated volume gets. NodeVolumeLimits counts in-tree
// volumes under the CSI driver they migrate to; the scheduler cache and the invariant checker
// count them the same way.
#include <optional>
#include <string>
#include <string_view>

#include "cache/volume_objects.hpp"
#include "messages/result.hpp"

namespace kas::csi_migration {

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
// VolumeBinding's test (isCSIMigrationOnForPlugin and isPluginMigratedToCSIOnNode): migration is
// on for the plugin and the node's CSINode lists it in its storage.alpha.kubernetes.io/
// migrated-plugins annotation. Unlike NodeVolumeLimits, VolumeBinding in v1.36 still reads it.
bool migrated_on_node(const csi_node_info* csi_node, std::string_view plugin);
// The CSI volume handle TranslateInTreeInlineVolumeToCSI gives an inline in-tree volume, or its
// error text.
result<std::string> inline_volume_handle(const volume_source& source);
// The CSI volume handle TranslateInTreePVToCSI gives an in-tree PV, or its error text.
result<std::string> pv_volume_handle(const pv_info& pv);
// The zone topology key of the CSI driver TranslateInTreePVToCSI moves a PV's zone to: AWS EBS,
// GCE PD and Cinder; empty for Azure Disk, whose translation leaves the topology alone.
std::string_view csi_topology_key(std::string_view plugin);
// translateTopologyFromInTreeToCSI on a compiled PV, for VolumeBinding's check of a bound PV's node
// affinity on a node where the PV's plugin is migrated: the zone key the PV uses (GA, else beta)
// renamed to `csi_key` in its node affinity, or, when the affinity names no zone, a requirement on
// `csi_key` from the PV's zone label ("a__b" lists zones) added to every term; a beta region key
// becomes the GA one. nullopt when that changes nothing (or `csi_key` is empty).
std::optional<node_selector> translated_node_affinity(const pv_info& pv, std::string_view csi_key);

}  // namespace kas::csi_migration

#pragma once
// PersistentVolume matching as the PV controller and the scheduler share it
// (component-helpers/storage/volume: FindMatchingVolume, CheckVolumeModeMismatches,
// CheckAccessModes, CheckNodeAffinity, IsVolumeBoundToClaim, GetBindVolumeToClaim). Pure
// functions over the compiled storage objects.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cache/volume_objects.hpp"

namespace k8s::core {
class PersistentVolume;
class PersistentVolumeClaim;
}  // namespace k8s::core

namespace kas::plugins {

inline constexpr std::string_view no_provisioner = "kubernetes.io/no-provisioner";

// The PV's required node affinity against a node's labels. As kube, the node is seen by its labels
// only, so a metadata.name field selector never matches; no affinity matches every node, and a
// required selector without terms matches none.
bool check_node_affinity(const pv_info& pv, const label_map& node_labels);

// True when the claim's and the volume's volumeMode differ (unset is Filesystem on both sides).
bool check_volume_mode_mismatches(const pvc_info& claim, const pv_info& pv);

// True when the volume offers every access mode the claim asks for.
bool check_access_modes(const pvc_info& claim, const pv_info& pv);

// The volume is pre-bound or bound to this claim: claimRef's namespace and name equal, and its
// uid, when set, equal too.
bool is_volume_bound_to_claim(const pv_info& pv, const pvc_info& claim);

// spec.volumeAttributesClassName ("" when unset).
const std::string& volume_attributes_class(const pv_info& pv);
const std::string& volume_attributes_class(const pvc_info& claim);

// kube's FindMatchingVolume on the scheduler path when `node_labels` is set: a volume pre-bound to
// the claim wins (or, when its node affinity fails, nothing matches); otherwise the smallest
// Available volume of the claim's class whose capacity, volume mode, attributes class, selector,
// node affinity and access modes fit, skipping `excluded` and volumes being deleted.
// VolumeAttributesClass is GA, so the classes must be equal.
const pv_info* find_matching_volume(const pvc_info& claim, const std::vector<const pv_info*>& volumes,
                                    const label_map* node_labels, const std::set<std::string>& excluded,
                                    bool delay_binding);

// kube's GetBindVolumeToClaim: a copy of the volume whose claimRef names the claim (kind,
// namespace, name, uid, apiVersion, resourceVersion), with pv.kubernetes.io/bound-by-controller
// "yes" unless the volume was already bound to it. `dirty` says whether anything changed.
std::shared_ptr<k8s::core::PersistentVolume> bind_volume_to_claim(const pv_info& pv, const pvc_info& claim,
                                                                  bool& dirty);

// A copy of the claim with volume.kubernetes.io/selected-node set to `node`.
std::shared_ptr<k8s::core::PersistentVolumeClaim> claim_with_selected_node(const pvc_info& claim,
                                                                           const std::string& node);

}  // namespace kas::plugins

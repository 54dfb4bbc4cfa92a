#pragma once
// The scheduler side of volume binding (kube's volumebinding/binder.go): sorting a pod's claims
// into bound, unbound delayed (WaitForFirstConsumer) and unbound immediate ones, and finding for
// one node the volumes to bind and the claims to provision. Pure functions over the cycle's
// storage objects; the plugin keeps their results in the cycle state.
#include <map>
#include <string>
#include <vector>

#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "cache/volume_objects.hpp"
#include "plugins/framework/status.hpp"

namespace kas::plugins {

// FindPodVolumes' conflict reasons, v1.36's text.
inline constexpr std::string_view err_reason_bind_conflict = "node(s) didn't find available persistent volumes to bind";
inline constexpr std::string_view err_reason_node_conflict = "node(s) didn't match PersistentVolume's node affinity";
inline constexpr std::string_view err_reason_not_enough_space = "node(s) did not have enough free storage";
inline constexpr std::string_view err_reason_pv_not_exist =
  "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
inline constexpr std::string_view err_reason_unbound_immediate = "pod has unbound immediate PersistentVolumeClaims";

struct pod_volume_claims {
  std::vector<const pvc_info*> bound;
  std::vector<const pvc_info*> unbound_delay_binding;
  std::vector<const pvc_info*> unbound_immediate;
  // The volumes of each delayed claim's class, the candidates for static binding.
  std::map<std::string, std::vector<const pv_info*>> unbound_volumes_delay_binding;
};

struct binding_info {
  const pv_info* pv = nullptr;
  const pvc_info* pvc = nullptr;
};

struct dynamic_provision {
  const pvc_info* pvc = nullptr;
  // The CSIStorageCapacity that admitted it; null without capacity tracking.
  const csi_storage_capacity_info* node_capacity = nullptr;
};

// What the pod needs on one node besides its bound claims.
struct pod_volumes {
  std::vector<binding_info> static_bindings;
  std::vector<dynamic_provision> dynamic_provisions;
};

// kube's podHasPVCs: every claim the pod names exists, is not Lost nor being deleted, and an
// ephemeral one is owned by the pod. A failure is UnschedulableAndUnresolvable with kube's text.
fw::status check_pod_claims(const pod_info& pod, const volume_objects& objs, bool& has_claims);

// kube's GetPodVolumeClaims. Only called after check_pod_claims succeeded.
pod_volume_claims get_pod_volume_claims(const pod_info& pod, const volume_objects& objs);

// kube's FindPodVolumes for `node`: Success with `out` filled, UnschedulableAndUnresolvable with
// the conflict reasons, or Error.
fw::status find_pod_volumes(const pod_info& pod, const pod_volume_claims& claims, const node_info& node,
                            const volume_objects& objs, pod_volumes& out);

// kube's arePodVolumesBound: every claim of the pod is fully bound (volumeName set and
// pv.kubernetes.io/bind-completed present).
bool are_pod_volumes_bound(const pod_info& pod, const volume_objects& objs);

// The limit a CSIStorageCapacity offers one volume: maximumVolumeSize, else capacity; null when
// neither is set.
const int64_t* volume_limit(const csi_storage_capacity_info& c);

// metadata.annotations has `key` (any value).
bool claim_has_annotation(const pvc_info& claim, std::string_view key);

}  // namespace kas::plugins

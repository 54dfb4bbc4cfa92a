#pragma once
// pv_controller: the embedded cluster's stand-in for kube-controller-manager's PersistentVolume
// controller and for a dynamic provisioner, reduced to what the volume plugins depend on. Plain
// data, no CAF: the embedded cluster runs it after every storage write and applies what it returns.
//
// A volume without a phase (or Pending) becomes Available. Then, for each claim that is not Bound
// and not being deleted:
// - a claim with spec.volumeName binds to that volume if the volume exists and is free or already
//   reserved for it (claimRef), as the controller's syncBoundClaim/syncUnboundClaim;
// - otherwise the controller's findBestMatchForClaim, through the scheduler's FindMatchingVolume
//   (plugins/volume_binding/pv_matching.hpp): a claim some volume's claimRef names (the scheduler's
//   PreBind wrote it) takes that volume, and a claim of an Immediate class (or of no class) binds
//   to the smallest Available volume that matches it (class, access modes, volume mode,
//   attributes class, size, selector);
// - a claim of a class with a provisioner other than kubernetes.io/no-provisioner is provisioned:
//   Immediate claims at once, WaitForFirstConsumer claims once the scheduler set
//   volume.kubernetes.io/selected-node. The new volume is named pvc-<claim uid>, sized as requested,
//   and pinned, by node affinity, to the selected node's values of the topology keys its CSI driver
//   reports in that node's CSINode (no keys: no affinity, as a network volume).
// Binding writes both sides as the controller does: the volume's claimRef, phase Bound and (unless
// it was reserved for the claim) pv.kubernetes.io/bound-by-controller: "yes", the claim's
// spec.volumeName, phase Bound and pv.kubernetes.io/bind-completed: "yes".
//
// Not modelled: reclaim policies and release of volumes whose claim is deleted, expansion, the
// Lost phases, and the controller's resync delays (it acts at once).
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "cache/node_info.hpp"
#include "cache/volume_objects.hpp"

namespace kas {

// The node of a name, or null.
using node_lookup = std::function<const node_info*(const std::string& name)>;

// What a sync looks at: volumes without a phase and claims not Bound. The embedded cluster keeps it
// as objects change (note() after each applied change), so a sync after one write does not scan
// every volume and claim: SchedulingCSIPVs writes 20,000 of them.
struct pv_controller_work {
  std::set<std::string> new_volumes;     // names
  std::set<std::string> pending_claims;  // "ns/name", in key order
  void note(const volume_change& ch);
  void rebuild(const volume_objects& v);
};

// The writes the controller makes now, given the storage objects: each a volume_change whose old
// side is the stored object. Apply them in order, then call again until it returns none (a
// provisioned volume binds in the next call). Without `work`, every volume and claim is looked at.
std::vector<volume_change> pv_controller_sync(const volume_objects& v, const node_lookup& nodes,
                                              const pv_controller_work* work = nullptr);

}  // namespace kas

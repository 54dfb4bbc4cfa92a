#pragma once
// What a pod's volumes take of a node's CSI attach limits (kube's NodeVolumeLimits,
// filterAttachableVolumes), resolved from the storage objects: claim -> PV -> CSI driver and
// volume handle, an unbound claim through its StorageClass's provisioner, an in-tree volume through
// CSI migration.
//
// Filter compares a new pod's volumes with those of every pod already on the node. Resolving those
// pods again for every node tried was most of the volume workloads' CPU (two lookups and a cache
// miss per pod, per node, per pod scheduled), so the scheduler cache keeps the result per node in
// node_info::volume_usage, refreshed when a pod with such volumes comes or goes and when a storage
// object a refresh read changes (node_volume_usage::read names them).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "cache/pod_list.hpp"
#include "cache/volume_objects.hpp"

namespace kas {

// One volume a pod attaches to its node, or the reason it cannot be resolved.
struct attachable_volume {
  std::string driver;  // the CSI driver; for in-tree volumes the one they migrate to
  // The CSI volume handle; for a claim that is not bound yet, the claim's "ns/name".
  std::string handle;
  bool unbound_claim = false;  // `handle` names a claim, not a volume (so the two never meet)
  // In-tree: counts only on a node with a CSINode (where migration is on); so does `failure`.
  bool needs_csi_node = false;
  // Set when resolving this volume failed: Filter returns it and counts nothing after it.
  enum failure_t : uint8_t { none, missing_claim, error } failure = none;
  std::string message;  // the failure's text

  size_t hash = 0;  // of driver, handle and unbound_claim: compared first

  bool same_volume(const attachable_volume& o) const {
    return hash == o.hash && unbound_claim == o.unbound_claim && driver == o.driver && handle == o.handle;
  }
};

// Whether NodeVolumeLimits counts the volume: a claim, a generic ephemeral volume, or an inline
// in-tree volume kube can translate to CSI.
bool attachable(const pod_volume& v);
// An inline in-tree volume kube can translate to CSI (gcePersistentDisk, awsElasticBlockStore, ...).
bool migratable_inline(const pod_volume& v);
bool has_attachable_volumes(const pod_info& p);

// The storage objects a resolution looked up, found or not, as volume_change keys ("c:ns/name",
// "v:name", "s:name"): a change to any of them may change the result.
using storage_keys = std::vector<std::string>;

// kube's filterAttachableVolumes for one pod: its volumes in spec order. `new_pod` is the pod being
// scheduled, whose claims must exist; a pod already on the node skips a claim that is gone (there
// is no telling which volume it used). A failure that applies on every node ends the list.
std::vector<attachable_volume> attachable_volumes(const pod_info& pod, const volume_objects& objects, bool new_pod,
                                                  storage_keys* read = nullptr);

// Everything NodeVolumeLimits' Filter reads of one node, resolved: its CSINode's limits, and the
// volumes attached there, by its pods (each unique volume once, in-tree ones included: they count
// only on a node with a CSINode, where they migrate) and by VolumeAttachments no pod there
// accounts for. Filter reads it for every node it tries, so what it reads comes first and flat:
// the node's cache lines, not the objects', are what a pod's Filter pass streams through.
struct node_volume_usage {
  struct driver_limit {
    std::string driver;
    int64_t limit = 0;     // the CSINode's drivers[].allocatable.count
    int64_t attached = 0;  // the unique volumes of the driver attached now (pods and attachments)
  };
  csi_node_info_ptr csi_node;        // null: the node has none, and nothing limits it
  std::vector<driver_limit> limits;  // the CSINode's drivers that report a count
  std::vector<size_t> hashes;        // attachable_volume::hash of each of `volumes`
  bool failed = false;               // `failure` is set
  std::vector<attachable_volume> volumes;  // the pods' volumes, unique, none failed
  // The first of the pods' volumes that failed to resolve: Filter returns it (kube stops there too)
  // for any pod that adds a volume.
  std::optional<attachable_volume> failure;
  // The claims, volumes and classes the resolution read, sorted and unique (its CSINode "n:" and
  // VolumeAttachments "va:" are known by the node's name and left out).
  storage_keys read;

  bool uses(const attachable_volume& v) const;
  const driver_limit* limit_of(std::string_view driver) const;
};

// The usage of node `node` holding `pods` (those without attachable volumes are passed over); null
// when there is nothing to count: no CSINode, no attachment, no pod volume.
std::shared_ptr<const node_volume_usage> volume_usage_of(const std::string& node, const pod_list& pods,
                                                         const volume_objects& objects);

// The node's CSINode: from the usage the cache keeps in the node, else looked up.
const csi_node_info* csi_node_of(const node_info& node, const volume_objects& objects);

}  // namespace kas

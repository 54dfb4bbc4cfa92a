#pragma once
// The storage objects the volume plugins read (VolumeBinding, VolumeZone, VolumeRestrictions,
// NodeVolumeLimits): PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes,
// CSIDrivers, CSIStorageCapacities and VolumeAttachments, compiled once from their API objects and
// immutable after.
//
// They travel inside cluster_objects, in object_tables: a copy shares all but the one shard a
// change touches, so a cluster with thousands of claims publishes a claim's change in O(shard),
// not O(claims).
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/labels.hpp"
#include "cache/selectors.hpp"
#include "messages/result.hpp"

namespace k8s::core {
class PersistentVolume;
class PersistentVolumeClaim;
class VolumeSource;
}  // namespace k8s::core
namespace k8s::storage {
class StorageClass;
class CSINode;
class CSIDriver;
class CSIStorageCapacity;
class VolumeAttachment;
}  // namespace k8s::storage

namespace kas {

// --- well-known names ---------------------------------------------------------------------------

inline constexpr std::string_view ann_selected_node = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view ann_bind_completed = "pv.kubernetes.io/bind-completed";
inline constexpr std::string_view ann_bound_by_controller = "pv.kubernetes.io/bound-by-controller";
inline constexpr std::string_view ann_storage_provisioner = "volume.kubernetes.io/storage-provisioner";
inline constexpr std::string_view ann_beta_storage_provisioner = "volume.beta.kubernetes.io/storage-provisioner";
inline constexpr std::string_view ann_beta_storage_class = "volume.beta.kubernetes.io/storage-class";
inline constexpr std::string_view ann_migrated_plugins = "storage.alpha.kubernetes.io/migrated-plugins";

// Access modes as bits.
enum access_mode_bits : uint8_t {
  access_rwo = 1u << 0,   // ReadWriteOnce
  access_rox = 1u << 1,   // ReadOnlyMany
  access_rwx = 1u << 2,   // ReadWriteMany
  access_rwop = 1u << 3,  // ReadWriteOncePod
};

// What backs a volume, for the disk-conflict checks (VolumeRestrictions) and attach counting
// (NodeVolumeLimits). In-tree kinds keep the identifiers kube compares.
struct volume_source {
  enum kind_t : uint8_t { none, gce_pd, aws_ebs, azure_disk, cinder, rbd, iscsi, csi, host_path, local, other };
  kind_t kind = none;
  // gce_pd: pdName; aws_ebs: volumeID; azure_disk: diskURI; cinder: volumeID; csi: volumeHandle;
  // rbd: image; iscsi: iqn.
  std::string id;
  std::string driver;  // csi: the driver name
  bool read_only = false;
  // rbd
  std::vector<std::string> rbd_monitors;
  std::string rbd_pool;
  // iscsi
  std::string iscsi_target_portal;
  int32_t iscsi_lun = 0;
};

struct object_ref {
  std::string ns;
  std::string name;
  std::string uid;
};

struct pv_info {
  std::shared_ptr<const k8s::core::PersistentVolume> pv;  // the API object, as decoded
  std::string name;
  std::string uid;
  std::string resource_version;
  label_map labels;
  std::string storage_class;  // spec.storageClassName, or the beta annotation; "" = none
  int64_t capacity_bytes = 0;  // spec.capacity.storage
  uint8_t access_modes = 0;    // access_mode_bits
  bool block_mode = false;     // spec.volumeMode: Block (default Filesystem)
  std::optional<object_ref> claim_ref;  // spec.claimRef
  std::string phase;                    // status.phase
  std::optional<node_selector> node_affinity;  // spec.nodeAffinity.required
  // The node affinity of the PV kube's CSI translation gives a migratable in-tree PV (the zone
  // under the CSI driver's topology key), which VolumeBinding checks on nodes where the PV's plugin
  // is migrated; nullopt when translation leaves node_affinity as it is.
  std::optional<node_selector> csi_node_affinity;
  // Why that translation fails (the volume id does not translate), or empty.
  std::string csi_translation_error;
  volume_source source;
  bool bound_by_controller = false;  // annotation pv.kubernetes.io/bound-by-controller
  bool deleting = false;             // metadata.deletionTimestamp set
};

struct pvc_info {
  std::shared_ptr<const k8s::core::PersistentVolumeClaim> pvc;
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
  label_map labels;
  // spec.storageClassName; when unset, the beta annotation; nullopt when neither is set (kube tells
  // a nil class from "").
  std::optional<std::string> storage_class;
  std::string volume_name;  // spec.volumeName
  uint8_t access_modes = 0;
  int64_t request_bytes = 0;  // spec.resources.requests.storage
  bool block_mode = false;
  std::optional<label_selector> selector;  // spec.selector
  std::string phase;                       // status.phase
  std::string selected_node;               // annotation volume.kubernetes.io/selected-node
  bool bind_completed = false;             // annotation pv.kubernetes.io/bind-completed
  std::string provisioner;                 // annotation volume(.beta).kubernetes.io/storage-provisioner
  std::string controller_uid;              // metadata.ownerReferences[controller=true].uid
  bool deleting = false;
  std::string key() const { return ns + "/" + name; }
  // storageClassName as kube's GetPersistentVolumeClaimClass: the value, or "".
  const std::string& class_name() const;
};

enum class volume_binding_mode : uint8_t { unset, immediate, wait_for_first_consumer };

struct topology_requirement {
  std::string key;
  std::vector<std::string> values;
};
// One allowedTopologies term: every requirement must hold.
using topology_term = std::vector<topology_requirement>;

struct storage_class_info {
  std::shared_ptr<const k8s::storage::StorageClass> sc;
  std::string name;
  std::string provisioner;
  volume_binding_mode binding_mode = volume_binding_mode::unset;
  std::vector<topology_term> allowed_topologies;  // empty: anywhere
};

struct csi_node_driver {
  std::string name;
  std::string node_id;
  std::optional<int32_t> allocatable_count;  // allocatable.count; nullopt = no limit reported
  std::vector<std::string> topology_keys;
};

struct csi_node_info {
  std::shared_ptr<const k8s::storage::CSINode> csi_node;
  std::string name;  // the node's name
  std::vector<csi_node_driver> drivers;
  // Annotation storage.alpha.kubernetes.io/migrated-plugins: in-tree plugin names, e.g.
  // "kubernetes.io/aws-ebs".
  std::vector<std::string> migrated_plugins;
  const csi_node_driver* driver(std::string_view name) const;
};

struct csi_driver_info {
  std::shared_ptr<const k8s::storage::CSIDriver> csi_driver;
  std::string name;
  bool attach_required = true;    // spec.attachRequired (default true)
  bool storage_capacity = false;  // spec.storageCapacity (default false)
};

struct csi_storage_capacity_info {
  std::shared_ptr<const k8s::storage::CSIStorageCapacity> capacity_object;
  std::string ns;
  std::string name;
  std::string storage_class;
  std::optional<label_selector> node_topology;  // nil: matches no node
  std::optional<int64_t> capacity_bytes;
  std::optional<int64_t> maximum_volume_size_bytes;
};

// A VolumeAttachment: the attach/detach controller's record that a volume is (being) attached to
// a node. NodeVolumeLimits counts them against the attacher's limit on that node.
struct volume_attachment_info {
  std::shared_ptr<const k8s::storage::VolumeAttachment> attachment;
  std::string name;
  std::string attacher;   // spec.attacher: the CSI driver
  std::string node_name;  // spec.nodeName
  // spec.source.persistentVolumeName; nullopt for an inline volume's attachment.
  std::optional<std::string> pv_name;
};
using volume_attachment_info_ptr = std::shared_ptr<const volume_attachment_info>;

// The VolumeAttachments of one node, by name: what NodeVolumeLimits' Filter reads per node (kube
// indexes the informer by spec.nodeName for the same reason). apply_volume_change keeps it in step
// with volume_objects::attachments.
struct node_attachments {
  std::vector<volume_attachment_info_ptr> items;  // sorted by name
};

using pv_info_ptr = std::shared_ptr<const pv_info>;
using pvc_info_ptr = std::shared_ptr<const pvc_info>;
using storage_class_info_ptr = std::shared_ptr<const storage_class_info>;
using csi_node_info_ptr = std::shared_ptr<const csi_node_info>;
using csi_driver_info_ptr = std::shared_ptr<const csi_driver_info>;
using csi_storage_capacity_info_ptr = std::shared_ptr<const csi_storage_capacity_info>;

// A pod volume's inline source (kind none for claims and kinds no plugin reads).
volume_source inline_volume_source(const k8s::core::VolumeSource& v);

// Compilers. Errors name the field path ("spec.capacity.storage: ...").
result<pv_info_ptr> compile_pv(std::shared_ptr<const k8s::core::PersistentVolume> pv);
result<pvc_info_ptr> compile_pvc(std::shared_ptr<const k8s::core::PersistentVolumeClaim> pvc);
result<storage_class_info_ptr> compile_storage_class(std::shared_ptr<const k8s::storage::StorageClass> sc);
result<csi_node_info_ptr> compile_csi_node(std::shared_ptr<const k8s::storage::CSINode> n);
result<csi_driver_info_ptr> compile_csi_driver(std::shared_ptr<const k8s::storage::CSIDriver> d);
result<csi_storage_capacity_info_ptr> compile_csi_storage_capacity(
  std::shared_ptr<const k8s::storage::CSIStorageCapacity> c);
// Never fails: an attachment without attacher or volume name is kept, and Filter skips it as kube
// does (the apiserver's checks are the manifest loader's, validate_storage_object).
result<volume_attachment_info_ptr> compile_volume_attachment(std::shared_ptr<const k8s::storage::VolumeAttachment> a);

// --- object_table -------------------------------------------------------------------------------

// A map from key to immutable object whose copies share storage: 64 shards by key hash, each an
// immutable vector sorted by the key's hash, so a lookup is a binary search over hashes and one
// string compare (NodeVolumeLimits looks a claim and its volume up for every pod on every node it
// filters; a linear scan of a shard of 10,000 claims cost a third of that workload's CPU).
// put/erase copy the top array (64 references) and one shard.
template <class T>
class object_table {
public:
  using value_ptr = std::shared_ptr<const T>;

  const T* find(std::string_view key) const {
    const entry* e = locate(key);
    return e ? e->value.get() : nullptr;
  }
  value_ptr get(std::string_view key) const {
    const entry* e = locate(key);
    return e ? e->value : nullptr;
  }
  // Inserts or replaces; returns the previous value (null if none).
  value_ptr put(std::string key, value_ptr v) {
    size_t h = hash(key);
    auto& slot = shards_[h % shard_count];
    auto next = slot ? std::make_shared<shard>(*slot) : std::make_shared<shard>();
    auto it = lower(*next, h);
    for (; it != next->end() && it->hash == h; ++it)
      if (it->key == key) {
        value_ptr old = std::move(it->value);
        it->value = std::move(v);
        slot = std::move(next);
        return old;
      }
    next->insert(it, entry{h, std::move(key), std::move(v)});
    slot = std::move(next);
    ++size_;
    return nullptr;
  }
  // Removes; returns the removed value (null if absent).
  value_ptr erase(std::string_view key) {
    size_t h = hash(key);
    auto& slot = shards_[h % shard_count];
    if (!slot) return nullptr;
    auto it = lower(*slot, h);
    for (; it != slot->end() && it->hash == h; ++it)
      if (it->key == key) {
        auto next = std::make_shared<shard>(*slot);
        auto at = next->begin() + (it - slot->begin());
        value_ptr old = std::move(at->value);
        next->erase(at);
        slot = std::move(next);
        --size_;
        return old;
      }
    return nullptr;
  }
  // Visits every entry, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& s : shards_)
      if (s)
        for (const auto& e : *s) f(*e.value);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

private:
  struct entry {
    size_t hash;
    std::string key;
    value_ptr value;
  };
  using shard = std::vector<entry>;
  static constexpr size_t shard_count = 64;
  static size_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }
  template <class Shard>
  static auto lower(Shard& s, size_t h) {
    return std::lower_bound(s.begin(), s.end(), h, [](const entry& e, size_t v) { return e.hash < v; });
  }
  const entry* locate(std::string_view key) const {
    size_t h = hash(key);
    const auto& s = shards_[h % shard_count];
    if (!s) return nullptr;
    for (auto it = lower(*s, h); it != s->end() && it->hash == h; ++it)
      if (it->key == key) return &*it;
    return nullptr;
  }
  std::array<std::shared_ptr<const shard>, shard_count> shards_{};
  size_t size_ = 0;
};

// Every storage object, keyed as the listers key them: cluster-scoped kinds by name, namespaced
// kinds (claims, capacities) by "ns/name". Change `attachments` only through apply_volume_change,
// which keeps `attachments_by_node` in step.
struct volume_objects {
  object_table<pv_info> pvs;
  object_table<pvc_info> pvcs;
  object_table<storage_class_info> classes;
  object_table<csi_node_info> csi_nodes;
  object_table<csi_driver_info> csi_drivers;
  object_table<csi_storage_capacity_info> capacities;
  object_table<volume_attachment_info> attachments;
  object_table<node_attachments> attachments_by_node;  // by spec.nodeName

  const pvc_info* claim(std::string_view ns, std::string_view name) const {
    // Filter looks claims up per pod and node: the key is built in a buffer the thread keeps.
    thread_local std::string key;
    key.assign(ns).append("/").append(name);
    return pvcs.find(key);
  }
  const pv_info* volume(std::string_view name) const { return pvs.find(name); }
  const storage_class_info* storage_class(std::string_view name) const { return classes.find(name); }
  const csi_node_info* csi_node(std::string_view node) const { return csi_nodes.find(node); }
  const csi_driver_info* csi_driver(std::string_view name) const { return csi_drivers.find(name); }
  // The attachments whose spec.nodeName is `node`; null when it has none.
  const node_attachments* attachments_on(std::string_view node) const { return attachments_by_node.find(node); }
  bool empty() const {
    return pvs.empty() && pvcs.empty() && classes.empty() && csi_nodes.empty() && csi_drivers.empty() &&
           capacities.empty() && attachments.empty();
  }
};

// kube's isPVCFullyBound: spec.volumeName set and pv.kubernetes.io/bind-completed present.
inline bool claim_fully_bound(const pvc_info& c) { return !c.volume_name.empty() && c.bind_completed; }

// Every named claim of namespace `ns` exists and is fully bound: what a PreBind that wrote its
// bindings waits for, in the embedded cluster's store and over the API alike.
bool claims_bound(const volume_objects& v, std::string_view ns, const std::vector<std::string>& names);

// A change to one storage object: what the queue turns into a framework event
// (PersistentVolumeClaimAdd, ...), with the compiled old and new objects for QueueingHints.
struct volume_change {
  enum kind_t : uint8_t { pv, pvc, storage_class, csi_node, csi_driver, csi_storage_capacity, volume_attachment };
  kind_t kind = pv;
  // The object's identity across kinds: a kind letter and its table key ("c:default/data-0").
  std::string key;
  // Exactly one pair is used, the one of `kind`; old null = add, new null = delete.
  pv_info_ptr old_pv, new_pv;
  pvc_info_ptr old_pvc, new_pvc;
  storage_class_info_ptr old_class, new_class;
  csi_node_info_ptr old_csi_node, new_csi_node;
  csi_driver_info_ptr old_csi_driver, new_csi_driver;
  csi_storage_capacity_info_ptr old_capacity, new_capacity;
  volume_attachment_info_ptr old_attachment, new_attachment;

  bool has_old() const {
    return old_pv || old_pvc || old_class || old_csi_node || old_csi_driver || old_capacity || old_attachment;
  }
  bool has_new() const {
    return new_pv || new_pvc || new_class || new_csi_node || new_csi_driver || new_capacity || new_attachment;
  }
  // kube's event label: "PersistentVolumeClaimAdd", "StorageClassUpdate", "CSINodeDelete", ...
  std::string label() const;
};
using volume_change_ptr = std::shared_ptr<const volume_change>;

// Changes of one object, with `key` set.
volume_change pv_change(pv_info_ptr old_obj, pv_info_ptr new_obj);
volume_change pvc_change(pvc_info_ptr old_obj, pvc_info_ptr new_obj);
volume_change storage_class_change(storage_class_info_ptr old_obj, storage_class_info_ptr new_obj);
volume_change csi_node_change(csi_node_info_ptr old_obj, csi_node_info_ptr new_obj);
volume_change csi_driver_change(csi_driver_info_ptr old_obj, csi_driver_info_ptr new_obj);
volume_change capacity_change(csi_storage_capacity_info_ptr old_obj, csi_storage_capacity_info_ptr new_obj);
volume_change volume_attachment_change(volume_attachment_info_ptr old_obj, volume_attachment_info_ptr new_obj);
// `first`'s old state with `latest`'s new state: two waiting changes of one object folded.
volume_change fold_volume_changes(const volume_change& first, const volume_change& latest);

// Applies `ch` to `v`: the new object replaces the old under its key, or a delete removes it.
void apply_volume_change(volume_objects& v, const volume_change& ch);

}  // namespace kas

#pragma once
// cluster_store: the embedded cluster's object store, as plain data (no CAF). The embedded_cluster
// actor owns one and is its only user; it fans the changes each operation returns out to watchers.
//
// Design note. Every write is an operation that returns an `outcome`: the API status (404 when the
// pod or node is gone, 409 "already assigned" on a second binding, as the apiserver answers) and
// the cluster_changes it produced, each stamped with the next resourceVersion, in order. A write
// that changes nothing (an unchanged condition, a repeated phase) produces no change and no new
// resourceVersion. Pods and nodes are kept in creation order, so `list()` replays a manifest in the
// order it was applied (PrioritySort's FIFO among equal priorities depends on it). Stored objects
// are immutable (shared_ptr<const T>); an update stores a changed copy.
//
// change_coalescer: the changes a watcher has not received yet. While they wait, changes to one
// object fold into one (the state the watcher last saw -> the latest state), kept at the position
// of the first one; an object created and deleted while waiting vanishes. See push().
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "actors/event_correlator.hpp"
#include "actors/pv_controller.hpp"
#include "actors/protocol.hpp"

namespace kas {

class cluster_store {
public:
  struct outcome {
    fw::status status;                       // ok, or the API error (text as the apiserver's)
    std::vector<cluster_change_ptr> changes;  // in resourceVersion order
  };

  // Create or replace a node (an existing name is an update).
  outcome put_node(node_info_ptr n);
  // Delete a node by name; an unknown name changes nothing.
  outcome remove_node(const std::string& name);
  // Create a pod (spec.nodeName set: created bound). An existing uid changes nothing (AlreadyExists;
  // the loader rejects duplicates first).
  outcome create_pod(pod_info_ptr p);
  // Replace the non-pod, non-node objects (namespaces, workload selectors, PDBs, storage objects);
  // the PV controller then binds what it can.
  outcome set_objects(cluster_objects_ptr objects);
  // Create, replace or delete one storage object (`ch` carries the stored state as its old side
  // and the new state; a delete has no new side). A PVC or PV written through the API goes here
  // too, and then the PV controller's step (bind_claims) runs.
  outcome apply_volume(volume_change ch);
  // VolumeBinding's PreBind writes (pods' volumes, kube's BindPodVolumes): each volume and claim
  // replaces the stored one; one that is not stored fails the whole write with the apiserver's 404,
  // before anything is written. Then the PV controller runs.
  outcome write_volumes(const std::vector<std::shared_ptr<const k8s::core::PersistentVolume>>& pvs,
                        const std::vector<std::shared_ptr<const k8s::core::PersistentVolumeClaim>>& claims);
  // Whether every named claim of namespace `ns` is fully bound (spec.volumeName set and
  // pv.kubernetes.io/bind-completed), as VolumeBinding's PreBind waits for.
  bool claims_bound(const std::string& ns, const std::vector<std::string>& names) const;
  // Delete a pod by uid: 404 as an error status.
  outcome delete_pod(const std::string& uid);
  // Evict a pod for preemption: delete it and record a Preempted Event carrying `message`.
  outcome evict_pod(const std::string& uid, const std::string& message);
  // PATCH status.nominatedNodeName ("" clears it); unchanged writes nothing.
  outcome nominate(const std::string& uid, const std::string& node);
  // POST pods/binding: 404 if the pod or node is gone, 409 if already bound; sets PodScheduled=True.
  outcome bind(const std::string& uid, const std::string& node);
  // A node agent reports a pod's phase; unchanged writes nothing.
  outcome set_phase(const std::string& uid, const std::string& phase);
  // PATCH one status condition (kube-scheduler's updatePod): a change is an update flagged
  // conditions_only. A False report for a bound pod is dropped (the binding's True wins).
  outcome set_condition(const std::string& uid, const pod_condition& c);
  // Store an Event through the correlator (create, count increment, or nothing).
  void record_event(const cluster_event_record& ev,
                    event_correlator::clock::time_point now = event_correlator::clock::now());

  // The current state as a watcher's initial list: objects, nodes and pods in creation order, then
  // `synced`; every item carries the current resourceVersion.
  std::vector<cluster_change_ptr> list() const;
  cluster_stats stats() const;
  std::vector<pod_info_ptr> pods() const;  // in no particular order
  const std::vector<cluster_event_record>& events() const { return events_; }
  uint64_t resource_version() const { return rv_; }

private:
  void emit(outcome& out, cluster_change ch);
  void store_volume(outcome& out, volume_change ch);
  // The PV controller (pv_controller.hpp), until it has nothing more to write.
  void sync_volumes(outcome& out);
  void replace_pod(outcome& out, pod_info_ptr& stored, pod_info_ptr updated, bool conditions_only = false);
  pod_info_ptr* find_pod(const std::string& uid);

  std::unordered_map<std::string, node_info_ptr> nodes_;
  std::map<uint64_t, std::string> nodes_created_;
  std::unordered_map<std::string, uint64_t> node_seq_;
  std::unordered_map<std::string, pod_info_ptr> pods_;  // by uid
  std::map<uint64_t, std::string> pods_created_;
  std::unordered_map<std::string, uint64_t> pod_seq_;
  uint64_t next_seq_ = 0;
  cluster_objects_ptr objects_ = std::make_shared<const cluster_objects>();
  pv_controller_work volume_work_;  // what the PV controller's next sync looks at
  std::vector<cluster_event_record> events_;
  event_correlator correlator_;
  uint64_t rv_ = 0;
  size_t bound_ = 0, running_ = 0, conflicts_ = 0;
};

// The changes waiting for one watcher, coalesced per object (kind + uid or name).
//   pending (seen -> latest) + update  = seen -> newer latest (conditions_only only if both were)
//   pending add + delete               = nothing
//   pending (seen -> latest) + delete  = delete of the last state
//   pending delete + add               = update (seen -> new)
// `objects` keeps the latest; a storage object's changes fold like a pod's (first seen state ->
// latest); `synced` never folds. Order is the first appearance of each object.
//
// Folding costs a lookup and an entry per change, and only pays when a watcher is far behind. So the
// first `fold_after` waiting changes are kept as they are, in order; past that, until the watcher
// has taken everything, changes fold. Memory stays bounded by fold_after plus the number of objects.
class change_coalescer {
public:
  explicit change_coalescer(size_t fold_after = 0) : fold_after_(fold_after) {}
  void push(cluster_change_ptr ch);
  // Up to `max` changes, oldest first (coalesced changes are built here).
  std::vector<cluster_change_ptr> take(size_t max);
  bool empty() const { return live_ == 0; }
  size_t size() const { return live_; }

private:
  // Which object a change is about: kind ('p' pod, 'n' node, 'o' the objects, 'v' one storage
  // object; 0 for synced, which never folds) and its uid, name or volume_change::key, viewed in the
  // change's own object (no copy).
  struct object_key {
    char kind = 0;
    std::string_view id;
    bool operator==(const object_key& o) const { return kind == o.kind && id == o.id; }
  };
  struct entry {
    uint64_t hash = 0;         // of its object_key
    bool indexed = false;      // index_[hash] names this entry (later changes fold into it)
    cluster_change_ptr first;  // the change as pushed, while nothing folded into it
    bool folded = false;
    bool seen = false;         // the watcher knew the object before this entry
    bool cancelled = false;
    cluster_change merged;     // when folded: old_* = seen state, new_* = latest (null: deleted)
    pod_info_ptr last_pod;     // latest non-null state, for a delete
    node_info_ptr last_node;
    volume_change_ptr first_volume;  // a storage object's first waiting change (its seen state)
  };
  static object_key key_of(const cluster_change& ch);
  static object_key key_of(const entry& e);
  static void fold(entry& e, const cluster_change& ch);
  static cluster_change_ptr materialize(entry& e);
  void push_folded(cluster_change_ptr ch);
  size_t fold_after_;
  bool folding_ = false;
  std::deque<cluster_change_ptr> plain_;  // older than every entry
  std::deque<entry> entries_;
  uint64_t base_ = 0;  // sequence number of entries_.front()
  // Hash of an object_key -> sequence number of the entry later changes fold into. Two objects
  // whose keys collide do not fold: the second gets an entry of its own, outside the index.
  std::unordered_map<uint64_t, uint64_t> index_;
  size_t live_ = 0;
};

}  // namespace kas

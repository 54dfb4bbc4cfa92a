#pragma once
// scheduler_cache: the source of truth for scheduling decisions (pods, nodes, assumed pods).
// Plain data and pure functions; the snapshot_cache actor owns one instance and is its only user.
//
// Pod state machine (as kube-scheduler's cache):
//
//   +-------------------------------------------+  +----+
//   |                            Add            |  |    |
//   |                                           |  |    | Update
//   +      Assume                Add            v  v    |
// Initial +--------> Assumed +------------+---> Added <--+
//   ^                +   +               |       +
//   |                |   |               |       |
//   |                |   |           Add |       | Remove
//   |                |   |               |       |
//   |                |   |               +       |
//   +----------------+   +-----------> Expired   +----> Deleted
//         Forget             Expire
//
// An assumed pod is counted on its node at once. `finish_binding` starts its expiry clock (only when
// an expiry TTL is set; 0 means assumed pods never expire, kube's default). The Add event from the
// cluster (the pod seen bound) confirms it. Forget undoes an assume after a failed bind.
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/snapshot.hpp"
#include "messages/result.hpp"

namespace kas {

class scheduler_cache {
public:
  using clock = std::chrono::steady_clock;
  // `max_topology_counters` caps the topology index's counters (see topology_index.hpp).
  explicit scheduler_cache(std::chrono::nanoseconds assumed_ttl = std::chrono::nanoseconds{0},
                           size_t max_topology_counters = topology_index_writer::default_max_counters)
    : ttl_(assumed_ttl), topology_(max_topology_counters) {
    topology_.adopt(snap_.mutable_topology());
  }

  // Nodes.
  void add_or_update_node(std::shared_ptr<node_info> compiled);  // keeps the pods already on it
  void remove_node(const std::string& name);

  // Namespaces, workload selectors, PDBs: published with the next snapshot.
  void set_objects(cluster_objects_ptr objects);
  // One storage object's change, applied to the objects the next snapshot publishes. The cluster's
  // version of an object replaces what a pod assumed of it.
  void apply_volume(const volume_change& ch);
  // Storage objects a reserved pod will write (its volumes' claimRefs, its claims' selected node),
  // published at once so later cycles see those volumes taken (kube's AssumePodVolumes). They stay
  // until the cluster's versions arrive, or until forget_pod(uid) puts the cluster's back.
  void assume_volumes(const std::string& uid, const std::vector<volume_change>& assumed);
  // Whether a storage object changed (the cluster's or an assumption) after snapshot generation `g`.
  bool storage_changed_since(uint64_t g) const { return storage_changed_ > g; }
  // kube's nominator: unbound pods nominated to a node, carried by snapshots so Filter counts them
  // on their nominated node. Call on every pod add/update/delete (null = absent). A nomination
  // comes from status.nominatedNodeName, or from `nominate` before that write is seen; as in
  // kube's UpdateNominatedPod, an update that carries no nomination after one that carried none
  // keeps the nomination made in memory. A pod leaves the map when it is bound, assumed, deleted,
  // or its nomination is cleared.
  void update_nominated(const pod_info_ptr& old_p, const pod_info_ptr& new_p);
  // A nomination made by this scheduler's PostFilter (empty `node` clears it), in memory at once, as
  // kube's AddNominatedPod. Ignored, returning false, for a pod the cluster no longer has unbound
  // (deleted, bound) or that is assumed: a late nomination must not reserve room for nobody.
  bool nominate(const pod_info_ptr& p, const std::string& node);

  // Pods seen bound in the cluster (spec.nodeName set). Confirms an assumed pod: when the
  // cluster's version changes nothing a reader of the node looks at (same_placement), the assumed
  // object stays placed and the node is unchanged; otherwise the cluster's version replaces it.
  status_or_error add_pod(const pod_info_ptr& p);
  status_or_error update_pod(const pod_info_ptr& old_p, const pod_info_ptr& new_p);
  status_or_error remove_pod(const pod_info_ptr& p);

  // Assume: count `p` on `node` before the binding lands. Fails if the pod is already cached.
  status_or_error assume_pod(const pod_info_ptr& p, const std::string& node);
  void finish_binding(const std::string& uid, clock::time_point now);
  status_or_error forget_pod(const std::string& uid);
  // Drops assumed pods whose binding finished more than ttl ago; returns their uids.
  std::vector<std::string> cleanup_expired(clock::time_point now);

  bool is_assumed(const std::string& uid) const;
  bool contains(const std::string& uid) const { return pods_.count(uid) != 0; }
  size_t pod_count() const { return pods_.size(); }
  size_t assumed_count() const;
  size_t node_count() const { return snap_.size(); }

  // What changed since a snapshot generation, for re-validating a reservation incrementally (kube's
  // PreFilterExtensions AddPod/RemovePod applied to the cycle's state instead of a new PreFilter).
  struct pod_change {
    uint64_t generation;
    bool added;  // placed on its node (assume, add, update's new side), else removed from it
    pod_info_ptr pod;
  };
  // The pod placements and removals after generation `since`, oldest first. False when they are not
  // all known (the log keeps the last change_log_limit entries) or something else changed in
  // between: a node added, updated or removed, or the namespace/workload objects.
  bool pod_changes_since(uint64_t since, std::vector<const pod_change*>& out) const;
  static constexpr size_t change_log_limit = 16384;

  // The current snapshot; cheap (a shared_ptr copy after the first call following a change).
  snapshot_ptr current();
  uint64_t generation() const { return generation_; }
  // The generation current() would carry, without publishing (ghost nodes' changes do not move it).
  uint64_t snapshot_generation() const { return snap_.generation(); }
  const node_info* node(const std::string& name) const { return snap_.find(name); }

private:
  struct pod_state {
    pod_info_ptr pod;  // with node_name set
    bool assumed = false;
    bool binding_finished = false;
    clock::time_point deadline{};
    size_t slot = SIZE_MAX;  // its position in its node's pods (node_info::position_of's hint)
  };
  // Adds to its node (creating an empty node if unknown); returns its position there.
  size_t place(const pod_info_ptr& p);
  // Removes from its node; `slot` is where it was placed.
  void unplace(const pod_info_ptr& p, size_t slot);
  // unplace(old_p) + place(new_p) with one copy of the node when both are on the same node (a
  // bound pod's status update, an assumed pod's confirmation): the cache's most frequent change.
  // Returns new_p's position.
  size_t replace(const pod_info_ptr& old_p, size_t slot, const pod_info_ptr& new_p);
  // Removes the pod at `at` from `n`; on a node of more than one chunk, the pod that took its place
  // (the last) records its new slot.
  void remove_at(node_info& n, size_t at);
  // Stores a changed node where it lives (snapshot index `at` from mutable_copy, or ghosts_ when
  // -1), stamping a new generation. True when it is in the snapshot (so its pods count in the
  // topology index).
  bool put_node(std::shared_ptr<node_info> n, long at);
  // Keeps the topology-index counters for the spread constraints and required anti-affinity terms
  // of a pod about to be placed, so the next pods of its kind (a workload's replicas share them)
  // find their counts indexed.
  void track_constraints(const pod_info& p);
  // A copy of node `name` to change (null if unknown), and `at`, its snapshot index (-1: a ghost or
  // unknown), so the change is stored without a second name lookup.
  std::shared_ptr<node_info> mutable_copy(const std::string& name, long& at) const;
  void drop_pod(const std::string& uid);  // unplace + forget the state

  std::chrono::nanoseconds ttl_;
  std::unordered_map<std::string, pod_state> pods_;
  // Ghost nodes: known only from pods that reference them (the Node is not, or no longer, known).
  // Kept out of the snapshot, as kube's cache keeps nodeInfos whose Node() is nil out of its snapshot.
  std::unordered_map<std::string, std::shared_ptr<node_info>> ghosts_;
  snapshot snap_;
  topology_index_writer topology_;  // keeps snap_.topology() equal to a recount of snap_
  snapshot::nominated_map nominated_;  // node -> unbound pods nominated to it
  std::unordered_map<std::string, std::string> nominated_node_;  // uid -> its node in nominated_
  // Uids of the cluster's unbound pods (kube's nominator asks its pod lister the same).
  std::unordered_set<std::string> unbound_;
  // Moves `uid`'s nomination to `node` (empty: none), holding `p`; publishes when anything changed.
  void set_nomination(const std::string& uid, const pod_info_ptr& p, const std::string& node);
  snapshot_ptr published_;
  uint64_t generation_ = 0;
  void log_pod(bool added, const pod_info_ptr& p);
  void log_structural() { structural_ = generation_; }
  std::deque<pod_change> changes_;
  uint64_t changes_floor_ = 0;  // changes at or before this generation are no longer logged
  uint64_t structural_ = 0;     // generation of the last node or objects change
  uint64_t storage_changed_ = 0;  // generation of the last storage object change
  // Assumed storage objects: per pod, each object's cluster version (null: none) to put back on
  // forget; and which pod's assumption each object (volume_change::key) holds now.
  std::unordered_map<std::string, std::vector<volume_change>> assumed_storage_;
  std::unordered_map<std::string, std::string> storage_owner_;
  void publish_volume(const volume_change& ch);
  void restore_volumes(const std::string& uid);
  // Recomputes n.volume_usage when a pod change left it stale (node_info::volume_usage_current),
  // and keeps volume_readers_ in step.
  void refresh_volume_usage(node_info& n);
  // Moves `node` in volume_readers_ from the keys its old usage read to those its new one reads.
  void reindex_volume_usage(const std::string& node, const std::vector<std::string>& old_keys,
                            const std::vector<std::string>& new_keys);
  // Storage object key (volume_change::key) -> the nodes whose volume_usage read it.
  std::unordered_map<std::string, std::vector<std::string>> volume_readers_;
};

}  // namespace kas

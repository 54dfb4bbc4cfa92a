#pragma once
// The extension-point interfaces (kube-scheduler's framework/interface.go). A plugin implements the
// small interfaces for the points it serves; the registry builds it, the profile's framework calls
// it. Plugins hold no state between cycles (per-cycle data lives in cycle_state) and never include
// CAF: they are synchronous and deterministic, and may run on any worker thread concurrently, so
// every const method must be thread-safe.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/node_info.hpp"
#include "cache/snapshot.hpp"
#include "plugins/framework/cycle_state.hpp"
#include "plugins/framework/events.hpp"
#include "plugins/framework/groups.hpp"
#include "plugins/framework/status.hpp"

namespace kas::fw {

inline constexpr int64_t max_node_score = 100;
inline constexpr int64_t min_node_score = 0;

class plugin {
public:
  virtual ~plugin() = default;
  virtual std::string_view name() const = 0;
};

// --- queueing -----------------------------------------------------------------------------------

// A pod as the queue holds it.
struct queued_pod_info {
  pod_info_ptr pod;
  int64_t timestamp_ns = 0;            // when it (re-)entered the queue; PrioritySort's tie-break
  int64_t initial_attempt_ns = 0;      // first time it was popped
  int attempts = 0;
  std::set<std::string_view> unschedulable_plugins;  // plugins that rejected it last time
  std::set<std::string_view> pending_plugins;
  std::string_view gated_by;                          // PreEnqueue plugin that gated it
  // Set when the pod is popped as a member of a gang (see groups.hpp).
  std::shared_ptr<const gang_ticket> gang;
  // Set by the queue when a member of a pod group enters activeQ: its PodGroup as the queue knew it
  // then, and the group's creationTimestamp on the queue's clock (timestamp_ns's; the pod's own
  // timestamp when the group has none). QueueSort orders a group's members as one unit by them.
  pod_group_ptr group;
  int64_t group_order_ns = 0;
};

class pre_enqueue_plugin : public virtual plugin {
public:
  // Success lets the pod into activeQ; anything else gates it until a relevant event. `groups` is
  // what the queue knows of pod groups (GangScheduling's quorum of pods).
  virtual status pre_enqueue(const pod_info& pod, const group_directory& groups) const = 0;
};

class queue_sort_plugin : public virtual plugin {
public:
  virtual bool less(const queued_pod_info& a, const queued_pod_info& b) const = 0;
};

// EnqueueExtensions: the cluster events that may make a pod rejected by this plugin schedulable.
class enqueue_extensions : public virtual plugin {
public:
  virtual std::vector<cluster_event_with_hint> events_to_register() const = 0;
};

// --- scheduling cycle ---------------------------------------------------------------------------

// PreFilterResult: the nodes the pod may go to; neither form set = all nodes. kube's form is a set
// of node names. A plugin that reads its nodes off the snapshot it was given may hand them over as
// that snapshot's indexes instead (ascending, shared and never changed afterwards), so a result of
// hundreds of nodes costs the framework no lookup by name and no copy per cycle. A plugin sets at
// most one of the two; merged results take the index form when either side has it.
struct pre_filter_result {
  std::optional<std::set<std::string>> node_names;
  std::shared_ptr<const std::vector<uint32_t>> node_indexes;
  // Plugins whose result narrowed the node set (kube's pluginsWithNodes), in run order.
  std::vector<std::string_view> from_plugins;
  bool all_nodes() const { return !node_names.has_value() && !node_indexes; }
  // Narrowed to no node at all (false for all nodes).
  bool empty() const;
  // Whether the node named `name` of `snap` (the snapshot PreFilter ran on) is among the nodes.
  bool contains(const snapshot& snap, std::string_view name) const;
  // The nodes as kube's set of names (all_nodes(): nullopt).
  std::optional<std::set<std::string>> names(const snapshot& snap) const;
  // kube's Merge: the intersection of two results, both from PreFilters that ran on `snap` (it
  // names the indexes when one side has names and the other indexes).
  pre_filter_result merge(const pre_filter_result& other, const snapshot& snap) const;
};

class pre_filter_extensions {
public:
  virtual ~pre_filter_extensions() = default;
  virtual status add_pod(cycle_state& state, const pod_info& pod_to_schedule, const pod_info& pod_to_add,
                         const node_info& node) const = 0;
  virtual status remove_pod(cycle_state& state, const pod_info& pod_to_schedule,
                            const pod_info& pod_to_remove, const node_info& node) const = 0;
};

class pre_filter_plugin : public virtual plugin {
public:
  // Skip skips this plugin's Filter for the cycle.
  virtual status pre_filter(cycle_state& state, const pod_info& pod, const snapshot& snap,
                            pre_filter_result& result) const = 0;
  virtual const pre_filter_extensions* extensions() const { return nullptr; }
};

// A pod's Filter over node_hot records alone, assembled once per cycle from every Filter plugin
// that runs (see filter_plugin::hot_filter). `passes` true means every one of those plugins'
// Filter returns Success on that node; false means "run the Filters", which decide and give the
// reasons. So it may be conservative, never lenient.
struct hot_filter {
  bool reject_unschedulable = false;  // a node with spec.unschedulable needs the full Filters
  bool reject_tainted = false;        // a node with any taint needs the full Filters
  bool check_fit = false;             // pod count, and CPU and memory when requested
  int64_t cpu = 0, mem = 0;
  bool passes(const node_hot& n) const {
    if (reject_unschedulable && n.has(node_hot::unschedulable)) return false;
    if (reject_tainted && n.has(node_hot::tainted)) return false;
    if (check_fit) {
      if (static_cast<int64_t>(n.pods) + 1 > n.alloc_pods) return false;
      if (cpu > 0 && cpu > n.alloc_cpu - n.req_cpu) return false;
      if (mem > 0 && mem > n.alloc_mem - n.req_mem) return false;
    }
    return true;
  }
};

class filter_plugin : public virtual plugin {
public:
  virtual status filter(const cycle_state& state, const pod_info& pod, const node_info& node) const = 0;
  // Adds to `out` what this plugin's Filter needs for `pod` in hot-record terms, after PreFilter
  // ran. False (the default): it cannot say from node_hot alone, and every node gets the Filters.
  virtual bool hot_filter(const cycle_state& state, const pod_info& pod, fw::hot_filter& out) const {
    (void)state, (void)pod, (void)out;
    return false;
  }
  // For --explain, on a node Filter rejected: what exactly did not fit (the taint, the label, the
  // term), when the status's reason, which is kube's and counted in FitError messages, does not
  // name it. Empty: the reason says it all.
  virtual std::string explain(const cycle_state& state, const pod_info& pod, const node_info& node) const {
    (void)state, (void)pod, (void)node;
    return {};
  }
  // True when the verdict on one node depends on pods on other nodes (InterPodAffinity,
  // PodTopologySpread). With several pods in flight, a reservation for such a pod is re-validated
  // against the whole current snapshot, not just the chosen node.
  virtual bool cross_node() const { return false; }
  // For a cross-node plugin whose PreFilter returned Skip: whether `changed` appearing on or leaving
  // a node could have made PreFilter not skip. A reservation is re-validated incrementally (AddPod /
  // RemovePod on the cycle's state) only while no skipped cross-node plugin says yes; otherwise
  // PreFilter runs again on the current snapshot. The default is the safe answer.
  virtual bool skip_may_change_with(const pod_info& changed) const {
    (void)changed;
    return true;
  }
};

// Per-node statuses of a failed cycle, for PostFilter and the FailedScheduling message.
struct node_to_status {
  std::unordered_map<std::string, status> statuses;
  // Status for nodes not in the map (a PreFilter rejection applies it to every node).
  std::optional<status> absent;
  const status* get(const std::string& node) const;
};

struct post_filter_result {
  std::string nominated_node_name;
  // Pods the PostFilter plugin evicted to make room (DefaultPreemption's victims).
  std::vector<pod_info_ptr> victims;
};

// The parts of the running framework a PostFilter plugin calls back into (kube's framework.Handle:
// RunFilterPluginsWithNominatedPods and the PreFilter extensions), so preemption can ask "would the
// pod fit on this node without these victims" with the profile's own filters.
class framework_ops {
public:
  virtual ~framework_ops() = default;
  // kube's RunFilterPluginsWithNominatedPods: Filter `node` for `pod`, counting pods nominated to the
  // node with priority >= the pod's as if they were running there (they run twice, with and without).
  virtual status run_filter_with_nominated_pods(const cycle_state& state, const pod_info& pod,
                                                const node_info& node, const snapshot& snap) const = 0;
  virtual status run_pre_filter_add_pod(cycle_state& state, const pod_info& pod, const pod_info& to_add,
                                        const node_info& node) const = 0;
  virtual status run_pre_filter_remove_pod(cycle_state& state, const pod_info& pod, const pod_info& to_remove,
                                           const node_info& node) const = 0;
};

class post_filter_plugin : public virtual plugin {
public:
  virtual status post_filter(cycle_state& state, const pod_info& pod, const snapshot& snap,
                             const node_to_status& filtered, const framework_ops& fwk,
                             post_filter_result& result) const = 0;
};

class pre_score_plugin : public virtual plugin {
public:
  // Skip skips this plugin's Score for the cycle.
  virtual status pre_score(cycle_state& state, const pod_info& pod,
                           const std::vector<const node_info*>& nodes) const = 0;
};

struct node_score {
  std::string_view name;  // view of node_info::name inside the cycle's snapshot
  int64_t score = 0;
};

class score_plugin : public virtual plugin {
public:
  virtual status score(const cycle_state& state, const pod_info& pod, const node_info& node,
                       int64_t& out) const = 0;
  // Scores nodes[0..n) into out[0..n), exactly as n calls of score() would. A plugin overrides it
  // to read its cycle state once and loop tightly; the default calls score() per node.
  virtual status score_nodes(const cycle_state& state, const pod_info& pod, const node_info* const* nodes,
                             size_t n, int64_t* out) const {
    for (size_t i = 0; i < n; ++i) {
      auto s = score(state, pod, *nodes[i], out[i]);
      if (!s.is_success()) return s;
    }
    return status::ok();
  }
  // Scores from the nodes' hot records (hot[i] is nodes[i]'s), exactly as score_nodes would; false
  // (the default, or a case node_hot cannot answer) leaves `out` to score_nodes.
  virtual bool score_hot(const cycle_state& state, const pod_info& pod, const node_hot* const* hot, size_t n,
                         int64_t* out) const {
    (void)state, (void)pod, (void)hot, (void)n, (void)out;
    return false;
  }
  virtual bool has_normalize() const { return false; }
  virtual status normalize_score(const cycle_state&, const pod_info&, std::vector<node_score>&) const {
    return status::ok();
  }
  // NormalizeScore over a plain row (scores[i] is nodes[i]'s), exactly as normalize_score over
  // the same nodes' node_score entries. The default builds those entries (normalize_score may read
  // the names) and copies the scores back; a plugin whose normalization ignores names overrides it,
  // so a pod scored on one thread never builds the per-node list.
  virtual status normalize_row(const cycle_state& state, const pod_info& pod, const node_info* const* nodes,
                               size_t n, int64_t* scores) const {
    thread_local std::vector<node_score> entries;
    entries.resize(n);
    for (size_t i = 0; i < n; ++i) entries[i] = {nodes[i]->name, scores[i]};
    auto s = normalize_score(state, pod, entries);
    for (size_t i = 0; i < n; ++i) scores[i] = entries[i].score;
    return s;
  }
};

class reserve_plugin : public virtual plugin {
public:
  virtual status reserve(cycle_state& state, const pod_info& pod, const std::string& node) const = 0;
  // Must be idempotent; called in reverse plugin order.
  virtual void unreserve(cycle_state& state, const pod_info& pod, const std::string& node) const = 0;
};

class permit_plugin : public virtual plugin {
public:
  // Wait with a timeout parks the pod in the permit coordinator until allowed, rejected or timed out.
  virtual status permit(cycle_state& state, const pod_info& pod, const std::string& node,
                        std::chrono::milliseconds& timeout) const = 0;
};

// --- binding cycle ------------------------------------------------------------------------------

class pre_bind_plugin : public virtual plugin {
public:
  // Skip means PreBind has nothing to do for this pod (and may be skipped entirely).
  virtual status pre_bind_pre_flight(cycle_state& state, const pod_info& pod, const std::string& node) const {
    (void)state, (void)pod, (void)node;
    return status::ok();
  }
  virtual status pre_bind(cycle_state& state, const pod_info& pod, const std::string& node) const = 0;
  // PreBind that waits on the cluster (VolumeBinding writes claims and waits until they are bound).
  // Pending: `done` will be called exactly once, from any thread, with the result; any other
  // status is the synchronous result and `done` is not called. The default runs pre_bind.
  virtual status pre_bind_async(cycle_state& state, const pod_info& pod, const std::string& node,
                                std::function<void(status)> done) const {
    (void)done;
    return pre_bind(state, pod, node);
  }
};

using bind_callback = std::function<void(status)>;

class bind_plugin : public virtual plugin {
public:
  // Skip: this plugin does not bind this pod (the next one is asked). Pending: the bind was started
  // and `done` will be called exactly once, from any thread. Any other status is the synchronous
  // result and `done` is not called.
  virtual status bind(const cycle_state& state, const pod_info& pod, const std::string& node,
                      bind_callback done) const = 0;
};

class post_bind_plugin : public virtual plugin {
public:
  virtual void post_bind(const cycle_state& state, const pod_info& pod, const std::string& node) const = 0;
};

// SignPod (KEP-5598): a signature of everything that affects this plugin's verdicts for the pod.
// Pods with equal signatures across all plugins may reuse each other's feasibility results.
class sign_plugin : public virtual plugin {
public:
  // Returns false when the pod cannot be signed (it must not be batched).
  virtual bool sign_pod(const pod_info& pod, std::string& out) const = 0;
};

}  // namespace kas::fw

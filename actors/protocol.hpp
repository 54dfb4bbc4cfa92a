#pragma once
// The actor protocol: atoms and the small immutable message types actors exchange. Every custom
// message type is announced here, in one block at the end, and nowhere else.
//
// Ownership rule: messages carry shared_ptr<const T> (pods, nodes, snapshots, frameworks), so a
// receiver can never mutate what the sender still sees. The one exception is cycle_ctx: it holds a
// pod's mutable CycleState and moves along the pipeline (driver -> permit -> binder); the actor that
// last received it is its only user, and a sender never touches it after sending.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <tuple>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "cache/snapshot.hpp"
#include "plugins/framework/runtime/framework.hpp"
#include "plugins/framework/runtime/schedule_one.hpp"

namespace kas {

// --- atoms (CAF 0.17: at most 10 characters) ---------------------------------------------------
using watch_atom = caf::atom_constant<caf::atom("watch")>;
using event_atom = caf::atom_constant<caf::atom("event")>;
using bind_atom = caf::atom_constant<caf::atom("bind")>;
using delete_atom = caf::atom_constant<caf::atom("delete")>;
using status_atom = caf::atom_constant<caf::atom("podstatus")>;
using create_atom = caf::atom_constant<caf::atom("create")>;
using record_atom = caf::atom_constant<caf::atom("record")>;
using assume_atom = caf::atom_constant<caf::atom("assume")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;
using finished_atom = caf::atom_constant<caf::atom("finished")>;
using snap_atom = caf::atom_constant<caf::atom("snapshot")>;
using pop_atom = caf::atom_constant<caf::atom("pop")>;
using requeue_atom = caf::atom_constant<caf::atom("requeue")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using work_atom = caf::atom_constant<caf::atom("work")>;
using wait_atom = caf::atom_constant<caf::atom("wait")>;
using allow_atom = caf::atom_constant<caf::atom("allow")>;
using reject_atom = caf::atom_constant<caf::atom("reject")>;
using timeout_atom = caf::atom_constant<caf::atom("timeout")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using result_atom = caf::atom_constant<caf::atom("result")>;
using outcomes_atom = caf::atom_constant<caf::atom("outcomes")>;
using link_atom = caf::atom_constant<caf::atom("wire")>;
using list_atom = caf::atom_constant<caf::atom("list")>;
using evict_atom = caf::atom_constant<caf::atom("evict")>;
using nominate_atom = caf::atom_constant<caf::atom("nominate")>;
using delpod_atom = caf::atom_constant<caf::atom("delpod")>;
using credit_atom = caf::atom_constant<caf::atom("credit")>;
using run_atom = caf::atom_constant<caf::atom("run")>;
using gang_atom = caf::atom_constant<caf::atom("gang")>;

// --- cluster events ------------------------------------------------------------------------------

// `synced` marks the end of a watcher's initial list (an informer's HasSynced). `objects` carries a
// new cluster_objects (namespaces, workload selectors, PDBs, storage objects), replacing them all.
// `volume` is one storage object's change (a PersistentVolume, claim, StorageClass, CSINode,
// CSIDriver or CSIStorageCapacity), applied to the objects the watcher holds.
enum class cluster_event_type : uint8_t {
  node_add, node_update, node_delete, pod_add, pod_update, pod_delete, synced, objects, volume
};

// VolumeBinding's PreBind writes for one pod (fw::cluster_client::bind_volumes): the volumes and
// claims to write, then the claims (in the pod's namespace) to wait for until they are bound or the
// timeout passes.
struct volume_write {
  std::string pod_key;  // ns/name, for messages
  std::string ns;
  std::vector<std::shared_ptr<const k8s::core::PersistentVolume>> pvs;
  std::vector<std::shared_ptr<const k8s::core::PersistentVolumeClaim>> claims;
  std::vector<std::string> wait_for;
  std::chrono::milliseconds timeout{0};
};
using volume_write_ptr = std::shared_ptr<const volume_write>;

using volume_changes_ptr = std::shared_ptr<const std::vector<volume_change>>;

// One change in the cluster, compiled at the edge (the cluster source). Nodes are carried without
// pods (the cache aggregates pods itself).
struct cluster_change {
  cluster_event_type type = cluster_event_type::pod_add;
  pod_info_ptr old_pod, new_pod;
  node_info_ptr old_node, new_node;
  cluster_objects_ptr objects;
  volume_change_ptr volume;  // type volume
  uint64_t resource_version = 0;
  // A pod_update that changed only status.conditions: kube's queue ignores such updates
  // (isPodUpdated strips status), so the scheduling queue does not requeue on them.
  bool conditions_only = false;
};
using cluster_change_ptr = std::shared_ptr<const cluster_change>;

// Changes delivered to a watcher in one message, in order; one batch may go to several watchers.
// Credit is counted in changes: once the watcher has applied `ack_every` changes it has not
// credited yet, it sends (credit_atom, n) back to the batch's sender (watch_credit in
// embedded_cluster.hpp), which knows the watcher by that message's sender.
struct cluster_change_batch {
  std::vector<cluster_change_ptr> changes;
  uint64_t ack_every = 1;
};
using cluster_change_batch_ptr = std::shared_ptr<const cluster_change_batch>;

// An Event object as the cluster stores it (core/v1 Event, reduced).
struct cluster_event_record {
  std::string type;    // Normal | Warning
  std::string reason;  // Scheduled | FailedScheduling | Preempted
  std::string pod_uid, pod_key;
  std::string message;
  std::string node;    // the node involved (Scheduled, Preempted), if any
  // Set by the cluster's event correlator (client-go EventCorrelator): identical events on one
  // object are one Event whose count grows; lastTimestamp is the latest occurrence.
  int32_t count = 1;
  std::chrono::system_clock::time_point first_timestamp{}, last_timestamp{};
};

// A continuation a cluster source posts to itself: the API source's I/O thread completes requests
// and hands the result back to the actor this way, so only the actor touches its state.
struct source_task {
  std::function<void()> fn;
};

// Counters the cluster exposes to `simulate` and tests.
struct cluster_stats {
  size_t nodes = 0, pods = 0, bound = 0, running = 0, events = 0;
  uint64_t resource_version = 0;
  size_t bind_conflicts = 0;
  size_t writes_in_flight = 0;  // the API source: requests sent or waiting, not yet answered
};

// --- scheduling pipeline ---------------------------------------------------------------------------

// A pod handed out by the queue, with its queue bookkeeping.
using queued_pod_ptr = std::shared_ptr<const fw::queued_pod_info>;

// Stage "failed": a cycle ended without a binding (kube's FailureHandler input). Any stage that
// can end a cycle (driver, permit coordinator, binder) sends it to the queue, which parks the pod
// as unschedulable or in backoff; the event recorder gets the FailedScheduling message.
struct failure {
  queued_pod_ptr pod;
  fw::status result;          // rejection or error
  std::string message;        // FailedScheduling text
  std::set<std::string_view> unschedulable_plugins;
  std::set<std::string_view> pending_plugins;
  uint64_t cycle = 0;         // the scheduling cycle that popped it
  // When this attempt started (the pod's pop): scheduler_scheduling_attempt_duration_seconds
  // observes now - started. Left at the epoch, the attempt is counted but its duration is not.
  std::chrono::steady_clock::time_point started{};
  // Set when a binding cycle (WaitOnPermit, PreBind, Bind) failed and forgot its assumed pod: the
  // freed room is an AssignedPodDelete for the pods it may have kept out (kube's
  // handleBindingCycleError). Null for a failure in the scheduling cycle.
  pod_info_ptr forgotten;
  // Set when the permit coordinator failed the pod because its gang failed (it is not another
  // member's failure to report to the coordinator).
  bool gang_rejection = false;
};

// A gang member failed (report_failure tells the permit coordinator): in the scheduling cycle, the
// gang's attempt cannot be whole; in the binding cycle, an admitted member no longer holds its
// place.
struct gang_member_failed {
  std::shared_ptr<const fw::gang_ticket> ticket;
  std::string uid;
  std::set<std::string_view> unschedulable_plugins;
  std::string message;
  bool in_binding = false;
};

// The in-flight state of one pod past Reserve; moved along, never shared (see the ownership rule):
// the stages "permit wait" (driver -> permit coordinator) and "bind" (driver or permit coordinator
// -> a binder) carry it.
struct cycle_ctx {
  fw::framework_ptr fwk;
  queued_pod_ptr queued;
  pod_info_ptr assumed;  // the pod as assumed on `node`
  std::string node;
  fw::cycle_state state;
  uint64_t cycle = 0;
  std::chrono::steady_clock::time_point started{};
  std::vector<std::pair<std::string_view, std::chrono::milliseconds>> permit_waits;
};
using cycle_ctx_ptr = std::shared_ptr<cycle_ctx>;

// What every node-range stage sends a worker: which cycle and range, and the pod's cycle as the
// driver holds it after PreFilter (or PreScore).
struct range_work {
  uint64_t cycle = 0;
  uint32_t range = 0;  // position of this range in the examination order
  fw::framework_ptr fwk;
  pod_info_ptr pod;
  std::shared_ptr<const fw::cycle_state> state;
  snapshot_ptr snap;
};

// Stage "filter a range" (driver -> worker): one range [begin, end) of one pod's candidate nodes,
// searched for `want` feasible nodes (0 = all). Answered by filtered_range.
struct filter_work : range_work {
  std::shared_ptr<const fw::candidate_nodes> candidates;
  size_t begin = 0, end = 0;
  size_t want = 0;
  bool explain = false;  // record every plugin's verdict per node
};
using filter_work_ptr = std::shared_ptr<const filter_work>;

// Stage "filtered range" (worker -> driver).
struct filtered_range {
  uint64_t cycle = 0;
  uint32_t range = 0;
  fw::filtered_nodes nodes;
};

// Stage "score a range" (driver -> worker): Score plugins over some feasible nodes (snapshot
// indexes) after the driver's PreScore. Answered by scored_range.
struct score_work : range_work {
  std::vector<uint32_t> nodes;
};
using score_work_ptr = std::shared_ptr<const score_work>;

// Stage "scored range" (worker -> driver): raw[plugin][i] for the work's nodes, or an Error.
struct scored_range {
  uint64_t cycle = 0;
  uint32_t range = 0;
  std::vector<std::vector<fw::node_score>> raw;
  fw::status error;
};

// Stage "schedule a whole pod" (driver -> worker), when pods, not nodes, are spread over the
// workers: fw::schedule_one over the whole snapshot. Answered by cycle_reply.
struct cycle_work {
  uint64_t cycle = 0;
  fw::framework_ptr fwk;
  pod_info_ptr pod;
  snapshot_ptr snap;
  size_t start = 0;       // round-robin start index
  std::string nominated;  // the pod's nominated node, evaluated first
  bool ranked = false;    // also return the other feasible nodes by descending score (batching)
  bool record_plugin_metrics = false;  // the driver's per-cycle sampling verdict
  // The gang fields of the driver's cycle state (fw::cycle_state::gang, gang_domain, gang_tried).
  std::shared_ptr<const fw::gang_ticket> gang;
  std::string gang_domain;
  std::shared_ptr<const std::vector<std::string>> gang_tried;
};
using cycle_work_ptr = std::shared_ptr<const cycle_work>;

// Stage "pod scheduled" (worker -> driver): the algorithm's result.
struct cycle_reply {
  uint64_t cycle = 0;
  fw::schedule_result res;
  std::shared_ptr<fw::cycle_state> state;  // after PreFilter/PreScore: Reserve and PostFilter need it
  std::vector<uint32_t> ranked;            // snapshot indexes, best first, the selected node excluded
};
using cycle_reply_ptr = std::shared_ptr<cycle_reply>;

// Stage "assume" (driver -> snapshot cache): assume `pod` on `node`, as evaluated on snapshot
// generation `generation`. Nodes changed since then are re-filtered against current state.
struct assume_request {
  uint64_t cycle = 0;
  fw::framework_ptr fwk;
  pod_info_ptr pod;
  std::shared_ptr<const fw::cycle_state> state;
  std::string node;
  uint64_t node_generation = 0;
  uint64_t snapshot_generation = 0;
  // A cross-node Filter plugin was active: if anything changed since the snapshot, re-run PreFilter
  // on the current snapshot and Filter the node again, not just the node-local check.
  bool global = false;
};

// Stage "assumed" (snapshot cache -> driver).
struct assume_reply {
  uint64_t cycle = 0;
  bool ok = false;
  bool conflict = false;  // the node changed and no longer fits: retry on a newer snapshot
  std::string message;
  pod_info_ptr assumed;
};

// Queue occupancy, for metrics and for `simulate` to detect quiescence.
struct queue_stats {
  size_t active = 0, backoff = 0, unschedulable = 0, gated = 0, in_flight = 0;
  uint64_t popped = 0;
};

// The outcome of one pod, as the event recorder saw it.
struct pod_outcome {
  std::string ns, name, uid;
  std::string node;  // empty unless Scheduled
  std::string status;  // Scheduled | Unschedulable | Error | Preempted
  std::string message;
  int attempts = 0;
};

// --explain data: per node, every filter plugin's verdict; per scored node, raw/normalized/weighted.
struct explain_record {
  std::string pod_key;
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> filters;  // node -> (plugin, verdict)
  struct score_row {
    std::string node;
    std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>> plugins;  // plugin, raw, normalized, weighted
    int64_t total = 0;
  };
  std::vector<score_row> scores;
  std::string selected;
};

}  // namespace kas

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::fw::status)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::gang_member_failed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::cluster_event_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::pod_condition)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::cluster_stats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::source_task)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::cluster_change_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::volume_change_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::volume_write_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::volume_changes_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::cluster_change_batch_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::queued_pod_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::failure)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::cycle_ctx_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::filter_work_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::filtered_range)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::score_work_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::scored_range)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::cycle_work_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::cycle_reply_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::assume_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::assume_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::queue_stats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::pod_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<kas::pod_outcome>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::explain_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<kas::explain_record>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::snapshot_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::pod_info_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<kas::pod_info_ptr>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::node_info_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kas::cluster_objects_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<kas::cluster_event_record>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<kas::queued_pod_ptr>)

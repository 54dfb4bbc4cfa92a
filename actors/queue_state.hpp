#pragma once
// queue_state: the scheduling queue's data structures and rules, CAF-free so they can be tested
// without an actor system. The scheduling_queue actor owns exactly one and is its only user.
//
// Where a pod can be (kube-scheduler's PriorityQueue):
//
//   add ──PreEnqueue ok──> activeQ ──pop──> in flight ──done──> (gone)
//     └──PreEnqueue no──> gated            │
//                                          ├─ failure, no relevant event meanwhile ─> unschedulable pool
//                                          └─ failure, relevant event meanwhile ──> backoffQ
//   unschedulable pool ──relevant event (QueueingHint says Queue)──> backoffQ or activeQ
//   unschedulable pool ──older than 5 min (flush)──> backoffQ or activeQ
//   backoffQ ──backoff expired (1 s · 2^(attempts-1), at most 10 s)──> activeQ
//   backoffQ ──activeQ empty, the pod was rejected by a plugin (not an Error)──> popped at once
//
// The last edge is kube's SchedulerPopFromBackoffQ (KEP-5142, on by default since v1.33): a cycle
// that would idle takes a backing-off pod instead. With it, backoff expiries are truncated to 1 s
// ordering windows, a pod completes backoff once the current window starts after its expiry
// window, and backoffQ is ordered by expiry window, then as activeQ orders pods.
//   gated ──update or event that lifts the gate (PreEnqueue ok)──> activeQ
//
// Gangs (pods of a PodGroup with a gang policy, GangScheduling): one gang at a time has its turn.
// A turn starts when a gang's member is at the front of what pop would take and at least minCount
// of its members are in activeQ, in flight or bound; while it lasts, pop hands out that gang's
// members and plain pods, and skips other gangs' members. It ends when the permit coordinator
// admits the gang (gang_admitted) or when none of the turn's members is in flight any more (they
// failed and were requeued). Each member popped carries a gang_ticket naming the turn (its round).
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "actors/group_members.hpp"
#include "plugins/framework/runtime/framework.hpp"

namespace kas {

// Where a pod sits in the queue. `none`: the queue does not hold it.
enum class queue_location : uint8_t { none, active, backoff, unschedulable, gated, in_flight };

// The label kube's metrics use for a queue ("active", "backoff", "unschedulable", "gated"), and
// "in-flight" / "" for the other two.
const char* to_string(queue_location l);

struct queue_options {
  std::chrono::nanoseconds initial_backoff = std::chrono::seconds(1);
  std::chrono::nanoseconds max_backoff = std::chrono::seconds(10);
  std::chrono::nanoseconds max_in_unschedulable = std::chrono::minutes(5);
  // kube's SchedulerPopFromBackoffQ feature (default on). simulate turns it off: its idle skip
  // releases backoff instead, without the wall clock deciding the order.
  bool pop_from_backoff = true;
};

class queue_state {
public:
  using clock = std::chrono::steady_clock;
  using qpod = std::shared_ptr<fw::queued_pod_info>;

  // `frameworks` maps schedulerName -> framework. The first one's QueueSort orders activeQ (kube
  // requires every profile to share one QueueSort).
  queue_state(std::vector<fw::framework_ptr> frameworks, queue_options opts);

  // Whether a pod with this schedulerName belongs to one of our profiles.
  const fw::framework* framework_for(const pod_info& p) const;

  void add(const pod_info_ptr& p, clock::time_point now);
  void update(const pod_info_ptr& old_p, const pod_info_ptr& new_p, clock::time_point now);
  void remove(const std::string& uid);

  // Pops up to n pods in QueueSort order and marks them in flight; when activeQ runs out (and
  // pop_from_backoff), goes on with backoffQ's pods that a plugin rejected, in backoffQ's order.
  std::vector<std::shared_ptr<const fw::queued_pod_info>> pop(size_t n, clock::time_point now);
  // Whether pop would return a pod.
  bool can_pop() const;
  // The pod's cycle ended (bound, or deleted): it leaves the queue's accounting.
  void done(const std::string& uid);
  // The pod's cycle failed. Goes to backoffQ if an event that could help arrived while it was in
  // flight (or it failed with an Error), else to the unschedulable pool.
  void add_unschedulable(const fw::queued_pod_info& info, uint64_t cycle, bool is_error, clock::time_point now);

  // The pod groups: the cluster's objects changed (PodGroups may have appeared or changed), or a
  // pod of a group came, changed or went. Both re-run PreEnqueue for the gated pods of a group
  // that may now pass.
  void set_objects(cluster_objects_ptr objects, clock::time_point now);
  void track_group_member(const pod_info* old_p, const pod_info* new_p, clock::time_point now);
  const group_members& groups() const { return groups_; }
  // The permit coordinator admitted round `round` of gang `key`: its turn ends.
  void gang_admitted(const std::string& key, uint64_t round);
  // The gang whose turn it is ("" when none).
  const std::string& gang_turn() const { return turn_.key; }
  // Gangs whose every member popped has had its cycle reported (done or failed) since the last
  // call: none of their members is in flight or on its way to report, so nothing of their past
  // attempts can reach the permit coordinator any more (the queue actor tells it to forget them).
  // A member deleted while in flight still counts until its cycle reports.
  std::vector<std::string> take_idle_gangs() { return std::move(idle_gangs_); }
  // Members of gang `key` popped whose cycle has not reported yet (deleted ones included).
  size_t unreported_members(const std::string& key) const { return count_of(unreported_, key); }
  // Gangs whose members in activeQ cannot start a turn (fewer than minCount ready) go to the
  // unschedulable pool, rejected as they were, until an event brings them back: activeQ holds only
  // pods that pop can hand out. The parked pods are reported by take_parked().
  void park_stuck_gangs();

  // A cluster event: moves pods from the unschedulable pool (and gated) whose rejecting plugins
  // registered for it and whose hints say Queue. `except_uid`, and the pods of `except_group`,
  // stay where they are.
  void on_event(const fw::cluster_event& ev, const fw::event_objects& objs, std::shared_ptr<const void> keepalive,
                clock::time_point now, std::string_view except_uid = {}, std::string_view except_group = {});

  // Moves expired backoff pods to activeQ, and pods unschedulable for too long out of the pool.
  void flush(clock::time_point now);
  // simulate's idle skip: moves every backoff pod to activeQ at once instead of waiting for the wall
  // clock. A pod that already failed `max_attempts` times goes to the unschedulable pool instead
  // (retried on a relevant event, like any unschedulable pod), so a pod that fails with an Error
  // on every attempt cannot keep the queue busy forever.
  void flush_backoff_now(int max_attempts);
  std::optional<clock::time_point> next_backoff_expiry() const;
  // kube's backoffQOrderingWindowDuration: the flush runs at every window's start.
  static constexpr std::chrono::seconds ordering_window{1};
  clock::time_point align_to_window(clock::time_point t) const;

  size_t active_size() const { return active_.size(); }
  size_t backoff_size() const { return backoff_.size() + error_backoff_.size(); }
  size_t unschedulable_size() const { return unschedulable_.size(); }
  size_t gated_size() const { return gated_.size(); }
  size_t in_flight_size() const { return in_flight_.size(); }
  uint64_t scheduling_cycle() const { return cycle_; }
  bool contains(const std::string& uid) const;
  // Where a pod is (queue_location::none when the queue does not hold it).
  queue_location where(const std::string& uid) const;
  std::chrono::nanoseconds backoff_duration(int attempts) const;

  // A group's members in backoffQ or the error backoffQ: O(1), a count kept where pods enter and
  // leave the two heaps (insert_backoff, erase_backoff).
  size_t backoff_members(const std::string& key) const { return count_of(backoff_members_, key); }
  // A debugging check for tests: recounts the per-group counts (members in activeQ, in backoff,
  // in flight, popped and not yet reported) and the backoff index from the queues themselves.
  // Empty when they all agree, else what differs.
  std::string audit_member_counts() const;

  // scheduler_queue_incoming_pods_total: called with (queue, event) each time a pod enters activeQ,
  // backoffQ or the unschedulable pool (gated pods count there too, as in kube), with kube's event label: PodAdd, PodUpdate, ScheduleAttemptFailure,
  // BackoffComplete, UnschedulableTimeout, or the cluster event's (NodeAdd, AssignedPodDelete, ...).
  using incoming_fn = std::function<void(queue_location queue, std::string_view event)>;
  void set_incoming_observer(incoming_fn f) { incoming_ = std::move(f); }

private:
  using active_entry = std::pair<qpod, uint64_t>;  // pod, insertion sequence (tie-break)
  struct active_less {
    const queue_state* q;
    bool operator()(const active_entry& a, const active_entry& b) const;
  };
  struct backoff_entry {
    clock::time_point expiry;
    active_entry pod;
  };
  struct backoff_less {
    const queue_state* q;
    bool operator()(const backoff_entry& a, const backoff_entry& b) const;
  };
  using backoff_set = std::set<backoff_entry, backoff_less>;
  // Pods that failed with an Error (no plugin rejected them) go to kube's podErrorBackoffQ, never
  // popped before their backoff completes; the others to podBackoffQ.
  static bool failed_with_error(const fw::queued_pod_info& p) {
    return p.unschedulable_plugins.empty() && p.pending_plugins.empty();
  }
  bool backing_off(clock::time_point expiry, clock::time_point now) const;
  void push_backoff(qpod p, clock::time_point expiry);
  // Every pod enters and leaves the two backoff heaps through these two, which keep backoff_index_
  // and backoff_members_ in step with the heaps.
  void insert_backoff(backoff_set& heap, backoff_entry e);
  backoff_entry erase_backoff(backoff_set& heap, backoff_set::iterator it);
  // Takes the pod out of whichever backoff heap holds it (nullopt: neither).
  std::optional<backoff_entry> erase_backoff(const std::string& uid);
  // The heap whose first entry comes first in backoffQ's order (kube keeps one order over both
  // heaps), or null when both are empty.
  backoff_set* first_backoff();
  const backoff_set* first_backoff() const { return const_cast<queue_state*>(this)->first_backoff(); }
  qpod take_from_backoff();
  qpod mark_in_flight(const qpod& q, clock::time_point now);
  // The gang a pod is a member of (its group exists and has a gang policy), or null.
  const std::string* gang_of(const pod_info& p) const;
  // Whether pop may hand the pod out now (the gang rule), starting its gang's turn if need be.
  bool may_pop(const fw::queued_pod_info& q, bool start_turn);
  void recheck_gated(const std::string& group_key, clock::time_point now);
  // A gang's attempt failed: its members in activeQ join the failed one in the unschedulable pool,
  // rejected by the same plugins, so the gang comes back together on the same events.
  void park_gang(const std::string& key, const fw::queued_pod_info& failed);
  // Moves the gang's members in activeQ to the unschedulable pool, with `failed`'s rejecting
  // plugins when given, and returns them.
  std::vector<qpod> park_active_members(const std::string& key, const fw::queued_pod_info* failed);
public:
  // The members park_gang moved since the last call (the queue actor reports them).
  std::vector<qpod> take_parked() { return std::move(parked_); }
private:
  std::vector<qpod> parked_;
  using member_counts = std::unordered_map<std::string, size_t>;  // group key -> members
  // +1 / -1 for the pod's group (nothing for a pod of no group); a count that reaches 0 is erased.
  static void count_member(member_counts& m, const pod_info& p, int delta);
  static size_t count_of(const member_counts& m, const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? size_t{0} : it->second;
  }
  void count_active(const pod_info& p, int delta) { count_member(active_members_, p, delta); }
  struct in_flight_entry {
    qpod pod;
    uint64_t cycle = 0;
    uint64_t event_seq = 0;  // events with a larger seq arrived while it was in flight
  };
  // A pod left flight (done, requeued, deleted): the turn's count of members in flight drops.
  void left_flight(const in_flight_entry& e);
  // A popped pod's cycle reported (done or add_unschedulable), whether or not the pod is still in
  // flight here (it may have been deleted meanwhile): its gang's unreported count drops, and a gang
  // left with none becomes idle (take_idle_gangs).
  void cycle_reported(const std::string& uid);
  struct logged_event {
    uint64_t seq;
    fw::cluster_event ev;
    fw::event_objects objs;
    std::shared_ptr<const void> keepalive;
    std::string except_group;  // the pods of this gang do not count it (on_event's except_group)
  };

  void push_active(qpod p, std::string_view event);
  // A pod group's member entering activeQ: its group and the group's creation time on our clock
  // (fw::queued_pod_info::group). Returns p itself when those are current, else a stamped copy.
  qpod stamp_group(qpod p) const;
  void move_to_active_or_backoff(qpod p, clock::time_point now, std::string_view event);
  void incoming(queue_location queue, std::string_view event) {
    if (incoming_) incoming_(queue, event);
  }
  bool pod_wants_event(const fw::queued_pod_info& p, const fw::cluster_event& ev, const fw::event_objects& objs) const;
  clock::time_point backoff_expiry(const fw::queued_pod_info& p) const;
  void prune_event_log();
  static int64_t to_ns(clock::time_point t) { return t.time_since_epoch().count(); }
  // The wall clock minus ours, taken once: converts a PodGroup's creationTimestamp to our clock.
  const int64_t wall_minus_steady_ns_ =
    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count() -
    to_ns(clock::now());

  std::vector<fw::framework_ptr> frameworks_;
  std::unordered_map<std::string, const fw::framework*> by_scheduler_;
  queue_options opts_;
  // kube draws once per PreEnqueue run whether to time its plugins (plugin_execution_duration_seconds).
  std::minstd_rand sample_rng_{0x5eed};
  std::set<active_entry, active_less> active_;
  std::unordered_map<std::string, active_entry> active_index_;
  backoff_set backoff_;        // podBackoffQ
  backoff_set error_backoff_;  // podErrorBackoffQ
  std::unordered_map<std::string, std::pair<backoff_set*, backoff_set::iterator>> backoff_index_;  // uid -> where
  std::unordered_map<std::string, qpod> unschedulable_;
  std::unordered_map<std::string, qpod> gated_;
  std::unordered_map<std::string, in_flight_entry> in_flight_;
  std::unordered_map<std::string, queue_location> location_;  // uid -> where
  std::deque<logged_event> events_;
  uint64_t event_seq_ = 0;
  uint64_t cycle_ = 0;
  uint64_t insertion_seq_ = 0;
  incoming_fn incoming_;

  group_members groups_;
  // Per group: members in activeQ, in either backoff heap (counted for any group, as activeQ's
  // are), and per gang: members in flight (by their ticket's gang).
  member_counts active_members_, backoff_members_, flying_members_;
  struct turn_state {
    std::string key;  // empty: no gang has the turn
    uint64_t round = 0;
    size_t in_flight = 0;
  };
  turn_state turn_;
  // The last round started, of any gang: rounds only grow, per gang and overall, so nothing per
  // gang is kept for them (a long-running scheduler sees gangs come and go).
  uint64_t last_round_ = 0;
  // Per gang (by ticket): members popped whose cycle has not reported yet. Unlike
  // flying_members_, a member deleted while in flight stays counted (deleted_in_flight_) until its
  // cycle reports: it may still reach the permit coordinator.
  member_counts unreported_;
  std::unordered_map<std::string, std::string> deleted_in_flight_;  // uid -> gang key
  std::vector<std::string> idle_gangs_;
};

}  // namespace kas

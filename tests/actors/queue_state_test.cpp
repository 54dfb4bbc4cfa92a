// queue_state without an actor system: ordering, gating, the unschedulable pool, backoff and
// event-driven requeue. Time is injected (time points), so nothing sleeps.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/queue_state.hpp"
#include "config/profile.hpp"
#include "tests/actors/actor_fixtures.hpp"

namespace kas {
namespace {

using namespace std::chrono_literals;
using clock_type = queue_state::clock;
using test::make_node;
using test::make_pod;
using test::node_spec;
using test::pod_spec;
using test::node;
using test::pod;

const clock_type::time_point t0 = clock_type::time_point(std::chrono::hours(1));

fw::framework_ptr default_framework() {
  auto f = fw::framework::build(default_profile(), fw::in_tree_registry(), fw::handle{}, "profiles[0]");
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.err().message);
  return *f;
}

queue_state make_queue() { return queue_state({default_framework()}, queue_options{}); }
// kube with SchedulerPopFromBackoffQ off: exact backoff expiries, nothing popped from backoffQ.
queue_state make_queue_without_backoff_pop() {
  queue_options o;
  o.pop_from_backoff = false;
  return queue_state({default_framework()}, o);
}

// Pops `uid` (it must be the only active pod) and fails it as rejected by `plugins`.
fw::queued_pod_info pop_one(queue_state& q, const std::string& uid, clock_type::time_point now) {
  auto popped = q.pop(1, now);
  EXPECT_EQ(popped.size(), 1u);
  if (popped.empty()) return {};
  EXPECT_EQ(popped[0]->pod->uid, uid);
  return *popped[0];
}

void fail(queue_state& q, fw::queued_pod_info info, std::set<std::string_view> plugins, bool is_error,
          clock_type::time_point now) {
  info.unschedulable_plugins = std::move(plugins);
  q.add_unschedulable(info, q.scheduling_cycle(), is_error, now);
}

// A cluster event with the objects it carries; the objects outlive the queue's event log.
struct event_fixture {
  fw::cluster_event ev;
  pod_info_ptr old_pod, new_pod;
  node_info_ptr new_node;
  fw::event_objects objs() const {
    fw::event_objects o;
    o.old_pod = old_pod.get();
    o.new_pod = new_pod.get();
    o.new_node = new_node.get();
    return o;
  }
};

event_fixture node_add(const std::string& name, const std::string& cpu) {
  event_fixture e;
  e.ev = {fw::event_resource::node, fw::act_add, "NodeAdd"};
  e.new_node = make_node(node(name, cpu, "8Gi"));
  return e;
}

event_fixture assigned_pod_delete(const std::string& name) {
  event_fixture e;
  e.ev = {fw::event_resource::assigned_pod, fw::act_delete, "AssignedPodDelete"};
  pod_spec s = pod(name, "1", "1Gi");
  s.node = "n1";
  e.old_pod = make_pod(s);
  return e;
}

event_fixture assigned_pod_add(const std::string& name) {
  event_fixture e;
  e.ev = {fw::event_resource::assigned_pod, fw::act_add, "AssignedPodAdd"};
  pod_spec s = pod(name, "1", "1Gi");
  s.node = "n1";
  e.new_pod = make_pod(s);
  return e;
}

event_fixture pvc_add() {
  event_fixture e;
  e.ev = {fw::event_resource::pvc, fw::act_add, "PersistentVolumeClaimAdd"};
  return e;
}

void send(queue_state& q, const event_fixture& e, clock_type::time_point now) {
  auto keep = std::make_shared<event_fixture>(e);
  q.on_event(keep->ev, keep->objs(), keep, now);
}

std::vector<std::string> pop_names(queue_state& q, size_t n, clock_type::time_point now) {
  std::vector<std::string> out;
  for (auto& p : q.pop(n, now)) out.push_back(p->pod->name);
  return out;
}

// --- PrioritySort -------------------------------------------------------------------------------

TEST(QueueStateTest, PrioritySortOrder) {
  struct added {
    std::string name;
    int32_t priority;
    std::chrono::milliseconds at;
  };
  struct tc {
    std::string name;
    std::vector<added> pods;
    std::vector<std::string> want;
  };
  std::vector<tc> cases = {
    {"higher priority first", {{"low", 0, 0ms}, {"high", 100, 1ms}, {"mid", 10, 2ms}}, {"high", "mid", "low"}},
    {"fifo within a priority", {{"c", 5, 3ms}, {"a", 5, 1ms}, {"b", 5, 2ms}}, {"a", "b", "c"}},
    {"priority beats age", {{"old", 0, 0ms}, {"young-high", 1, 9ms}, {"older", 0, 1ms}}, {"young-high", "old", "older"}},
    {"negative priority last", {{"neg", -5, 0ms}, {"zero", 0, 5ms}}, {"zero", "neg"}},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto q = make_queue();
    for (auto& a : c.pods) {
      pod_spec s = pod(a.name, "100m", "64Mi");
      s.priority = a.priority;
      q.add(make_pod(s), t0 + a.at);
    }
    EXPECT_EQ(q.active_size(), c.pods.size());
    EXPECT_EQ(pop_names(q, c.pods.size(), t0 + 1s), c.want);
  }
}

// --- PreEnqueue (SchedulingGates) ---------------------------------------------------------------

TEST(QueueStateTest, GatedPodsWaitForTheGatesToBeRemoved) {
  auto q = make_queue();
  pod_spec gated = pod("g", "100m", "64Mi");
  gated.gates = {"example.com/a", "example.com/b"};
  auto v1 = make_pod(gated);
  q.add(v1, t0);
  EXPECT_EQ(q.where("g"), queue_location::gated);
  EXPECT_EQ(q.gated_size(), 1u);
  EXPECT_TRUE(q.pop(10, t0).empty());

  // Removing one gate of two keeps it gated.
  gated.gates = {"example.com/b"};
  auto v2 = make_pod(gated);
  q.update(v1, v2, t0 + 1s);
  EXPECT_EQ(q.where("g"), queue_location::gated);
  // An unrelated cluster event does not lift a gate.
  send(q, node_add("n9", "8"), t0 + 2s);
  EXPECT_EQ(q.where("g"), queue_location::gated);

  gated.gates.clear();
  auto v3 = make_pod(gated);
  q.update(v2, v3, t0 + 3s);
  EXPECT_EQ(q.where("g"), queue_location::active);
  EXPECT_EQ(q.gated_size(), 0u);
  auto popped = q.pop(1, t0 + 4s);
  ASSERT_EQ(popped.size(), 1u);
  EXPECT_EQ(popped[0]->pod, v3);  // the updated object is what gets scheduled
}

// --- pop ----------------------------------------------------------------------------------------

TEST(QueueStateTest, PopMarksInFlight) {
  auto q = make_queue();
  q.add(make_pod(pod("a", "1", "1Gi")), t0);
  q.add(make_pod(pod("b", "1", "1Gi")), t0 + 1ms);
  auto popped = q.pop(1, t0 + 5ms);
  ASSERT_EQ(popped.size(), 1u);
  EXPECT_EQ(popped[0]->pod->name, "a");
  EXPECT_EQ(popped[0]->attempts, 1);
  EXPECT_EQ(popped[0]->initial_attempt_ns, (t0 + 5ms).time_since_epoch().count());
  EXPECT_EQ(q.where("a"), queue_location::in_flight);
  EXPECT_EQ(q.in_flight_size(), 1u);
  EXPECT_EQ(q.active_size(), 1u);
  EXPECT_EQ(q.scheduling_cycle(), 1u);
  q.done("a");
  EXPECT_FALSE(q.contains("a"));
  EXPECT_EQ(q.in_flight_size(), 0u);
}

// --- add_unschedulable --------------------------------------------------------------------------

TEST(QueueStateTest, FailedPodGoesToUnschedulableOrBackoff) {
  struct tc {
    std::string name;
    std::set<std::string_view> rejected_by;
    bool is_error;
    std::vector<event_fixture> while_in_flight;
    queue_location want;
  };
  std::vector<tc> cases = {
    {"no event meanwhile", {"NodeResourcesFit"}, false, {}, queue_location::unschedulable},
    {"node add that fits, rejected by NodeResourcesFit", {"NodeResourcesFit"}, false, {node_add("n9", "8")}, queue_location::backoff},
    {"node add too small for the pod", {"NodeResourcesFit"}, false, {node_add("n9", "1")}, queue_location::unschedulable},
    {"assigned pod delete, rejected by NodeResourcesFit", {"NodeResourcesFit"}, false, {assigned_pod_delete("x")},
     queue_location::backoff},
    {"assigned pod add: NodeResourcesFit did not register it", {"NodeResourcesFit"}, false, {assigned_pod_add("x")},
     queue_location::unschedulable},
    {"event nobody registered for", {"NodeResourcesFit"}, false, {pvc_add()}, queue_location::unschedulable},
    {"relevant to another plugin only", {"TaintToleration"}, false, {assigned_pod_delete("x")}, queue_location::unschedulable},
    {"error goes to backoff", {}, true, {}, queue_location::backoff},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto q = make_queue();
    q.add(make_pod(pod("p", "2", "1Gi")), t0);
    auto info = pop_one(q, "p", t0 + 1ms);
    for (auto& e : c.while_in_flight) send(q, e, t0 + 2ms);
    fail(q, info, c.rejected_by, c.is_error, t0 + 3ms);
    EXPECT_EQ(q.where("p"), c.want);
    EXPECT_EQ(q.in_flight_size(), 0u);
  }
}

TEST(QueueStateTest, EventBeforePopDoesNotCount) {
  // Only events that arrive while the pod is in flight can have been missed by its cycle.
  auto q = make_queue();
  q.add(make_pod(pod("p", "2", "1Gi")), t0);
  send(q, node_add("n9", "8"), t0);
  auto info = pop_one(q, "p", t0 + 1ms);
  fail(q, info, {"NodeResourcesFit"}, false, t0 + 2ms);
  EXPECT_EQ(q.where("p"), queue_location::unschedulable);
}

// --- backoff ------------------------------------------------------------------------------------

TEST(QueueStateTest, BackoffDuration) {
  auto q = make_queue();
  std::vector<std::pair<int, std::chrono::nanoseconds>> cases = {{1, 1s}, {2, 2s}, {3, 4s},
                                                                  {4, 8s}, {5, 10s}, {6, 10s}, {40, 10s}};
  for (auto& [attempts, want] : cases) EXPECT_EQ(q.backoff_duration(attempts), want) << "attempts " << attempts;
}

TEST(QueueStateTest, FlushMovesExpiredBackoffToActive) {
  auto q = make_queue_without_backoff_pop();
  q.add(make_pod(pod("p", "1", "1Gi")), t0);
  auto info = pop_one(q, "p", t0);
  fail(q, info, {}, true, t0 + 10ms);  // attempt 1: 1 s backoff from t0+10ms
  ASSERT_EQ(q.where("p"), queue_location::backoff);
  ASSERT_TRUE(q.next_backoff_expiry().has_value());
  EXPECT_EQ(*q.next_backoff_expiry(), t0 + 1010ms);
  q.flush(t0 + 1009ms);
  EXPECT_EQ(q.where("p"), queue_location::backoff);
  q.flush(t0 + 1010ms);
  EXPECT_EQ(q.where("p"), queue_location::active);

  // Second failure: 2 s.
  info = pop_one(q, "p", t0 + 2s);
  EXPECT_EQ(info.attempts, 2);
  fail(q, info, {}, true, t0 + 2s);
  q.flush(t0 + 3999ms);
  EXPECT_EQ(q.where("p"), queue_location::backoff);
  q.flush(t0 + 4s);
  EXPECT_EQ(q.where("p"), queue_location::active);
}

// With SchedulerPopFromBackoffQ (the default), expiries are truncated to 1 s windows and a pod
// leaves backoffQ once a later window has started.
TEST(QueueStateTest, BackoffCompletesByWholeWindows) {
  auto q = make_queue();
  q.add(make_pod(pod("p", "1", "1Gi")), t0);
  auto info = pop_one(q, "p", t0);
  fail(q, info, {}, true, t0 + 10ms);  // attempt 1: expiry t0+1010ms, in the window starting t0+1s
  EXPECT_EQ(*q.next_backoff_expiry(), t0 + 1s);
  EXPECT_EQ(q.align_to_window(t0 + 1999ms), t0 + 1s);
  q.flush(t0 + 1010ms);
  EXPECT_EQ(q.where("p"), queue_location::backoff);
  q.flush(t0 + 1999ms);
  EXPECT_EQ(q.where("p"), queue_location::backoff) << "its expiry window is the current one";
  q.flush(t0 + 2s);
  EXPECT_EQ(q.where("p"), queue_location::active);
}

// Puts `name` (priority `prio`) in backoffQ as rejected by NodeResourcesFit, with a NodeAdd that
// arrived during its cycle, failing at `now`.
void rejected_into_backoff(queue_state& q, const std::string& name, int32_t prio, clock_type::time_point now) {
  auto spec = pod(name, "2", "1Gi");
  spec.priority = prio;
  q.add(make_pod(spec), now);
  auto info = pop_one(q, name, now);
  send(q, node_add("n-" + name, "8"), now);
  fail(q, info, {"NodeResourcesFit"}, false, now);
  ASSERT_EQ(q.where(name), queue_location::backoff);
}

TEST(QueueStateTest, EmptyActiveQPopsFromBackoffQ) {
  auto q = make_queue();
  rejected_into_backoff(q, "low", 1, t0 + 100ms);
  rejected_into_backoff(q, "high", 10, t0 + 200ms);   // same expiry window: priority decides
  rejected_into_backoff(q, "later", 100, t0 + 1100ms);  // a later window comes after both
  q.add(make_pod(pod("err", "1", "1Gi")), t0);
  fail(q, pop_one(q, "err", t0), {}, true, t0);  // an Error: podErrorBackoffQ, never popped early
  q.add(make_pod(pod("fresh", "1", "1Gi")), t0 + 1200ms);

  ASSERT_TRUE(q.can_pop());
  auto popped = q.pop(5, t0 + 1200ms);  // all still backing off
  std::vector<std::string> order;
  for (auto& p : popped) order.push_back(p->pod->uid);
  EXPECT_EQ(order, (std::vector<std::string>{"fresh", "high", "low", "later"})) << "activeQ first, then backoffQ's order";
  EXPECT_EQ(popped[1]->attempts, 2);
  EXPECT_EQ(q.where("high"), queue_location::in_flight);
  EXPECT_EQ(q.where("err"), queue_location::backoff);
  EXPECT_FALSE(q.can_pop());
  EXPECT_TRUE(q.pop(1, t0 + 1200ms).empty());

  // Turned off (simulate), backoffQ waits for its expiry.
  auto off = make_queue_without_backoff_pop();
  rejected_into_backoff(off, "p", 1, t0);
  EXPECT_FALSE(off.can_pop());
  EXPECT_TRUE(off.pop(1, t0 + 10ms).empty());
}

// kube keeps Error pods in podErrorBackoffQ and rejected pods in podBackoffQ: pop never scans past
// Error pods, while expiry, flush, removal and updates treat the two as one backoffQ.
TEST(QueueStateTest, ErrorAndRejectedPodsBackOffInSeparateHeapsWithOneOrder) {
  auto q = make_queue();
  for (auto name : {"err1", "err2"}) {
    q.add(make_pod(pod(name, "1", "1Gi")), t0);
    fail(q, pop_one(q, name, t0), {}, true, t0);
  }
  rejected_into_backoff(q, "rej", 1, t0 + 2500ms);  // a later window than the Errors'
  EXPECT_EQ(q.backoff_size(), 3u);
  ASSERT_TRUE(q.next_backoff_expiry());
  EXPECT_LT(*q.next_backoff_expiry(), t0 + 2500ms) << "the earliest expiry over both heaps";

  ASSERT_TRUE(q.can_pop()) << "the rejected pod is poppable behind two Error pods";
  auto popped = q.pop(3, t0 + 2600ms);
  ASSERT_EQ(popped.size(), 1u);
  EXPECT_EQ(popped[0]->pod->uid, "rej");
  EXPECT_FALSE(q.can_pop());

  // An update keeps an Error pod in its heap; removal finds it there.
  auto raised = pod("err1", "1", "1Gi");
  raised.priority = 7;
  q.update(make_pod(pod("err1", "1", "1Gi")), make_pod(raised), t0 + 2600ms);
  EXPECT_EQ(q.where("err1"), queue_location::backoff);
  EXPECT_FALSE(q.can_pop()) << "still an Error pod: not popped before its backoff completes";
  q.remove("err2");
  EXPECT_EQ(q.where("err2"), queue_location::none);
  EXPECT_EQ(q.backoff_size(), 1u);

  // Its backoff over, the flush moves it to activeQ.
  q.flush(t0 + std::chrono::seconds(30));
  EXPECT_EQ(q.backoff_size(), 0u);
  EXPECT_EQ(pop_names(q, 2, t0 + std::chrono::seconds(30)), (std::vector<std::string>{"err1"}));
}

TEST(QueueStateTest, PriorityUpdateInBackoffQReorders) {
  auto q = make_queue();
  rejected_into_backoff(q, "a", 1, t0);
  rejected_into_backoff(q, "b", 5, t0);
  auto raised = pod("a", "2", "1Gi");
  raised.priority = 50;
  q.update(make_pod(pod("a", "2", "1Gi")), make_pod(raised), t0);
  auto popped = q.pop(2, t0);
  ASSERT_EQ(popped.size(), 2u);
  EXPECT_EQ(popped[0]->pod->uid, "a");
  EXPECT_EQ(popped[1]->pod->uid, "b");
}

TEST(QueueStateTest, FlushBackoffNowReleasesEverything) {
  auto q = make_queue();
  for (auto name : {"a", "b"}) q.add(make_pod(pod(name, "1", "1Gi")), t0);
  for (auto& p : q.pop(2, t0)) fail(q, *p, {}, true, t0);
  EXPECT_EQ(q.backoff_size(), 2u);
  q.flush_backoff_now(8);
  EXPECT_EQ(q.backoff_size(), 0u);
  EXPECT_EQ(q.active_size(), 2u);
}

TEST(QueueStateTest, FlushBackoffNowParksPodsPastTheRetryLimit) {
  auto q = make_queue();
  q.add(make_pod(pod("p", "1", "1Gi")), t0);
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto info = pop_one(q, "p", t0);
    EXPECT_EQ(info.attempts, attempt);
    fail(q, info, {}, true, t0);
    q.flush_backoff_now(3);
  }
  // Third Error: parked in the unschedulable pool instead of being retried at once, forever.
  EXPECT_EQ(q.where("p"), queue_location::unschedulable);
  EXPECT_EQ(q.active_size(), 0u);
  EXPECT_EQ(q.backoff_size(), 0u);
}

TEST(QueueStateTest, OldUnschedulablePodsAreFlushed) {
  auto q = make_queue();
  q.add(make_pod(pod("p", "1", "1Gi")), t0);
  auto info = pop_one(q, "p", t0);
  fail(q, info, {"NodeResourcesFit"}, false, t0);
  ASSERT_EQ(q.where("p"), queue_location::unschedulable);
  q.flush(t0 + 5min);
  EXPECT_EQ(q.where("p"), queue_location::unschedulable);
  q.flush(t0 + 5min + 1ms);
  // Its backoff (1 s) expired long ago, so it goes straight to activeQ.
  EXPECT_EQ(q.where("p"), queue_location::active);
}

// --- on_event -----------------------------------------------------------------------------------

TEST(QueueStateTest, OnEventMovesOnlyInterestedPods) {
  struct tc {
    std::string name;
    std::set<std::string_view> rejected_by;
    event_fixture event;
    std::chrono::milliseconds at;  // after the failure
    queue_location want;
  };
  std::vector<tc> cases = {
    {"NodeAdd moves a NodeResourcesFit rejection (backoff pending)", {"NodeResourcesFit"}, node_add("n9", "8"), 10ms,
     queue_location::backoff},
    {"NodeAdd moves a NodeResourcesFit rejection (backoff over)", {"NodeResourcesFit"}, node_add("n9", "8"), 2s,
     queue_location::active},
    {"NodeAdd of a node too small: hint says skip", {"NodeResourcesFit"}, node_add("n9", "500m"), 2s,
     queue_location::unschedulable},
    {"assigned pod delete moves a NodeResourcesFit rejection", {"NodeResourcesFit"}, assigned_pod_delete("x"), 2s,
     queue_location::active},
    {"event nobody registered for moves nothing", {"NodeResourcesFit"}, pvc_add(), 2s, queue_location::unschedulable},
    {"assigned pod add is not NodeResourcesFit's", {"NodeResourcesFit"}, assigned_pod_add("x"), 2s, queue_location::unschedulable},
    {"NodeAdd moves a NodePorts rejection", {"NodePorts"}, node_add("n9", "500m"), 2s, queue_location::active},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto q = make_queue();
    q.add(make_pod(pod("p", "2", "1Gi")), t0);
    auto info = pop_one(q, "p", t0);
    fail(q, info, c.rejected_by, false, t0);
    ASSERT_EQ(q.where("p"), queue_location::unschedulable);
    send(q, c.event, t0 + c.at);
    EXPECT_EQ(q.where("p"), c.want);
  }
}

TEST(QueueStateTest, OnEventLeavesOtherPodsAlone) {
  auto q = make_queue();
  q.add(make_pod(pod("fit", "2", "1Gi")), t0);
  q.add(make_pod(pod("taint", "2", "1Gi")), t0 + 1ms);
  auto popped = q.pop(2, t0 + 2ms);
  ASSERT_EQ(popped.size(), 2u);
  fail(q, *popped[0], {"NodeResourcesFit"}, false, t0 + 3ms);
  fail(q, *popped[1], {"NodeAffinity"}, false, t0 + 3ms);
  send(q, assigned_pod_delete("x"), t0 + 5s);
  EXPECT_EQ(q.where("fit"), queue_location::active);
  EXPECT_EQ(q.where("taint"), queue_location::unschedulable);
}

// A binding cycle's forget moves the pods it kept out, but not the pod that was forgotten (kube's
// handleBindingCycleError, for a rejection).
TEST(QueueStateTest, OnEventCanSpareTheForgottenPod) {
  auto q = make_queue();
  q.add(make_pod(pod("waiting", "2", "1Gi")), t0);
  q.add(make_pod(pod("forgotten", "2", "1Gi")), t0 + 1ms);
  auto popped = q.pop(2, t0 + 2ms);
  ASSERT_EQ(popped.size(), 2u);
  fail(q, *popped[0], {"NodeResourcesFit"}, false, t0 + 3ms);
  fail(q, *popped[1], {"NodeResourcesFit"}, false, t0 + 3ms);
  auto keep = std::make_shared<event_fixture>(assigned_pod_delete("forgotten"));
  q.on_event(keep->ev, keep->objs(), keep, t0 + 5s, "forgotten");
  EXPECT_EQ(q.where("waiting"), queue_location::active);
  EXPECT_EQ(q.where("forgotten"), queue_location::unschedulable);
}

// --- remove -------------------------------------------------------------------------------------

TEST(QueueStateTest, RemoveFromEachLocation) {
  struct tc {
    std::string name;
    queue_location location;
  };
  std::vector<tc> cases = {{"active", queue_location::active},
                           {"gated", queue_location::gated},
                           {"in flight", queue_location::in_flight},
                           {"unschedulable", queue_location::unschedulable},
                           {"backoff", queue_location::backoff}};
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto q = make_queue();
    pod_spec s = pod("p", "1", "1Gi");
    if (c.location == queue_location::gated) s.gates = {"g"};
    q.add(make_pod(s), t0);
    fw::queued_pod_info info;
    if (c.location != queue_location::active && c.location != queue_location::gated) info = pop_one(q, "p", t0);
    if (c.location == queue_location::unschedulable) fail(q, info, {"NodeResourcesFit"}, false, t0);
    if (c.location == queue_location::backoff) fail(q, info, {}, true, t0);
    ASSERT_EQ(q.where("p"), c.location);
    q.remove("p");
    EXPECT_FALSE(q.contains("p"));
    EXPECT_EQ(q.active_size() + q.backoff_size() + q.unschedulable_size() + q.gated_size() + q.in_flight_size(), 0u);
    EXPECT_TRUE(q.pop(1, t0 + 1h).empty());
    if (c.location == queue_location::in_flight) {
      // The cycle's late failure report must not resurrect a deleted pod.
      fail(q, info, {}, true, t0 + 1s);
      EXPECT_FALSE(q.contains("p"));
      q.flush(t0 + 1h);
      EXPECT_EQ(q.active_size(), 0u);
    }
  }
}

// --- profiles -----------------------------------------------------------------------------------

TEST(QueueStateTest, UnknownSchedulerNameIsIgnored) {
  auto q = make_queue();
  pod_spec other = pod("other", "1", "1Gi");
  other.scheduler_name = "someone-else";
  auto p = make_pod(other);
  EXPECT_EQ(q.framework_for(*p), nullptr);
  q.add(p, t0);
  EXPECT_FALSE(q.contains("other"));
  EXPECT_EQ(q.active_size(), 0u);
  q.add(make_pod(pod("mine", "1", "1Gi")), t0);
  EXPECT_EQ(pop_names(q, 5, t0), std::vector<std::string>{"mine"});
}

TEST(QueueStateTest, DuplicateAddIsIgnored) {
  auto q = make_queue();
  auto p = make_pod(pod("p", "1", "1Gi"));
  q.add(p, t0);
  q.add(p, t0 + 1s);
  EXPECT_EQ(q.active_size(), 1u);
}

// --- pod groups -------------------------------------------------------------------------------------

// A member of a (basic, non-gang) v1beta1 PodGroup, so the gang turn rules stay out of the way.
pod_info_ptr group_member(const std::string& name, const std::string& group) {
  auto p = std::make_shared<pod_info>(*make_pod(pod(name, "100m", "100Mi")));
  p->group_api = pod_group_api::workload;
  p->group_name = group;
  p->group_key = pod_group_key(p->group_api, p->ns, group);
  return p;
}

pod_group_ptr basic_group(const std::string& name, int64_t created_s, std::optional<int32_t> priority = {}) {
  auto g = std::make_shared<pod_group>();
  g->ns = "default";
  g->name = name;
  g->creation_ns = created_s * 1'000'000'000;
  g->priority = priority;
  return g;
}

std::vector<std::string> pop_names(queue_state& q, clock_type::time_point now) {
  std::vector<std::string> out;
  for (auto& p : q.pop(100, now)) out.push_back(p->pod->name);
  return out;
}

// PrioritySort orders a pod group's members as one unit (the group's priority, then its creation
// time, then its name), however their arrivals interleave; a plain pod keeps upstream's order.
TEST(QueueStateTest, QueueSortKeepsAGroupsPodsTogether) {
  auto q = make_queue();
  auto objs = std::make_shared<cluster_objects>();
  for (auto g : {basic_group("late", 2000), basic_group("early", 1000), basic_group("urgent", 3000, 100),
                 basic_group("twin-b", 1500), basic_group("twin-a", 1500)})
    objs->pod_groups[pod_group_key(*g)] = g;
  q.set_objects(objs, t0);
  int i = 0;
  for (auto [name, group] : std::vector<std::pair<std::string, std::string>>{
         {"late-0", "late"}, {"early-0", "early"}, {"plain-0", ""}, {"twin-b-0", "twin-b"}, {"late-1", "late"},
         {"twin-a-0", "twin-a"}, {"early-1", "early"}, {"urgent-0", "urgent"}, {"twin-b-1", "twin-b"},
         {"early-2", "early"}}) {
    q.add(group.empty() ? make_pod(pod(name, "100m", "100Mi")) : group_member(name, group), t0 + i++ * 1s);
  }
  EXPECT_EQ(pop_names(q, t0 + 20s),
            (std::vector<std::string>{"urgent-0", "early-0", "early-1", "early-2", "twin-a-0", "twin-b-0", "twin-b-1",
                                      "late-0", "late-1", "plain-0"}));
}

// Coscheduling's PodGroups (joined by the label) sort the same way, among themselves and among
// upstream's: each group's members as one unit by the group's creation time, then its name; a
// Coscheduling group has no priority of its own, so its members' priority orders it (as
// Coscheduling's QueueSort does), and a group of the same name in the other form is another group.
TEST(QueueStateTest, QueueSortKeepsCoschedulingGroupsTogetherToo) {
  auto q = make_queue();
  auto objs = std::make_shared<cluster_objects>();
  auto cos = [](const std::string& name, int64_t created_s) -> pod_group_ptr {
    auto g = std::make_shared<pod_group>(*basic_group(name, created_s));
    g->api = pod_group_api::coscheduling;
    return g;
  };
  for (auto g : {cos("late", 2000), cos("early", 1000), basic_group("middle", 1500), cos("middle", 1500)})
    objs->pod_groups[pod_group_key(*g)] = g;
  q.set_objects(objs, t0);
  auto cos_member = [](const std::string& name, const std::string& group, int32_t priority = 0) -> pod_info_ptr {
    auto p = std::make_shared<pod_info>(*group_member(name, group));
    p->group_api = pod_group_api::coscheduling;
    p->group_key = pod_group_key(p->group_api, p->ns, group);
    p->priority = priority;
    return p;
  };
  int i = 0;
  for (const pod_info_ptr& p : std::vector<pod_info_ptr>{cos_member("late-0", "late"), group_member("middle-w0", "middle"), cos_member("early-0", "early"),
                  make_pod(pod("plain-0", "100m", "100Mi")), cos_member("middle-c0", "middle"),
                  cos_member("late-1", "late"), cos_member("urgent-0", "late", 50), group_member("middle-w1", "middle"),
                  cos_member("early-1", "early"), cos_member("middle-c1", "middle")})
    q.add(p, t0 + i++ * 1s);
  // middle's two forms were made at the same time: the names tie, and the form decides (upstream's
  // before Coscheduling's), each form's members together.
  EXPECT_EQ(pop_names(q, t0 + 20s),
            (std::vector<std::string>{"urgent-0", "early-0", "early-1", "middle-w0", "middle-w1", "middle-c0",
                                      "middle-c1", "late-0", "late-1", "plain-0"}));
}

// A PodGroup that changes (here: gains a priority) reorders its members already in activeQ.
TEST(QueueStateTest, AGroupsChangeReordersItsMembersInActiveQ) {
  auto q = make_queue();
  auto objs = std::make_shared<cluster_objects>();
  for (auto g : {basic_group("first", 1000), basic_group("second", 2000)}) objs->pod_groups[pod_group_key(*g)] = g;
  q.set_objects(objs, t0);
  q.add(group_member("second-0", "second"), t0);
  q.add(group_member("first-0", "first"), t0 + 1s);
  q.add(group_member("second-1", "second"), t0 + 2s);
  auto changed = std::make_shared<cluster_objects>(*objs);
  auto g = basic_group("second", 2000, 10);
  changed->pod_groups[pod_group_key(*g)] = g;
  q.set_objects(changed, t0 + 3s);
  EXPECT_EQ(pop_names(q, t0 + 4s), (std::vector<std::string>{"second-0", "second-1", "first-0"}));
}


// --- per-group counts of members in backoff ----------------------------------------------------------

// The same member with its group label changed (pod_info's group fields; another uid is another pod).
pod_info_ptr moved_to_group(const pod_info_ptr& p, const std::string& group) {
  auto copy = std::make_shared<pod_info>(*p);
  copy->group_name = group;
  copy->group_key = pod_group_key(copy->group_api, copy->ns, group);
  return copy;
}

pod_group_ptr gang_group(const std::string& name, int32_t min_count) {
  auto g = std::make_shared<pod_group>(*basic_group(name, 1000));
  g->gang = true;
  g->min_count = min_count;
  return g;
}

// Gang "a" (minCount 3) with its three members a0..a2 queued at t0.
std::vector<pod_info_ptr> queue_gang_a(queue_state& q) {
  auto objs = std::make_shared<cluster_objects>();
  auto g = gang_group("a", 3);
  objs->pod_groups[pod_group_key(*g)] = g;
  q.set_objects(objs, t0);
  std::vector<pod_info_ptr> pods;
  for (auto name : {"a0", "a1", "a2"}) {
    pods.push_back(group_member(name, "a"));
    q.track_group_member(nullptr, pods.back().get(), t0);
    q.add(pods.back(), t0);
  }
  return pods;
}

const std::string key_a = pod_group_key(pod_group_api::workload, "default", "a");
const std::string key_b = pod_group_key(pod_group_api::workload, "default", "b");

// The kept count of a group's members in backoff is what a scan of both backoff heaps finds, on
// every path into and out of them: a failure with an event meanwhile (podBackoffQ) or an Error
// (podErrorBackoffQ), an update (same group or a new one), a deletion, an event that moves an
// unschedulable pod while it still backs off, pop from backoffQ, the flush, and simulate's flush
// that parks pods past the retry limit.
TEST(QueueStateTest, BackoffMemberCountsFollowEveryPath) {
  auto q = make_queue();
  auto objs = std::make_shared<cluster_objects>();
  for (auto g : {basic_group("a", 1000), basic_group("b", 2000)}) objs->pod_groups[pod_group_key(*g)] = g;
  q.set_objects(objs, t0);
  std::map<std::string, pod_info_ptr> pods;
  for (auto [name, group] : std::vector<std::pair<std::string, std::string>>{
         {"a0", "a"}, {"a1", "a"}, {"a2", "a"}, {"b0", "b"}}) {
    pods[name] = group_member(name, group);
    q.track_group_member(nullptr, pods[name].get(), t0);
    q.add(pods[name], t0);
  }
  pods["p"] = make_pod(pod("p", "100m", "100Mi"));
  q.add(pods["p"], t0);
  EXPECT_EQ(q.audit_member_counts(), "");

  auto popped = q.pop(10, t0);
  ASSERT_EQ(popped.size(), 5u);
  for (auto& p : popped)  // no event yet: unschedulable
    if (p->pod->uid == "a2") fail(q, *p, {"NodeResourcesFit"}, false, t0 + 1ms);
  {
    // Arrives while the others are in flight; a2 stays unschedulable (spared, as a forgotten pod is).
    auto keep = std::make_shared<event_fixture>(node_add("n9", "8"));
    q.on_event(keep->ev, keep->objs(), keep, t0 + 1ms, "a2");
  }
  for (auto& p : popped) {
    const std::string& uid = p->pod->uid;
    if (uid == "a1") fail(q, *p, {"NodeResourcesFit"}, false, t0 + 2ms);  // the event helps: podBackoffQ
    else if (uid != "a2") fail(q, *p, {}, true, t0 + 2ms);                 // Errors: podErrorBackoffQ
  }
  ASSERT_EQ(q.where("a1"), queue_location::backoff);
  ASSERT_EQ(q.where("a2"), queue_location::unschedulable);
  EXPECT_EQ(q.backoff_members(key_a), 2u);
  EXPECT_EQ(q.backoff_members(key_b), 1u);
  EXPECT_EQ(q.audit_member_counts(), "");

  // An update that keeps the group (a new priority: out of the heap and back in).
  auto raised = std::make_shared<pod_info>(*pods["a1"]);
  raised->priority = 9;
  q.update(pods["a1"], raised, t0 + 3ms);
  pods["a1"] = raised;
  EXPECT_EQ(q.backoff_members(key_a), 2u);
  EXPECT_EQ(q.audit_member_counts(), "");

  // The group label changes while the pod backs off: it counts for its new group.
  auto a0_in_b = moved_to_group(pods["a0"], "b");
  q.track_group_member(pods["a0"].get(), a0_in_b.get(), t0 + 4ms);
  q.update(pods["a0"], a0_in_b, t0 + 4ms);
  pods["a0"] = a0_in_b;
  EXPECT_EQ(q.where("a0"), queue_location::backoff);
  EXPECT_EQ(q.backoff_members(key_a), 1u);
  EXPECT_EQ(q.backoff_members(key_b), 2u);
  EXPECT_EQ(q.audit_member_counts(), "");

  // Deleted while backing off.
  q.track_group_member(pods["b0"].get(), nullptr, t0 + 5ms);
  q.remove("b0");
  EXPECT_EQ(q.backoff_members(key_b), 1u);
  EXPECT_EQ(q.audit_member_counts(), "");

  // An event moves the unschedulable member while its backoff still runs: into backoffQ.
  EXPECT_EQ(q.backoff_members(key_a), 1u);
  send(q, node_add("n10", "8"), t0 + 6ms);
  ASSERT_EQ(q.where("a2"), queue_location::backoff);
  EXPECT_EQ(q.backoff_members(key_a), 2u);
  EXPECT_EQ(q.audit_member_counts(), "");

  // activeQ is empty: pop takes podBackoffQ's pods (a1, a2), never the Error pods.
  auto from_backoff = q.pop(10, t0 + 7ms);
  ASSERT_EQ(from_backoff.size(), 2u);
  EXPECT_EQ(q.backoff_members(key_a), 0u);
  EXPECT_EQ(q.audit_member_counts(), "");
  for (auto& p : from_backoff) fail(q, *p, {}, true, t0 + 8ms);
  EXPECT_EQ(q.backoff_members(key_a), 2u);
  EXPECT_EQ(q.audit_member_counts(), "");

  // The flush moves the Error pods whose backoff is over (a0, p) to activeQ; a1 and a2 (attempt 2)
  // still back off.
  q.flush(t0 + 2s);
  EXPECT_EQ(q.where("a0"), queue_location::active);
  EXPECT_EQ(q.where("a1"), queue_location::backoff);
  EXPECT_EQ(q.backoff_members(key_b), 0u);
  EXPECT_EQ(q.backoff_members(key_a), 2u);
  EXPECT_EQ(q.audit_member_counts(), "");

  // An update while in activeQ moves the member's count there to its new group too.
  auto a0_back = moved_to_group(pods["a0"], "a");
  q.track_group_member(pods["a0"].get(), a0_back.get(), t0 + 2s);
  q.update(pods["a0"], a0_back, t0 + 2s);
  EXPECT_EQ(q.audit_member_counts(), "");

  // simulate's flush: a1 and a2 have failed twice, the limit: parked, not released.
  q.flush_backoff_now(2);
  EXPECT_EQ(q.where("a1"), queue_location::unschedulable);
  EXPECT_EQ(q.where("a2"), queue_location::unschedulable);
  EXPECT_EQ(q.backoff_size(), 0u);
  EXPECT_EQ(q.backoff_members(key_a), 0u);
  EXPECT_EQ(q.audit_member_counts(), "");
}

// c2537f5: a gang whose missing members back off stays in activeQ, not parked and not ready for a
// turn (its members are not popped, nor is the one backing off, before that backoff ends). When the
// member backing off is deleted, or leaves the group (its label changes), the gang is short of its
// quorum for good and park_stuck_gangs parks the members in activeQ.
TEST(QueueStateTest, AGangWhoseMissingMemberBacksOffWaitsInActiveQUntilItLeaves) {
  for (bool deleted : {true, false}) {
    SCOPED_TRACE(deleted ? "deleted while backing off" : "group label changed while backing off");
    auto q = make_queue();
    auto objs = std::make_shared<cluster_objects>();
    for (auto g : {gang_group("a", 3), basic_group("b", 2000)}) objs->pod_groups[pod_group_key(*g)] = g;
    q.set_objects(objs, t0);
    std::vector<pod_info_ptr> pods;
    for (auto name : {"a0", "a1", "a2"}) {
      pods.push_back(group_member(name, "a"));
      q.track_group_member(nullptr, pods.back().get(), t0);
    }
    for (auto& p : pods) q.add(p, t0);
    auto popped = q.pop(3, t0);
    ASSERT_EQ(popped.size(), 3u);
    EXPECT_EQ(q.gang_turn(), key_a);
    // a1 and a2 fail first and back off 1 s; a0 later, so its backoff ends later.
    for (auto& p : popped)
      fail(q, *p, {}, true, p->pod->uid == "a0" ? t0 + 5s : t0 + 1ms);
    EXPECT_EQ(q.gang_turn(), "");
    q.flush(t0 + 2s);
    ASSERT_EQ(q.where("a1"), queue_location::active);
    ASSERT_EQ(q.where("a2"), queue_location::active);
    ASSERT_EQ(q.where("a0"), queue_location::backoff);
    EXPECT_EQ(q.backoff_members(key_a), 1u);

    q.park_stuck_gangs();
    EXPECT_EQ(q.where("a1"), queue_location::active) << "2 in activeQ + 1 backing off reach minCount 3";
    EXPECT_EQ(q.where("a2"), queue_location::active);
    EXPECT_FALSE(q.can_pop()) << "not ready for a turn while a0 backs off";
    EXPECT_TRUE(q.pop(3, t0 + 2s).empty());
    EXPECT_EQ(q.where("a0"), queue_location::backoff);
    EXPECT_EQ(q.audit_member_counts(), "");

    if (deleted) {
      q.track_group_member(pods[0].get(), nullptr, t0 + 3s);
      q.remove("a0");
    } else {
      auto in_b = moved_to_group(pods[0], "b");
      q.track_group_member(pods[0].get(), in_b.get(), t0 + 3s);
      q.update(pods[0], in_b, t0 + 3s);
      EXPECT_EQ(q.where("a0"), queue_location::backoff);
      EXPECT_EQ(q.backoff_members(key_b), 1u);
    }
    EXPECT_EQ(q.backoff_members(key_a), 0u);
    EXPECT_EQ(q.audit_member_counts(), "");
    q.park_stuck_gangs();
    EXPECT_EQ(q.where("a1"), queue_location::unschedulable);
    EXPECT_EQ(q.where("a2"), queue_location::unschedulable);
    EXPECT_EQ(q.audit_member_counts(), "");
  }
}

// A gang whose missing member backs off gets its turn once the backoff ends: the member returns to
// activeQ and the three are popped together.
TEST(QueueStateTest, AGangsTurnStartsWhenItsMemberBackingOffReturns) {
  auto q = make_queue();
  queue_gang_a(q);
  for (auto& p : q.pop(3, t0)) fail(q, *p, {}, true, p->pod->uid == "a0" ? t0 + 5s : t0 + 1ms);
  q.flush(t0 + 2s);
  q.park_stuck_gangs();
  EXPECT_FALSE(q.can_pop());
  q.flush(t0 + 7s);
  EXPECT_EQ(q.backoff_members(key_a), 0u);
  q.park_stuck_gangs();
  EXPECT_EQ(pop_names(q, t0 + 7s).size(), 3u);
  EXPECT_EQ(q.gang_turn(), key_a);
  EXPECT_EQ(q.audit_member_counts(), "");
}

// A gang becomes idle (take_idle_gangs: the permit coordinator may forget it) once every member
// popped has had its cycle reported, done or failed, not before: the last report makes it idle,
// once. A member deleted while in flight leaves flight at once (the turn ends without it), but its
// cycle still runs and may still reach the coordinator: the gang is not idle until it reports.
TEST(QueueStateTest, AGangIsIdleOnceEveryMemberPoppedReported) {
  for (bool delete_one : {false, true}) {
    SCOPED_TRACE(delete_one ? "a member deleted in flight" : "no deletion");
    auto q = make_queue();
    auto pods = queue_gang_a(q);
    std::map<std::string, fw::queued_pod_info> popped;
    for (auto& p : q.pop(3, t0)) popped[p->pod->uid] = *p;
    ASSERT_EQ(popped.size(), 3u);
    EXPECT_EQ(q.unreported_members(key_a), 3u);
    q.done("a0");  // bound
    fail(q, popped["a1"], {"NodeResourcesFit"}, false, t0 + 1ms);
    EXPECT_TRUE(q.take_idle_gangs().empty()) << "a2's cycle has not reported";
    if (delete_one) {
      q.track_group_member(pods[2].get(), nullptr, t0 + 2ms);
      q.remove("a2");
      EXPECT_EQ(q.gang_turn(), "") << "nothing of the turn in flight: it ends";
      EXPECT_EQ(q.unreported_members(key_a), 1u);
      EXPECT_TRUE(q.take_idle_gangs().empty()) << "a2's cycle still runs: it may still reach the coordinator";
      EXPECT_EQ(q.audit_member_counts(), "");
      fail(q, popped["a2"], {}, true, t0 + 3ms);  // its binding fails: the pod is gone
    } else {
      q.done("a2");
    }
    EXPECT_EQ(q.take_idle_gangs(), std::vector<std::string>{key_a});
    EXPECT_EQ(q.unreported_members(key_a), 0u);
    EXPECT_EQ(q.audit_member_counts(), "");
    // A report that comes twice, or for a pod never popped, changes nothing.
    q.done("a0");
    q.done("nobody");
    EXPECT_TRUE(q.take_idle_gangs().empty());
  }
}

}  // namespace
}  // namespace kas

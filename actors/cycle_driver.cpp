#include "actors/cycle_driver.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <random>
#include <unordered_map>

#include "actors/cycle_outcome.hpp"
#include "actors/embedded_client.hpp"
#include "plugins/gang_scheduling/gang_scheduling.hpp"
#include "spdlog/spdlog.h"

namespace kas {

namespace {

// Where a cycle waits. Each value names the stage message that moves it on.
enum class stage : uint8_t {
  snapshot,    // snapshot_ptr from the cache
  whole_pod,   // cycle_reply_ptr from a worker
  filtering,   // filtered_range from each worker a range went to
  scoring,     // scored_range from each worker a range went to
  assuming,    // assume_reply from the cache
  evicting,    // the cluster's, then the cache's answer: a preemption's deletions reached the queue
};

// Everything one pod's cycle accumulates between stages. Owned by the driver's cycle table.
struct pod_cycle {
  uint64_t id = 0;
  stage at = stage::snapshot;
  caf::actor_addr waiting_on;  // the actor whose stage message this cycle waits for
  queued_pod_ptr queued;
  fw::framework_ptr fwk;
  snapshot_ptr snap;
  uint64_t snap_seq = 0;  // the snapshot request `snap` answered (driver_state::snapshot_requests)
  std::shared_ptr<fw::cycle_state> state;
  fw::schedule_result res;  // statuses, examined, PreFilter message: what the FitError needs
  // Node-range path.
  std::shared_ptr<const fw::candidate_nodes> candidates;
  size_t want = 0;
  std::vector<fw::filtered_nodes> filtered;
  std::vector<uint32_t> feasible;  // snapshot indexes
  std::vector<scored_range> scored;
  size_t pending = 0;
  // Pod path: the start-index advance made at dispatch, corrected by the reply; batching signature.
  size_t advanced = 0;
  std::string signature;
  std::optional<failure> evicted;  // preemption: the failure to report once the evictions landed
  explain_record explain;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point phase_start;
};

// A snapshot request waiting for its answer: the cycles it starts, or a preemption to release.
struct snapshot_waiter {
  std::vector<uint64_t> start;
  uint64_t seq = 0;
};

// A nomination this driver made or cleared at PostFilter, sent to the cache after `after_request`
// snapshot requests: a snapshot answering one of those may not hold it yet.
struct recent_nomination {
  pod_info_ptr pod;
  std::string node;  // empty: cleared
  uint64_t after_request = 0;
};

struct driver_state {
  std::unordered_map<std::string, fw::framework_ptr> frameworks;
  std::shared_ptr<const pipeline> wiring;
  driver_options opts;
  std::unordered_map<uint64_t, pod_cycle> cycles;  // the cycle table: id -> state
  bool popping = false;
  size_t next_start = 0;
  size_t next_binder = 0;
  uint64_t cycle = 0;
  uint64_t conflicts = 0;
  std::mt19937_64 rng;
  // Answers arrive in the order asked (one sender, one receiver): FIFOs match them to cycles.
  std::deque<snapshot_waiter> snapshot_waiters;
  std::unordered_map<caf::actor_addr, std::string> names;  // the actors it monitors
  std::unordered_map<caf::actor_addr, std::string> down;   // actors seen down, with the reason
  // Nominations from this driver's successful PostFilters (uid -> node), until the pod is assumed.
  // The queue may hand back the pod object from before its status.nominatedNodeName was set, so
  // the driver remembers what it nominated (kube's nominator holds the same).
  std::unordered_map<std::string, std::string> nominations;
  // The same, told to the cache too, kept while a cycle in flight may hold a snapshot from before.
  std::vector<recent_nomination> recent_nominations;
  uint64_t snapshot_requests = 0;
  // Pods spread over workers: requests outstanding per worker (the least busy gets the next pod).
  std::vector<uint32_t> worker_load;
  // Opportunistic batching: the last fully scheduled pod's signature and its ranked nodes.
  struct {
    std::string signature;
    fw::framework_ptr fwk;
    snapshot_ptr snap;
    uint64_t snap_seq = 0;
    std::vector<uint32_t> nodes;
    size_t next = 0;
    void clear() {
      signature.clear();
      nodes.clear();
      snap.reset();
      next = 0;
    }
  } batch;
  uint64_t batched = 0;
  std::unique_ptr<obs::actor_probe> probe;
  // framework_extension_point_duration_seconds{extension_point, status, profile}, resolved at spawn
  // per profile: [profile][point][0 = Success, 1 = not].
  enum point { pre_filter, filter, pre_score, score, post_filter, reserve, permit, points };
  std::unordered_map<const fw::framework*, std::array<std::array<obs::histogram*, 2>, points>> ep;
  static constexpr const char* point_names[points] = {"PreFilter", "Filter",  "PreScore", "Score",
                                                      "PostFilter", "Reserve", "Permit"};
  // Records one extension point's duration; at -v 4 (spdlog trace) also logs it, kube's per-point timing.
  void observe(const fw::framework* f, point p, bool ok, int64_t ns, const pod_info& pod) {
    auto it = ep.find(f);
    if (it != ep.end() && ns > 0) it->second[p][ok ? 0 : 1]->observe(static_cast<double>(ns) * 1e-9);
    if (spdlog::should_log(spdlog::level::trace))
      spdlog::trace("Extension point finished pod=\"{}/{}\" extensionPoint=\"{}\" status=\"{}\" duration=\"{:.3f}us\"",
                    pod.ns, pod.name, point_names[p], ok ? "Success" : "Unschedulable", static_cast<double>(ns) / 1e3);
  }
  void observe_since(const pod_cycle& pc, point p, bool ok, std::chrono::steady_clock::time_point t0) {
    observe(pc.fwk.get(), p, ok, (std::chrono::steady_clock::now() - t0).count(), *pc.queued->pod);
  }
  // kube's per-cycle draw for plugin_execution_duration_seconds (kept apart from `rng`, whose
  // sequence picks hosts and must not shift when metrics sampling changes).
  std::minstd_rand sample_rng{0x5eed};
  // Gangs with a topology constraint: the domain the gang's members go to, chosen by the first
  // member of an attempt to reach Reserve, and the domains an attempt failed in. The one driver sees
  // every member's Reserve, so a member that chose another domain (its cycle started before the
  // choice) is re-planned there.
  struct gang_domain {
    std::string domain;
    std::shared_ptr<const std::vector<std::string>> tried = std::make_shared<const std::vector<std::string>>();
  };
  std::unordered_map<std::string, gang_domain> gang_domains;  // by pod_group_key

  std::shared_ptr<fw::cycle_state> new_cycle_state(const fw::queued_pod_info& q) {
    auto cs = std::make_shared<fw::cycle_state>();
    cs->record_plugin_metrics = obs::sample_plugin_metrics(sample_rng);
    cs->gang = q.gang.get();  // the queued pod, and so the ticket, outlives the cycle
    if (q.gang && q.gang->group && !q.gang->group->topology_keys.empty()) {
      auto it = gang_domains.find(q.gang->key);
      if (it != gang_domains.end()) {
        cs->gang_domain = it->second.domain;
        cs->gang_tried = it->second.tried;
      }
    }
    return cs;
  }
  static inline const char* name = "cycle_driver";
};

using self_ptr = driver_actor::stateful_pointer<driver_state>;

void pull(self_ptr self);
void advance(self_ptr self, pod_cycle& pc);
void reserve(self_ptr self, pod_cycle& pc, uint32_t node_index);

// --- the cycle table ----------------------------------------------------------------------------

// The cycle ended (bound for Permit/binding, or failed back into the queue): it leaves the table and
// the driver pulls the next pod.
void finish(self_ptr self, pod_cycle& pc) {
  self->state.cycles.erase(pc.id);
  pull(self);
}

// Marks `pc` as waiting on `dest` for its next stage message. False when `dest` is known to be down:
// the caller then fails the cycle instead of sending into the void.
template <class Handle>
bool await(self_ptr self, pod_cycle& pc, stage at, const Handle& dest) {
  pc.at = at;
  pc.waiting_on = caf::actor_cast<caf::actor_addr>(dest);
  return !self->state.down.count(pc.waiting_on);
}

pod_cycle* find_cycle(self_ptr self, uint64_t id) {
  auto it = self->state.cycles.find(id);
  if (it == self->state.cycles.end()) {
    spdlog::error("cycle_driver: a stage message for unknown cycle {} (dropped)", id);
    return nullptr;
  }
  return &it->second;
}

// The driver's messages to the cache (snapshot, assume, nominate) go as urgent messages: the cache
// handles them before the change batches waiting in its mailbox, so a cycle does not wait behind
// hundreds of watch events (it is validated against them at assume anyway). All three share the
// urgent queue, which is FIFO per sender: a nomination still precedes every later snapshot request,
// as recent_nominations assumes. SchedulingBasic: 25,000 -> 26,600 pods/s.
void request_snapshot(self_ptr self, snapshot_waiter w) {
  w.seq = ++self->state.snapshot_requests;
  self->state.snapshot_waiters.push_back(std::move(w));
  self->send<caf::message_priority::high>(self->state.wiring->cache, snap_atom::value);
}

// --- failure (kube's FailureHandler; PostFilter first for rejections) -----------------------------

const std::string& nomination_of(self_ptr self, const pod_info& pod) {
  auto it = self->state.nominations.find(pod.uid);
  return it != self->state.nominations.end() ? it->second : pod.nominated_node_name;
}

std::string verdict_text(const fw::status& s) {
  if (s.is_success()) return "Success";
  if (s.is_skip()) return "Skip";
  std::string t(fw::to_string(s.get_code()));
  auto m = s.message();
  return m.empty() ? t : t + ": " + m;
}

void report(self_ptr self, pod_cycle& pc, failure f) {
  // A gang member failing in its domain: the gang's next attempt tries the other domains first.
  if (pc.state && !pc.state->gang_domain.empty() && pc.queued->gang) {
    auto it = self->state.gang_domains.find(pc.queued->gang->key);
    if (it != self->state.gang_domains.end() && it->second.domain == pc.state->gang_domain) {
      auto tried = std::make_shared<std::vector<std::string>>(*it->second.tried);
      tried->push_back(it->second.domain);
      it->second.tried = std::move(tried);
      it->second.domain.clear();
    }
  }
  report_failure(self, *self->state.wiring, std::move(f));
  finish(self, pc);
}

// PostFilter (preemption) for a rejected pod: whether it evicted victims (whose deletions must reach
// the queue before the failure does), and its message for the FitError when it failed.
struct post_filter_outcome {
  bool evicted = false;
  std::string message;
};

// The cycle's snapshot with the nominations this driver made since it was requested. With several
// pods in flight, two preemptors may both have snapshots from before either one's PostFilter; the
// second must count the first on its nominated node (kube's single scheduling loop always does),
// or both pick the same node and the same victims, and the second is left nominated to a node
// whose room the first takes.
snapshot_ptr with_recent_nominations(driver_state& st, const pod_cycle& pc) {
  // Nominations older than every snapshot in use or still to arrive are in those snapshots.
  uint64_t oldest = st.batch.snap ? st.batch.snap_seq : UINT64_MAX;
  for (auto& [id, c] : st.cycles)
    if (c.snap) oldest = std::min(oldest, c.snap_seq);
  for (auto& w : st.snapshot_waiters) oldest = std::min(oldest, w.seq);
  auto& recent = st.recent_nominations;
  recent.erase(std::remove_if(recent.begin(), recent.end(), [&](const recent_nomination& r) { return r.after_request < oldest; }),
               recent.end());
  auto newer = [&](const recent_nomination& r) { return r.after_request >= pc.snap_seq; };
  if (std::none_of(recent.begin(), recent.end(), newer)) return pc.snap;
  auto m = std::make_shared<snapshot::nominated_map>(pc.snap->nominated());
  // The snapshot's map does not say where a pod is listed: every node is searched.
  for (auto& r : recent)
    if (newer(r)) renominate(*m, r.pod->uid, r.pod, r.node, nullptr);
  return std::make_shared<const snapshot>(pc.snap->with_nominated(std::move(m), pc.snap->generation()));
}

// Tells the cache of a PostFilter's nomination (or its clearing), so every later snapshot counts it
// before the cluster's write comes back, and keeps it for the snapshots already handed out.
void remember_nomination(self_ptr self, const pod_info_ptr& pod, const std::string& node) {
  auto& st = self->state;
  self->send<caf::message_priority::high>(st.wiring->cache, nominate_atom::value, pod, node);
  st.recent_nominations.push_back({pod, node, st.snapshot_requests});
}

post_filter_outcome post_filter(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  if (!pc.fwk->has_post_filter()) return {};
  fw::post_filter_result pfr;
  auto t0 = std::chrono::steady_clock::now();
  requester_scope cluster_requests{self};  // preemption's evictions and nominations are this driver's requests
  snapshot_ptr snap = with_recent_nominations(st, pc);
  fw::status ps = pc.fwk->run_post_filter(*pc.state, *pc.queued->pod, *snap, pc.res.statuses, pfr);
  st.observe_since(pc, driver_state::post_filter, ps.is_success(), t0);
  if (auto* m = st.wiring->metrics.get(); m && ps.get_code() != fw::code::unschedulable_and_unresolvable) {
    m->preemption_attempts.inc();
    if (ps.is_success()) m->preemption_victims.observe(static_cast<double>(pfr.victims.size()));
  }
  const auto& pod = pc.queued->pod;
  if (ps.is_success() && !pfr.nominated_node_name.empty()) {
    st.nominations[pod->uid] = pfr.nominated_node_name;
    remember_nomination(self, pod, pfr.nominated_node_name);
  } else if (ps.get_code() != fw::code::error) {
    // kube clears the nomination of a pod whose preemption failed (ModeOverride, no node).
    if (!nomination_of(self, *pod).empty()) remember_nomination(self, pod, "");
    st.nominations.erase(pod->uid);
  }
  // Success (preemption nominated a node) still ends this attempt as unschedulable, with the
  // FitError message alone; the victims' deletions requeue the pod.
  return {ps.is_success() && !pfr.victims.empty(), ps.is_success() ? std::string() : ps.message()};
}

// Reports a preemptor's held failure once its victims' deletions landed, or once the actor the wait
// was on failed: whichever comes first, once (the cycle is gone after).
void report_evicted(self_ptr self, uint64_t id) {
  auto it = self->state.cycles.find(id);
  if (it == self->state.cycles.end() || it->second.at != stage::evicting || !it->second.evicted) return;
  report(self, it->second, std::move(*it->second.evicted));
}

// Holds a preemptor's failure until its victims' deletions reached the queue, so the queue sees the
// victims' AssignedPodDelete while the pod is still in flight (a requeue to backoff), never after it
// parked the pod as unschedulable and possibly reported itself idle. Two requests, each answered
// after the mail before it:
//   - the cluster answers stats after it emitted the deletions, which this actor asked for;
//   - the cache answers a snapshot request at normal priority after the batch with the deletions,
//     which it forwards to the queue as it applies it. request_snapshot's high-priority request
//     would overtake that batch (seen under TSan: simulate reported a preemptor unschedulable that
//     bound a moment later).
// A failed request, or an actor seen down (fail_waiting_on), reports the failure at once.
void await_evictions(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  const uint64_t id = pc.id;
  auto give_up = [self, id](const caf::error&) {
    auto probe_scope = self->state.probe->begin_handler(self);
    report_evicted(self, id);
  };
  if (!await(self, pc, stage::evicting, st.wiring->cluster)) return report_evicted(self, id);
  self->request(st.wiring->cluster, caf::infinite, stats_atom::value)
    .then(
      [self, id, give_up](const cluster_stats&) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto it = self->state.cycles.find(id);
        if (it == self->state.cycles.end() || it->second.at != stage::evicting) return;
        const auto& cache = self->state.wiring->cache;
        if (!await(self, it->second, stage::evicting, cache)) return report_evicted(self, id);
        self->request(cache, caf::infinite, snap_atom::value)
          .then(
            [self, id](const snapshot_ptr&) {
              auto probe_scope = self->state.probe->begin_handler(self);
              report_evicted(self, id);
            },
            give_up);
      },
      give_up);
}

// The cycle failed before Reserve: an Error as is; a rejection through PostFilter into a FitError.
void fail(self_ptr self, pod_cycle& pc, const fw::status& s) {
  auto& st = self->state;
  if (auto* m = st.wiring->metrics.get())
    m->scheduling_algorithm_duration.observe_duration(std::chrono::steady_clock::now() - pc.started);
  failure f;
  f.pod = pc.queued;
  f.cycle = pc.id;
  f.started = pc.started;
  bool evicted = false;
  if (s.get_code() == fw::code::error || pc.snap->size() == 0) {
    // An Error, or kube's ErrNoNodesAvailable: no PostFilter, the message is the status'.
    f.result = s;
    f.message = s.message();
  } else {
    auto pf = post_filter(self, pc);
    evicted = pf.evicted;
    f.result = fw::status(fw::code::unschedulable);
    f.message = fw::fit_error_message(pc.snap->size(), pc.res.statuses, pc.res.pre_filter_message, pf.message);
    // Every plugin that rejected a node is a plugin whose events may make the pod schedulable.
    for (auto& [node, ns] : pc.res.statuses.statuses)
      if (!ns.plugin().empty()) f.unschedulable_plugins.insert(ns.plugin());
    if (pc.res.statuses.absent && !pc.res.statuses.absent->plugin().empty())
      f.unschedulable_plugins.insert(pc.res.statuses.absent->plugin());
  }
  if (st.opts.explain && pc.snap->size() > 0) self->send(st.wiring->recorder, record_atom::value, std::move(pc.explain));
  if (!evicted || !st.wiring->cluster) return report(self, pc, std::move(f));
  pc.evicted = std::move(f);
  await_evictions(self, pc);
}

// Every cycle waiting on an actor that went down fails back into the queue as an Error.
void fail_waiting_on(self_ptr self, const caf::actor_addr& who, const std::string& reason) {
  std::vector<uint64_t> ids;
  for (auto& [id, pc] : self->state.cycles)
    if (pc.waiting_on == who) ids.push_back(id);
  for (auto id : ids) {
    auto& pc = self->state.cycles.at(id);
    if (pc.at == stage::evicting && pc.evicted) {
      report_evicted(self, id);
      continue;
    }
    fail(self, pc, fw::status::error("scheduling cycle lost its " + reason));
  }
}

// --- stage: popped, snapshot --------------------------------------------------------------------

void pull(self_ptr self) {
  auto& st = self->state;
  if (st.popping || st.cycles.size() >= st.opts.pipeline_depth || !st.down.empty()) return;
  st.popping = true;
  self->send(st.wiring->queue, pop_atom::value, static_cast<uint32_t>(st.opts.pipeline_depth - st.cycles.size()));
}

bool try_batch(self_ptr self, pod_cycle& pc);

// Opportunistic batching without a snapshot round trip: a pod that takes the next node of the
// current batch reads the batch's snapshot, not a new one, so it starts at once. False (nothing
// changed but the cycle's state) when the pod cannot be batched; it then waits for a snapshot.
bool start_from_batch(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  if (!st.opts.batching || st.opts.pipeline_depth <= 1 || st.opts.explain || !st.batch.snap) return false;
  if (!nomination_of(self, *pc.queued->pod).empty()) return false;
  pc.state = st.new_cycle_state(*pc.queued);
  return try_batch(self, pc);
}

void on_popped(self_ptr self, std::vector<queued_pod_ptr>& pods) {
  auto& st = self->state;
  st.popping = false;
  // One snapshot for the whole batch: every pod in it is validated at assume anyway.
  snapshot_waiter w;
  std::vector<uint64_t> batched;
  for (auto& qp : pods) {
    auto it = st.frameworks.find(qp->pod->scheduler_name);
    if (it == st.frameworks.end()) {
      spdlog::error("cycle_driver: no profile for schedulerName \"{}\" (pod {}/{})", qp->pod->scheduler_name,
                    qp->pod->ns, qp->pod->name);
      continue;
    }
    auto& pc = st.cycles[++st.cycle];
    pc.id = st.cycle;
    pc.queued = qp;
    pc.fwk = it->second;
    pc.explain.pod_key = qp->pod->ns + "/" + qp->pod->name;
    if (st.opts.batching && !st.batch.signature.empty()) {
      batched.push_back(pc.id);
      continue;
    }
    await(self, pc, stage::snapshot, st.wiring->cache);
    w.start.push_back(pc.id);
  }
  // Started after the loop: a cycle may end (and leave the table) as it starts.
  for (uint64_t id : batched) {
    auto* pc = find_cycle(self, id);
    if (!pc || start_from_batch(self, *pc)) continue;
    await(self, *pc, stage::snapshot, st.wiring->cache);
    w.start.push_back(id);
  }
  if (!w.start.empty()) request_snapshot(self, std::move(w));
  pull(self);
}

void on_snapshot(self_ptr self, const snapshot_ptr& snap) {
  auto& st = self->state;
  if (st.snapshot_waiters.empty()) return;
  auto w = std::move(st.snapshot_waiters.front());
  st.snapshot_waiters.pop_front();
  for (auto id : w.start) {
    auto* pc = find_cycle(self, id);
    if (!pc) continue;
    pc->snap = snap;
    pc->snap_seq = w.seq;
    advance(self, *pc);
  }
}

// --- stage: whole pod on a worker (pods spread over workers) ------------------------------------

// Opportunistic batching: the next node of the previous same-signature pod's ranked list. PreFilter
// still runs (Reserve and the cache's re-validation read its state); Filter and Score do not.
bool try_batch(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  auto& b = st.batch;
  if (b.signature.empty() || b.next >= b.nodes.size() || b.fwk != pc.fwk) return false;
  if (pc.fwk->sign_pod(*pc.queued->pod) != b.signature) return false;
  pc.snap = b.snap;
  pc.snap_seq = b.snap_seq;
  pc.state->set_snapshot(pc.snap);
  fw::pre_filter_result pr;
  if (!fw::pre_filter_step(*pc.fwk, *pc.state, *pc.queued->pod, *pc.snap, pr, pc.res).is_success() ||
      !pr.all_nodes()) {
    b.clear();
    pc.state = st.new_cycle_state(*pc.queued);
    pc.res = {};
    return false;
  }
  st.batched++;
  reserve(self, pc, b.nodes[b.next++]);
  return true;
}

// The whole algorithm on the least busy worker.
void dispatch_whole_pod(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  auto& workers = st.wiring->workers;
  if (st.worker_load.size() != workers.size()) st.worker_load.assign(workers.size(), 0);
  size_t w = static_cast<size_t>(std::min_element(st.worker_load.begin(), st.worker_load.end()) - st.worker_load.begin());
  auto work = std::make_shared<cycle_work>();
  work->cycle = pc.id;
  work->fwk = pc.fwk;
  work->pod = pc.queued->pod;
  work->snap = pc.snap;
  work->start = st.next_start;
  work->nominated = nomination_of(self, *pc.queued->pod);
  work->record_plugin_metrics = pc.state->record_plugin_metrics;
  work->gang = pc.queued->gang;
  work->gang_domain = pc.state->gang_domain;
  work->gang_tried = pc.state->gang_tried;
  size_t n = pc.snap->size();
  pc.advanced = static_cast<size_t>(
    fw::num_feasible_nodes_to_find(pc.fwk->profile().percentage_of_nodes_to_score, static_cast<int64_t>(n)));
  // Advance by the expected examination now, so pods in flight together start apart; the reply
  // corrects it by what was really examined.
  st.next_start = (st.next_start + pc.advanced) % n;
  if (st.opts.batching) pc.signature = pc.fwk->sign_pod(*pc.queued->pod);
  work->ranked = !pc.signature.empty();
  if (!await(self, pc, stage::whole_pod, workers[w])) return fail(self, pc, fw::status::error("worker down"));
  st.worker_load[w]++;
  self->send(workers[w], work_atom::value, cycle_work_ptr(std::move(work)));
}

void on_whole_pod(self_ptr self, cycle_reply& rep) {
  auto& st = self->state;
  auto* found = find_cycle(self, rep.cycle);
  if (!found) return;
  auto& pc = *found;
  for (size_t w = 0; w < st.wiring->workers.size(); ++w)
    if (caf::actor_cast<caf::actor_addr>(st.wiring->workers[w]) == pc.waiting_on && st.worker_load[w]) st.worker_load[w]--;
  const auto& res = rep.res;
  const fw::framework* f = pc.fwk.get();
  bool ok = res.result.is_success();
  const auto& pod = *pc.queued->pod;
  st.observe(f, driver_state::pre_filter, ok || res.filter_ns > 0, res.pre_filter_ns, pod);
  st.observe(f, driver_state::filter, res.feasible > 0, res.filter_ns, pod);
  st.observe(f, driver_state::pre_score, ok || res.score_ns > 0, res.pre_score_ns, pod);
  st.observe(f, driver_state::score, ok, res.score_ns, pod);
  size_t n = pc.snap->size();
  if (n) st.next_start = (st.next_start + n + res.examined % n - pc.advanced % n) % n;
  pc.state = rep.state;
  pc.res = std::move(rep.res);
  if (!pc.res.result.is_success() || pc.res.node < 0) return fail(self, pc, pc.res.result);
  if (!pc.signature.empty() && !pc.res.nominated) {
    st.batch.signature = pc.signature;
    st.batch.fwk = pc.fwk;
    st.batch.snap = pc.snap;
    st.batch.snap_seq = pc.snap_seq;
    st.batch.nodes = std::move(rep.ranked);
    st.batch.next = 0;
  }
  reserve(self, pc, static_cast<uint32_t>(pc.res.node));
}

// --- stage: PreFilter, nominated node, Filter by node range (one pod in flight, or --explain) -----

void explain_filters(pod_cycle& pc, uint32_t idx, const std::vector<fw::filter_verdict>& verdicts) {
  std::vector<std::pair<std::string, std::string>> row;
  for (auto& v : verdicts)
    row.emplace_back(std::string(v.plugin),
                     v.detail.empty() ? verdict_text(v.result) : verdict_text(v.result) + " (" + v.detail + ")");
  pc.explain.filters.emplace_back(pc.snap->node(idx).name, std::move(row));
}

// Range `c` of `pc`'s cycle, for a worker.
template <class Work>
std::shared_ptr<Work> range_work_for(const pod_cycle& pc, size_t c, const std::shared_ptr<const fw::cycle_state>& cstate) {
  auto work = std::make_shared<Work>();
  work->cycle = pc.id;
  work->range = static_cast<uint32_t>(c);
  work->fwk = pc.fwk;
  work->pod = pc.queued->pod;
  work->state = cstate;
  work->snap = pc.snap;
  return work;
}

void fan_out_filter(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  auto& workers = st.wiring->workers;
  size_t total = pc.candidates->size();
  // One contiguous range of the examination order per worker. Each range looks for the full
  // `want`; merge_filtered keeps the first `want` in order, exactly as a sequential scan.
  size_t w = std::min(workers.size(), std::max<size_t>(1, total / 64 + 1));
  size_t per = (total + w - 1) / std::max<size_t>(w, 1);
  std::shared_ptr<const fw::cycle_state> cstate = pc.state;
  pc.filtered.clear();
  for (size_t c = 0; c * per < total && c < w; ++c) {
    auto work = range_work_for<filter_work>(pc, c, cstate);
    work->candidates = pc.candidates;
    work->begin = c * per;
    work->end = std::min(total, (c + 1) * per);
    work->want = pc.want;
    work->explain = st.opts.explain;
    if (!await(self, pc, stage::filtering, workers[c])) return fail(self, pc, fw::status::error("worker down"));
    self->send(workers[c], work_atom::value, filter_work_ptr(std::move(work)));
    pc.filtered.emplace_back();
  }
  pc.pending = pc.filtered.size();
  if (pc.pending == 0) advance(self, pc);
}

void start_node_range(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  const auto& pod = *pc.queued->pod;
  fw::pre_filter_result pr;
  auto t0 = std::chrono::steady_clock::now();
  auto s = fw::pre_filter_step(*pc.fwk, *pc.state, pod, *pc.snap, pr, pc.res);
  pc.phase_start = std::chrono::steady_clock::now();
  st.observe(pc.fwk.get(), driver_state::pre_filter, s.is_success(), (pc.phase_start - t0).count(), pod);
  if (!s.is_success()) return fail(self, pc, s);
  long nominated = fw::nominated_node_step(*pc.fwk, *pc.state, pod, *pc.snap, nomination_of(self, pod));
  if (nominated >= 0) {
    // kube's evaluateNominatedNode: taken without scoring, and the start index does not move.
    if (st.opts.explain)
      explain_filters(pc, static_cast<uint32_t>(nominated),
                      pc.fwk->explain_filter(*pc.state, pod, pc.snap->node(static_cast<size_t>(nominated))));
    return reserve(self, pc, static_cast<uint32_t>(nominated));
  }
  pc.candidates = std::make_shared<const fw::candidate_nodes>(*pc.snap, pr, st.next_start, pc.res.statuses);
  pc.want = pc.candidates->want(*pc.fwk);
  fan_out_filter(self, pc);
}

// A new cycle on its snapshot: the batch's next node, the whole pod on a worker, or node ranges.
void start(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  pc.state = st.new_cycle_state(*pc.queued);
  pc.state->set_snapshot(pc.snap);
  pc.res = {};
  pc.feasible.clear();
  pc.filtered.clear();
  pc.scored.clear();
  pc.signature.clear();
  pc.advanced = 0;
  if (pc.snap->size() == 0) return fail(self, pc, fw::no_nodes_available());
  // Pods spread over workers whenever several are in flight; --explain takes the node-range path,
  // which records every verdict.
  if (st.opts.pipeline_depth > 1 && !st.opts.explain) {
    if (st.opts.batching && nomination_of(self, *pc.queued->pod).empty() && try_batch(self, pc)) return;
    return dispatch_whole_pod(self, pc);
  }
  start_node_range(self, pc);
}

// --- stage: merge the filtered ranges, PreScore, Score by node range ------------------------------

void fan_out_score(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  auto& workers = st.wiring->workers;
  size_t total = pc.feasible.size();
  size_t w = std::min(workers.size(), std::max<size_t>(1, total / 32 + 1));
  size_t per = (total + w - 1) / w;
  std::shared_ptr<const fw::cycle_state> cstate = pc.state;
  pc.scored.clear();
  for (size_t c = 0; c * per < total; ++c) {
    auto work = range_work_for<score_work>(pc, c, cstate);
    work->nodes.assign(pc.feasible.begin() + c * per, pc.feasible.begin() + std::min(total, (c + 1) * per));
    auto& dest = workers[c % workers.size()];
    if (!await(self, pc, stage::scoring, dest)) return fail(self, pc, fw::status::error("worker down"));
    self->send(dest, work_atom::value, score_work_ptr(std::move(work)));
    pc.scored.emplace_back();
  }
  pc.pending = pc.scored.size();
}

void after_filter(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  auto s = fw::merge_filtered(pc.filtered, pc.want, *pc.snap, pc.feasible, pc.res);
  if (st.opts.explain)
    for (auto& r : pc.filtered)
      for (auto& [idx, verdicts] : r.verdicts) explain_filters(pc, idx, verdicts);
  if (!s.is_success()) return fail(self, pc, s);
  if (pc.candidates->size())
    st.next_start = (st.next_start + std::min(pc.res.examined, pc.candidates->size())) % pc.snap->size();
  auto t0 = std::chrono::steady_clock::now();
  st.observe(pc.fwk.get(), driver_state::filter, !pc.feasible.empty(), (t0 - pc.phase_start).count(), *pc.queued->pod);
  switch (fw::decide_after_filter(pc.feasible.size())) {
    case fw::after_filter::unschedulable: return fail(self, pc, fw::status(fw::code::unschedulable));
    case fw::after_filter::only_one: return reserve(self, pc, pc.feasible.front());
    case fw::after_filter::prioritize: break;
  }
  std::vector<const node_info*> nodes;
  nodes.reserve(pc.feasible.size());
  for (auto idx : pc.feasible) nodes.push_back(&pc.snap->node(idx));
  s = fw::pre_score_step(*pc.fwk, *pc.state, *pc.queued->pod, nodes);
  pc.phase_start = std::chrono::steady_clock::now();
  st.observe(pc.fwk.get(), driver_state::pre_score, s.is_success(), (pc.phase_start - t0).count(), *pc.queued->pod);
  if (!s.is_success()) return fail(self, pc, s);
  fan_out_score(self, pc);
}

void explain_scores(pod_cycle& pc, const std::vector<std::vector<fw::node_score>>& raw,
                    const std::vector<std::vector<fw::node_score>>& normalized, const std::vector<int64_t>& totals) {
  const auto& fwk = *pc.fwk;
  for (size_t i = 0; i < pc.feasible.size(); ++i) {
    explain_record::score_row row;
    row.node = pc.snap->node(pc.feasible[i]).name;
    for (size_t p = 0; p < fwk.score_plugin_count(); ++p)
      row.plugins.emplace_back(std::string(fwk.score_plugin_name(p)), raw[p][i].score, normalized[p][i].score,
                               normalized[p][i].score * fwk.score_weight(p));
    row.total = totals[i];
    pc.explain.scores.push_back(std::move(row));
  }
}

// --- stage: merge the scored ranges, NormalizeScore, select host -----------------------------------

void after_score(self_ptr self, pod_cycle& pc) {
  auto& st = self->state;
  size_t k = pc.fwk->score_plugin_count();
  std::vector<std::vector<fw::node_score>> raw(k);
  for (auto& r : pc.scored) {
    if (!r.error.is_success()) return fail(self, pc, r.error);
    for (size_t p = 0; p < k && p < r.raw.size(); ++p) raw[p].insert(raw[p].end(), r.raw[p].begin(), r.raw[p].end());
  }
  std::vector<std::vector<fw::node_score>> raw_copy;
  if (st.opts.explain) raw_copy = raw;
  std::vector<int64_t> totals;
  auto s = fw::finish_scores(*pc.fwk, *pc.state, *pc.queued->pod, pc.feasible.size(), raw, totals);
  if (!s.is_success()) return fail(self, pc, s);
  st.observe_since(pc, driver_state::score, true, pc.phase_start);
  size_t best = fw::select_host(totals, st.rng);
  if (st.opts.explain) explain_scores(pc, raw_copy, raw, totals);
  reserve(self, pc, pc.feasible[best]);
}

// --- stage: assume, Reserve, Permit, then the permit coordinator or a binder ----------------------

void reserve(self_ptr self, pod_cycle& pc, uint32_t node_index) {
  auto& st = self->state;
  const node_info& node = pc.snap->node(node_index);
  if (auto& t = pc.queued->gang; t && t->group && !t->group->topology_keys.empty()) {
    auto& memo = st.gang_domains[t->key];
    auto domain = plugins::topology_domain(*t->group, node);
    if (memo.domain.empty()) {
      memo.domain = domain;  // the first member of the attempt to get here chose the gang's domain
    } else if (memo.domain != domain) {
      // Planned before that choice (or from a batch of another attempt), it went elsewhere: plan
      // it again, in the gang's domain.
      st.conflicts++;
      st.batch.clear();
      await(self, pc, stage::snapshot, st.wiring->cache);
      return request_snapshot(self, snapshot_waiter{{pc.id}, 0});
    }
  }
  assume_request req;
  req.cycle = pc.id;
  req.fwk = pc.fwk;
  req.pod = pc.queued->pod;
  req.state = pc.state;
  req.node = node.name;
  req.node_generation = node.generation;
  req.snapshot_generation = pc.snap->generation();
  req.global = pc.fwk->needs_global_validation(*pc.state);
  if (st.opts.explain) pc.explain.selected = node.name;
  if (auto* m = st.wiring->metrics.get())
    m->scheduling_algorithm_duration.observe_duration(std::chrono::steady_clock::now() - pc.started);
  if (!await(self, pc, stage::assuming, st.wiring->cache)) return fail(self, pc, fw::status::error("cache down"));
  self->send<caf::message_priority::high>(st.wiring->cache, assume_atom::value, std::move(req));
}

void on_assumed(self_ptr self, pod_cycle& pc, const assume_reply& rep) {
  auto& st = self->state;
  auto& p = *st.wiring;
  if (!rep.ok && rep.conflict) {
    // Optimistic validation lost a race: retry at once on a newer snapshot, no backoff.
    st.conflicts++;
    pc.explain = explain_record{pc.explain.pod_key, {}, {}, {}};
    await(self, pc, stage::snapshot, p.cache);
    return request_snapshot(self, snapshot_waiter{{pc.id}, 0});
  }
  if (!rep.ok) return fail(self, pc, fw::status::error(rep.message));
  st.nominations.erase(pc.queued->pod->uid);
  if (st.opts.explain) self->send(p.recorder, record_atom::value, std::move(pc.explain));
  auto ctx = std::make_shared<cycle_ctx>();
  ctx->fwk = pc.fwk;
  ctx->queued = pc.queued;
  ctx->assumed = rep.assumed;
  ctx->node = rep.assumed->node_name;
  ctx->state = std::move(*pc.state);
  // Only PreScore and Score read the snapshot. A binding cycle holding it kept a snapshot version
  // alive (its copied chunks and node_hot records) for every pod waiting to be bound.
  ctx->state.set_snapshot(nullptr);
  ctx->cycle = pc.id;
  ctx->started = pc.started;
  auto t0 = std::chrono::steady_clock::now();
  auto s = ctx->fwk->run_reserve(ctx->state, *ctx->assumed, ctx->node);
  auto t1 = std::chrono::steady_clock::now();
  st.observe(ctx->fwk.get(), driver_state::reserve, s.is_success(), (t1 - t0).count(), *ctx->assumed);
  if (!s.is_success()) {
    abort_reserved(self, p, *ctx, s, s.message(), failed_in::scheduling_cycle);
    return finish(self, pc);
  }
  if (!ctx->state.assumed_storage.empty())
    self->send<caf::message_priority::high>(
      st.wiring->cache, assume_atom::value, ctx->assumed->uid,
      std::make_shared<const std::vector<volume_change>>(ctx->state.assumed_storage));
  s = ctx->fwk->run_permit(ctx->state, *ctx->assumed, ctx->node, ctx->permit_waits);
  st.observe(ctx->fwk.get(), driver_state::permit, s.is_success() || s.is_wait(),
             (std::chrono::steady_clock::now() - t1).count(), *ctx->assumed);
  if (s.is_wait()) self->send(p.permit, wait_atom::value, ctx);
  else if (!s.is_success()) abort_reserved(self, p, *ctx, s, s.message(), failed_in::scheduling_cycle);
  else self->send(p.binders[st.next_binder++ % p.binders.size()], bind_atom::value, ctx);
  finish(self, pc);
}

// --- the one function that moves a cycle on, once the stage it waited for is complete ------------

void advance(self_ptr self, pod_cycle& pc) {
  switch (pc.at) {
    case stage::snapshot: return start(self, pc);
    case stage::filtering: return after_filter(self, pc);
    case stage::scoring: return after_score(self, pc);
    case stage::whole_pod:
    case stage::assuming:
    case stage::evicting:
      // Their stage messages carry the result and are handled where they arrive.
      spdlog::error("cycle_driver: cycle {} advanced without its stage message", pc.id);
      return;
  }
}

// Stores one range's answer; the last one advances the cycle.
template <class Range>
void on_range(self_ptr self, uint64_t id, uint32_t range, stage at, std::vector<Range>& (*slot)(pod_cycle&),
              Range&& r) {
  auto* pc = find_cycle(self, id);
  if (!pc || pc->at != at || range >= slot(*pc).size()) return;
  slot(*pc)[range] = std::move(r);
  if (--pc->pending == 0) advance(self, *pc);
}

std::vector<fw::filtered_nodes>& filtered_slot(pod_cycle& pc) { return pc.filtered; }
std::vector<scored_range>& scored_slot(pod_cycle& pc) { return pc.scored; }

// The driver's state at spawn: its profiles, the extension-point series per profile, and the
// monitors that are every stage's error path.
void init(self_ptr self, const std::vector<fw::framework_ptr>& frameworks, const driver_options& opts,
          const std::shared_ptr<const pipeline>& wiring) {
  auto& st = self->state;
  for (auto& f : frameworks) st.frameworks.emplace(f->scheduler_name(), f);
  st.wiring = wiring;
  st.opts = opts;
  st.rng.seed(opts.seed);
  st.probe = make_probe(*wiring, "cycle_driver-0");
  if (auto* m = wiring->metrics.get()) {
    for (auto& f : frameworks) {
      auto& row = st.ep[f.get()];
      for (size_t i = 0; i < driver_state::points; ++i)
        for (size_t ok = 0; ok < 2; ++ok)
          row[i][ok] = &m->framework_extension_point_duration.histogram_series(
            {driver_state::point_names[i], ok == 0 ? "Success" : "Unschedulable", f->scheduler_name()});
    }
  }
  // The error path of every stage: an actor a cycle waits on went down. Its cycles fail back into
  // the queue (kube's FailureHandler, as an Error) and the driver stops pulling; the supervisor
  // reports the death and stops the process.
  auto watch = [&](const auto& handle, std::string name) {
    self->monitor(handle);
    st.names.emplace(caf::actor_cast<caf::actor_addr>(handle), std::move(name));
  };
  watch(wiring->queue, "scheduling_queue");
  watch(wiring->cache, "snapshot_cache");
  if (wiring->cluster) watch(wiring->cluster, "cluster source");
  for (size_t i = 0; i < wiring->workers.size(); ++i) watch(wiring->workers[i], "filter_score_worker-" + std::to_string(i));
  self->set_down_handler([self](caf::down_msg& dm) {
    auto probe_scope = self->state.probe->begin_handler(self);
    auto it = self->state.names.find(dm.source);
    auto reason = (it != self->state.names.end() ? it->second : caf::to_string(dm.source)) + " (" +
                  self->system().render(dm.reason) + ")";
    spdlog::error("cycle_driver: {} is down; failing the cycles waiting on it", reason);
    self->state.down.emplace(dm.source, reason);
    fail_waiting_on(self, dm.source, reason);
  });
  self->set_error_handler([self](caf::error& err) {
    auto probe_scope = self->state.probe->begin_handler(self);
    spdlog::error("cycle_driver: error message: {}", self->system().render(err));
  });
}

}  // namespace

driver_actor spawn_cycle_driver(caf::actor_system& sys, std::vector<fw::framework_ptr> frameworks,
                                const driver_options& opts, std::shared_ptr<const pipeline> wiring) {
  return sys.spawn([frameworks, opts, wiring](self_ptr self) -> driver_actor::behavior_type {
    init(self, frameworks, opts, wiring);
    return {
      [self](start_atom) {
        auto probe_scope = self->state.probe->begin_handler(self);
        pull(self);
      },
      [self](std::vector<queued_pod_ptr>& pods) {
        auto probe_scope = self->state.probe->begin_handler(self);
        on_popped(self, pods);
      },
      [self](const snapshot_ptr& snap) {
        auto probe_scope = self->state.probe->begin_handler(self);
        on_snapshot(self, snap);
      },
      [self](filtered_range& r) {
        auto probe_scope = self->state.probe->begin_handler(self);
        on_range(self, r.cycle, r.range, stage::filtering, filtered_slot, std::move(r.nodes));
      },
      [self](scored_range& r) {
        auto probe_scope = self->state.probe->begin_handler(self);
        uint64_t id = r.cycle;
        uint32_t range = r.range;
        on_range(self, id, range, stage::scoring, scored_slot, std::move(r));
      },
      [self](const cycle_reply_ptr& rep) {
        auto probe_scope = self->state.probe->begin_handler(self);
        on_whole_pod(self, *rep);
      },
      [self](const assume_reply& rep) {
        auto probe_scope = self->state.probe->begin_handler(self);
        if (auto* pc = find_cycle(self, rep.cycle); pc && pc->at == stage::assuming) on_assumed(self, *pc, rep);
      },
    };
  });
}

}  // namespace kas

#include "actors/cycle_driver.hpp"

#include <algorithm>
#include <array>
#include <random>
#include <unordered_map>

#include "actors/cycle_outcome.hpp"
#include "actors/embedded_client.hpp"
#include "spdlog/spdlog.h"

namespace kas {

namespace {

struct driver_state {
  std::unordered_map<std::string, fw::framework_ptr> frameworks;
  std::shared_ptr<const pipeline> wiring;
  driver_options opts;
  uint32_t in_flight = 0;
  bool popping = false;
  size_t next_start = 0;
  size_t next_binder = 0;
  uint64_t cycle = 0;
  uint64_t conflicts = 0;
  std::mt19937_64 rng;
  // Nominations from this driver's successful PostFilters (uid -> node), until the pod is assumed.
  // The queue may hand back the pod object from before its status.nominatedNodeName was set, so
  // the driver remembers what it nominated (kube's nominator holds the same).
  std::unordered_map<std::string, std::string> nominations;
  // Pods spread over workers: requests outstanding per worker (the least busy gets the next pod).
  std::vector<uint32_t> worker_load;
  // Opportunistic batching: the last fully scheduled pod's signature and its ranked nodes.
  struct {
    std::string signature;
    fw::framework_ptr fwk;
    snapshot_ptr snap;
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
  // kube's per-cycle draw for plugin_execution_duration_seconds (kept apart from `rng`, whose
  // sequence picks hosts and must not shift when metrics sampling changes).
  std::minstd_rand sample_rng{0x5eed};
  std::shared_ptr<fw::cycle_state> new_cycle_state() {
    auto cs = std::make_shared<fw::cycle_state>();
    cs->record_plugin_metrics = obs::sample_plugin_metrics(sample_rng);
    return cs;
  }
  static inline const char* name = "cycle_driver";
};

using self_ptr = driver_actor::stateful_pointer<driver_state>;

// Everything one pod's cycle accumulates between asynchronous steps.
struct pod_cycle {
  queued_pod_ptr queued;
  fw::framework_ptr fwk;
  snapshot_ptr snap;
  std::shared_ptr<fw::cycle_state> state;
  uint64_t cycle = 0;
  std::vector<uint32_t> order;  // candidate nodes (snapshot indexes) in examination order
  std::vector<std::shared_ptr<filter_work>> filter_chunks;
  std::vector<filter_reply> filter_replies;
  std::vector<uint32_t> feasible;  // snapshot indexes
  fw::node_to_status statuses;
  std::vector<score_reply> score_replies;
  size_t pending = 0;
  size_t want = 0;
  explain_record explain;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point phase_start;  // node-range path: when Filter / Score fanned out
};
using pod_cycle_ptr = std::shared_ptr<pod_cycle>;

void pull(self_ptr self);
void begin(self_ptr self, queued_pod_ptr qp);
void start_cycle(self_ptr self, queued_pod_ptr qp, snapshot_ptr snap);
void after_filter(self_ptr self, pod_cycle_ptr pc);
void after_score(self_ptr self, pod_cycle_ptr pc);
void reserve(self_ptr self, pod_cycle_ptr pc, uint32_t node_index);

void finish_cycle(self_ptr self) {
  self->state.in_flight--;
  pull(self);
}

std::string verdict_text(const fw::status& s) {
  if (s.is_success()) return "Success";
  if (s.is_skip()) return "Skip";
  std::string t(fw::to_string(s.get_code()));
  auto m = s.message();
  return m.empty() ? t : t + ": " + m;
}

// The cycle failed before Reserve: FitError message, PostFilter, requeue.
void fail_unschedulable(self_ptr self, pod_cycle_ptr pc, const fw::status& s, const std::string& pre_filter_msg) {
  auto& p = *self->state.wiring;
  failure_report r;
  r.pod = pc->queued;
  r.cycle = pc->cycle;
  r.started = pc->started;
  if (auto* m = self->state.wiring->metrics.get())
    m->scheduling_algorithm_duration.observe_duration(std::chrono::steady_clock::now() - pc->started);
  bool preempted = false;
  if (s.get_code() == fw::code::error) {
    r.result = s;
    r.message = s.message();
  } else {
    std::string post_msg;
    if (pc->fwk->has_post_filter()) {
      fw::post_filter_result pfr;
      auto t0 = std::chrono::steady_clock::now();
      requester_scope cluster_requests{self};  // preemption's evictions and nominations are this driver's requests
      auto ps = pc->fwk->run_post_filter(*pc->state, *pc->queued->pod, *pc->snap, pc->statuses, pfr);
      self->state.observe(pc->fwk.get(), driver_state::post_filter, ps.is_success(),
                          (std::chrono::steady_clock::now() - t0).count(), *pc->queued->pod);
      if (auto* m = self->state.wiring->metrics.get(); m && ps.get_code() != fw::code::unschedulable_and_unresolvable) {
        m->preemption_attempts.inc();
        if (ps.is_success()) m->preemption_victims.observe(static_cast<double>(pfr.victims.size()));
      }
      // Success (preemption nominated a node) still ends this attempt as unschedulable, with the
      // FitError message alone; the victims' deletions requeue the pod.
      if (!ps.is_success()) post_msg = ps.message();
      const std::string& uid = pc->queued->pod->uid;
      if (ps.is_success() && !pfr.nominated_node_name.empty())
        self->state.nominations[uid] = pfr.nominated_node_name;
      else if (ps.get_code() != fw::code::error)
        self->state.nominations.erase(uid);
      preempted = ps.is_success() && !pfr.victims.empty();
    }
    r.result = fw::status(fw::code::unschedulable);
    r.message = fw::fit_error_message(pc->snap->size(), pc->statuses, pre_filter_msg, post_msg);
    // Every plugin that rejected a node is a plugin whose events may make the pod schedulable.
    for (auto& [node, st] : pc->statuses.statuses)
      if (!st.plugin().empty()) r.unschedulable_plugins.insert(st.plugin());
    if (pc->statuses.absent && !pc->statuses.absent->plugin().empty())
      r.unschedulable_plugins.insert(pc->statuses.absent->plugin());
  }
  if (self->state.opts.explain) self->send(p.recorder, record_atom::value, std::move(pc->explain));
  if (!preempted || !p.cluster) {
    report_failure(self, p, std::move(r));
    finish_cycle(self);
    return;
  }
  // The evictions were sent to the cluster from this thread, so a request sent now is answered
  // after the cluster emitted their deletions to the cache; a cache request sent after that reply
  // is answered after the cache forwarded them to the queue. Reporting the failure only then makes
  // the queue see the victims' AssignedPodDelete while the pod is still in flight (requeue to
  // backoff), never after it parked the pod as unschedulable and possibly reported itself idle.
  auto report = std::make_shared<failure_report>(std::move(r));
  self->request(p.cluster, caf::infinite, stats_atom::value).then([=](const cluster_stats&) {
    self->request(self->state.wiring->cache, caf::infinite, snap_atom::value).then([=](const snapshot_ptr&) {
      report_failure(self, *self->state.wiring, std::move(*report));
      finish_cycle(self);
    });
  });
}

// kube's evaluateNominatedNode: a pod nominated by an earlier preemption tries that node first, and
// takes it without scoring (and without moving the round-robin start index) when it passes Filter.
bool try_nominated_node(self_ptr self, pod_cycle_ptr pc) {
  auto& st = self->state;
  const auto& pod = *pc->queued->pod;
  auto it = st.nominations.find(pod.uid);
  const std::string& nominated = it != st.nominations.end() ? it->second : pod.nominated_node_name;
  if (nominated.empty()) return false;
  long idx = pc->snap->index_of(nominated);
  if (idx < 0) return false;
  const node_info& node = pc->snap->node(static_cast<size_t>(idx));
  if (!pc->fwk->run_filter_with_nominated_pods(*pc->state, pod, node, *pc->snap).is_success()) return false;
  if (st.opts.explain) {
    std::vector<std::pair<std::string, std::string>> row;
    for (auto& v : pc->fwk->explain_filter(*pc->state, pod, node))
      row.emplace_back(std::string(v.plugin), verdict_text(v.result));
    pc->explain.filters.emplace_back(node.name, std::move(row));
  }
  reserve(self, pc, static_cast<uint32_t>(idx));
  return true;
}

void pull(self_ptr self) {
  auto& st = self->state;
  if (st.popping || st.in_flight >= st.opts.pipeline_depth) return;
  st.popping = true;
  uint32_t n = st.opts.pipeline_depth - st.in_flight;
  self->request(st.wiring->queue, caf::infinite, pop_atom::value, n)
    .then([=](std::vector<queued_pod_ptr>& pods) {
      auto probe_scope = self->state.probe->begin_handler(self);
      self->state.popping = false;
      self->state.in_flight += static_cast<uint32_t>(pods.size());
      // One snapshot for the whole batch: every pod in it is validated at assume anyway.
      self->request(self->state.wiring->cache, caf::infinite, snap_atom::value).then([=](snapshot_ptr snap) {
        for (auto& qp : pods) start_cycle(self, qp, snap);
      });
      pull(self);
    });
}

void begin(self_ptr self, queued_pod_ptr qp) {
  self->request(self->state.wiring->cache, caf::infinite, snap_atom::value).then([=](snapshot_ptr snap) {
    start_cycle(self, qp, std::move(snap));
  });
}

bool has_nomination(self_ptr self, const pod_info& pod) {
  return !pod.nominated_node_name.empty() || self->state.nominations.count(pod.uid);
}

// Opportunistic batching: the next node of the previous same-signature pod's ranked list. PreFilter
// still runs (Reserve and the cache's re-validation read its state); Filter and Score do not.
bool try_batch(self_ptr self, pod_cycle_ptr pc) {
  auto& st = self->state;
  auto& b = st.batch;
  if (b.signature.empty() || b.next >= b.nodes.size() || b.fwk != pc->fwk) return false;
  std::string sig = pc->fwk->sign_pod(*pc->queued->pod);
  if (sig != b.signature) return false;
  pc->snap = b.snap;
  pc->state->set_snapshot(pc->snap);
  fw::pre_filter_result pr;
  if (!pc->fwk->run_pre_filter(*pc->state, *pc->queued->pod, *pc->snap, pr).is_success() || !pr.all_nodes()) {
    b.clear();
    pc->state = self->state.new_cycle_state();
    return false;
  }
  st.batched++;
  reserve(self, pc, b.nodes[b.next++]);
  return true;
}

// The whole algorithm on the least busy worker.
void dispatch_whole_pod(self_ptr self, pod_cycle_ptr pc) {
  auto& st = self->state;
  auto& workers = st.wiring->workers;
  if (st.worker_load.size() != workers.size()) st.worker_load.assign(workers.size(), 0);
  size_t w = static_cast<size_t>(std::min_element(st.worker_load.begin(), st.worker_load.end()) - st.worker_load.begin());
  auto work = std::make_shared<cycle_work>();
  work->fwk = pc->fwk;
  work->pod = pc->queued->pod;
  work->snap = pc->snap;
  work->start = st.next_start;
  work->record_plugin_metrics = pc->state->record_plugin_metrics;
  size_t n = pc->snap->size();
  size_t want = static_cast<size_t>(
    fw::num_feasible_nodes_to_find(pc->fwk->profile().percentage_of_nodes_to_score, static_cast<int64_t>(n)));
  // Advance by the expected examination now, so pods in flight together start apart; the reply
  // corrects it by what was really examined.
  st.next_start = (st.next_start + want) % n;
  std::string sig;
  if (st.opts.batching) sig = pc->fwk->sign_pod(*pc->queued->pod);
  work->ranked = !sig.empty();
  st.worker_load[w]++;
  self->request(workers[w], caf::infinite, work_atom::value, cycle_work_ptr(work))
    .then([=](cycle_reply_ptr& rep) {
      auto& st = self->state;
      st.worker_load[w]--;
      auto probe_scope = st.probe->begin_handler(self);
      const auto& res = rep->res;
      const fw::framework* f = pc->fwk.get();
      bool ok = res.result.is_success();
      const auto& pod = *pc->queued->pod;
      st.observe(f, driver_state::pre_filter, ok || res.filter_ns > 0, res.pre_filter_ns, pod);
      st.observe(f, driver_state::filter, res.feasible > 0, res.filter_ns, pod);
      st.observe(f, driver_state::pre_score, ok || res.score_ns > 0, res.pre_score_ns, pod);
      st.observe(f, driver_state::score, ok, res.score_ns, pod);
      size_t n = pc->snap->size();
      st.next_start = (st.next_start + n + rep->res.examined % n - want % n) % n;
      pc->state = rep->state;
      if (rep->res.result.is_success() && rep->res.node >= 0) {
        if (!sig.empty()) {
          st.batch.signature = sig;
          st.batch.fwk = pc->fwk;
          st.batch.snap = pc->snap;
          st.batch.nodes = std::move(rep->ranked);
          st.batch.next = 0;
        }
        reserve(self, pc, static_cast<uint32_t>(rep->res.node));
        return;
      }
      pc->statuses = std::move(rep->res.statuses);
      fail_unschedulable(self, pc, rep->res.result, rep->res.pre_filter_message);
    });
}

void start_cycle(self_ptr self, queued_pod_ptr qp, snapshot_ptr snap) {
  {
    auto& st = self->state;
    auto pc = std::make_shared<pod_cycle>();
    pc->queued = qp;
    pc->snap = std::move(snap);
    pc->state = st.new_cycle_state();
    pc->state->set_snapshot(pc->snap);
    pc->cycle = ++st.cycle;
    pc->explain.pod_key = qp->pod->ns + "/" + qp->pod->name;
    auto it = st.frameworks.find(qp->pod->scheduler_name);
    if (it == st.frameworks.end()) {
      finish_cycle(self);
      return;
    }
    pc->fwk = it->second;
    const auto& pod = *qp->pod;
    const auto& snapr = *pc->snap;
    if (snapr.size() == 0) {
      // kube's ErrNoNodesAvailable is UnschedulableAndUnresolvable, not an Error: the pod waits in
      // the unschedulable pool for a node event. As an Error it backed off, and with the idle skip
      // it was retried at once, forever. No PostFilter, and the message is the error text.
      failure_report r;
      r.pod = qp;
      r.cycle = pc->cycle;
      r.started = pc->started;
      r.result = fw::status(fw::code::unschedulable_and_unresolvable, "no nodes available to schedule pods");
      r.message = "no nodes available to schedule pods";
      report_failure(self, *st.wiring, std::move(r));
      finish_cycle(self);
      return;
    }
    // Pods spread over workers whenever several are in flight (nominated pods and --explain take
    // the node-range path, which evaluates the nominated node first and records every verdict).
    bool whole_pod = st.opts.pipeline_depth > 1 && !st.opts.explain && !has_nomination(self, pod);
    if (whole_pod) {
      if (st.opts.batching && try_batch(self, pc)) return;
      dispatch_whole_pod(self, pc);
      return;
    }
    fw::pre_filter_result pr;
    auto t0 = std::chrono::steady_clock::now();
    auto s = pc->fwk->run_pre_filter(*pc->state, pod, snapr, pr);
    pc->phase_start = std::chrono::steady_clock::now();
    st.observe(pc->fwk.get(), driver_state::pre_filter, s.is_success(), (pc->phase_start - t0).count(), pod);
    if (!s.is_success()) {
      if (s.is_rejected()) {
        pc->statuses.absent = s;
        fail_unschedulable(self, pc, s, s.message());
      } else {
        fail_unschedulable(self, pc, s, "");
      }
      return;
    }
    if (try_nominated_node(self, pc)) return;
    // Candidates in examination order: from the round-robin start index.
    fw::candidate_order(snapr, pr, st.next_start, pc->order, pc->statuses);
    bool explain = st.opts.explain;
    pc->want = explain ? pc->order.size()
                       : static_cast<size_t>(fw::num_feasible_nodes_to_find(
                           pc->fwk->profile().percentage_of_nodes_to_score, static_cast<int64_t>(pc->order.size())));
    // Fan Filter out over the workers, one contiguous range of the order each. Each range looks for
    // the full `want`; the merge keeps the first `want` in order, exactly as a sequential scan.
    auto& workers = st.wiring->workers;
    size_t w = std::min(workers.size(), std::max<size_t>(1, pc->order.size() / 64 + 1));
    size_t per = (pc->order.size() + w - 1) / std::max<size_t>(w, 1);
    std::shared_ptr<const fw::cycle_state> cstate = pc->state;
    for (size_t c = 0; c * per < pc->order.size() && c < w; ++c) {
      auto work = std::make_shared<filter_work>();
      work->fwk = pc->fwk;
      work->pod = qp->pod;
      work->state = cstate;
      work->snap = pc->snap;
      work->nodes.assign(pc->order.begin() + c * per, pc->order.begin() + std::min(pc->order.size(), (c + 1) * per));
      work->want_feasible = pc->want;
      work->explain = explain;
      pc->filter_chunks.push_back(work);
    }
    if (pc->filter_chunks.empty()) {
      after_filter(self, pc);
      return;
    }
    pc->filter_replies.resize(pc->filter_chunks.size());
    pc->pending = pc->filter_chunks.size();
    for (size_t c = 0; c < pc->filter_chunks.size(); ++c) {
      filter_work_ptr work = pc->filter_chunks[c];
      self->request(workers[c], caf::infinite, work_atom::value, work).then([=](filter_reply& rep) {
        pc->filter_replies[c] = std::move(rep);
        if (--pc->pending == 0) after_filter(self, pc);
      });
    }
  }
}

void after_filter(self_ptr self, pod_cycle_ptr pc) {
  auto& st = self->state;
  const auto& snapr = *pc->snap;
  size_t processed = 0;
  for (size_t c = 0; c < pc->filter_replies.size(); ++c) {
    auto& rep = pc->filter_replies[c];
    const auto& nodes = pc->filter_chunks[c]->nodes;
    if (rep.error.get_code() == fw::code::error) {
      fail_unschedulable(self, pc, rep.error, "");
      return;
    }
    for (auto off : rep.feasible)
      if (pc->feasible.size() < pc->want) pc->feasible.push_back(nodes[off]);
    for (auto& [off, s] : rep.failed) pc->statuses.statuses.emplace(snapr.node(nodes[off]).name, s);
    processed += rep.examined;
    if (st.opts.explain)
      for (auto& [off, verdicts] : rep.verdicts) {
        std::vector<std::pair<std::string, std::string>> row;
        for (auto& v : verdicts) row.emplace_back(std::string(v.plugin), verdict_text(v.result));
        pc->explain.filters.emplace_back(snapr.node(nodes[off]).name, std::move(row));
      }
  }
  if (!pc->order.empty()) st.next_start = (st.next_start + std::min(processed, pc->order.size())) % snapr.size();
  auto t0 = std::chrono::steady_clock::now();
  st.observe(pc->fwk.get(), driver_state::filter, !pc->feasible.empty(), (t0 - pc->phase_start).count(),
             *pc->queued->pod);
  if (pc->feasible.empty()) {
    fail_unschedulable(self, pc, fw::status(fw::code::unschedulable), "");
    return;
  }
  if (pc->feasible.size() == 1 && !st.opts.explain) {
    reserve(self, pc, pc->feasible.front());
    return;
  }
  std::vector<const node_info*> nodes;
  nodes.reserve(pc->feasible.size());
  for (auto idx : pc->feasible) nodes.push_back(&snapr.node(idx));
  auto s = pc->fwk->run_pre_score(*pc->state, *pc->queued->pod, nodes);
  pc->phase_start = std::chrono::steady_clock::now();
  st.observe(pc->fwk.get(), driver_state::pre_score, s.is_success(), (pc->phase_start - t0).count(),
             *pc->queued->pod);
  if (!s.is_success()) {
    fail_unschedulable(self, pc, fw::status::error(s.message()), "");
    return;
  }
  auto& workers = st.wiring->workers;
  size_t w = std::min(workers.size(), std::max<size_t>(1, pc->feasible.size() / 32 + 1));
  size_t per = (pc->feasible.size() + w - 1) / w;
  std::shared_ptr<const fw::cycle_state> cstate = pc->state;
  std::vector<score_work_ptr> chunks;
  for (size_t c = 0; c * per < pc->feasible.size(); ++c) {
    auto work = std::make_shared<score_work>();
    work->fwk = pc->fwk;
    work->pod = pc->queued->pod;
    work->state = cstate;
    work->snap = pc->snap;
    work->nodes.assign(pc->feasible.begin() + c * per,
                       pc->feasible.begin() + std::min(pc->feasible.size(), (c + 1) * per));
    chunks.push_back(work);
  }
  pc->score_replies.resize(chunks.size());
  pc->pending = chunks.size();
  for (size_t c = 0; c < chunks.size(); ++c) {
    self->request(workers[c % workers.size()], caf::infinite, work_atom::value, chunks[c])
      .then([=](score_reply& rep) {
        pc->score_replies[c] = std::move(rep);
        if (--pc->pending == 0) after_score(self, pc);
      });
  }
}

void after_score(self_ptr self, pod_cycle_ptr pc) {
  auto& st = self->state;
  const auto& fwk = *pc->fwk;
  const auto& snapr = *pc->snap;
  size_t k = fwk.score_plugin_count();
  std::vector<uint32_t> nodes;
  std::vector<std::vector<fw::node_score>> raw(k);
  for (auto& rep : pc->score_replies) {
    if (rep.error.get_code() == fw::code::error || rep.error.is_rejected()) {
      fail_unschedulable(self, pc, fw::status::error(rep.error.message()), "");
      return;
    }
    for (size_t i = 0; i < rep.nodes.size(); ++i) {
      nodes.push_back(rep.nodes[i]);
      for (size_t p = 0; p < k; ++p) raw[p].push_back({snapr.node(rep.nodes[i]).name, rep.raw[i * k + p]});
    }
  }
  std::vector<std::vector<fw::node_score>> raw_copy;
  if (st.opts.explain) raw_copy = raw;
  std::vector<int64_t> totals;
  auto s = fwk.normalize_and_weigh(*pc->state, *pc->queued->pod, raw, totals);
  if (!s.is_success()) {
    fail_unschedulable(self, pc, fw::status::error(s.message()), "");
    return;
  }
  if (k == 0) totals.assign(nodes.size(), 1);  // kube: with no score plugins every node scores 1
  st.observe(pc->fwk.get(), driver_state::score, true, (std::chrono::steady_clock::now() - pc->phase_start).count(),
             *pc->queued->pod);
  size_t best = fw::select_host(totals, st.rng);
  if (st.opts.explain) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      explain_record::score_row row;
      row.node = snapr.node(nodes[i]).name;
      for (size_t p = 0; p < k; ++p)
        row.plugins.emplace_back(std::string(fwk.score_plugin_name(p)), raw_copy[p][i].score, raw[p][i].score,
                                 raw[p][i].score * fwk.score_weight(p));
      row.total = totals[i];
      pc->explain.scores.push_back(std::move(row));
    }
  }
  reserve(self, pc, nodes[best]);
}

void reserve(self_ptr self, pod_cycle_ptr pc, uint32_t node_index) {
  auto& st = self->state;
  const node_info& node = pc->snap->node(node_index);
  assume_request req;
  req.fwk = pc->fwk;
  req.pod = pc->queued->pod;
  req.state = pc->state;
  req.node = node.name;
  req.node_generation = node.generation;
  req.snapshot_generation = pc->snap->generation();
  req.global = pc->fwk->needs_global_validation(*pc->state);
  if (st.opts.explain) pc->explain.selected = node.name;
  if (auto* m = st.wiring->metrics.get())
    m->scheduling_algorithm_duration.observe_duration(std::chrono::steady_clock::now() - pc->started);
  self->request(st.wiring->cache, caf::infinite, assume_atom::value, std::move(req))
    .then([=](assume_reply& rep) {
      auto& st = self->state;
      auto& p = *st.wiring;
      auto probe_scope = st.probe->begin_handler(self);
      if (!rep.ok) {
        if (rep.conflict) {
          // Optimistic validation lost a race: retry at once on a newer snapshot, no backoff.
          st.conflicts++;
          begin(self, pc->queued);
          return;
        }
        fail_unschedulable(self, pc, fw::status::error(rep.message), "");
        return;
      }
      st.nominations.erase(pc->queued->pod->uid);
      if (st.opts.explain) self->send(p.recorder, record_atom::value, std::move(pc->explain));
      auto ctx = std::make_shared<cycle_ctx>();
      ctx->fwk = pc->fwk;
      ctx->queued = pc->queued;
      ctx->assumed = rep.assumed;
      ctx->node = rep.assumed->node_name;
      ctx->state = std::move(*pc->state);
      ctx->cycle = pc->cycle;
      ctx->started = pc->started;
      auto t0 = std::chrono::steady_clock::now();
      auto s = ctx->fwk->run_reserve(ctx->state, *ctx->assumed, ctx->node);
      auto t1 = std::chrono::steady_clock::now();
      st.observe(ctx->fwk.get(), driver_state::reserve, s.is_success(), (t1 - t0).count(), *ctx->assumed);
      if (!s.is_success()) {
        abort_reserved(self, p, *ctx, s, s.message());
        finish_cycle(self);
        return;
      }
      s = ctx->fwk->run_permit(ctx->state, *ctx->assumed, ctx->node, ctx->permit_waits);
      st.observe(ctx->fwk.get(), driver_state::permit, s.is_success() || s.is_wait(),
                 (std::chrono::steady_clock::now() - t1).count(), *ctx->assumed);
      if (s.is_wait()) {
        self->send(p.permit, wait_atom::value, ctx);
      } else if (!s.is_success()) {
        abort_reserved(self, p, *ctx, s, s.message());
      } else {
        self->send(p.binders[st.next_binder++ % p.binders.size()], bind_atom::value, ctx);
      }
      finish_cycle(self);
    });
}

}  // namespace

driver_actor spawn_cycle_driver(caf::actor_system& sys, std::vector<fw::framework_ptr> frameworks,
                                const driver_options& opts, std::shared_ptr<const pipeline> wiring) {
  return sys.spawn([frameworks, opts, wiring](self_ptr self) -> driver_actor::behavior_type {
    for (auto& f : frameworks) self->state.frameworks.emplace(f->scheduler_name(), f);
    self->state.wiring = wiring;
    self->state.opts = opts;
    self->state.rng.seed(opts.seed);
    self->state.probe = make_probe(*wiring, "cycle_driver-0");
    if (auto* m = wiring->metrics.get()) {
      for (auto& f : frameworks) {
        auto& row = self->state.ep[f.get()];
        for (size_t i = 0; i < driver_state::points; ++i)
          for (size_t ok = 0; ok < 2; ++ok)
            row[i][ok] = &m->framework_extension_point_duration.histogram_series(
              {driver_state::point_names[i], ok == 0 ? "Success" : "Unschedulable", f->scheduler_name()});
      }
    }
    return {
      [=](start_atom) { pull(self); },
    };
  });
}

}  // namespace kas

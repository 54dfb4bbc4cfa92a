// `simulate`: replay manifests through the whole actor pipeline in an embedded cluster and print
// where each pending pod landed, or why it did not.
#include <chrono>
#include <iostream>
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/app/cli.hpp"
#include "actors/app/json_writer.hpp"
#include "actors/app/metrics_endpoint.hpp"
#include "actors/app/run_setup.hpp"
#include "actors/group_members.hpp"
#include "actors/embedded_cluster.hpp"
#include "actors/scheduler.hpp"
#include "config/cluster_manifests.hpp"
#include "config/runtime_config.hpp"
#include "plugins/framework/runtime/profile_resolver.hpp"

namespace kas {

namespace {

// A pending pod for another scheduler.
constexpr const char* skipped_status = "Skipped";

struct pod_result {
  pod_info_ptr pod;
  pod_outcome outcome;
  std::optional<explain_record> explain;
};

// What --explain-top N keeps of a pod's record: the N best scored nodes, and the filter verdicts of
// N nodes: the selected one, then the scored ones best first, then the rest in examination order.
explain_record top_nodes(explain_record e, size_t n) {
  if (n == 0) return e;
  std::stable_sort(e.scores.begin(), e.scores.end(), [](auto& a, auto& b) { return a.total > b.total; });
  std::unordered_map<std::string, size_t> rank;
  rank[e.selected] = 0;
  for (size_t i = 0; i < e.scores.size(); ++i) rank.emplace(e.scores[i].node, i + 1);
  auto rank_of = [&](const std::string& node) {
    auto it = rank.find(node);
    return it == rank.end() ? e.scores.size() + 1 : it->second;
  };
  std::stable_sort(e.filters.begin(), e.filters.end(),
                   [&](auto& a, auto& b) { return rank_of(a.first) < rank_of(b.first); });
  if (e.scores.size() > n) e.scores.resize(n);
  if (e.filters.size() > n) e.filters.resize(n);
  return e;
}

// Events the cluster holds, by reason, counting each aggregated Event's occurrences (its count).
using event_counts = std::map<std::string, int64_t>;

void print_json(const std::vector<pod_result>& rows, const cluster_input& in, double seconds,
                const event_counts& events) {
  json_writer w;
  w.begin_object().key("pods").begin_array();
  size_t scheduled = 0, unschedulable = 0, errors = 0, preempted = 0, skipped = 0;
  for (auto& r : rows) {
    w.begin_object();
    w.key("namespace").value(r.pod->ns).key("name").value(r.pod->name);
    w.key("node");
    if (r.outcome.node.empty()) w.null(); else w.value(r.outcome.node);
    w.key("status").value(r.outcome.status);
    w.key("message").value(r.outcome.status == "Scheduled" ? std::string{} : r.outcome.message);
    w.key("attempts").value(static_cast<int64_t>(r.outcome.attempts));
    if (r.explain) {
      w.key("explain").begin_object();
      w.key("filters").begin_object();
      for (auto& [node, verdicts] : r.explain->filters) {
        w.key(node).begin_object();
        for (auto& [plugin, verdict] : verdicts) w.key(plugin).value(verdict);
        w.end_object();
      }
      w.end_object();
      w.key("scores").begin_array();
      for (auto& row : r.explain->scores) {
        w.begin_object().key("node").value(row.node).key("plugins").begin_array();
        for (auto& [plugin, raw, norm, weighted] : row.plugins)
          w.begin_object()
            .key("plugin").value(plugin)
            .key("raw").value(raw)
            .key("normalized").value(norm)
            .key("weighted").value(weighted)
            .end_object();
        w.end_array().key("total").value(row.total).end_object();
      }
      w.end_array();
      w.key("selected");
      if (r.explain->selected.empty()) w.null(); else w.value(r.explain->selected);
      w.end_object();
    }
    w.end_object();
    if (r.outcome.status == "Scheduled") ++scheduled;
    else if (r.outcome.status == "Error") ++errors;
    else if (r.outcome.status == "Preempted") ++preempted;
    else if (r.outcome.status == skipped_status) ++skipped;
    else ++unschedulable;
  }
  w.end_array();
  // What the manifests carried that was not used: unknown fields, kinds the scheduler skips.
  w.key("warnings").begin_array();
  for (auto& warning : in.warnings) w.value(warning);
  w.end_array();
  w.key("summary").begin_object();
  w.key("nodes").value(static_cast<int64_t>(in.nodes.size()));
  w.key("pods").value(static_cast<int64_t>(rows.size()));
  w.key("scheduled").value(static_cast<int64_t>(scheduled));
  w.key("unschedulable").value(static_cast<int64_t>(unschedulable));
  w.key("errors").value(static_cast<int64_t>(errors));
  w.key("preempted").value(static_cast<int64_t>(preempted));
  w.key("skipped").value(static_cast<int64_t>(skipped));
  w.key("existing").value(static_cast<int64_t>(in.bound_pods.size()));
  w.key("seconds").value(seconds);
  w.key("events").begin_object();
  for (auto& [reason, n] : events) w.key(reason).value(n);
  w.end_object();
  w.end_object().end_object();
  std::cout << w.str() << "\n";
}

void print_table(const std::vector<pod_result>& rows, const cluster_input& in, double seconds) {
  size_t scheduled = 0, preempted = 0, skipped = 0;
  std::printf("%-16s %-32s %-14s %-20s %s\n", "NAMESPACE", "NAME", "STATUS", "NODE", "MESSAGE");
  for (auto& r : rows) {
    if (r.outcome.status == "Scheduled") ++scheduled;
    if (r.outcome.status == "Preempted") ++preempted;
    if (r.outcome.status == skipped_status) ++skipped;
    std::printf("%-16s %-32s %-14s %-20s %s\n", r.pod->ns.c_str(), r.pod->name.c_str(), r.outcome.status.c_str(),
                r.outcome.node.empty() ? "<none>" : r.outcome.node.c_str(),
                r.outcome.status == "Scheduled" ? "" : r.outcome.message.c_str());
    if (r.explain) {
      for (auto& [node, verdicts] : r.explain->filters) {
        std::printf("    filter %-20s", node.c_str());
        for (auto& [plugin, verdict] : verdicts) std::printf(" %s=%s", plugin.c_str(), verdict.c_str());
        std::printf("\n");
      }
      for (auto& row : r.explain->scores) {
        std::printf("    score  %-20s total=%lld  (plugin=raw/normalized/weighted)", row.node.c_str(),
                    static_cast<long long>(row.total));
        for (auto& [plugin, raw, norm, weighted] : row.plugins)
          std::printf(" %s=%lld/%lld/%lld", plugin.c_str(), static_cast<long long>(raw), static_cast<long long>(norm),
                      static_cast<long long>(weighted));
        std::printf("\n");
      }
    }
  }
  std::printf(
    "\n%zu nodes, %zu existing pods, %zu reported: %zu scheduled, %zu preempted, %zu not scheduled, %zu skipped (%.3f s)\n",
    in.nodes.size(), in.bound_pods.size(), rows.size(), scheduled, preempted, rows.size() - scheduled - preempted - skipped,
    skipped, seconds);
}

// What a finished run left behind: every pod's latest outcome, the --explain records, the
// preemption victims (the cluster's "Preempted" Events, one per evicted pod) and the Event counts.
struct run_results {
  std::vector<pod_outcome> outcomes;
  std::vector<explain_record> explains;
  std::unordered_map<std::string, cluster_event_record> preempted;
  event_counts events{{"Scheduled", 0}, {"FailedScheduling", 0}};
  int rc = 0;
};

// Waits until the queue is quiescent, then reads the results. False when a core actor died: the
// wait for quiescence would never end, and the run ends (exit 3).
bool collect_results(caf::actor_system& sys, caf::scoped_actor& self, const scheduler_instance& sched,
                     const cluster_actor& cluster, bool explain, run_results& res) {
  auto fail = [&](caf::error& e) { res.rc = 1, std::cerr << "error: " << sys.render(e) << "\n"; };
  self->send(sched.supervisor, watch_atom::value);
  if (await_reply(self, sched.wiring->queue, [&](queue_stats) {}, fail, done_atom::value)) return false;
  self->request(sched.wiring->recorder, caf::infinite, outcomes_atom::value)
    .receive([&](std::vector<pod_outcome>& o) { res.outcomes = std::move(o); }, fail);
  self->request(cluster, caf::infinite, list_atom::value, cluster_event_record{})
    .receive(
      [&](std::vector<cluster_event_record>& evs) {
        for (auto& ev : evs) {
          res.events[ev.reason] += ev.count;
          if (ev.reason == "Preempted") res.preempted[ev.pod_uid] = std::move(ev);
        }
      },
      fail);
  if (explain)
    self->request(sched.wiring->recorder, caf::infinite, outcomes_atom::value, explain_record{})
      .receive([&](std::vector<explain_record>& e) { res.explains = std::move(e); }, fail);
  return true;
}

// The outcome of a pending pod that was never popped: another scheduler's pod (Skipped, as
// kube-scheduler ignores a pod whose schedulerName matches none of its profiles: it is neither
// attempted nor unschedulable), or one held by PreEnqueue (SchedulingGates).
pod_outcome never_popped(const scheduler_instance& sched, const pod_info& p, const fw::group_directory& groups) {
  pod_outcome o;
  o.uid = p.uid;
  const fw::framework* fwk = nullptr;
  for (auto& f : sched.frameworks)
    if (f->scheduler_name() == p.scheduler_name) fwk = f.get();
  if (!fwk) {
    o.status = skipped_status;
    o.message = "schedulerName \"" + p.scheduler_name + "\" matches no profile; left to another scheduler";
    return o;
  }
  // Its PreEnqueue status is the reason, e.g. "waiting for scheduling gates: [example.com/quota-check]".
  auto s = fwk->run_pre_enqueue(p, groups);
  o.status = "Unschedulable";
  o.message = s.is_success() ? "not scheduled" : s.message();
  return o;
}

// One row per pending pod, and one per existing pod that was preempted. A victim reports
// "Preempted", the node it was evicted from and the Event message: a pending pod scheduled earlier
// in the run in place of "Scheduled", an existing pod as an extra row.
std::vector<pod_result> build_rows(const cluster_input& in, const scheduler_instance& sched, const run_results& res,
                                   const simulate_args& args) {
  std::unordered_map<std::string, pod_outcome> by_uid;
  for (auto& o : res.outcomes) by_uid[o.uid] = o;
  std::unordered_map<std::string, const explain_record*> explain_by_pod;
  for (auto& e : res.explains) explain_by_pod[e.pod_key] = &e;  // the last attempt wins
  auto preempted = [&](pod_result& r) {
    auto it = res.preempted.find(r.pod->uid);
    if (it == res.preempted.end()) return false;
    r.outcome.status = "Preempted";
    r.outcome.node = it->second.node;
    r.outcome.message = it->second.message;
    return true;
  };
  // The pod groups as the queue saw them, for the PreEnqueue reasons of pods never popped.
  group_members groups;
  groups.set_objects(in.objects);
  for (auto* list : {&in.bound_pods, &in.pending_pods})
    for (auto& p : *list) groups.track(nullptr, p.get());
  std::vector<pod_result> rows;
  for (auto& p : in.pending_pods) {
    pod_result r;
    r.pod = p;
    auto it = by_uid.find(p->uid);
    if (it != by_uid.end()) {
      r.outcome = it->second;
    } else {
      r.outcome = never_popped(sched, *p, groups);
    }
    auto key = p->ns + "/" + p->name;
    auto e = explain_by_pod.find(key);
    if (e != explain_by_pod.end() && (args.explain_pod.empty() || args.explain_pod == key))
      r.explain = top_nodes(*e->second, args.explain_top);
    preempted(r);
    rows.push_back(std::move(r));
  }
  for (auto& p : in.bound_pods) {
    pod_result r;
    r.pod = p;
    r.outcome.uid = p->uid;
    if (preempted(r)) rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

int run_simulate(const simulate_args& args) {
  if (args.clusters.empty()) {
    std::cerr << "error: simulate needs at least one --cluster FILE\n";
    return 2;
  }
  auto cfg = load_run_config(args.output, args.config);
  if (!cfg) return 2;
  if (auto w = apply_metrics_recording(cfg->runtime.record_metrics, args.metrics_bind_address, args.config); !w.empty())
    std::cerr << "warning: " << w << "\n";
  manifest_options mopts;
  mopts.strict = args.strict;
  auto manifests = load_manifests(args.clusters, mopts);
  if (!manifests) {
    std::cerr << "error: " << manifests.err().message << "\n";
    return 2;
  }
  auto input = compile_cluster(*manifests);
  if (!input) {
    std::cerr << "error: " << input.err().message << "\n";
    return 2;
  }
  for (auto& w : input->warnings) std::cerr << "warning: " << w << "\n";

  auto t0 = std::chrono::steady_clock::now();
  caf::actor_system_config sys_cfg;
  sys_cfg.set("scheduler.max-threads", static_cast<size_t>(cfg->runtime.threads));
  sys_cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{sys_cfg};

  cluster_options copts;
  copts.node_agents = cfg->runtime.node_agents;
  auto cluster = spawn_embedded_cluster(sys, copts);
  // The cluster holds everything before the scheduler starts, as a replayed dump would: the
  // scheduler's initial list then sees every pending pod, and QueueSort decides the order.
  caf::anon_send(cluster, create_atom::value, input->objects);
  for (auto& n : input->nodes) caf::anon_send(cluster, create_atom::value, node_info_ptr(n));
  for (auto& p : input->bound_pods) caf::anon_send(cluster, create_atom::value, p);
  for (auto& p : input->pending_pods) caf::anon_send(cluster, create_atom::value, p);

  scheduler_options sopts;
  sopts.profiles = cfg->profiles;
  sopts.runtime = cfg->runtime;
  // Exact kube-scheduler placements need strictly serial scheduling cycles (see runtime_config).
  if (!sopts.runtime.pipeline_depth_set) sopts.runtime.pipeline_depth = 1;
  sopts.explain = args.explain;
  sopts.skip_idle_backoff = true;
  auto served = start_served_scheduler(sys, sopts, cluster, args.metrics_bind_address);
  if (!served) {
    std::cerr << "error: " << served.err().message << "\n";
    caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
    return 2;
  }
  scheduler_instance* sched = &served->sched;
  auto& endpoint = served->endpoint;

  caf::scoped_actor self{sys};
  run_results res;
  collect_results(sys, self, *sched, cluster, args.explain, res);  // false after a death: see below
  int rc = res.rc;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (endpoint) endpoint->stop();
  stop_scheduler(*sched);
  caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
  sys.await_actors_before_shutdown(false);
  if (auto f = sched->health->first_failure()) {
    report_actor_death(*f);
    return actor_died_exit_code;
  }
  if (rc != 0) return rc;

  auto rows = build_rows(*input, *sched, res, args);
  if (args.output == "json") print_json(rows, *input, seconds, res.events);
  else print_table(rows, *input, seconds);
  std::fflush(stdout);
  if (args.fail_on_unschedulable) {
    size_t pending = 0;
    for (auto& r : rows) pending += r.outcome.status == "Unschedulable" || r.outcome.status == "Error";
    if (pending) {
      std::cerr << "error: " << pending << " pod(s) not scheduled (--fail-on-unschedulable)\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace kas

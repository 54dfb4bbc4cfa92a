// `run`: schedule a real cluster through its apiserver. The api_cluster source lists and watches
// it, the scheduler binds through it, and the process lives until SIGTERM or SIGINT.
#include <unistd.h>

#include <csignal>
#include <future>
#include <cstdlib>
#include <iostream>
#include <thread>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/api_cluster.hpp"
#include "actors/app/cli.hpp"
#include "actors/app/metrics_endpoint.hpp"
#include "actors/app/run_setup.hpp"
#include "actors/app/secure_serving.hpp"
#include "actors/leader_elector.hpp"
#include "actors/scheduler.hpp"
#include "client/api_requests.hpp"
#include "config/go_duration.hpp"

namespace kas {

namespace {

// The connection: kube-scheduler ignores its deprecated --kubeconfig flag when --config is given
// (the file's clientConnection.kubeconfig counts, or in-cluster config when it is empty); --master
// overrides the server either way.
result<connection_config> connection_for(const run_args& args, const scheduler_config& cfg) {
  std::string flag = args.kubeconfig;
  if (!args.config.empty() && !flag.empty()) {
    std::cerr << "warning: --kubeconfig is ignored because --config is given (as kube-scheduler does); set "
                 "clientConnection.kubeconfig in "
              << args.config << "\n";
    flag.clear();
  }
  return resolve_connection(flag, cfg.kube.client_connection.kubeconfig, args.master, args.context,
                            [](const char* name) { return std::getenv(name); });
}

result<api_cluster_options> source_options(const run_args& args, const scheduler_config& cfg) {
  auto conn = connection_for(args, cfg);
  if (!conn) return conn.err();
  api_cluster_options o;
  o.connection = std::move(*conn);
  const auto& cc = cfg.kube.client_connection;
  if (cc.qps_set) o.transport.qps = cc.qps;
  if (cc.burst_set) o.transport.burst = cc.burst;
  auto enc = api::encoding_of(cc.content_type);
  if (!enc)
    return error{"clientConnection.contentType: Unsupported value: \"" + cc.content_type +
                 "\": supported values: \"application/vnd.kubernetes.protobuf\", \"application/json\""};
  o.encoding = *enc;
  return o;
}

// The --leader-elect* flags over the config file's leaderElection (kube-scheduler's
// ApplyLeaderElectionTo: only the flags given), then the durations parsed and the whole validated.
status_or_error apply_leader_election_flags(const run_args& a, leader_election_config& le) {
  if (a.leader_elect) le.leader_elect = *a.leader_elect;
  std::pair<const char*, std::pair<const std::optional<std::string>*, std::string*>> durations[] = {
    {"--leader-elect-lease-duration", {&a.lease_duration, &le.lease_duration}},
    {"--leader-elect-renew-deadline", {&a.renew_deadline, &le.renew_deadline}},
    {"--leader-elect-retry-period", {&a.retry_period, &le.retry_period}}};
  for (auto& [flag, f] : durations) {
    if (!*f.first) continue;
    if (auto d = parse_go_duration(**f.first); !d)
      return error{std::string(flag) + ": invalid argument \"" + **f.first + "\": " + d.err().message};
    *f.second = **f.first;
  }
  if (a.resource_lock) le.resource_lock = *a.resource_lock;
  if (a.resource_name) le.resource_name = *a.resource_name;
  if (a.resource_namespace) le.resource_namespace = *a.resource_namespace;
  return resolve_leader_election(le);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

// One GET /version before anything starts. Credentials the apiserver refuses (a CA that does not
// verify it, a certificate or token it rejects) will not get better by retrying: they end the run
// with exit code 2 and the reason. An apiserver that cannot be reached yet only warns: the
// informers retry with backoff, and /readyz stays false until they have listed.
int preflight(const api_cluster_options& o) {
  auto t = api::http_transport::create(o.connection, o.transport);
  if (!t) {
    std::cerr << "error: " << t.err().message << "\n";
    return 2;
  }
  std::promise<api::http_response> done;
  auto answer = done.get_future();
  api::http_request req;
  req.path = "/version";
  req.accept = "application/json";
  req.timeout = std::chrono::seconds(30);
  (*t)->start(std::move(req), {nullptr, nullptr, [&done](api::http_response r) { done.set_value(std::move(r)); }});
  auto r = answer.get();
  bool tls = r.error.find("certificate") != std::string::npos || r.error.find("SSL") != std::string::npos;
  if (tls) {
    std::cerr << "error: TLS with " << o.connection.server << " failed (" << o.connection.source << "): " << r.error
              << "\n";
    return 2;
  }
  if (r.status == 401 || r.status == 403) {
    std::cerr << "error: " << o.connection.server << " refused the credentials of " << o.connection.source << ": "
              << api::describe_failure(r) << "\n";
    return 2;
  }
  if (!r.ok()) spdlog::warn("run: {} is not answering yet ({}); the informers will retry", o.connection.server,
                            r.error.empty() ? api::describe_failure(r) : r.error);
  return 0;
}

// SIGUSR2, as kube-scheduler's cache debugger: the cache's nodes and the pods on each, in the
// snapshot the scheduler currently schedules against, as one log entry.
void dump_cache(caf::actor_system& sys, const scheduler_instance& sched) {
  caf::scoped_actor self{sys};
  self->request(sched.wiring->cache, std::chrono::seconds(10), snap_atom::value)
    .receive(
      [&](const snapshot_ptr& snap) {
        std::string out = "Dump of cached NodeInfo\n";
        for (size_t i = 0; i < snap->size(); ++i) {
          const node_info& n = snap->node(i);
          out += "Node name: " + n.name + "\nDeleted: " + (n.node ? "false" : "true") +
                 "\nScheduled Pods(number: " + std::to_string(n.pods.size()) + "):\n";
          for (const auto& p : n.pods)
            out += "name: " + p->name + ", namespace: " + p->ns + ", uid: " + p->uid + ", phase: " + p->phase +
                   ", nominated node: " + p->nominated_node_name + "\n";
        }
        out += "Dump of cached NodeInfo ends";
        spdlog::info("{}", out);
      },
      [&](caf::error& e) { spdlog::error("run: the cache did not answer the dump request: {}", sys.render(e)); });
}

// The exit code of a lost Lease (kube-scheduler: "Leaderelection lost", exit 1).
constexpr int lease_lost_exit_code = 1;

// Blocks until SIGTERM/SIGINT (0), a core actor's death (actor_died_exit_code) or the loss of the
// Lease (lease_lost_exit_code); dumps the cache on SIGUSR2.
int wait_for_stop(caf::actor_system& sys, const scheduler_instance& sched, const sigset_t& signals,
                  const leader_status* leader) {
  for (;;) {
    timespec tick{0, 200 * 1000 * 1000};
    int sig = sigtimedwait(&signals, nullptr, &tick);
    if (sig == SIGUSR2) dump_cache(sys, sched);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("run: {} received, stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      return 0;
    }
    if (leader && leader->lost.load()) return lease_lost_exit_code;
    if (sched.health->first_failure()) return actor_died_exit_code;
  }
}

// SIGTERM's last step while leading: release the Lease (kube-scheduler's ReleaseOnCancel), so a
// standby takes over at its next poll instead of after leaseDuration.
void release_lease(caf::actor_system& sys, const caf::actor& elector, std::chrono::milliseconds limit) {
  caf::scoped_actor self{sys};
  self->request(elector, limit, release_atom::value)
    .receive([](bool) {},
             [&](caf::error& e) { spdlog::warn("leaderelection: releasing the lease: {}", sys.render(e)); });
}

// Stop popping (the cycle drivers go), then let the writes in flight finish, at most 30 s.
void drain(caf::actor_system& sys, const scheduler_instance& sched, const cluster_actor& cluster) {
  sched.health->begin_stop();  // these exits are the shutdown, not failures
  for (auto& d : sched.drivers) caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  caf::scoped_actor self{sys};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  size_t in_flight = 1;
  while (in_flight > 0 && std::chrono::steady_clock::now() < deadline) {
    self->request(cluster, std::chrono::seconds(5), stats_atom::value)
      .receive([&](const cluster_stats& s) { in_flight = s.writes_in_flight; }, [&](caf::error&) { in_flight = 0; });
    if (in_flight > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (in_flight > 0) spdlog::warn("run: {} API writes still in flight after 30 s; stopping anyway", in_flight);
}

}  // namespace

int run_cluster(const run_args& args) {
  // A long-running component logs its informational lines (kube-scheduler's -v 0: start, sync, the
  // cache dump) where the batch commands stay quiet below -v 2.
  if (spdlog::get_level() == spdlog::level::warn) spdlog::set_level(spdlog::level::info);
  auto cfg = load_run_config("table", args.config);
  if (!cfg) return 2;
  auto src = source_options(args, *cfg);
  if (!src) {
    std::cerr << "error: " << src.err().message << "\n";
    return 2;
  }
  auto& le = cfg->kube.leader_election;
  if (auto st = apply_leader_election_flags(args, le); !st) {
    std::cerr << "error: " << (args.config.empty() ? "" : args.config + ": ") << st.err().message << "\n";
    return 2;
  }
  // Secure serving's flags and certificate are checked before anything starts (no thread yet).
  auto secure = secure_serving::prepare(args.secure, src->connection);
  if (!secure) {
    std::cerr << "error: " << secure.err().message << "\n";
    return 2;
  }
  if (int rc = preflight(*src); rc != 0) return rc;
  if (auto w = apply_metrics_recording(cfg->runtime.record_metrics, args.metrics_bind_address, args.config); !w.empty())
    std::cerr << "warning: " << w << "\n";
  // Signals are taken by sigwait in this thread only: block them before any other thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  caf::actor_system_config sys_cfg;
  sys_cfg.set("scheduler.max-threads", static_cast<size_t>(cfg->runtime.threads));
  sys_cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{sys_cfg};
  auto cluster = spawn_api_cluster(sys, *src);
  if (!cluster) {
    std::cerr << "error: " << cluster.err().message << "\n";
    return 2;
  }
  scheduler_options sopts;
  sopts.profiles = cfg->profiles;
  sopts.runtime = cfg->runtime;
  // With leader election the informers, cache and queue start now, so a takeover is fast; the
  // drivers pop only once this process leads.
  sopts.hold_scheduling = le.leader_elect;
  auto leader = std::make_shared<leader_status>();
  auto lease_duration = std::chrono::duration_cast<std::chrono::milliseconds>(le.lease_duration_ns);
  std::function<std::vector<obs::health_check>()> election_check;
  if (le.leader_elect)
    election_check = [leader, lease_duration] { return std::vector<obs::health_check>{leader_election_check(*leader, lease_duration)}; };
  auto served = start_served_scheduler(sys, sopts, *cluster, args.metrics_bind_address, "api_cluster",
                                       election_check);
  if (!served) {
    std::cerr << "error: " << served.err().message << "\n";
    caf::anon_send_exit(*cluster, caf::exit_reason::user_shutdown);
    return 2;
  }
  if (*secure) {
    if (auto st = (*secure)->start(caches_synced(served->sched.wiring->synced),
                                   liveness(served->sched.health, election_check));
        !st) {
      std::cerr << "error: " << st.err().message << "\n";
      stop_scheduler(served->sched);
      caf::anon_send_exit(*cluster, caf::exit_reason::user_shutdown);
      return 2;
    }
  }
  caf::actor elector;
  if (le.leader_elect) {
    leader_elector_options eo;
    eo.connection = src->connection;
    eo.transport = src->transport;
    eo.encoding = src->encoding;
    eo.lock = {le.resource_namespace, le.resource_name};
    eo.identity = api::leader_identity(host_name());
    eo.name = le.resource_name;
    eo.lease_duration = lease_duration;
    eo.renew_deadline = std::chrono::duration_cast<std::chrono::milliseconds>(le.renew_deadline_ns);
    eo.retry_period = std::chrono::duration_cast<std::chrono::milliseconds>(le.retry_period_ns);
    scheduler_instance sched = served->sched;
    eo.on_started_leading = [sched] { begin_scheduling(sched); };
    // Losing the Lease stops scheduling at once; the main thread then exits 1.
    eo.on_stopped_leading = [sched](const std::string&) {
      sched.health->begin_stop();
      for (auto& d : sched.drivers) caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
    };
    auto e = spawn_leader_elector(sys, std::move(eo), leader);
    if (!e) {
      std::cerr << "error: " << e.err().message << "\n";
      stop_scheduler(served->sched);
      caf::anon_send_exit(*cluster, caf::exit_reason::user_shutdown);
      return 2;
    }
    elector = *e;
    supervise(served->sched.supervisor, elector, "leader_elector");
  }
  int rc = wait_for_stop(sys, served->sched, signals, le.leader_elect ? leader.get() : nullptr);
  if (rc == lease_lost_exit_code) spdlog::error("run: leaderelection lost");
  if (rc == 0) drain(sys, served->sched, *cluster);
  if (rc == 0 && elector && leader->leading.load())
    release_lease(sys, elector, std::chrono::duration_cast<std::chrono::milliseconds>(le.renew_deadline_ns));
  if (served->endpoint) served->endpoint->stop();
  if (*secure) (*secure)->stop();
  stop_scheduler(served->sched);
  if (elector) caf::anon_send_exit(elector, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(*cluster, caf::exit_reason::user_shutdown);
  sys.await_actors_before_shutdown(false);
  if (auto f = served->sched.health->first_failure(); f && rc != 0) {
    report_actor_death(*f);
    return actor_died_exit_code;
  }
  return rc;
}

}  // namespace kas

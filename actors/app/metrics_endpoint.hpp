#pragma once
// The /metrics, /healthz, /livez and /readyz endpoint of `simulate` and `bench` (and of every
// long-running mode to come), over obs::default_registry().
//
// --metrics-bind-address: simulate and bench are batch runs, so the endpoint is OFF unless the flag
// is given; kube-scheduler's default 127.0.0.1:10259 is for long-running modes. "0" also turns it off.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "actors/scheduler.hpp"
#include "messages/result.hpp"
#include "observability/http_server.hpp"

namespace kas {

// Starts the endpoint on `bind` ("host:port"; "" or "0" = off, returns a null pointer). `ready` is
// called on the server thread for each /readyz, `live` for each /livez and /healthz (empty: always
// ok). Errors name --metrics-bind-address and the value.
result<std::unique_ptr<obs::http_server>> start_metrics_endpoint(
  const std::string& bind, std::function<obs::readiness()> ready,
  std::function<std::vector<obs::health_check>()> live = {});

// A scheduler instance and its endpoint (null when --metrics-bind-address is off).
struct served_scheduler {
  scheduler_instance sched;
  std::unique_ptr<obs::http_server> endpoint;
};
// start_scheduler, then the endpoint on `bind` with readiness = caches synced and liveness = no core
// actor died (and whatever `extra_checks` adds to /healthz and /livez, such as leader election) (the supervisor also watches `cluster`, under `cluster_name`). If the endpoint fails,
// the scheduler is stopped again and the error names the flag. The caller still owns `cluster`.
// Test hook: KAS_TEST_KILL_ACTOR=<name> (e.g. cycle_driver-0) kills that actor once the scheduler
// started, so tests can see what an actor death looks like from outside; never set it otherwise.
result<served_scheduler> start_served_scheduler(caf::actor_system& sys, const scheduler_options& opts,
                                                cluster_actor cluster, const std::string& bind,
                                                const std::string& cluster_name = "embedded_cluster",
                                                std::function<std::vector<obs::health_check>()> extra_checks = {});

// What `simulate` and `bench` do when a core actor died: print "error: actor <name> died: <reason>"
// on stderr; the command then exits with this code.
constexpr int actor_died_exit_code = 3;
void report_actor_death(const actor_failure& f);

// Liveness = the supervisor's checks (ping, one per core actor), then `extra`'s (if any).
std::function<std::vector<obs::health_check>()> liveness(std::shared_ptr<supervision_state> health,
                                                         std::function<std::vector<obs::health_check>()> extra);

// Readiness = the scheduler's caches synced (pipeline::synced, set by the scheduling queue).
std::function<obs::readiness()> caches_synced(std::shared_ptr<const std::atomic<bool>> synced);

// Applies ActorRuntimeConfiguration recordMetrics to the whole process (obs::set_recording); call it
// before any actor starts. Recording off with an endpoint asked for is allowed, since /healthz, /livez
// and /readyz still mean something, but /metrics would serve series frozen at zero: the returned
// warning (empty when there is none) says so, naming `config` (the config file).
std::string apply_metrics_recording(bool record, const std::string& bind, const std::string& config);

// Validates a --metrics-bind-address value at the command line; an error names the flag.
result<bool> check_metrics_bind_address(const std::string& bind);

}  // namespace kas

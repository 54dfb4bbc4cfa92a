#include "actors/app/metrics_endpoint.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "observability/metrics.hpp"
#include "spdlog/spdlog.h"

namespace kas {

result<std::unique_ptr<obs::http_server>> start_metrics_endpoint(
  const std::string& bind, std::function<obs::readiness()> ready,
  std::function<std::vector<obs::health_check>()> live) {
  if (bind.empty()) return std::unique_ptr<obs::http_server>{};
  obs::http_server_config cfg;
  cfg.bind_address = bind;
  cfg.collectables = {&obs::default_registry()};
  cfg.ready = std::move(ready);
  cfg.live = std::move(live);
  // -v 4: every answered request, so a scraper's visits can be followed (and waited for by tests).
  cfg.on_request = [](const std::string& path, int code) {
    spdlog::trace("Served HTTP request path=\"{}\" code=\"{}\"", path, code);
  };
  return obs::http_server::start(std::move(cfg));
}

result<served_scheduler> start_served_scheduler(caf::actor_system& sys, const scheduler_options& opts,
                                                cluster_actor cluster, const std::string& bind,
                                                const std::string& cluster_name,
                                                std::function<std::vector<obs::health_check>()> extra_checks) {
  auto sched = start_scheduler(sys, opts, cluster);
  if (!sched) return sched.err();
  supervise(sched->supervisor, cluster, cluster_name);
  auto health = sched->health;
  auto endpoint =
    start_metrics_endpoint(bind, caches_synced(sched->wiring->synced), liveness(health, std::move(extra_checks)));
  if (!endpoint) {
    stop_scheduler(*sched);
    return endpoint.err();
  }
  if (const char* victim = std::getenv("KAS_TEST_KILL_ACTOR"); victim && *victim) {
    auto actors = core_actors(*sched);
    actors.emplace_back(cluster_name, caf::actor_cast<caf::actor>(cluster));
    bool found = false;
    for (auto& [name, a] : actors)
      if (name == victim) found = true, caf::anon_send_exit(a, caf::exit_reason::kill);
    if (found) spdlog::warn("Test hook KAS_TEST_KILL_ACTOR killed an actor actor=\"{}\"", victim);
    else spdlog::warn("Test hook KAS_TEST_KILL_ACTOR names no actor actor=\"{}\"", victim);
    // The death is the test's premise: wait for the supervisor's word that it recorded it (at most
    // 10 s), so a run that finishes in milliseconds cannot end first and take it for a normal stop.
    if (found) {
      caf::scoped_actor self{sys};
      self->send(sched->supervisor, watch_atom::value);
      self->receive([](died_atom, const std::string&, const std::string&) {},
                    caf::after(std::chrono::seconds(10)) >> [victim] {
                      spdlog::error("Test hook KAS_TEST_KILL_ACTOR: no death of \"{}\" reported in 10 s", victim);
                    });
    }
  }
  return served_scheduler{std::move(*sched), std::move(*endpoint)};
}

void report_actor_death(const actor_failure& f) {
  std::cerr << "error: actor " << f.actor << " died: " << f.reason << "\n";
}

std::function<std::vector<obs::health_check>()> liveness(std::shared_ptr<supervision_state> health,
                                                         std::function<std::vector<obs::health_check>()> extra) {
  return [health = std::move(health), extra = std::move(extra)] {
    auto checks = health->checks();
    if (extra)
      for (auto& c : extra()) checks.push_back(std::move(c));
    return checks;
  };
}

std::function<obs::readiness()> caches_synced(std::shared_ptr<const std::atomic<bool>> synced) {
  return [synced = std::move(synced)]() -> obs::readiness {
    if (synced && synced->load(std::memory_order_acquire)) return {};
    return {false, "caches not synced"};
  };
}

std::string apply_metrics_recording(bool record, const std::string& bind, const std::string& config) {
  obs::set_recording(record);
  if (record || bind.empty()) return {};
  return "--metrics-bind-address: " + config +
         " sets recordMetrics: false, so /metrics serves every series at zero (/healthz, /livez and /readyz "
         "still work)";
}

result<bool> check_metrics_bind_address(const std::string& bind) {
  auto r = obs::parse_bind_address(bind, "--metrics-bind-address");
  if (!r) return r.err();
  return r->has_value();
}

}  // namespace kas

#include "actors/scheduler.hpp"

#include "actors/binder.hpp"
#include "actors/event_recorder.hpp"
#include "actors/filter_score_worker.hpp"
#include "actors/permit_coordinator.hpp"

namespace kas {

std::vector<std::pair<std::string, caf::actor>> core_actors(const scheduler_instance& inst) {
  std::vector<std::pair<std::string, caf::actor>> out;
  auto add = [&](std::string name, const auto& h) { out.emplace_back(std::move(name), caf::actor_cast<caf::actor>(h)); };
  auto& w = *inst.wiring;
  add("snapshot_cache", w.cache);
  add("scheduling_queue", w.queue);
  for (size_t i = 0; i < w.workers.size(); ++i) add("filter_score_worker-" + std::to_string(i), w.workers[i]);
  add("permit_coordinator", w.permit);
  for (size_t i = 0; i < w.binders.size(); ++i) add("binder-" + std::to_string(i), w.binders[i]);
  add("event_recorder", w.recorder);
  for (size_t i = 0; i < inst.drivers.size(); ++i) add("cycle_driver-" + std::to_string(i), inst.drivers[i]);
  return out;
}

void stop_scheduler(const scheduler_instance& inst) {
  if (inst.health) inst.health->begin_stop();
  auto bye = [](const auto& h) { caf::anon_send_exit(h, caf::exit_reason::user_shutdown); };
  for (auto& d : inst.drivers) bye(d);
  auto& w = *inst.wiring;
  bye(w.cache);
  bye(w.queue);
  for (auto& x : w.workers) bye(x);
  bye(w.permit);
  for (auto& b : w.binders) bye(b);
  bye(w.recorder);
  bye(inst.supervisor);
}

result<scheduler_instance> start_scheduler(caf::actor_system& sys, const scheduler_options& opts,
                                           cluster_actor cluster) {
  scheduler_instance inst;
  inst.wiring = std::make_shared<pipeline>();
  inst.client = std::make_shared<embedded_client>(cluster);
  inst.waiting = std::make_shared<permit_handle>(inst.wiring);
  auto& w = *inst.wiring;
  w.registry = opts.metrics ? opts.metrics : &obs::default_registry();
  w.metrics = std::make_shared<obs::kube_metrics>(*w.registry);
  w.plugin_durations = std::make_shared<const plugin_duration_sink>(*w.metrics);
  fw::handle h;
  h.client = inst.client;
  h.waiting = inst.waiting.get();
  h.plugin_metrics = w.plugin_durations.get();
  fw::registry in_tree;
  if (!opts.registry) in_tree = fw::in_tree_registry();
  const fw::registry& reg = opts.registry ? *opts.registry : in_tree;
  for (size_t i = 0; i < opts.profiles.size(); ++i) {
    auto f = fw::framework::build(opts.profiles[i], reg, h, "profiles[" + std::to_string(i) + "]");
    if (!f) return f.err();
    inst.frameworks.push_back(*f);
  }
  if (inst.frameworks.empty()) return error{"no scheduling profile"};

  // Spawn everything, fill the wiring, and only then let messages flow.
  w.cluster = cluster;
  std::vector<std::string> profile_names;
  for (auto& f : inst.frameworks) profile_names.push_back(f->scheduler_name());
  w.series = std::make_shared<const scheduler_series>(*w.registry, *w.metrics, profile_names);
  cache_options copts;
  w.cache = spawn_snapshot_cache(sys, copts, inst.wiring);
  scheduling_queue_options qopts = default_queue_options();
  qopts.queue.initial_backoff = opts.runtime.pod_initial_backoff;
  qopts.queue.max_backoff = opts.runtime.pod_max_backoff;
  qopts.skip_idle_backoff = opts.skip_idle_backoff;
  w.queue = spawn_scheduling_queue(sys, inst.frameworks, qopts, inst.wiring);
  for (uint32_t i = 0; i < std::max<uint32_t>(1, opts.runtime.workers); ++i)
    w.workers.push_back(spawn_filter_score_worker(sys, i + 1, w.registry));
  w.permit = spawn_permit_coordinator(sys, inst.wiring);
  for (uint32_t i = 0; i < std::max<uint32_t>(1, opts.runtime.binders); ++i)
    w.binders.push_back(spawn_binder(sys, inst.wiring, i));
  obs::pool_workers_gauge(*w.registry, "filter_score_worker").set(static_cast<double>(w.workers.size()));
  obs::pool_workers_gauge(*w.registry, "binder").set(static_cast<double>(w.binders.size()));
  w.recorder = spawn_event_recorder(sys, inst.wiring);
  driver_options dopts;
  dopts.pipeline_depth = std::max<uint32_t>(1, opts.runtime.pipeline_depth);
  dopts.explain = opts.explain;
  dopts.batching = opts.runtime.batching;
  inst.drivers.push_back(spawn_cycle_driver(sys, inst.frameworks, dopts, inst.wiring));

  inst.health = std::make_shared<supervision_state>();
  inst.supervisor = spawn_supervisor(sys, inst.health);
  for (auto& [name, a] : core_actors(inst)) supervise(inst.supervisor, a, name);

  caf::anon_send(cluster, watch_atom::value, caf::actor_cast<watcher_actor>(w.cache));
  if (!opts.hold_scheduling) begin_scheduling(inst);
  return inst;
}

void begin_scheduling(const scheduler_instance& inst) {
  for (auto& d : inst.drivers) caf::anon_send(d, start_atom::value);
}

}  // namespace kas

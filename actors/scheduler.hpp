#pragma once
// scheduler: assembles one scheduler instance — builds each profile's framework, spawns the
// snapshot cache, queue, worker pool, cycle driver(s), permit coordinator, binder pool and event
// recorder, wires them, and subscribes the cache to a cluster source.
#include <memory>
#include <vector>

#include "actors/cycle_driver.hpp"
#include "actors/embedded_client.hpp"
#include "actors/handles.hpp"
#include "actors/scheduling_queue.hpp"
#include "actors/snapshot_cache.hpp"
#include "actors/supervisor.hpp"
#include "config/profile.hpp"
#include "config/runtime_config.hpp"

namespace kas {

struct scheduler_options {
  std::vector<profile_config> profiles;
  runtime_config runtime;
  bool explain = false;
  bool skip_idle_backoff = false;  // simulate
  // `run` with leader election: everything starts (the cache lists and watches, the queue fills),
  // but the cycle drivers pop nothing until begin_scheduling, once this process leads.
  bool hold_scheduling = false;
  // The plugin registry to build profiles from; null = fw::in_tree_registry(). Lets tests and
  // out-of-tree builds add plugins. Only read during start_scheduler.
  const fw::registry* registry = nullptr;
  // Where the instance's metrics live; null = obs::default_registry() (what /metrics serves). Tests
  // pass their own so runs do not add up. Must outlive the instance.
  obs::metrics_registry* metrics = nullptr;
};

struct scheduler_instance {
  std::shared_ptr<pipeline> wiring;
  std::vector<fw::framework_ptr> frameworks;
  std::vector<driver_actor> drivers;
  std::shared_ptr<fw::cluster_client> client;
  std::shared_ptr<fw::waiting_pods> waiting;
  // Watches every actor above (and the cluster source, which the owner registers); `health` is what
  // /livez shows and what the owner checks after waiting (see supervisor.hpp).
  supervisor_actor supervisor;
  std::shared_ptr<supervision_state> health;
};

// The instance's core actors under their metric names ("snapshot_cache", "scheduling_queue",
// "filter_score_worker-N", "permit_coordinator", "binder-N", "event_recorder", "cycle_driver-0").
std::vector<std::pair<std::string, caf::actor>> core_actors(const scheduler_instance& inst);

// Builds the frameworks (errors name the profile and plugin) and spawns the actors. The scheduler
// starts watching `cluster` at once and scheduling as soon as pods arrive.
result<scheduler_instance> start_scheduler(caf::actor_system& sys, const scheduler_options& opts,
                                           cluster_actor cluster);

// Lets the cycle drivers of an instance started with hold_scheduling pop pods.
void begin_scheduling(const scheduler_instance& inst);
// Stops every actor of the instance. The supervisor is told first, so these exits are not failures.
void stop_scheduler(const scheduler_instance& inst);

}  // namespace kas

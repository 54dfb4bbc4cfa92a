// See embedded_cluster.hpp. The store (cluster_store) is plain data; this file is the actor around
// it: each handler calls the store and routes the changes it returned to every watcher, under flow
// control (per watcher: a change_coalescer of waiting changes and the changes not yet credited).
#include "actors/embedded_cluster.hpp"

#include <functional>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "actors/cluster_store.hpp"
#include "actors/watch_fanout.hpp"
#include "observability/actor_probe.hpp"
#include "spdlog/spdlog.h"

namespace kas {

namespace {

// A simulated kubelet for a shard of the nodes: like a kubelet, it watches pods whose nodeName is
// one of its nodes, takes each into a pod worker and reports it Running. It never schedules.
struct node_agent_state {
  cluster_actor cluster;
  size_t shard = 0, shards = 1;
  std::unordered_set<std::string> running;  // uids already started
  watch_credit credit;
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "node_agent";
};

using agent_self = watcher_actor::stateful_pointer<node_agent_state>;

void agent_observe(agent_self self, const cluster_change& ch) {
  auto& st = self->state;
  if (ch.type == cluster_event_type::pod_delete) {
    if (ch.old_pod) st.running.erase(ch.old_pod->uid);
    return;
  }
  if (ch.type != cluster_event_type::pod_add && ch.type != cluster_event_type::pod_update) return;
  const auto& p = ch.new_pod;
  if (!p || p->node_name.empty()) return;
  if (std::hash<std::string>{}(p->node_name) % st.shards != st.shard) return;
  if (p->phase == "Running" || p->phase == "Succeeded" || p->phase == "Failed") return;
  if (!st.running.insert(p->uid).second) return;
  self->send(st.cluster, status_atom::value, p->uid, std::string("Running"));
}

watcher_actor::behavior_type node_agent(agent_self self, cluster_actor cluster, size_t shard, size_t shards,
                                        obs::metrics_registry* metrics) {
  self->state.cluster = cluster;
  self->state.shard = shard;
  self->state.shards = shards;
  self->state.probe = std::make_unique<obs::actor_probe>(*metrics, "node_agent-" + std::to_string(shard));
  return {
    [=](event_atom, const cluster_change_batch_ptr& batch) {
      auto probe_scope = self->state.probe->begin_handler(self);
      for (auto& ch : batch->changes) agent_observe(self, *ch);
      self->state.credit.applied(self, *batch);
    },
  };
}

struct cluster_state {
  cluster_store store;
  std::unique_ptr<watch_fanout> watchers;
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "embedded_cluster";
};

using cluster_self = cluster_actor::stateful_pointer<cluster_state>;

// A watcher went down: its watch ends and it gets nothing more. A core watcher's death is the
// supervisor's to report; this says which watch ended and why.
void watcher_down(cluster_self self, const caf::down_msg& dm) {
  if (self->state.watchers->remove(dm.source))
    spdlog::warn("embedded_cluster: a watch ended: {}", self->system().render(dm.reason));
}

void add_watcher(cluster_self self, watcher_actor w, std::vector<cluster_change_ptr> initial) {
  auto handle = w;
  if (!self->state.watchers->add(std::move(w), std::move(initial))) {
    spdlog::warn("embedded_cluster: an actor asked to watch twice; the second watch is ignored");
    return;
  }
  self->monitor(handle);
}

void route(cluster_self self, const std::vector<cluster_change_ptr>& changes) { self->state.watchers->route(changes); }

// Routes an operation's changes and answers with its status.
fw::status finish(cluster_self self, cluster_store::outcome out) {
  route(self, out.changes);
  return out.status;
}

cluster_actor::behavior_type cluster_behavior(cluster_self self) {
  auto begin = [self] { return self->state.probe->begin_handler(self); };
  auto* store = &self->state.store;
  return {
    [=](watch_atom, watcher_actor w) {
      auto probe_scope = begin();
      add_watcher(self, std::move(w), store->list());
    },
    [=](credit_atom, uint64_t n) {
      auto probe_scope = begin();
      self->state.watchers->credited(caf::actor_cast<caf::actor_addr>(self->current_sender()), n);
    },
    [=](create_atom, node_info_ptr n) { auto probe_scope = begin(); finish(self, store->put_node(std::move(n))); },
    [=](create_atom, pod_info_ptr p) { auto probe_scope = begin(); finish(self, store->create_pod(std::move(p))); },
    [=](create_atom, cluster_objects_ptr o) { auto probe_scope = begin(); finish(self, store->set_objects(std::move(o))); },
    [=](delpod_atom, const std::string& uid) {
      auto probe_scope = begin();
      return finish(self, store->delete_pod(uid));
    },
    [=](evict_atom, const std::string& uid, const std::string& message) {
      auto probe_scope = begin();
      return finish(self, store->evict_pod(uid, message));
    },
    [=](nominate_atom, const std::string& uid, const std::string& node) {
      auto probe_scope = begin();
      return finish(self, store->nominate(uid, node));
    },
    [=](delete_atom, const std::string& node) { auto probe_scope = begin(); finish(self, store->remove_node(node)); },
    [=](bind_atom, const std::string& uid, const std::string& node) {
      auto probe_scope = begin();
      return finish(self, store->bind(uid, node));
    },
    [=](status_atom, const std::string& uid, const std::string& phase) {
      auto probe_scope = begin();
      finish(self, store->set_phase(uid, phase));
    },
    [=](record_atom, const cluster_event_record& ev) { auto probe_scope = begin(); store->record_event(ev); },
    [=](status_atom, const std::string& uid, const pod_condition& c) {
      auto probe_scope = begin();
      finish(self, store->set_condition(uid, c));
    },
    [=](list_atom, const cluster_event_record&) { auto probe_scope = begin(); return store->events(); },
    [=](stats_atom) { auto probe_scope = begin(); return store->stats(); },
    [=](list_atom) { auto probe_scope = begin(); return store->pods(); },
    [=](run_atom, const source_task& t) { auto probe_scope = begin(); t.fn(); },
  };
}

}  // namespace

cluster_actor spawn_embedded_cluster(caf::actor_system& sys, const cluster_options& opts) {
  size_t shards = std::max<size_t>(1, opts.node_agents);
  obs::metrics_registry* metrics = opts.metrics ? opts.metrics : &obs::default_registry();
  obs::pool_workers_gauge(*metrics, "node_agent").set(static_cast<double>(shards));
  size_t window = std::max<size_t>(1, opts.watch_window), batch = std::max<size_t>(1, opts.watch_batch);
  size_t fold_after = opts.watch_fold_after;
  return sys.spawn([shards, metrics, window, batch, fold_after](cluster_self self) -> cluster_actor::behavior_type {
    self->state.probe = std::make_unique<obs::actor_probe>(*metrics, "embedded_cluster");
    self->state.watchers = std::make_unique<watch_fanout>(
      fanout_options{window, batch, fold_after},
      [self](const watcher_actor& w, cluster_change_batch_ptr b) { self->send(w, event_atom::value, std::move(b)); });
    self->set_down_handler([self](const caf::down_msg& dm) {
      auto probe_scope = self->state.probe->begin_handler(self);
      watcher_down(self, dm);
    });
    // The node agents (kubelets) are linked: they go down with their cluster. They watch from the
    // start, so they see every pod.
    auto me = caf::actor_cast<cluster_actor>(self);
    for (size_t i = 0; i < shards; ++i)
      add_watcher(self, self->spawn<caf::linked>(node_agent, me, i, shards, metrics), {});
    return cluster_behavior(self);
  });
}

}  // namespace kas

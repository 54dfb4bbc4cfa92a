// See embedded_cluster.hpp. The store (cluster_store) is plain data; this file is the actor around
// it: each handler calls the store and routes the changes it returned to every watcher, under flow
// control (per watcher: a change_coalescer of waiting changes and the changes not yet credited).
#include "actors/embedded_cluster.hpp"

#include <functional>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "actors/cluster_store.hpp"
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

// One watcher: the changes it has not received yet, and how many it received and has not credited.
struct watcher_slot {
  watcher_actor handle;
  change_coalescer pending;
  uint64_t in_flight = 0;
};

struct cluster_state {
  cluster_store store;
  // Watchers by address: a credit message names its watcher by its sender.
  std::unordered_map<caf::actor_addr, watcher_slot> watchers;
  size_t window = 512, batch = 256, fold_after = 32768;
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "embedded_cluster";
};

using cluster_self = cluster_actor::stateful_pointer<cluster_state>;

cluster_change_batch_ptr make_batch(cluster_self self, std::vector<cluster_change_ptr> changes) {
  auto b = std::make_shared<cluster_change_batch>();
  b->changes = std::move(changes);
  b->ack_every = std::max<uint64_t>(1, self->state.window / 4);
  return b;
}

// Sends batches while the watcher has credit.
void pump(cluster_self self, watcher_slot& w) {
  auto& st = self->state;
  while (w.in_flight < st.window && !w.pending.empty()) {
    auto b = make_batch(self, w.pending.take(std::min<uint64_t>(st.batch, st.window - w.in_flight)));
    w.in_flight += b->changes.size();
    self->send(w.handle, event_atom::value, std::move(b));
  }
}

// The sender of the current message applied n more changes.
void credited(cluster_self self, uint64_t n) {
  auto it = self->state.watchers.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  if (it == self->state.watchers.end()) return;
  auto& w = it->second;
  w.in_flight -= std::min(n, w.in_flight);
  pump(self, w);
}

// A watcher went down: its watch ends and it gets nothing more. A core watcher's death is the
// supervisor's to report; this says which watch ended and why.
void watcher_down(cluster_self self, const caf::down_msg& dm) {
  if (self->state.watchers.erase(dm.source))
    spdlog::warn("embedded_cluster: a watch ended: {}", self->system().render(dm.reason));
}

// Queues changes for every watcher, then sends what credit allows.
void route(cluster_self self, const std::vector<cluster_change_ptr>& changes) {
  if (changes.empty()) return;
  auto& st = self->state;
  cluster_change_batch_ptr shared;
  for (auto& [addr, w] : st.watchers) {
    // A watcher that keeps up (credit left, nothing waiting) gets the changes as they are, in one
    // batch object shared by every such watcher: nothing to fold them into, nothing to copy.
    if (w.pending.empty() && w.in_flight + changes.size() <= st.window && changes.size() <= st.batch) {
      if (!shared) shared = make_batch(self, changes);
      w.in_flight += changes.size();
      self->send(w.handle, event_atom::value, shared);
      continue;
    }
    for (auto& ch : changes) w.pending.push(ch);
    pump(self, w);
  }
}

void add_watcher(cluster_self self, watcher_actor w, std::vector<cluster_change_ptr> initial) {
  auto& st = self->state;
  auto addr = w.address();
  if (st.watchers.count(addr)) {
    spdlog::warn("embedded_cluster: an actor asked to watch twice; the second watch is ignored");
    return;
  }
  self->monitor(w);
  auto& slot = st.watchers.emplace(addr, watcher_slot{std::move(w), change_coalescer(st.fold_after), 0}).first->second;
  for (auto& ch : initial) slot.pending.push(std::move(ch));
  pump(self, slot);
}

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
    [=](credit_atom, uint64_t n) { auto probe_scope = begin(); credited(self, n); },
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
    self->state.window = window;
    self->state.batch = batch;
    self->state.fold_after = fold_after;
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

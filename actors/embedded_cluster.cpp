// See embedded_cluster.hpp. The store (cluster_store) is plain data; this file is the actor around
// it: each handler calls the store and routes the changes it returned to every watcher, under flow
// control (per watcher: a change_coalescer of waiting changes and the changes not yet credited).
#include "actors/embedded_cluster.hpp"

#include <functional>
#include <limits>
#include <map>
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

// Collects into `started` the pods this agent starts for `ch`.
void agent_observe(agent_self self, const cluster_change& ch, std::vector<std::string>& started) {
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
  started.push_back(p->uid);
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
      // One report for the pods a batch started, as a kubelet's status manager batches its writes.
      std::vector<std::string> started;
      for (auto& ch : batch->changes) agent_observe(self, *ch, started);
      if (!started.empty()) self->send(self->state.cluster, status_atom::value, std::move(started), std::string("Running"));
      self->state.credit.applied(self, *batch);
    },
  };
}

// Changes go out to the watchers in batches bounded by the cluster's own mailbox, never by a timer:
// a handler's changes wait in `outbox` while more messages are queued (a burst of creates, binds and
// kubelet reports), and leave in one route() once the mailbox is empty or `flush_at` changes wait.
// Under load that is one batch per watcher for many operations instead of one per operation; idle,
// every operation's changes leave at the end of its own handler, as before.
//
// An answer must not overtake the changes its operation made: a binder, or the driver waiting for
// a preemption's deletions to reach the cache (cycle_driver's eviction waiters), relies on "the
// watch event, then the reply". Replies to operations that changed something are therefore held in
// `replies` and delivered right after the flush that sends those changes, in order; read-only
// requests (stats, list) flush first.
struct cluster_state {
  cluster_store store;
  std::unique_ptr<watch_fanout> watchers;
  std::unique_ptr<obs::actor_probe> probe;
  std::vector<cluster_change_ptr> outbox;
  std::vector<std::function<void()>> replies;
  size_t flush_at = 256;
  // PreBinds waiting for their claims to bind, by id (their deadline's timeout_atom names it).
  struct volume_waiter {
    volume_write_ptr write;
    caf::typed_response_promise<fw::status> rp;
  };
  std::map<uint64_t, volume_waiter> volume_waiters;
  uint64_t next_waiter = 0;
  static inline const char* name = "embedded_cluster";
};

using cluster_self = cluster_actor::stateful_pointer<cluster_state>;

// Sends what the handlers since the last flush changed, then the replies held behind it.
void flush(cluster_self self) {
  auto& st = self->state;
  if (!st.outbox.empty()) {
    std::vector<cluster_change_ptr> out;
    out.swap(st.outbox);
    st.watchers->route(out);
  }
  if (st.replies.empty()) return;
  std::vector<std::function<void()>> replies;
  replies.swap(st.replies);
  for (auto& r : replies) r();
}

// Every handler's scope: the actor probe, and at the end the flush when nothing else is queued.
struct handler_scope {
  cluster_self self;
  obs::actor_probe::scope probe;
  handler_scope(cluster_self s) : self(s), probe(s->state.probe->begin_handler(s)) {}
  handler_scope(const handler_scope&) = delete;
  ~handler_scope() {
    if (self->mailbox().empty()) flush(self);
  }
};

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

void route(cluster_self self, const std::vector<cluster_change_ptr>& changes) {
  auto& st = self->state;
  st.outbox.insert(st.outbox.end(), changes.begin(), changes.end());
  if (st.outbox.size() >= st.flush_at) flush(self);
}

// Routes an operation's changes (an operation without a reply).
void finish(cluster_self self, cluster_store::outcome out) { route(self, out.changes); }

// Routes an operation's changes and answers with its status once they went out.
caf::result<fw::status> answer(cluster_self self, cluster_store::outcome out) {
  route(self, out.changes);
  auto& st = self->state;
  if (st.outbox.empty() && st.replies.empty()) return out.status;
  auto rp = self->make_response_promise<fw::status>();
  st.replies.emplace_back([rp, s = std::move(out.status)]() mutable { rp.deliver(std::move(s)); });
  return rp;
}

// After a storage write: answers the PreBinds whose claims are now bound.
void wake_volume_waiters(cluster_self self) {
  auto& st = self->state;
  for (auto it = st.volume_waiters.begin(); it != st.volume_waiters.end();) {
    if (!st.store.claims_bound(it->second.write->ns, it->second.write->wait_for)) {
      ++it;
      continue;
    }
    it->second.rp.deliver(fw::status::ok());
    it = st.volume_waiters.erase(it);
  }
}

caf::result<fw::status> write_volumes(cluster_self self, const volume_write_ptr& w) {
  auto& st = self->state;
  auto out = st.store.write_volumes(w->pvs, w->claims);
  route(self, out.changes);
  if (!out.changes.empty()) wake_volume_waiters(self);
  if (!out.status.is_success() || st.store.claims_bound(w->ns, w->wait_for)) return answer(self, {out.status, {}});
  uint64_t id = ++st.next_waiter;
  auto rp = self->make_response_promise<fw::status>();
  st.volume_waiters.emplace(id, cluster_state::volume_waiter{w, rp});
  self->delayed_send(self, w->timeout, timeout_atom::value, id);
  return rp;
}

cluster_actor::behavior_type cluster_behavior(cluster_self self) {
  auto* store = &self->state.store;
  // Read-only requests send what is waiting first: their answer reflects changes already sent.
  auto read = [self] { flush(self); };
  return {
    [=](watch_atom, watcher_actor w) {
      handler_scope scope{self};
      flush(self);  // the new watcher's initial list must not be followed by changes it already holds
      add_watcher(self, std::move(w), store->list());
    },
    [=](credit_atom, uint64_t n) {
      handler_scope scope{self};
      self->state.watchers->credited(caf::actor_cast<caf::actor_addr>(self->current_sender()), n);
    },
    [=](create_atom, node_info_ptr n) { handler_scope scope{self}; finish(self, store->put_node(std::move(n))); },
    [=](create_atom, pod_info_ptr p) { handler_scope scope{self}; finish(self, store->create_pod(std::move(p))); },
    [=](create_atom, cluster_objects_ptr o) {
      handler_scope scope{self};
      finish(self, store->set_objects(std::move(o)));
      wake_volume_waiters(self);
    },
    [=](create_atom, const volume_change_ptr& ch) {
      handler_scope scope{self};
      finish(self, store->apply_volume(*ch));
      wake_volume_waiters(self);
    },
    [=](bind_atom, const volume_write_ptr& w) {
      handler_scope scope{self};
      return write_volumes(self, w);
    },
    [=](timeout_atom, uint64_t id) {
      handler_scope scope{self};
      auto it = self->state.volume_waiters.find(id);
      if (it == self->state.volume_waiters.end()) return;
      // kube's BindPodVolumes polls until its bindTimeout; the poll's error is the context's.
      it->second.rp.deliver(fw::status::error("binding volumes: context deadline exceeded"));
      self->state.volume_waiters.erase(it);
    },
    [=](delpod_atom, const std::string& uid) {
      handler_scope scope{self};
      return answer(self, store->delete_pod(uid));
    },
    [=](evict_atom, const std::string& uid, const std::string& message) {
      handler_scope scope{self};
      return answer(self, store->evict_pod(uid, message));
    },
    [=](nominate_atom, const std::string& uid, const std::string& node) {
      handler_scope scope{self};
      return answer(self, store->nominate(uid, node));
    },
    [=](delete_atom, const std::string& node) { handler_scope scope{self}; finish(self, store->remove_node(node)); },
    [=](bind_atom, const std::string& uid, const std::string& node) {
      handler_scope scope{self};
      return answer(self, store->bind(uid, node));
    },
    [=](status_atom, const std::string& uid, const std::string& phase) {
      handler_scope scope{self};
      finish(self, store->set_phase(uid, phase));
    },
    [=](status_atom, const std::vector<std::string>& uids, const std::string& phase) {
      handler_scope scope{self};
      for (auto& uid : uids) finish(self, store->set_phase(uid, phase));
    },
    [=](record_atom, const cluster_event_record& ev) { handler_scope scope{self}; store->record_event(ev); },
    [=](record_atom, const std::vector<cluster_event_record>& evs) {
      handler_scope scope{self};
      for (auto& ev : evs) store->record_event(ev);
    },
    [=](status_atom, const std::string& uid, const pod_condition& c) {
      handler_scope scope{self};
      finish(self, store->set_condition(uid, c));
    },
    [=](list_atom, const cluster_event_record&) { handler_scope scope{self}; read(); return store->events(); },
    [=](stats_atom) { handler_scope scope{self}; read(); return store->stats(); },
    [=](list_atom) { handler_scope scope{self}; read(); return store->pods(); },
    [=](run_atom, const source_task& t) { handler_scope scope{self}; t.fn(); },
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
    self->state.flush_at = batch;
    self->set_down_handler([self](const caf::down_msg& dm) {
      handler_scope scope{self};
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

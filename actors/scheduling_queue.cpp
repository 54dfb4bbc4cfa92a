#include "actors/scheduling_queue.hpp"

#include <array>
#include <map>

namespace kas {

namespace {

struct queue_actor_state {
  std::unique_ptr<queue_state> q;
  scheduling_queue_options opts;
  // Pop requests waiting for pods: (promise, max count).
  std::vector<std::pair<caf::typed_response_promise<std::vector<queued_pod_ptr>>, uint32_t>> waiting;
  // Callers waiting for quiescence: nothing active, in backoff or in flight, after the initial sync.
  std::vector<caf::typed_response_promise<queue_stats>> idle_waiters;
  // Like kube-scheduler's WaitForCacheSync: no pod is handed out before the initial list arrived.
  bool synced = false;

  // Metrics. Series are resolved on first use of a label pair and kept here, so the hot path is a
  // map lookup in actor-owned memory, never a registry lookup.
  std::shared_ptr<const pipeline> wiring;
  std::unique_ptr<obs::actor_probe> probe;
  // queue_incoming_pods_total by queue (0 active, 1 backoff, 2 unschedulable), then event.
  std::array<std::map<std::string, obs::counter*, std::less<>>, 3> incoming;
  // unschedulable_pods by profile, then plugin.
  std::map<std::string, std::map<std::string, obs::gauge*, std::less<>>, std::less<>> rejected_by;
  // scheduler_unschedulable_pods: the gauges each failed pod incremented (kube: +1 per rejecting
  // plugin when the failed pod is requeued, -1 when it is popped again or leaves the queue).
  std::unordered_map<std::string, std::vector<obs::gauge*>> counted;
  static inline const char* name = "scheduling_queue";
};

using self_ptr = queue_actor::stateful_pointer<queue_actor_state>;

queue_stats stats_of(const queue_state& q) {
  queue_stats s;
  s.active = q.active_size();
  s.backoff = q.backoff_size();
  s.unschedulable = q.unschedulable_size();
  s.gated = q.gated_size();
  s.in_flight = q.in_flight_size();
  s.popped = q.scheduling_cycle();
  return s;
}

// scheduler_pending_pods{queue}: four relaxed stores after every change.
void publish_pending(const queue_actor_state& st) {
  auto& s = *st.wiring->series;
  s.pending(0).set(static_cast<double>(st.q->active_size()));
  s.pending(1).set(static_cast<double>(st.q->backoff_size()));
  s.pending(2).set(static_cast<double>(st.q->unschedulable_size()));
  s.pending(3).set(static_cast<double>(st.q->gated_size()));
}

void uncount(queue_actor_state& st, const std::string& uid) {
  auto it = st.counted.find(uid);
  if (it == st.counted.end()) return;
  for (auto* g : it->second) g->add(-1);
  st.counted.erase(it);
}

void count_rejection(queue_actor_state& st, const fw::queued_pod_info& info) {
  uncount(st, info.pod->uid);
  std::vector<obs::gauge*> gs;
  auto& by_plugin = st.rejected_by[info.pod->scheduler_name];
  auto bump = [&](std::string_view plugin) {
    auto it = by_plugin.find(plugin);
    if (it == by_plugin.end()) {
      auto* g = &st.wiring->metrics->unschedulable_pods.gauge_series({std::string(plugin), info.pod->scheduler_name});
      it = by_plugin.emplace(std::string(plugin), g).first;
    }
    it->second->add(1);
    gs.push_back(it->second);
  };
  for (auto p : info.unschedulable_plugins) bump(p);
  for (auto p : info.pending_plugins)
    if (!info.unschedulable_plugins.count(p)) bump(p);
  if (!gs.empty()) st.counted.emplace(info.pod->uid, std::move(gs));
}

// The flush runs at the start of every backoff ordering window (kube's
// waitUntilAlignedWithOrderingWindow), so a window's pods leave backoffQ together.
queue_state::clock::duration until_next_window(const queue_state& q) {
  auto now = queue_state::clock::now();
  return q.align_to_window(now + queue_state::ordering_window) - now;
}

void serve_waiting(self_ptr self) {
  auto& st = self->state;
  publish_pending(st);
  if (!st.synced) return;
  auto now = queue_state::clock::now();
  if (st.opts.skip_idle_backoff && st.q->active_size() == 0 && st.q->in_flight_size() == 0 &&
      st.q->backoff_size() > 0)
    st.q->flush_backoff_now(st.opts.idle_retry_limit);
  st.q->park_stuck_gangs();
  while (!st.waiting.empty() && st.q->can_pop()) {
    auto [rp, n] = st.waiting.front();
    st.waiting.erase(st.waiting.begin());
    auto pods = st.q->pop(n, now);
    for (auto& p : pods) uncount(st, p->pod->uid);
    rp.deliver(std::move(pods));
  }
  publish_pending(st);
  if (!st.idle_waiters.empty() && st.q->active_size() == 0 && st.q->in_flight_size() == 0 &&
      st.q->backoff_size() == 0) {
    auto s = stats_of(*st.q);
    for (auto& rp : st.idle_waiters) rp.deliver(s);
    st.idle_waiters.clear();
  }
}

bool labels_changed(const label_map& a, const label_map& b) { return !(a == b); }

// Gangs whose popped members have all reported (queue_state::take_idle_gangs): the permit
// coordinator forgets them. Every message such a member's cycle sent the coordinator (its wait,
// its failure) was enqueued there before its report was sent here, so it is handled before this.
// Call it before serve_waiting: a member popped there starts the gang's next round, and whatever
// its cycle sends the coordinator must come after the forget.
void forget_idle_gangs(queue_actor_state& st) {
  for (auto& key : st.q->take_idle_gangs()) caf::anon_send(st.wiring->permit, forget_atom::value, std::move(key));
}

}  // namespace

scheduling_queue_options default_queue_options() { return {}; }

bool to_framework_event(const cluster_change& ch, fw::cluster_event& ev, fw::event_objects& objs) {
  using t = cluster_event_type;
  objs = {};
  switch (ch.type) {
    case t::node_add:
      ev = {fw::event_resource::node, fw::act_add, "NodeAdd"};
      objs.new_node = ch.new_node.get();
      return true;
    case t::node_delete:
      ev = {fw::event_resource::node, fw::act_delete, "NodeDelete"};
      objs.old_node = ch.old_node.get();
      return true;
    case t::node_update: {
      const auto& o = *ch.old_node;
      const auto& n = *ch.new_node;
      uint32_t a = 0;
      if (!(o.allocatable == n.allocatable)) a |= fw::act_update_node_allocatable;
      if (labels_changed(o.labels, n.labels)) a |= fw::act_update_node_label;
      if (!(o.taints == n.taints) || o.unschedulable != n.unschedulable) a |= fw::act_update_node_taint;
      if (a == 0) return false;
      ev = {fw::event_resource::node, a, "NodeUpdate"};
      objs.old_node = ch.old_node.get();
      objs.new_node = ch.new_node.get();
      return true;
    }
    case t::pod_add:
      if (ch.new_pod->node_name.empty()) return false;  // unscheduled pods are the queue's own
      ev = {fw::event_resource::assigned_pod, fw::act_add, "AssignedPodAdd"};
      objs.new_pod = ch.new_pod.get();
      return true;
    case t::pod_update: {
      bool was_bound = !ch.old_pod->node_name.empty();
      bool is_bound = !ch.new_pod->node_name.empty();
      if (!was_bound && is_bound) {
        ev = {fw::event_resource::assigned_pod, fw::act_add, "AssignedPodAdd"};
        objs.new_pod = ch.new_pod.get();
        return true;
      }
      if (!is_bound) return false;
      uint32_t a = 0;
      if (labels_changed(ch.old_pod->labels, ch.new_pod->labels)) a |= fw::act_update_pod_label;
      auto& o = ch.old_pod->requests;
      auto& n = ch.new_pod->requests;
      if (n.milli_cpu < o.milli_cpu || n.memory < o.memory) a |= fw::act_update_pod_scale_down;
      if (ch.new_pod->phase == "Succeeded" || ch.new_pod->phase == "Failed") a |= fw::act_delete;
      if (a == 0) return false;
      ev = {fw::event_resource::assigned_pod, a, "AssignedPodUpdate"};
      objs.old_pod = ch.old_pod.get();
      objs.new_pod = ch.new_pod.get();
      return true;
    }
    case t::pod_delete:
      if (ch.old_pod->node_name.empty()) return false;
      ev = {fw::event_resource::assigned_pod, fw::act_delete, "AssignedPodDelete"};
      objs.old_pod = ch.old_pod.get();
      return true;
    case t::volume: {
      // A storage object's add, update or delete (kube's PersistentVolumeClaimAdd, ...).
      static constexpr fw::event_resource by_kind[] = {
        fw::event_resource::pv,         fw::event_resource::pvc,        fw::event_resource::storage_class,
        fw::event_resource::csi_node,   fw::event_resource::csi_driver, fw::event_resource::csi_storage_capacity,
        fw::event_resource::volume_attachment};
      const volume_change& v = *ch.volume;
      uint32_t a = !v.has_old() ? fw::act_add : !v.has_new() ? fw::act_delete : fw::act_update;
      ev = {by_kind[v.kind], a, v.label()};
      objs.volume = &v;
      return true;
    }
    case t::synced:
    case t::objects: return false;
  }
  return false;
}

// A cluster change, after the cache applied it: the queue's own (unscheduled) pods come and go, and
// the change, as a framework event, may move rejected pods back (QueueingHints).
void on_cluster_change(self_ptr self, const cluster_change& ch, const cluster_change_ptr& keepalive) {
  auto& q = *self->state.q;
  auto now = queue_state::clock::now();
  using t = cluster_event_type;
  if (ch.type == t::synced) {
    self->state.synced = true;
    self->state.wiring->synced->store(true, std::memory_order_release);
    return;
  }
  if (ch.type == t::objects) {
    q.set_objects(ch.objects, now);
    return;
  }
  // Pod groups count their members, bound or not, before the pod itself is queued (PreEnqueue
  // reads the count).
  if (ch.type == t::pod_add || ch.type == t::pod_update || ch.type == t::pod_delete)
    q.track_group_member(ch.old_pod.get(), ch.new_pod.get(), now);
  if (ch.type == t::pod_add && ch.new_pod->node_name.empty()) q.add(ch.new_pod, now);
  // A status-only write (PodScheduled condition) is not an update the queue reacts to (kube's
  // isPodUpdated ignores status).
  if (ch.conditions_only) return;
  if (ch.type == t::pod_update && ch.new_pod->node_name.empty()) q.update(ch.old_pod, ch.new_pod, now);
  if (ch.type == t::pod_update && !ch.new_pod->node_name.empty() && ch.old_pod->node_name.empty()) {
    // Bound (by us or by another scheduler): no longer the queue's, unless still in flight here.
    if (q.where(ch.new_pod->uid) != queue_location::in_flight) q.remove(ch.new_pod->uid);
    uncount(self->state, ch.new_pod->uid);
  }
  if (ch.type == t::pod_delete && ch.old_pod->node_name.empty()) {
    q.remove(ch.old_pod->uid);
    uncount(self->state, ch.old_pod->uid);
  }
  fw::cluster_event ev;
  fw::event_objects objs;
  if (to_framework_event(ch, ev, objs)) q.on_event(ev, objs, keepalive, now);
}

// scheduler_queue_incoming_pods_total{queue, event}, its series resolved once per (queue, event).
void observe_incoming(queue_actor_state& st, queue_location queue, std::string_view event) {
  auto& by_event = st.incoming[queue == queue_location::active ? 0 : queue == queue_location::backoff ? 1 : 2];
  auto it = by_event.find(event);
  if (it == by_event.end()) {
    auto* c = &st.wiring->metrics->queue_incoming_pods.counter_series({to_string(queue), std::string(event)});
    it = by_event.emplace(std::string(event), c).first;
  }
  it->second->inc_single_writer();
}

queue_actor spawn_scheduling_queue(caf::actor_system& sys, std::vector<fw::framework_ptr> frameworks,
                                   const scheduling_queue_options& opts, std::shared_ptr<const pipeline> wiring) {
  return sys.spawn([frameworks, opts, wiring](self_ptr self) -> queue_actor::behavior_type {
    auto qopts = opts.queue;
    if (opts.skip_idle_backoff) qopts.pop_from_backoff = false;
    self->state.q = std::make_unique<queue_state>(frameworks, qopts);
    self->state.opts = opts;
    self->state.wiring = wiring;
    self->state.probe = make_probe(*wiring, "scheduling_queue");
    auto* st_ptr = &self->state;
    self->state.q->set_incoming_observer(
      [st_ptr](queue_location queue, std::string_view event) { observe_incoming(*st_ptr, queue, event); });
    self->delayed_send(self, until_next_window(*self->state.q), tick_atom::value);
    return {
      [=](event_atom, const cluster_change_batch_ptr& batch) {
        auto probe_scope = self->state.probe->begin_handler(self);
        for (auto& ch : batch->changes) on_cluster_change(self, *ch, ch);
        serve_waiting(self);  // once per batch: pop replies carry whatever the batch made ready
      },
      [=](pop_atom, uint32_t n) -> caf::typed_response_promise<std::vector<queued_pod_ptr>> {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto rp = self->make_response_promise<std::vector<queued_pod_ptr>>();
        st.waiting.emplace_back(rp, n);
        serve_waiting(self);
        return rp;
      },
      [=](done_atom, const std::vector<std::string>& uids) {
        auto probe_scope = self->state.probe->begin_handler(self);
        for (auto& uid : uids) {
          self->state.q->done(uid);
          uncount(self->state, uid);
        }
        forget_idle_gangs(self->state);
        serve_waiting(self);
      },
      [=](requeue_atom, const failure& f) {
        auto probe_scope = self->state.probe->begin_handler(self);
        bool is_error = f.result.get_code() == fw::code::error;
        auto& q = *self->state.q;
        auto now = queue_state::clock::now();
        auto info = *f.pod;
        info.unschedulable_plugins = f.unschedulable_plugins;
        info.pending_plugins = f.pending_plugins;
        // A binding cycle's forget freed what its assumed pod held: kube's handleBindingCycleError
        // moves the pods it may have kept out as on AssignedPodDelete. After an error the event comes
        // first (the pod backs off anyway); after a rejection it comes after, past the pod itself.
        // A gang's failed attempt frees room, but not for the gang's own members: they come back
        // together, on their own events.
        fw::cluster_event freed{fw::event_resource::assigned_pod, fw::act_delete, "AssignedPodDelete"};
        fw::event_objects objs;
        objs.old_pod = f.forgotten.get();
        std::string_view gang = f.pod->gang ? std::string_view(f.pod->gang->key) : std::string_view();
        if (f.forgotten && is_error) q.on_event(freed, objs, f.forgotten, now, {}, gang);
        q.add_unschedulable(info, f.cycle, is_error, now);
        if (f.forgotten && !is_error) q.on_event(freed, objs, f.forgotten, now, info.pod->uid, gang);
        if (q.contains(info.pod->uid)) count_rejection(self->state, info);
        // Members of a failed gang that never got their turn report the gang's failure too.
        for (auto& parked : q.take_parked()) {
          pod_outcome o;
          o.ns = parked->pod->ns;
          o.name = parked->pod->name;
          o.uid = parked->pod->uid;
          o.status = "Unschedulable";
          o.message = f.message;
          o.attempts = parked->attempts;
          caf::anon_send(self->state.wiring->recorder, record_atom::value, std::move(o));
          count_rejection(self->state, *parked);
        }
        forget_idle_gangs(self->state);
        serve_waiting(self);
      },
      [=](gang_atom, const std::string& key, uint64_t round) {
        auto probe_scope = self->state.probe->begin_handler(self);
        self->state.q->gang_admitted(key, round);
        serve_waiting(self);
      },
      [=](tick_atom) {
        auto probe_scope = self->state.probe->begin_handler(self);
        self->state.q->flush(queue_state::clock::now());
        serve_waiting(self);
        self->delayed_send(self, until_next_window(*self->state.q), tick_atom::value);
      },
      [=](stats_atom) -> queue_stats {
        auto probe_scope = self->state.probe->begin_handler(self);
        return stats_of(*self->state.q);
      },
      [=](done_atom) -> caf::typed_response_promise<queue_stats> {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto rp = self->make_response_promise<queue_stats>();
        self->state.idle_waiters.push_back(rp);
        serve_waiting(self);
        return rp;
      },
    };
  });
}

}  // namespace kas

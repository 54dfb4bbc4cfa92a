#include "actors/snapshot_cache.hpp"

#include <optional>

#include "cache/scheduler_cache.hpp"
#include "spdlog/spdlog.h"

namespace kas {

namespace {

struct cache_actor_state {
  std::unique_ptr<scheduler_cache> cache;
  std::shared_ptr<const pipeline> wiring;
  std::chrono::nanoseconds ttl{0};
  std::unique_ptr<obs::actor_probe> probe;
  watch_credit credit;  // owed to the cluster for applied changes
  std::vector<const scheduler_cache::pod_change*> changes;  // scratch for revalidate_incremental
  static inline const char* name = "snapshot_cache";
};

using self_ptr = snapshot_cache_actor::stateful_pointer<cache_actor_state>;

void log_if_error(const status_or_error& r) {
  if (!r) spdlog::warn("snapshot_cache: {}", r.err().message);
}

void apply(scheduler_cache& c, const cluster_change& ch) {
  using t = cluster_event_type;
  switch (ch.type) {
    case t::node_add:
    case t::node_update: c.add_or_update_node(std::make_shared<node_info>(*ch.new_node)); break;
    case t::node_delete: c.remove_node(ch.old_node->name); break;
    case t::pod_add:
      c.update_nominated(nullptr, ch.new_pod);
      if (!ch.new_pod->node_name.empty()) log_if_error(c.add_pod(ch.new_pod));
      break;
    case t::pod_update: {
      c.update_nominated(ch.old_pod, ch.new_pod);
      bool was_bound = ch.old_pod && !ch.old_pod->node_name.empty();
      bool is_bound = !ch.new_pod->node_name.empty();
      if (!was_bound && is_bound) log_if_error(c.add_pod(ch.new_pod));
      else if (was_bound && is_bound) log_if_error(c.update_pod(ch.old_pod, ch.new_pod));
      break;
    }
    case t::pod_delete:
      c.update_nominated(ch.old_pod, nullptr);
      // A coalesced delete carries the pod's last state, which the cache may never have seen bound
      // (then it holds nothing for it, or an assumed copy on the same node).
      if (!ch.old_pod->node_name.empty() && c.contains(ch.old_pod->uid)) log_if_error(c.remove_pod(ch.old_pod));
      break;
    case t::objects: c.set_objects(ch.objects); break;
    case t::volume: c.apply_volume(*ch.volume); break;
    case t::synced: break;
  }
}

// A reservation's cross-node check without a new PreFilter: the driver's cycle state (PreFilter ran
// on snapshot generation req.snapshot_generation) gets every pod placed or removed since, through
// the PreFilterExtensions, and the node is filtered on the current snapshot. nullopt when that would
// not be exact (see scheduler_cache::pod_changes_since, framework::incremental_validation_safe).
std::optional<fw::status> revalidate_incremental(cache_actor_state& st, const scheduler_cache& c,
                                                 const assume_request& req, const node_info& node,
                                                 const snapshot_ptr& snap) {
  if (!req.state) return std::nullopt;
  auto& changes = st.changes;
  if (!c.pod_changes_since(req.snapshot_generation, changes)) return std::nullopt;
  for (const auto* ch : changes)
    if (!req.fwk->incremental_validation_safe(*req.state, *ch->pod)) return std::nullopt;
  fw::cycle_state state = req.state->clone();
  state.set_snapshot(snap);
  for (const auto* ch : changes) {
    // A pod on a node outside the snapshot (known only from its pods) is not counted by PreFilter.
    const node_info* on = snap->find(ch->pod->node_name);
    if (!on || ch->pod->uid == req.pod->uid) continue;
    auto s = ch->added ? req.fwk->run_pre_filter_add_pod(state, *req.pod, *ch->pod, *on)
                       : req.fwk->run_pre_filter_remove_pod(state, *req.pod, *ch->pod, *on);
    if (!s.is_success()) return s;
  }
  return req.fwk->run_filter_with_nominated_pods(state, *req.pod, node, *snap);
}

// scheduler_scheduler_cache_size{type}. nodes and pods are O(1) and set after each change; counting
// assumed pods walks every pod, so it is refreshed by the 1 s tick, as kube's cache refreshes all
// three in its 1 s cleanup loop (cache.updateMetrics).
void publish_size(const cache_actor_state& st, bool with_assumed = false) {
  auto& s = *st.wiring->series;
  s.cache_nodes().set(static_cast<double>(st.cache->node_count()));
  s.cache_pods().set(static_cast<double>(st.cache->pod_count()));
  if (with_assumed) s.cache_assumed().set(static_cast<double>(st.cache->assumed_count()));
}

// Stage "assume": re-validate the chosen node if anything it depends on changed since the driver's
// snapshot, then assume the pod on it; all in this one handler, so nothing interleaves.
assume_reply assume(self_ptr self, const assume_request& req) {
  auto& c = *self->state.cache;
  assume_reply rep;
  rep.cycle = req.cycle;
  const node_info* node = c.node(req.node);
  if (!node) {
    rep.conflict = true;
    rep.message = "node \"" + req.node + "\" no longer exists";
    return rep;
  }
  // Published only when a check needs it: a publication per assume made every pod's first change to
  // each 64-node chunk copy that chunk, since the new snapshot shared it.
  if (req.global && c.snapshot_generation() != req.snapshot_generation) {
    auto snap = c.current();
    // Cross-node constraints (affinity, spread) may be broken by any change anywhere since
    // the driver's snapshot. When only pods moved, and the log still holds every move, the
    // cycle's PreFilter state is brought up to date with AddPod/RemovePod (kube's
    // PreFilterExtensions) and the node is filtered: O(changes). Otherwise PreFilter runs
    // again over the whole current snapshot: O(nodes).
    auto s = revalidate_incremental(self->state, c, req, *node, snap);
    if (!s) s = fw::recheck_node(*req.fwk, *req.pod, *node, snap);
    if (!s->is_success()) {
      rep.conflict = true;
      rep.message = s->message();
      return rep;
    }
  } else if (req.pod->has_claims() && c.storage_changed_since(req.snapshot_generation)) {
    // A volume or claim changed since the driver's snapshot: another pod may have taken the volume
    // this one chose. The cycle's PreFilter state holds the storage objects of its snapshot, so
    // PreFilter runs again on the current one and the node is filtered.
    auto s = fw::recheck_node(*req.fwk, *req.pod, *node, c.current());
    if (!s.is_success()) {
      rep.conflict = true;
      rep.message = s.message();
      return rep;
    }
  } else if (node->generation != req.node_generation) {
    // The node changed after the driver evaluated it: re-run the node-local filters now.
    auto snap = c.current();
    auto s = req.fwk->run_filter_with_nominated_pods(*req.state, *req.pod, *node, *snap);
    if (!s.is_success()) {
      rep.conflict = true;
      rep.message = s.message();
      return rep;
    }
  }
  auto assumed = with_node_name(*req.pod, req.node);
  auto r = c.assume_pod(assumed, req.node);
  if (!r) {
    rep.message = r.err().message;
    return rep;
  }
  rep.ok = true;
  rep.assumed = assumed;
  publish_size(self->state);
  return rep;
}

}  // namespace

snapshot_cache_actor spawn_snapshot_cache(caf::actor_system& sys, const cache_options& opts,
                                          std::shared_ptr<const pipeline> wiring) {
  return sys.spawn([opts, wiring](self_ptr self) -> snapshot_cache_actor::behavior_type {
    self->state.cache = std::make_unique<scheduler_cache>(opts.assumed_ttl);
    self->state.wiring = wiring;
    self->state.ttl = opts.assumed_ttl;
    self->state.probe = make_probe(*wiring, "snapshot_cache");
    self->delayed_send(self, std::chrono::seconds(1), tick_atom::value);
    return {
      [=](event_atom, const cluster_change_batch_ptr& batch) {
        auto probe_scope = self->state.probe->begin_handler(self);
        for (auto& ch : batch->changes) apply(*self->state.cache, *ch);
        // The queue gets the same immutable batch, after every change in it was applied.
        self->send(self->state.wiring->queue, event_atom::value, batch);
        publish_size(self->state);
        // The batch is applied: the cluster may send more.
        self->state.credit.applied(self, *batch);
      },
      [=](assume_atom, const assume_request& req) -> assume_reply {
        auto probe_scope = self->state.probe->begin_handler(self);
        return assume(self, req);
      },
      [=](assume_atom, const std::string& uid, const volume_changes_ptr& assumed) {
        auto probe_scope = self->state.probe->begin_handler(self);
        // Only while the pod is still assumed: a forget that came first already ended its claim.
        if (self->state.cache->is_assumed(uid)) self->state.cache->assume_volumes(uid, *assumed);
      },
      [=](forget_atom, const std::string& uid) {
        auto probe_scope = self->state.probe->begin_handler(self);
        if (self->state.cache->is_assumed(uid)) log_if_error(self->state.cache->forget_pod(uid));
        publish_size(self->state);
      },
      [=](finished_atom, const std::vector<std::string>& uids) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto now = scheduler_cache::clock::now();
        for (auto& uid : uids) self->state.cache->finish_binding(uid, now);
      },
      [=](snap_atom) -> snapshot_ptr {
        auto probe_scope = self->state.probe->begin_handler(self);
        return self->state.cache->current();
      },
      [=](nominate_atom, const pod_info_ptr& pod, const std::string& node) {
        auto probe_scope = self->state.probe->begin_handler(self);
        if (!self->state.cache->nominate(pod, node))
          spdlog::debug("snapshot_cache: nomination of {}/{} to \"{}\" dropped: the pod is gone, bound or assumed",
                        pod->ns, pod->name, node);
      },
      [=](tick_atom) {
        auto probe_scope = self->state.probe->begin_handler(self);
        if (self->state.ttl.count() > 0)
          for (auto& uid : self->state.cache->cleanup_expired(scheduler_cache::clock::now()))
            spdlog::warn("snapshot_cache: assumed pod {} expired", uid);
        publish_size(self->state, true);
        self->delayed_send(self, std::chrono::seconds(1), tick_atom::value);
      },
    };
  });
}

}  // namespace kas

#include "actors/permit_coordinator.hpp"

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "actors/cycle_outcome.hpp"
#include "plugins/gang_scheduling/gang_scheduling.hpp"
#include "spdlog/spdlog.h"

namespace kas {

namespace {

struct waiting_pod {
  cycle_ctx_ptr ctx;
  std::chrono::steady_clock::time_point since;  // for scheduler_permit_wait_duration_seconds
  std::set<std::string> pending;  // plugins that have not allowed yet
  uint64_t seq = 0;
};

// One gang (GangScheduling): its members waiting at Permit, those admitted (sent on to bind and not
// failed since), and what its last failed attempt was rejected for.
//
// Its life: created by the first message about the gang (a member waiting, or failing), dropped when
// the queue reports that every member it popped so far has had its cycle reported (forget_atom).
// Until then a member of any attempt so far may still arrive, and needs all of it: the failed round
// to be turned back, the admitted members to count toward the quorum of their round. After it, no
// member of those attempts is left: every later message about the gang comes from a member popped
// later, in a later round (the queue starts a new round for any pop after the gang had none in
// flight), which a fresh state serves as the old one would have: the old failed round is behind
// it and no member waits. The one thing it does not carry over is the members admitted then whose
// binding succeeded: they count as the cluster shows them, in the new ticket's `bound` — the very
// view by which the queue started the new round (a turn starts only when the members in activeQ,
// in flight and bound, as the queue sees them, reach the quorum).
struct gang_state {
  pod_group_ptr group;
  std::unordered_set<std::string> waiting;
  std::unordered_set<std::string> admitted;
  std::shared_ptr<const std::vector<std::string>> bound;  // from the latest ticket
  size_t members = 0;                                      // from the latest ticket
  // The latest round whose attempt failed, and the plugins its members report: a member of that
  // round still on its way to Permit is rejected when it arrives.
  uint64_t failed_round = 0;
  std::set<std::string_view> failed_plugins;
  std::string failed_message;

  // Members holding reservations or bound: waiting, admitted, or bound per the cluster.
  size_t placed() const {
    size_t n = waiting.size() + admitted.size();
    if (bound)
      for (auto& uid : *bound)
        if (!waiting.count(uid) && !admitted.count(uid)) ++n;
    return n;
  }
};

struct permit_state {
  std::shared_ptr<const pipeline> wiring;
  std::unordered_map<std::string, waiting_pod> waiting;
  std::unordered_map<std::string, gang_state> gangs;  // by pod_group_key
  uint64_t seq = 0;
  size_t next_binder = 0;
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "permit_coordinator";
};

using self_ptr = permit_actor::stateful_pointer<permit_state>;

constexpr std::string_view gang_plugin = plugins::gang_scheduling::plugin_name;

const fw::gang_ticket* ticket_of(const waiting_pod& w) { return w.ctx->queued->gang.get(); }

// Fails a waiting pod: Unreserve, forget, requeue. `gang_rejection`: its gang failed, not itself.
void fail(self_ptr self, const std::string& uid, const fw::status& s, const std::string& message,
          std::set<std::string_view> plugins = {}, bool gang_rejection = false) {
  auto it = self->state.waiting.find(uid);
  if (it == self->state.waiting.end()) return;
  auto ctx = it->second.ctx;
  // kube's WaitOnPermit observes the wait under the final status' code: rejections and timeouts
  // are Unschedulable.
  self->state.wiring->series->permit_wait(false).observe_duration(std::chrono::steady_clock::now() - it->second.since);
  if (auto* t = ticket_of(it->second)) {
    auto g = self->state.gangs.find(t->key);
    if (g != self->state.gangs.end()) g->second.waiting.erase(uid);
  }
  self->state.waiting.erase(it);
  // WaitOnPermit is the binding cycle's first step in kube.
  abort_reserved(self, *self->state.wiring, *ctx, s, message, failed_in::binding_cycle, std::move(plugins),
                 gang_rejection);
}

// Sends a pod every plugin allowed on to a binder.
void release(self_ptr self, std::unordered_map<std::string, waiting_pod>::iterator it) {
  auto& st = self->state;
  auto ctx = it->second.ctx;
  st.wiring->series->permit_wait(true).observe_duration(std::chrono::steady_clock::now() - it->second.since);
  st.waiting.erase(it);
  auto& p = *st.wiring;
  self->send(p.binders[st.next_binder++ % p.binders.size()], bind_atom::value, ctx);
}

// Every waiting member of the gang fails at once, with one message naming the group.
void reject_gang(self_ptr self, gang_state& g, uint64_t round, std::set<std::string_view> plugins,
                 const std::string& cause) {
  g.failed_round = std::max(g.failed_round, round);
  plugins.insert(gang_plugin);
  g.failed_plugins = plugins;
  size_t placed = g.placed();
  auto msg = plugins::gang_failure_message(*g.group, placed, std::max(g.members, placed));
  g.failed_message = msg;
  spdlog::debug("permit_coordinator: gang {} rejected ({}): {}", g.group->display(), cause, msg);
  std::vector<std::string> members(g.waiting.begin(), g.waiting.end());
  fw::status s(fw::code::unschedulable, fw::intern(msg));
  for (auto& uid : members) fail(self, uid, s, msg, plugins, /*gang_rejection=*/true);
}

// Admits the gang when enough members hold a place: every waiting member is allowed at once.
void admit_if_quorum(self_ptr self, gang_state& g, uint64_t round) {
  if (g.placed() < static_cast<size_t>(g.group->min_count)) return;
  auto& st = self->state;
  std::vector<std::string> members(g.waiting.begin(), g.waiting.end());
  g.waiting.clear();
  for (auto& uid : members) {
    auto it = st.waiting.find(uid);
    if (it == st.waiting.end()) continue;
    g.admitted.insert(uid);
    it->second.pending.erase(std::string(gang_plugin));
    if (it->second.pending.empty()) release(self, it);
  }
  caf::anon_send(st.wiring->queue, gang_atom::value, pod_group_key(*g.group), round);
}

}  // namespace

void permit_handle::allow(const std::string& uid, std::string_view plugin) {
  caf::anon_send(wiring_->permit, allow_atom::value, uid, std::string(plugin));
}

void permit_handle::reject(const std::string& uid, std::string_view plugin, const std::string& message) {
  caf::anon_send(wiring_->permit, reject_atom::value, uid, std::string(plugin), message);
}

permit_actor spawn_permit_coordinator(caf::actor_system& sys, std::shared_ptr<const pipeline> wiring) {
  return sys.spawn([wiring](self_ptr self) -> permit_actor::behavior_type {
    self->state.wiring = wiring;
    self->state.probe = make_probe(*wiring, "permit_coordinator");
    return {
      [=](wait_atom, const cycle_ctx_ptr& ctx) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        waiting_pod w;
        w.ctx = ctx;
        w.seq = ++st.seq;
        w.since = std::chrono::steady_clock::now();
        auto shortest = std::chrono::milliseconds::max();
        bool gang_waits = false;
        for (auto& [plugin, timeout] : ctx->permit_waits) {
          w.pending.insert(std::string(plugin));
          shortest = std::min(shortest, timeout);
          gang_waits |= plugin == gang_plugin;
        }
        const std::string uid = ctx->assumed->uid;
        st.waiting[uid] = std::move(w);
        self->delayed_send(self, shortest, timeout_atom::value, uid, st.seq);
        const fw::gang_ticket* t = ctx->queued->gang.get();
        if (!gang_waits || !t || !t->group) return;
        auto& g = st.gangs[t->key];
        g.group = t->group;
        g.bound = t->bound;
        g.members = t->members;
        g.admitted.erase(uid);
        g.waiting.insert(uid);
        if (t->round <= g.failed_round) {
          // Its attempt already failed: it goes back with the others.
          fw::status s(fw::code::unschedulable, fw::intern(g.failed_message));
          fail(self, uid, s, g.failed_message, g.failed_plugins, true);
          return;
        }
        admit_if_quorum(self, g, t->round);
      },
      [=](allow_atom, const std::string& uid, const std::string& plugin) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.waiting.find(uid);
        if (it == st.waiting.end()) return;
        it->second.pending.erase(plugin);
        if (it->second.pending.empty()) release(self, it);
      },
      [=](reject_atom, const std::string& uid, const std::string& plugin, const std::string& msg) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.waiting.find(uid);
        if (it == st.waiting.end()) return;
        auto s = fw::status(fw::code::unschedulable, fw::intern(msg)).with_plugin(fw::intern(plugin));
        const fw::gang_ticket* t = ticket_of(it->second);
        auto g = t ? st.gangs.find(t->key) : st.gangs.end();
        fail(self, uid, s, msg);
        // One member rejected: none of its gang stays reserved.
        if (g != st.gangs.end() && !g->second.waiting.empty())
          reject_gang(self, g->second, t->round, {s.plugin()}, "member rejected");
      },
      [=](timeout_atom, const std::string& uid, uint64_t seq) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.waiting.find(uid);
        if (it == st.waiting.end() || it->second.seq != seq) return;
        if (const fw::gang_ticket* t = ticket_of(it->second)) {
          auto g = st.gangs.find(t->key);
          if (g != st.gangs.end() && g->second.waiting.count(uid)) {
            // The gang did not reach its quorum in time: all its waiting members go back.
            reject_gang(self, g->second, t->round, {}, "timeout");
            return;
          }
        }
        std::string plugins;
        for (auto& p : it->second.pending) plugins += (plugins.empty() ? "" : ",") + p;
        auto msg = "rejected due to timeout after waiting at plugin(s) " + plugins;
        fail(self, uid, fw::status(fw::code::unschedulable, fw::intern(msg)), msg);
      },
      [=](forget_atom, const std::string& key) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.gangs.find(key);
        if (it == st.gangs.end()) return;
        if (!it->second.waiting.empty()) {
          // Cannot happen (a waiting member is in flight); keep what still waits rather than strand it.
          spdlog::error("permit_coordinator: gang {} forgotten with {} members waiting (kept)", key,
                        it->second.waiting.size());
          return;
        }
        st.gangs.erase(it);
      },
      [=](stats_atom) -> uint64_t {
        auto probe_scope = self->state.probe->begin_handler(self);
        return self->state.gangs.size();
      },
      [=](gang_atom, const gang_member_failed& f) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        if (!f.ticket || !f.ticket->group) return;
        auto it = st.gangs.find(f.ticket->key);
        if (f.in_binding) {
          // An admitted member's binding failed: it no longer holds its place.
          if (it != st.gangs.end()) it->second.admitted.erase(f.uid);
          return;
        }
        auto& g = st.gangs[f.ticket->key];
        g.group = f.ticket->group;
        g.members = std::max(g.members, f.ticket->members);
        if (!g.bound) g.bound = f.ticket->bound;
        // Once the gang reached its quorum, a further member failing does not undo it.
        if (g.admitted.size() + (g.bound ? g.bound->size() : 0) >= static_cast<size_t>(g.group->min_count)) return;
        reject_gang(self, g, f.ticket->round, f.unschedulable_plugins, "member failed: " + f.message);
      },
    };
  });
}

}  // namespace kas

#include "actors/permit_coordinator.hpp"

#include <set>
#include <unordered_map>

#include "actors/cycle_outcome.hpp"

namespace kas {

namespace {

struct waiting_pod {
  cycle_ctx_ptr ctx;
  std::chrono::steady_clock::time_point since;  // for scheduler_permit_wait_duration_seconds
  std::set<std::string> pending;  // plugins that have not allowed yet
  uint64_t seq = 0;
};

struct permit_state {
  std::shared_ptr<const pipeline> wiring;
  std::unordered_map<std::string, waiting_pod> waiting;
  uint64_t seq = 0;
  size_t next_binder = 0;
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "permit_coordinator";
};

using self_ptr = permit_actor::stateful_pointer<permit_state>;

void fail(self_ptr self, const std::string& uid, const fw::status& s, const std::string& message) {
  auto it = self->state.waiting.find(uid);
  if (it == self->state.waiting.end()) return;
  auto ctx = it->second.ctx;
  // kube's WaitOnPermit observes the wait under the final status' code: rejections and timeouts
  // are Unschedulable.
  self->state.wiring->series->permit_wait(false).observe_duration(std::chrono::steady_clock::now() - it->second.since);
  self->state.waiting.erase(it);
  // WaitOnPermit is the binding cycle's first step in kube.
  abort_reserved(self, *self->state.wiring, *ctx, s, message, failed_in::binding_cycle);
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
        for (auto& [plugin, timeout] : ctx->permit_waits) {
          w.pending.insert(std::string(plugin));
          shortest = std::min(shortest, timeout);
        }
        st.waiting[ctx->assumed->uid] = std::move(w);
        self->delayed_send(self, shortest, timeout_atom::value, ctx->assumed->uid, st.seq);
      },
      [=](allow_atom, const std::string& uid, const std::string& plugin) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.waiting.find(uid);
        if (it == st.waiting.end()) return;
        it->second.pending.erase(plugin);
        if (!it->second.pending.empty()) return;
        auto ctx = it->second.ctx;
        st.wiring->series->permit_wait(true).observe_duration(std::chrono::steady_clock::now() - it->second.since);
        st.waiting.erase(it);
        auto& p = *st.wiring;
        self->send(p.binders[st.next_binder++ % p.binders.size()], bind_atom::value, ctx);
      },
      [=](reject_atom, const std::string& uid, const std::string& plugin, const std::string& msg) {
        auto probe_scope = self->state.probe->begin_handler(self);
        fail(self, uid, fw::status(fw::code::unschedulable, fw::intern(msg)).with_plugin(fw::intern(plugin)), msg);
      },
      [=](timeout_atom, const std::string& uid, uint64_t seq) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto it = self->state.waiting.find(uid);
        if (it == self->state.waiting.end() || it->second.seq != seq) return;
        std::string plugins;
        for (auto& p : it->second.pending) plugins += (plugins.empty() ? "" : ",") + p;
        auto msg = "rejected due to timeout after waiting at plugin(s) " + plugins;
        fail(self, uid, fw::status(fw::code::unschedulable, fw::intern(msg)), msg);
      },
    };
  });
}

}  // namespace kas

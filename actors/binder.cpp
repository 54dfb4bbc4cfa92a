#include "actors/binder.hpp"

#include "actors/cycle_outcome.hpp"
#include "actors/embedded_client.hpp"

namespace kas {

namespace {

struct binder_state {
  std::shared_ptr<const pipeline> wiring;
  size_t in_flight = 0;
  binding_reports reports;  // successes not yet reported (see binding_reports)
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "binder";
};

using self_ptr = binder_actor::stateful_pointer<binder_state>;

// Every handler's scope: the actor probe, and at the end the held reports go out when nothing else
// is queued or enough are held.
struct handler_scope {
  self_ptr self;
  obs::actor_probe::scope probe;
  explicit handler_scope(self_ptr s) : self(s), probe(s->state.probe->begin_handler(s)) {}
  handler_scope(const handler_scope&) = delete;
  ~handler_scope() {
    auto& r = self->state.reports;
    if (!r.empty() && (r.done.size() >= binding_reports::limit || self->mailbox().empty()))
      r.send(*self->state.wiring);
  }
};

void bind_failed(self_ptr self, cycle_ctx& ctx, const fw::status& s) {
  // kube reports a failed binding cycle as "Binding rejected: <err>" (and as an error, it backs off).
  auto msg = "Binding rejected: " + s.message();
  fw::status err(fw::code::error, fw::intern(s.message()));
  abort_reserved(self, *self->state.wiring, ctx, err, msg, failed_in::binding_cycle);
}

// Bind, then PostBind and the report when the bind plugin answers.
void bind(self_ptr self, const cycle_ctx_ptr& ctx) {
  self->state.in_flight++;
  auto me = caf::actor_cast<binder_actor>(self);
  requester_scope cluster_requests{self};  // a bind plugin's request to the cluster is this binder's
  auto s = ctx->fwk->run_bind(ctx->state, *ctx->assumed, ctx->node,
                              [me, ctx](fw::status result) { caf::anon_send(me, result_atom::value, ctx, result); });
  if (s.get_code() == fw::code::pending) return;
  self->state.in_flight--;
  if (s.is_skip()) s = fw::status::error("no bind plugin bound the pod");
  if (!s.is_success()) return bind_failed(self, *ctx, s);
  // Synchronous success.
  caf::anon_send(me, result_atom::value, ctx, fw::status::ok());
  self->state.in_flight++;
}

// PreBind from plugin `from` on; a plugin that waits on the cluster (VolumeBinding) answers by
// message, and the chain resumes after it. Then Bind.
void pre_bind(self_ptr self, const cycle_ctx_ptr& ctx, size_t from) {
  auto me = caf::actor_cast<binder_actor>(self);
  requester_scope cluster_requests{self};  // a PreBind's writes to the cluster are this binder's
  auto s = ctx->fwk->run_pre_bind_from(ctx->state, *ctx->assumed, ctx->node, from,
                                       [me, ctx](fw::status result, size_t at) {
                                         caf::anon_send(me, result_atom::value, ctx, result, uint64_t{at});
                                       });
  if (s.get_code() == fw::code::pending) {
    self->state.in_flight++;
    return;
  }
  if (!s.is_success()) return bind_failed(self, *ctx, s);
  bind(self, ctx);
}

}  // namespace

binder_actor spawn_binder(caf::actor_system& sys, std::shared_ptr<const pipeline> wiring, size_t index) {
  return sys.spawn([wiring, index](self_ptr self) -> binder_actor::behavior_type {
    self->state.wiring = wiring;
    self->state.probe = make_probe(*wiring, "binder-" + std::to_string(index));
    return {
      [=](bind_atom, const cycle_ctx_ptr& ctx) {
        handler_scope scope{self};
        auto s = ctx->fwk->run_pre_bind_pre_flight(ctx->state, *ctx->assumed, ctx->node);
        if (!s.is_success() && !s.is_skip()) return bind_failed(self, *ctx, s);
        if (s.is_skip()) return bind(self, ctx);
        pre_bind(self, ctx, 0);
      },
      [=](result_atom, const cycle_ctx_ptr& ctx, const fw::status& s, uint64_t at) {
        handler_scope scope{self};
        self->state.in_flight--;
        if (!s.is_success() && !s.is_skip()) return bind_failed(self, *ctx, s);
        pre_bind(self, ctx, static_cast<size_t>(at) + 1);
      },

      [=](result_atom, const cycle_ctx_ptr& ctx, const fw::status& s) {
        handler_scope scope{self};
        self->state.in_flight--;
        if (!s.is_success()) return bind_failed(self, *ctx, s);
        ctx->fwk->run_post_bind(ctx->state, *ctx->assumed, ctx->node);  // a PostBind failure changes nothing
        report_scheduled(*self->state.wiring, *ctx, self->state.reports);
      },
    };
  });
}

}  // namespace kas

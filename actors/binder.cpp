#include "actors/binder.hpp"

#include "actors/cycle_outcome.hpp"
#include "actors/embedded_client.hpp"

namespace kas {

namespace {

struct binder_state;

// The binder whose handler is running on this thread (null: none). A bind plugin's completion
// that arrives inside one of this binder's handlers is finished there, not sent back as a message.
binder_state*& running_binder() {
  static thread_local binder_state* current = nullptr;
  return current;
}

// A binding the bind plugins asked the cluster for, waiting to go out with the handler's others.
struct held_binding {
  pod_binding binding;
  std::function<void(fw::status)> done;
};

struct binder_state {
  std::shared_ptr<const pipeline> wiring;
  binding_reports reports;  // successes not yet reported (see binding_reports)
  // Bind results that arrived in the running handler, finished before it ends.
  std::vector<std::pair<cycle_ctx_ptr, fw::status>> results;
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "binder";
};

using self_ptr = binder_actor::stateful_pointer<binder_state>;

void bind_failed(self_ptr self, cycle_ctx& ctx, const fw::status& s) {
  // kube reports a failed binding cycle as "Binding rejected: <err>" (and as an error, it backs off).
  auto msg = "Binding rejected: " + s.message();
  fw::status err(fw::code::error, fw::intern(s.message()));
  abort_reserved(self, *self->state.wiring, ctx, err, msg);
}

// The end of a binding cycle: PostBind and Scheduled, or the failure path.
void finish_binding(self_ptr self, cycle_ctx& ctx, const fw::status& s) {
  if (!s.is_success()) return bind_failed(self, ctx, s);
  ctx.fwk->run_post_bind(ctx.state, *ctx.assumed, ctx.node);  // a PostBind failure changes nothing
  report_scheduled(*self->state.wiring, ctx, self->state.reports);
}

// Every handler's scope: the actor probe; at the end, the bind results that arrived in the handler
// are finished, and the held reports go out when nothing else is queued or enough are held.
struct handler_scope {
  self_ptr self;
  obs::actor_probe::scope probe;
  binder_state* prev;
  explicit handler_scope(self_ptr s)
      : self(s), probe(s->state.probe->begin_handler(s)), prev(std::exchange(running_binder(), &s->state)) {}
  handler_scope(const handler_scope&) = delete;
  ~handler_scope() {
    auto& st = self->state;
    // Finishing a cycle runs plugin code (PostBind, Unreserve) that may bind nothing; the loop
    // still takes results that arrive meanwhile.
    for (size_t i = 0; i < st.results.size(); ++i) finish_binding(self, *st.results[i].first, st.results[i].second);
    st.results.clear();
    running_binder() = prev;
    auto& r = st.reports;
    if (!r.empty() && (r.done.size() >= binding_reports::limit || self->mailbox().empty()))
      r.send(*st.wiring);
  }
};

// The bind plugins' requests to the cluster while it is open are this binder's: bindings are held
// and leave, when it closes, as one request for all of them (a pods/binding each at the cluster),
// whose answer finishes every cycle in one handler. Evictions and nominations (no bind plugin makes
// them) go out at once, as any requester's.
class binding_requests final : public requester_scope<self_ptr> {
public:
  explicit binding_requests(self_ptr self) : requester_scope(self), self_(self) {}
  ~binding_requests() override {
    if (held_.empty()) return;
    std::vector<pod_binding> bindings;
    auto dones = std::make_shared<std::vector<std::function<void(fw::status)>>>();
    bindings.reserve(held_.size());
    dones->reserve(held_.size());
    for (auto& h : held_) {
      bindings.push_back(std::move(h.binding));
      dones->push_back(std::move(h.done));
    }
    auto self = self_;
    self->request(cluster_, cluster_request_timeout, bind_atom::value, std::move(bindings))
      .then(
        [self, dones](std::vector<fw::status>& statuses) {
          handler_scope scope{self};
          for (size_t i = 0; i < dones->size(); ++i)
            (*dones)[i](i < statuses.size() ? std::move(statuses[i])
                                            : fw::status::error("the cluster answered fewer bindings than asked"));
        },
        [self, dones](const caf::error& e) {
          handler_scope scope{self};
          auto s = fw::status::error("cluster request failed: " + to_string(e));
          for (auto& done : *dones) done(s);
        });
  }
  void bind(const cluster_actor& c, const std::string& uid, const std::string& node,
            std::function<void(fw::status)> done) override {
    cluster_ = c;
    held_.push_back({{uid, node}, std::move(done)});
  }

private:
  self_ptr self_;
  cluster_actor cluster_;
  std::vector<held_binding> held_;
};

// One binding cycle up to Bind. Its result lands in the binder's results (a synchronous Bind, or
// the cluster's answer in this binder's handler) or, from elsewhere, comes back as a message.
void start_binding(self_ptr self, const cycle_ctx_ptr& ctx) {
  auto& fwk = *ctx->fwk;
  auto s = fwk.run_pre_bind_pre_flight(ctx->state, *ctx->assumed, ctx->node);
  if (!s.is_success() && !s.is_skip()) return bind_failed(self, *ctx, s);
  if (s.is_success()) {
    s = fwk.run_pre_bind(ctx->state, *ctx->assumed, ctx->node);
    if (!s.is_success()) return bind_failed(self, *ctx, s);
  }
  auto* st = &self->state;
  auto me = caf::actor_cast<binder_actor>(self);
  s = fwk.run_bind(ctx->state, *ctx->assumed, ctx->node, [st, me, ctx](fw::status result) {
    if (running_binder() == st) st->results.emplace_back(ctx, std::move(result));
    else caf::anon_send(me, result_atom::value, ctx, std::move(result));
  });
  if (s.get_code() == fw::code::pending) return;
  if (s.is_skip()) s = fw::status::error("no bind plugin bound the pod");
  st->results.emplace_back(ctx, std::move(s));
}

}  // namespace

binder_actor spawn_binder(caf::actor_system& sys, std::shared_ptr<const pipeline> wiring, size_t index) {
  return sys.spawn([wiring, index](self_ptr self) -> binder_actor::behavior_type {
    self->state.wiring = wiring;
    self->state.probe = make_probe(*wiring, "binder-" + std::to_string(index));
    return {
      [=](bind_atom, const std::vector<cycle_ctx_ptr>& ctxs) {
        handler_scope scope{self};
        binding_requests cluster_requests{self};  // closes (and sends) before the scope finishes results
        for (auto& ctx : ctxs) start_binding(self, ctx);
      },
      [=](result_atom, const cycle_ctx_ptr& ctx, const fw::status& s) {
        handler_scope scope{self};
        finish_binding(self, *ctx, s);
      },
    };
  });
}

}  // namespace kas

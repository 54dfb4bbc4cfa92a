#include "actors/leader_elector.hpp"

#include <optional>
#include <random>

#include <spdlog/spdlog.h>

#include "actors/protocol.hpp"
#include "client/api_requests.hpp"
#include "messages/codec.hpp"

namespace kas {

namespace {

using clock = std::chrono::steady_clock;
using timer_atom = caf::atom_constant<caf::atom("letimer")>;
using deadline_atom = caf::atom_constant<caf::atom("ledeadline")>;

int64_t wall_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

int64_t steady_ns(clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

enum class role { acquiring, leading, releasing, stopped };

struct elector_state {
  leader_elector_options opts;
  std::shared_ptr<leader_status> status;
  std::unique_ptr<api::lease_candidate> candidate;
  std::shared_ptr<api::http_transport> transport;
  obs::gauge* master_status = nullptr;
  role r = role::acquiring;
  // The attempt in flight, its request id, and a generation that outdated answers carry.
  std::optional<api::lease_attempt> attempt;
  uint64_t request_id = 0, attempt_gen = 0;
  // Timers: each scheduled tick carries the generation it was set for; a newer one outdates it.
  uint64_t timer_gen = 0;
  // The renewal round: when it must have succeeded, and its number (for its deadline message).
  clock::time_point round_deadline{};
  uint64_t round = 0;
  bool round_open = false;
  std::mt19937_64 rng{std::random_device{}()};
  std::optional<caf::typed_response_promise<bool>> release_reply;
  std::string last_refusal;  // why the last acquire attempt failed
  static inline const char* name = "leader_elector";
};

using elector_actor = caf::stateful_actor<elector_state>;

std::string lock_name(const leader_elector_options& o) { return o.lock.ns + "/" + o.lock.name; }

// An Event about the Lease, as client-go's LeaseLock.RecordEvent ("<identity> became leader").
// `then`, if any, runs in the actor once the apiserver answered.
void record_event(elector_actor* self, const std::string& what, std::function<void()> then = {}) {
  auto& st = self->state;
  api::object_ref lease{st.opts.lock.ns, st.opts.lock.name, "", "Lease", "coordination.k8s.io/v1"};
  api::event_fields ev;
  int64_t now_us = wall_micros();
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(now_us * 1000));
  ev.name = st.opts.lock.name + suffix;
  ev.type = "Normal";
  ev.reason = "LeaderElection";
  ev.action = "LeaderElection";
  ev.note = st.opts.identity + " " + what;
  ev.event_time_rfc3339 = codec::format_rfc3339(now_us / 1000000, static_cast<int32_t>(now_us % 1000000) * 1000, 6);
  ev.reporting_controller = "kube-actor-scheduler";
  ev.reporting_instance = st.opts.identity;
  api::http_callbacks cb;
  auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  cb.on_done = [note = ev.note, weak, then = std::move(then)](api::http_response r) mutable {
    if (!r.ok()) spdlog::warn("leaderelection: could not record the Event \"{}\": {}", note, api::describe_failure(r));
    if (!then) return;
    if (auto h = caf::actor_cast<caf::actor>(weak.lock())) caf::anon_send(h, run_atom::value, source_task{std::move(then)});
  };
  st.transport->start(api::event_request(lease, ev), std::move(cb));
}

void set_timer(elector_actor* self, std::chrono::milliseconds after) {
  auto& st = self->state;
  self->delayed_send(self, after, timer_atom::value, ++st.timer_gen);
}

// Ends the renewal schedule and any attempt in flight (its answer, if one still comes, is outdated).
void stop_renewing(elector_actor* self) {
  auto& st = self->state;
  st.round_open = false;
  ++st.timer_gen;
  if (st.attempt) {
    st.transport->cancel(st.request_id);
    st.attempt.reset();
  }
  ++st.attempt_gen;
}

void lose(elector_actor* self, const std::string& why) {
  auto& st = self->state;
  if (st.r == role::stopped) return;
  st.r = role::stopped;
  stop_renewing(self);
  st.status->leading.store(false);
  st.status->lost.store(true);
  st.master_status->set(0);
  spdlog::error("leaderelection: failed to renew lease {}: {}", lock_name(st.opts), why);
  record_event(self, "stopped leading");
  if (st.opts.on_stopped_leading) st.opts.on_stopped_leading(why);
}

void attempt_done(elector_actor* self);

// Sends the attempt's next request; its answer comes back through the mailbox.
void send_step(elector_actor* self) {
  auto& st = self->state;
  auto req = st.attempt->next_request();
  req.timeout = st.opts.renew_deadline;
  api::http_callbacks cb;
  auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  uint64_t gen = st.attempt_gen;
  // The answer is handed to the actor through its mailbox; `self` is only touched there.
  cb.on_done = [weak, self, gen](api::http_response r) {
    if (auto h = caf::actor_cast<caf::actor>(weak.lock()))
      caf::anon_send(h, run_atom::value, source_task{[self, gen, r = std::move(r)] {
                       auto& st = self->state;
                       if (gen != st.attempt_gen || !st.attempt) return;  // cancelled or outdated
                       st.attempt->on_response(r, clock::now());
                       if (st.attempt->running()) send_step(self);
                       else attempt_done(self);
                     }});
  };
  st.request_id = st.transport->start(std::move(req), std::move(cb));
}

void start_attempt(elector_actor* self) {
  auto& st = self->state;
  ++st.attempt_gen;
  st.attempt = api::lease_attempt::acquire_or_renew(*st.candidate, clock::now(), wall_micros());
  send_step(self);
}

std::chrono::milliseconds jittered(elector_actor* self, std::chrono::milliseconds period) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  return period + std::chrono::milliseconds(static_cast<int64_t>(1.2 * u(self->state.rng) * period.count()));
}

void begin_round(elector_actor* self) {
  auto& st = self->state;
  st.round_open = true;
  st.round_deadline = clock::now() + st.opts.renew_deadline;
  self->delayed_send(self, st.opts.renew_deadline, deadline_atom::value, ++st.round);
  start_attempt(self);
}

void attempt_done(elector_actor* self) {
  auto& st = self->state;
  bool ok = st.attempt->acquired();
  std::string msg = st.attempt->message();
  st.attempt.reset();
  if (st.r == role::releasing) {
    st.r = role::stopped;
    st.status->leading.store(false);
    st.master_status->set(0);
    if (msg != "released") {
      spdlog::warn("leaderelection: could not release lease {}: {}", lock_name(st.opts), msg);
      if (st.release_reply) st.release_reply->deliver(false);
      st.release_reply.reset();
      return;
    }
    spdlog::info("leaderelection: released lease {}", lock_name(st.opts));
    // The reply waits for the Event, so the process does not end before it is written.
    record_event(self, "stopped leading", [self] {
      auto& st = self->state;
      if (st.release_reply) st.release_reply->deliver(true);
      st.release_reply.reset();
    });
    return;
  }
  if (st.r == role::acquiring) {
    if (!ok) {
      // Once per new reason at -v 2 (a standby logs whom it waits for), then at -v 4 only.
      if (msg != st.last_refusal) spdlog::debug("leaderelection: lease {} not acquired: {}", lock_name(st.opts), msg);
      else spdlog::trace("leaderelection: lease {} not acquired: {}", lock_name(st.opts), msg);
      st.last_refusal = msg;
      set_timer(self, jittered(self, st.opts.retry_period));
      return;
    }
    st.r = role::leading;
    st.status->last_renewed_ns.store(steady_ns(clock::now()));
    st.status->leading.store(true);
    st.master_status->set(1);
    spdlog::info("leaderelection: successfully acquired lease {}", lock_name(st.opts));
    record_event(self, "became leader");
    if (st.opts.on_started_leading) st.opts.on_started_leading();
    set_timer(self, st.opts.retry_period);
    return;
  }
  if (st.r != role::leading) return;
  if (ok) {
    st.round_open = false;
    st.status->last_renewed_ns.store(steady_ns(clock::now()));
    set_timer(self, st.opts.retry_period);
    return;
  }
  spdlog::warn("leaderelection: renewing lease {} failed: {}", lock_name(st.opts), msg);
  // Retry within the round while the deadline allows another try; the deadline message ends it.
  if (clock::now() + st.opts.retry_period < st.round_deadline) set_timer(self, st.opts.retry_period);
  else lose(self, "timed out waiting for the condition (" + msg + ")");
}

caf::behavior elector(elector_actor* self, leader_elector_options opts, std::shared_ptr<leader_status> status,
                      std::shared_ptr<api::http_transport> transport) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.status = std::move(status);
  st.transport = std::move(transport);
  obs::metrics_registry& reg = st.opts.metrics ? *st.opts.metrics : obs::default_registry();
  st.master_status = &reg.add_family({"leader_election_master_status",
                                      "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 "
                                      "indicates backup, 1 indicates master. 'name' is the string used to identify "
                                      "the lease. Please make sure to group by name.",
                                      obs::metric_kind::gauge,
                                      {"name"},
                                      {}})
                          .gauge_series({st.opts.name});
  st.master_status->set(0);
  api::candidate_options co;
  co.lock = st.opts.lock;
  co.identity = st.opts.identity;
  co.lease_duration = std::chrono::duration_cast<std::chrono::seconds>(st.opts.lease_duration);
  co.enc = st.opts.encoding;
  st.candidate = std::make_unique<api::lease_candidate>(co);
  spdlog::info("leaderelection: attempting to acquire leader lease {} as {}", lock_name(st.opts), st.opts.identity);
  start_attempt(self);
  return {
    [](run_atom, source_task& t) { t.fn(); },
    [self](timer_atom, uint64_t gen) {
      auto& st = self->state;
      if (gen != st.timer_gen || st.attempt) return;
      if (st.r == role::acquiring) start_attempt(self);
      else if (st.r == role::leading && st.round_open) start_attempt(self);  // a retry within the round
      else if (st.r == role::leading) begin_round(self);
    },
    [self](deadline_atom, uint64_t round) {
      auto& st = self->state;
      if (st.r != role::leading || !st.round_open || round != st.round) return;
      lose(self, "timed out waiting for the condition");
    },
    [self](release_atom) -> caf::result<bool> {
      auto& st = self->state;
      if (st.r != role::leading) return false;
      st.r = role::releasing;
      stop_renewing(self);
      st.attempt = api::lease_attempt::release(*st.candidate, wall_micros());
      if (!st.attempt->running()) {
        st.attempt.reset();
        return false;
      }
      st.release_reply = self->make_response_promise<bool>();
      send_step(self);
      return *st.release_reply;
    },
  };
}

}  // namespace

obs::health_check leader_election_check(const leader_status& s, std::chrono::milliseconds lease_duration,
                                        std::chrono::milliseconds tolerance) {
  obs::health_check c;
  c.name = "leaderElection";
  if (!s.leading.load()) return c;
  auto last = clock::time_point(std::chrono::nanoseconds(s.last_renewed_ns.load()));
  auto late = clock::now() - last;
  if (late > lease_duration + tolerance) {
    c.ok = false;
    c.reason = "failed election to renew leadership on lease: last renewed " +
               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(late).count()) + " ms ago";
  }
  return c;
}

result<caf::actor> spawn_leader_elector(caf::actor_system& sys, leader_elector_options opts,
                                        std::shared_ptr<leader_status> status) {
  if (opts.transport.user_agent.find('/') == std::string::npos) opts.transport.user_agent += "/leader-election";
  auto t = api::http_transport::create(opts.connection, opts.transport);
  if (!t) return t.err();
  std::shared_ptr<api::http_transport> transport = std::move(*t);
  return caf::actor{sys.spawn(elector, std::move(opts), std::move(status), std::move(transport))};
}

}  // namespace kas

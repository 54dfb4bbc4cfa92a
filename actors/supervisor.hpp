#pragma once
// supervisor: watches every core actor of one scheduler instance (the cluster source, snapshot
// cache, scheduling queue, cycle driver, workers, permit coordinator, binders, event recorder) and
// turns a death into something an operator sees: an error log line naming the actor and the reason,
// a failing /livez and /healthz check ("[-]actor/cycle_driver-0 failed: exit_reason(kill)"), and a
// notice to whoever waits on the instance (simulate and bench then exit with code 3).
//
// Design note — exit, do not restart. When a core actor dies the process gives up instead of
// respawning the actor with state rebuilt from the cluster source. The pipeline's state is spread
// over its actors (pods in flight in the driver, assumed pods in the cache, waiting pods in the
// permit coordinator, bindings in the binders); a respawned actor would start from a relist while its
// peers still hold requests and promises addressed to the dead one, and in-flight cycles would be
// lost or doubled. Rebuilding everything is exactly a process restart, and kube-scheduler itself
// leaves that to its supervisor (kubelet restarting the container of a Deployment, on a failing
// livenessProbe or a non-zero exit). So this actor only reports; the owner of the instance exits.
//
// Requested stop vs death. stop_scheduler first calls supervision_state::begin_stop(), synchronously,
// before any exit message is sent: every termination seen after that is the requested shutdown and
// is not a failure. Any termination before it — kill, an error reason, an unhandled error reply
// (CAF 0.17's default error handler stops the actor), even a user_shutdown nobody asked us for — is
// a failure, because these actors never stop on their own.
//
// Ownership: the supervisor actor is the only writer of its supervision_state; the HTTP thread (the
// /livez check) and the app read it. The state is CAF-free and guarded by one mutex; it is touched a
// few times per actor lifetime, never on the scheduling path.
#include <caf/all.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/protocol.hpp"
#include "observability/http_server.hpp"

namespace kas {

using supervise_atom = caf::atom_constant<caf::atom("supervise")>;
using died_atom = caf::atom_constant<caf::atom("died")>;

// One core actor's unexpected termination.
struct actor_failure {
  std::string actor;   // the actor's metric name, e.g. "cycle_driver-0"
  std::string reason;  // the exit reason as CAF renders it, e.g. "exit_reason(kill)"
};

// Which actors are watched, whether a stop was requested, and which died. Thread-safe.
class supervision_state {
public:
  // Adds a watched actor (its check appears on /livez as "actor/<name>").
  void watch(const std::string& name);
  // The instance is being stopped on purpose: terminations from now on are not failures.
  void begin_stop();
  bool stopping() const;
  // A watched actor terminated. Records and returns true when this is a failure.
  bool on_terminated(const std::string& name, const std::string& reason);
  // Every failure so far, in the order the supervisor saw them; the first one is the cause.
  std::vector<actor_failure> failures() const;
  std::optional<actor_failure> first_failure() const;
  // kube's healthz checks: "ping", then one "actor/<name>" per watched actor.
  std::vector<obs::health_check> checks() const;

private:
  mutable std::mutex mu_;
  std::vector<std::string> watched_;
  std::vector<actor_failure> failures_;
  bool stopping_ = false;
};

using supervisor_actor = caf::typed_actor<
  // Watch a core actor under its metric name (monitor; a death is a failure unless stopping).
  caf::reacts_to<supervise_atom, caf::actor, std::string>,
  // Subscribe the sender: it is sent (died_atom, actor, reason) on the first failure, at once if
  // one already happened.
  caf::reacts_to<watch_atom>>;

supervisor_actor spawn_supervisor(caf::actor_system& sys, std::shared_ptr<supervision_state> state);

// Watches `h` (any actor handle) under `name`.
template <class Handle>
void supervise(const supervisor_actor& sup, const Handle& h, const std::string& name) {
  caf::anon_send(sup, supervise_atom::value, caf::actor_cast<caf::actor>(h), name);
}

// How an exit reason reads in logs and on /livez ("exit_reason(kill)", "normal").
std::string describe_exit_reason(const caf::error& reason);

// For a blocking owner (simulate, bench, tests) that waits on one of the instance's actors: sends
// `xs...` to `h` as an asynchronous message and receives either its answer (`on_reply`) or the
// supervisor's death notice. `self` must have subscribed first (self->send(sup, watch_atom::value)).
// Returns the failure when a core actor died, nullopt when `on_reply` (or `on_error`) ran.
template <class Handle, class OnReply, class OnError, class... Ts>
std::optional<actor_failure> await_reply(caf::scoped_actor& self, const Handle& h, OnReply on_reply,
                                         OnError on_error, Ts&&... xs) {
  std::optional<actor_failure> died;
  self->send(h, std::forward<Ts>(xs)...);
  self->receive(std::move(on_reply), std::move(on_error),
                [&](died_atom, std::string& actor, std::string& reason) {
                  died = actor_failure{std::move(actor), std::move(reason)};
                });
  return died;
}

}  // namespace kas

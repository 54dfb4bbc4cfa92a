#pragma once
// leader_elector: kube-scheduler's leader election, as an actor. It runs client-go's loop around
// client/leader_election.hpp's attempts, over a connection of its own (user agent
// "kube-actor-scheduler/leader-election"), so a busy scheduler connection never delays a renewal:
// - Acquiring: an attempt at once, then one every retryPeriod plus a jitter of up to 1.2 x
//   retryPeriod (client-go's JitterUntil with JitterFactor 1.2), until one succeeds.
// - Leading: every retryPeriod a renewal round, bounded by renewDeadline: failed attempts are
//   retried every retryPeriod within the round; when the round's deadline passes without a renewal
//   (a request still in flight is cancelled), leadership is lost.
// - Lost: on_stopped_leading runs once; the owner stops scheduling and exits (kube-scheduler exits 1
//   with "Leaderelection lost"). The actor then stays idle.
// - (release_atom) while leading: the renewals stop, the Lease is released (empty holder,
//   leaseDurationSeconds 1) and the reply says whether the write succeeded; a standby takes over at
//   its next poll.
// It keeps leader_election_master_status{name} and the state /healthz's leaderElection check reads
// (leader_status), and records an Event about the Lease when it starts or stops leading ("<identity>
// became leader", reason LeaderElection; events.k8s.io/v1 like the scheduler's other Events, where
// client-go's recorder writes core/v1).
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "client/api_wire.hpp"
#include "client/http_transport.hpp"
#include "client/kubeconfig.hpp"
#include "client/leader_election.hpp"
#include "observability/http_server.hpp"
#include "observability/metrics.hpp"

namespace kas {

using release_atom = caf::atom_constant<caf::atom("release")>;

struct leader_elector_options {
  connection_config connection;
  api::transport_options transport;
  api::encoding encoding = api::encoding::protobuf;
  api::lease_lock lock;
  std::string identity;
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
  // The metric's label (kube-scheduler: the lease name).
  std::string name;
  // Run inside the actor, each at most once.
  std::function<void()> on_started_leading;
  std::function<void(const std::string& why)> on_stopped_leading;
  // Where leader_election_master_status lives; null = obs::default_registry(). Must outlive the actor.
  obs::metrics_registry* metrics = nullptr;
};

// What the health check and the owner read from other threads.
struct leader_status {
  std::atomic<bool> leading{false};
  std::atomic<bool> lost{false};
  // Steady-clock nanoseconds of the last successful acquire or renewal.
  std::atomic<int64_t> last_renewed_ns{0};
};

// kube's leaderelection HealthzAdaptor: fails only while this process believes it leads and its last
// renewal is older than leaseDuration + `tolerance` (kube-scheduler: 20 s). A standby is healthy.
obs::health_check leader_election_check(const leader_status& s, std::chrono::milliseconds lease_duration,
                                        std::chrono::milliseconds tolerance = std::chrono::seconds(20));

// Checks the connection and spawns the elector; it starts acquiring at once.
result<caf::actor> spawn_leader_elector(caf::actor_system& sys, leader_elector_options opts,
                                        std::shared_ptr<leader_status> status);

}  // namespace kas

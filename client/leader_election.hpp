#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does it,
// without I/O: lease_attempt is one tryAcquireOrRenew (or release) as a small state machine that
// names the next request and takes its response, and lease_candidate keeps what persists between
// attempts (the record last observed and when). The leader_elector actor (actors/) runs attempts
// on its schedule and does the requests; tests drive this directly on an injected clock.
//
// The semantics kept from client-go:
// - Expiry is judged on the local clock only: a record counts as valid for its
//   leaseDurationSeconds from the moment this process first observed it (observedTime), never from
//   the holder's acquireTime/renewTime, so clock skew between replicas does not matter.
// - A leader renews optimistically: it PUTs its record over the Lease it last wrote (with that
//   resourceVersion); when that fails it falls back to GET, then create (404) or a conditional PUT.
// - Every update is conditional on the resourceVersion read (the apiserver answers 409 otherwise).
// - A takeover increments leaseTransitions; a renewal keeps acquireTime and leaseTransitions.
// - Release writes an empty holder with leaseDurationSeconds 1, so a standby takes over at its next
//   poll.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "client/api_wire.hpp"
#include "client/http_transport.hpp"
#include "messages/k8s/coordination.pb.h"

namespace kas::api {

struct lease_lock {
  std::string ns, name;
};

// client-go's LeaderElectionRecord: what a Lease's spec says about its holder.
struct leader_election_record {
  std::string holder;
  int32_t lease_duration_seconds = 0;
  int64_t acquire_us = 0, renew_us = 0;  // unix microseconds (MicroTime)
  int32_t transitions = 0;
  bool operator==(const leader_election_record& o) const {
    return holder == o.holder && lease_duration_seconds == o.lease_duration_seconds && acquire_us == o.acquire_us &&
           renew_us == o.renew_us && transitions == o.transitions;
  }
  bool operator!=(const leader_election_record& o) const { return !(*this == o); }
};

leader_election_record record_of(const k8s::coordination::Lease& lease);
// The Lease carrying `rec`: lock's name and namespace, and `resource_version` when non-empty.
k8s::coordination::Lease lease_of(const lease_lock& lock, const leader_election_record& rec,
                                  const std::string& resource_version);

http_request get_lease_request(const lease_lock& lock, encoding e);
http_request create_lease_request(const lease_lock& lock, const leader_election_record& rec, encoding e);
http_request update_lease_request(const lease_lock& lock, const leader_election_record& rec,
                                  const std::string& resource_version, encoding e);

// The identity of this process: the hostname, "_" and a random UUIDv4, as kube-scheduler's
// (id + "_" + uuid.New()).
std::string leader_identity(const std::string& hostname);

struct candidate_options {
  lease_lock lock;
  std::string identity;
  std::chrono::seconds lease_duration{15};
  encoding enc = encoding::protobuf;
};

class lease_candidate {
public:
  using clock = std::chrono::steady_clock;
  explicit lease_candidate(candidate_options o) : opts_(std::move(o)) {}

  const candidate_options& options() const { return opts_; }
  // client-go's IsLeader: the record last observed names this identity.
  bool is_leader() const { return observed_ && observed_->holder == opts_.identity; }
  // isLeaseValid: the observed record has not expired on the local clock.
  bool lease_valid(clock::time_point now) const;
  const std::optional<leader_election_record>& observed() const { return observed_; }
  clock::time_point observed_time() const { return observed_time_; }

private:
  friend class lease_attempt;
  void observe(const leader_election_record& rec, std::string resource_version, clock::time_point now);
  candidate_options opts_;
  std::optional<leader_election_record> observed_;
  std::string resource_version_;  // of the Lease last read or written
  clock::time_point observed_time_{};
};

// One tryAcquireOrRenew (or one release) against `c`. Usage: send next_request(); give its response
// to on_response(); repeat while running(); then acquired() says whether this process holds the
// Lease, and message() why not.
class lease_attempt {
public:
  // `now` is the local clock, `now_us` the wall clock (unix microseconds) written into the record.
  static lease_attempt acquire_or_renew(lease_candidate& c, lease_candidate::clock::time_point now, int64_t now_us);
  static lease_attempt release(lease_candidate& c, int64_t now_us);

  bool running() const { return phase_ != phase::done; }
  const http_request& next_request() const { return req_; }
  void on_response(const http_response& r, lease_candidate::clock::time_point now);
  bool acquired() const { return acquired_; }
  const std::string& message() const { return message_; }

private:
  enum class phase { optimistic_update, get, create, update, release, done };
  lease_attempt(lease_candidate& c, int64_t now_us) : c_(&c), now_us_(now_us) {}
  void finish(bool acquired, std::string message);
  void start_get();
  void written(const http_response& r, lease_candidate::clock::time_point now);
  lease_candidate* c_;
  int64_t now_us_;
  phase phase_ = phase::done;
  http_request req_;
  leader_election_record desired_;
  bool acquired_ = false;
  std::string message_;
};

}  // namespace kas::api

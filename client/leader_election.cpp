#include "client/leader_election.hpp"

#include <cstdio>
#include <random>

#include "client/api_requests.hpp"
#include "messages/codec.hpp"

namespace kas::api {

namespace {

int64_t micros_of(const k8s::meta::MicroTime& t) { return t.seconds() * 1000000 + t.nanos() / 1000; }

void set_micros(k8s::meta::MicroTime* t, int64_t us) {
  int64_t s = us / 1000000, rem = us % 1000000;
  if (rem < 0) rem += 1000000, --s;
  t->set_seconds(s);
  t->set_nanos(static_cast<int32_t>(rem * 1000));
}

std::string lease_collection(const lease_lock& lock) {
  return "/apis/coordination.k8s.io/v1/namespaces/" + url_escape(lock.ns) + "/leases";
}


// The Lease of a 2xx answer (a write echoes what was stored, with its new resourceVersion).
bool decode_lease(const http_response& r, encoding fallback, k8s::coordination::Lease& out, std::string& why) {
  auto e = encoding_of(r.content_type).value_or(fallback);
  auto st = decode_body(r.body, e, out);
  if (!st) why = "undecodable Lease: " + st.err().message;
  return static_cast<bool>(st);
}

}  // namespace

leader_election_record record_of(const k8s::coordination::Lease& lease) {
  leader_election_record rec;
  const auto& s = lease.spec();
  rec.holder = s.holder_identity();
  rec.lease_duration_seconds = s.lease_duration_seconds();
  if (s.has_acquire_time()) rec.acquire_us = micros_of(s.acquire_time());
  if (s.has_renew_time()) rec.renew_us = micros_of(s.renew_time());
  rec.transitions = s.lease_transitions();
  return rec;
}

k8s::coordination::Lease lease_of(const lease_lock& lock, const leader_election_record& rec,
                                  const std::string& resource_version) {
  k8s::coordination::Lease l;
  l.mutable_metadata()->set_name(lock.name);
  l.mutable_metadata()->set_namespace_(lock.ns);
  if (!resource_version.empty()) l.mutable_metadata()->set_resource_version(resource_version);
  auto* s = l.mutable_spec();
  s->set_holder_identity(rec.holder);
  s->set_lease_duration_seconds(rec.lease_duration_seconds);
  set_micros(s->mutable_acquire_time(), rec.acquire_us);
  set_micros(s->mutable_renew_time(), rec.renew_us);
  s->set_lease_transitions(rec.transitions);
  return l;
}

http_request get_lease_request(const lease_lock& lock, encoding e) {
  http_request r;
  r.path = lease_collection(lock) + "/" + url_escape(lock.name);
  r.accept = std::string(media_type(e));
  return r;
}

http_request create_lease_request(const lease_lock& lock, const leader_election_record& rec, encoding e) {
  return object_write("POST", lease_collection(lock), lease_of(lock, rec, ""), "coordination.k8s.io/v1", "Lease", e);
}

http_request update_lease_request(const lease_lock& lock, const leader_election_record& rec,
                                  const std::string& resource_version, encoding e) {
  return object_write("PUT", lease_collection(lock) + "/" + url_escape(lock.name),
                      lease_of(lock, rec, resource_version), "coordination.k8s.io/v1", "Lease", e);
}

std::string leader_identity(const std::string& hostname) {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  uint64_t hi = gen(), lo = gen();
  hi = (hi & ~0xF000ull) | 0x4000ull;                       // version 4
  lo = (lo & ~(3ull << 62)) | (2ull << 62);                 // RFC 4122 variant
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48), static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFull));
  return hostname + "_" + buf;
}

bool lease_candidate::lease_valid(clock::time_point now) const {
  if (!observed_) return false;
  return observed_time_ + std::chrono::seconds(observed_->lease_duration_seconds) > now;
}

void lease_candidate::observe(const leader_election_record& rec, std::string resource_version, clock::time_point now) {
  observed_ = rec;
  resource_version_ = std::move(resource_version);
  observed_time_ = now;
}

lease_attempt lease_attempt::acquire_or_renew(lease_candidate& c, lease_candidate::clock::time_point now,
                                              int64_t now_us) {
  lease_attempt a(c, now_us);
  a.desired_.holder = c.opts_.identity;
  a.desired_.lease_duration_seconds = static_cast<int32_t>(c.opts_.lease_duration.count());
  a.desired_.acquire_us = now_us;
  a.desired_.renew_us = now_us;
  // The fast path: the leader, with a lease still valid, writes over the Lease it last wrote.
  if (c.is_leader() && c.lease_valid(now) && !c.resource_version_.empty()) {
    a.desired_.acquire_us = c.observed_->acquire_us;
    a.desired_.transitions = c.observed_->transitions;
    a.phase_ = phase::optimistic_update;
    a.req_ = update_lease_request(c.opts_.lock, a.desired_, c.resource_version_, c.opts_.enc);
    return a;
  }
  a.start_get();
  return a;
}

lease_attempt lease_attempt::release(lease_candidate& c, int64_t now_us) {
  lease_attempt a(c, now_us);
  if (!c.is_leader()) {
    a.finish(false, "not the leader: nothing to release");
    return a;
  }
  a.desired_.holder.clear();
  a.desired_.lease_duration_seconds = 1;
  a.desired_.acquire_us = now_us;
  a.desired_.renew_us = now_us;
  a.desired_.transitions = c.observed_->transitions;
  a.phase_ = phase::release;
  a.req_ = update_lease_request(c.opts_.lock, a.desired_, c.resource_version_, c.opts_.enc);
  return a;
}

void lease_attempt::finish(bool acquired, std::string message) {
  phase_ = phase::done;
  acquired_ = acquired;
  message_ = std::move(message);
}

void lease_attempt::start_get() {
  phase_ = phase::get;
  req_ = get_lease_request(c_->opts_.lock, c_->opts_.enc);
}

// A create or update answered: on success the written record is what is observed now.
void lease_attempt::written(const http_response& r, lease_candidate::clock::time_point now) {
  const auto& lock = c_->opts_.lock;
  if (!r.ok()) {
    const char* what = phase_ == phase::create ? "create" : "update";
    finish(false, std::string("failed to ") + what + " lease " + lock.ns + "/" + lock.name + ": " + describe_failure(r));
    return;
  }
  k8s::coordination::Lease stored;
  std::string why;
  if (!decode_lease(r, c_->opts_.enc, stored, why)) {
    // Written, but the new resourceVersion is unknown: the next renewal reads the Lease first.
    c_->observe(desired_, "", now);
  } else {
    c_->observe(desired_, stored.metadata().resource_version(), now);
  }
  finish(phase_ != phase::release, phase_ == phase::release ? "released" : "");
}

void lease_attempt::on_response(const http_response& r, lease_candidate::clock::time_point now) {
  const auto& lock = c_->opts_.lock;
  switch (phase_) {
    case phase::optimistic_update:
      if (r.ok()) {
        written(r, now);
        return;
      }
      // client-go logs "Failed to update lock optimistically" and falls back to the slow path.
      start_get();
      return;
    case phase::get: {
      if (r.status == 404 && r.error.empty()) {
        phase_ = phase::create;
        req_ = create_lease_request(lock, desired_, c_->opts_.enc);
        return;
      }
      if (!r.ok()) {
        finish(false, "error retrieving resource lock " + lock.ns + "/" + lock.name + ": " + describe_failure(r));
        return;
      }
      k8s::coordination::Lease current;
      std::string why;
      if (!decode_lease(r, c_->opts_.enc, current, why)) {
        finish(false, "error retrieving resource lock " + lock.ns + "/" + lock.name + ": " + why);
        return;
      }
      auto old = record_of(current);
      const std::string& rv = current.metadata().resource_version();
      if (!c_->observed_ || *c_->observed_ != old) c_->observe(old, rv, now);
      else c_->resource_version_ = rv;
      if (!old.holder.empty() && c_->lease_valid(now) && !c_->is_leader()) {
        finish(false, "lock is held by " + old.holder + " and has not yet expired");
        return;
      }
      if (c_->is_leader()) {
        desired_.acquire_us = old.acquire_us;
        desired_.transitions = old.transitions;
      } else {
        desired_.transitions = old.transitions + 1;
      }
      phase_ = phase::update;
      req_ = update_lease_request(lock, desired_, rv, c_->opts_.enc);
      return;
    }
    case phase::create:
    case phase::update:
    case phase::release:
      written(r, now);
      return;
    case phase::done:
      return;
  }
}

}  // namespace kas::api

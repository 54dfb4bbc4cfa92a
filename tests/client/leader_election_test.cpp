// client-go's tryAcquireOrRenew, as lease_attempt plays it: each case drives attempts by hand with
// the apiserver's answers and an injected local clock.
#include "client/leader_election.hpp"

#include <gtest/gtest.h>

#include "messages/codec.hpp"

namespace kas::api {
namespace {

using clock = lease_candidate::clock;
using std::chrono::seconds;

const lease_lock lock{"kube-system", "kube-actor-scheduler"};

http_response answer(int status, const leader_election_record& rec, const std::string& rv, encoding e) {
  http_response r;
  r.status = status;
  auto lease = lease_of(lock, rec, rv);
  if (e == encoding::protobuf) {
    r.content_type = "application/vnd.kubernetes.protobuf";
    r.body = codec::encode_protobuf(lease, "coordination.k8s.io/v1", "Lease");
  } else {
    r.content_type = "application/json";
    r.body = R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1",)" + codec::encode_json(lease).substr(1);
  }
  return r;
}

http_response status(int code, const std::string& reason) {
  http_response r;
  r.status = code;
  r.content_type = "application/json";
  r.body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":")" + reason + R"(","code":)" +
           std::to_string(code) + "}";
  return r;
}

// The record a request body carries.
leader_election_record sent(const http_request& req, std::string* rv = nullptr) {
  k8s::coordination::Lease l;
  auto st = decode_body(req.body, encoding_of(req.content_type).value_or(encoding::json), l);
  EXPECT_TRUE(st) << st.err().message;
  if (rv) *rv = l.metadata().resource_version();
  return record_of(l);
}

leader_election_record other(int64_t renew_us, int32_t transitions = 3) {
  leader_election_record r;
  r.holder = "other_1";
  r.lease_duration_seconds = 15;
  r.acquire_us = 1000;
  r.renew_us = renew_us;
  r.transitions = transitions;
  return r;
}

class LeaseCandidate : public ::testing::TestWithParam<encoding> {
protected:
  lease_candidate make(const std::string& id = "me_1") {
    candidate_options o;
    o.lock = lock;
    o.identity = id;
    o.lease_duration = seconds(15);
    o.enc = GetParam();
    return lease_candidate(o);
  }
  clock::time_point t0 = clock::time_point(seconds(1000));
};

TEST_P(LeaseCandidate, NoLeaseIsCreated) {
  auto c = make();
  auto a = lease_attempt::acquire_or_renew(c, t0, 5'000'000);
  EXPECT_EQ(a.next_request().method, "GET");
  EXPECT_EQ(a.next_request().path, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-actor-scheduler");
  a.on_response(status(404, "NotFound"), t0);
  ASSERT_TRUE(a.running());
  EXPECT_EQ(a.next_request().method, "POST");
  EXPECT_EQ(a.next_request().path, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases");
  auto rec = sent(a.next_request());
  EXPECT_EQ(rec.holder, "me_1");
  EXPECT_EQ(rec.lease_duration_seconds, 15);
  EXPECT_EQ(rec.acquire_us, 5'000'000);
  EXPECT_EQ(rec.renew_us, 5'000'000);
  EXPECT_EQ(rec.transitions, 0);
  a.on_response(answer(201, rec, "7", GetParam()), t0);
  EXPECT_FALSE(a.running());
  EXPECT_TRUE(a.acquired());
  EXPECT_TRUE(c.is_leader());
}

TEST_P(LeaseCandidate, AValidLeaseOfAnotherIsLeftAlone) {
  auto c = make();
  auto a = lease_attempt::acquire_or_renew(c, t0, 5'000'000);
  a.on_response(answer(200, other(4'000'000), "9", GetParam()), t0);
  EXPECT_FALSE(a.running());
  EXPECT_FALSE(a.acquired());
  EXPECT_EQ(a.message(), "lock is held by other_1 and has not yet expired");
}

// Expiry is judged on the local clock from when the record was first observed: the holder's
// timestamps (here years in the past) do not count, only whether the record changes.
TEST_P(LeaseCandidate, ExpiryFollowsTheLocalClockNotTheHoldersTimestamps) {
  auto c = make();
  auto stale = other(1);  // renewTime at the epoch: a holder whose clock is far behind
  auto a = lease_attempt::acquire_or_renew(c, t0, 5'000'000);
  a.on_response(answer(200, stale, "9", GetParam()), t0);
  EXPECT_FALSE(a.acquired()) << "a first sight of a record counts as fresh";
  // 14 s later the holder renewed (its record changed): the lease is valid from now on.
  auto renewed = other(2);
  auto b = lease_attempt::acquire_or_renew(c, t0 + seconds(14), 5'000'000);
  b.on_response(answer(200, renewed, "10", GetParam()), t0 + seconds(14));
  EXPECT_FALSE(b.acquired());
  // 28 s after t0 (14 s after the change): still valid.
  auto d = lease_attempt::acquire_or_renew(c, t0 + seconds(28), 5'000'000);
  d.on_response(answer(200, renewed, "10", GetParam()), t0 + seconds(28));
  EXPECT_FALSE(d.acquired());
  // 30 s after t0, 16 s without a change: expired, taken over with one more transition, on the
  // resourceVersion read.
  auto e = lease_attempt::acquire_or_renew(c, t0 + seconds(30), 6'000'000);
  e.on_response(answer(200, renewed, "10", GetParam()), t0 + seconds(30));
  ASSERT_TRUE(e.running());
  EXPECT_EQ(e.next_request().method, "PUT");
  std::string rv;
  auto rec = sent(e.next_request(), &rv);
  EXPECT_EQ(rv, "10");
  EXPECT_EQ(rec.holder, "me_1");
  EXPECT_EQ(rec.transitions, 4);
  EXPECT_EQ(rec.acquire_us, 6'000'000);
  e.on_response(answer(200, rec, "11", GetParam()), t0 + seconds(30));
  EXPECT_TRUE(e.acquired());
  EXPECT_TRUE(c.is_leader());
}

TEST_P(LeaseCandidate, TheLeaderRenewsOptimisticallyKeepingAcquireTime) {
  auto c = make();
  auto a = lease_attempt::acquire_or_renew(c, t0, 5'000'000);
  a.on_response(status(404, "NotFound"), t0);
  auto created = sent(a.next_request());
  a.on_response(answer(201, created, "7", GetParam()), t0);
  ASSERT_TRUE(a.acquired());
  auto r = lease_attempt::acquire_or_renew(c, t0 + seconds(2), 7'000'000);
  EXPECT_EQ(r.next_request().method, "PUT") << "no GET first";
  std::string rv;
  auto rec = sent(r.next_request(), &rv);
  EXPECT_EQ(rv, "7");
  EXPECT_EQ(rec.acquire_us, 5'000'000);
  EXPECT_EQ(rec.renew_us, 7'000'000);
  EXPECT_EQ(rec.transitions, 0);
  r.on_response(answer(200, rec, "8", GetParam()), t0 + seconds(2));
  EXPECT_TRUE(r.acquired());
  // A conflict on the optimistic write falls back to GET, then a conditional update.
  auto s = lease_attempt::acquire_or_renew(c, t0 + seconds(4), 9'000'000);
  s.on_response(status(409, "Conflict"), t0 + seconds(4));
  ASSERT_TRUE(s.running());
  EXPECT_EQ(s.next_request().method, "GET");
  auto mine = rec;
  s.on_response(answer(200, mine, "12", GetParam()), t0 + seconds(4));
  ASSERT_TRUE(s.running());
  auto again = sent(s.next_request(), &rv);
  EXPECT_EQ(rv, "12");
  EXPECT_EQ(again.acquire_us, 5'000'000);
  EXPECT_EQ(again.transitions, 0);
  s.on_response(status(409, "Conflict"), t0 + seconds(4));
  EXPECT_FALSE(s.running());
  EXPECT_FALSE(s.acquired());
  EXPECT_NE(s.message().find("failed to update lease kube-system/kube-actor-scheduler"), std::string::npos)
    << s.message();
}

TEST_P(LeaseCandidate, ALeaderThatSeesAnotherHolderIsNotLeader) {
  auto c = make();
  auto a = lease_attempt::acquire_or_renew(c, t0, 5'000'000);
  a.on_response(status(404, "NotFound"), t0);
  auto created = sent(a.next_request());
  a.on_response(answer(201, created, "7", GetParam()), t0);
  auto r = lease_attempt::acquire_or_renew(c, t0 + seconds(2), 7'000'000);
  r.on_response(status(409, "Conflict"), t0 + seconds(2));
  r.on_response(answer(200, other(8'000'000, 1), "20", GetParam()), t0 + seconds(2));
  EXPECT_FALSE(r.running());
  EXPECT_FALSE(r.acquired());
  EXPECT_FALSE(c.is_leader());
}

TEST_P(LeaseCandidate, ReleaseWritesAnEmptyHolderForOneSecond) {
  auto c = make();
  auto none = lease_attempt::release(c, 1);
  EXPECT_FALSE(none.running()) << "a standby has nothing to release";
  auto a = lease_attempt::acquire_or_renew(c, t0, 5'000'000);
  a.on_response(status(404, "NotFound"), t0);
  auto created = sent(a.next_request());
  a.on_response(answer(201, created, "7", GetParam()), t0);
  auto r = lease_attempt::release(c, 9'000'000);
  ASSERT_TRUE(r.running());
  EXPECT_EQ(r.next_request().method, "PUT");
  std::string rv;
  auto rec = sent(r.next_request(), &rv);
  EXPECT_EQ(rv, "7");
  EXPECT_EQ(rec.holder, "");
  EXPECT_EQ(rec.lease_duration_seconds, 1);
  EXPECT_EQ(rec.renew_us, 9'000'000);
  r.on_response(answer(200, rec, "8", GetParam()), t0);
  EXPECT_EQ(r.message(), "released");
  EXPECT_FALSE(c.is_leader());
  // Another candidate takes a released Lease at once: the empty holder is no valid lease.
  auto d = make("other_2");
  auto t = lease_attempt::acquire_or_renew(d, t0, 9'500'000);
  t.on_response(answer(200, rec, "8", GetParam()), t0);
  ASSERT_TRUE(t.running());
  EXPECT_EQ(sent(t.next_request()).transitions, 1);
}

TEST_P(LeaseCandidate, AFailedReadIsNotAnAcquisition) {
  auto c = make();
  auto a = lease_attempt::acquire_or_renew(c, t0, 5'000'000);
  http_response cut;
  cut.error = "connection reset";
  a.on_response(cut, t0);
  EXPECT_FALSE(a.running());
  EXPECT_FALSE(a.acquired());
  EXPECT_EQ(a.message(), "error retrieving resource lock kube-system/kube-actor-scheduler: connection reset");
  auto b = lease_attempt::acquire_or_renew(c, t0, 5'000'000);
  http_response junk;
  junk.status = 200;
  junk.content_type = "application/json";
  junk.body = "{\"spec\":";
  b.on_response(junk, t0);
  EXPECT_FALSE(b.acquired());
  EXPECT_NE(b.message().find("undecodable Lease"), std::string::npos) << b.message();
}

INSTANTIATE_TEST_SUITE_P(Encodings, LeaseCandidate, ::testing::Values(encoding::protobuf, encoding::json),
                         [](const auto& i) { return i.param == encoding::protobuf ? "protobuf" : "json"; });

TEST(LeaderIdentity, HostnameThenAUuid4) {
  auto a = leader_identity("node-1"), b = leader_identity("node-1");
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), std::string("node-1_").size() + 36);
  EXPECT_EQ(a.substr(0, 7), "node-1_");
  EXPECT_EQ(a[7 + 14], '4');
}

}  // namespace
}  // namespace kas::api

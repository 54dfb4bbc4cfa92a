// Delegated authentication and authorization of the secure port (client/delegated_auth.hpp) with the
// reviews faked: what is reviewed, what each answer becomes (kube's status codes and bodies), and
// the review cache (client/review_cache.hpp), its TTLs driven by a given clock.
#include <deque>
#include <mutex>

#include <gtest/gtest.h>

#include "client/delegated_auth.hpp"
#include "client/review_cache.hpp"

namespace kas::api {
namespace {

using namespace std::chrono_literals;

// Records each review posted; the test answers them in order (or answers are given up front).
struct fake_reviews {
  struct posted {
    std::string path, body;
    std::function<void(http_response)> done;
  };
  std::mutex mu;
  std::deque<posted> queue;
  std::vector<std::string> bodies;  // every request body, in order
  review_poster poster() {
    return [this](const std::string& path, std::string body, std::function<void(http_response)> done) {
      std::lock_guard<std::mutex> lock(mu);
      bodies.push_back(body);
      queue.push_back({path, std::move(body), std::move(done)});
    };
  }
  // Answers the oldest posted review.
  void answer(int status, const std::string& body, const std::string& error = "") {
    posted p;
    {
      std::lock_guard<std::mutex> lock(mu);
      ASSERT_FALSE(queue.empty());
      p = std::move(queue.front());
      queue.pop_front();
    }
    http_response r;
    r.status = status;
    r.body = body;
    r.error = error;
    p.done(r);
  }
  size_t waiting() {
    std::lock_guard<std::mutex> lock(mu);
    return queue.size();
  }
};

const char* const alice_ok =
  R"({"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","status":{"authenticated":true,)"
  R"("user":{"username":"alice","uid":"u1","groups":["team"]}}})";
const char* const rejected = R"({"kind":"TokenReview","status":{"authenticated":false,"error":"invalid bearer token"}})";
const char* const allowed_sar = R"({"kind":"SubjectAccessReview","status":{"allowed":true,"reason":"rule 1"}})";
const char* const denied_sar = R"({"kind":"SubjectAccessReview","status":{"allowed":false}})";

struct harness {
  fake_reviews authn, authz;
  delegated_auth auth;
  std::vector<auth_outcome> outcomes;
  explicit harness(delegated_auth_options o = {}) : auth(std::move(o), authn.poster(), authz.poster()) {}
  void check(const std::string& path, const std::string& token, const std::string& method = "GET") {
    auth.check(method, path, token, [this](auth_outcome o) { outcomes.push_back(std::move(o)); });
  }
};

TEST(DelegatedAuth, AlwaysAllowedPathsNeedNoReview) {
  harness h;
  h.check("/healthz", "");
  h.check("/readyz", "whatever-token");
  h.check("/livez", "");
  ASSERT_EQ(h.outcomes.size(), 3u);
  for (auto& o : h.outcomes) EXPECT_TRUE(o.allowed);
  EXPECT_EQ(h.authn.waiting() + h.authz.waiting(), 0u);
  EXPECT_TRUE(path_always_allowed({"/debug/*"}, "/debug/pprof"));
  EXPECT_TRUE(path_always_allowed({"healthz"}, "/healthz"));
  EXPECT_FALSE(path_always_allowed({"/healthz"}, "/healthz/ping"));
  EXPECT_FALSE(path_always_allowed({}, "/healthz"));
  EXPECT_EQ(split_paths(" /a, ,/b*,"), (std::vector<std::string>{"/a", "/b*"}));
}

TEST(DelegatedAuth, NoTokenIsAnonymousAndGoesToTheAccessReview) {
  harness h;
  h.check("/metrics", "");
  EXPECT_EQ(h.authn.waiting(), 0u);
  ASSERT_EQ(h.authz.waiting(), 1u);
  const std::string body = h.authz.bodies[0];
  EXPECT_NE(body.find(R"("user":"system:anonymous")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("groups":["system:unauthenticated"])"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("nonResourceAttributes":{"path":"/metrics","verb":"get"})"), std::string::npos) << body;
  EXPECT_EQ(h.authz.queue.front().path, "/apis/authorization.k8s.io/v1/subjectaccessreviews");
  h.authz.answer(201, denied_sar);
  ASSERT_EQ(h.outcomes.size(), 1u);
  EXPECT_FALSE(h.outcomes[0].allowed);
  EXPECT_EQ(h.outcomes[0].code, 403);
  EXPECT_EQ(h.outcomes[0].body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User )"
            R"(\"system:anonymous\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403})");
}

TEST(DelegatedAuth, RejectedTokenIs401AndCached) {
  harness h;
  h.check("/metrics", "bad");
  ASSERT_EQ(h.authn.waiting(), 1u);
  EXPECT_EQ(h.authn.queue.front().path, "/apis/authentication.k8s.io/v1/tokenreviews");
  EXPECT_EQ(h.authn.bodies[0],
            R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"bad"}})");
  h.authn.answer(201, rejected);
  h.check("/metrics", "bad");  // from the cache
  EXPECT_EQ(h.authn.waiting(), 0u);
  EXPECT_EQ(h.auth.token_reviews(), 1u);
  ASSERT_EQ(h.outcomes.size(), 2u);
  for (auto& o : h.outcomes) {
    EXPECT_EQ(o.code, 401);
    EXPECT_EQ(o.body, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized",)"
                      R"("reason":"Unauthorized","code":401})");
  }
  EXPECT_EQ(h.authz.waiting(), 0u);
}

TEST(DelegatedAuth, AuthenticatedUserIsAuthorizedWithItsGroupsAndBothAnswersAreCached) {
  harness h;
  h.check("/metrics", "good");
  h.authn.answer(201, alice_ok);
  ASSERT_EQ(h.authz.waiting(), 1u);
  const std::string body = h.authz.bodies[0];
  EXPECT_NE(body.find(R"("user":"alice")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("groups":["team","system:authenticated"])"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("uid":"u1")"), std::string::npos) << body;
  h.authz.answer(201, allowed_sar);
  h.check("/metrics", "good");
  EXPECT_EQ(h.authn.waiting() + h.authz.waiting(), 0u);
  ASSERT_EQ(h.outcomes.size(), 2u);
  EXPECT_TRUE(h.outcomes[0].allowed);
  EXPECT_TRUE(h.outcomes[1].allowed);
  EXPECT_EQ(h.outcomes[1].user, "alice");
  // Another verb is another question.
  h.check("/metrics", "good", "HEAD");
  ASSERT_EQ(h.authz.waiting(), 1u);
  EXPECT_NE(h.authz.bodies.back().find(R"("verb":"head")"), std::string::npos);
}

TEST(DelegatedAuth, DeniedUserGets403WithTheReviewsReason) {
  harness h;
  h.check("/metrics", "good");
  h.authn.answer(201, alice_ok);
  h.authz.answer(201, R"({"status":{"allowed":false,"reason":"no RBAC policy matched"}})");
  h.check("/metrics", "good");  // the denial is cached, with its reason
  ASSERT_EQ(h.outcomes.size(), 2u);
  for (auto& o : h.outcomes) {
    EXPECT_EQ(o.code, 403);
    EXPECT_NE(o.body.find(R"(forbidden: User \"alice\" cannot get path \"/metrics\": no RBAC policy matched)"),
              std::string::npos)
        << o.body;
  }
  EXPECT_EQ(h.auth.access_reviews(), 1u);
}

TEST(DelegatedAuth, SystemMastersNeedNoAccessReview) {
  harness h;
  h.check("/metrics", "admin");
  h.authn.answer(201, R"({"status":{"authenticated":true,"user":{"username":"root","groups":["system:masters"]}}})");
  ASSERT_EQ(h.outcomes.size(), 1u);
  EXPECT_TRUE(h.outcomes[0].allowed);
  EXPECT_EQ(h.authz.waiting(), 0u);
}

TEST(DelegatedAuth, FailedReviewsAreNotCached) {
  harness h;
  h.check("/metrics", "t");
  h.authn.answer(0, "", "Connection refused");
  ASSERT_EQ(h.outcomes.size(), 1u);
  EXPECT_EQ(h.outcomes[0].code, 401);
  EXPECT_NE(h.outcomes[0].note.find("Connection refused"), std::string::npos);
  h.check("/metrics", "t");  // asked again
  h.authn.answer(403, R"({"kind":"Status","message":"tokenreviews is forbidden"})");
  ASSERT_EQ(h.outcomes.size(), 2u);
  EXPECT_EQ(h.outcomes[1].code, 401);
  EXPECT_NE(h.outcomes[1].note.find("403"), std::string::npos) << h.outcomes[1].note;
  h.check("/metrics", "t");
  h.authn.answer(201, "{not json");
  EXPECT_EQ(h.outcomes.back().code, 401);
  EXPECT_EQ(h.auth.token_reviews(), 3u);
  // An access review that fails is kube's 500, and is asked again next time.
  h.check("/metrics", "");
  h.authz.answer(500, "oops");
  EXPECT_EQ(h.outcomes.back().code, 500);
  EXPECT_EQ(h.outcomes.back().body.rfind("Internal Server Error: \"/metrics\": ", 0), 0u) << h.outcomes.back().body;
  h.check("/metrics", "");
  EXPECT_EQ(h.authz.waiting(), 1u);
}

TEST(DelegatedAuth, ZeroTtlsTurnCachingOff) {
  delegated_auth_options o;
  o.authn_ttl = 0ms;
  o.allow_ttl = 0ms;
  harness h(o);
  for (int i = 0; i < 2; ++i) {
    h.check("/metrics", "good");
    h.authn.answer(201, alice_ok);
    h.authz.answer(201, allowed_sar);
  }
  EXPECT_EQ(h.auth.token_reviews(), 2u);
  EXPECT_EQ(h.auth.access_reviews(), 2u);
}

TEST(DelegatedAuth, ForbiddenMessagesAreSanitizedAndQuoted) {
  std::string b = forbidden_body("bob\"<x>", "get", "/a&b", "");
  EXPECT_NE(b.find(R"(User \"bob\\\"&lt;x&gt;\")"), std::string::npos) << b;
  EXPECT_NE(b.find("&amp;"), std::string::npos) << b;
}

TEST(ReviewCache, EntriesExpireAfterTheirTtl) {
  review_cache<int> c;
  auto t0 = review_cache<int>::clock::time_point{} + 1h;
  c.put("a", 1, 10s, t0);
  c.put("b", 2, 1s, t0);
  EXPECT_EQ(c.get("a", t0 + 9s), 1);
  EXPECT_EQ(c.get("b", t0 + 999ms), 2);
  EXPECT_FALSE(c.get("b", t0 + 1s));
  EXPECT_FALSE(c.get("a", t0 + 10s));
  EXPECT_EQ(c.size(), 0u);
  c.put("z", 3, 0s, t0);
  EXPECT_FALSE(c.get("z", t0));
}

TEST(ReviewCache, IsBoundedDroppingExpiredThenSoonestExpiring) {
  review_cache<int> c(2);
  auto t0 = review_cache<int>::clock::time_point{} + 1h;
  c.put("old", 1, 1s, t0);
  c.put("long", 2, 60s, t0);
  c.put("new", 3, 30s, t0 + 2s);  // "old" has expired: it goes
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.get("long", t0 + 2s), 2);
  c.put("newer", 4, 30s, t0 + 3s);  // nothing expired: the soonest to expire ("new") goes
  EXPECT_EQ(c.size(), 2u);
  EXPECT_FALSE(c.get("new", t0 + 3s));
  EXPECT_EQ(c.get("long", t0 + 3s), 2);
  EXPECT_EQ(c.get("newer", t0 + 3s), 4);
}

}  // namespace
}  // namespace kas::api

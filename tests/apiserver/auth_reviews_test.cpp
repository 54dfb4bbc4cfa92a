// The test apiserver's TokenReview and SubjectAccessReview from a static table (auth_reviews.hpp).
#include "tests/apiserver/auth_reviews.hpp"

#include <gtest/gtest.h>

namespace kas::testapi {
namespace {

const char* const table_json = R"({
  "tokens": [{"token": "t-alice", "username": "alice", "uid": "u1", "groups": ["team"]},
             {"token": "t-bob", "username": "bob"}],
  "rules": [{"user": "alice", "verbs": ["get"], "paths": ["/metrics"]},
            {"group": "ops", "verbs": ["*"], "paths": ["/debug/*"]}]
})";

auth_table table() {
  auto t = parse_auth_table(table_json, "table.json");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.err().message);
  return t.ok() ? *t : auth_table{};
}

std::string sar(const std::string& user, const std::string& groups, const std::string& verb, const std::string& path) {
  return R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":")" + user +
         R"(","groups":)" + groups + R"(,"nonResourceAttributes":{"path":")" + path + R"(","verb":")" + verb + R"("}}})";
}

const std::string tr_path = "/apis/authentication.k8s.io/v1/tokenreviews";
const std::string sar_path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

TEST(AuthReviews, OtherPathsAreNotOurs) {
  EXPECT_FALSE(answer_review(table(), "POST", "/api/v1/pods", "{}"));
  EXPECT_FALSE(answer_review(table(), "POST", tr_path + "/x", "{}"));
  auto get = answer_review(table(), "GET", tr_path, "");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
}

TEST(AuthReviews, TokenReviewAuthenticatesTheTableTokensOnly) {
  auto t = table();
  auto ok = answer_review(t, "POST", tr_path, R"({"kind":"TokenReview","spec":{"token":"t-alice"}})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 201);
  EXPECT_NE(ok->body.find(R"("status":{"authenticated":true,"user":{"username":"alice","uid":"u1","groups":["team"]}})"),
            std::string::npos)
      << ok->body;
  EXPECT_EQ(ok->body.find("t-alice"), std::string::npos) << "the token is not echoed";
  auto bad = answer_review(t, "POST", tr_path, R"({"spec":{"token":"nope"}})");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 201);
  EXPECT_NE(bad->body.find(R"("status":{"user":{}})"), std::string::npos) << bad->body;
  auto empty = answer_review(t, "POST", tr_path, R"({"spec":{}})");
  EXPECT_EQ(empty->status, 422);
  auto garbage = answer_review(t, "POST", tr_path, "{");
  EXPECT_EQ(garbage->status, 400);
}

TEST(AuthReviews, SubjectAccessReviewFollowsTheRules) {
  auto t = table();
  struct c {
    std::string body;
    bool allowed;
  } cases[] = {
      {sar("alice", "[]", "get", "/metrics"), true},
      {sar("alice", "[]", "head", "/metrics"), false},
      {sar("alice", "[]", "get", "/metrics/resources"), false},
      {sar("bob", R"(["ops"])", "post", "/debug/pprof"), true},
      {sar("bob", R"(["team"])", "get", "/debug/pprof"), false},
      {sar("system:anonymous", R"(["system:unauthenticated"])", "get", "/metrics"), false},
  };
  for (auto& x : cases) {
    SCOPED_TRACE(x.body);
    auto a = answer_review(t, "POST", sar_path, x.body);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->status, 201);
    EXPECT_EQ(a->body.find(R"("allowed":true)") != std::string::npos, x.allowed) << a->body;
  }
  auto resource = answer_review(
      t, "POST", sar_path, R"({"spec":{"user":"alice","resourceAttributes":{"verb":"get","resource":"pods"}}})");
  EXPECT_NE(resource->body.find(R"("allowed":false)"), std::string::npos);
  auto neither = answer_review(t, "POST", sar_path, R"({"spec":{"user":"alice"}})");
  EXPECT_EQ(neither->status, 422);
}

TEST(AuthReviews, BadTablesNameTheFileAndEntry) {
  struct c {
    const char* json;
    const char* says;
  } cases[] = {
      {"[]", "expected a JSON object"},
      {R"({"tokens": {}})", "tokens: expected a list"},
      {R"({"tokens": [{"token": "x"}]})", "tokens[0]: token and username are required"},
      {R"({"rules": [{"verbs": ["get"], "paths": ["/"]}]})", "rules[0]: give exactly one of user and group"},
      {R"({"rules": [{"user": "a", "paths": ["/"]}]})", "rules[0]: verbs and paths"},
      {R"({"token": []})", "unknown field \"token\""},
      {"{", "f.json"},
  };
  for (auto& x : cases) {
    SCOPED_TRACE(x.json);
    auto t = parse_auth_table(x.json, "f.json");
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.err().message.rfind("f.json", 0), 0u) << t.err().message;
    EXPECT_NE(t.err().message.find(x.says), std::string::npos) << t.err().message;
  }
  std::string err;
  EXPECT_FALSE(load_auth_table("/nonexistent/table.json", err));
  EXPECT_NE(err.find("--auth-table /nonexistent/table.json"), std::string::npos) << err;
}

}  // namespace
}  // namespace kas::testapi

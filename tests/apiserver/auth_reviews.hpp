#pragma once
// TokenReview (authentication.k8s.io/v1) and SubjectAccessReview (authorization.k8s.io/v1) for the
// test apiserver, answered from a static table given at start (--auth-table FILE), so the
// scheduler's delegated authentication and authorization (its secure port) can be tested without
// a real authenticator or RBAC. The table is JSON:
//
//   {"tokens": [{"token": "T", "username": "alice", "uid": "u-1", "groups": ["team"]}],
//    "rules":  [{"user": "alice", "verbs": ["get"], "paths": ["/metrics"]},
//               {"group": "monitoring", "verbs": ["*"], "paths": ["/metrics*"]}]}
//
// A TokenReview of a token in the table is authenticated as its user (groups as listed; the
// apiserver adds nothing), any other token is not (status.authenticated false). A
// SubjectAccessReview with nonResourceAttributes is allowed when a rule names the spec's user (or
// "*") or one of its groups, lists its verb (or "*") and matches its path (exact, or a prefix when
// the rule's path ends in "*", as RBAC's nonResourceURLs); the allowed answer's reason names the
// rule. Anything else is denied with no reason (as RBAC denies), resourceAttributes included.
// Without --auth-table the table is empty: no token authenticates and nothing is allowed. Both
// answer 201 with the review echoed and its status filled in, as kube-apiserver does.
//
// No h2o here: the routes call answer_review (server_routes.cpp), the unit tests call it directly.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/result.hpp"

namespace kas::testapi {

struct auth_token {
  std::string token, username, uid;
  std::vector<std::string> groups;
};

struct auth_rule {
  std::string user, group;
  std::vector<std::string> verbs, paths;
};

struct auth_table {
  std::vector<auth_token> tokens;
  std::vector<auth_rule> rules;
};

// Parses the table's JSON text; errors name `file` and the entry.
result<auth_table> parse_auth_table(const std::string& text, const std::string& file);

// --auth-table: reads and installs the table the routes answer from; false with `err` set.
bool load_auth_table(const std::string& path, std::string& err);

struct review_answer {
  int status = 201;
  std::string body;  // JSON: the review, or a metav1.Status on errors
};

// The answer when `path` is one of the two review endpoints, else nullopt (the request is not ours).
std::optional<review_answer> answer_review(const std::string& method, const std::string& path, std::string_view body);
// The same against a given table (tests).
std::optional<review_answer> answer_review(const auth_table& table, const std::string& method, const std::string& path,
                                           std::string_view body);

}  // namespace kas::testapi

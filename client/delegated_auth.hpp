#pragma once
// Delegated authentication and authorization for the scheduler's secure port, as kube-scheduler's
// 10259 does it (k8s.io/apiserver's DelegatingAuthenticationOptions / DelegatingAuthorizationOptions):
//
// 1. A path in always_allow_paths (default /healthz, /readyz, /livez; an entry ending in `*` is a
//    prefix) is allowed at once: no review. (kube authenticates a token sent to such a path first and
//    answers 401 for a bad one; here those paths skip both steps, so probes never cost a review.)
// 2. Authentication: no bearer token means the user system:anonymous in group system:unauthenticated
//    (kube's anonymous authenticator, on for delegated authentication). A token is sent to the
//    apiserver as a TokenReview (authentication.k8s.io/v1); not authenticated, or a review that
//    fails, is 401 with kube's Status body ("Unauthorized"). An authenticated user gets the group
//    system:authenticated added, as kube does.
// 3. Authorization: a user in an always_allow_groups group (default system:masters) is allowed
//    without a review. Otherwise a SubjectAccessReview (authorization.k8s.io/v1) asks whether the
//    user may `verb` (the request method in lower case: get, head) the non-resource path; denied is
//    403 with kube's Status body (`forbidden: User "alice" cannot get path "/metrics"`, then ": "
//    and the review's reason when it gives one); a review that fails is 500, as kube answers an
//    authorizer error.
//
// Answers are cached (review_cache.hpp): TokenReview results (both ways) for authn_ttl, allowed and
// denied SubjectAccessReviews for allow_ttl and deny_ttl (kube: 10 s each). Failed reviews are not
// cached. Tokens are kept only as SHA-256 digests.
//
// Nothing here blocks: check() answers at once from the rules and caches, or starts a review
// through a review_poster (the project's HTTP transport in production) and answers from its
// callback, on the transport's I/O thread. The posters' transports must be destroyed (their I/O
// threads joined) before this object, since their callbacks use it.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/http_transport.hpp"
#include "client/review_cache.hpp"
#include "messages/result.hpp"

namespace kas::api {

struct user_info {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
};

struct auth_outcome {
  bool allowed = false;
  int code = 403;  // when not allowed: 401, 403 or 500
  std::string content_type = "application/json";
  std::string body;  // the response body when not allowed
  std::string user;  // who the request was taken for, when known
  std::string note;  // why a review failed (for the log); empty otherwise
};

struct delegated_auth_options {
  std::vector<std::string> always_allow_paths{"/healthz", "/readyz", "/livez"};
  std::vector<std::string> always_allow_groups{"system:masters"};
  std::chrono::milliseconds authn_ttl{10000};  // --authentication-token-webhook-cache-ttl
  std::chrono::milliseconds allow_ttl{10000};  // --authorization-webhook-cache-authorized-ttl
  std::chrono::milliseconds deny_ttl{10000};   // --authorization-webhook-cache-unauthorized-ttl
};

struct access_review_result {
  bool allowed = false;
  std::string reason;
};

// Starts one POST of `body` (JSON) to `path` and calls `done` exactly once with the response.
using review_poster = std::function<void(const std::string& path, std::string body, std::function<void(http_response)>)>;

// A poster over `t` (not owned; it must outlive every call), each review limited to `timeout`.
review_poster post_through(http_transport* t, std::chrono::milliseconds timeout);

class delegated_auth {
public:
  delegated_auth(delegated_auth_options opts, review_poster authn, review_poster authz);
  delegated_auth(const delegated_auth&) = delete;
  delegated_auth& operator=(const delegated_auth&) = delete;

  // Thread-safe; calls `done` exactly once, now or from a review's callback.
  void check(const std::string& method, const std::string& path, const std::string& token,
             std::function<void(auth_outcome)> done);

  uint64_t token_reviews() const { return token_reviews_.load(); }    // TokenReviews sent
  uint64_t access_reviews() const { return access_reviews_.load(); }  // SubjectAccessReviews sent

private:
  struct authn_answer {
    bool authenticated = false;
    user_info user;
  };
  void authorize(const user_info& u, const std::string& verb, const std::string& path,
                 std::function<void(auth_outcome)> done);

  delegated_auth_options opts_;
  review_poster authn_, authz_;
  review_cache<authn_answer> authn_cache_;
  review_cache<access_review_result> authz_cache_;
  std::atomic<uint64_t> token_reviews_{0}, access_reviews_{0};
};

// Whether `path` matches one of kube's always-allow patterns: exact, or a prefix when the pattern
// ends in `*`. A pattern's leading `/` is optional, as kube's.
bool path_always_allowed(const std::vector<std::string>& patterns, const std::string& path);

// The comma-separated --authorization-always-allow-paths value as patterns (empty entries dropped).
std::vector<std::string> split_paths(const std::string& list);

// Request bodies and the decoding of the answers (exposed for tests).
std::string token_review_request(const std::string& token);
std::string access_review_request(const user_info& u, const std::string& verb, const std::string& path);
struct token_review_result {
  bool authenticated = false;
  user_info user;
  std::string error;  // status.error
};
result<token_review_result> parse_token_review(const http_response& r);
result<access_review_result> parse_access_review(const http_response& r);

// kube's response bodies (metav1.Status as JSON).
std::string unauthorized_body();
std::string forbidden_body(const std::string& user, const std::string& verb, const std::string& path,
                           const std::string& reason);

}  // namespace kas::api

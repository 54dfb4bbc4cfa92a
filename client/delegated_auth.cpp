#include "client/delegated_auth.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "config/yaml_guard.hpp"
#include "messages/codec.hpp"

namespace kas::api {

namespace {

constexpr const char* token_reviews_path = "/apis/authentication.k8s.io/v1/tokenreviews";
constexpr const char* access_reviews_path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

std::string json_string(const std::string& s) {
  std::string out;
  codec::append_json_string(out, s);
  return out;
}

// Go's %q of a string, for the ASCII text these messages hold: quotes and backslashes escaped.
std::string go_quote(const std::string& s) { return json_string(s); }

// responsewriters' sanitizer: nothing in an error may look like HTML.
std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

std::string sha256_hex(const std::string& s) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : d) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The response's JSON object, or why there is none (a transport failure, a non-2xx status, a body
// that does not parse).
result<YAML::Node> review_body(const http_response& r, const std::string& kind) {
  if (!r.error.empty()) return error{kind + ": " + r.error};
  if (r.status < 200 || r.status > 299) {
    std::string snippet = r.body.substr(0, 200);
    return error{kind + ": the apiserver answered " + std::to_string(r.status) + (snippet.empty() ? "" : ": " + snippet)};
  }
  auto docs = load_yaml(kind, r.body, yaml_input::json);
  if (!docs) return docs.err();
  if (docs->empty() || !(*docs)[0].root.IsMap()) return error{kind + ": the answer is not a JSON object"};
  return (*docs)[0].root;
}

YAML::Node child(const YAML::Node& n, const char* key) {
  if (!n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = n.begin(); it != n.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string scalar(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : std::string{}; }

std::string status_json(int code, const std::string& reason, const std::string& message, bool details) {
  return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":" +
         json_string(message) + ",\"reason\":" + json_string(reason) + (details ? ",\"details\":{}" : "") +
         ",\"code\":" + std::to_string(code) + "}";
}

auth_outcome allowed(const std::string& user = {}) {
  auth_outcome o;
  o.allowed = true;
  o.code = 200;
  o.user = user;
  return o;
}

auth_outcome unauthorized(std::string note = {}) {
  auth_outcome o;
  o.code = 401;
  o.body = unauthorized_body();
  o.note = std::move(note);
  return o;
}

}  // namespace

review_poster post_through(http_transport* t, std::chrono::milliseconds timeout) {
  return [t, timeout](const std::string& path, std::string body, std::function<void(http_response)> done) {
    http_request req;
    req.method = "POST";
    req.path = path;
    req.body = std::move(body);
    req.content_type = "application/json";
    req.accept = "application/json";
    req.timeout = timeout;
    t->start(std::move(req), {nullptr, nullptr, std::move(done)});
  };
}

bool path_always_allowed(const std::vector<std::string>& patterns, const std::string& path) {
  for (auto p : patterns) {
    if (p.empty()) continue;
    if (p.front() != '/') p = "/" + p;
    if (p.back() == '*') {
      if (path.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0) return true;
    } else if (p == path) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> split_paths(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string p = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t b = p.find_first_not_of(' '), e = p.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(p.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string token_review_request(const std::string& token) {
  return "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{\"token\":" +
         json_string(token) + "}}";
}

std::string access_review_request(const user_info& u, const std::string& verb, const std::string& path) {
  std::string groups;
  for (auto& g : u.groups) groups += (groups.empty() ? "" : ",") + json_string(g);
  std::string out = "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\",\"spec\":{"
                    "\"nonResourceAttributes\":{\"path\":" +
                    json_string(path) + ",\"verb\":" + json_string(verb) + "},\"user\":" + json_string(u.name) +
                    ",\"groups\":[" + groups + "]";
  if (!u.uid.empty()) out += ",\"uid\":" + json_string(u.uid);
  return out + "}}";
}

result<token_review_result> parse_token_review(const http_response& r) {
  auto body = review_body(r, "TokenReview");
  if (!body) return body.err();
  YAML::Node status = child(*body, "status");
  token_review_result out;
  out.authenticated = scalar(child(status, "authenticated")) == "true";
  out.error = scalar(child(status, "error"));
  YAML::Node user = child(status, "user");
  out.user.name = scalar(child(user, "username"));
  out.user.uid = scalar(child(user, "uid"));
  YAML::Node groups = child(user, "groups");
  if (groups.IsSequence())
    for (const auto& g : groups)
      if (g.IsScalar()) out.user.groups.push_back(g.Scalar());
  if (out.authenticated && out.user.name.empty())
    return error{"TokenReview: authenticated, but status.user.username is empty"};
  return out;
}

result<access_review_result> parse_access_review(const http_response& r) {
  auto body = review_body(r, "SubjectAccessReview");
  if (!body) return body.err();
  YAML::Node status = child(*body, "status");
  access_review_result out;
  out.allowed = scalar(child(status, "allowed")) == "true" && scalar(child(status, "denied")) != "true";
  out.reason = scalar(child(status, "reason"));
  if (!out.allowed) {
    std::string eval = scalar(child(status, "evaluationError"));
    if (!eval.empty() && out.reason.empty()) out.reason = eval;
  }
  return out;
}

std::string unauthorized_body() { return status_json(401, "Unauthorized", "Unauthorized", false); }

std::string forbidden_body(const std::string& user, const std::string& verb, const std::string& path,
                           const std::string& reason) {
  std::string msg = sanitize("User " + go_quote(user) + " cannot " + verb + " path " + go_quote(path));
  if (!reason.empty()) msg += ": " + reason;
  return status_json(403, "Forbidden", "forbidden: " + msg, true);
}

delegated_auth::delegated_auth(delegated_auth_options opts, review_poster authn, review_poster authz)
    : opts_(std::move(opts)), authn_(std::move(authn)), authz_(std::move(authz)) {}

void delegated_auth::check(const std::string& method, const std::string& path, const std::string& token,
                           std::function<void(auth_outcome)> done) {
  if (path_always_allowed(opts_.always_allow_paths, path)) return done(allowed());
  const std::string verb = lower(method);
  if (token.empty()) return authorize({"system:anonymous", "", {"system:unauthenticated"}}, verb, path, std::move(done));
  const std::string key = sha256_hex(token);
  if (auto hit = authn_cache_.get(key)) {
    if (!hit->authenticated) return done(unauthorized());
    return authorize(hit->user, verb, path, std::move(done));
  }
  ++token_reviews_;
  authn_(token_reviews_path, token_review_request(token),
         [this, key, verb, path, done = std::move(done)](http_response r) mutable {
           auto tr = parse_token_review(r);
           if (!tr) return done(unauthorized(tr.err().message));  // not cached: the next request asks again
           authn_answer a{tr->authenticated, tr->user};
           if (a.authenticated &&
               std::find(a.user.groups.begin(), a.user.groups.end(), "system:authenticated") == a.user.groups.end())
             a.user.groups.push_back("system:authenticated");
           authn_cache_.put(key, a, opts_.authn_ttl);
           if (!a.authenticated) return done(unauthorized(tr->error.empty() ? "" : "TokenReview: " + tr->error));
           authorize(a.user, verb, path, std::move(done));
         });
}

void delegated_auth::authorize(const user_info& u, const std::string& verb, const std::string& path,
                               std::function<void(auth_outcome)> done) {
  for (auto& g : u.groups)
    if (std::find(opts_.always_allow_groups.begin(), opts_.always_allow_groups.end(), g) != opts_.always_allow_groups.end())
      return done(allowed(u.name));
  std::string key = u.name + '\0' + u.uid + '\0' + verb + '\0' + path;
  for (auto& g : u.groups) key += '\0' + g;
  if (auto hit = authz_cache_.get(key)) {
    if (hit->allowed) return done(allowed(u.name));
    auth_outcome o;
    o.code = 403;
    o.user = u.name;
    o.body = forbidden_body(u.name, verb, path, hit->reason);
    return done(std::move(o));
  }
  ++access_reviews_;
  authz_(access_reviews_path, access_review_request(u, verb, path),
         [this, key, u, verb, path, done = std::move(done)](http_response r) mutable {
           auto ar = parse_access_review(r);
           if (!ar) {
             // kube's WithAuthorization answers an authorizer error with InternalError.
             auth_outcome o;
             o.code = 500;
             o.user = u.name;
             o.content_type = "text/plain; charset=utf-8";
             o.body = "Internal Server Error: " + go_quote(sanitize(path)) + ": " + ar.err().message;
             o.note = ar.err().message;
             return done(std::move(o));
           }
           authz_cache_.put(key, *ar, ar->allowed ? opts_.allow_ttl : opts_.deny_ttl);
           if (ar->allowed) return done(allowed(u.name));
           auth_outcome o;
           o.code = 403;
           o.user = u.name;
           o.body = forbidden_body(u.name, verb, path, ar->reason);
           done(std::move(o));
         });
}

}  // namespace kas::api

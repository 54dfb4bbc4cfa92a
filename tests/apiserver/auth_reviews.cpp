#include "tests/apiserver/auth_reviews.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "config/yaml_guard.hpp"
#include "tests/apiserver/json_tree.hpp"

namespace kas::testapi {

namespace {

const char* const token_reviews = "/apis/authentication.k8s.io/v1/tokenreviews";
const char* const access_reviews = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

std::string q(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + q(v[i]);
  return out + "]";
}

std::string str(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : std::string{}; }

std::vector<std::string> strings(const YAML::Node& n) {
  std::vector<std::string> out;
  if (n.IsSequence())
    for (const auto& e : n)
      if (e.IsScalar()) out.push_back(e.Scalar());
  return out;
}

review_answer status_error(int code, const std::string& reason, const std::string& message) {
  return {code, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":" +
                    q(message) + ",\"reason\":" + q(reason) + ",\"code\":" + std::to_string(code) + "}"};
}

result<YAML::Node> body_object(std::string_view body, const std::string& kind) {
  auto docs = load_yaml(kind, std::string(body), yaml_input::json);
  if (!docs) return docs.err();
  if (docs->empty() || !(*docs)[0].root.IsMap()) return error{kind + ": the body is not a JSON object"};
  return (*docs)[0].root;
}

bool matches(const std::vector<std::string>& patterns, const std::string& value) {
  for (const auto& p : patterns) {
    if (p == "*" || p == value) return true;
    if (!p.empty() && p.back() == '*' && value.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0) return true;
  }
  return false;
}

review_answer token_review(const auth_table& t, std::string_view body) {
  auto tree = body_object(body, "TokenReview");
  if (!tree) return status_error(400, "BadRequest", tree.err().message);
  const std::string token = str(at(at(*tree, "spec"), "token"));
  if (token.empty())
    return status_error(422, "Invalid", "TokenReview.authentication.k8s.io \"\" is invalid: spec.token: Required value");
  std::string status = "{\"user\":{}}";
  for (const auto& e : t.tokens)
    if (e.token == token) {
      status = "{\"authenticated\":true,\"user\":{\"username\":" + q(e.username) +
               (e.uid.empty() ? "" : ",\"uid\":" + q(e.uid)) + ",\"groups\":" + list(e.groups) + "}}";
      break;
    }
  // The token is not echoed back: nothing in the answer needs it.
  return {201, "{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\",\"metadata\":{\"creationTimestamp\":null},"
               "\"spec\":{},\"status\":" + status + "}"};
}

review_answer access_review(const auth_table& t, std::string_view body) {
  auto tree = body_object(body, "SubjectAccessReview");
  if (!tree) return status_error(400, "BadRequest", tree.err().message);
  YAML::Node spec = at(*tree, "spec");
  const std::string user = str(at(spec, "user"));
  const std::vector<std::string> groups = strings(at(spec, "groups"));
  YAML::Node nra = at(spec, "nonResourceAttributes");
  const bool resource = at(spec, "resourceAttributes").IsMap();
  if (nra.IsMap() == resource)
    return status_error(422, "Invalid", "SubjectAccessReview.authorization.k8s.io \"\" is invalid: spec: exactly one of "
                                        "nonResourceAttributes or resourceAttributes must be specified");
  if (user.empty() && groups.empty())
    return status_error(422, "Invalid", "SubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.user: Invalid "
                                        "value: \"\": at least one of user or group must be specified");
  std::string verb = str(at(nra, "verb")), path = str(at(nra, "path"));
  std::string status = "{\"allowed\":false}";
  if (!resource)
    for (size_t i = 0; i < t.rules.size(); ++i) {
      const auth_rule& r = t.rules[i];
      bool who = (!r.user.empty() && (r.user == "*" || r.user == user)) ||
                 (!r.group.empty() && std::find(groups.begin(), groups.end(), r.group) != groups.end());
      if (who && matches(r.verbs, verb) && matches(r.paths, path)) {
        status = "{\"allowed\":true,\"reason\":" + q("allowed by --auth-table rule " + std::to_string(i + 1)) + "}";
        break;
      }
    }
  return {201, "{\"kind\":\"SubjectAccessReview\",\"apiVersion\":\"authorization.k8s.io/v1\",\"metadata\":{\"creationTimestamp\":null},"
               "\"spec\":{\"nonResourceAttributes\":{\"path\":" + q(path) + ",\"verb\":" + q(verb) + "},\"user\":" + q(user) +
               ",\"groups\":" + list(groups) + "},\"status\":" + status + "}"};
}

std::shared_ptr<const auth_table>& installed() {
  static std::shared_ptr<const auth_table> table = std::make_shared<auth_table>();
  return table;
}

}  // namespace

result<auth_table> parse_auth_table(const std::string& text, const std::string& file) {
  auto docs = load_yaml(file, text, yaml_input::json);
  if (!docs) return docs.err();
  if (docs->empty() || !(*docs)[0].root.IsMap()) return error{file + ": expected a JSON object with tokens and rules"};
  const YAML::Node& root = (*docs)[0].root;
  for (auto it = root.begin(); it != root.end(); ++it)
    if (str(it->first) != "tokens" && str(it->first) != "rules")
      return error{file + ": unknown field \"" + str(it->first) + "\" (expected tokens, rules)"};
  auth_table t;
  YAML::Node tokens = at(root, "tokens"), rules = at(root, "rules");
  if (tokens.IsDefined() && !tokens.IsSequence()) return error{file + ": tokens: expected a list"};
  if (rules.IsDefined() && !rules.IsSequence()) return error{file + ": rules: expected a list"};
  if (tokens.IsSequence())
    for (size_t i = 0; i < tokens.size(); ++i) {
      const YAML::Node e = tokens[i];
      auth_token a{str(at(e, "token")), str(at(e, "username")), str(at(e, "uid")), strings(at(e, "groups"))};
      if (a.token.empty() || a.username.empty())
        return error{file + ": tokens[" + std::to_string(i) + "]: token and username are required"};
      t.tokens.push_back(std::move(a));
    }
  if (rules.IsSequence())
    for (size_t i = 0; i < rules.size(); ++i) {
      const YAML::Node e = rules[i];
      auth_rule r{str(at(e, "user")), str(at(e, "group")), strings(at(e, "verbs")), strings(at(e, "paths"))};
      if (r.user.empty() == r.group.empty())
        return error{file + ": rules[" + std::to_string(i) + "]: give exactly one of user and group"};
      if (r.verbs.empty() || r.paths.empty())
        return error{file + ": rules[" + std::to_string(i) + "]: verbs and paths must be non-empty lists"};
      t.rules.push_back(std::move(r));
    }
  return t;
}

bool load_auth_table(const std::string& path, std::string& err) {
  std::ifstream in(path);
  if (!in) {
    err = "--auth-table " + path + ": cannot read the file";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  auto t = parse_auth_table(ss.str(), "--auth-table " + path);
  if (!t) {
    err = t.err().message;
    return false;
  }
  installed() = std::make_shared<const auth_table>(std::move(*t));
  return true;
}

std::optional<review_answer> answer_review(const auth_table& table, const std::string& method, const std::string& path,
                                           std::string_view body) {
  if (path != token_reviews && path != access_reviews) return std::nullopt;
  if (method != "POST")
    return status_error(405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource (" + method + ")");
  return path == token_reviews ? token_review(table, body) : access_review(table, body);
}

std::optional<review_answer> answer_review(const std::string& method, const std::string& path, std::string_view body) {
  return answer_review(*installed(), method, path, body);
}

}  // namespace kas::testapi

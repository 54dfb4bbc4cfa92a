// Selector matching, and compilation of the API's selector shapes (core/v1 NodeSelector, meta/v1
// LabelSelector). A NodeSelector requirement that fails validation compiles to `invalid` and never
// matches (kube tolerates them in stored objects); a LabelSelector requirement that fails
// apimachinery's ValidateLabelSelectorRequirement is an error naming the field, as the apiserver
// would have rejected the object.
#include "cache/selectors.hpp"

#include <algorithm>

#include "cache/pod_info.hpp"
#include "messages/field_path.hpp"
#include "messages/name_validation.hpp"

namespace kas {
namespace detail {
bool parse_int64(const std::string& s, int64_t& out);
}  // namespace detail

namespace {

bool has_value(const selector_requirement& r, const std::string& v) {
  return std::find(r.values.begin(), r.values.end(), v) != r.values.end();
}

error at(const std::string& path, const std::string& msg) { return error{path + ": " + msg}; }


bool is_label_value(const std::string& v) {
  if (v.size() > 63) return false;
  if (v.empty()) return true;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (!alnum(v.front()) || !alnum(v.back())) return false;
  for (char c : v)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool parse_node_selector_op(const std::string& s, selector_op& op) {
  if (s == "In") op = selector_op::in;
  else if (s == "NotIn") op = selector_op::not_in;
  else if (s == "Exists") op = selector_op::exists;
  else if (s == "DoesNotExist") op = selector_op::does_not_exist;
  else if (s == "Gt") op = selector_op::gt;
  else if (s == "Lt") op = selector_op::lt;
  else return false;
  return true;
}

// labels.NewRequirement's validation; a requirement that fails it never matches.
selector_requirement compile_label_requirement(const std::string& key, const std::string& op_name,
                                               const google::protobuf::RepeatedPtrField<std::string>& values,
                                               bool allow_gt_lt) {
  selector_requirement r;
  r.key = key;
  r.values.assign(values.begin(), values.end());
  bool ok = parse_node_selector_op(op_name, r.op) &&
            (allow_gt_lt || (r.op != selector_op::gt && r.op != selector_op::lt));
  ok = ok && is_qualified_name(key);
  if (ok) {
    switch (r.op) {
      case selector_op::in:
      case selector_op::not_in:
        ok = !r.values.empty();
        break;
      case selector_op::exists:
      case selector_op::does_not_exist:
        ok = r.values.empty();
        break;
      case selector_op::gt:
      case selector_op::lt:
        ok = r.values.size() == 1 && detail::parse_int64(r.values[0], r.number);
        break;
    }
  }
  for (auto& v : r.values) ok = ok && is_label_value(v);
  r.invalid = !ok;
  return r;
}

// apimachinery's ValidateLabelSelectorRequirement, in its order: operator and values, key, values.
status_or_error check_label_requirement(const k8s::meta::LabelSelectorRequirement& e, const std::string& p,
                                        selector_requirement& r) {
  const bool op_ok = parse_node_selector_op(e.operator_(), r.op) && r.op != selector_op::gt && r.op != selector_op::lt;
  if (!op_ok) return at(p + ".operator", "Invalid value: " + quoted(e.operator_()) + ": not a valid selector operator");
  if ((r.op == selector_op::in || r.op == selector_op::not_in) && e.values().empty())
    return at(p + ".values", "Required value: must be specified when `operator` is 'In' or 'NotIn'");
  if ((r.op == selector_op::exists || r.op == selector_op::does_not_exist) && !e.values().empty())
    return at(p + ".values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
  if (!is_qualified_name(e.key()))
    return at(p + ".key", "Invalid value: " + quoted(e.key()) + ": must be a qualified name");
  for (int j = 0; j < e.values_size(); ++j)
    if (!is_label_value(e.values(j)))
      return at(p + ".values[" + std::to_string(j) + "]",
                "Invalid value: " + quoted(e.values(j)) + ": must be a valid label value");
  r.key = e.key();
  r.values.assign(e.values().begin(), e.values().end());
  return ok_t{};
}

}  // namespace

result<node_selector_term> compile_node_selector_term(const k8s::core::NodeSelectorTerm& t, const std::string&) {
  node_selector_term out;
  for (const auto& e : t.match_expressions())
    out.match_expressions.push_back(compile_label_requirement(e.key(), e.operator_(), e.values(), true));
  for (const auto& f : t.match_fields()) {
    selector_requirement r;
    r.key = f.key();
    r.values.assign(f.values().begin(), f.values().end());
    bool op_ok = parse_node_selector_op(f.operator_(), r.op) &&
                 (r.op == selector_op::in || r.op == selector_op::not_in);
    r.invalid = !(f.key() == "metadata.name" && op_ok && r.values.size() == 1);
    out.match_fields.push_back(std::move(r));
  }
  return out;
}

result<node_selector> compile_node_selector(const k8s::core::NodeSelector& ns, const std::string& path) {
  node_selector out;
  for (int i = 0; i < ns.node_selector_terms_size(); ++i) {
    auto t = compile_node_selector_term(ns.node_selector_terms(i),
                                        path + ".nodeSelectorTerms[" + std::to_string(i) + "]");
    if (!t) return t.err();
    out.terms.push_back(std::move(*t));
  }
  return out;
}

result<label_selector> compile_label_selector(const k8s::meta::LabelSelector* ls, const std::string& path) {
  label_selector out;
  if (ls == nullptr) {
    out.nothing = true;
    return out;
  }
  for (auto& [k, v] : ls->match_labels()) {
    if (!is_qualified_name(k))
      return at(path + ".matchLabels", "Invalid value: " + quoted(k) + ": must be a qualified name");
    if (!is_label_value(v))
      return at(path + ".matchLabels", "Invalid value: " + quoted(v) + ": must be a valid label value");
    selector_requirement r;
    r.key = k;
    r.op = selector_op::in;
    r.values = {v};
    out.requirements.push_back(std::move(r));
  }
  // Protobuf maps iterate in no fixed order; kube sorts requirements by key.
  std::sort(out.requirements.begin(), out.requirements.end(),
            [](const selector_requirement& a, const selector_requirement& b) { return a.key < b.key; });
  for (int i = 0; i < ls->match_expressions_size(); ++i) {
    selector_requirement r;
    auto s = check_label_requirement(ls->match_expressions(i), path + ".matchExpressions[" + std::to_string(i) + "]", r);
    if (!s) return s.err();
    out.requirements.push_back(std::move(r));
  }
  return out;
}


namespace detail {
// Go's strconv.ParseInt(s, 10, 64): optional sign, at least one digit, nothing else, no overflow.
bool parse_int64(const std::string& s, int64_t& out) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (i == s.size()) return false;
  // Accumulate as a negative number so that INT64_MIN parses.
  int64_t acc = 0;
  constexpr int64_t min = INT64_MIN;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c < '0' || c > '9') return false;
    int d = c - '0';
    if (acc < (min + d) / 10) return false;
    acc = acc * 10 - d;
  }
  if (!neg) {
    if (acc == min) return false;
    acc = -acc;
  }
  out = acc;
  return true;
}
}  // namespace detail

bool requirement_matches(const selector_requirement& r, const label_map& labels) {
  if (r.invalid) return false;
  const std::string* v = labels.get(r.key);
  switch (r.op) {
    case selector_op::in:
      return v != nullptr && has_value(r, *v);
    case selector_op::not_in:
      return v == nullptr || !has_value(r, *v);
    case selector_op::exists:
      return v != nullptr;
    case selector_op::does_not_exist:
      return v == nullptr;
    case selector_op::gt:
    case selector_op::lt: {
      int64_t n = 0;
      if (v == nullptr || !detail::parse_int64(*v, n)) return false;
      return r.op == selector_op::gt ? n > r.number : n < r.number;
    }
  }
  return false;
}

bool node_selector_term::matches(const label_map& node_labels, const std::string& node_name) const {
  if (match_expressions.empty() && match_fields.empty()) return false;
  for (const auto& r : match_expressions)
    if (!requirement_matches(r, node_labels)) return false;
  // matchFields knows only metadata.name with In/NotIn and exactly one value (checked at compile).
  for (const auto& r : match_fields) {
    if (r.invalid) return false;
    bool equal = !r.values.empty() && r.values.front() == node_name;
    if (r.op == selector_op::in ? !equal : equal) return false;
  }
  return true;
}

bool node_selector::matches(const label_map& node_labels, const std::string& node_name) const {
  for (const auto& t : terms)
    if (t.matches(node_labels, node_name)) return true;
  return false;
}

bool label_selector::matches(const label_map& labels) const {
  if (nothing) return false;
  for (const auto& r : requirements)
    if (!requirement_matches(r, labels)) return false;
  return true;
}

}  // namespace kas

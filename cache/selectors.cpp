#include "cache/selectors.hpp"

#include <algorithm>

namespace kas {
namespace {

bool has_value(const selector_requirement& r, const std::string& v) {
  return std::find(r.values.begin(), r.values.end(), v) != r.values.end();
}

}  // namespace

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

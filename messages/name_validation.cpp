#include "messages/name_validation.hpp"

namespace kas {

namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool is_dns_label(std::string_view s) {
  if (s.empty() || !lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  for (char c : s)
    if (!lower_alnum(c) && c != '-') return false;
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_name_part(std::string_view s) {
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

const char* const subdomain_rule =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const char* const label_rule =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const char* const name_part_rule =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const char* const value_rule =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

std::string too_long(size_t max) { return "must be no more than " + std::to_string(max) + " characters"; }

}  // namespace

std::string dns1123_subdomain_problem(std::string_view s) {
  if (s.size() > 253) return too_long(253);
  size_t b = 0;
  while (true) {
    size_t e = s.find('.', b);
    if (e == std::string_view::npos) e = s.size();
    if (!is_dns_label(s.substr(b, e - b))) return subdomain_rule;
    if (e == s.size()) return "";
    b = e + 1;
  }
}

std::string dns1123_label_problem(std::string_view s) {
  if (s.size() > 63) return too_long(63);
  return is_dns_label(s) ? "" : label_rule;
}

std::string qualified_name_problem(std::string_view s) {
  size_t slash = s.find('/');
  std::string_view name = slash == std::string_view::npos ? s : s.substr(slash + 1);
  if (slash != std::string_view::npos) {
    std::string_view prefix = s.substr(0, slash);
    if (prefix.empty()) return "prefix part must be non-empty";
    if (auto why = dns1123_subdomain_problem(prefix); !why.empty()) return "prefix part " + why;
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part " + too_long(63);
  return is_name_part(name) ? "" : name_part_rule;
}

std::string label_value_problem(std::string_view s) {
  if (s.size() > 63) return too_long(63);
  return s.empty() || is_name_part(s) ? "" : value_rule;
}

}  // namespace kas

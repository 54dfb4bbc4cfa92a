#include "config/object_validation.hpp"

#include <set>

#include "messages/field_path.hpp"

namespace kas {

namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool is_dns_label(const std::string& s, size_t b, size_t e) {
  if (b >= e || !lower_alnum(s[b]) || !lower_alnum(s[e - 1])) return false;
  for (size_t i = b; i < e; ++i)
    if (!lower_alnum(s[i]) && s[i] != '-') return false;
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_qualified_name_part(const std::string& s, size_t b, size_t e) {
  if (b >= e || !alnum(s[b]) || !alnum(s[e - 1])) return false;
  for (size_t i = b; i < e; ++i)
    if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
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

error invalid(const std::string& path, const std::string& value, const std::string& why) {
  return error{path + ": Invalid value: " + quoted(value) + ": " + why};
}

status_or_error check_name(const std::string& path, const std::string& name, bool label) {
  if (name.empty()) return error{path + ": Required value: name or generateName is required"};
  auto why = label ? dns1123_label_problem(name) : dns1123_subdomain_problem(name);
  if (!why.empty()) return invalid(path, name, why);
  return ok_t{};
}

template <class Map>
status_or_error check_labels(const std::string& path, const Map& labels) {
  for (const auto& [k, v] : labels) {
    if (auto why = label_key_problem(k); !why.empty()) return invalid(path, k, why);
    if (auto why = label_value_problem(v); !why.empty()) return invalid(path, v, why);
  }
  return ok_t{};
}

// metadata.name (a subdomain, or a label for `label_name` kinds), metadata.namespace, labels.
status_or_error check_meta(const k8s::meta::ObjectMeta& m, bool namespaced, bool label_name) {
  if (auto s = check_name("metadata.name", m.name(), label_name); !s) return s;
  if (namespaced && !m.namespace_().empty())
    if (auto why = dns1123_label_problem(m.namespace_()); !why.empty())
      return invalid("metadata.namespace", m.namespace_(), why);
  return check_labels("metadata.labels", m.labels());
}

}  // namespace

std::string dns1123_subdomain_problem(const std::string& s) {
  if (s.size() > 253) return too_long(253);
  size_t b = 0;
  while (true) {
    size_t e = s.find('.', b);
    if (e == std::string::npos) e = s.size();
    if (!is_dns_label(s, b, e)) return subdomain_rule;
    if (e == s.size()) return "";
    b = e + 1;
  }
}

std::string dns1123_label_problem(const std::string& s) {
  if (s.size() > 63) return too_long(63);
  return is_dns_label(s, 0, s.size()) ? "" : label_rule;
}

std::string label_key_problem(const std::string& s) {
  size_t slash = s.find('/');
  std::string name = slash == std::string::npos ? s : s.substr(slash + 1);
  if (slash != std::string::npos) {
    std::string prefix = s.substr(0, slash);
    if (prefix.empty()) return "prefix part must be non-empty";
    if (auto why = dns1123_subdomain_problem(prefix); !why.empty()) return "prefix part " + why;
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part " + too_long(63);
  return is_qualified_name_part(name, 0, name.size()) ? "" : name_part_rule;
}

std::string label_value_problem(const std::string& s) {
  if (s.size() > 63) return too_long(63);
  return s.empty() || is_qualified_name_part(s, 0, s.size()) ? "" : value_rule;
}

status_or_error validate_object(const k8s::core::Node& n) { return check_meta(n.metadata(), false, false); }

status_or_error validate_object(const k8s::core::Namespace& n) { return check_meta(n.metadata(), false, true); }

status_or_error validate_object(const k8s::scheduling::PriorityClass& pc) {
  return check_meta(pc.metadata(), false, false);
}

status_or_error validate_object(const k8s::policy::PodDisruptionBudget& pdb) {
  return check_meta(pdb.metadata(), true, false);
}

status_or_error validate_object(const k8s::core::Pod& p) {
  if (auto s = check_meta(p.metadata(), true, false); !s) return s;
  const auto& spec = p.spec();
  if (spec.containers_size() == 0) return error{"spec.containers: Required value"};
  std::set<std::string> names;
  auto check_containers = [&](const auto& list, const char* field) -> status_or_error {
    for (int i = 0; i < list.size(); ++i) {
      std::string path = std::string(field) + "[" + std::to_string(i) + "].name";
      if (auto s = check_name(path, list.Get(i).name(), true); !s)
        return list.Get(i).name().empty() ? error{path + ": Required value"} : s;
      if (!names.insert(list.Get(i).name()).second) return error{path + ": Duplicate value: " + quoted(list.Get(i).name())};
    }
    return ok_t{};
  };
  if (auto s = check_containers(spec.init_containers(), "spec.initContainers"); !s) return s;
  if (auto s = check_containers(spec.containers(), "spec.containers"); !s) return s;
  return check_labels("spec.nodeSelector", spec.node_selector());
}

}  // namespace kas

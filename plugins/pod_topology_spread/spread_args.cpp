#include "plugins/pod_topology_spread/spread_args.hpp"

#include "plugins/helper/args.hpp"

#include <initializer_list>
#include <regex>
#include <string_view>

namespace kas::plugins {

namespace {

using helper::check_keys;
using helper::quoted;
using helper::scalar;


const char* const qualified_name_msg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
  "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

// apimachinery's IsQualifiedName (metav1validation.ValidateLabelName): the first message, or "".
std::string label_name_error(const std::string& v) {
  static const std::regex name_re("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  static const std::regex dns_re("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  std::string name = v;
  auto slash = v.find('/');
  if (slash != std::string::npos) {
    if (v.find('/', slash + 1) != std::string::npos)
      return std::string("a qualified name ") + qualified_name_msg +
             " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
    std::string prefix = v.substr(0, slash);
    if (prefix.empty()) return "prefix part must be non-empty";
    if (prefix.size() > 253) return "prefix part must be no more than 253 characters";
    if (!std::regex_match(prefix, dns_re))
      return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
             "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    name = v.substr(slash + 1);
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part must be no more than 63 characters";
  if (!std::regex_match(name, name_re)) return std::string("name part ") + qualified_name_msg;
  return "";
}



// A string field that may be absent (""), as kube's decoder leaves it.
result<std::string> optional_string(const YAML::Node& parent, const char* key, const std::string& path) {
  YAML::Node n = parent[key];
  if (!n || n.IsNull()) return std::string();
  return scalar<std::string>(n, path + "." + key, "a string");
}

// One defaultConstraints entry, decoded and validated in kube's order (maxSkew, topologyKey,
// whenUnsatisfiable, labelSelector, duplicates).
result<spread_constraint> parse_constraint(const YAML::Node& n, const std::string& p,
                                           const std::vector<spread_constraint>& before, const std::string& list_path) {
  if (!n.IsMap()) return error{p + ": expected an object (TopologySpreadConstraint)"};
  if (auto st = check_keys(n, p,
                           {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                            "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"});
      !st)
    return st.err();
  spread_constraint c;
  c.max_skew = 0;
  if (n["maxSkew"] && !n["maxSkew"].IsNull()) {
    auto v = scalar<int32_t>(n["maxSkew"], p + ".maxSkew", "an integer");
    if (!v) return v.err();
    c.max_skew = *v;
  }
  if (c.max_skew <= 0)
    return error{p + ".maxSkew: Invalid value: " + std::to_string(c.max_skew) + ": not in valid range (0, inf)"};
  auto key = optional_string(n, "topologyKey", p);
  if (!key) return key.err();
  c.topology_key = *key;
  if (c.topology_key.empty()) return error{p + ".topologyKey: Required value: can not be empty"};
  if (auto msg = label_name_error(c.topology_key); !msg.empty())
    return error{p + ".topologyKey: Invalid value: " + quoted(c.topology_key) + ": " + msg};
  auto when = optional_string(n, "whenUnsatisfiable", p);
  if (!when) return when.err();
  if (when->empty()) return error{p + ".whenUnsatisfiable: Required value: can not be empty"};
  if (*when != "DoNotSchedule" && *when != "ScheduleAnyway")
    return error{p + ".whenUnsatisfiable: Unsupported value: " + quoted(*when) +
                 ": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""};
  c.do_not_schedule = *when == "DoNotSchedule";
  if (n["labelSelector"] && !n["labelSelector"].IsNull())
    return error{p + ".labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"};
  for (size_t i = 0; i < before.size(); ++i)
    if (before[i].topology_key == c.topology_key && before[i].do_not_schedule == c.do_not_schedule)
      return error{list_path + "[" + std::to_string(before.size()) + "]: Duplicate value: \"{" + c.topology_key +
                   ", " + *when + "}\""};
  // Not validated by kube's args validation; applied as filterTopologySpreadConstraints does.
  if (n["minDomains"] && !n["minDomains"].IsNull()) {
    auto v = scalar<int32_t>(n["minDomains"], p + ".minDomains", "an integer");
    if (!v) return v.err();
    c.min_domains = *v;
  }
  for (auto [field, target] : {std::pair{"nodeAffinityPolicy", &c.node_affinity_policy},
                               std::pair{"nodeTaintsPolicy", &c.node_taints_policy}}) {
    auto v = optional_string(n, field, p);
    if (!v) return v.err();
    if (!v->empty()) *target = *v == "Honor" ? node_inclusion_policy::honor : node_inclusion_policy::ignore;
  }
  return c;
}

}  // namespace

const std::vector<spread_constraint>& system_default_constraints() {
  static const std::vector<spread_constraint> list = [] {
    spread_constraint host;
    host.max_skew = 3;
    host.topology_key = "kubernetes.io/hostname";
    host.do_not_schedule = false;
    spread_constraint zone;
    zone.max_skew = 5;
    zone.topology_key = "topology.kubernetes.io/zone";
    zone.do_not_schedule = false;
    return std::vector<spread_constraint>{host, zone};
  }();
  return list;
}

result<pod_topology_spread_args> parse_pod_topology_spread_args(const YAML::Node& args, const std::string& path) {
  pod_topology_spread_args out;
  if (!args || args.IsNull()) return out;
  if (!args.IsMap()) return error{path + ": expected an object (PodTopologySpreadArgs)"};
  if (auto st = check_keys(args, path, {"apiVersion", "kind", "defaultConstraints", "defaultingType"}); !st)
    return st.err();
  auto type = optional_string(args, "defaultingType", path);
  if (!type) return type.err();
  if (type->empty()) *type = "System";
  if (*type != "System" && *type != "List")
    return error{path + ".defaultingType: Unsupported value: " + quoted(*type) +
                 ": supported values: \"System\", \"List\""};
  out.system_defaulting = *type == "System";

  const std::string list_path = path + ".defaultConstraints";
  YAML::Node list = args["defaultConstraints"];
  if (list && !list.IsNull()) {
    if (!list.IsSequence()) return error{list_path + ": expected a list"};
    if (out.system_defaulting && list.size() > 0)
      return error{path + ".defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"};
    for (size_t i = 0; i < list.size(); ++i) {
      auto c = parse_constraint(list[i], list_path + "[" + std::to_string(i) + "]", out.default_constraints, list_path);
      if (!c) return c.err();
      out.default_constraints.push_back(std::move(*c));
    }
  }
  return out;
}

}  // namespace kas::plugins

#include "plugins/node_resources_fit/fit_args.hpp"

#include "plugins/helper/args.hpp"

#include <cctype>
#include <initializer_list>
#include <string_view>

namespace kas::plugins {

namespace {

using helper::check_keys;
using helper::quoted;
using helper::scalar;

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// The name part of a Kubernetes qualified name (metav1validation.ValidateLabelName).
bool valid_name_part(std::string_view s) {
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool valid_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253 || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
          c == '.'))
      return false;
  return true;
}


// Returns an error message for a bad qualified name, or "".
std::string check_label_name(const std::string& v) {
  auto slash = v.find('/');
  std::string_view name = v;
  if (slash != std::string::npos) {
    if (!valid_dns_subdomain(std::string_view(v).substr(0, slash)))
      return "prefix part must be a lowercase RFC 1123 subdomain";
    name = std::string_view(v).substr(slash + 1);
  }
  if (!valid_name_part(name))
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
           "with an alphanumeric character";
  return "";
}



result<std::vector<std::string>> string_list(const YAML::Node& n, const std::string& path) {
  std::vector<std::string> out;
  if (!n || n.IsNull()) return out;
  if (!n.IsSequence()) return error{path + ": expected a list of strings"};
  for (size_t i = 0; i < n.size(); ++i) {
    auto s = scalar<std::string>(n[i], path + "[" + std::to_string(i) + "]", "a string");
    if (!s) return s.err();
    out.push_back(*s);
  }
  return out;
}

result<std::vector<resource_spec>> parse_resources(const YAML::Node& n, const std::string& path) {
  std::vector<resource_spec> out;
  if (!n || n.IsNull()) return out;
  if (!n.IsSequence()) return error{path + ": expected a list"};
  for (size_t i = 0; i < n.size(); ++i) {
    std::string p = path + "[" + std::to_string(i) + "]";
    if (!n[i].IsMap()) return error{p + ": expected an object {name, weight}"};
    if (auto st = check_keys(n[i], p, {"name", "weight"}); !st) return st.err();
    resource_spec r;
    if (n[i]["name"]) {
      auto s = scalar<std::string>(n[i]["name"], p + ".name", "a string");
      if (!s) return s.err();
      r.name = *s;
    }
    r.weight = 0;
    if (n[i]["weight"] && !n[i]["weight"].IsNull()) {
      auto w = scalar<int64_t>(n[i]["weight"], p + ".weight", "an integer");
      if (!w) return w.err();
      r.weight = *w;
    }
    if (r.weight == 0) r.weight = 1;  // v1 defaulting
    if (r.weight < 0 || r.weight > 100)
      return error{p + ".weight: Invalid value: " + std::to_string(r.weight) + ": resource weight of " + r.name +
                   " not in valid range (0, 100]"};
    if (r.name.empty()) return error{p + ".name: Required value: resource name must not be empty"};
    out.push_back(std::move(r));
  }
  return out;
}

result<std::vector<utilization_shape_point>> parse_shape(const YAML::Node& rtcr, const std::string& path) {
  const std::string p = path + ".shape";
  YAML::Node n = rtcr && rtcr.IsMap() ? rtcr["shape"] : YAML::Node();
  if (!n || n.IsNull() || (n.IsSequence() && n.size() == 0))
    return error{p + ": Required value: at least one point must be specified"};
  if (!n.IsSequence()) return error{p + ": expected a list"};
  std::vector<utilization_shape_point> out;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string ip = p + "[" + std::to_string(i) + "]";
    if (!n[i].IsMap()) return error{ip + ": expected an object {utilization, score}"};
    if (auto st = check_keys(n[i], ip, {"utilization", "score"}); !st) return st.err();
    utilization_shape_point pt;
    if (n[i]["utilization"]) {
      auto u = scalar<int32_t>(n[i]["utilization"], ip + ".utilization", "an integer");
      if (!u) return u.err();
      pt.utilization = *u;
    }
    if (n[i]["score"]) {
      auto s = scalar<int32_t>(n[i]["score"], ip + ".score", "an integer");
      if (!s) return s.err();
      pt.score = *s;
    }
    if (i > 0 && out.back().utilization >= pt.utilization)
      return error{ip + ".utilization: Invalid value: " + std::to_string(pt.utilization) +
                   ": utilization values must be sorted in increasing order"};
    if (pt.utilization < 0 || pt.utilization > 100)
      return error{ip + ".utilization: Invalid value: " + std::to_string(pt.utilization) +
                   ": not in valid range [0, 100]"};
    if (pt.score < 0 || pt.score > max_custom_priority_score)
      return error{ip + ".score: Invalid value: " + std::to_string(pt.score) + ": not in valid range [0, " +
                   std::to_string(max_custom_priority_score) + "]"};
    out.push_back(pt);
  }
  return out;
}

status_or_error parse_strategy(const YAML::Node& n, const std::string& path, node_resources_fit_args& out) {
  if (!n.IsMap()) return error{path + ": expected an object"};
  if (auto st = check_keys(n, path, {"type", "resources", "requestedToCapacityRatio"}); !st) return st;
  std::string type;
  if (n["type"] && !n["type"].IsNull()) {
    auto t = scalar<std::string>(n["type"], path + ".type", "a string");
    if (!t) return t.err();
    type = *t;
  }
  if (type == "LeastAllocated") {
    out.type = scoring_strategy_type::least_allocated;
  } else if (type == "MostAllocated") {
    out.type = scoring_strategy_type::most_allocated;
  } else if (type == "RequestedToCapacityRatio") {
    out.type = scoring_strategy_type::requested_to_capacity_ratio;
  } else {
    return error{path + ".type: Unsupported value: " + quoted(type) +
                 ": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""};
  }
  auto res = parse_resources(n["resources"], path + ".resources");
  if (!res) return res.err();
  if (!res->empty()) out.resources = std::move(*res);
  YAML::Node rtcr = n["requestedToCapacityRatio"];
  if (rtcr && !rtcr.IsNull()) {
    if (!rtcr.IsMap()) return error{path + ".requestedToCapacityRatio: expected an object"};
    if (auto st = check_keys(rtcr, path + ".requestedToCapacityRatio", {"shape"}); !st) return st;
  }
  if (out.type == scoring_strategy_type::requested_to_capacity_ratio || (rtcr && !rtcr.IsNull())) {
    auto shape = parse_shape(rtcr, path + ".requestedToCapacityRatio");
    if (!shape) return shape.err();
    out.shape = std::move(*shape);
  }
  return ok_t{};
}

}  // namespace

result<node_resources_fit_args> parse_node_resources_fit_args(const YAML::Node& args, const std::string& path) {
  node_resources_fit_args out;
  if (!args || args.IsNull()) return out;
  if (!args.IsMap()) return error{path + ": expected an object (NodeResourcesFitArgs)"};
  if (auto st = check_keys(args, path,
                           {"apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"});
      !st)
    return st.err();

  auto ignored = string_list(args["ignoredResources"], path + ".ignoredResources");
  if (!ignored) return ignored.err();
  for (size_t i = 0; i < ignored->size(); ++i) {
    const auto& v = (*ignored)[i];
    if (auto msg = check_label_name(v); !msg.empty())
      return error{path + ".ignoredResources[" + std::to_string(i) + "]: Invalid value: " + quoted(v) + ": " + msg};
    out.ignored_resources.insert(v);
  }
  auto groups = string_list(args["ignoredResourceGroups"], path + ".ignoredResourceGroups");
  if (!groups) return groups.err();
  for (size_t i = 0; i < groups->size(); ++i) {
    const auto& v = (*groups)[i];
    std::string p = path + ".ignoredResourceGroups[" + std::to_string(i) + "]";
    if (v.find('/') != std::string::npos)
      return error{p + ": Invalid value: " + quoted(v) + ": resource group name can't contain '/'"};
    if (auto msg = check_label_name(v); !msg.empty()) return error{p + ": Invalid value: " + quoted(v) + ": " + msg};
    out.ignored_resource_groups.insert(v);
  }

  YAML::Node strategy = args["scoringStrategy"];
  if (strategy && !strategy.IsNull())
    if (auto st = parse_strategy(strategy, path + ".scoringStrategy", out); !st) return st.err();
  return out;
}

}  // namespace kas::plugins

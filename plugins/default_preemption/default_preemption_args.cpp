// DefaultPreemptionArgs: decoded, defaulted (v1 SetDefaults_DefaultPreemptionArgs: 10 and 100) and
// validated as kube's ValidateDefaultPreemptionArgs, with kube's field.Invalid texts. kube
// aggregates every error; here the first one is reported, like every other args decoder.
#include <string_view>

#include "plugins/default_preemption/default_preemption.hpp"

namespace kas::plugins {

namespace {

result<int32_t> int_field(const YAML::Node& n, const std::string& path) {
  try {
    return n.as<int32_t>();
  } catch (const YAML::Exception&) {
    return error{path + ": expected an integer, got \"" + YAML::Dump(n) + "\""};
  }
}

std::string invalid(const std::string& path, int32_t v, std::string_view why) {
  return path + ": Invalid value: " + std::to_string(v) + ": " + std::string(why);
}

}  // namespace

result<default_preemption_args> parse_default_preemption_args(const YAML::Node& args, const std::string& path) {
  default_preemption_args out;
  if (!args || args.IsNull()) return out;
  if (!args.IsMap()) return error{path + ": expected an object (DefaultPreemptionArgs)"};
  const std::string pct_path = path + ".minCandidateNodesPercentage";
  const std::string abs_path = path + ".minCandidateNodesAbsolute";
  for (auto it = args.begin(); it != args.end(); ++it) {
    auto key = it->first.as<std::string>();
    if (key == "apiVersion" || key == "kind") continue;
    if (key == "minCandidateNodesPercentage") {
      auto v = int_field(it->second, pct_path);
      if (!v) return v.err();
      out.min_candidate_nodes_percentage = *v;
    } else if (key == "minCandidateNodesAbsolute") {
      auto v = int_field(it->second, abs_path);
      if (!v) return v.err();
      out.min_candidate_nodes_absolute = *v;
    } else {
      return error{path + "." + key + ": unknown field"};
    }
  }
  if (out.min_candidate_nodes_percentage < 0 || out.min_candidate_nodes_percentage > 100)
    return error{invalid(pct_path, out.min_candidate_nodes_percentage, "not in valid range [0, 100]")};
  if (out.min_candidate_nodes_absolute < 0)
    return error{invalid(abs_path, out.min_candidate_nodes_absolute, "not in valid range [0, inf)")};
  if (out.min_candidate_nodes_percentage == 0 && out.min_candidate_nodes_absolute == 0)
    return error{invalid(pct_path, 0, "cannot be zero at the same time as minCandidateNodesAbsolute")};
  return out;
}

}  // namespace kas::plugins

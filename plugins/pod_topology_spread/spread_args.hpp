#pragma once
// PodTopologySpreadArgs: decoded, defaulted (kube's v1 SetDefaults_PodTopologySpreadArgs:
// defaultingType System when unset) and validated (ValidatePodTopologySpreadArgs) at the edge.
// Errors name the field path under `path`.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cache/pod_info.hpp"
#include "messages/result.hpp"

namespace kas::plugins {

struct pod_topology_spread_args {
  // defaultingType: System uses kube's system defaults; List uses default_constraints as given.
  bool system_defaulting = true;
  // The List constraints; their selectors are deduced per pod, so the selector here is unused.
  std::vector<spread_constraint> default_constraints;
};

result<pod_topology_spread_args> parse_pod_topology_spread_args(const YAML::Node& args, const std::string& path);

// kube's systemDefaultConstraints: {maxSkew 3, kubernetes.io/hostname, ScheduleAnyway} and
// {maxSkew 5, topology.kubernetes.io/zone, ScheduleAnyway}.
const std::vector<spread_constraint>& system_default_constraints();

}  // namespace kas::plugins

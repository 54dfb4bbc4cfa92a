#pragma once
// NodeResourcesFitArgs: decoded, defaulted (kube's v1 SetDefaults_NodeResourcesFitArgs) and
// validated (ValidateNodeResourcesFitArgs) at the edge. Errors name the field path under `path`.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"

namespace kas::plugins {

enum class scoring_strategy_type { least_allocated, most_allocated, requested_to_capacity_ratio };

// Which node_info field a configured resource reads, decided once (the plugin constructors call
// classify_resources) so Score never compares resource names per node.
enum class resource_kind : uint8_t { unknown, cpu, memory, ephemeral_storage, scalar };

struct resource_spec {
  std::string name;
  int64_t weight = 1;
  resource_kind kind = resource_kind::unknown;
};

resource_kind classify_resource(const std::string& name);
void classify_resources(std::vector<resource_spec>& resources);

// A point of the RequestedToCapacityRatio shape: utilization in [0, 100], score in [0, 10].
struct utilization_shape_point {
  int32_t utilization = 0;
  int32_t score = 0;
};

struct node_resources_fit_args {
  scoring_strategy_type type = scoring_strategy_type::least_allocated;
  std::vector<resource_spec> resources{{"cpu", 1}, {"memory", 1}};
  std::vector<utilization_shape_point> shape;  // RequestedToCapacityRatio only
  std::set<std::string, std::less<>> ignored_resources;
  std::set<std::string, std::less<>> ignored_resource_groups;
};

// kube's config.MaxCustomPriorityScore: shape scores are in [0, 10] and scaled to [0, 100].
inline constexpr int32_t max_custom_priority_score = 10;

result<node_resources_fit_args> parse_node_resources_fit_args(const YAML::Node& args, const std::string& path);

}  // namespace kas::plugins

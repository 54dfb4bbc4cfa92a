#pragma once
// A resolved scheduling profile: for each extension point, the plugin names in the order they run,
// plus score weights and plugin args. KubeSchedulerConfiguration decoding (issue #3) produces these;
// default_profile() is what kube-scheduler runs with no config file.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace kas {

struct profile_config {
  std::string scheduler_name = "default-scheduler";
  std::optional<int32_t> percentage_of_nodes_to_score;  // nullopt = adaptive

  std::vector<std::string> pre_enqueue, queue_sort, pre_filter, filter, post_filter, pre_score, score,
    reserve, permit, pre_bind, bind, post_bind;
  std::map<std::string, int32_t> score_weights;  // plugin -> weight (>= 1)
  std::map<std::string, YAML::Node> plugin_args;
  // Where each plugin's args came from, for error paths ("profiles[0].pluginConfig[1].args").
  std::map<std::string, std::string> plugin_args_path;
};

// kube-scheduler v1.36's default profile, restricted to the plugins this build registers.
profile_config default_profile();

}  // namespace kas

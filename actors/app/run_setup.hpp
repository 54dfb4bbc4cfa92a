#pragma once
// What `simulate` and `bench` do before anything runs: check --output, load the config file (its
// KubeSchedulerConfiguration and ActorRuntimeConfiguration documents) and print its warnings.
#include <optional>
#include <string>

#include "plugins/framework/runtime/profile_resolver.hpp"

namespace kas {

// The loaded config, or nullopt after printing "error: ..." to stderr (the command exits 2).
std::optional<scheduler_config> load_run_config(const std::string& output, const std::string& config);

}  // namespace kas

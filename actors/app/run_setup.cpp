#include "actors/app/run_setup.hpp"

#include <iostream>

#include "plugins/framework/registry.hpp"

namespace kas {

std::optional<scheduler_config> load_run_config(const std::string& output, const std::string& config) {
  if (output != "json" && output != "table") {
    std::cerr << "error: --output: must be json or table, got \"" << output << "\"\n";
    return std::nullopt;
  }
  auto cfg = fw::load_scheduler_config(config, fw::in_tree_registry());
  if (!cfg) {
    std::cerr << "error: " << cfg.err().message << "\n";
    return std::nullopt;
  }
  for (auto& w : cfg->warnings) std::cerr << "warning: " << w << "\n";
  return std::move(*cfg);
}

}  // namespace kas

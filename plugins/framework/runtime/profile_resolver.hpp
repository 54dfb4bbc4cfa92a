#pragma once
// The registry side of KubeSchedulerConfiguration resolution: config/ resolves multiPoint and the
// per-point plugin sets against a plugin_catalog, and this catalog answers from the plugin
// registry. Each registered plugin is built once with default args and probed with dynamic_cast
// for the extension-point interfaces it implements; pluginConfig args are checked by running the
// plugin's factory on them. config/ cannot do this itself: plugins/ links config/, not the reverse.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "config/kube_scheduler_config.hpp"
#include "config/runtime_config.hpp"
#include "plugins/framework/registry.hpp"

namespace kas::fw {

// Which of kas::ext_point's interfaces `p` implements (bits of point_bit).
uint32_t plugin_points(const plugin& p);

class registry_catalog final : public plugin_catalog {
public:
  // `reg` must outlive the catalog.
  explicit registry_catalog(const registry& reg);

  std::optional<uint32_t> points(std::string_view name) const override;
  status_or_error check_args(std::string_view name, const YAML::Node& args, const std::string& path) const override;

private:
  const registry& reg_;
  std::map<std::string, uint32_t, std::less<>> points_;
};

// load_scheduler_config with profiles resolved against `reg`.
result<scheduler_config> load_scheduler_config(const std::string& path, const registry& reg);

}  // namespace kas::fw

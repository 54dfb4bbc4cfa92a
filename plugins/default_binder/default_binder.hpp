#pragma once
// DefaultBinder (Bind): posts a Binding through the cluster client (kube-scheduler's
// plugins/defaultbinder). The bind is asynchronous: bind() returns Pending and the client calls
// `done` once.
#include <memory>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

class default_binder final : public fw::bind_plugin {
public:
  static constexpr std::string_view plugin_name = "DefaultBinder";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);
  explicit default_binder(std::shared_ptr<fw::cluster_client> client) : client_(std::move(client)) {}

  std::string_view name() const override { return plugin_name; }
  fw::status bind(const fw::cycle_state& state, const pod_info& pod, const std::string& node,
                  fw::bind_callback done) const override;

private:
  std::shared_ptr<fw::cluster_client> client_;  // shared with the handle: alive while this plugin is
};

}  // namespace kas::plugins

#pragma once
// The plugin registry: one explicit map from kube-scheduler plugin names to factories. A factory
// decodes and validates its typed args before building anything and returns an error naming the bad
// arg. A duplicate name is an error. register_in_tree_plugins() (plugins/in_tree.cpp) is the single
// place every in-tree plugin is listed.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::fw {

// `args` may be a null node (no pluginConfig entry): the plugin uses its defaults. `path` prefixes
// errors ("profiles[0].pluginConfig[1].args").
using factory =
  std::function<result<std::shared_ptr<plugin>>(const YAML::Node& args, const std::string& path, const handle& h)>;

class registry {
public:
  status_or_error add(std::string_view name, factory f);
  const factory* find(std::string_view name) const;
  const std::map<std::string, factory, std::less<>>& all() const { return factories_; }

private:
  std::map<std::string, factory, std::less<>> factories_;
};

// Registers every in-tree plugin.
registry in_tree_registry();

}  // namespace kas::fw

#pragma once
// Shared pieces of plugin argument decoding: every factory validates its args at the edge and
// reports the first problem with its field path ("profiles[0].pluginConfig[1].args.x: ...").
#include <initializer_list>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "messages/field_path.hpp"
#include "messages/result.hpp"

namespace kas::plugins::helper {

using kas::quoted;

// Every key of mapping `n` must be one of `allowed`; an unknown one is an error naming its path.
inline status_or_error check_keys(const YAML::Node& n, const std::string& path,
                                  std::initializer_list<std::string_view> allowed) {
  for (auto it = n.begin(); it != n.end(); ++it) {
    auto key = it->first.as<std::string>();
    bool ok = false;
    for (auto a : allowed) ok = ok || a == key;
    if (!ok) return error{path + "." + key + ": unknown field"};
  }
  return ok_t{};
}

// A scalar of type T at `path`; `what` names the expected type ("an integer").
template <class T>
result<T> scalar(const YAML::Node& n, const std::string& path, const char* what) {
  if (!n.IsScalar()) return error{path + ": expected " + what};
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    return error{path + ": expected " + what + ", got " + quoted(n.Scalar())};
  }
}

}  // namespace kas::plugins::helper

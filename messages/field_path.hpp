#pragma once
// Field paths in error messages: every decoder of outside input names the field it rejects, as
// "file.yaml: document 2 (Pod default/web): spec.containers[0].resources.requests.cpu: ...". This is
// the one place that joins path segments and quotes values for those messages.
#include <string>

namespace kas {

// Appends `key` to `path`: "" + "a" -> "a"; "a" + "b" -> "a.b"; "file.yaml:" + "a" -> "file.yaml: a"
// (a location prefix that ends in ':' is followed by a space, not a dot).
inline std::string field_path(const std::string& path, const std::string& key) {
  if (path.empty()) return key;
  if (path.back() == ':') return path + " " + key;
  return path + "." + key;
}

// A value as error messages show it: "value".
inline std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace kas

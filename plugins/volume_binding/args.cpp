#include "plugins/volume_binding/args.hpp"

#include "plugins/helper/args.hpp"

namespace kas::plugins {

namespace {

using helper::check_keys;
using helper::scalar;

constexpr int32_t max_custom_priority_score = 10;

// Go's %#v of the shape, which is how field.Invalid prints a slice of structs.
std::string go_value(const std::vector<volume_shape_point>& shape) {
  std::string s = "[]config.UtilizationShapePoint{";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += "config.UtilizationShapePoint{Utilization:" + std::to_string(shape[i].utilization) +
         ", Score:" + std::to_string(shape[i].score) + "}";
  }
  return s + "}";
}

result<std::vector<volume_shape_point>> decode_shape(const YAML::Node& n, const std::string& p) {
  std::vector<volume_shape_point> out;
  if (!n.IsSequence()) return error{p + ": expected a list"};
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string ip = p + "[" + std::to_string(i) + "]";
    if (!n[i].IsMap()) return error{ip + ": expected an object {utilization, score}"};
    if (auto st = check_keys(n[i], ip, {"utilization", "score"}); !st) return st.err();
    volume_shape_point pt;
    if (n[i]["utilization"] && !n[i]["utilization"].IsNull()) {
      auto u = scalar<int32_t>(n[i]["utilization"], ip + ".utilization", "an integer");
      if (!u) return u.err();
      pt.utilization = *u;
    }
    if (n[i]["score"] && !n[i]["score"].IsNull()) {
      auto s = scalar<int32_t>(n[i]["score"], ip + ".score", "an integer");
      if (!s) return s.err();
      pt.score = *s;
    }
    out.push_back(pt);
  }
  return out;
}

// kube's validateFunctionShape, reporting its first error.
status_or_error validate_shape(const std::vector<volume_shape_point>& shape, const std::string& p) {
  if (shape.empty()) return error{p + ": Required value: at least one point must be specified"};
  for (size_t i = 1; i < shape.size(); ++i)
    if (shape[i - 1].utilization >= shape[i].utilization)
      return error{p + "[" + std::to_string(i) + "].utilization: Invalid value: " +
                   std::to_string(shape[i].utilization) + ": values must be sorted in increasing order"};
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::string ip = p + "[" + std::to_string(i) + "]";
    if (shape[i].utilization < 0 || shape[i].utilization > 100)
      return error{ip + ".utilization: Invalid value: " + std::to_string(shape[i].utilization) +
                   ": not in valid range [0, 100]"};
    if (shape[i].score < 0 || shape[i].score > max_custom_priority_score)
      return error{ip + ".score: Invalid value: " + std::to_string(shape[i].score) + ": not in valid range [0, " +
                   std::to_string(max_custom_priority_score) + "]"};
  }
  return ok_t{};
}

}  // namespace

result<volume_binding_args> parse_volume_binding_args(const YAML::Node& args, const std::string& path,
                                                      const volume_binding_features& features) {
  volume_binding_args out;
  bool shape_set = false;
  if (args && !args.IsNull()) {
    if (!args.IsMap()) return error{path + ": expected an object (VolumeBindingArgs)"};
    if (auto st = check_keys(args, path, {"apiVersion", "kind", "bindTimeoutSeconds", "shape"}); !st)
      return st.err();
    // v1 keeps an explicit 0 (the field is a pointer there); only an absent value defaults to 600.
    if (args["bindTimeoutSeconds"] && !args["bindTimeoutSeconds"].IsNull()) {
      auto t = scalar<int64_t>(args["bindTimeoutSeconds"], path + ".bindTimeoutSeconds", "an integer");
      if (!t) return t.err();
      out.bind_timeout_seconds = *t;
    }
    if (args["shape"] && !args["shape"].IsNull()) {
      auto s = decode_shape(args["shape"], path + ".shape");
      if (!s) return s.err();
      out.shape = std::move(*s);
      shape_set = true;
    }
  }
  if (features.storage_capacity_scoring && out.shape.empty()) {
    out.shape = {{0, max_custom_priority_score}, {100, 0}};
    shape_set = true;
  }
  if (out.bind_timeout_seconds < 0)
    return error{path + ".bindTimeoutSeconds: Invalid value: " + std::to_string(out.bind_timeout_seconds) +
                 ": invalid BindTimeoutSeconds, should not be a negative value"};
  if (features.storage_capacity_scoring) {
    if (auto st = validate_shape(out.shape, path + ".shape"); !st) return st.err();
  } else if (shape_set) {
    return error{path + ".shape: Invalid value: " + go_value(out.shape) +
                 ": unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"};
  }
  return out;
}

}  // namespace kas::plugins

#include "config/object_validation.hpp"

#include <set>

#include "messages/field_path.hpp"

namespace kas {

namespace {

error invalid(const std::string& path, const std::string& value, const std::string& why) {
  return error{path + ": Invalid value: " + quoted(value) + ": " + why};
}

status_or_error check_name(const std::string& path, const std::string& name, bool label) {
  if (name.empty()) return error{path + ": Required value: name or generateName is required"};
  auto why = label ? dns1123_label_problem(name) : dns1123_subdomain_problem(name);
  if (!why.empty()) return invalid(path, name, why);
  return ok_t{};
}

template <class Map>
status_or_error check_labels(const std::string& path, const Map& labels) {
  for (const auto& [k, v] : labels) {
    if (auto why = qualified_name_problem(k); !why.empty()) return invalid(path, k, why);
    if (auto why = label_value_problem(v); !why.empty()) return invalid(path, v, why);
  }
  return ok_t{};
}

// metadata.name (a subdomain, or a label for `label_name` kinds), metadata.namespace, labels.
status_or_error check_meta(const k8s::meta::ObjectMeta& m, bool namespaced, bool label_name) {
  if (auto s = check_name("metadata.name", m.name(), label_name); !s) return s;
  if (namespaced && !m.namespace_().empty())
    if (auto why = dns1123_label_problem(m.namespace_()); !why.empty())
      return invalid("metadata.namespace", m.namespace_(), why);
  return check_labels("metadata.labels", m.labels());
}

}  // namespace

status_or_error validate_object(const k8s::core::Node& n) { return check_meta(n.metadata(), false, false); }

status_or_error validate_object(const k8s::core::Namespace& n) { return check_meta(n.metadata(), false, true); }

status_or_error validate_object(const k8s::scheduling::PriorityClass& pc) {
  return check_meta(pc.metadata(), false, false);
}

status_or_error validate_object(const k8s::policy::PodDisruptionBudget& pdb) {
  return check_meta(pdb.metadata(), true, false);
}

status_or_error validate_object(const k8s::scheduling::PodGroup& pg) { return check_meta(pg.metadata(), true, false); }

status_or_error validate_object(const k8s::coscheduling::PodGroup& pg) {
  return check_meta(pg.metadata(), true, false);
}

status_or_error validate_object(const k8s::core::Pod& p) {
  if (auto s = check_meta(p.metadata(), true, false); !s) return s;
  const auto& spec = p.spec();
  if (spec.containers_size() == 0) return error{"spec.containers: Required value"};
  std::set<std::string> names;
  auto check_containers = [&](const auto& list, const char* field) -> status_or_error {
    for (int i = 0; i < list.size(); ++i) {
      std::string path = std::string(field) + "[" + std::to_string(i) + "].name";
      if (auto s = check_name(path, list.Get(i).name(), true); !s)
        return list.Get(i).name().empty() ? error{path + ": Required value"} : s;
      if (!names.insert(list.Get(i).name()).second) return error{path + ": Duplicate value: " + quoted(list.Get(i).name())};
    }
    return ok_t{};
  };
  if (auto s = check_containers(spec.init_containers(), "spec.initContainers"); !s) return s;
  if (auto s = check_containers(spec.containers(), "spec.containers"); !s) return s;
  return check_labels("spec.nodeSelector", spec.node_selector());
}

}  // namespace kas

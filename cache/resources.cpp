#include "cache/resources.hpp"

#include <algorithm>

#include "messages/name_validation.hpp"

namespace kas {
namespace {

constexpr std::string_view hugepages_prefix = "hugepages-";
constexpr std::string_view attachable_volumes_prefix = "attachable-volumes-";
constexpr std::string_view default_namespace_prefix = "kubernetes.io/";
constexpr std::string_view requests_prefix = "requests.";

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool is_prefixed_native_resource(std::string_view name) {
  return name.find(default_namespace_prefix) != std::string_view::npos;
}

bool is_native_resource(std::string_view name) {
  return name.find('/') == std::string_view::npos || is_prefixed_native_resource(name);
}

}  // namespace

void resource_list::set_scalar(std::string_view name, int64_t v) {
  auto it = std::lower_bound(scalar.begin(), scalar.end(), name,
                             [](const std::pair<std::string, int64_t>& e, std::string_view n) { return e.first < n; });
  if (it != scalar.end() && it->first == name) {
    it->second = v;
    return;
  }
  scalar.insert(it, {std::string(name), v});
}

void resource_list::add(const resource_list& o) {
  milli_cpu += o.milli_cpu;
  memory += o.memory;
  ephemeral_storage += o.ephemeral_storage;
  allowed_pod_number += o.allowed_pod_number;
  for (auto& [n, v] : o.scalar) add_scalar(n, v);
}

void resource_list::sub(const resource_list& o) {
  milli_cpu -= o.milli_cpu;
  memory -= o.memory;
  ephemeral_storage -= o.ephemeral_storage;
  allowed_pod_number -= o.allowed_pod_number;
  for (auto& [n, v] : o.scalar) add_scalar(n, -v);
}

void resource_list::max_with(const resource_list& o) {
  milli_cpu = std::max(milli_cpu, o.milli_cpu);
  memory = std::max(memory, o.memory);
  ephemeral_storage = std::max(ephemeral_storage, o.ephemeral_storage);
  allowed_pod_number = std::max(allowed_pod_number, o.allowed_pod_number);
  for (auto& [n, v] : o.scalar) {
    if (!has_scalar(n) || get_scalar(n) < v) set_scalar(n, v);
  }
}

// kube's v1helper.IsExtendedResourceName: domain-qualified, outside *kubernetes.io/, not "requests.*",
// and "requests.<name>" must be a valid qualified name (so it can carry a quota).
bool is_extended_resource_name(std::string_view name) {
  if (is_native_resource(name) || starts_with(name, requests_prefix)) return false;
  std::string for_quota(requests_prefix);
  for_quota.append(name);
  return is_qualified_name(for_quota);
}

bool is_hugepages_resource_name(std::string_view name) { return starts_with(name, hugepages_prefix); }

// kube's schedutil.IsScalarResourceName.
bool is_scalar_resource_name(std::string_view name) {
  return is_extended_resource_name(name) || is_hugepages_resource_name(name) ||
         is_prefixed_native_resource(name) || starts_with(name, attachable_volumes_prefix);
}

}  // namespace kas

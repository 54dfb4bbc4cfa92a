#include "cache/resources.hpp"

#include <algorithm>

namespace kas {
namespace {

constexpr std::string_view hugepages_prefix = "hugepages-";
constexpr std::string_view attachable_volumes_prefix = "attachable-volumes-";
constexpr std::string_view default_namespace_prefix = "kubernetes.io/";
constexpr std::string_view requests_prefix = "requests.";

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// DNS-1123 subdomain: lowercase labels of [a-z0-9-] that start and end alphanumeric, joined by dots.
bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !is_lower_alnum(label.front()) || !is_lower_alnum(label.back())) return false;
    for (char c : label)
      if (!is_lower_alnum(c) && c != '-') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// The name part of a qualified name: <= 63 chars, [A-Za-z0-9] at both ends, [-_.A-Za-z0-9] inside.
bool is_qualified_name_part(std::string_view s) {
  if (s.empty() || s.size() > 63 || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  for (char c : s)
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

}  // namespace

namespace detail {
// apimachinery's validation.IsQualifiedName: [prefix/]name. Shared with selectors.cpp (label keys).
bool is_qualified_name(std::string_view s) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) return is_qualified_name_part(s);
  if (s.find('/', slash + 1) != std::string_view::npos) return false;
  return is_dns1123_subdomain(s.substr(0, slash)) && is_qualified_name_part(s.substr(slash + 1));
}
}  // namespace detail

namespace {
using detail::is_qualified_name;

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

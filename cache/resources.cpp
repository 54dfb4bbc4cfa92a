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

std::string format_milli_quantity(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string format_byte_quantity(int64_t bytes) {
  if (bytes == 0) return "0";
  static constexpr const char* binary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  static constexpr const char* decimal[] = {"k", "M", "G", "T", "P", "E"};
  auto largest = [bytes](int64_t base, const char* const (&suffixes)[6]) -> std::string {
    int64_t v = bytes;
    int n = 0;
    while (n < 6 && v % base == 0) {
      v /= base;
      ++n;
    }
    return n == 0 ? std::string() : std::to_string(v) + suffixes[n - 1];
  };
  if (auto b = largest(1024, binary); !b.empty()) return b;
  if (auto d = largest(1000, decimal); !d.empty()) return d;
  return std::to_string(bytes);
}

}  // namespace kas

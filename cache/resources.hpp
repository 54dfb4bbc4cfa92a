#pragma once
// Compiled resource amounts: CPU in milli-cores, everything else in base units, all int64.
// Quantities are parsed once at the edge (pod_info / node_info compilation), never on the hot path.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kas {

inline constexpr std::string_view res_cpu = "cpu";
inline constexpr std::string_view res_memory = "memory";
inline constexpr std::string_view res_ephemeral_storage = "ephemeral-storage";
inline constexpr std::string_view res_pods = "pods";

// Name tests for the hot path: a fixed-length memcmp the compiler inlines, where comparing a
// std::string with a string_view calls memcmp.
template <size_t N>
inline bool resource_is(const std::string& name, const char (&lit)[N]) {
  return name.size() == N - 1 && std::memcmp(name.data(), lit, N - 1) == 0;
}
inline bool is_cpu(const std::string& n) { return resource_is(n, "cpu"); }
inline bool is_memory(const std::string& n) { return resource_is(n, "memory"); }
inline bool is_ephemeral_storage(const std::string& n) { return resource_is(n, "ephemeral-storage"); }

// kube-scheduler's defaults for containers that request nothing (used for scoring only).
inline constexpr int64_t default_milli_cpu_request = 100;
inline constexpr int64_t default_memory_request = 200LL * 1024 * 1024;

struct resource_list {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t allowed_pod_number = 0;
  // Extended resources and hugepages, sorted by name.
  std::vector<std::pair<std::string, int64_t>> scalar;

  int64_t get_scalar(std::string_view name) const {
    for (auto& [n, v] : scalar)
      if (n == name) return v;
    return 0;
  }
  bool has_scalar(std::string_view name) const {
    for (auto& kv : scalar)
      if (kv.first == name) return true;
    return false;
  }
  void set_scalar(std::string_view name, int64_t v);
  void add_scalar(std::string_view name, int64_t v) { set_scalar(name, get_scalar(name) + v); }
  void add(const resource_list& o);
  void sub(const resource_list& o);
  // Element-wise maximum (used for init containers).
  void max_with(const resource_list& o);
  bool operator==(const resource_list& o) const {
    return milli_cpu == o.milli_cpu && memory == o.memory && ephemeral_storage == o.ephemeral_storage &&
           allowed_pod_number == o.allowed_pod_number && scalar == o.scalar;
  }
};

// Amounts written as kube writes a canonical quantity, for messages: millicores as whole cores when
// they are ("2", "500m"); bytes with the largest binary suffix that divides them (Ki to Ei), else
// the largest decimal one (k to E), else plain ("10Gi", "1536Ki", "3M", "1001").
std::string format_milli_quantity(int64_t milli);
std::string format_byte_quantity(int64_t bytes);

// Resources that are not "extended" in kube's sense: native names without a domain, or hugepages-*.
bool is_extended_resource_name(std::string_view name);
bool is_hugepages_resource_name(std::string_view name);
// Whether NodeResourcesFit checks this name as a scalar resource (extended, hugepages, attachable volumes).
bool is_scalar_resource_name(std::string_view name);

}  // namespace kas

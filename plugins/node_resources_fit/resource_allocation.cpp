#include "plugins/node_resources_fit/resource_allocation.hpp"

#include <cmath>

#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

namespace {

int64_t least_requested(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * fw::max_node_score / capacity;
}

int64_t most_requested(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Pods without requests count with the non-zero defaults, so requested may exceed capacity.
  if (requested > capacity) requested = capacity;
  return requested * fw::max_node_score / capacity;
}

// kube's helper.BuildBrokenLinearFunction evaluated at p.
int64_t broken_linear(const std::vector<utilization_shape_point>& shape, int64_t p) {
  const int64_t scale = fw::max_node_score / max_custom_priority_score;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score * scale;
      int64_t x0 = shape[i - 1].utilization, x1 = shape[i].utilization;
      int64_t y0 = shape[i - 1].score * scale, y1 = shape[i].score * scale;
      return y0 + (y1 - y0) * (p - x0) / (x1 - x0);
    }
  }
  return shape.back().score * scale;
}

}  // namespace

std::vector<int64_t> pod_score_requests(const pod_info& pod, const std::vector<resource_spec>& resources) {
  std::vector<int64_t> out(resources.size(), 0);
  for (size_t i = 0; i < resources.size(); ++i) {
    const std::string& r = resources[i].name;
    if (is_cpu(r)) {
      out[i] = pod.non_zero_requests.milli_cpu;
    } else if (is_memory(r)) {
      out[i] = pod.non_zero_requests.memory;
    } else if (is_ephemeral_storage(r)) {
      out[i] = pod.requests.ephemeral_storage;
    } else {
      out[i] = pod.requests.get_scalar(r);
    }
  }
  return out;
}

resource_kind classify_resource(const std::string& name) {
  if (is_cpu(name)) return resource_kind::cpu;
  if (is_memory(name)) return resource_kind::memory;
  if (is_ephemeral_storage(name)) return resource_kind::ephemeral_storage;
  return resource_kind::scalar;
}

void classify_resources(std::vector<resource_spec>& resources) {
  for (auto& r : resources) r.kind = classify_resource(r.name);
}

bool hot_resources_only(const std::vector<resource_spec>& resources) {
  for (auto& r : resources)
    if (r.kind != resource_kind::cpu && r.kind != resource_kind::memory) return false;
  return true;
}

void hot_allocatable_and_requested(const std::vector<resource_spec>& resources, const node_hot& h,
                                   const std::vector<int64_t>& pod_requests, bool non_zero,
                                   resource_values& requested, resource_values& allocatable) {
  for (size_t j = 0; j < resources.size(); ++j) {
    const bool cpu = resources[j].kind == resource_kind::cpu;
    allocatable[j] = cpu ? h.alloc_cpu : h.alloc_mem;
    requested[j] = (non_zero ? (cpu ? h.nz_cpu : h.nz_mem) : (cpu ? h.req_cpu : h.req_mem)) + pod_requests[j];
  }
}

namespace {

// least_requested and most_requested with score_div.
inline int64_t hot_least_requested(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return score_div((capacity - requested) * fw::max_node_score, capacity);
}

inline int64_t hot_most_requested(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;
  return score_div(requested * fw::max_node_score, capacity);
}

// The per-node loop of hot_allocated_scores, for K resources (0: k at run time).
template <size_t K, bool Most>
void hot_allocated_loop(size_t k, const bool* cpu, const int64_t* weight, const int64_t* pod_request,
                        const node_hot* const* hot, size_t n, int64_t* out) {
  const size_t m = K ? K : k;
  int64_t full_weight = 0;
  for (size_t j = 0; j < m; ++j) full_weight += weight[j];
  // node_score / weight_sum with the usual weight sum (no resource at allocatable 0) a power of
  // two is a shift: the score is non-negative, where the two agree.
  int shift = -1;
  if (full_weight > 0 && (full_weight & (full_weight - 1)) == 0) shift = __builtin_ctzll(static_cast<uint64_t>(full_weight));
  recent_hot_scores recent;
  for (size_t i = 0; i < n; ++i) {
    const node_hot& h = *hot[i];
    if (const int64_t* known = recent.find(h.alloc_cpu, h.alloc_mem, h.nz_cpu, h.nz_mem)) {
      out[i] = *known;
      continue;
    }
    int64_t node_score = 0, weight_sum = 0;
    for (size_t j = 0; j < m; ++j) {
      const int64_t capacity = cpu[j] ? h.alloc_cpu : h.alloc_mem;
      if (capacity == 0) continue;
      const int64_t requested = (cpu[j] ? h.nz_cpu : h.nz_mem) + pod_request[j];
      node_score += (Most ? hot_most_requested(requested, capacity) : hot_least_requested(requested, capacity)) * weight[j];
      weight_sum += weight[j];
    }
    if (weight_sum == 0)
      out[i] = 0;
    else if (weight_sum == full_weight && shift >= 0 && node_score >= 0)
      out[i] = node_score >> shift;
    else
      out[i] = node_score / weight_sum;
    recent.add(h.alloc_cpu, h.alloc_mem, h.nz_cpu, h.nz_mem, out[i]);
  }
}

}  // namespace

bool hot_allocated_scores(bool most, const std::vector<resource_spec>& resources,
                          const std::vector<int64_t>& pod_requests, const node_hot* const* hot, size_t n,
                          int64_t* out) {
  constexpr size_t max_k = 8;
  const size_t k = resources.size();
  if (k == 0 || k > max_k || pod_requests.size() != k) return false;
  bool cpu[max_k];
  int64_t weight[max_k], request[max_k];
  for (size_t j = 0; j < k; ++j) {
    cpu[j] = resources[j].kind == resource_kind::cpu;
    weight[j] = resources[j].weight;
    request[j] = pod_requests[j];
  }
  // The default resources (cpu and memory) get a loop the compiler unrolls.
  if (k == 2) {
    if (most) hot_allocated_loop<2, true>(k, cpu, weight, request, hot, n, out);
    else hot_allocated_loop<2, false>(k, cpu, weight, request, hot, n, out);
  } else {
    if (most) hot_allocated_loop<0, true>(k, cpu, weight, request, hot, n, out);
    else hot_allocated_loop<0, false>(k, cpu, weight, request, hot, n, out);
  }
  return true;
}

void allocatable_and_requested(const node_info& node, const resource_spec& resource, int64_t pod_request,
                               int64_t& allocatable, int64_t& requested) {
  allocatable = requested = 0;
  resource_kind kind = resource.kind == resource_kind::unknown ? classify_resource(resource.name) : resource.kind;
  switch (kind) {
    case resource_kind::cpu:
      allocatable = node.allocatable.milli_cpu;
      requested = node.non_zero_requested.milli_cpu + pod_request;
      return;
    case resource_kind::memory:
      allocatable = node.allocatable.memory;
      requested = node.non_zero_requested.memory + pod_request;
      return;
    case resource_kind::ephemeral_storage:
      allocatable = node.allocatable.ephemeral_storage;
      requested = node.requested.ephemeral_storage + pod_request;
      return;
    case resource_kind::scalar:
    case resource_kind::unknown:
      break;
  }
  if (pod_request != 0 || !is_scalar_resource_name(resource.name)) {
    if (node.allocatable.has_scalar(resource.name)) {
      allocatable = node.allocatable.get_scalar(resource.name);
      requested = node.requested.get_scalar(resource.name) + pod_request;
    }
  }
}

int64_t least_allocated_score(const std::vector<resource_spec>& resources, const resource_values& requested,
                              const resource_values& allocatable) {
  int64_t node_score = 0, weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    node_score += least_requested(requested[i], allocatable[i]) * resources[i].weight;
    weight_sum += resources[i].weight;
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

int64_t most_allocated_score(const std::vector<resource_spec>& resources, const resource_values& requested,
                             const resource_values& allocatable) {
  int64_t node_score = 0, weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    node_score += most_requested(requested[i], allocatable[i]) * resources[i].weight;
    weight_sum += resources[i].weight;
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

int64_t requested_to_capacity_ratio_score(const std::vector<resource_spec>& resources,
                                          const std::vector<utilization_shape_point>& shape,
                                          const resource_values& requested,
                                          const resource_values& allocatable) {
  constexpr int64_t max_utilization = 100;
  int64_t node_score = 0, weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    int64_t s = requested[i] > allocatable[i] ? broken_linear(shape, max_utilization)
                                              : broken_linear(shape, requested[i] * max_utilization / allocatable[i]);
    if (s > 0) {
      node_score += s * resources[i].weight;
      weight_sum += resources[i].weight;
    }
  }
  if (weight_sum == 0) return 0;
  return static_cast<int64_t>(std::llround(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
}

}  // namespace kas::plugins

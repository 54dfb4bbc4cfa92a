#pragma once
// Resource-allocation scoring shared by NodeResourcesFit's strategies (kube's
// noderesources/resource_allocation.go, least_allocated.go, most_allocated.go,
// requested_to_capacity_ratio.go). Pure functions over int64 vectors, one entry per configured
// resource; an entry with allocatable 0 is left out of the weighted average.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "cache/node_hot.hpp"
#include "cache/node_info.hpp"
#include "plugins/node_resources_fit/fit_args.hpp"

namespace kas::plugins {

// One value per configured resource, for one node. Score runs once per node per pod, so this
// lives on the stack: profiles score a handful of resources (the heap is used past eight).
class resource_values {
public:
  explicit resource_values(size_t n)
      : n_(n), heap_(n > inline_cap ? std::make_unique<int64_t[]>(n) : nullptr), p_(heap_ ? heap_.get() : inline_) {
    std::fill(p_, p_ + n_, 0);
  }
  resource_values(const resource_values&) = delete;
  resource_values& operator=(const resource_values&) = delete;
  int64_t& operator[](size_t i) { return p_[i]; }
  int64_t operator[](size_t i) const { return p_[i]; }
  size_t size() const { return n_; }

private:
  static constexpr size_t inline_cap = 8;
  size_t n_;
  int64_t inline_[inline_cap];
  std::unique_ptr<int64_t[]> heap_;
  int64_t* p_;
};

// The pod's request for each configured resource, as scoring sees it: cpu and memory come from
// non_zero_requests (100m / 200Mi defaults for containers that request none), the rest from requests.
std::vector<int64_t> pod_score_requests(const pod_info& pod, const std::vector<resource_spec>& resources);

// (allocatable, requested-after-placing-the-pod) of one resource on the node; (0, 0) when the node
// has no such resource, or for an extended resource the pod does not request.
// Whether every configured resource is CPU or memory, the resources node_hot carries.
bool hot_resources_only(const std::vector<resource_spec>& resources);
// allocatable_and_requested from a node_hot record, for hot_resources_only() resources: requested
// is the node's non-zero requests (`non_zero`, the scoring strategies) or its real ones (balanced
// allocation), plus the pod's.
void hot_allocatable_and_requested(const std::vector<resource_spec>& resources, const node_hot& h,
                                   const std::vector<int64_t>& pod_requests, bool non_zero,
                                   resource_values& requested, resource_values& allocatable);

// num / den for 0 <= num <= 100 * den, as the resource scores divide (a quotient in [0, 100]),
// without a 64-bit integer division: those dominated the hot scoring loop, while a double
// division pipelines. The double quotient is within a few 1e-16 of the true one relative, so
// after truncation it is off by at most one, which the two integer checks correct: the result is
// exactly the integer division's. Divisors too large for those checks to stay in range divide as
// integers.
inline int64_t score_div(int64_t num, int64_t den) {
  if (num < 0 || den <= 0 || den > (int64_t{1} << 56)) return num / den;
  int64_t q = static_cast<int64_t>(static_cast<double>(num) / static_cast<double>(den));
  q -= q * den > num;
  q += (q + 1) * den <= num;
  return q;
}

// The last few distinct inputs of a hot score and their scores, for one pod's pass over the
// nodes. A score from node_hot is a function of four fields (allocatable and requested cpu and
// memory); a node pool's nodes differ in them only by the pods placed, so a handful of entries
// answers most nodes without the divisions, exactly (equal inputs, equal score).
class recent_hot_scores {
public:
  // The score recorded for these inputs, or null.
  const int64_t* find(int64_t a, int64_t b, int64_t c, int64_t d) const {
    for (size_t e = 0; e < used_; ++e)
      if (keys_[e][0] == a && keys_[e][1] == b && keys_[e][2] == c && keys_[e][3] == d) return &scores_[e];
    return nullptr;
  }
  void add(int64_t a, int64_t b, int64_t c, int64_t d, int64_t score) {
    size_t e = next_;
    next_ = (next_ + 1) % entries;
    if (used_ < entries) ++used_;
    keys_[e][0] = a, keys_[e][1] = b, keys_[e][2] = c, keys_[e][3] = d;
    scores_[e] = score;
  }

private:
  static constexpr size_t entries = 4;
  int64_t keys_[entries][4];
  int64_t scores_[entries];
  size_t used_ = 0, next_ = 0;
};

// least_allocated_score / most_allocated_score (`most`) of n nodes straight from their node_hot
// records, for hot_resources_only() resources: one call per pod, with the per-resource choices
// made once instead of per node, and no per-node resource_values. The same integer operations in
// the same order, so the same scores. False (more than eight resources) leaves it to the caller.
bool hot_allocated_scores(bool most, const std::vector<resource_spec>& resources,
                          const std::vector<int64_t>& pod_requests, const node_hot* const* hot, size_t n,
                          int64_t* out);

void allocatable_and_requested(const node_info& node, const resource_spec& resource, int64_t pod_request,
                               int64_t& allocatable, int64_t& requested);

int64_t least_allocated_score(const std::vector<resource_spec>& resources, const resource_values& requested,
                              const resource_values& allocatable);
int64_t most_allocated_score(const std::vector<resource_spec>& resources, const resource_values& requested,
                             const resource_values& allocatable);
// `shape` uses the configured [0, 10] scores; they are scaled to [0, 100] here.
int64_t requested_to_capacity_ratio_score(const std::vector<resource_spec>& resources,
                                          const std::vector<utilization_shape_point>& shape,
                                          const resource_values& requested,
                                          const resource_values& allocatable);

}  // namespace kas::plugins

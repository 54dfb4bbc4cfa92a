#pragma once
// node_hot: the fixed-size facts of one node that the default Filter and Score plugins read for
// every node, kept by the snapshot in one contiguous array per chunk of nodes (a struct-of-arrays
// view beside node_info). A loop over hundreds of nodes then streams through 64-byte records
// instead of touching a separate node_info object (several cache lines, one miss each) per node.
// It is derived from node_info and replaced with it; node_info stays what plugins read otherwise.
#include <cstdint>

#include "cache/node_info.hpp"

namespace kas {

struct node_hot {
  enum flag : uint32_t {
    unschedulable = 1u << 0,  // spec.unschedulable
    tainted = 1u << 1,        // any taint
    has_images = 1u << 2,     // status.images not empty
  };
  int64_t alloc_cpu = 0, alloc_mem = 0;  // allocatable milli-CPU, memory
  int64_t req_cpu = 0, req_mem = 0;      // requested by the node's pods
  int64_t nz_cpu = 0, nz_mem = 0;        // requested with kube's non-zero defaults (scoring)
  int32_t alloc_pods = 0;                // allocatable pod count
  int32_t pods = 0;                      // pods on the node
  uint32_t flags = 0;
  uint32_t unused_ = 0;  // pads the record to 64 bytes
  bool has(flag f) const { return (flags & f) != 0; }
  bool operator==(const node_hot& o) const {
    return alloc_cpu == o.alloc_cpu && alloc_mem == o.alloc_mem && req_cpu == o.req_cpu && req_mem == o.req_mem &&
           nz_cpu == o.nz_cpu && nz_mem == o.nz_mem && alloc_pods == o.alloc_pods && pods == o.pods &&
           flags == o.flags;
  }
};
// 64 bytes, so a chunk's records pack into whole cache lines; not alignas(64): over-aligned chunks
// went through glibc's memalign, whose fragmentation raised bench's peak RSS from 120 to 195 MiB.
static_assert(sizeof(node_hot) == 64, "one cache line per node");

inline node_hot hot_of(const node_info& n) {
  node_hot h;
  h.alloc_cpu = n.allocatable.milli_cpu;
  h.alloc_mem = n.allocatable.memory;
  h.req_cpu = n.requested.milli_cpu;
  h.req_mem = n.requested.memory;
  h.nz_cpu = n.non_zero_requested.milli_cpu;
  h.nz_mem = n.non_zero_requested.memory;
  auto clamp32 = [](int64_t v) { return static_cast<int32_t>(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v); };
  h.alloc_pods = clamp32(n.allocatable.allowed_pod_number);
  h.pods = clamp32(static_cast<int64_t>(n.pods.size()));
  if (n.unschedulable) h.flags |= node_hot::unschedulable;
  if (!n.taints.empty()) h.flags |= node_hot::tainted;
  if (!n.images.empty()) h.flags |= node_hot::has_images;
  return h;
}

}  // namespace kas

#pragma once
// node_info: the scheduler's aggregated view of one node: the Node object compiled, plus every pod
// the cache places on it (bound or assumed) and their summed requests and ports.
//
// Ownership: node_info values are immutable once published. snapshot_cache builds a new node_info
// (copy + change) for every change and publishes it in a new snapshot; readers holding the old
// snapshot keep the old value. `generation` increases on every change, so a reservation can tell
// whether the node it evaluated is still current.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cache/pod_info.hpp"
#include "cache/pod_list.hpp"

namespace kas {

struct node_volume_usage;  // attachable_volumes.hpp

// Image names are interned to process-wide ids when a node is compiled, so ImageLocality's Score
// compares integers per node, not strings.
inline constexpr uint32_t no_image_id = UINT32_MAX;
// The id of `name`, interning it on first sight. Thread-safe.
uint32_t intern_image_name(std::string_view name);
// The id of `name` if some node ever reported it, else no_image_id (nothing is interned). Thread-safe.
uint32_t find_image_name(std::string_view name);

struct image_state {
  std::string name;
  int64_t size_bytes = 0;
  uint32_t id = no_image_id;  // intern_image_name(name)
};

struct node_info {
  std::shared_ptr<const k8s::core::Node> node;  // null for a node known only from pods

  std::string name;
  label_map labels;
  std::vector<taint> taints;
  bool unschedulable = false;
  // The node has a CSINode: volume_usage->csi_node is set. Kept with volume_usage, and beside the
  // hot fields, so the volume plugins pass nodes without one without touching the usage.
  bool has_csi_node = false;
  resource_list allocatable;
  std::vector<image_state> images;

  // Aggregates over pods.
  pod_list pods;  // chunked: a clone shares the chunks (see pod_list.hpp)
  resource_list requested;
  resource_list non_zero_requested;
  std::vector<host_port> used_ports;
  // Subsets of `pods` (kube's PodsWithAffinity / PodsWithRequiredAntiAffinity): pods with any
  // inter-pod (anti-)affinity term, and pods with a required anti-affinity term.
  std::vector<pod_info_ptr> pods_with_affinity;
  std::vector<pod_info_ptr> pods_with_required_anti_affinity;
  // What NodeVolumeLimits reads of the node, resolved (attachable_volumes.hpp); null when there is
  // nothing to count. Only the scheduler cache sets `volume_usage_current`, and keeps the usage
  // current then; add_pod/remove_pod of a pod with such volumes (a copy changed outside the cache:
  // nominated pods, preemption's what-ifs) clear it, and readers then resolve the node themselves.
  std::shared_ptr<const node_volume_usage> volume_usage;
  bool volume_usage_current = false;

  uint64_t generation = 0;

  // Pure updates: return a changed copy.
  std::shared_ptr<node_info> clone() const { return std::make_shared<node_info>(*this); }
  void add_pod(pod_info_ptr p);
  // Removes the pod with this uid; returns false if it is not on the node.
  bool remove_pod(const std::string& uid);
  // The same for the very object that was added (see position_of).
  bool remove_pod(const pod_info_ptr& p);
  const pod_info* find_pod(const std::string& uid) const;
  // Where the very object `p` sits in `pods`: at `hint` when it is there (the scheduler cache
  // remembers each pod's position), else found by address from the newest end, else by uid; -1
  // when it is not on the node. Without the hint a node holding thousands of pods was scanned
  // from the end for every bound pod's status update, since swap-removes scatter new pods.
  long position_of(const pod_info_ptr& p, size_t hint = SIZE_MAX) const;
  // Removes the pod at `at`, which the last pod then takes (swap-remove, as kube's RemovePod).
  void remove_pod_at(size_t at);

  // kube's HostPortInfo.CheckConflict: same protocol and port, and same IP or either is 0.0.0.0.
  bool port_conflicts(const host_port& want) const;
};

using node_info_ptr = std::shared_ptr<const node_info>;

// Compiles a Node (labels, taints, allocatable, images). Errors name the field path.
result<std::shared_ptr<node_info>> compile_node(std::shared_ptr<const k8s::core::Node> node);

}  // namespace kas

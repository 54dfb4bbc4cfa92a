#pragma once
// Cluster events and queueing hints (kube-scheduler's framework/types.go ClusterEvent and
// QueueingHintFn). A pod rejected by plugin P moves out of the unschedulable pool only when an event
// P registered for arrives and P's hint (if any) says Queue.
#include <cstdint>
#include <functional>
#include <string>

namespace kas {
struct pod_info;
struct node_info;
struct volume_change;
}

namespace kas::fw {

enum class event_resource : uint8_t {
  pod,
  assigned_pod,
  unscheduled_pod,
  node,
  pvc,
  pv,
  storage_class,
  csi_node,
  csi_driver,
  csi_storage_capacity,
  volume_attachment,
  wildcard
};

// Action bits, as kube's ActionType.
enum action : uint32_t {
  act_add = 1u << 0,
  act_delete = 1u << 1,
  act_update_node_allocatable = 1u << 2,
  act_update_node_label = 1u << 3,
  act_update_node_taint = 1u << 4,
  act_update_node_condition = 1u << 5,
  act_update_node_annotation = 1u << 6,
  act_update_pod_label = 1u << 7,
  act_update_pod_scale_down = 1u << 8,
  act_update_pod_toleration = 1u << 9,
  act_update_pod_scheduling_gates_eliminated = 1u << 10,
  act_update_pod_generated_resource_claim = 1u << 11,
  act_update = 0xFFFFFFFCu & ~0u,  // every update bit
  act_all = 0xFFFFFFFFu,
};

struct cluster_event {
  event_resource resource = event_resource::wildcard;
  uint32_t actions = act_all;
  std::string label;  // for logs and metrics: "NodeAdd", "AssignedPodDelete", ...
  bool matches(const cluster_event& incoming) const;
};

enum class queueing_hint : uint8_t { skip, queue };

// Old/new objects of the event; either may be null (add/delete).
struct event_objects {
  const pod_info* old_pod = nullptr;
  const pod_info* new_pod = nullptr;
  const node_info* old_node = nullptr;
  const node_info* new_node = nullptr;
  // A storage object's change (PersistentVolume..., CSIStorageCapacity): the compiled old and new.
  const volume_change* volume = nullptr;
};

using queueing_hint_fn = std::function<queueing_hint(const pod_info& pod, const event_objects& objs)>;

struct cluster_event_with_hint {
  cluster_event event;
  queueing_hint_fn hint;  // empty = always Queue
};

}  // namespace kas::fw

// VolumeBinding's EventsToRegister and QueueingHints (kube v1.36): which storage and node events
// can make a pod this plugin rejected schedulable.
#include "plugins/volume_binding/binder.hpp"
#include "plugins/volume_binding/volume_binding.hpp"

#include "messages/k8s/storage.pb.h"

namespace kas::plugins {

namespace {

using fw::queueing_hint;

bool same_topology(const std::vector<topology_term>& a, const std::vector<topology_term>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (size_t j = 0; j < a[i].size(); ++j)
      if (a[i][j].key != b[i][j].key || a[i][j].values != b[i][j].values) return false;
  }
  return true;
}

// Any class creation, or a change to allowedTopologies (volumeBindingMode is immutable).
queueing_hint after_storage_class_change(const pod_info&, const fw::event_objects& o) {
  if (!o.volume || !o.volume->new_class || !o.volume->old_class) return queueing_hint::queue;
  return same_topology(o.volume->old_class->allowed_topologies, o.volume->new_class->allowed_topologies)
           ? queueing_hint::skip
           : queueing_hint::queue;
}

// A claim of the pod (same namespace, a volume naming it) was created or changed.
queueing_hint after_claim_change(const pod_info& pod, const fw::event_objects& o) {
  if (!o.volume || !o.volume->new_pvc) return queueing_hint::queue;
  const pvc_info& c = *o.volume->new_pvc;
  if (c.ns != pod.ns) return queueing_hint::skip;
  for (const auto& v : pod.volumes)
    if (!v.claim_name.empty() && v.claim_name == c.name) return queueing_hint::queue;
  return queueing_hint::skip;
}

std::string migrated_plugins_annotation(const csi_node_info& n) {
  if (!n.csi_node) return {};
  const auto& ann = n.csi_node->metadata().annotations();
  auto it = ann.find(std::string(ann_migrated_plugins));
  return it == ann.end() ? std::string() : it->second;
}

// A new CSINode, or a change of its migrated-plugins annotation (in-tree volumes are translated
// through it).
queueing_hint after_csi_node_change(const pod_info&, const fw::event_objects& o) {
  if (!o.volume || !o.volume->old_csi_node || !o.volume->new_csi_node) return queueing_hint::queue;
  return migrated_plugins_annotation(*o.volume->old_csi_node) != migrated_plugins_annotation(*o.volume->new_csi_node)
           ? queueing_hint::queue
           : queueing_hint::skip;
}

// A driver the pod's inline CSI volumes use stopped publishing capacity.
queueing_hint after_csi_driver_change(const pod_info& pod, const fw::event_objects& o) {
  if (!o.volume || !o.volume->old_csi_driver || !o.volume->new_csi_driver) return queueing_hint::queue;
  const auto& before = *o.volume->old_csi_driver;
  const auto& after = *o.volume->new_csi_driver;
  for (const auto& v : pod.volumes) {
    if (v.inline_source.kind != volume_source::csi || v.inline_source.driver != after.name) continue;
    if (before.storage_capacity && !after.storage_capacity) return queueing_hint::queue;
  }
  return queueing_hint::skip;
}

// A new capacity object, or a larger volume limit on an existing one (nodeTopology and the class
// are immutable).
queueing_hint after_capacity_change(const pod_info&, const fw::event_objects& o) {
  if (!o.volume || !o.volume->old_capacity || !o.volume->new_capacity) return queueing_hint::queue;
  const int64_t* before = volume_limit(*o.volume->old_capacity);
  const int64_t* after = volume_limit(*o.volume->new_capacity);
  return after && (!before || *after > *before) ? queueing_hint::queue : queueing_hint::skip;
}

fw::cluster_event_with_hint event(fw::event_resource r, uint32_t actions, std::string label, fw::queueing_hint_fn hint) {
  fw::cluster_event_with_hint e;
  e.event.resource = r;
  e.event.actions = actions;
  e.event.label = std::move(label);
  e.hint = std::move(hint);
  return e;
}

}  // namespace

std::vector<fw::cluster_event_with_hint> volume_binding::events_to_register() const {
  using fw::act_add;
  using fw::act_update;
  using fw::event_resource;
  std::vector<fw::cluster_event_with_hint> out;
  out.push_back(event(event_resource::storage_class, act_add | act_update, "StorageClassAdd|StorageClassUpdate",
                      after_storage_class_change));
  out.push_back(event(event_resource::pvc, act_add | act_update,
                      "PersistentVolumeClaimAdd|PersistentVolumeClaimUpdate", after_claim_change));
  out.push_back(event(event_resource::pv, act_add | act_update, "PersistentVolumeAdd|PersistentVolumeUpdate", {}));
  // With queueing hints on, kube registers no node taint update here.
  out.push_back(event(event_resource::node, act_add | fw::act_update_node_label, "NodeAdd|NodeLabelChange", {}));
  out.push_back(event(event_resource::csi_node, act_add | act_update, "CSINodeAdd|CSINodeUpdate", after_csi_node_change));
  out.push_back(event(event_resource::csi_driver, act_update, "CSIDriverUpdate", after_csi_driver_change));
  out.push_back(event(event_resource::csi_storage_capacity, act_add | act_update,
                      "CSIStorageCapacityAdd|CSIStorageCapacityUpdate", after_capacity_change));
  return out;
}

}  // namespace kas::plugins

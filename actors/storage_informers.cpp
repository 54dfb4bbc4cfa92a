#include "actors/storage_informers.hpp"

#include "messages/k8s/core.pb.h"
#include "messages/k8s/storage.pb.h"

namespace kas {

const std::vector<storage_kind>& storage_kinds() {
  static const std::vector<storage_kind> kinds = {
    {volume_change::storage_class, "/apis/storage.k8s.io/v1/storageclasses", "StorageClass",
     &k8s::storage::StorageClass::default_instance(), &k8s::storage::StorageClassList::default_instance()},
    {volume_change::csi_driver, "/apis/storage.k8s.io/v1/csidrivers", "CSIDriver",
     &k8s::storage::CSIDriver::default_instance(), &k8s::storage::CSIDriverList::default_instance()},
    {volume_change::csi_node, "/apis/storage.k8s.io/v1/csinodes", "CSINode", &k8s::storage::CSINode::default_instance(),
     &k8s::storage::CSINodeList::default_instance()},
    {volume_change::csi_storage_capacity, "/apis/storage.k8s.io/v1/csistoragecapacities", "CSIStorageCapacity",
     &k8s::storage::CSIStorageCapacity::default_instance(), &k8s::storage::CSIStorageCapacityList::default_instance()},
    {volume_change::pv, "/api/v1/persistentvolumes", "PersistentVolume",
     &k8s::core::PersistentVolume::default_instance(), &k8s::core::PersistentVolumeList::default_instance()},
    {volume_change::pvc, "/api/v1/persistentvolumeclaims", "PersistentVolumeClaim",
     &k8s::core::PersistentVolumeClaim::default_instance(), &k8s::core::PersistentVolumeClaimList::default_instance()},
    {volume_change::volume_attachment, "/apis/storage.k8s.io/v1/volumeattachments", "VolumeAttachment",
     &k8s::storage::VolumeAttachment::default_instance(), &k8s::storage::VolumeAttachmentList::default_instance()},
  };
  return kinds;
}

namespace {

// One kind's delta: compile the object, find the stored one under its key, pair them.
template <class Proto, class Info>
result<std::optional<volume_change>> delta_of(const object_table<Info>& table, bool deleted,
                                              const std::shared_ptr<const google::protobuf::Message>& obj,
                                              result<std::shared_ptr<const Info>> (*compile)(std::shared_ptr<const Proto>),
                                              volume_change (*change)(std::shared_ptr<const Info>,
                                                                      std::shared_ptr<const Info>),
                                              bool namespaced) {
  auto typed = std::static_pointer_cast<const Proto>(obj);
  const auto& meta = typed->metadata();
  std::string key = meta.name();
  if (namespaced) key = (meta.namespace_().empty() ? std::string("default") : meta.namespace_()) + "/" + key;
  auto stored = table.get(key);
  if (deleted) {
    if (!stored) return std::optional<volume_change>{};
    return std::optional<volume_change>{change(stored, nullptr)};
  }
  auto compiled = compile(typed);
  if (!compiled) return error{Proto::descriptor()->name() + " " + key + ": " + compiled.err().message};
  return std::optional<volume_change>{change(stored, *compiled)};
}

}  // namespace

result<std::optional<volume_change>> storage_delta(const volume_objects& v, volume_change::kind_t kind, bool deleted,
                                                   const std::shared_ptr<const google::protobuf::Message>& obj) {
  switch (kind) {
    case volume_change::pv:
      return delta_of<k8s::core::PersistentVolume>(v.pvs, deleted, obj, &compile_pv, &pv_change, false);
    case volume_change::pvc:
      return delta_of<k8s::core::PersistentVolumeClaim>(v.pvcs, deleted, obj, &compile_pvc, &pvc_change, true);
    case volume_change::storage_class:
      return delta_of<k8s::storage::StorageClass>(v.classes, deleted, obj, &compile_storage_class,
                                                  &storage_class_change, false);
    case volume_change::csi_node:
      return delta_of<k8s::storage::CSINode>(v.csi_nodes, deleted, obj, &compile_csi_node, &csi_node_change, false);
    case volume_change::csi_driver:
      return delta_of<k8s::storage::CSIDriver>(v.csi_drivers, deleted, obj, &compile_csi_driver, &csi_driver_change,
                                               false);
    case volume_change::csi_storage_capacity:
      return delta_of<k8s::storage::CSIStorageCapacity>(v.capacities, deleted, obj, &compile_csi_storage_capacity,
                                                        &capacity_change, true);
    case volume_change::volume_attachment:
      return delta_of<k8s::storage::VolumeAttachment>(v.attachments, deleted, obj, &compile_volume_attachment,
                                                      &volume_attachment_change, false);
  }
  return std::optional<volume_change>{};
}

const std::string& storage_resource_version(const google::protobuf::Message& obj) {
  // Every storage kind's field 1 is its ObjectMeta.
  const auto* field = obj.GetDescriptor()->FindFieldByNumber(1);
  const auto& meta = static_cast<const k8s::meta::ObjectMeta&>(obj.GetReflection()->GetMessage(obj, field));
  return meta.resource_version();
}

}  // namespace kas

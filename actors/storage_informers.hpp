#pragma once
// storage_informers: what the API cluster source needs to watch the storage kinds the volume
// plugins read (PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers,
// CSIStorageCapacities, VolumeAttachments) and to write VolumeBinding's PreBind: the collections, and each delta
// compiled into a volume_change against the objects the source holds. Plain data, no CAF.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "cache/volume_objects.hpp"
#include "messages/result.hpp"

namespace kas {

struct storage_kind {
  volume_change::kind_t kind;
  const char* path;  // the collection: "/api/v1/persistentvolumes"
  const char* name;  // "PersistentVolume"
  const google::protobuf::Message* item;
  const google::protobuf::Message* list;
};

// The seven kinds, in the order their informers start.
const std::vector<storage_kind>& storage_kinds();

// One informer delta of `kind` (a delete carries the last state) as a change of `v`: nullopt when
// it changes nothing the plugins read (the delete of an object never stored). An object that does
// not compile is an error naming it and the field; the caller keeps the old state and logs it.
result<std::optional<volume_change>> storage_delta(const volume_objects& v, volume_change::kind_t kind, bool deleted,
                                                   const std::shared_ptr<const google::protobuf::Message>& obj);

// The resourceVersion of a storage object.
const std::string& storage_resource_version(const google::protobuf::Message& obj);

}  // namespace kas

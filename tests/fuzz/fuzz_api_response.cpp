// Fuzz target: an apiserver response body (client/api_wire.hpp): a List, as the informers' list
// calls read it, and the metav1.Status of an error response. The first byte picks the encoding.
// The storage informers compile each listed object (cache/volume_objects.hpp) before the cache
// sees it, so the storage Lists' items go through compile_pv ... compile_volume_attachment too, and
// the PodGroup informers' items (both APIs) through compile_pod_group.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "cache/pod_group.hpp"
#include "cache/volume_objects.hpp"
#include "client/api_wire.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/k8s/storage.pb.h"

namespace {

// Decodes `body` as a List of T and compiles every item; errors are answers, not findings.
template <class List, class Item, class Compile>
void decode_and_compile(std::string_view body, kas::api::encoding e, Compile compile) {
  List list;
  if (!kas::api::decode_body(body, e, list)) return;
  for (const auto& item : list.items()) (void)compile(std::make_shared<const Item>(item));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace kas::api;
  encoding e = (data[0] & 1) ? encoding::protobuf : encoding::json;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  k8s::core::PodList pods;
  (void)decode_body(body, e, pods);
  k8s::core::NodeList nodes;
  (void)decode_body(body, e, nodes);
  decode_and_compile<k8s::core::PersistentVolumeList, k8s::core::PersistentVolume>(body, e, &kas::compile_pv);
  decode_and_compile<k8s::core::PersistentVolumeClaimList, k8s::core::PersistentVolumeClaim>(body, e,
                                                                                             &kas::compile_pvc);
  decode_and_compile<k8s::storage::StorageClassList, k8s::storage::StorageClass>(body, e, &kas::compile_storage_class);
  decode_and_compile<k8s::storage::CSINodeList, k8s::storage::CSINode>(body, e, &kas::compile_csi_node);
  decode_and_compile<k8s::storage::CSIDriverList, k8s::storage::CSIDriver>(body, e, &kas::compile_csi_driver);
  decode_and_compile<k8s::storage::CSIStorageCapacityList, k8s::storage::CSIStorageCapacity>(
    body, e, &kas::compile_csi_storage_capacity);
  decode_and_compile<k8s::storage::VolumeAttachmentList, k8s::storage::VolumeAttachment>(
    body, e, &kas::compile_volume_attachment);
  decode_and_compile<k8s::scheduling::PodGroupList, k8s::scheduling::PodGroup>(
    body, e, [](const std::shared_ptr<const k8s::scheduling::PodGroup>& pg) { return kas::compile_pod_group(*pg); });
  decode_and_compile<k8s::coscheduling::PodGroupList, k8s::coscheduling::PodGroup>(
    body, e, [](const std::shared_ptr<const k8s::coscheduling::PodGroup>& pg) { return kas::compile_pod_group(*pg); });
  (void)to_string(decode_status(500, body, e));
  (void)encoding_of(body.substr(0, 64));
  return 0;
}

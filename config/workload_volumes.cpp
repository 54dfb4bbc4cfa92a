// The storage objects bench workloads stamp per node and per pod (config/workload.hpp): a node's
// CSINode from createNodes' nodeAllocatableStrategy, and a pod's claim and volume from createPods'
// volume templates, named and bound to each other as scheduler_perf's CreatePodWithPersistentVolume
// leaves them.
#include <memory>
#include <string>

#include "config/manifest_objects.hpp"
#include "config/workload.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/storage.pb.h"

namespace kas {

result<csi_node_info_ptr> make_csi_node(const node_template& t, const std::string& node_name) {
  if (!t.allocatable) return csi_node_info_ptr();
  auto obj = std::make_shared<k8s::storage::CSINode>();
  obj->mutable_metadata()->set_name(node_name);
  std::string plugins;
  for (const auto& p : t.allocatable->migrated_plugins) plugins += (plugins.empty() ? "" : ",") + p;
  (*obj->mutable_metadata()->mutable_annotations())[std::string(ann_migrated_plugins)] = plugins;
  for (const auto& d : t.allocatable->csi_drivers) {
    auto* out = obj->mutable_spec()->add_drivers();
    out->set_name(d.name);
    out->set_node_id(node_name);
    if (d.count) out->mutable_allocatable()->set_count(*d.count);
  }
  if (auto v = validate_storage_object(*obj); !v) return error{"CSINode " + node_name + ": " + v.err().message};
  auto c = compile_csi_node(std::move(obj));
  if (!c) return error{"CSINode " + node_name + ": " + c.err().message};
  return *c;
}

namespace {

// Volume `index` of the op: "<namespace>-vol-<index>", reserved for claim `claim`, phase Bound.
result<pv_info_ptr> stamp_volume(const pod_volume_templates& v, size_t index, const std::string& claim) {
  auto pv = std::make_shared<k8s::core::PersistentVolume>(*v.pv);
  const std::string id = "vol-" + std::to_string(index), name = v.ns + "-" + id;
  pv->mutable_metadata()->set_name(name);
  pv->mutable_metadata()->clear_generate_name();
  auto* src = pv->mutable_spec()->mutable_persistent_volume_source();
  // scheduler_perf's volume factory gives both kinds the id; the CSI handle is then renamed after
  // the namespaced volume, so that the two createPods ops' CSI volumes stay distinct.
  if (src->has_csi()) src->mutable_csi()->set_volume_handle(name);
  else if (src->has_aws_elastic_block_store()) src->mutable_aws_elastic_block_store()->set_volume_id(id);
  auto* ref = pv->mutable_spec()->mutable_claim_ref();
  ref->set_kind("PersistentVolumeClaim");
  ref->set_namespace_(v.ns);
  ref->set_name(claim);
  ref->set_api_version("v1");
  pv->mutable_status()->set_phase("Bound");
  if (auto ok = validate_storage_object(*pv); !ok) return error{"PersistentVolume " + name + ": " + ok.err().message};
  auto c = compile_pv(std::move(pv));
  if (!c) return error{"PersistentVolume " + name + ": " + c.err().message};
  return *c;
}

// Claim `name` of the op, bound to `volume`, phase Bound (the template carries bind-completed).
result<pvc_info_ptr> stamp_claim(const pod_volume_templates& v, const std::string& name, const std::string& volume) {
  auto pvc = std::make_shared<k8s::core::PersistentVolumeClaim>(*v.pvc);
  pvc->mutable_metadata()->set_name(name);
  pvc->mutable_metadata()->clear_generate_name();
  pvc->mutable_metadata()->set_namespace_(v.ns);
  pvc->mutable_spec()->set_volume_name(volume);
  pvc->mutable_status()->set_phase("Bound");
  if (auto ok = validate_storage_object(*pvc); !ok)
    return error{"PersistentVolumeClaim " + v.ns + "/" + name + ": " + ok.err().message};
  auto c = compile_pvc(std::move(pvc));
  if (!c) return error{"PersistentVolumeClaim " + v.ns + "/" + name + ": " + c.err().message};
  return *c;
}

}  // namespace

result<pod_with_volumes> make_pod_with_volumes(const pod_template& t, const pod_volume_templates& v,
                                               size_t pod_number, size_t index) {
  pod_with_volumes out;
  const std::string claim = "pvc-" + std::to_string(index);
  auto pv = stamp_volume(v, index, claim);
  if (!pv) return pv.err();
  out.volume = *pv;
  auto pvc = stamp_claim(v, claim, out.volume->name);
  if (!pvc) return pvc.err();
  out.claim = *pvc;
  // The template's one volume ("vol", see pod_tmpl) now names this pod's claim, in the compiled pod
  // and in the API object a --kubeconfig run posts.
  auto p = std::make_shared<pod_info>(*make_pod(t, pod_number));
  auto obj = std::make_shared<k8s::core::Pod>(*p->pod);
  if (obj->spec().volumes_size() != 1 || p->volumes.size() != 1)
    return error{"the pod template of a createPods with volume templates must have its one claim volume"};
  obj->mutable_spec()->mutable_volumes(0)->mutable_volume_source()->mutable_persistent_volume_claim()->set_claim_name(claim);
  p->volumes[0].claim_name = claim;
  p->pod = std::move(obj);
  out.pod = std::move(p);
  return out;
}

}  // namespace kas

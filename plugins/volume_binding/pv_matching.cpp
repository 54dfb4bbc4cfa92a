#include "plugins/volume_binding/pv_matching.hpp"

#include "messages/k8s/core.pb.h"

namespace kas::plugins {

namespace {
const std::string empty_string;
}  // namespace

bool check_node_affinity(const pv_info& pv, const label_map& node_labels) {
  if (!pv.node_affinity) return true;
  // kube checks against a Node built from the labels alone: its name is empty.
  static const std::string no_name;
  return pv.node_affinity->matches(node_labels, no_name);
}

bool check_volume_mode_mismatches(const pvc_info& claim, const pv_info& pv) { return claim.block_mode != pv.block_mode; }

bool check_access_modes(const pvc_info& claim, const pv_info& pv) {
  return (claim.access_modes & static_cast<uint8_t>(~pv.access_modes)) == 0;
}

bool is_volume_bound_to_claim(const pv_info& pv, const pvc_info& claim) {
  if (!pv.claim_ref) return false;
  if (pv.claim_ref->name != claim.name || pv.claim_ref->ns != claim.ns) return false;
  return pv.claim_ref->uid.empty() || pv.claim_ref->uid == claim.uid;
}

const std::string& volume_attributes_class(const pv_info& pv) {
  return pv.pv ? pv.pv->spec().volume_attributes_class_name() : empty_string;
}

const std::string& volume_attributes_class(const pvc_info& claim) {
  return claim.pvc ? claim.pvc->spec().volume_attributes_class_name() : empty_string;
}

const pv_info* find_matching_volume(const pvc_info& claim, const std::vector<const pv_info*>& volumes,
                                    const label_map* node_labels, const std::set<std::string>& excluded,
                                    bool delay_binding) {
  const pv_info* smallest = nullptr;
  const std::string& requested_class = claim.class_name();
  for (const pv_info* v : volumes) {
    if (excluded.count(v->name)) continue;
    const bool bound_to_claim = is_volume_bound_to_claim(*v, claim);
    if (v->claim_ref && !bound_to_claim) continue;
    if (v->capacity_bytes < claim.request_bytes) continue;
    if (check_volume_mode_mismatches(claim, *v)) continue;
    if (volume_attributes_class(claim) != volume_attributes_class(*v)) continue;
    if (v->deleting) continue;
    // The most expensive check; kube runs it here, before the cheaper ones below, and so do we:
    // a pre-bound volume failing it means no match at all.
    const bool affinity_ok = !node_labels || check_node_affinity(*v, *node_labels);
    if (bound_to_claim) return affinity_ok ? v : nullptr;
    if (!node_labels && delay_binding) continue;  // the scheduler binds delayed claims
    if (v->phase != "Available") continue;
    if (claim.selector && !claim.selector->matches(v->labels)) continue;
    if (v->storage_class != requested_class) continue;
    if (!affinity_ok) continue;
    if (node_labels && !check_access_modes(claim, *v)) continue;
    if (!smallest || smallest->capacity_bytes > v->capacity_bytes) smallest = v;
  }
  return smallest;
}

std::shared_ptr<k8s::core::PersistentVolume> bind_volume_to_claim(const pv_info& pv, const pvc_info& claim,
                                                                  bool& dirty) {
  dirty = false;
  const bool set_bound_by_controller = !is_volume_bound_to_claim(pv, claim);
  auto out = pv.pv ? std::make_shared<k8s::core::PersistentVolume>(*pv.pv) : std::make_shared<k8s::core::PersistentVolume>();
  if (!pv.pv) out->mutable_metadata()->set_name(pv.name);
  if (!pv.claim_ref || pv.claim_ref->name != claim.name || pv.claim_ref->ns != claim.ns ||
      pv.claim_ref->uid != claim.uid) {
    auto* ref = out->mutable_spec()->mutable_claim_ref();
    ref->Clear();
    ref->set_kind("PersistentVolumeClaim");
    ref->set_api_version("v1");
    ref->set_namespace_(claim.ns);
    ref->set_name(claim.name);
    ref->set_uid(claim.uid);
    ref->set_resource_version(claim.resource_version);
    dirty = true;
  }
  auto* ann = out->mutable_metadata()->mutable_annotations();
  if (set_bound_by_controller && !ann->count(std::string(ann_bound_by_controller))) {
    (*ann)[std::string(ann_bound_by_controller)] = "yes";
    dirty = true;
  }
  return out;
}

std::shared_ptr<k8s::core::PersistentVolumeClaim> claim_with_selected_node(const pvc_info& claim,
                                                                           const std::string& node) {
  auto out = claim.pvc ? std::make_shared<k8s::core::PersistentVolumeClaim>(*claim.pvc)
                       : std::make_shared<k8s::core::PersistentVolumeClaim>();
  if (!claim.pvc) {
    out->mutable_metadata()->set_namespace_(claim.ns);
    out->mutable_metadata()->set_name(claim.name);
  }
  (*out->mutable_metadata()->mutable_annotations())[std::string(ann_selected_node)] = node;
  return out;
}

}  // namespace kas::plugins

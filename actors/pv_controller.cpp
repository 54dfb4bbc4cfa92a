// See pv_controller.hpp for what is modelled.
#include "actors/pv_controller.hpp"

#include <algorithm>
#include <set>

#include "messages/k8s/core.pb.h"
#include "plugins/volume_binding/pv_matching.hpp"

namespace kas {

namespace {

using plugins::no_provisioner;

// Every volume, in name order: FindMatchingVolume gives ties to the first candidate, and kube's
// listers have no order, so name order makes which volume wins the same on every run.
std::vector<const pv_info*> volumes_by_name(const volume_objects& v) {
  std::vector<const pv_info*> out;
  out.reserve(v.pvs.size());
  v.pvs.for_each([&](const pv_info& pv) { out.push_back(&pv); });
  std::sort(out.begin(), out.end(), [](const pv_info* a, const pv_info* b) { return a->name < b->name; });
  return out;
}

// kube's findBestMatchForClaim: FindMatchingVolume without a node, over the volumes that offer
// every access mode the claim asks for (the controller's index checks them; FindMatchingVolume
// does only on the scheduler's path). Not modelled: the index also tries volumes with fewer access
// modes first. `taken` holds the volumes this sync already bound, which no other claim may take.
const pv_info* best_match(const std::vector<const pv_info*>& volumes, const pvc_info& claim,
                          const std::set<std::string>& taken, bool delay_binding) {
  std::vector<const pv_info*> candidates;
  candidates.reserve(volumes.size());
  for (const pv_info* pv : volumes)
    if (plugins::check_access_modes(claim, *pv)) candidates.push_back(pv);
  return plugins::find_matching_volume(claim, candidates, nullptr, taken, delay_binding);
}

template <class T>
std::shared_ptr<T> copy_of(const std::shared_ptr<const T>& obj) {
  return obj ? std::make_shared<T>(*obj) : std::make_shared<T>();
}

// Both sides of a binding, as the controller writes them: the volume's side is kube's
// GetBindVolumeToClaim, plus the phase the controller writes in its next status update.
void bind_claim(const pv_info_ptr& pv, const pvc_info_ptr& claim, std::vector<volume_change>& out) {
  bool dirty = false;
  auto pv_obj = plugins::bind_volume_to_claim(*pv, *claim, dirty);
  pv_obj->mutable_status()->set_phase("Bound");
  auto new_pv = compile_pv(std::move(pv_obj));
  auto claim_obj = copy_of(claim->pvc);
  claim_obj->mutable_spec()->set_volume_name(pv->name);
  claim_obj->mutable_status()->set_phase("Bound");
  (*claim_obj->mutable_metadata()->mutable_annotations())[std::string(ann_bind_completed)] = "yes";
  auto new_claim = compile_pvc(std::move(claim_obj));
  // Both recompile objects that compiled before, with fields set from valid values.
  if (!new_pv || !new_claim) return;
  out.push_back(pv_change(pv, *new_pv));
  out.push_back(pvc_change(claim, *new_claim));
}

// The node affinity of a volume provisioned for `node` by `driver`: the node's values of the
// topology keys the driver reports in the node's CSINode.
void pin_to_node(const volume_objects& v, const std::string& driver, const node_info& node,
                 k8s::core::PersistentVolumeSpec& spec) {
  const csi_node_info* csi = v.csi_node(node.name);
  const csi_node_driver* d = csi ? csi->driver(driver) : nullptr;
  if (!d || d->topology_keys.empty()) return;
  auto* term = spec.mutable_node_affinity()->mutable_required()->add_node_selector_terms();
  for (const auto& key : d->topology_keys) {
    const std::string* value = node.labels.get(key);
    if (!value) continue;
    auto* r = term->add_match_expressions();
    r->set_key(key);
    r->set_operator_("In");
    r->add_values(*value);
  }
  if (term->match_expressions_size() == 0) spec.clear_node_affinity();
}

// A new volume for the claim, already reserved for it (claimRef), as a provisioner creates it.
void provision(const volume_objects& v, const pvc_info& claim, const storage_class_info& sc, const node_info* node,
               std::vector<volume_change>& out) {
  auto pv_obj = std::make_shared<k8s::core::PersistentVolume>();
  std::string name = "pvc-" + (claim.uid.empty() ? claim.ns + "-" + claim.name : claim.uid);
  if (v.volume(name)) return;  // already provisioned; the next sync binds it
  pv_obj->mutable_metadata()->set_name(name);
  (*pv_obj->mutable_metadata()->mutable_annotations())["pv.kubernetes.io/provisioned-by"] = sc.provisioner;
  auto* spec = pv_obj->mutable_spec();
  (*spec->mutable_capacity())["storage"].set_string(std::to_string(claim.request_bytes));
  for (const auto& m : claim.pvc->spec().access_modes()) spec->add_access_modes(m);
  spec->set_storage_class_name(sc.name);
  spec->set_persistent_volume_reclaim_policy("Delete");
  if (claim.block_mode) spec->set_volume_mode("Block");
  auto* csi = spec->mutable_persistent_volume_source()->mutable_csi();
  csi->set_driver(sc.provisioner);
  csi->set_volume_handle(name);
  if (node) pin_to_node(v, sc.provisioner, *node, *spec);
  auto* ref = spec->mutable_claim_ref();
  ref->set_kind("PersistentVolumeClaim");
  ref->set_api_version("v1");
  ref->set_namespace_(claim.ns);
  ref->set_name(claim.name);
  ref->set_uid(claim.uid);
  pv_obj->mutable_status()->set_phase("Available");
  auto pv = compile_pv(std::move(pv_obj));
  if (pv) out.push_back(pv_change(nullptr, *pv));
}

// One claim's step. `volumes` is volumes_by_name(v).
void sync_claim(const volume_objects& v, const std::vector<const pv_info*>& volumes, const pvc_info_ptr& claim,
                const node_lookup& nodes, const std::set<std::string>& taken, std::vector<volume_change>& out) {
  if (!claim->volume_name.empty()) {
    pv_info_ptr pv = v.pvs.get(claim->volume_name);
    if (!pv || pv->deleting) return;  // waits for its volume
    if (pv->claim_ref && !plugins::is_volume_bound_to_claim(*pv, *claim)) return;  // another claim's
    return bind_claim(pv, claim, out);
  }
  const storage_class_info* sc = claim->class_name().empty() ? nullptr : v.storage_class(claim->class_name());
  bool wait_for_consumer = sc && sc->binding_mode == volume_binding_mode::wait_for_first_consumer;
  // The volume reserved for the claim (the scheduler's PreBind wrote its claimRef) even when it
  // waits for a consumer; otherwise the smallest that matches.
  if (const pv_info* pv = best_match(volumes, *claim, taken, wait_for_consumer))
    return bind_claim(v.pvs.get(pv->name), claim, out);
  if (!sc || sc->provisioner.empty() || sc->provisioner == no_provisioner) return;
  if (!wait_for_consumer) return provision(v, *claim, *sc, nullptr, out);
  if (claim->selected_node.empty()) return;
  const node_info* node = nodes(claim->selected_node);
  if (node) provision(v, *claim, *sc, node, out);
}

bool needs_phase(const pv_info& pv) { return pv.phase.empty() || pv.phase == "Pending"; }
bool pending(const pvc_info& c) { return c.phase != "Bound" && !c.deleting; }

}  // namespace

void pv_controller_work::note(const volume_change& ch) {
  if (ch.kind == volume_change::pv) {
    if (ch.old_pv) new_volumes.erase(ch.old_pv->name);
    if (ch.new_pv && needs_phase(*ch.new_pv)) new_volumes.insert(ch.new_pv->name);
  } else if (ch.kind == volume_change::pvc) {
    if (ch.old_pvc) pending_claims.erase(ch.old_pvc->key());
    if (ch.new_pvc && pending(*ch.new_pvc)) pending_claims.insert(ch.new_pvc->key());
  }
}

void pv_controller_work::rebuild(const volume_objects& v) {
  new_volumes.clear();
  pending_claims.clear();
  v.pvs.for_each([&](const pv_info& pv) {
    if (needs_phase(pv)) new_volumes.insert(pv.name);
  });
  v.pvcs.for_each([&](const pvc_info& c) {
    if (pending(c)) pending_claims.insert(c.key());
  });
}

std::vector<volume_change> pv_controller_sync(const volume_objects& v, const node_lookup& nodes,
                                              const pv_controller_work* work) {
  pv_controller_work scanned;
  if (!work) {
    scanned.rebuild(v);
    work = &scanned;
  }
  std::vector<volume_change> out;
  // A new volume (no phase yet) becomes Available, as the controller's first sync of it makes it;
  // VolumeBinding matches only Available volumes.
  for (const auto& name : work->new_volumes) {
    pv_info_ptr pv = v.pvs.get(name);
    if (!pv || !needs_phase(*pv)) continue;
    auto obj = copy_of(pv->pv);
    obj->mutable_status()->set_phase("Available");
    if (auto next = compile_pv(std::move(obj))) out.push_back(pv_change(pv, *next));
  }
  if (!out.empty()) return out;
  // Claims in key order, so that which claim gets a contested volume does not depend on hashing.
  std::set<std::string> taken;  // volumes bound in this sync: the next claim must not take them too
  std::vector<const pv_info*> volumes;
  bool listed = false;
  for (const auto& key : work->pending_claims) {
    pvc_info_ptr claim = v.pvcs.get(key);
    if (!claim || !pending(*claim)) continue;
    if (!listed) {  // once a sync, and only when a claim is pending
      volumes = volumes_by_name(v);
      listed = true;
    }
    size_t before = out.size();
    sync_claim(v, volumes, claim, nodes, taken, out);
    for (size_t i = before; i < out.size(); ++i)
      if (out[i].new_pv) taken.insert(out[i].new_pv->name);
  }
  return out;
}

}  // namespace kas

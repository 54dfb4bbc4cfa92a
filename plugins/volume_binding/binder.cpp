#include "plugins/volume_binding/binder.hpp"

#include <algorithm>
#include <set>

#include "cache/attachable_volumes.hpp"
#include "cache/csi_translation.hpp"
#include "messages/field_path.hpp"
#include "messages/k8s/core.pb.h"
#include "plugins/volume_binding/pv_matching.hpp"

namespace kas::plugins {

namespace {

fw::status unresolvable(const std::string& msg) { return fw::status::unresolvable(fw::intern(msg)); }

// kube's IsDelayBindingMode. A claim without a class, or whose class does not exist, binds
// immediately. A class without volumeBindingMode is read as Immediate, the API server's default.
bool is_delay_binding(const pvc_info& claim, const volume_objects& objs) {
  const std::string& cls = claim.class_name();
  if (cls.empty()) return false;
  const storage_class_info* sc = objs.storage_class(cls);
  return sc && sc->binding_mode == volume_binding_mode::wait_for_first_consumer;
}

// The volumes of class `cls`, in name order so that ties between equal candidates resolve the
// same way on every run (kube's listers have no order).
std::vector<const pv_info*> volumes_of_class(const volume_objects& objs, const std::string& cls) {
  std::vector<const pv_info*> out;
  objs.pvs.for_each([&](const pv_info& pv) {
    if (pv.storage_class == cls) out.push_back(&pv);
  });
  std::sort(out.begin(), out.end(), [](const pv_info* a, const pv_info* b) { return a->name < b->name; });
  return out;
}

// kube's checkBoundClaims. A migratable in-tree PV on a node whose CSINode lists its plugin as
// migrated is checked as its CSI translation (tryTranslatePVToCSI): the zone under the CSI
// driver's key.
fw::status check_bound_claims(const std::vector<const pvc_info*>& claims, const node_info& node,
                              const volume_objects& objs, bool& satisfied, bool& found) {
  for (const pvc_info* c : claims) {
    const pv_info* pv = objs.volume(c->volume_name);
    if (!pv) {
      found = false;
      return fw::status::ok();
    }
    const std::optional<node_selector>* affinity = &pv->node_affinity;
    auto plugin = csi_migration::in_tree_plugin(pv->source.kind);
    if (!plugin.empty() && csi_migration::migrated_on_node(csi_node_of(node, objs), plugin)) {
      if (!pv->csi_translation_error.empty())
        return fw::status::error("could not translate pv: " + pv->csi_translation_error);
      if (pv->csi_node_affinity) affinity = &pv->csi_node_affinity;
    }
    static const std::string no_name;  // kube checks a Node built from the labels alone
    if (*affinity && !(*affinity)->matches(node.labels, no_name)) {
      satisfied = false;
      return fw::status::ok();
    }
  }
  return fw::status::ok();
}

// kube's findMatchingVolumes: claims smallest first, each volume chosen at most once.
bool find_matching_volumes(std::vector<const pvc_info*> claims, const pod_volume_claims& all, const node_info& node,
                           std::vector<binding_info>& bindings, std::vector<const pvc_info*>& unmatched) {
  std::stable_sort(claims.begin(), claims.end(),
                   [](const pvc_info* a, const pvc_info* b) { return a->request_bytes < b->request_bytes; });
  static const std::vector<const pv_info*> none;
  std::set<std::string> chosen;
  bool found_all = true;
  for (const pvc_info* c : claims) {
    auto it = all.unbound_volumes_delay_binding.find(c->class_name());
    const auto& candidates = it == all.unbound_volumes_delay_binding.end() ? none : it->second;
    const pv_info* pv = find_matching_volume(*c, candidates, &node.labels, chosen, true);
    if (!pv) {
      unmatched.push_back(c);
      found_all = false;
      continue;
    }
    chosen.insert(pv->name);
    bindings.push_back({pv, c});
  }
  return found_all;
}

// kube's MatchTopologySelectorTerms: no terms match every node; otherwise some term's every
// requirement has the node's label value among its values.
bool match_topology(const std::vector<topology_term>& terms, const label_map& labels) {
  if (terms.empty()) return true;
  for (const auto& term : terms) {
    bool ok = true;
    for (const auto& r : term) {
      const std::string* v = labels.get(r.key);
      if (!v || std::find(r.values.begin(), r.values.end(), *v) == r.values.end()) {
        ok = false;
        break;
      }
    }
    if (ok) return true;
  }
  return false;
}

bool has_storage_request(const pvc_info& claim) {
  return claim.pvc && claim.pvc->spec().resources().requests().count("storage") > 0;
}

// kube's hasEnoughCapacity: only drivers that publish capacity (CSIDriver storageCapacity: true)
// are checked; then some CSIStorageCapacity of the class must reach the node and fit the claim.
bool has_enough_capacity(const std::string& provisioner, const pvc_info& claim, const storage_class_info& sc,
                         const node_info& node, const volume_objects& objs,
                         const csi_storage_capacity_info*& chosen) {
  chosen = nullptr;
  if (!has_storage_request(claim)) return true;
  const csi_driver_info* driver = objs.csi_driver(provisioner);
  if (!driver || !driver->storage_capacity) return true;
  std::vector<const csi_storage_capacity_info*> fits;
  objs.capacities.for_each([&](const csi_storage_capacity_info& c) {
    if (c.storage_class != sc.name) return;
    const int64_t* limit = volume_limit(c);
    if (!limit || *limit < claim.request_bytes) return;
    if (!c.node_topology || !c.node_topology->matches(node.labels)) return;
    fits.push_back(&c);
  });
  if (fits.empty()) return false;
  // The lister's order is arbitrary in kube; the first by namespace/name keeps runs repeatable.
  chosen = *std::min_element(fits.begin(), fits.end(), [](auto* a, auto* b) {
    return a->ns != b->ns ? a->ns < b->ns : a->name < b->name;
  });
  return true;
}

// kube's checkVolumeProvisions. Returns an error status for a claim without (an existing) class.
fw::status check_volume_provisions(const std::vector<const pvc_info*>& claims, const node_info& node,
                                   const volume_objects& objs, bool& satisfied, bool& sufficient,
                                   std::vector<dynamic_provision>& out) {
  for (const pvc_info* c : claims) {
    const std::string& cls = c->class_name();
    if (cls.empty()) return fw::status::error("no class for claim " + quoted(c->key()));
    const storage_class_info* sc = objs.storage_class(cls);
    if (!sc) return fw::status::error("failed to find storage class " + quoted(cls));
    if (sc->provisioner.empty() || sc->provisioner == no_provisioner || !match_topology(sc->allowed_topologies, node.labels)) {
      satisfied = false;
      out.clear();
      return fw::status::ok();
    }
    const csi_storage_capacity_info* cap = nullptr;
    if (!has_enough_capacity(sc->provisioner, *c, *sc, node, objs, cap)) {
      sufficient = false;
      out.clear();
      return fw::status::ok();
    }
    out.push_back({c, cap});
  }
  return fw::status::ok();
}

}  // namespace

bool claim_has_annotation(const pvc_info& claim, std::string_view key) {
  return claim.pvc && claim.pvc->metadata().annotations().count(std::string(key)) > 0;
}

const int64_t* volume_limit(const csi_storage_capacity_info& c) {
  if (c.maximum_volume_size_bytes) return &*c.maximum_volume_size_bytes;
  if (c.capacity_bytes) return &*c.capacity_bytes;
  return nullptr;
}

fw::status check_pod_claims(const pod_info& pod, const volume_objects& objs, bool& has_claims) {
  has_claims = false;
  for (const auto& v : pod.volumes) {
    if (v.claim_name.empty()) continue;
    has_claims = true;
    const pvc_info* c = objs.claim(pod.ns, v.claim_name);
    if (!c) {
      // Directly after a pod with an ephemeral volume is created, its claim normally does not exist yet.
      if (v.ephemeral)
        return unresolvable("waiting for ephemeral volume controller to create the persistentvolumeclaim " +
                            quoted(v.claim_name));
      return unresolvable("persistentvolumeclaim " + quoted(v.claim_name) + " not found");
    }
    if (c->phase == "Lost")
      return unresolvable("persistentvolumeclaim " + quoted(c->name) + " bound to non-existent persistentvolume " +
                          quoted(c->volume_name));
    if (c->deleting) return unresolvable("persistentvolumeclaim " + quoted(c->name) + " is being deleted");
    if (v.ephemeral && (c->ns != pod.ns || c->controller_uid.empty() || c->controller_uid != pod.uid))
      return unresolvable("PVC " + c->ns + "/" + c->name + " was not created for pod " + pod.ns + "/" + pod.name +
                          " (pod is not owner)");
  }
  return fw::status::ok();
}

pod_volume_claims get_pod_volume_claims(const pod_info& pod, const volume_objects& objs) {
  pod_volume_claims out;
  for (const auto& v : pod.volumes) {
    if (v.claim_name.empty()) continue;
    const pvc_info* c = objs.claim(pod.ns, v.claim_name);
    if (!c) continue;
    if (claim_fully_bound(*c))
      out.bound.push_back(c);
    else if (is_delay_binding(*c, objs) && c->volume_name.empty())
      out.unbound_delay_binding.push_back(c);
    else  // immediate, or pre-bound to a volume by name
      out.unbound_immediate.push_back(c);
  }
  for (const pvc_info* c : out.unbound_delay_binding) {
    const std::string& cls = c->class_name();
    if (!out.unbound_volumes_delay_binding.count(cls))
      out.unbound_volumes_delay_binding[cls] = volumes_of_class(objs, cls);
  }
  return out;
}

fw::status find_pod_volumes(const pod_info& pod, const pod_volume_claims& claims, const node_info& node,
                            const volume_objects& objs, pod_volumes& out) {
  (void)pod;
  out = {};
  bool bound_satisfied = true, bound_found = true, unbound_satisfied = true, sufficient = true;
  if (!claims.bound.empty()) {
    auto st = check_bound_claims(claims.bound, node, objs, bound_satisfied, bound_found);
    if (!st.is_success()) return st;
  }

  if (!claims.unbound_delay_binding.empty()) {
    std::vector<const pvc_info*> to_match, to_provision;
    bool wrong_node = false;
    for (const pvc_info* c : claims.unbound_delay_binding) {
      if (!claim_has_annotation(*c, ann_selected_node)) {
        to_match.push_back(c);
      } else if (c->selected_node != node.name) {
        // Provisioning already started for another node.
        wrong_node = true;
        break;
      } else {
        to_provision.push_back(c);
      }
    }
    if (wrong_node) {
      unbound_satisfied = false;
      to_match.clear();
      to_provision.clear();
    }
    if (!to_match.empty()) {
      std::vector<const pvc_info*> unmatched;
      unbound_satisfied = find_matching_volumes(to_match, claims, node, out.static_bindings, unmatched);
      to_provision.insert(to_provision.end(), unmatched.begin(), unmatched.end());
    }
    if (!to_provision.empty()) {
      unbound_satisfied = true;
      auto st = check_volume_provisions(to_provision, node, objs, unbound_satisfied, sufficient, out.dynamic_provisions);
      if (!st.is_success()) return st;
    }
  }

  std::vector<std::string_view> reasons;
  if (!bound_satisfied) reasons.push_back(err_reason_node_conflict);
  if (!unbound_satisfied) reasons.push_back(err_reason_bind_conflict);
  if (!sufficient) reasons.push_back(err_reason_not_enough_space);
  if (!bound_found) reasons.push_back(err_reason_pv_not_exist);
  if (!reasons.empty()) return fw::status(fw::code::unschedulable_and_unresolvable, std::move(reasons));
  return fw::status::ok();
}

bool are_pod_volumes_bound(const pod_info& pod, const volume_objects& objs) {
  for (const auto& v : pod.volumes) {
    if (v.claim_name.empty()) continue;
    const pvc_info* c = objs.claim(pod.ns, v.claim_name);
    if (!c || !claim_fully_bound(*c)) return false;
  }
  return true;
}

}  // namespace kas::plugins

#include "plugins/volume_restrictions/volume_restrictions.hpp"

#include <algorithm>

#include "plugins/helper/volumes_signer.hpp"

namespace kas::plugins {

namespace {

using claim_names = std::vector<std::string>;  // sorted, unique

// AddPod/RemovePod change only the count; the claim names are shared by every clone.
struct pre_filter_state final : fw::state_data {
  bool needs_disk_check = false;
  std::shared_ptr<const claim_names> rwop_claims;
  // How many references assigned pods hold to the pod's RWOP claims.
  int64_t conflicting_refs = 0;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_filter_state>(*this); }
};

bool is_pvc_volume(const pod_volume& v) { return !v.ephemeral && !v.claim_name.empty(); }

bool needs_restrictions_check(const volume_source& s) {
  return s.kind == volume_source::gce_pd || s.kind == volume_source::aws_ebs || s.kind == volume_source::rbd ||
         s.kind == volume_source::iscsi;
}

bool have_overlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const auto& x : a)
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  return false;
}

bool contains(const claim_names& names, const std::string& name) {
  return std::binary_search(names.begin(), names.end(), name);
}

// kube's conflictingPVCRefCountForPod: the persistentVolumeClaim volumes of `p` naming one of the
// claims. kube compares names only, not namespaces, and so does this.
int64_t refs_of(const pod_info& p, const claim_names& names) {
  int64_t n = 0;
  for (const auto& v : p.volumes)
    if (is_pvc_volume(v) && contains(names, v.claim_name)) ++n;
  return n;
}

// The names of the pod's claims with the ReadWriteOncePod access mode (kube's
// readWriteOncePodPVCsForPod); a missing claim is kube's lister NotFound, unresolvable.
fw::status rwop_claims_of(const pod_info& pod, const volume_objects& vols, claim_names& out) {
  for (const auto& v : pod.volumes) {
    if (!is_pvc_volume(v)) continue;
    const pvc_info* pvc = vols.claim(pod.ns, v.claim_name);
    if (!pvc) return fw::status::unresolvable(fw::intern("persistentvolumeclaim \"" + v.claim_name + "\" not found"));
    if (pvc->access_modes & access_rwop) out.push_back(pvc->name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return fw::status::ok();
}

// kube's calPreFilterState: how many of the claims some assigned pod in the pod's namespace uses
// (kube asks the snapshot's used-PVC set, one per claim). The pod itself never counts: it may
// already be assumed in a snapshot that re-validates its reservation.
int64_t used_claims(const pod_info& pod, const claim_names& names, const snapshot& snap) {
  std::vector<bool> used(names.size(), false);
  for (size_t i = 0; i < snap.size(); ++i) {
    for (const auto& p : snap.node(i).pods) {
      if (p->ns != pod.ns || p->uid == pod.uid) continue;
      for (const auto& v : p->volumes) {
        if (!is_pvc_volume(v)) continue;
        auto it = std::lower_bound(names.begin(), names.end(), v.claim_name);
        if (it != names.end() && *it == v.claim_name) used[static_cast<size_t>(it - names.begin())] = true;
      }
    }
  }
  return std::count(used.begin(), used.end(), true);
}

bool node_has_disk_conflict(const pod_info& pod, const node_info& node) {
  for (const auto& v : pod.volumes) {
    if (!needs_restrictions_check(v.inline_source)) continue;
    for (const auto& existing : node.pods)
      if (is_volume_conflict(v.inline_source, *existing)) return true;
  }
  return false;
}

fw::status update_with_pod(fw::cycle_state& state, const pod_info& p, int64_t multiplier) {
  auto* s = state.read_as<pre_filter_state>(volume_restrictions::pre_filter_key);
  if (!s) return fw::status::error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  s->conflicting_refs += multiplier * refs_of(p, *s->rwop_claims);
  return fw::status::ok();
}

// Volumes are immutable, so only a deleted pod can release a disk or a claim.
fw::queueing_hint after_pod_deleted(const pod_info& pod, const fw::event_objects& o) {
  const pod_info* deleted = o.old_pod;
  if (!deleted) return fw::queueing_hint::queue;
  if (deleted->ns != pod.ns) return fw::queueing_hint::skip;
  if (pods_have_volume_conflict(pod, *deleted)) return fw::queueing_hint::queue;
  // kube does not look the claim up for its access mode here: any shared claim queues.
  for (const auto& v : pod.volumes) {
    if (!is_pvc_volume(v)) continue;
    for (const auto& d : deleted->volumes)
      if (is_pvc_volume(d) && d.claim_name == v.claim_name) return fw::queueing_hint::queue;
  }
  return fw::queueing_hint::skip;
}

// A claim the pod waits for appearing (PreFilter needs it to read its access modes).
fw::queueing_hint after_claim_added(const pod_info& pod, const fw::event_objects& o) {
  if (!o.volume || o.volume->kind != volume_change::pvc || !o.volume->new_pvc) return fw::queueing_hint::queue;
  const pvc_info& pvc = *o.volume->new_pvc;
  if (pvc.ns != pod.ns) return fw::queueing_hint::skip;
  for (const auto& v : pod.volumes)
    if (is_pvc_volume(v) && v.claim_name == pvc.name) return fw::queueing_hint::queue;
  return fw::queueing_hint::skip;
}

}  // namespace

bool is_volume_conflict(const volume_source& v, const pod_info& existing) {
  for (const auto& ev : existing.volumes) {
    const volume_source& e = ev.inline_source;
    if (e.kind != v.kind) continue;
    switch (v.kind) {
      case volume_source::gce_pd:  // one read-write mount of a disk, or any number read-only
      case volume_source::iscsi:   // the same IQN is the same volume
        if (v.id == e.id && !(v.read_only && e.read_only)) return true;
        break;
      case volume_source::aws_ebs:  // an EBS volume attaches to one instance, whatever the mode
        if (v.id == e.id) return true;
        break;
      case volume_source::rbd:  // the same image: a shared monitor, the same pool and image name
        if (have_overlap(v.rbd_monitors, e.rbd_monitors) && v.rbd_pool == e.rbd_pool && v.id == e.id &&
            !(v.read_only && e.read_only))
          return true;
        break;
      default: break;
    }
  }
  return false;
}

bool pods_have_volume_conflict(const pod_info& pod, const pod_info& existing) {
  for (const auto& v : pod.volumes)
    if (needs_restrictions_check(v.inline_source) && is_volume_conflict(v.inline_source, existing)) return true;
  return false;
}

result<std::shared_ptr<fw::plugin>> volume_restrictions::make(const YAML::Node&, const std::string&,
                                                              const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<volume_restrictions>());
}

fw::status volume_restrictions::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                           fw::pre_filter_result&) const {
  bool needs_disk_check = std::any_of(pod.volumes.begin(), pod.volumes.end(),
                                      [](const pod_volume& v) { return needs_restrictions_check(v.inline_source); });
  // Most pods have neither kind of volume: no allocation for them.
  if (!needs_disk_check && std::none_of(pod.volumes.begin(), pod.volumes.end(), is_pvc_volume))
    return fw::status::skip();
  auto s = std::make_shared<pre_filter_state>();
  s->needs_disk_check = needs_disk_check;
  auto names = std::make_shared<claim_names>();
  if (auto st = rwop_claims_of(pod, snap.objects().volumes, *names); !st.is_success()) return st;
  // Scanning every assigned pod is the cost of having no used-claim index; pods without RWOP
  // claims (nearly all) never pay it.
  if (!names->empty()) s->conflicting_refs = used_claims(pod, *names, snap);
  s->rwop_claims = std::move(names);
  if (!s->needs_disk_check && s->conflicting_refs == 0) return fw::status::skip();
  state.write(pre_filter_key, std::move(s));
  return fw::status::ok();
}

fw::status volume_restrictions::add_pod(fw::cycle_state& state, const pod_info&, const pod_info& pod_to_add,
                                        const node_info&) const {
  return update_with_pod(state, pod_to_add, 1);
}

fw::status volume_restrictions::remove_pod(fw::cycle_state& state, const pod_info&, const pod_info& pod_to_remove,
                                           const node_info&) const {
  return update_with_pod(state, pod_to_remove, -1);
}

fw::status volume_restrictions::filter(const fw::cycle_state& state, const pod_info& pod,
                                       const node_info& node) const {
  auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  if ((!s || s->needs_disk_check) && node_has_disk_conflict(pod, node))
    return fw::status::unschedulable(err_reason_disk_conflict);
  if (!s) return fw::status::error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  if (s->conflicting_refs > 0) return fw::status::unschedulable(err_reason_rwop_conflict);
  return fw::status::ok();
}

bool volume_restrictions::skip_may_change_with(const pod_info& changed) const {
  return std::any_of(changed.volumes.begin(), changed.volumes.end(), is_pvc_volume);
}

std::vector<fw::cluster_event_with_hint> volume_restrictions::events_to_register() const {
  // With queueing hints on (kube's default) only NodeAdd is registered for nodes: no node update
  // changes this plugin's verdict. Pod updates are not either: spec.volumes is immutable.
  return {
    {{fw::event_resource::pod, fw::act_delete, "PodDelete"}, after_pod_deleted},
    {{fw::event_resource::node, fw::act_add, "NodeAdd"}, {}},
    {{fw::event_resource::pvc, fw::act_add, "PersistentVolumeClaimAdd"}, after_claim_added},
  };
}

bool volume_restrictions::sign_pod(const pod_info& pod, std::string& out) const {
  helper::sign_volumes(pod, out);
  return true;
}

}  // namespace kas::plugins

#include "plugins/volume_zone/volume_zone.hpp"

#include <algorithm>

#include "plugins/helper/volumes_signer.hpp"

namespace kas::plugins {

namespace {

constexpr std::string_view beta_zone = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view beta_region = "failure-domain.beta.kubernetes.io/region";
constexpr std::string_view ga_zone = "topology.kubernetes.io/zone";
constexpr std::string_view ga_region = "topology.kubernetes.io/region";
// kube's order: the PV's topologies come out in it, and the PV hint compares them as lists.
constexpr std::string_view topology_labels[] = {beta_zone, beta_region, ga_zone, ga_region};

constexpr std::string_view msg_no_pv_no_class = "PersistentVolumeClaim had no pv name and storageClass name";
constexpr std::string_view msg_no_pv_name = "PersistentVolume had no name";

std::string_view to_ga_label(std::string_view key) {
  if (key == beta_region) return ga_region;
  if (key == beta_zone) return ga_zone;
  return key;
}

// Go's %q for the object names kube quotes in its messages.
std::string go_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

// The apiserver's NotFound text as the informer listers report it: the lister's singular resource
// and group ("persistentvolumeclaim", "storageclass.storage.k8s.io").
fw::status not_found(std::string_view resource, std::string_view name) {
  std::string msg(resource);
  msg += ' ';
  msg += go_quote(name);
  msg += " not found";
  return fw::status::unresolvable(fw::intern(msg));
}

// The topologies of the bound PVs of every persistentVolumeClaim volume of `pod` (kube's
// getPVbyPod). Generic ephemeral volumes are not read, as in kube.
fw::status pod_pv_topologies(const pod_info& pod, const volume_objects& vols, std::vector<pv_topology>& out) {
  for (const auto& v : pod.volumes) {
    if (v.ephemeral || v.claim_name.empty()) continue;
    const pvc_info* pvc = vols.claim(pod.ns, v.claim_name);
    if (!pvc) return not_found("persistentvolumeclaim", v.claim_name);
    if (pvc->volume_name.empty()) {
      const std::string& class_name = pvc->class_name();
      if (class_name.empty()) return fw::status::unresolvable(msg_no_pv_no_class);
      const storage_class_info* sc = vols.storage_class(class_name);
      if (!sc) return not_found("storageclass.storage.k8s.io", class_name);
      if (sc->binding_mode == volume_binding_mode::unset)
        return fw::status::unresolvable(
          fw::intern("VolumeBindingMode not set for StorageClass " + go_quote(class_name)));
      // VolumeBinding picks the PV (and so the zone) of a WaitForFirstConsumer claim.
      if (sc->binding_mode == volume_binding_mode::wait_for_first_consumer) continue;
      return fw::status::unresolvable(msg_no_pv_name);
    }
    const pv_info* pv = vols.volume(pvc->volume_name);
    if (!pv) return not_found("persistentvolume", pvc->volume_name);
    auto tops = pv_topologies(*pv);
    out.insert(out.end(), std::make_move_iterator(tops.begin()), std::make_move_iterator(tops.end()));
  }
  return fw::status::ok();
}

// Immutable after PreFilter: AddPod/RemovePod do not exist for this plugin.
struct pre_filter_state final : fw::state_data {
  std::vector<pv_topology> topologies;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_filter_state>(*this); }
};

bool node_has_topology_label(const node_info& node) {
  for (auto key : topology_labels)
    if (node.labels.has(key)) return true;
  return false;
}

// The first topology the node does not satisfy, or null.
const pv_topology* first_mismatch(const std::vector<pv_topology>& tops, const node_info& node) {
  for (const auto& t : tops) {
    const std::string* v = node.labels.get(t.key);
    if (!v) v = node.labels.get(to_ga_label(t.key));
    if (!v || !std::binary_search(t.values.begin(), t.values.end(), *v)) return &t;
  }
  return nullptr;
}

// The PV topologies for Filter: PreFilter's, or computed again from the cycle's snapshot when
// PreFilter did not run (kube's fallback).
fw::status topologies_for(const fw::cycle_state& state, const pod_info& pod, std::vector<pv_topology>& local,
                          const std::vector<pv_topology>*& out) {
  if (auto* s = state.read_as<pre_filter_state>(volume_zone::pre_filter_key)) {
    out = &s->topologies;
    return fw::status::ok();
  }
  const snapshot* snap = state.snapshot();
  if (!snap) return fw::status::error("VolumeZone: no PreFilter state and no snapshot to read claims from");
  auto st = pod_pv_topologies(pod, snap->objects().volumes, local);
  out = &local;
  return st;
}

bool pod_uses_claim(const pod_info& pod, const pvc_info& pvc) {
  if (pod.ns != pvc.ns) return false;
  for (const auto& v : pod.volumes)
    if (!v.ephemeral && v.claim_name == pvc.name) return true;
  return false;
}

fw::queueing_hint after_storage_class_added(const pod_info&, const fw::event_objects& o) {
  if (!o.volume || o.volume->kind != volume_change::storage_class || !o.volume->new_class)
    return fw::queueing_hint::queue;
  return o.volume->new_class->binding_mode == volume_binding_mode::wait_for_first_consumer ? fw::queueing_hint::queue
                                                                                          : fw::queueing_hint::skip;
}

fw::queueing_hint after_claim_change(const pod_info& pod, const fw::event_objects& o) {
  if (!o.volume || o.volume->kind != volume_change::pvc) return fw::queueing_hint::queue;
  const pvc_info* pvc = o.volume->new_pvc.get();
  return pvc && pod_uses_claim(pod, *pvc) ? fw::queueing_hint::queue : fw::queueing_hint::skip;
}

fw::queueing_hint after_volume_change(const pod_info&, const fw::event_objects& o) {
  if (!o.volume || o.volume->kind != volume_change::pv || !o.volume->new_pv) return fw::queueing_hint::queue;
  if (!o.volume->old_pv) return fw::queueing_hint::queue;  // a new PV
  // Only the topology labels matter: spec.nodeAffinity is immutable and NodeAffinity's concern.
  return pv_topologies(*o.volume->old_pv) != pv_topologies(*o.volume->new_pv) ? fw::queueing_hint::queue
                                                                              : fw::queueing_hint::skip;
}

}  // namespace

std::optional<std::vector<std::string>> label_zones_to_set(std::string_view value) {
  constexpr std::string_view delimiter = "__";
  constexpr std::string_view space = " \t\n\v\f\r";
  std::vector<std::string> zones;
  size_t start = 0;
  while (true) {
    size_t end = value.find(delimiter, start);
    std::string_view part = value.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    size_t first = part.find_first_not_of(space);
    if (first == std::string_view::npos) return std::nullopt;  // empty after trimming
    part = part.substr(first, part.find_last_not_of(space) - first + 1);
    zones.emplace_back(part);
    if (end == std::string_view::npos) break;
    start = end + delimiter.size();
  }
  std::sort(zones.begin(), zones.end());
  zones.erase(std::unique(zones.begin(), zones.end()), zones.end());
  return zones;
}

std::vector<pv_topology> pv_topologies(const pv_info& pv) {
  std::vector<pv_topology> out;
  for (auto key : topology_labels) {
    const std::string* value = pv.labels.get(key);
    if (!value) continue;
    auto zones = label_zones_to_set(*value);
    if (!zones) continue;
    out.push_back(pv_topology{pv.name, std::string(key), std::move(*zones)});
  }
  return out;
}

result<std::shared_ptr<fw::plugin>> volume_zone::make(const YAML::Node&, const std::string&, const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<volume_zone>());
}

fw::status volume_zone::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                   fw::pre_filter_result&) const {
  bool has_claims = std::any_of(pod.volumes.begin(), pod.volumes.end(),
                                [](const pod_volume& v) { return !v.ephemeral && !v.claim_name.empty(); });
  if (!has_claims) return fw::status::skip();
  auto s = std::make_shared<pre_filter_state>();
  auto st = pod_pv_topologies(pod, snap.objects().volumes, s->topologies);
  if (!st.is_success()) return st;
  if (s->topologies.empty()) return fw::status::skip();
  state.write(pre_filter_key, std::move(s));
  return fw::status::ok();
}

fw::status volume_zone::filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const {
  if (pod.volumes.empty()) return fw::status::ok();
  std::vector<pv_topology> local;
  const std::vector<pv_topology>* tops = nullptr;
  if (auto st = topologies_for(state, pod, local, tops); !st.is_success()) return st;
  // A node without any topology label is in the only zone there is.
  if (!node_has_topology_label(node)) return fw::status::ok();
  if (first_mismatch(*tops, node)) return fw::status::unresolvable(err_reason_conflict);
  return fw::status::ok();
}

std::string volume_zone::explain(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const {
  std::vector<pv_topology> local;
  const std::vector<pv_topology>* tops = nullptr;
  if (!topologies_for(state, pod, local, tops).is_success()) return {};
  const pv_topology* t = first_mismatch(*tops, node);
  if (!t) return {};
  std::string out = "PersistentVolume " + t->pv_name + " has " + t->key + " in [";
  for (size_t i = 0; i < t->values.size(); ++i) out += (i ? "," : "") + t->values[i];
  out += "]";
  return out;
}

std::vector<fw::cluster_event_with_hint> volume_zone::events_to_register() const {
  // With queueing hints on (kube's default) a node taint change is not registered: it only covered
  // NodeAdd events that preCheck dropped. StorageClass updates are not either: volumeBindingMode
  // is immutable.
  return {
    {{fw::event_resource::storage_class, fw::act_add, "StorageClassAdd"}, after_storage_class_added},
    {{fw::event_resource::node, fw::act_add | fw::act_update_node_label, "NodeAdd|NodeLabelChange"}, {}},
    {{fw::event_resource::pvc, fw::act_add | fw::act_update, "PersistentVolumeClaimAdd|Update"}, after_claim_change},
    {{fw::event_resource::pv, fw::act_add | fw::act_update, "PersistentVolumeAdd|Update"}, after_volume_change},
  };
}

bool volume_zone::sign_pod(const pod_info& pod, std::string& out) const {
  helper::sign_volumes(pod, out);
  return true;
}

}  // namespace kas::plugins

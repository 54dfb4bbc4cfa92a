#include "plugins/node_volume_limits/node_volume_limits.hpp"

#include <algorithm>

#include "cache/cluster_objects.hpp"

namespace kas::plugins {

namespace {

// The pod's own volumes are resolved once per cycle: claims, PVs and StorageClasses come from the
// cycle's snapshot, which does not change under the cycle, and only the node's CSINode is left to
// look at per node. The objects are kept for the per-node lookups.
struct pre_filter_state final : fw::state_data {
  cluster_objects_ptr objects;
  std::vector<attachable_volume> wanted;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_filter_state>(*this); }
};

fw::status status_of(const attachable_volume& failed) {
  if (failed.failure == attachable_volume::missing_claim)
    return fw::status(fw::code::unschedulable_and_unresolvable, fw::intern(failed.message));
  return fw::status::error(failed.message);
}

const cluster_objects* objects_of(const fw::cycle_state& state, const pre_filter_state* s) {
  if (s) return s->objects.get();
  // PreFilter did not run for this state (a re-check outside the cycle): the cycle's snapshot.
  if (const auto* snap = state.snapshot()) return &snap->objects();
  return nullptr;
}

// Per driver counts of the volumes a pod adds, for the few drivers of one node.
struct driver_counts {
  std::vector<std::pair<std::string_view, int64_t>> n;
  void add(std::string_view driver) {
    for (auto& [d, c] : n)
      if (d == driver) return void(++c);
    n.emplace_back(driver, 1);
  }
};

// Adds the volumes that apply on a node with or without a CSINode to `into`, each unique volume
// once; returns the first failure that applies.
fw::status collect(const std::vector<attachable_volume>& volumes, bool has_csi_node,
                   std::vector<const attachable_volume*>& into) {
  for (const auto& v : volumes) {
    if (v.needs_csi_node && !has_csi_node) continue;  // no migration without a CSINode
    if (v.failure != attachable_volume::none) return status_of(v);
    if (std::none_of(into.begin(), into.end(), [&](const attachable_volume* o) { return o->same_volume(v); }))
      into.push_back(&v);
  }
  return fw::status::ok();
}

}  // namespace

// Counts on one node. `exceeded_driver` is set when the pod does not fit.
struct node_volume_limits::verdict {
  fw::status status;
  std::string exceeded_driver;
  int64_t attached = 0, added = 0, limit = 0;
};

result<std::shared_ptr<fw::plugin>> node_volume_limits::make(const YAML::Node&, const std::string&,
                                                             const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<node_volume_limits>());
}

fw::status node_volume_limits::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                          fw::pre_filter_result&) const {
  if (!has_attachable_volumes(pod)) return fw::status::skip();
  auto s = std::make_shared<pre_filter_state>();
  s->objects = snap.objects_ptr();
  s->wanted = attachable_volumes(pod, s->objects->volumes, true);
  state.write(pre_filter_key, std::move(s));
  return fw::status::ok();
}

node_volume_limits::verdict node_volume_limits::count_on_node(const std::vector<attachable_volume>& wanted,
                                                              const volume_objects& objects,
                                                              const node_info& node) const {
  verdict out;
  // The node's side comes resolved from the cache, or is resolved here for a node copy changed
  // outside it.
  std::shared_ptr<const node_volume_usage> resolved;
  const node_volume_usage* usage = nullptr;
  const csi_node_info* csi_node = nullptr;
  if (!node.volume_usage_current) {
    usage = (resolved = volume_usage_of(node.name, node.pods, objects)).get();
    csi_node = usage ? usage->csi_node.get() : nullptr;
  } else if (node.has_csi_node) {  // else the usage is not even looked at
    usage = node.volume_usage.get();
    csi_node = usage->csi_node.get();
  }
  std::vector<const attachable_volume*> added;
  if (out.status = collect(wanted, csi_node != nullptr, added); !out.status.is_success() || added.empty())
    return out;
  // Without a CSINode, or with drivers that report no count, nothing limits the node.
  if (!csi_node || usage->limits.empty()) return out;
  if (usage->failed) {
    out.status = status_of(*usage->failure);
    return out;
  }
  // A volume the node's pods already use is not attached again. As in kube, a volume the pod
  // brings is not taken off when only a VolumeAttachment holds it: it counts twice.
  driver_counts added_count;
  for (const auto* v : added)
    if (!usage->uses(*v)) added_count.add(v->driver);
  // Drivers in name order, so that explain names the same one every time.
  std::sort(added_count.n.begin(), added_count.n.end());
  for (const auto& [driver, n] : added_count.n) {
    const auto* l = usage->limit_of(driver);
    if (!l) continue;
    int64_t have = l->attached, limit = l->limit;
    if (have + n > limit) {
      out.status = fw::status::unschedulable(err_reason_max_volume_count);
      out.exceeded_driver = std::string(driver);
      out.attached = have, out.added = n, out.limit = limit;
      return out;
    }
  }
  return out;
}

fw::status node_volume_limits::filter(const fw::cycle_state& state, const pod_info& pod,
                                      const node_info& node) const {
  if (pod.volumes.empty()) return fw::status::ok();
  auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  const cluster_objects* objects = objects_of(state, s);
  if (!objects) return fw::status::error("NodeVolumeLimits: no storage objects for this cycle");
  if (s) return count_on_node(s->wanted, objects->volumes, node).status;
  return count_on_node(attachable_volumes(pod, objects->volumes, true), objects->volumes, node).status;
}

std::string node_volume_limits::explain(const fw::cycle_state& state, const pod_info& pod,
                                        const node_info& node) const {
  auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  const cluster_objects* objects = objects_of(state, s);
  if (!objects) return {};
  auto v = count_on_node(s ? s->wanted : attachable_volumes(pod, objects->volumes, true), objects->volumes, node);
  if (v.exceeded_driver.empty()) return {};
  return "CSI driver " + v.exceeded_driver + ": " + std::to_string(v.attached) + " volume(s) in use + " +
         std::to_string(v.added) + " new > limit " + std::to_string(v.limit);
}

std::vector<fw::cluster_event_with_hint> node_volume_limits::events_to_register() const {
  namespace h = node_volume_limits_hints;
  auto csi_node_updated = [](const pod_info& pod, const fw::event_objects& o) {
    const volume_change* ch = o.volume;
    if (!ch || ch->kind != volume_change::csi_node) return fw::queueing_hint::queue;
    return h::csi_node_updated(pod, ch->old_csi_node.get(), ch->new_csi_node.get());
  };
  auto pod_deleted = [](const pod_info& pod, const fw::event_objects& o) {
    return h::assigned_pod_deleted(pod, o.old_pod);
  };
  auto claim_added = [](const pod_info& pod, const fw::event_objects& o) {
    const volume_change* ch = o.volume;
    if (!ch || ch->kind != volume_change::pvc) return fw::queueing_hint::queue;
    return h::claim_added(pod, ch->new_pvc.get());
  };
  auto attachment_deleted = [](const pod_info& pod, const fw::event_objects& o) {
    const volume_change* ch = o.volume;
    if (!ch || ch->kind != volume_change::volume_attachment) return fw::queueing_hint::queue;
    return h::volume_attachment_deleted(pod, ch->old_attachment.get());
  };
  return {
    // Any new CSINode may take pods its node rejected for lack of one: no hint.
    {{fw::event_resource::csi_node, fw::act_add, "CSINodeAdd"}, {}},
    {{fw::event_resource::csi_node, fw::act_update, "CSINodeUpdate"}, csi_node_updated},
    {{fw::event_resource::assigned_pod, fw::act_delete, "AssignedPodDelete"}, pod_deleted},
    {{fw::event_resource::pvc, fw::act_add, "PersistentVolumeClaimAdd"}, claim_added},
    {{fw::event_resource::volume_attachment, fw::act_delete, "VolumeAttachmentDelete"}, attachment_deleted},
  };
}

bool node_volume_limits::sign_pod(const pod_info& pod, std::string& out) const {
  // What Filter reads of the pod: its namespace (claims are looked up there), each counted volume,
  // and for a generic ephemeral volume the pod's uid (the claim must be owned by it). Other
  // volumes (configMap, secret, emptyDir, ...) are left out so look-alike pods still match.
  std::vector<std::string> parts;
  bool ephemeral = false;
  for (const auto& v : pod.volumes) {
    if (!v.claim_name.empty()) {
      parts.push_back((v.ephemeral ? "e:" : "c:") + v.claim_name);
      ephemeral = ephemeral || v.ephemeral;
    } else if (migratable_inline(v)) {
      parts.push_back("i:" + std::string(csi_migration::in_tree_plugin(v.inline_source.kind)) + ":" +
                      v.inline_source.id);
    }
  }
  std::sort(parts.begin(), parts.end());
  out += pod.ns;
  out += '|';
  if (ephemeral) out += pod.uid;
  for (const auto& p : parts) {
    out += '|';
    out += p;
  }
  return true;
}

namespace node_volume_limits_hints {

fw::queueing_hint assigned_pod_deleted(const pod_info&, const pod_info* deleted) {
  if (!deleted) return fw::queueing_hint::queue;
  // Only a pod that held (or was about to hold) a node's attachments frees one.
  if (deleted->volumes.empty()) return fw::queueing_hint::skip;
  if (deleted->node_name.empty() && deleted->nominated_node_name.empty()) return fw::queueing_hint::skip;
  return has_attachable_volumes(*deleted) ? fw::queueing_hint::queue
                                                                               : fw::queueing_hint::skip;
}

fw::queueing_hint claim_added(const pod_info& pod, const pvc_info* added) {
  if (!added) return fw::queueing_hint::queue;
  if (added->ns != pod.ns) return fw::queueing_hint::skip;
  for (const auto& v : pod.volumes)
    if (!v.claim_name.empty() && v.claim_name == added->name) return fw::queueing_hint::queue;
  return fw::queueing_hint::skip;
}

fw::queueing_hint csi_node_updated(const pod_info&, const csi_node_info* old_node, const csi_node_info* new_node) {
  if (!old_node || !new_node) return fw::queueing_hint::queue;
  for (const auto& d : new_node->drivers) {
    const csi_node_driver* before = old_node->driver(d.name);
    int64_t old_limit = before && before->allocatable_count ? *before->allocatable_count : 0;
    int64_t new_limit = d.allocatable_count ? *d.allocatable_count : 0;
    if (new_limit > old_limit) return fw::queueing_hint::queue;
  }
  return fw::queueing_hint::skip;
}

fw::queueing_hint volume_attachment_deleted(const pod_info& pod, const volume_attachment_info* deleted) {
  if (!deleted) return fw::queueing_hint::queue;
  for (const auto& v : pod.volumes) {
    // Any claim may be the detached volume's (kube does not resolve it).
    if (!v.claim_name.empty() && !v.ephemeral) return fw::queueing_hint::queue;
    if (!migratable_inline(v)) continue;
    // An inline volume kube cannot translate queues the pod too (kube returns the error with Queue).
    if (!csi_migration::inline_volume_handle(v.inline_source)) return fw::queueing_hint::queue;
    auto driver = csi_migration::csi_driver_of(csi_migration::in_tree_plugin(v.inline_source.kind));
    if (deleted->attacher == driver) return fw::queueing_hint::queue;
  }
  return fw::queueing_hint::skip;
}

}  // namespace node_volume_limits_hints

}  // namespace kas::plugins

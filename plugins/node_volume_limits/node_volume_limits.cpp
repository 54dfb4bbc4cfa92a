#include "plugins/node_volume_limits/node_volume_limits.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <unordered_set>

#include "cache/cluster_objects.hpp"

namespace kas::plugins {

namespace {

// The pod's own volumes are resolved once per cycle: claims, PVs and StorageClasses come from the
// cycle's snapshot, which does not change under the cycle, and only the node's CSINode is left to
// look at per node. The objects are kept for the node's other pods, resolved per node.
struct pre_filter_state final : fw::state_data {
  cluster_objects_ptr objects;
  std::vector<counted_volume> wanted;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_filter_state>(*this); }
};

bool migratable_inline(const pod_volume& v) { return !csi_migration::in_tree_plugin(v.inline_source.kind).empty(); }

bool counts(const pod_volume& v) { return !v.claim_name.empty() || v.ephemeral || migratable_inline(v); }

fw::status error_status(const std::string& message) { return fw::status::error(message); }

// kube's checkAttachableInlineVolume, up to the migration check, which needs the node.
counted_volume resolve_inline(const pod_volume& v) {
  counted_volume c;
  c.needs_csi_node = true;
  auto plugin = csi_migration::in_tree_plugin(v.inline_source.kind);
  c.driver = std::string(csi_migration::csi_driver_of(plugin));
  auto handle = csi_migration::inline_volume_handle(v.inline_source);
  if (!handle)
    c.failure = error_status("converting volume(" + v.name + ") from inline to csi: " + handle.err().message);
  else
    c.handle = std::move(*handle);
  return c;
}

// The random part of the names given to unbound claims, as kube's rand.String(32).
std::string random_prefix() {
  static constexpr std::string_view alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::random_device rd;
  std::mt19937_64 gen((uint64_t(rd()) << 32) ^ rd());
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::string s(32, ' ');
  for (auto& ch : s) ch = alphabet[pick(gen)];
  return s;
}

const cluster_objects* objects_of(const fw::cycle_state& state, const pre_filter_state* s) {
  if (s) return s->objects.get();
  // PreFilter did not run for this state (a re-check outside the cycle): the cycle's snapshot.
  if (const auto* snap = state.snapshot()) return &snap->objects();
  return nullptr;
}

// kube's getNodeVolumeAttachmentInfo: the node's attachments of CSI persistent volumes, as unique
// volume name -> attacher. Attachments without an attacher, of an inline volume, of a PV that is
// gone or of a PV that is not CSI are not counted.
// One unique volume on a node: its CSI driver and handle, viewed in objects the call keeps alive.
// Filter runs per node and a node holds a few volumes, so flat vectors searched linearly beat maps
// of "driver/handle" strings (which were most of SchedulingCSIPVs' CPU).
struct volume_ref {
  std::string_view driver, handle;
  bool operator==(const volume_ref& o) const { return driver == o.driver && handle == o.handle; }
};

bool holds(const std::vector<volume_ref>& v, const volume_ref& r) { return std::find(v.begin(), v.end(), r) != v.end(); }

void add_unique(std::vector<volume_ref>& v, const volume_ref& r) {
  if (!holds(v, r)) v.push_back(r);
}

// Per driver counts, for the few drivers of one node.
struct driver_counts {
  std::vector<std::pair<std::string_view, int64_t>> n;
  void add(std::string_view driver) {
    for (auto& [d, c] : n)
      if (d == driver) return void(++c);
    n.emplace_back(driver, 1);
  }
  int64_t of(std::string_view driver) const {
    for (const auto& [d, c] : n)
      if (d == driver) return c;
    return 0;
  }
};

// The node's VolumeAttachments that count: a CSI volume of a known PV, under the attacher.
std::vector<volume_ref> attachments_on(const volume_objects& objects, const std::string& node) {
  std::vector<volume_ref> out;
  const node_attachments* on_node = objects.attachments_on(node);
  if (!on_node) return out;
  for (const auto& a : on_node->items) {
    if (a->attacher.empty() || !a->pv_name) continue;
    const pv_info* pv = objects.volume(*a->pv_name);
    if (!pv || pv->source.kind != volume_source::csi) continue;
    add_unique(out, {a->attacher, pv->source.id});
  }
  return out;
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
  return std::shared_ptr<fw::plugin>(std::make_shared<node_volume_limits>(random_prefix()));
}

std::optional<counted_volume> node_volume_limits::from_storage_class(const pvc_info& claim,
                                                                      const volume_objects& objects) const {
  // Without a StorageClass the claim binds immediately (before scheduling), so it is not counted.
  const std::string& class_name = claim.class_name();
  if (class_name.empty()) return std::nullopt;
  const storage_class_info* sc = objects.storage_class(class_name);
  if (!sc) return std::nullopt;
  counted_volume c;
  // The claim is not bound yet: a name only this claim has, so pods sharing it count it once.
  c.handle = unbound_prefix_ + "-" + claim.ns + "/" + claim.name;
  if (csi_migration::is_migratable_plugin(sc->provisioner)) {
    if (!csi_migration::migration_ga(sc->provisioner)) return std::nullopt;  // Azure File, vSphere
    c.driver = std::string(csi_migration::csi_driver_of(sc->provisioner));
    c.needs_csi_node = true;
    return c;
  }
  c.driver = sc->provisioner;
  return c;
}

void node_volume_limits::resolve_claim(const pod_info& pod, const pod_volume& v, const volume_objects& objects,
                                       bool new_pod, std::vector<counted_volume>& out) const {
  const pvc_info* claim = objects.claim(pod.ns, v.claim_name);
  if (!claim) {
    // A pod on the node whose claim is gone: there is no telling which volume it used.
    if (!new_pod) return;
    counted_volume c;
    c.failure = fw::status(fw::code::unschedulable_and_unresolvable,
                           fw::intern("looking up PVC " + pod.ns + "/" + v.claim_name +
                                      ": persistentvolumeclaims \"" + v.claim_name + "\" not found"));
    out.push_back(std::move(c));
    return;
  }
  // An ephemeral volume's claim must be the one the ephemeral controller made for this pod.
  if (v.ephemeral && claim->controller_uid != pod.uid) {
    counted_volume c;
    c.failure = error_status("PVC " + claim->ns + "/" + claim->name + " was not created for pod " + pod.ns + "/" +
                             pod.name + " (pod is not owner)");
    out.push_back(std::move(c));
    return;
  }
  // kube's getCSIDriverInfo: the bound PV's CSI source, a migratable in-tree PV's translation, or
  // for an unbound claim (or a missing PV) the StorageClass's provisioner.
  const pv_info* pv = claim->volume_name.empty() ? nullptr : objects.volume(claim->volume_name);
  if (!pv) {
    if (auto c = from_storage_class(*claim, objects); c) out.push_back(std::move(*c));
    return;
  }
  counted_volume c;
  if (pv->source.kind == volume_source::csi) {
    c.driver = pv->source.driver;
    c.handle = pv->source.id;
  } else {
    auto plugin = csi_migration::in_tree_plugin(pv->source.kind);
    if (plugin.empty()) return;
    auto handle = csi_migration::pv_volume_handle(*pv);
    if (!handle) return;  // kube logs and does not count it
    c.driver = std::string(csi_migration::csi_driver_of(plugin));
    c.handle = std::move(*handle);
    c.needs_csi_node = true;
  }
  if (c.driver.empty() || c.handle.empty()) return;
  out.push_back(std::move(c));
}

std::vector<counted_volume> node_volume_limits::resolve(const pod_info& pod, const volume_objects& objects,
                                                        bool new_pod) const {
  std::vector<counted_volume> out;
  for (const auto& v : pod.volumes) {
    if (!v.claim_name.empty()) {
      resolve_claim(pod, v, objects, new_pod, out);
      // Once a volume fails everywhere, Filter looks no further.
      if (!out.empty() && out.back().failure && !out.back().needs_csi_node) return out;
    } else if (migratable_inline(v)) {
      out.push_back(resolve_inline(v));
    }
  }
  return out;
}

fw::status node_volume_limits::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                          fw::pre_filter_result&) const {
  if (std::none_of(pod.volumes.begin(), pod.volumes.end(), counts)) return fw::status::skip();
  auto s = std::make_shared<pre_filter_state>();
  s->objects = snap.objects_ptr();
  s->wanted = resolve(pod, s->objects->volumes, true);
  state.write(pre_filter_key, std::move(s));
  return fw::status::ok();
}

namespace {

// Adds `volumes` to `into`, each unique volume once, as they apply on a node with or without a
// CSINode; the first failure that applies is returned.
fw::status collect(const std::vector<counted_volume>& volumes, bool has_csi_node, std::vector<volume_ref>& into) {
  for (const auto& c : volumes) {
    if (c.needs_csi_node && !has_csi_node) continue;  // no migration without a CSINode
    if (c.failure) return *c.failure;
    add_unique(into, {c.driver, c.handle});
  }
  return fw::status::ok();
}

}  // namespace

node_volume_limits::verdict node_volume_limits::count_on_node(const std::vector<counted_volume>& wanted,
                                                              const volume_objects& objects,
                                                              const node_info& node) const {
  verdict out;
  const csi_node_info* csi_node = objects.csi_node(node.name);
  std::vector<volume_ref> added;
  if (out.status = collect(wanted, csi_node != nullptr, added); !out.status.is_success() || added.empty())
    return out;
  // Without a CSINode, or with drivers that report no count, nothing limits the node.
  if (!csi_node) return out;
  if (std::none_of(csi_node->drivers.begin(), csi_node->drivers.end(),
                   [](const csi_node_driver& d) { return d.allocatable_count.has_value(); }))
    return out;

  // The volumes of the pods on the node; `resolved` keeps the strings `attached` views.
  std::vector<std::vector<counted_volume>> resolved;
  std::vector<volume_ref> attached;
  for (const auto& p : node.pods) {
    if (p->volumes.empty()) continue;
    resolved.push_back(resolve(*p, objects, false));
    // The node has a CSINode here, so their in-tree volumes count too.
    if (out.status = collect(resolved.back(), true, attached); !out.status.is_success()) return out;
  }
  driver_counts attached_count, added_count;
  for (const auto& v : attached) attached_count.add(v.driver);
  // Attachments no pod on the node accounts for. As in kube, a volume the pod brings is not taken
  // off `added` when it is attached already: it counts twice.
  for (const auto& a : attachments_on(objects, node.name))
    if (!holds(attached, a)) attached_count.add(a.driver);
  // A volume the node's pods already use is not attached again.
  for (const auto& v : added)
    if (!holds(attached, v)) added_count.add(v.driver);
  // Drivers in name order, so that explain names the same one every time.
  std::sort(added_count.n.begin(), added_count.n.end());
  for (const auto& [driver, n] : added_count.n) {
    const csi_node_driver* d = csi_node->driver(driver);
    if (!d || !d->allocatable_count) continue;
    int64_t have = attached_count.of(driver), limit = *d->allocatable_count;
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
  return count_on_node(resolve(pod, objects->volumes, true), objects->volumes, node).status;
}

std::string node_volume_limits::explain(const fw::cycle_state& state, const pod_info& pod,
                                        const node_info& node) const {
  auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  const cluster_objects* objects = objects_of(state, s);
  if (!objects) return {};
  auto v = count_on_node(s ? s->wanted : resolve(pod, objects->volumes, true), objects->volumes, node);
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
  return std::any_of(deleted->volumes.begin(), deleted->volumes.end(), counts) ? fw::queueing_hint::queue
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

#include "cache/attachable_volumes.hpp"

#include <algorithm>

#include "cache/csi_translation.hpp"

namespace kas {
namespace {

attachable_volume failed(attachable_volume::failure_t why, std::string message) {
  attachable_volume a;
  a.failure = why;
  a.message = std::move(message);
  return a;
}

// kube's checkAttachableInlineVolume, up to the migration check, which needs the node.
attachable_volume resolve_inline(const pod_volume& v) {
  auto plugin = csi_migration::in_tree_plugin(v.inline_source.kind);
  auto handle = csi_migration::inline_volume_handle(v.inline_source);
  attachable_volume a =
    handle ? attachable_volume{}
           : failed(attachable_volume::error,
                    "converting volume(" + v.name + ") from inline to csi: " + handle.err().message);
  a.needs_csi_node = true;
  a.driver = std::string(csi_migration::csi_driver_of(plugin));
  if (handle) a.handle = std::move(*handle);
  return a;
}

size_t identity_hash(const attachable_volume& a) {
  std::hash<std::string_view> h;
  return h(a.driver) * 31 ^ h(a.handle) ^ size_t(a.unbound_claim);
}

void note(storage_keys* read, std::string_view letter, std::string_view key) {
  if (read) read->push_back(std::string(letter).append(key));
}

// An unbound claim (or one whose PV is missing) counts under its StorageClass's provisioner.
std::optional<attachable_volume> from_storage_class(const pvc_info& claim, const volume_objects& objects,
                                                    storage_keys* read) {
  // Without a StorageClass the claim binds immediately (before scheduling), so it is not counted.
  const std::string& class_name = claim.class_name();
  if (class_name.empty()) return std::nullopt;
  note(read, "s:", class_name);
  const storage_class_info* sc = objects.storage_class(class_name);
  if (!sc) return std::nullopt;
  attachable_volume a;
  // Not bound yet: a name only this claim has, so pods sharing it count it once.
  a.handle = claim.ns + "/" + claim.name;
  a.unbound_claim = true;
  if (csi_migration::is_migratable_plugin(sc->provisioner)) {
    if (!csi_migration::migration_ga(sc->provisioner)) return std::nullopt;  // Azure File, vSphere
    a.driver = std::string(csi_migration::csi_driver_of(sc->provisioner));
    a.needs_csi_node = true;
    return a;
  }
  a.driver = sc->provisioner;
  return a;
}

void resolve_claim(const pod_info& pod, const pod_volume& v, const volume_objects& objects, bool new_pod,
                   storage_keys* read, std::vector<attachable_volume>& out) {
  note(read, "c:", pod.ns + "/" + v.claim_name);
  const pvc_info* claim = objects.claim(pod.ns, v.claim_name);
  if (!claim) {
    if (!new_pod) return;
    out.push_back(failed(attachable_volume::missing_claim, "looking up PVC " + pod.ns + "/" + v.claim_name +
                                                             ": persistentvolumeclaims \"" + v.claim_name +
                                                             "\" not found"));
    return;
  }
  // An ephemeral volume's claim must be the one the ephemeral controller made for this pod.
  if (v.ephemeral && claim->controller_uid != pod.uid) {
    out.push_back(failed(attachable_volume::error, "PVC " + claim->ns + "/" + claim->name +
                                                     " was not created for pod " + pod.ns + "/" + pod.name +
                                                     " (pod is not owner)"));
    return;
  }
  // kube's getCSIDriverInfo: the bound PV's CSI source, a migratable in-tree PV's translation, or
  // for an unbound claim (or a missing PV) the StorageClass's provisioner.
  const pv_info* pv = nullptr;
  if (!claim->volume_name.empty()) {
    note(read, "v:", claim->volume_name);
    pv = objects.volume(claim->volume_name);
  }
  if (!pv) {
    if (auto a = from_storage_class(*claim, objects, read); a) out.push_back(std::move(*a));
    return;
  }
  attachable_volume a;
  if (pv->source.kind == volume_source::csi) {
    a.driver = pv->source.driver;
    a.handle = pv->source.id;
  } else {
    auto plugin = csi_migration::in_tree_plugin(pv->source.kind);
    if (plugin.empty()) return;
    auto handle = csi_migration::pv_volume_handle(*pv);
    if (!handle) return;  // kube logs and does not count it
    a.driver = std::string(csi_migration::csi_driver_of(plugin));
    a.handle = std::move(*handle);
    a.needs_csi_node = true;
  }
  if (a.driver.empty() || a.handle.empty()) return;
  out.push_back(std::move(a));
}

}  // namespace

bool migratable_inline(const pod_volume& v) { return !csi_migration::in_tree_plugin(v.inline_source.kind).empty(); }

bool attachable(const pod_volume& v) { return !v.claim_name.empty() || v.ephemeral || migratable_inline(v); }

bool has_attachable_volumes(const pod_info& p) { return std::any_of(p.volumes.begin(), p.volumes.end(), attachable); }

std::vector<attachable_volume> attachable_volumes(const pod_info& pod, const volume_objects& objects, bool new_pod,
                                                  storage_keys* read) {
  std::vector<attachable_volume> out;
  for (const auto& v : pod.volumes) {
    if (!v.claim_name.empty()) {
      resolve_claim(pod, v, objects, new_pod, read, out);
      // Once a volume fails everywhere, Filter looks no further.
      if (!out.empty() && out.back().failure != attachable_volume::none && !out.back().needs_csi_node) break;
    } else if (migratable_inline(v)) {
      out.push_back(resolve_inline(v));
    }
  }
  for (auto& a : out) a.hash = identity_hash(a);
  return out;
}

bool node_volume_usage::uses(const attachable_volume& v) const {
  for (size_t i = 0; i < hashes.size(); ++i)
    if (hashes[i] == v.hash && volumes[i].same_volume(v)) return true;
  return false;
}

const node_volume_usage::driver_limit* node_volume_usage::limit_of(std::string_view driver) const {
  for (const auto& l : limits)
    if (l.driver == driver) return &l;
  return nullptr;
}

std::shared_ptr<const node_volume_usage> volume_usage_of(const std::string& node, const pod_list& pods,
                                                         const volume_objects& objects) {
  auto u = std::make_shared<node_volume_usage>();
  std::vector<std::pair<std::string_view, int64_t>> per_driver;
  auto count = [&](std::string_view driver) {
    auto d = std::find_if(per_driver.begin(), per_driver.end(), [&](const auto& e) { return e.first == driver; });
    if (d == per_driver.end())
      per_driver.emplace_back(driver, 1);
    else
      ++d->second;
  };
  for (const auto& p : pods) {
    if (p->volumes.empty() || !has_attachable_volumes(*p)) continue;
    for (auto& a : attachable_volumes(*p, objects, false, &u->read)) {
      if (a.failure != attachable_volume::none) {
        // The first failure is the one Filter returns; the pods after it are still read so that a
        // change to their objects refreshes the node too.
        if (!u->failure) u->failure = std::move(a);
        continue;
      }
      if (u->failure || u->uses(a)) continue;
      u->hashes.push_back(a.hash);
      u->volumes.push_back(std::move(a));
    }
  }
  u->failed = u->failure.has_value();
  for (const auto& v : u->volumes) count(v.driver);
  // kube's getNodeVolumeAttachmentInfo: attachments without an attacher, of an inline volume, of a
  // PV that is gone or of a PV that is not CSI are not counted.
  bool attached = false;
  std::vector<attachable_volume> seen;
  if (const node_attachments* on_node = objects.attachments_on(node)) {
    for (const auto& va : on_node->items) {
      attached = true;
      if (va->attacher.empty() || !va->pv_name) continue;
      note(&u->read, "v:", *va->pv_name);
      const pv_info* pv = objects.volume(*va->pv_name);
      if (!pv || pv->source.kind != volume_source::csi) continue;
      attachable_volume a;
      a.driver = va->attacher;
      a.handle = pv->source.id;
      a.hash = identity_hash(a);
      if (u->uses(a) || std::any_of(seen.begin(), seen.end(), [&](const auto& o) { return o.same_volume(a); }))
        continue;
      seen.push_back(std::move(a));
    }
  }
  for (const auto& a : seen) count(a.driver);
  u->csi_node = objects.csi_nodes.get(node);
  if (!u->csi_node && !attached && u->read.empty()) return nullptr;
  if (u->csi_node)
    for (const auto& d : u->csi_node->drivers) {
      if (!d.allocatable_count) continue;
      auto n = std::find_if(per_driver.begin(), per_driver.end(), [&](const auto& e) { return e.first == d.name; });
      u->limits.push_back({d.name, *d.allocatable_count, n == per_driver.end() ? 0 : n->second});
    }
  std::sort(u->read.begin(), u->read.end());
  u->read.erase(std::unique(u->read.begin(), u->read.end()), u->read.end());
  return u;
}

const csi_node_info* csi_node_of(const node_info& node, const volume_objects& objects) {
  if (!node.volume_usage_current) return objects.csi_node(node.name);
  return node.has_csi_node ? node.volume_usage->csi_node.get() : nullptr;
}

}  // namespace kas

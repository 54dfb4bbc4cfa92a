#include "cache/volume_objects.hpp"

#include <algorithm>

#include "cache/csi_translation.hpp"
#include "cache/pod_info.hpp"
#include "messages/field_path.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/storage.pb.h"
#include "messages/quantity.hpp"

namespace kas {

namespace {

error at(const std::string& path, const std::string& msg) { return error{path + ": " + msg}; }

template <class Map>
const std::string* annotation(const Map& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? nullptr : &it->second;
}

result<uint8_t> access_modes(const google::protobuf::RepeatedPtrField<std::string>& modes, const std::string& path) {
  uint8_t bits = 0;
  for (int i = 0; i < modes.size(); ++i) {
    const auto& m = modes.Get(i);
    if (m == "ReadWriteOnce")
      bits |= access_rwo;
    else if (m == "ReadOnlyMany")
      bits |= access_rox;
    else if (m == "ReadWriteMany")
      bits |= access_rwx;
    else if (m == "ReadWriteOncePod")
      bits |= access_rwop;
    else
      return at(path + "[" + std::to_string(i) + "]",
                "Unsupported value: " + quoted(m) +
                  ": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"");
  }
  return bits;
}

result<bool> block_mode(const std::string& mode, const std::string& path) {
  if (mode.empty() || mode == "Filesystem") return false;
  if (mode == "Block") return true;
  return at(path, "Unsupported value: " + quoted(mode) + ": supported values: \"Block\", \"Filesystem\"");
}

// A storage quantity in bytes; `present` false leaves `out` alone.
template <class Map>
status_or_error storage_bytes(const Map& m, const std::string& path, int64_t& out) {
  auto it = m.find("storage");
  if (it == m.end()) return ok_t{};
  auto q = parse_quantity(it->second.string());
  if (!q) return at(path + ".storage", q.err().message);
  if (q->negative()) return at(path + ".storage", "must be greater than or equal to 0");
  out = q->value();
  return ok_t{};
}

result<std::optional<int64_t>> optional_bytes(bool has, const k8s::meta::Quantity& q, const std::string& path) {
  if (!has) return std::optional<int64_t>{};
  auto v = parse_quantity(q.string());
  if (!v) return at(path, v.err().message);
  if (v->negative()) return at(path, "must be greater than or equal to 0");
  return std::optional<int64_t>{v->value()};
}

}  // namespace

const std::string& pvc_info::class_name() const {
  static const std::string none;
  return storage_class ? *storage_class : none;
}

bool claims_bound(const volume_objects& v, std::string_view ns, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    const pvc_info* c = v.claim(ns, name);
    if (!c || !claim_fully_bound(*c)) return false;
  }
  return true;
}

const csi_node_driver* csi_node_info::driver(std::string_view name) const {
  for (const auto& d : drivers)
    if (d.name == name) return &d;
  return nullptr;
}

namespace {

// The in-tree kinds pod volumes and PersistentVolumes share (the proto types differ, the fields
// the scheduler reads do not). False when `v` is none of them.
template <class Source>
bool in_tree_source(const Source& v, volume_source& s) {
  if (v.has_gce_persistent_disk()) {
    s.kind = volume_source::gce_pd;
    s.id = v.gce_persistent_disk().pd_name();
    s.read_only = v.gce_persistent_disk().read_only();
  } else if (v.has_aws_elastic_block_store()) {
    s.kind = volume_source::aws_ebs;
    s.id = v.aws_elastic_block_store().volume_id();
    s.read_only = v.aws_elastic_block_store().read_only();
  } else if (v.has_azure_disk()) {
    s.kind = volume_source::azure_disk;
    s.id = v.azure_disk().disk_uri();
    s.read_only = v.azure_disk().read_only();
  } else if (v.has_cinder()) {
    s.kind = volume_source::cinder;
    s.id = v.cinder().volume_id();
    s.read_only = v.cinder().read_only();
  } else if (v.has_rbd()) {
    s.kind = volume_source::rbd;
    s.id = v.rbd().image();
    s.rbd_pool = v.rbd().pool().empty() ? "rbd" : v.rbd().pool();
    s.rbd_monitors.assign(v.rbd().monitors().begin(), v.rbd().monitors().end());
    s.read_only = v.rbd().read_only();
  } else if (v.has_iscsi()) {
    s.kind = volume_source::iscsi;
    s.id = v.iscsi().iqn();
    s.iscsi_target_portal = v.iscsi().target_portal();
    s.iscsi_lun = v.iscsi().lun();
    s.read_only = v.iscsi().read_only();
  } else if (v.has_host_path()) {
    s.kind = volume_source::host_path;
    s.id = v.host_path().path();
  } else {
    return false;
  }
  return true;
}

volume_source pv_source(const k8s::core::PersistentVolumeSource& v) {
  volume_source s;
  if (in_tree_source(v, s)) return s;
  if (v.has_csi()) {
    s.kind = volume_source::csi;
    s.driver = v.csi().driver();
    s.id = v.csi().volume_handle();
    s.read_only = v.csi().read_only();
  } else if (v.has_local()) {
    s.kind = volume_source::local;
    s.id = v.local().path();
  } else {
    s.kind = volume_source::other;
  }
  return s;
}

}  // namespace

volume_source inline_volume_source(const k8s::core::VolumeSource& v) {
  volume_source s;
  if (in_tree_source(v, s)) return s;
  if (v.has_csi()) {
    s.kind = volume_source::csi;
    s.driver = v.csi().driver();
    s.read_only = v.csi().read_only();
  }
  return s;
}

result<pv_info_ptr> compile_pv(std::shared_ptr<const k8s::core::PersistentVolume> pv) {
  auto info = std::make_shared<pv_info>();
  const auto& meta = pv->metadata();
  const auto& spec = pv->spec();
  info->name = meta.name();
  info->uid = meta.uid();
  info->resource_version = meta.resource_version();
  info->labels = to_label_map(meta.labels());
  if (auto* c = annotation(meta.annotations(), ann_beta_storage_class))
    info->storage_class = *c;
  else
    info->storage_class = spec.storage_class_name();
  if (auto st = storage_bytes(spec.capacity(), "spec.capacity", info->capacity_bytes); !st) return st.err();
  auto modes = access_modes(spec.access_modes(), "spec.accessModes");
  if (!modes) return modes.err();
  info->access_modes = *modes;
  auto block = block_mode(spec.volume_mode(), "spec.volumeMode");
  if (!block) return block.err();
  info->block_mode = *block;
  if (spec.has_claim_ref()) {
    const auto& r = spec.claim_ref();
    info->claim_ref = object_ref{r.namespace_(), r.name(), r.uid()};
  }
  info->phase = pv->status().phase();
  if (spec.has_node_affinity() && spec.node_affinity().has_required()) {
    auto sel = compile_node_selector(spec.node_affinity().required(), "spec.nodeAffinity.required");
    if (!sel) return sel.err();
    info->node_affinity = std::move(*sel);
  }
  info->source = pv_source(spec.persistent_volume_source());
  if (auto plugin = csi_migration::in_tree_plugin(info->source.kind); !plugin.empty()) {
    info->csi_node_affinity = csi_migration::translated_node_affinity(*info, csi_migration::csi_topology_key(plugin));
    if (auto handle = csi_migration::pv_volume_handle(*info); !handle) info->csi_translation_error = handle.err().message;
  }
  if (auto* b = annotation(meta.annotations(), ann_bound_by_controller)) info->bound_by_controller = *b == "yes";
  info->deleting = meta.has_deletion_timestamp();
  info->pv = std::move(pv);
  return pv_info_ptr(std::move(info));
}

result<pvc_info_ptr> compile_pvc(std::shared_ptr<const k8s::core::PersistentVolumeClaim> pvc) {
  auto info = std::make_shared<pvc_info>();
  const auto& meta = pvc->metadata();
  const auto& spec = pvc->spec();
  info->ns = meta.namespace_().empty() ? "default" : meta.namespace_();
  info->name = meta.name();
  info->uid = meta.uid();
  info->resource_version = meta.resource_version();
  info->labels = to_label_map(meta.labels());
  if (auto* c = annotation(meta.annotations(), ann_beta_storage_class))
    info->storage_class = *c;
  else if (spec.has_storage_class_name())
    info->storage_class = spec.storage_class_name();
  info->volume_name = spec.volume_name();
  auto modes = access_modes(spec.access_modes(), "spec.accessModes");
  if (!modes) return modes.err();
  info->access_modes = *modes;
  if (auto st = storage_bytes(spec.resources().requests(), "spec.resources.requests", info->request_bytes); !st)
    return st.err();
  auto block = block_mode(spec.volume_mode(), "spec.volumeMode");
  if (!block) return block.err();
  info->block_mode = *block;
  if (spec.has_selector()) {
    auto sel = compile_label_selector(&spec.selector(), "spec.selector");
    if (!sel) return sel.err();
    info->selector = std::move(*sel);
  }
  info->phase = pvc->status().phase();
  if (auto* n = annotation(meta.annotations(), ann_selected_node)) info->selected_node = *n;
  // kube's isPVCFullyBound asks only whether the annotation is there (scheduler_perf writes "true").
  info->bind_completed = annotation(meta.annotations(), ann_bind_completed) != nullptr;
  if (auto* p = annotation(meta.annotations(), ann_storage_provisioner))
    info->provisioner = *p;
  else if (auto* bp = annotation(meta.annotations(), ann_beta_storage_provisioner))
    info->provisioner = *bp;
  for (const auto& o : meta.owner_references())
    if (o.controller()) info->controller_uid = o.uid();
  info->deleting = meta.has_deletion_timestamp();
  info->pvc = std::move(pvc);
  return pvc_info_ptr(std::move(info));
}

result<storage_class_info_ptr> compile_storage_class(std::shared_ptr<const k8s::storage::StorageClass> sc) {
  auto info = std::make_shared<storage_class_info>();
  info->name = sc->metadata().name();
  info->provisioner = sc->provisioner();
  const auto& mode = sc->volume_binding_mode();
  if (!sc->has_volume_binding_mode())
    info->binding_mode = volume_binding_mode::unset;
  else if (mode == "Immediate")
    info->binding_mode = volume_binding_mode::immediate;
  else if (mode == "WaitForFirstConsumer")
    info->binding_mode = volume_binding_mode::wait_for_first_consumer;
  else
    return at("volumeBindingMode",
              "Unsupported value: " + quoted(mode) + ": supported values: \"Immediate\", \"WaitForFirstConsumer\"");
  for (int i = 0; i < sc->allowed_topologies_size(); ++i) {
    topology_term term;
    const auto& t = sc->allowed_topologies(i);
    for (int j = 0; j < t.match_label_expressions_size(); ++j) {
      const auto& r = t.match_label_expressions(j);
      std::string path = "allowedTopologies[" + std::to_string(i) + "].matchLabelExpressions[" + std::to_string(j) + "]";
      if (r.key().empty()) return at(path + ".key", "Required value");
      if (r.values_size() == 0) return at(path + ".values", "Required value: must specify as least one value");
      term.push_back(topology_requirement{r.key(), {r.values().begin(), r.values().end()}});
    }
    info->allowed_topologies.push_back(std::move(term));
  }
  info->sc = std::move(sc);
  return storage_class_info_ptr(std::move(info));
}

result<csi_node_info_ptr> compile_csi_node(std::shared_ptr<const k8s::storage::CSINode> n) {
  auto info = std::make_shared<csi_node_info>();
  info->name = n->metadata().name();
  for (int i = 0; i < n->spec().drivers_size(); ++i) {
    const auto& d = n->spec().drivers(i);
    std::string path = "spec.drivers[" + std::to_string(i) + "]";
    if (d.name().empty()) return at(path + ".name", "Required value");
    csi_node_driver out;
    out.name = d.name();
    out.node_id = d.node_id();
    if (d.has_allocatable() && d.allocatable().has_count()) {
      if (d.allocatable().count() < 0)
        return at(path + ".allocatable.count", "Invalid value: " + std::to_string(d.allocatable().count()) +
                                                 ": must be greater than or equal to 0");
      out.allocatable_count = d.allocatable().count();
    }
    out.topology_keys.assign(d.topology_keys().begin(), d.topology_keys().end());
    info->drivers.push_back(std::move(out));
  }
  if (auto* m = annotation(n->metadata().annotations(), ann_migrated_plugins)) {
    // A comma-separated list, as kube's csi-translation reads it.
    size_t start = 0;
    while (start <= m->size()) {
      size_t end = m->find(',', start);
      if (end == std::string::npos) end = m->size();
      std::string name = m->substr(start, end - start);
      while (!name.empty() && name.front() == ' ') name.erase(name.begin());
      while (!name.empty() && name.back() == ' ') name.pop_back();
      if (!name.empty()) info->migrated_plugins.push_back(std::move(name));
      start = end + 1;
    }
  }
  info->csi_node = std::move(n);
  return csi_node_info_ptr(std::move(info));
}

result<csi_driver_info_ptr> compile_csi_driver(std::shared_ptr<const k8s::storage::CSIDriver> d) {
  auto info = std::make_shared<csi_driver_info>();
  info->name = d->metadata().name();
  info->attach_required = !d->spec().has_attach_required() || d->spec().attach_required();
  info->storage_capacity = d->spec().storage_capacity();
  info->csi_driver = std::move(d);
  return csi_driver_info_ptr(std::move(info));
}

result<csi_storage_capacity_info_ptr> compile_csi_storage_capacity(
  std::shared_ptr<const k8s::storage::CSIStorageCapacity> c) {
  auto info = std::make_shared<csi_storage_capacity_info>();
  info->ns = c->metadata().namespace_().empty() ? "default" : c->metadata().namespace_();
  info->name = c->metadata().name();
  if (c->storage_class_name().empty()) return at("storageClassName", "Required value");
  info->storage_class = c->storage_class_name();
  if (c->has_node_topology()) {
    auto sel = compile_label_selector(&c->node_topology(), "nodeTopology");
    if (!sel) return sel.err();
    info->node_topology = std::move(*sel);
  }
  auto cap = optional_bytes(c->has_capacity(), c->capacity(), "capacity");
  if (!cap) return cap.err();
  info->capacity_bytes = *cap;
  auto max = optional_bytes(c->has_maximum_volume_size(), c->maximum_volume_size(), "maximumVolumeSize");
  if (!max) return max.err();
  info->maximum_volume_size_bytes = *max;
  info->capacity_object = std::move(c);
  return csi_storage_capacity_info_ptr(std::move(info));
}

result<volume_attachment_info_ptr> compile_volume_attachment(std::shared_ptr<const k8s::storage::VolumeAttachment> a) {
  auto info = std::make_shared<volume_attachment_info>();
  info->name = a->metadata().name();
  info->attacher = a->spec().attacher();
  info->node_name = a->spec().node_name();
  const auto& source = a->spec().source();
  if (source.has_persistent_volume_name()) info->pv_name = source.persistent_volume_name();
  info->attachment = std::move(a);
  return volume_attachment_info_ptr(std::move(info));
}

namespace {

template <class T>
void apply_one(object_table<T>& table, const std::shared_ptr<const T>& old_obj, const std::shared_ptr<const T>& new_obj,
               std::string (*key_of)(const T&)) {
  if (new_obj) {
    if (old_obj && key_of(*old_obj) != key_of(*new_obj)) table.erase(key_of(*old_obj));
    table.put(key_of(*new_obj), new_obj);
  } else if (old_obj) {
    table.erase(key_of(*old_obj));
  }
}

std::string pv_key(const pv_info& v) { return v.name; }
std::string pvc_key(const pvc_info& v) { return v.key(); }
std::string class_key(const storage_class_info& v) { return v.name; }
std::string csi_node_key(const csi_node_info& v) { return v.name; }
std::string csi_driver_key(const csi_driver_info& v) { return v.name; }
std::string capacity_key(const csi_storage_capacity_info& v) { return v.ns + "/" + v.name; }
std::string attachment_key(const volume_attachment_info& v) { return v.name; }

// `node`'s list of attachments without `name`, and with `put` when given (kept sorted by name).
void reindex_node(object_table<node_attachments>& index, const std::string& node, const std::string& name,
                  const volume_attachment_info_ptr& put) {
  const node_attachments* cur = index.find(node);
  auto next = std::make_shared<node_attachments>();
  next->items.reserve((cur ? cur->items.size() : 0) + 1);
  if (cur)
    for (const auto& a : cur->items)
      if (a->name != name) next->items.push_back(a);
  if (put) {
    auto at = std::lower_bound(next->items.begin(), next->items.end(), put->name,
                               [](const volume_attachment_info_ptr& a, const std::string& n) { return a->name < n; });
    next->items.insert(at, put);
  }
  if (next->items.empty())
    index.erase(node);
  else
    index.put(node, std::move(next));
}

void apply_attachment(volume_objects& v, const volume_attachment_info_ptr& old_obj,
                      const volume_attachment_info_ptr& new_obj) {
  // The index holds what the table holds, so the table's entry says which node to unindex (a
  // folded change's old state may be older than that).
  const std::string name = new_obj ? new_obj->name : old_obj->name;
  volume_attachment_info_ptr stored = v.attachments.get(name);
  apply_one(v.attachments, old_obj, new_obj, &attachment_key);
  if (stored && (!new_obj || stored->node_name != new_obj->node_name))
    reindex_node(v.attachments_by_node, stored->node_name, name, nullptr);
  if (new_obj) reindex_node(v.attachments_by_node, new_obj->node_name, name, new_obj);
}

}  // namespace

void apply_volume_change(volume_objects& v, const volume_change& ch) {
  switch (ch.kind) {
    case volume_change::pv: return apply_one(v.pvs, ch.old_pv, ch.new_pv, &pv_key);
    case volume_change::pvc: return apply_one(v.pvcs, ch.old_pvc, ch.new_pvc, &pvc_key);
    case volume_change::storage_class: return apply_one(v.classes, ch.old_class, ch.new_class, &class_key);
    case volume_change::csi_node: return apply_one(v.csi_nodes, ch.old_csi_node, ch.new_csi_node, &csi_node_key);
    case volume_change::csi_driver:
      return apply_one(v.csi_drivers, ch.old_csi_driver, ch.new_csi_driver, &csi_driver_key);
    case volume_change::csi_storage_capacity:
      return apply_one(v.capacities, ch.old_capacity, ch.new_capacity, &capacity_key);
    case volume_change::volume_attachment:
      if (ch.old_attachment || ch.new_attachment) apply_attachment(v, ch.old_attachment, ch.new_attachment);
      return;
  }
}

}  // namespace kas

namespace kas {

std::string volume_change::label() const {
  const char* kind_name = "";
  switch (kind) {
    case pv: kind_name = "PersistentVolume"; break;
    case pvc: kind_name = "PersistentVolumeClaim"; break;
    case storage_class: kind_name = "StorageClass"; break;
    case csi_node: kind_name = "CSINode"; break;
    case csi_driver: kind_name = "CSIDriver"; break;
    case csi_storage_capacity: kind_name = "CSIStorageCapacity"; break;
    case volume_attachment: kind_name = "VolumeAttachment"; break;
  }
  return std::string(kind_name) + (!has_old() ? "Add" : !has_new() ? "Delete" : "Update");
}

namespace {

// One kind's change: the kind, its key (a kind prefix and the table key), and the old/new pair in
// that kind's members.
template <class T>
volume_change change_of(volume_change::kind_t kind, const char* prefix, std::string (*key)(const T&),
                        std::shared_ptr<const T> volume_change::*old_member,
                        std::shared_ptr<const T> volume_change::*new_member, std::shared_ptr<const T> old_obj,
                        std::shared_ptr<const T> new_obj) {
  volume_change ch;
  ch.kind = kind;
  ch.key = prefix + key(new_obj ? *new_obj : *old_obj);
  ch.*old_member = std::move(old_obj);
  ch.*new_member = std::move(new_obj);
  return ch;
}

}  // namespace

volume_change pv_change(pv_info_ptr old_obj, pv_info_ptr new_obj) {
  return change_of(volume_change::pv, "v:", &pv_key, &volume_change::old_pv, &volume_change::new_pv,
                   std::move(old_obj), std::move(new_obj));
}

volume_change pvc_change(pvc_info_ptr old_obj, pvc_info_ptr new_obj) {
  return change_of(volume_change::pvc, "c:", &pvc_key, &volume_change::old_pvc, &volume_change::new_pvc,
                   std::move(old_obj), std::move(new_obj));
}

volume_change storage_class_change(storage_class_info_ptr old_obj, storage_class_info_ptr new_obj) {
  return change_of(volume_change::storage_class, "s:", &class_key, &volume_change::old_class,
                   &volume_change::new_class, std::move(old_obj), std::move(new_obj));
}

volume_change csi_node_change(csi_node_info_ptr old_obj, csi_node_info_ptr new_obj) {
  return change_of(volume_change::csi_node, "n:", &csi_node_key, &volume_change::old_csi_node,
                   &volume_change::new_csi_node, std::move(old_obj), std::move(new_obj));
}

volume_change csi_driver_change(csi_driver_info_ptr old_obj, csi_driver_info_ptr new_obj) {
  return change_of(volume_change::csi_driver, "d:", &csi_driver_key, &volume_change::old_csi_driver,
                   &volume_change::new_csi_driver, std::move(old_obj), std::move(new_obj));
}

volume_change capacity_change(csi_storage_capacity_info_ptr old_obj, csi_storage_capacity_info_ptr new_obj) {
  return change_of(volume_change::csi_storage_capacity, "a:", &capacity_key, &volume_change::old_capacity,
                   &volume_change::new_capacity, std::move(old_obj), std::move(new_obj));
}

volume_change volume_attachment_change(volume_attachment_info_ptr old_obj, volume_attachment_info_ptr new_obj) {
  return change_of(volume_change::volume_attachment, "va:", &attachment_key, &volume_change::old_attachment,
                   &volume_change::new_attachment, std::move(old_obj), std::move(new_obj));
}

volume_change fold_volume_changes(const volume_change& first, const volume_change& latest) {
  volume_change out = latest;
  out.old_pv = first.old_pv;
  out.old_pvc = first.old_pvc;
  out.old_class = first.old_class;
  out.old_csi_node = first.old_csi_node;
  out.old_csi_driver = first.old_csi_driver;
  out.old_capacity = first.old_capacity;
  out.old_attachment = first.old_attachment;
  return out;
}

}  // namespace kas

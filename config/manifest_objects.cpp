// The cluster objects besides Nodes and Pods, compiled as the apiserver and the controllers would
// have left them for the scheduler to read:
//
// - every Namespace carries the label kubernetes.io/metadata.name=<name> (set by the apiserver);
//   a namespace that objects use but no manifest declares exists with only that label, because a
//   real cluster could not hold the objects otherwise;
// - workload selectors are validated as the apps/core validation does (RS/StatefulSet need a
//   non-empty selector; an RC without one is defaulted from its template's labels);
// - a PodDisruptionBudget without a status gets what the disruption controller would write:
//   expected = matching pods, healthy = the bound, ready, non-deleting ones, desiredHealthy from
//   minAvailable / maxUnavailable (percentages rounded up), disruptionsAllowed =
//   max(0, healthy - desiredHealthy), 0 when no pod is expected or neither bound is set;
// - the storage objects are compiled by cache/volume_objects.hpp, as the API informers compile
//   them, so a manifest cluster and a live one give the volume plugins the same objects; a claim's
//   or a capacity's namespace exists implicitly, like a pod's.
#include "config/manifest_objects.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "cache/volume_objects.hpp"
#include "config/cluster_manifests.hpp"
#include "messages/codec.hpp"
#include "messages/field_path.hpp"
#include "messages/name_validation.hpp"

namespace kas {
namespace {

constexpr const char* label_namespace_name = "kubernetes.io/metadata.name";

error at(const std::string& path, const std::string& msg) { return error{path + ": " + msg}; }

// compile_label_selector for a plain label map: errors name the map itself, not `.matchLabels`.
result<label_selector> compile_label_map(const k8s::meta::LabelSelector& ls, const std::string& path) {
  auto sel = compile_label_selector(&ls, path);
  if (sel) return sel;
  std::string msg = sel.err().message;
  const std::string inner = path + ".matchLabels";
  if (msg.rfind(inner, 0) == 0) msg = path + msg.substr(inner.size());
  return error{msg};
}

// ---- PodDisruptionBudget ----

bool is_percent(const std::string& s) {
  if (s.size() < 2 || s.back() != '%') return false;
  return std::all_of(s.begin(), s.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
}

// ValidatePositiveIntOrPercent + IsNotMoreThan100Percent.
status_or_error validate_int_or_percent(const k8s::meta::IntOrString& v, const std::string& path) {
  if (v.type() == 0) {
    if (v.int_val() < 0)
      return at(path, "Invalid value: " + std::to_string(v.int_val()) + ": must be greater than or equal to 0");
    return ok_t{};
  }
  if (!is_percent(v.str_val()))
    return at(path, "Invalid value: \"" + v.str_val() + "\": must be an integer or percentage (e.g '5%')");
  if (std::strtoll(v.str_val().c_str(), nullptr, 10) > 100)
    return at(path, "Invalid value: \"" + v.str_val() + "\": must not be greater than 100%");
  return ok_t{};
}

// intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true); v is validated already.
int64_t scaled_value(const k8s::meta::IntOrString& v, int64_t total) {
  if (v.type() == 0) return v.int_val();
  int64_t pct = std::strtoll(v.str_val().c_str(), nullptr, 10);
  return (pct * total + 99) / 100;
}

// The disruption controller's countHealthyPods, for pods read from manifests: a pod without
// conditions (hand-written) counts as ready.
bool is_healthy(const pod_info& p) {
  if (p.node_name.empty()) return false;
  if (p.pod && p.pod->metadata().has_deletion_timestamp()) return false;
  if (!p.pod) return true;
  for (const auto& c : p.pod->status().conditions())
    if (c.type() == "Ready") return c.status() == "True";
  return true;
}

status_or_error validate_pdb_spec(const k8s::policy::PodDisruptionBudgetSpec& spec) {
  if (spec.has_min_available() && spec.has_max_unavailable())
    return at("spec", "Invalid value: minAvailable and maxUnavailable cannot be both set");
  if (spec.has_min_available())
    if (auto s = validate_int_or_percent(spec.min_available(), "spec.minAvailable"); !s) return s;
  if (spec.has_max_unavailable())
    if (auto s = validate_int_or_percent(spec.max_unavailable(), "spec.maxUnavailable"); !s) return s;
  const std::string& policy = spec.unhealthy_pod_eviction_policy();
  if (!policy.empty() && policy != "IfHealthyBudget" && policy != "AlwaysAllow")
    return at("spec.unhealthyPodEvictionPolicy",
              "Unsupported value: \"" + policy + "\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"");
  return ok_t{};
}

// DisruptionController.getExpectedPodCount + updatePdbStatus, with the pods' own count standing in
// for the controllers' scale.
int32_t computed_disruptions_allowed(const k8s::policy::PodDisruptionBudgetSpec& spec, const disruption_budget& b,
                                     const std::vector<pod_info_ptr>& pods) {
  // Neither bound set: kube's getExpectedPodCount leaves expectedCount at 0, so nothing is allowed.
  if (!spec.has_max_unavailable() && !spec.has_min_available()) return 0;
  int64_t expected = 0, healthy = 0;
  for (const auto& p : pods) {
    if (p->ns != b.ns || !b.selector.matches(p->labels)) continue;
    ++expected;
    if (is_healthy(*p)) ++healthy;
  }
  int64_t desired = 0;
  if (spec.has_max_unavailable())
    desired = std::max<int64_t>(0, expected - scaled_value(spec.max_unavailable(), expected));
  else if (spec.has_min_available())
    desired = scaled_value(spec.min_available(), expected);
  int64_t allowed = healthy - desired;
  if (expected <= 0 || allowed <= 0) return 0;
  return static_cast<int32_t>(allowed);
}

void add_implicit_namespace(cluster_objects& objs, const std::string& ns) {
  if (ns.empty() || objs.namespace_labels.count(ns)) return;
  objs.namespace_labels.emplace(ns, label_map(std::vector<label_map::entry>{{label_namespace_name, ns}}));
}

}  // namespace

result<disruption_budget> compile_pdb(const k8s::policy::PodDisruptionBudget& pdb,
                                      const std::vector<pod_info_ptr>& pods) {
  disruption_budget b;
  b.ns = pdb.metadata().namespace_();
  b.name = pdb.metadata().name();
  const auto& spec = pdb.spec();
  if (auto s = validate_pdb_spec(spec); !s) return s.err();
  auto sel = compile_label_selector(spec.has_selector() ? &spec.selector() : nullptr, "spec.selector");
  if (!sel) return sel.err();
  b.selector = std::move(*sel);
  if (pdb.has_status()) {
    b.disruptions_allowed = pdb.status().disruptions_allowed();
    for (const auto& kv : pdb.status().disrupted_pods()) b.disrupted_pods.push_back(kv.first);
    std::sort(b.disrupted_pods.begin(), b.disrupted_pods.end());
  } else {
    b.disruptions_allowed = computed_disruptions_allowed(spec, b, pods);
  }
  return b;
}

namespace {

// Service / ReplicationController: a plain label map. An RC without one takes its template's labels
// (apiserver defaulting); a Service without one selects no pod.
result<label_selector> map_selector(const google::protobuf::Map<std::string, std::string>& selector,
                                    const k8s::core::PodTemplateSpec* rc_template) {
  k8s::meta::LabelSelector ls;
  *ls.mutable_match_labels() = selector;
  if (ls.match_labels().empty() && rc_template) {
    *ls.mutable_match_labels() = rc_template->metadata().labels();
    if (ls.match_labels().empty()) return at("spec.selector", "Required value");
  }
  if (ls.match_labels().empty()) {
    label_selector none;
    none.nothing = true;
    return none;
  }
  return compile_label_map(ls, "spec.selector");
}

// apps/v1 ReplicaSet / StatefulSet: a LabelSelector, required and non-empty.
template <class Spec>
result<label_selector> apps_selector(const Spec& spec, const std::string& kind) {
  if (!spec.has_selector()) return at("spec.selector", "Required value");
  const auto& ls = spec.selector();
  if (ls.match_labels().empty() && ls.match_expressions().empty())
    return at("spec.selector", "Invalid value: empty selector is invalid for " + kind);
  return compile_label_selector(&ls, "spec.selector");
}

template <class T>
result<workload_selector> compile(const T& obj, result<label_selector> sel, const std::string& kind) {
  if (!sel) return sel.err();
  return workload_selector{kind, obj.metadata().namespace_(), obj.metadata().name(), std::move(*sel)};
}

template <class T>
result<workload_selector> decode_and_compile(const YAML::Node& object, const std::string& ns) {
  T obj;
  if (auto s = codec::decode_node(object, obj, ""); !s) return s.err();
  obj.mutable_metadata()->set_namespace_(ns);
  return compile_workload(obj);
}

}  // namespace

result<workload_selector> compile_workload(const k8s::core::Service& svc) {
  return compile(svc, map_selector(svc.spec().selector(), nullptr), "Service");
}

result<workload_selector> compile_workload(const k8s::core::ReplicationController& rc) {
  return compile(rc, map_selector(rc.spec().selector(), &rc.spec().template_()), "ReplicationController");
}

result<workload_selector> compile_workload(const k8s::apps::ReplicaSet& rs) {
  return compile(rs, apps_selector(rs.spec(), "ReplicaSet"), "ReplicaSet");
}

result<workload_selector> compile_workload(const k8s::apps::StatefulSet& ss) {
  return compile(ss, apps_selector(ss.spec(), "StatefulSet"), "StatefulSet");
}

result<workload_selector> decode_workload(const YAML::Node& object, const std::string& kind, const std::string& ns) {
  if (kind == "Service") return decode_and_compile<k8s::core::Service>(object, ns);
  if (kind == "ReplicationController") return decode_and_compile<k8s::core::ReplicationController>(object, ns);
  if (kind == "ReplicaSet") return decode_and_compile<k8s::apps::ReplicaSet>(object, ns);
  if (kind == "StatefulSet") return decode_and_compile<k8s::apps::StatefulSet>(object, ns);
  return error{"kind " + kind + " is not a workload kind"};
}

label_map namespace_labels(const k8s::core::Namespace& ns) {
  std::vector<label_map::entry> labels;
  for (const auto& [k, v] : ns.metadata().labels())
    if (k != label_namespace_name) labels.emplace_back(k, v);
  labels.emplace_back(label_namespace_name, ns.metadata().name());
  return label_map(std::move(labels));
}

// ---- storage kinds ----

namespace {

error invalid_value(const std::string& path, const std::string& value, const std::string& why) {
  return at(path, "Invalid value: " + quoted(value) + ": " + why);
}

status_or_error check_labels(const k8s::meta::ObjectMeta& m) {
  for (const auto& [k, v] : m.labels()) {
    if (auto why = qualified_name_problem(k); !why.empty()) return invalid_value("metadata.labels", k, why);
    if (auto why = label_value_problem(v); !why.empty()) return invalid_value("metadata.labels", v, why);
  }
  return ok_t{};
}

// ValidateObjectMeta's name, namespace and labels checks, for a kind whose name is a DNS subdomain.
status_or_error check_storage_meta(const k8s::meta::ObjectMeta& m, bool namespaced) {
  if (m.name().empty()) return at("metadata.name", "Required value: name or generateName is required");
  if (auto why = dns1123_subdomain_problem(m.name()); !why.empty())
    return invalid_value("metadata.name", m.name(), why);
  if (namespaced && !m.namespace_().empty())
    if (auto why = dns1123_label_problem(m.namespace_()); !why.empty())
      return invalid_value("metadata.namespace", m.namespace_(), why);
  return check_labels(m);
}

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// ValidateCSIDriverName: at most 63 characters, alphanumerics with '-', '_' or '.' inside, at least
// two characters (upstream's pattern needs a first and a last one, and its last class also lets a
// '-' end the name). Driver names may carry capitals, so they are not DNS subdomains.
std::string csi_driver_name_problem(const std::string& name) {
  constexpr const char* format =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character";
  if (name.size() < 2 || !is_alnum(name.front()) || !(is_alnum(name.back()) || name.back() == '-')) return format;
  for (char c : name)
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return format;
  return {};
}

}  // namespace

status_or_error validate_storage_object(const k8s::core::PersistentVolume& pv) {
  return check_storage_meta(pv.metadata(), false);
}

status_or_error validate_storage_object(const k8s::core::PersistentVolumeClaim& pvc) {
  return check_storage_meta(pvc.metadata(), true);
}

status_or_error validate_storage_object(const k8s::storage::StorageClass& sc) {
  return check_storage_meta(sc.metadata(), false);
}

status_or_error validate_storage_object(const k8s::storage::CSINode& n) {
  return check_storage_meta(n.metadata(), false);
}

status_or_error validate_storage_object(const k8s::storage::CSIDriver& d) {
  const std::string& name = d.metadata().name();
  if (name.empty()) return at("metadata.name", "Required value: name or generateName is required");
  if (name.size() > 63) return at("metadata.name", "Too long: may not be more than 63 bytes");
  if (auto why = csi_driver_name_problem(name); !why.empty()) return invalid_value("metadata.name", name, why);
  return check_labels(d.metadata());
}

status_or_error validate_storage_object(const k8s::storage::CSIStorageCapacity& c) {
  return check_storage_meta(c.metadata(), true);
}

// ValidateVolumeAttachment, for what the scheduler reads: the attacher as ValidateCSIDriverName
// has it, and the node.
status_or_error validate_storage_object(const k8s::storage::VolumeAttachment& a) {
  if (auto s = check_storage_meta(a.metadata(), false); !s) return s;
  const std::string& attacher = a.spec().attacher();
  if (attacher.empty()) return at("spec.attacher", "Required value");
  if (attacher.size() > 63) return at("spec.attacher", "Too long: may not be more than 63 bytes");
  if (auto why = csi_driver_name_problem(attacher); !why.empty()) return invalid_value("spec.attacher", attacher, why);
  if (a.spec().node_name().empty()) return at("spec.nodeName", "Required value");
  return ok_t{};
}

namespace {

// Compiles each object of one kind into `table` under key(info). A second object under one key is
// refused; compile_cluster has said so already with both origins, this guards other callers.
template <class Proto, class Info, class Compile, class Key>
status_or_error compile_into(const std::vector<std::pair<std::shared_ptr<const Proto>, manifest_origin>>& objects,
                             Compile compile, Key key, object_table<Info>& table) {
  for (const auto& [obj, o] : objects) {
    auto info = compile(obj);
    if (!info) return error{o.describe() + ": " + info.err().message};
    std::string k = key(**info);
    if (table.find(k)) return error{o.describe() + ": " + o.kind + " " + k + " is defined twice"};
    table.put(std::move(k), std::move(*info));
  }
  return ok_t{};
}

status_or_error compile_volumes(const cluster_manifests& m, cluster_objects& objs) {
  volume_objects& v = objs.volumes;
  auto by_name = [](const auto& info) { return info.name; };
  auto by_ns_name = [](const auto& info) { return info.ns + "/" + info.name; };
  if (auto s = compile_into(m.pvs, compile_pv, by_name, v.pvs); !s) return s;
  if (auto s = compile_into(m.pvcs, compile_pvc, by_ns_name, v.pvcs); !s) return s;
  if (auto s = compile_into(m.storage_classes, compile_storage_class, by_name, v.classes); !s) return s;
  if (auto s = compile_into(m.csi_nodes, compile_csi_node, by_name, v.csi_nodes); !s) return s;
  if (auto s = compile_into(m.csi_drivers, compile_csi_driver, by_name, v.csi_drivers); !s) return s;
  if (auto s = compile_into(m.csi_storage_capacities, compile_csi_storage_capacity, by_ns_name, v.capacities); !s)
    return s;
  // Through apply_volume_change, which indexes them by node as well.
  for (const auto& [obj, o] : m.volume_attachments) {
    auto info = compile_volume_attachment(obj);
    if (!info) return error{o.describe() + ": " + info.err().message};
    if (v.attachments.find((*info)->name))
      return error{o.describe() + ": VolumeAttachment " + (*info)->name + " is defined twice"};
    apply_volume_change(v, volume_attachment_change(nullptr, std::move(*info)));
  }
  v.pvcs.for_each([&objs](const pvc_info& c) { add_implicit_namespace(objs, c.ns); });
  v.capacities.for_each([&objs](const csi_storage_capacity_info& c) { add_implicit_namespace(objs, c.ns); });
  return ok_t{};
}

}  // namespace

result<cluster_objects_ptr> compile_objects(const cluster_manifests& m, const std::vector<pod_info_ptr>& pods,
                                            const priority_class_lookup& priority_of) {
  auto objs = std::make_shared<cluster_objects>();
  for (const auto& [ns, o] : m.namespaces) {
    objs->namespace_labels[ns->metadata().name()] = namespace_labels(*ns);
  }
  for (const auto& [w, o] : m.workloads) {
    add_implicit_namespace(*objs, w.ns);
    if (!w.selector.nothing) objs->workloads.push_back(w);
  }
  for (const auto& [pdb, o] : m.pdbs) {
    add_implicit_namespace(*objs, pdb->metadata().namespace_());
    auto b = compile_pdb(*pdb, pods);
    if (!b) return error{o.describe() + ": " + b.err().message};
    objs->pdbs.push_back(std::move(*b));
  }
  for (const auto& [pg, o] : m.pod_groups) {
    add_implicit_namespace(*objs, pg->metadata().namespace_());
    std::optional<int32_t> class_priority;
    const auto& spec = pg->spec();
    if (priority_of && !spec.has_priority() && !spec.priority_class_name().empty()) {
      class_priority = priority_of(spec.priority_class_name());
      if (!class_priority)
        return error{o.describe() + ": spec.priorityClassName: no PriorityClass with name " +
                     spec.priority_class_name() + " was found"};
    }
    auto g = compile_pod_group(*pg, class_priority);
    if (!g) return error{o.describe() + ": " + g.err().message};
    objs->pod_groups.emplace(pod_group_key(**g), std::move(*g));
  }
  for (const auto& [pg, o] : m.coscheduling_pod_groups) {
    add_implicit_namespace(*objs, pg->metadata().namespace_());
    auto g = compile_pod_group(*pg);
    if (!g) return error{o.describe() + ": " + g.err().message};
    objs->pod_groups.emplace(pod_group_key(**g), std::move(*g));
  }
  for (const auto& p : pods) add_implicit_namespace(*objs, p->ns);
  if (auto s = compile_volumes(m, *objs); !s) return s.err();
  return cluster_objects_ptr(std::move(objs));
}

}  // namespace kas

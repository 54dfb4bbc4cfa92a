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
//   max(0, healthy - desiredHealthy), 0 when no pod is expected or neither bound is set.
#include "config/manifest_objects.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "config/cluster_manifests.hpp"
#include "messages/codec.hpp"

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

result<cluster_objects_ptr> compile_objects(const cluster_manifests& m, const std::vector<pod_info_ptr>& pods) {
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
  for (const auto& p : pods) add_implicit_namespace(*objs, p->ns);
  return cluster_objects_ptr(std::move(objs));
}

}  // namespace kas

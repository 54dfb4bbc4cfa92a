// Pod compilation. Requests follow kube's component-helpers PodRequests (v1.36, PodLevelResources on,
// no status resources): regular containers summed; init containers maxed in, each counted together
// with the restartable (sidecar) init containers before it, sidecars also summed into the total;
// pod-level requests (cpu, memory, hugepages-*) override the container aggregate; overhead added.
// The scheduler's non-zero requests rerun the same algorithm with 100m / 200Mi filled in for each
// container that omits cpu / memory (kube's NonMissingContainerRequests).
#include "cache/pod_info.hpp"

#include <algorithm>
#include <limits>

#include <optional>

#include <algorithm>
#include <map>

#include "messages/name_validation.hpp"
#include "messages/quantity.hpp"

namespace kas {

namespace {

// A ResourceList with amounts already converted: "cpu" in milli-cores, everything else in units.
// Key presence matters (kube distinguishes a missing request from an explicit 0).
using rmap = std::map<std::string, int64_t>;

error at(const std::string& path, const std::string& msg) { return error{path + ": " + msg}; }

void add_into(rmap& a, const rmap& b) {
  for (auto& [k, v] : b) a[k] += v;
}

void max_into(rmap& a, const rmap& b) {
  for (auto& [k, v] : b) {
    auto it = a.find(k);
    if (it == a.end())
      a.emplace(k, v);
    else if (v > it->second)
      it->second = v;
  }
}

template <class Map>
result<rmap> parse_list(const Map& m, const std::string& path) {
  rmap out;
  for (auto& [name, q] : m) {
    std::string p = path + "." + name;
    auto parsed = parse_quantity(q.string());
    if (!parsed) return at(p, parsed.err().message);
    if (parsed->negative()) return at(p, "must be greater than or equal to 0");
    out[name] = name == res_cpu ? parsed->milli_value() : parsed->value();
  }
  return out;
}

// A container's requests after apiserver defaulting: a resource with a limit and no request
// requests its limit.
result<rmap> container_requests(const k8s::core::Container& c, const std::string& path) {
  auto req = parse_list(c.resources().requests(), path + ".resources.requests");
  if (!req) return req;
  auto lim = parse_list(c.resources().limits(), path + ".resources.limits");
  if (!lim) return lim;
  for (auto& [k, v] : *lim) req->emplace(k, v);
  return req;
}

struct container_set {
  std::vector<rmap> regular;
  std::vector<std::pair<rmap, bool>> init;  // (requests, restartable)
};

rmap with_non_missing(const rmap& c, const rmap* non_missing) {
  if (non_missing == nullptr) return c;
  rmap out = c;
  for (auto& [k, v] : *non_missing) out.emplace(k, v);
  return out;
}

// kube's aggregateContainerResourcesByFn over spec requests.
rmap aggregate(const container_set& cs, const rmap* non_missing) {
  rmap total;
  for (auto& c : cs.regular) add_into(total, with_non_missing(c, non_missing));
  rmap sidecars, init_max;
  for (auto& [c, restartable] : cs.init) {
    rmap r = with_non_missing(c, non_missing);
    if (restartable) {
      add_into(total, r);
      add_into(sidecars, r);
      r = sidecars;
    } else {
      add_into(r, sidecars);
    }
    max_into(init_max, r);
  }
  max_into(total, init_max);
  return total;
}

bool is_supported_pod_level(const std::string& name) {
  return name == res_cpu || name == res_memory || is_hugepages_resource_name(name);
}

struct pod_level {
  rmap requests;  // effective, after defaulting
  bool set = false;
};

// Pod-level requests as the apiserver defaults them when pod-level limits are given: from the
// container aggregate for cpu/memory, otherwise from the pod-level limit.
result<pod_level> compile_pod_level(const k8s::core::PodSpec& spec, const rmap& container_aggregate) {
  pod_level pl;
  if (!spec.has_resources()) return pl;
  auto req = parse_list(spec.resources().requests(), "spec.resources.requests");
  if (!req) return req.err();
  auto lim = parse_list(spec.resources().limits(), "spec.resources.limits");
  if (!lim) return lim.err();
  pl.requests = std::move(*req);
  if (!lim->empty()) {
    for (auto& [k, v] : container_aggregate)
      if ((k == res_cpu || k == res_memory) && !pl.requests.count(k)) pl.requests.emplace(k, v);
    for (auto& [k, v] : *lim)
      if (is_supported_pod_level(k) && !pl.requests.count(k)) pl.requests.emplace(k, v);
  }
  for (auto& kv : pl.requests)
    if (is_supported_pod_level(kv.first)) pl.set = true;
  return pl;
}

rmap pod_requests(const container_set& cs, const pod_level& pl, const rmap& overhead, const rmap* non_missing) {
  rmap reqs = aggregate(cs, non_missing);
  if (pl.set)
    for (auto& [k, v] : pl.requests)
      if (is_supported_pod_level(k)) reqs[k] = v;
  add_into(reqs, overhead);
  return reqs;
}

// kube's framework.Resource.Add: names that are not scalar resources are dropped.
resource_list to_resource_list(const rmap& m) {
  resource_list r;
  for (auto& [k, v] : m) {
    if (k == res_cpu)
      r.milli_cpu += v;
    else if (k == res_memory)
      r.memory += v;
    else if (k == res_ephemeral_storage)
      r.ephemeral_storage += v;
    else if (k == res_pods)
      r.allowed_pod_number += v;
    else if (is_scalar_resource_name(k))
      r.add_scalar(k, v);
  }
  return r;
}

status_or_error compile_requests(const k8s::core::PodSpec& spec, pod_info& out) {
  container_set cs;
  for (int i = 0; i < spec.containers_size(); ++i) {
    auto r = container_requests(spec.containers(i), "spec.containers[" + std::to_string(i) + "]");
    if (!r) return r.err();
    cs.regular.push_back(std::move(*r));
  }
  for (int i = 0; i < spec.init_containers_size(); ++i) {
    const auto& c = spec.init_containers(i);
    auto r = container_requests(c, "spec.initContainers[" + std::to_string(i) + "]");
    if (!r) return r.err();
    cs.init.emplace_back(std::move(*r), c.restart_policy() == "Always");
  }
  auto overhead = parse_list(spec.overhead(), "spec.overhead");
  if (!overhead) return overhead.err();
  auto pl = compile_pod_level(spec, aggregate(cs, nullptr));
  if (!pl) return pl.err();

  rmap requests = pod_requests(cs, *pl, *overhead, nullptr);
  // kube's getNonMissingContainerRequests: with pod-level requests, defaults fill only what
  // neither level requests.
  rmap non_missing;
  if (!pl->set || !requests.count(std::string(res_cpu))) non_missing[std::string(res_cpu)] = default_milli_cpu_request;
  if (!pl->set || !requests.count(std::string(res_memory)))
    non_missing[std::string(res_memory)] = default_memory_request;
  rmap non_zero = non_missing.empty() ? requests : pod_requests(cs, *pl, *overhead, &non_missing);

  out.requests = to_resource_list(requests);
  out.non_zero_requests = to_resource_list(non_zero);
  return ok_t{};
}

bool parse_effect(const std::string& s, taint_effect& out) {
  if (s.empty()) {
    out = taint_effect::none;
    return true;
  }
  out = parse_taint_effect(s);
  return out != taint_effect::none;
}

result<std::vector<toleration>> compile_tolerations(const k8s::core::PodSpec& spec) {
  std::vector<toleration> out;
  for (int i = 0; i < spec.tolerations_size(); ++i) {
    const auto& t = spec.tolerations(i);
    std::string path = "spec.tolerations[" + std::to_string(i) + "]";
    toleration tol;
    tol.key = t.key();
    tol.value = t.value();
    if (t.operator_() == "Exists")
      tol.op_exists = true;
    else if (!t.operator_().empty() && t.operator_() != "Equal")
      return at(path + ".operator", "Unsupported value: \"" + t.operator_() +
                                        "\": supported values: \"Equal\", \"Exists\"");
    if (!parse_effect(t.effect(), tol.effect))
      return at(path + ".effect", "Unsupported value: \"" + t.effect() +
                                      "\": supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\"");
    out.push_back(std::move(tol));
  }
  return out;
}

// kube's schedutil.GetHostPorts (used by both NodeInfo's used ports and NodePorts): the host ports
// of restartable (sidecar) init containers, which run for the pod's whole life, then of regular
// containers; plain init containers have exited before the app starts. For a hostNetwork pod the
// apiserver's SetDefaults_Pod has set every port's hostPort to its containerPort (containers and
// init containers alike), so such a pod holds its container ports on the node.
std::vector<host_port> compile_host_ports(const k8s::core::PodSpec& spec) {
  std::vector<host_port> out;
  auto add = [&](const k8s::core::Container& c) {
    for (const auto& p : c.ports()) {
      int32_t port = p.host_port() == 0 && spec.host_network() ? p.container_port() : p.host_port();
      if (port <= 0) continue;
      out.push_back(host_port{p.protocol().empty() ? "TCP" : p.protocol(),
                              p.host_ip().empty() ? "0.0.0.0" : p.host_ip(), port});
    }
  };
  for (const auto& c : spec.init_containers())
    if (c.restart_policy() == "Always") add(c);
  for (const auto& c : spec.containers()) add(c);
  return out;
}

// kube's getNamespacesFromPodAffinityTerm plus the apiserver's MatchLabelKeysInPodAffinity merge:
// matchLabelKeys / mismatchLabelKeys become `key In/NotIn [the pod's value]` for each key the pod
// carries; a nil labelSelector stays nil (it matches nothing, and the apiserver adds nothing).
result<affinity_term> compile_affinity_term(const k8s::core::PodAffinityTerm& t, const pod_info& pod,
                                            const std::string& path) {
  affinity_term out;
  if (t.topology_key().empty()) return at(path + ".topologyKey", "Required value: can not be empty");
  if (!is_qualified_name(t.topology_key()))
    return at(path + ".topologyKey", "Invalid value: \"" + t.topology_key() + "\": must be a qualified name");
  out.topology_key = t.topology_key();
  auto sel = compile_label_selector(t.has_label_selector() ? &t.label_selector() : nullptr, path + ".labelSelector");
  if (!sel) return sel.err();
  out.selector = std::move(*sel);
  auto merge = [&](const google::protobuf::RepeatedPtrField<std::string>& keys, const char* field, selector_op op)
      -> status_or_error {
    for (int i = 0; i < keys.size(); ++i) {
      if (!is_qualified_name(keys[i]))
        return at(path + "." + field + "[" + std::to_string(i) + "]",
                  "Invalid value: \"" + keys[i] + "\": must be a qualified name");
      const std::string* v = pod.labels.get(keys[i]);
      if (v == nullptr || out.selector.nothing) continue;
      selector_requirement r;
      r.key = keys[i];
      r.op = op;
      r.values = {*v};
      out.selector.requirements.push_back(std::move(r));
    }
    return ok_t{};
  };
  for (const auto& k : t.match_label_keys())
    for (int j = 0; j < t.mismatch_label_keys_size(); ++j)
      if (t.mismatch_label_keys(j) == k)
        return at(path + ".mismatchLabelKeys[" + std::to_string(j) + "]",
                  "Invalid value: \"" + k + "\": exists in both matchLabelKeys and mismatchLabelKeys");
  if (auto s = merge(t.match_label_keys(), "matchLabelKeys", selector_op::in); !s) return s.err();
  if (auto s = merge(t.mismatch_label_keys(), "mismatchLabelKeys", selector_op::not_in); !s) return s.err();
  if (t.has_namespace_selector()) {
    auto ns = compile_label_selector(&t.namespace_selector(), path + ".namespaceSelector");
    if (!ns) return ns.err();
    out.namespace_selector = std::move(*ns);
  }
  if (t.namespaces().empty() && !t.has_namespace_selector()) {
    out.namespaces = {pod.ns};
  } else {
    out.namespaces.assign(t.namespaces().begin(), t.namespaces().end());
    std::sort(out.namespaces.begin(), out.namespaces.end());  // kube holds a set
    out.namespaces.erase(std::unique(out.namespaces.begin(), out.namespaces.end()), out.namespaces.end());
  }
  return out;
}

using affinity_terms = google::protobuf::RepeatedPtrField<k8s::core::PodAffinityTerm>;
using weighted_terms = google::protobuf::RepeatedPtrField<k8s::core::WeightedPodAffinityTerm>;

status_or_error compile_pod_affinity_side(const affinity_terms& required, const weighted_terms& preferred,
                                          const pod_info& pod, const std::string& base,
                                          std::vector<affinity_term>& req_out,
                                          std::vector<weighted_affinity_term>& pref_out) {
  for (int i = 0; i < required.size(); ++i) {
    auto t = compile_affinity_term(
        required[i], pod, base + ".requiredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]");
    if (!t) return t.err();
    req_out.push_back(std::move(*t));
  }
  for (int i = 0; i < preferred.size(); ++i) {
    std::string path = base + ".preferredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]";
    const auto& w = preferred[i];
    if (w.weight() < 1 || w.weight() > 100)
      return at(path + ".weight", "Invalid value: " + std::to_string(w.weight()) + ": must be in the range 1-100");
    auto t = compile_affinity_term(w.pod_affinity_term(), pod, path + ".podAffinityTerm");
    if (!t) return t.err();
    pref_out.push_back(weighted_affinity_term{std::move(*t), w.weight()});
  }
  return ok_t{};
}

status_or_error compile_pod_affinity(const k8s::core::PodSpec& spec, pod_info& out) {
  if (!spec.has_affinity()) return ok_t{};
  const auto& a = spec.affinity();
  if (a.has_pod_affinity()) {
    const auto& pa = a.pod_affinity();
    auto s = compile_pod_affinity_side(pa.required_during_scheduling_ignored_during_execution(),
                                       pa.preferred_during_scheduling_ignored_during_execution(), out,
                                       "spec.affinity.podAffinity", out.required_affinity, out.preferred_affinity);
    if (!s) return s;
  }
  if (a.has_pod_anti_affinity()) {
    const auto& pa = a.pod_anti_affinity();
    auto s = compile_pod_affinity_side(pa.required_during_scheduling_ignored_during_execution(),
                                       pa.preferred_during_scheduling_ignored_during_execution(), out,
                                       "spec.affinity.podAntiAffinity", out.required_anti_affinity,
                                       out.preferred_anti_affinity);
    if (!s) return s;
  }
  return ok_t{};
}

bool parse_inclusion_policy(const std::string& s, node_inclusion_policy dflt, node_inclusion_policy& out) {
  if (s.empty()) out = dflt;
  else if (s == "Honor") out = node_inclusion_policy::honor;
  else if (s == "Ignore") out = node_inclusion_policy::ignore;
  else return false;
  return true;
}

// kube's validateTopologySpreadConstraints, then the defaults the scheduler applies (minDomains 1,
// nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore) and the apiserver's matchLabelKeys merge.
result<spread_constraint> compile_spread_constraint(const k8s::core::TopologySpreadConstraint& t,
                                                    const pod_info& pod, const std::string& path) {
  spread_constraint c;
  c.max_skew = t.max_skew();
  if (c.max_skew <= 0)
    return at(path + ".maxSkew", "Invalid value: " + std::to_string(c.max_skew) + ": must be greater than zero");
  if (t.topology_key().empty()) return at(path + ".topologyKey", "Required value: can not be empty");
  if (!is_qualified_name(t.topology_key()))
    return at(path + ".topologyKey", "Invalid value: \"" + t.topology_key() + "\": must be a qualified name");
  c.topology_key = t.topology_key();
  if (t.when_unsatisfiable() == "DoNotSchedule")
    c.do_not_schedule = true;
  else if (t.when_unsatisfiable() == "ScheduleAnyway")
    c.do_not_schedule = false;
  else if (t.when_unsatisfiable().empty())
    return at(path + ".whenUnsatisfiable", "Required value: can not be empty");
  else
    return at(path + ".whenUnsatisfiable", "Unsupported value: \"" + t.when_unsatisfiable() +
                                               "\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
  if (t.has_min_domains()) {
    const std::string v = std::to_string(t.min_domains());
    if (t.min_domains() <= 0) return at(path + ".minDomains", "Invalid value: " + v + ": must be greater than zero");
    if (!c.do_not_schedule)
      return at(path + ".minDomains", "Invalid value: " + v +
                                          ": can only use minDomains if whenUnsatisfiable=DoNotSchedule, not "
                                          "ScheduleAnyway");
    c.min_domains = t.min_domains();
  }
  if (!parse_inclusion_policy(t.node_affinity_policy(), node_inclusion_policy::honor, c.node_affinity_policy))
    return at(path + ".nodeAffinityPolicy",
              "Unsupported value: \"" + t.node_affinity_policy() + "\": supported values: \"Honor\", \"Ignore\"");
  if (!parse_inclusion_policy(t.node_taints_policy(), node_inclusion_policy::ignore, c.node_taints_policy))
    return at(path + ".nodeTaintsPolicy",
              "Unsupported value: \"" + t.node_taints_policy() + "\": supported values: \"Honor\", \"Ignore\"");
  auto sel = compile_label_selector(t.has_label_selector() ? &t.label_selector() : nullptr, path + ".labelSelector");
  if (!sel) return sel.err();
  c.selector = std::move(*sel);
  if (!t.match_label_keys().empty() && c.selector.nothing)
    return at(path + ".matchLabelKeys", "Forbidden: must not be specified when labelSelector is not set");
  for (int i = 0; i < t.match_label_keys_size(); ++i) {
    const std::string& key = t.match_label_keys(i);
    if (!is_qualified_name(key))
      return at(path + ".matchLabelKeys[" + std::to_string(i) + "]",
                "Invalid value: \"" + key + "\": must be a qualified name");
    if (const std::string* v = pod.labels.get(key)) {
      selector_requirement r;
      r.key = key;
      r.op = selector_op::in;
      r.values = {*v};
      c.selector.requirements.push_back(std::move(r));
    }
  }
  return c;
}

status_or_error compile_spread_constraints(const k8s::core::PodSpec& spec, pod_info& out) {
  for (int i = 0; i < spec.topology_spread_constraints_size(); ++i) {
    const auto& t = spec.topology_spread_constraints(i);
    std::string path = "spec.topologySpreadConstraints[" + std::to_string(i) + "]";
    for (int j = 0; j < i; ++j) {
      const auto& o = spec.topology_spread_constraints(j);
      if (o.topology_key() == t.topology_key() && o.when_unsatisfiable() == t.when_unsatisfiable())
        return at(path + ".{topologyKey, whenUnsatisfiable}",
                  "Duplicate value: \"{" + t.topology_key() + ", " + t.when_unsatisfiable() + "}\"");
    }
    auto c = compile_spread_constraint(t, out, path);
    if (!c) return c.err();
    out.spread_constraints.push_back(std::move(*c));
  }
  return ok_t{};
}

}  // namespace

taint_effect parse_taint_effect(const std::string& s) {
  if (s == "NoSchedule") return taint_effect::no_schedule;
  if (s == "PreferNoSchedule") return taint_effect::prefer_no_schedule;
  if (s == "NoExecute") return taint_effect::no_execute;
  return taint_effect::none;
}

bool toleration::tolerates(const taint& t) const {
  if (effect != taint_effect::none && effect != t.effect) return false;
  if (!key.empty() && key != t.key) return false;
  return op_exists || value == t.value;
}

// spec.volumes: the claims (persistentVolumeClaim, and the claim a generic ephemeral volume gets,
// named "<pod>-<volume>" as the ephemeral controller names it) and the inline sources.
status_or_error compile_volumes(const k8s::core::PodSpec& spec, pod_info& info) {
  for (int i = 0; i < spec.volumes_size(); ++i) {
    const auto& v = spec.volumes(i);
    const auto& src = v.volume_source();
    pod_volume out;
    out.name = v.name();
    if (src.has_persistent_volume_claim()) {
      out.claim_name = src.persistent_volume_claim().claim_name();
      out.read_only = src.persistent_volume_claim().read_only();
      // The apiserver refuses an empty claimName; the volume plugins would look up "".
      if (out.claim_name.empty())
        return at("spec.volumes[" + std::to_string(i) + "].persistentVolumeClaim.claimName", "Required value");
    } else if (src.has_ephemeral()) {
      out.ephemeral = true;
      out.claim_name = info.name + "-" + v.name();
    } else {
      out.inline_source = inline_volume_source(src);
    }
    info.volumes.push_back(std::move(out));
  }
  return ok_t{};
}

result<pod_info_ptr> compile_pod(std::shared_ptr<const k8s::core::Pod> pod) {
  auto info = std::make_shared<pod_info>();
  const auto& meta = pod->metadata();
  const auto& spec = pod->spec();
  info->ns = meta.namespace_().empty() ? "default" : meta.namespace_();
  info->ns_id = intern_namespace(info->ns);
  info->name = meta.name();
  info->uid = meta.uid().empty() ? info->ns + "/" + info->name : meta.uid();
  info->node_name = spec.node_name();
  info->phase = pod->status().phase();
  info->scheduler_name = spec.scheduler_name().empty() ? "default-scheduler" : spec.scheduler_name();
  info->priority_class_name = spec.priority_class_name();
  info->priority = spec.priority();
  if (spec.preemption_policy() == "Never")
    info->preemption = preemption_policy::never;
  else if (!spec.preemption_policy().empty() && spec.preemption_policy() != "PreemptLowerPriority")
    return at("spec.preemptionPolicy", "Unsupported value: \"" + spec.preemption_policy() +
                                           "\": supported values: \"Never\", \"PreemptLowerPriority\"");
  if (meta.has_creation_timestamp()) {
    // Nanoseconds since the epoch hold dates up to 2262; a later (or far earlier) timestamp, which
    // the API's RFC 3339 range allows up to year 9999, saturates instead of overflowing. It only
    // orders pods.
    constexpr int64_t max_seconds = std::numeric_limits<int64_t>::max() / 1000000000LL - 1;
    int64_t sec = std::clamp<int64_t>(meta.creation_timestamp().seconds(), -max_seconds, max_seconds);
    info->creation_ns = sec * 1000000000LL + meta.creation_timestamp().nanos();
  }
  info->labels = to_label_map(meta.labels());

  if (auto st = compile_requests(spec, *info); !st) return st.err();

  info->node_selector = to_label_map(spec.node_selector());
  if (spec.has_affinity() && spec.affinity().has_node_affinity()) {
    const auto& na = spec.affinity().node_affinity();
    const std::string base = "spec.affinity.nodeAffinity";
    if (na.has_required_during_scheduling_ignored_during_execution()) {
      auto req = compile_node_selector(na.required_during_scheduling_ignored_during_execution(),
                                       base + ".requiredDuringSchedulingIgnoredDuringExecution");
      if (!req) return req.err();
      info->required_node_affinity = std::move(*req);
    }
    for (int i = 0; i < na.preferred_during_scheduling_ignored_during_execution_size(); ++i) {
      const auto& p = na.preferred_during_scheduling_ignored_during_execution(i);
      auto term = compile_node_selector_term(
          p.preference(), base + ".preferredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]");
      if (!term) return term.err();
      info->preferred_node_affinity.push_back(preferred_scheduling_term{p.weight(), std::move(*term)});
    }
  }
  if (auto st = compile_pod_affinity(spec, *info); !st) return st.err();
  if (auto st = compile_spread_constraints(spec, *info); !st) return st.err();
  info->nominated_node_name = pod->status().nominated_node_name();
  auto tols = compile_tolerations(spec);
  if (!tols) return tols.err();
  info->tolerations = std::move(*tols);
  info->host_ports = compile_host_ports(spec);
  for (const auto& g : spec.scheduling_gates()) info->scheduling_gates.push_back(g.name());
  // The group: the v1beta1 field first, else the Coscheduling label.
  if (spec.has_scheduling_group() && !spec.scheduling_group().pod_group_name().empty()) {
    info->group_api = pod_group_api::workload;
    info->group_name = spec.scheduling_group().pod_group_name();
  } else if (auto* g = info->labels.get(coscheduling_pod_group_label); g && !g->empty()) {
    info->group_api = pod_group_api::coscheduling;
    info->group_name = *g;
  }
  if (info->in_group()) info->group_key = pod_group_key(info->group_api, info->ns, info->group_name);
  for (const auto& c : spec.init_containers())
    if (!c.image().empty()) info->images.push_back(c.image());
  for (const auto& c : spec.containers())
    if (!c.image().empty()) info->images.push_back(c.image());
  if (auto st = compile_volumes(spec, *info); !st) return st.err();
  info->pod = std::move(pod);
  return pod_info_ptr(std::move(info));
}

bool affinity_term::matches(const pod_info& pod, const label_map* ns_labels) const {
  static const label_map no_labels;
  const bool listed = namespaces_sorted ? std::binary_search(namespaces.begin(), namespaces.end(), pod.ns)
                                        : std::find(namespaces.begin(), namespaces.end(), pod.ns) != namespaces.end();
  const bool ns_ok = listed ||
                     (namespace_selector && namespace_selector->matches(ns_labels ? *ns_labels : no_labels));
  return ns_ok && selector.matches(pod.labels);
}

pod_info_ptr with_node_name(const pod_info& p, const std::string& node) {
  auto copy = std::make_shared<pod_info>(p);
  copy->node_name = node;
  return copy;
}

namespace {

bool terminating(const pod_info& p) { return p.pod && p.pod->metadata().has_deletion_timestamp(); }

// status.startTime, or nullopt when unset (or no object).
std::optional<std::pair<int64_t, int32_t>> start_time(const pod_info& p) {
  if (!p.pod || !p.pod->status().has_start_time()) return std::nullopt;
  const auto& t = p.pod->status().start_time();
  return std::make_pair(static_cast<int64_t>(t.seconds()), static_cast<int32_t>(t.nanos()));
}

}  // namespace

bool same_placement(const pod_info& a, const pod_info& b) {
  // Spec fields behind the term vectors are immutable once a pod is scheduled (the apiserver
  // allows changing node affinity only while scheduling gates remain), so equal counts are the
  // same terms; a count that moved means something else is going on, and the answer is no.
  return a.uid == b.uid && a.node_name == b.node_name && a.ns == b.ns && a.name == b.name &&
         a.labels == b.labels && a.priority == b.priority && a.preemption == b.preemption &&
         a.requests == b.requests && a.non_zero_requests == b.non_zero_requests && a.host_ports == b.host_ports &&
         a.required_affinity.size() == b.required_affinity.size() &&
         a.required_anti_affinity.size() == b.required_anti_affinity.size() &&
         a.preferred_affinity.size() == b.preferred_affinity.size() &&
         a.preferred_anti_affinity.size() == b.preferred_anti_affinity.size() &&
         a.spread_constraints.size() == b.spread_constraints.size() && !terminating(a) && !terminating(b) &&
         start_time(a) == start_time(b);
}

}  // namespace kas

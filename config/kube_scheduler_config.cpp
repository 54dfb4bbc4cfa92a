// Stage 1 of KubeSchedulerConfiguration handling: decode, default and validate one document.
// Resolution of the plugin sets (stage 2) is in profile_resolution.cpp.
#include "config/kube_scheduler_config.hpp"

#include <initializer_list>
#include <limits>
#include <map>
#include <set>

#include "config/go_duration.hpp"
#include "messages/field_path.hpp"

namespace kas {

namespace {


// Field decoding with paths. `where` ("cfg.yaml: document 1") is prepended by the caller.
class decoder {
public:
  status_or_error known(const YAML::Node& n, const std::string& path, std::initializer_list<std::string_view> keys) {
    if (!n.IsMap()) return error{path + ": expected an object"};
    for (auto it = n.begin(); it != n.end(); ++it) {
      auto key = it->first.as<std::string>();
      bool ok = false;
      for (auto k : keys) ok = ok || k == key;
      if (!ok) return error{field_path(path, key) + ": unknown field"};
    }
    return ok_t{};
  }

  template <class T>
  result<T> integer(const YAML::Node& n, const std::string& path) {
    if (!n.IsScalar()) return error{path + ": expected an integer"};
    try {
      long long v = n.as<long long>();
      if (v < static_cast<long long>(std::numeric_limits<T>::min()) ||
          v > static_cast<long long>(std::numeric_limits<T>::max()))
        return error{path + ": Invalid value: " + std::to_string(v) + ": out of range"};
      return static_cast<T>(v);
    } catch (const YAML::Exception&) {
      return error{path + ": expected an integer, got " + quoted(n.Scalar())};
    }
  }

  result<bool> boolean(const YAML::Node& n, const std::string& path) {
    try {
      if (n.IsScalar()) return n.as<bool>();
    } catch (const YAML::Exception&) {
    }
    return error{path + ": expected true or false, got " + quoted(n.IsScalar() ? n.Scalar() : YAML::Dump(n))};
  }

  result<std::string> string(const YAML::Node& n, const std::string& path) {
    if (!n.IsScalar()) return error{path + ": expected a string"};
    return n.Scalar();
  }

  result<double> number(const YAML::Node& n, const std::string& path) {
    try {
      if (n.IsScalar()) return n.as<double>();
    } catch (const YAML::Exception&) {
    }
    return error{path + ": expected a number"};
  }

};

#define KAS_TRY(var, expr)         \
  auto var = (expr);               \
  if (!var) return var.err();

status_or_error decode_plugin_list(decoder& d, const YAML::Node& n, const std::string& path,
                                   std::vector<plugin_ref>& out) {
  if (!n || n.IsNull()) return ok_t{};
  if (!n.IsSequence()) return error{path + ": expected a list"};
  for (size_t i = 0; i < n.size(); ++i) {
    plugin_ref ref;
    ref.path = path + "[" + std::to_string(i) + "]";
    if (auto st = d.known(n[i], ref.path, {"name", "weight"}); !st) return st;
    if (!n[i]["name"]) return error{ref.path + ".name: Required value"};
    KAS_TRY(name, d.string(n[i]["name"], ref.path + ".name"));
    ref.name = *name;
    if (ref.name.empty()) return error{ref.path + ".name: Required value"};
    if (auto w = n[i]["weight"]; w && !w.IsNull()) {
      KAS_TRY(weight, d.integer<int32_t>(w, ref.path + ".weight"));
      // kube accepts any int32 here; a negative weight would invert the plugin's preference.
      if (*weight < 0)
        return error{ref.path + ".weight: Invalid value: " + std::to_string(*weight) + ": must not be negative"};
      ref.weight = *weight;
    }
    out.push_back(std::move(ref));
  }
  return ok_t{};
}

status_or_error decode_plugins(decoder& d, const YAML::Node& n, const std::string& path, kube_profile& prof) {
  if (!n || n.IsNull()) return ok_t{};
  if (!n.IsMap()) return error{path + ": expected an object"};
  for (auto it = n.begin(); it != n.end(); ++it) {
    auto key = it->first.as<std::string>();
    size_t idx = 0;
    while (idx < ext_point_names.size() && key != ext_point_names[idx]) ++idx;
    if (idx == ext_point_names.size()) return error{path + "." + key + ": unknown field"};
    std::string p = path + "." + key;
    // A copy, not a reference: `it->` is a proxy that yaml-cpp's iterator makes for this one
    // expression, and `second` lives inside it.
    YAML::Node set = it->second;
    if (set.IsNull()) continue;
    if (auto st = d.known(set, p, {"enabled", "disabled"}); !st) return st;
    if (auto st = decode_plugin_list(d, set["enabled"], p + ".enabled", prof.plugins[idx].enabled); !st) return st;
    if (auto st = decode_plugin_list(d, set["disabled"], p + ".disabled", prof.plugins[idx].disabled); !st) return st;
  }
  return ok_t{};
}

result<std::optional<int32_t>> percentage(decoder& d, const YAML::Node& n, const std::string& path) {
  if (!n || n.IsNull()) return std::optional<int32_t>{};
  KAS_TRY(v, d.integer<int32_t>(n, path));
  if (*v < 0 || *v > 100) return error{path + ": Invalid value: " + std::to_string(*v) + ": not in valid range [0-100]"};
  return std::optional<int32_t>(*v);
}

result<kube_profile> decode_profile(decoder& d, const YAML::Node& n, const std::string& path) {
  kube_profile prof;
  prof.path = path;
  if (auto st = d.known(n, path, {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}); !st)
    return st.err();
  if (auto v = n["schedulerName"]; v && !v.IsNull()) {
    KAS_TRY(s, d.string(v, path + ".schedulerName"));
    prof.scheduler_name = *s;
  }
  KAS_TRY(pct, percentage(d, n["percentageOfNodesToScore"], path + ".percentageOfNodesToScore"));
  prof.percentage_of_nodes_to_score = *pct;
  if (auto st = decode_plugins(d, n["plugins"], path + ".plugins", prof); !st) return st.err();
  if (auto pc = n["pluginConfig"]; pc && !pc.IsNull()) {
    if (!pc.IsSequence()) return error{path + ".pluginConfig: expected a list"};
    std::set<std::string> seen;
    for (size_t i = 0; i < pc.size(); ++i) {
      plugin_config_entry e;
      e.path = path + ".pluginConfig[" + std::to_string(i) + "]";
      if (auto st = d.known(pc[i], e.path, {"name", "args"}); !st) return st.err();
      if (!pc[i]["name"]) return error{e.path + ".name: Required value"};
      KAS_TRY(name, d.string(pc[i]["name"], e.path + ".name"));
      e.name = *name;
      if (!seen.insert(e.name).second) return error{e.path + ": Duplicate value: " + quoted(e.name)};
      e.args = pc[i]["args"] ? YAML::Clone(pc[i]["args"]) : YAML::Node();
      prof.plugin_config.push_back(std::move(e));
    }
  }
  return prof;
}

status_or_error decode_leader_election(decoder& d, const YAML::Node& n, leader_election_config& out) {
  const std::string path = "leaderElection";
  if (auto st = d.known(n, path, {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
                                  "resourceName", "resourceNamespace"});
      !st)
    return st;
  if (auto v = n["leaderElect"]) {
    KAS_TRY(b, d.boolean(v, path + ".leaderElect"));
    out.leader_elect = *b;
  }
  std::pair<const char*, std::string*> strings[] = {
    {"leaseDuration", &out.lease_duration}, {"renewDeadline", &out.renew_deadline},
    {"retryPeriod", &out.retry_period},     {"resourceLock", &out.resource_lock},
    {"resourceName", &out.resource_name},   {"resourceNamespace", &out.resource_namespace}};
  for (auto& [key, target] : strings) {
    if (auto v = n[key]) {
      KAS_TRY(s, d.string(v, path + "." + key));
      *target = *s;
    }
  }
  return resolve_leader_election(out);
}

status_or_error decode_client_connection(decoder& d, const YAML::Node& n, client_connection_config& out) {
  const std::string path = "clientConnection";
  if (auto st = d.known(n, path, {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"}); !st) return st;
  std::pair<const char*, std::string*> strings[] = {
    {"kubeconfig", &out.kubeconfig}, {"acceptContentTypes", &out.accept_content_types}, {"contentType", &out.content_type}};
  for (auto& [key, target] : strings) {
    if (auto v = n[key]) {
      KAS_TRY(s, d.string(v, path + "." + key));
      *target = *s;
    }
  }
  if (auto v = n["qps"]) {
    KAS_TRY(q, d.number(v, path + ".qps"));
    out.qps = *q;
    out.qps_set = true;
  }
  if (auto v = n["burst"]) {
    KAS_TRY(b, d.integer<int32_t>(v, path + ".burst"));
    if (*b < 0) return error{path + ".burst: Invalid value: " + std::to_string(*b) + ": must be non-negative"};
    out.burst = *b;
    out.burst_set = true;
  }
  return ok_t{};
}

status_or_error decode_extenders(decoder& d, const YAML::Node& n, kube_scheduler_configuration& out) {
  if (n.IsNull()) return ok_t{};
  if (!n.IsSequence()) return error{"extenders: expected a list"};
  int binders = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string path = "extenders[" + std::to_string(i) + "]";
    if (auto st = d.known(n[i], path, {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight",
                                       "bindVerb", "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable",
                                       "managedResources", "ignorable"});
        !st)
      return st;
    int64_t weight = 0;
    if (auto v = n[i]["weight"]) {
      KAS_TRY(w, d.integer<int64_t>(v, path + ".weight"));
      weight = *w;
    }
    if (n[i]["prioritizeVerb"] && !n[i]["prioritizeVerb"].Scalar().empty() && weight <= 0)
      return error{path + ".weight: Invalid value: " + std::to_string(weight) +
                   ": must have a positive weight applied to it"};
    if (n[i]["bindVerb"] && !n[i]["bindVerb"].Scalar().empty()) ++binders;
  }
  if (binders > 1)
    return error{"extenders: Invalid value: \"found " + std::to_string(binders) +
                 " extenders implementing bind\": only one extender can implement bind"};
  out.extenders = n.size();
  if (out.extenders)
    out.warnings.push_back("extenders: " + std::to_string(out.extenders) +
                           " extender(s) configured; this build does not call extenders");
  return ok_t{};
}

status_or_error decode_scalars(decoder& d, const YAML::Node& doc, kube_scheduler_configuration& out) {
  if (auto v = doc["parallelism"]) {
    KAS_TRY(p, d.integer<int32_t>(v, "parallelism"));
    if (*p <= 0)
      return error{"parallelism: Invalid value: " + std::to_string(*p) + ": should be an integer value greater than zero"};
    out.parallelism = *p;
  }
  KAS_TRY(pct, percentage(d, doc["percentageOfNodesToScore"], "percentageOfNodesToScore"));
  out.percentage_of_nodes_to_score = *pct;
  if (auto v = doc["podInitialBackoffSeconds"]) {
    KAS_TRY(s, d.integer<int64_t>(v, "podInitialBackoffSeconds"));
    if (*s <= 0) return error{"podInitialBackoffSeconds: Invalid value: " + std::to_string(*s) + ": must be greater than 0"};
    out.pod_initial_backoff_seconds = *s;
  }
  if (auto v = doc["podMaxBackoffSeconds"]) {
    KAS_TRY(s, d.integer<int64_t>(v, "podMaxBackoffSeconds"));
    out.pod_max_backoff_seconds = *s;
  }
  if (out.pod_max_backoff_seconds < out.pod_initial_backoff_seconds)
    return error{"podMaxBackoffSeconds: Invalid value: " + std::to_string(out.pod_max_backoff_seconds) +
                 ": must be greater than or equal to PodInitialBackoffSeconds"};
  std::pair<const char*, bool*> bools[] = {{"delayCacheUntilActive", &out.delay_cache_until_active},
                                           {"enableProfiling", &out.enable_profiling},
                                           {"enableContentionProfiling", &out.enable_contention_profiling}};
  for (auto& [key, target] : bools) {
    if (auto v = doc[key]) {
      KAS_TRY(b, d.boolean(v, key));
      *target = *b;
    }
  }
  return ok_t{};
}

// kube's validateCommonQueueSort: every profile's queueSort plugin set, and the args of the queue
// sort plugin, must equal the first profile's.
status_or_error check_common_queue_sort(const std::vector<kube_profile>& profiles) {
  auto describe = [](const plugin_set& s) {
    std::string out;
    for (auto& e : s.enabled) out += "+" + e.name + "/" + std::to_string(e.weight) + ",";
    for (auto& e : s.disabled) out += "-" + e.name + ",";
    return out;
  };
  const auto& canon = profiles[0].plugins[static_cast<size_t>(ext_point::queue_sort)];
  if (canon.enabled.size() > 1)
    return error{profiles[0].path + ".plugins.queueSort.enabled: Invalid value: " + std::to_string(canon.enabled.size()) +
                 ": only one queue sort plugin can be enabled"};
  std::string name = canon.enabled.empty() ? "" : canon.enabled[0].name;
  auto args_of = [&name](const kube_profile& p) -> std::string {
    for (auto& c : p.plugin_config)
      if (!name.empty() && c.name == name) return YAML::Dump(c.args);
    return "";
  };
  for (size_t i = 1; i < profiles.size(); ++i) {
    const auto& cur = profiles[i].plugins[static_cast<size_t>(ext_point::queue_sort)];
    if (describe(cur) != describe(canon))
      return error{profiles[i].path + ".plugins.queueSort: Invalid value: must be the same for all profiles"};
    if (args_of(profiles[i]) != args_of(profiles[0]))
      return error{profiles[i].path + ".pluginConfig.args: Invalid value: queueSort must be the same for all profiles"};
  }
  return ok_t{};
}

#undef KAS_TRY

}  // namespace

bool plugin_set::disables(std::string_view name) const {
  for (auto& d : disabled)
    if (d.name == name) return true;
  return false;
}

result<kube_scheduler_configuration> decode_kube_scheduler_config(const YAML::Node& doc, const std::string& where) {
  decoder d;
  kube_scheduler_configuration out;
  auto fail = [&where](const error& e) { return error{where + ": " + e.message}; };
  if (auto st = d.known(doc, "", {"apiVersion", "kind", "parallelism", "percentageOfNodesToScore",
                                  "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "leaderElection",
                                  "clientConnection", "extenders", "delayCacheUntilActive", "enableProfiling",
                                  "enableContentionProfiling"});
      !st)
    return fail(st.err());
  if (auto v = doc["apiVersion"]; !v || !v.IsScalar() || v.Scalar() != "kubescheduler.config.k8s.io/v1")
    return error{where + ": apiVersion: unsupported " + quoted(v && v.IsScalar() ? v.Scalar() : "") +
                 " (want kubescheduler.config.k8s.io/v1)"};
  if (auto st = decode_scalars(d, doc, out); !st) return fail(st.err());
  if (auto v = doc["leaderElection"]; v && !v.IsNull())
    if (auto st = decode_leader_election(d, v, out.leader_election); !st) return fail(st.err());
  if (auto v = doc["clientConnection"]; v && !v.IsNull())
    if (auto st = decode_client_connection(d, v, out.client_connection); !st) return fail(st.err());
  if (auto v = doc["extenders"])
    if (auto st = decode_extenders(d, v, out); !st) return fail(st.err());

  auto profiles = doc["profiles"];
  if (profiles && !profiles.IsNull()) {
    if (!profiles.IsSequence()) return error{where + ": profiles: expected a list"};
    for (size_t i = 0; i < profiles.size(); ++i) {
      auto p = decode_profile(d, profiles[i], "profiles[" + std::to_string(i) + "]");
      if (!p) return fail(p.err());
      out.profiles.push_back(std::move(*p));
    }
  }
  // v1 defaulting: no profile means one empty profile, and a single profile without a name is
  // the default scheduler; with several, every profile must be named.
  if (out.profiles.empty()) out.profiles.push_back(kube_profile{"", "profiles[0]", std::nullopt, {}, {}});
  if (out.profiles.size() == 1 && out.profiles[0].scheduler_name.empty() && !(profiles && profiles.IsSequence() &&
                                                                               profiles[0]["schedulerName"]))
    out.profiles[0].scheduler_name = "default-scheduler";
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < out.profiles.size(); ++i) {
    const auto& p = out.profiles[i];
    if (p.scheduler_name.empty()) return error{where + ": " + p.path + ".schedulerName: Required value"};
    auto [it, fresh] = names.emplace(p.scheduler_name, i);
    if (!fresh)
      return error{where + ": " + p.path + ".schedulerName: Duplicate value: " + quoted(p.scheduler_name) +
                   " (also profiles[" + std::to_string(it->second) + "].schedulerName)"};
  }
  if (auto st = check_common_queue_sort(out.profiles); !st) return fail(st.err());
  return out;
}


status_or_error resolve_leader_election(leader_election_config& c) {
  const std::string path = "leaderElection";
  std::pair<const char*, std::pair<const std::string*, std::chrono::nanoseconds*>> durations[] = {
    {"leaseDuration", {&c.lease_duration, &c.lease_duration_ns}},
    {"renewDeadline", {&c.renew_deadline, &c.renew_deadline_ns}},
    {"retryPeriod", {&c.retry_period, &c.retry_period_ns}}};
  for (auto& [key, field] : durations) {
    auto d = parse_go_duration(*field.first);
    if (!d) return error{path + "." + key + ": Invalid value: " + quoted(*field.first) + ": " + d.err().message};
    *field.second = *d;
  }
  if (!c.leader_elect) return ok_t{};
  auto invalid = [&](const char* key, const std::string& value, const std::string& what) {
    return error{path + "." + key + ": Invalid value: " + quoted(value) + ": " + what};
  };
  if (c.lease_duration_ns.count() <= 0) return invalid("leaseDuration", c.lease_duration, "must be greater than zero");
  if (c.renew_deadline_ns.count() <= 0) return invalid("renewDeadline", c.renew_deadline, "must be greater than zero");
  if (c.retry_period_ns.count() <= 0) return invalid("retryPeriod", c.retry_period, "must be greater than zero");
  if (c.lease_duration_ns <= c.renew_deadline_ns)
    return invalid("leaseDuration", c.renew_deadline, "LeaseDuration must be greater than RenewDeadline");
  // client-go's NewLeaderElector refuses this too (JitterFactor 1.2), at start.
  if (c.renew_deadline_ns.count() <= 1.2 * static_cast<double>(c.retry_period_ns.count()))
    return invalid("renewDeadline", c.renew_deadline, "renewDeadline must be greater than retryPeriod*JitterFactor (1.2)");
  if (c.resource_lock.empty()) return invalid("resourceLock", c.resource_lock, "resourceLock is required");
  if (c.resource_lock != "leases")
    return invalid("resourceLock", c.resource_lock, "resourceLock value must be \"leases\"");
  if (c.resource_namespace.empty()) return invalid("resourceNamespace", c.resource_namespace, "resourceNamespace is required");
  if (c.resource_name.empty()) return invalid("resourceName", c.resource_name, "resourceName is required");
  return ok_t{};
}

}  // namespace kas

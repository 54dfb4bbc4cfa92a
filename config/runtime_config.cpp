#include "config/runtime_config.hpp"

#include <fstream>
#include <set>

#include "config/yaml_guard.hpp"

namespace kas {

namespace {

result<uint32_t> positive_int(const YAML::Node& n, const std::string& path, uint32_t max) {
  if (!n.IsScalar()) return error{path + ": expected an integer"};
  try {
    long long v = n.as<long long>();
    if (v < 1 || v > static_cast<long long>(max))
      return error{path + ": must be between 1 and " + std::to_string(max) + ", got " + std::to_string(v)};
    return static_cast<uint32_t>(v);
  } catch (const YAML::Exception&) {
    return error{path + ": expected an integer, got \"" + n.Scalar() + "\""};
  }
}

// A YAML boolean (true/false, yes/no, on/off as yaml-cpp reads them); absent leaves `out` alone.
status_or_error bool_field(const YAML::Node& doc, const char* name, const std::string& where, bool& out) {
  auto n = doc[name];
  if (!n) return ok_t{};
  bool b = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b))
    return error{where + ": " + name + ": expected true or false, got " +
                 (n.IsScalar() ? "\"" + n.Scalar() + "\"" : "a non-scalar")};
  out = b;
  return ok_t{};
}

status_or_error check_fields(const YAML::Node& doc, const std::string& where, const std::set<std::string>& known) {
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    auto key = it->first.as<std::string>();
    if (!known.count(key)) return error{where + ": " + key + ": unknown field"};
  }
  return ok_t{};
}

}  // namespace

status_or_error decode_runtime_config(const YAML::Node& doc, const std::string& where, runtime_config& out) {
  static const std::set<std::string> known = {"apiVersion", "kind", "threads", "workers",
                                               "binders", "pipelineDepth", "nodeAgents",
                                               "batching", "recordMetrics"};
  if (auto r = check_fields(doc, where, known); !r) return r;
  struct field {
    const char* name;
    uint32_t* target;
    uint32_t max;
  };
  field fields[] = {{"threads", &out.threads, 256},           {"workers", &out.workers, 1024},
                    {"binders", &out.binders, 1024},          {"pipelineDepth", &out.pipeline_depth, 4096},
                    {"nodeAgents", &out.node_agents, 1024}};
  for (auto& f : fields) {
    if (auto n = doc[f.name]) {
      auto r = positive_int(n, where + ": " + f.name, f.max);
      if (!r) return r.err();
      *f.target = *r;
      if (f.target == &out.pipeline_depth) out.pipeline_depth_set = true;
    }
  }
  if (auto r = bool_field(doc, "batching", where, out.batching); !r) return r;
  return bool_field(doc, "recordMetrics", where, out.record_metrics);
}

static status_or_error apply_kube_config(const YAML::Node& doc, const std::string& where, const plugin_catalog& catalog,
                                  scheduler_config& out) {
  auto kube = decode_kube_scheduler_config(doc, where);
  if (!kube) return kube.err();
  auto profiles = resolve_profiles(*kube, catalog, where);
  if (!profiles) return profiles.err();
  out.profiles = std::move(*profiles);
  out.runtime.pod_initial_backoff = std::chrono::seconds(kube->pod_initial_backoff_seconds);
  out.runtime.pod_max_backoff = std::chrono::seconds(kube->pod_max_backoff_seconds);
  for (auto& w : kube->warnings) out.warnings.push_back(where + ": " + w);
  out.kube = std::move(*kube);
  return ok_t{};
}

result<scheduler_config> load_scheduler_config(const std::string& path, const plugin_catalog& catalog) {
  scheduler_config out;
  out.profiles.push_back(default_profile());
  out.kube.profiles.push_back(kube_profile{"default-scheduler", "profiles[0]", std::nullopt, {}, {}});
  if (path.empty()) return out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return error{path + ": cannot open config file"};
  // Each document is one object, so the guard's default limits (3 MiB a document) apply as they are.
  yaml_limits limits;
  std::string text;
  if (auto r = read_bounded(in, path, limits.max_file_bytes, text); !r) return r.err();
  auto docs = load_yaml(path, text, yaml_input::stream, limits);
  if (!docs) return docs.err();
  int index = 0;
  bool seen_kube = false;
  for (auto& d : *docs) {
    const YAML::Node& doc = d.root;
    ++index;
    std::string where = path + ": document " + std::to_string(index);
    if (doc.IsNull()) continue;
    if (!doc.IsMap()) return error{where + ": expected a mapping"};
    try {
      auto kind = doc["kind"] && doc["kind"].IsScalar() ? doc["kind"].Scalar() : std::string{};
      if (kind == "KubeSchedulerConfiguration") {
        if (seen_kube) return error{where + ": kind: only one KubeSchedulerConfiguration document is allowed"};
        seen_kube = true;
        if (auto r = apply_kube_config(doc, where, catalog, out); !r) return r.err();
      } else if (kind == "ActorRuntimeConfiguration") {
        if (auto r = decode_runtime_config(doc, where, out.runtime); !r) return r.err();
      } else if (kind.empty()) {
        return error{where + ": kind: Required value"};
      } else {
        return error{where + ": kind: unsupported \"" + kind +
                     "\" (want KubeSchedulerConfiguration or ActorRuntimeConfiguration)"};
      }
    } catch (const YAML::Exception& e) {
      return error{where + ": line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
    }
  }
  return out;
}

}  // namespace kas

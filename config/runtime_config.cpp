#include "config/runtime_config.hpp"

#include <fstream>
#include <set>
#include <sstream>

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

status_or_error check_fields(const YAML::Node& doc, const std::string& where, const std::set<std::string>& known) {
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    auto key = it->first.as<std::string>();
    if (!known.count(key)) return error{where + ": " + key + ": unknown field"};
  }
  return ok_t{};
}

status_or_error decode_kube_scheduler_config(const YAML::Node& doc, const std::string& where, scheduler_config& out) {
  static const std::set<std::string> known = {"apiVersion", "kind", "parallelism", "percentageOfNodesToScore",
                                               "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles",
                                               "leaderElection", "clientConnection", "extenders",
                                               "delayCacheUntilActive", "enableProfiling", "enableContentionProfiling"};
  if (auto r = check_fields(doc, where, known); !r) return r;
  if (auto v = doc["apiVersion"]; v && v.as<std::string>() != "kubescheduler.config.k8s.io/v1")
    return error{where + ": apiVersion: unsupported \"" + v.as<std::string>() +
                 "\" (want kubescheduler.config.k8s.io/v1)"};
  std::optional<int32_t> global_pct;
  if (auto v = doc["percentageOfNodesToScore"]) {
    auto p = v.as<int>();
    if (p < 0 || p > 100) return error{where + ": percentageOfNodesToScore: must be in [0, 100], got " + std::to_string(p)};
    global_pct = p;
  }
  if (auto v = doc["podInitialBackoffSeconds"]) {
    auto r = positive_int(v, where + ": podInitialBackoffSeconds", 3600);
    if (!r) return r.err();
    out.runtime.pod_initial_backoff = std::chrono::seconds(*r);
  }
  if (auto v = doc["podMaxBackoffSeconds"]) {
    auto r = positive_int(v, where + ": podMaxBackoffSeconds", 3600);
    if (!r) return r.err();
    out.runtime.pod_max_backoff = std::chrono::seconds(*r);
  }
  if (out.runtime.pod_max_backoff < out.runtime.pod_initial_backoff)
    return error{where + ": podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds"};
  out.profiles.clear();
  if (auto profiles = doc["profiles"]) {
    if (!profiles.IsSequence()) return error{where + ": profiles: expected a list"};
    std::set<std::string> names;
    for (size_t i = 0; i < profiles.size(); ++i) {
      auto p = profiles[i];
      std::string path = where + ": profiles[" + std::to_string(i) + "]";
      for (auto it = p.begin(); it != p.end(); ++it) {
        auto key = it->first.as<std::string>();
        if (key == "plugins" || key == "pluginConfig")
          return error{path + "." + key + ": plugin configuration is not supported by this build yet (issue #3)"};
        if (key != "schedulerName" && key != "percentageOfNodesToScore") return error{path + "." + key + ": unknown field"};
      }
      profile_config prof = default_profile();
      if (auto n = p["schedulerName"]) prof.scheduler_name = n.as<std::string>();
      if (prof.scheduler_name.empty()) return error{path + ".schedulerName: Required value"};
      if (!names.insert(prof.scheduler_name).second)
        return error{path + ".schedulerName: Duplicate value: \"" + prof.scheduler_name + "\""};
      prof.percentage_of_nodes_to_score = global_pct;
      if (auto n = p["percentageOfNodesToScore"]) prof.percentage_of_nodes_to_score = n.as<int>();
      out.profiles.push_back(std::move(prof));
    }
  }
  if (out.profiles.empty()) {
    out.profiles.push_back(default_profile());
    out.profiles.back().percentage_of_nodes_to_score = global_pct;
  }
  return ok_t{};
}

}  // namespace

status_or_error decode_runtime_config(const YAML::Node& doc, const std::string& where, runtime_config& out) {
  static const std::set<std::string> known = {"apiVersion", "kind", "threads", "workers",
                                               "binders", "pipelineDepth", "nodeAgents"};
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
  return ok_t{};
}

result<scheduler_config> load_scheduler_config(const std::string& path) {
  scheduler_config out;
  out.profiles.push_back(default_profile());
  if (path.empty()) return out;
  std::ifstream in(path);
  if (!in) return error{path + ": cannot open config file"};
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(ss.str());
  } catch (const YAML::Exception& e) {
    return error{path + ": line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) +
                 ": invalid YAML: " + e.msg};
  }
  int index = 0;
  for (auto& doc : docs) {
    ++index;
    std::string where = path + ": document " + std::to_string(index);
    if (doc.IsNull()) continue;
    if (!doc.IsMap()) return error{where + ": expected a mapping"};
    try {
      auto kind = doc["kind"] ? doc["kind"].as<std::string>() : std::string{};
      if (kind == "KubeSchedulerConfiguration") {
        if (auto r = decode_kube_scheduler_config(doc, where, out); !r) return r.err();
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

// Pod create semantics (pod_strategy.hpp).
#include "tests/apiserver/pod_strategy.hpp"

#include <map>
#include <set>

#include "messages/quantity.hpp"
#include "tests/apiserver/json_tree.hpp"

namespace kas::testapi {

namespace {

using amounts = std::map<std::string, int64_t>;  // cpu/memory -> milli-units

// Adds the nonzero cpu/memory entries to `sum`; returns the names added.
std::set<std::string> add_resources(const std::vector<std::pair<std::string, std::string>>& list, amounts& sum) {
  std::set<std::string> found;
  for (const auto& [name, text] : list) {
    if (name != "cpu" && name != "memory") continue;
    auto q = parse_quantity(text);
    if (!q || q->is_zero()) continue;
    sum[name] += q->milli_value();
    found.insert(name);
  }
  return found;
}

std::vector<std::pair<std::string, std::string>> scalars_of(const YAML::Node& map) {
  std::vector<std::pair<std::string, std::string>> out;
  if (map.IsMap())
    for (const auto& kv : map)
      if (kv.second.IsScalar()) out.emplace_back(kv.first.Scalar(), kv.second.Scalar());
  return out;
}

}  // namespace

std::string qos_class_of(const std::vector<container_resources>& containers) {
  amounts requests, limits;
  bool guaranteed = true;
  for (const auto& c : containers) {
    // Defaulting: a limit without a request makes the request equal to it.
    auto effective = c.requests;
    for (const auto& [name, text] : c.limits) {
      bool has = false;
      for (const auto& r : effective) has = has || r.first == name;
      if (!has) effective.emplace_back(name, text);
    }
    add_resources(effective, requests);
    auto with_limits = add_resources(c.limits, limits);
    if (!with_limits.count("cpu") || !with_limits.count("memory")) guaranteed = false;
  }
  if (requests.empty() && limits.empty()) return "BestEffort";
  if (guaranteed)
    for (const auto& [name, amount] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || it->second != amount) guaranteed = false;
    }
  return guaranteed && requests.size() == limits.size() ? "Guaranteed" : "Burstable";
}

std::string pod_qos_class(const YAML::Node& pod) {
  std::vector<container_resources> all;
  YAML::Node spec = at(pod, "spec");
  for (const char* list : {"containers", "initContainers"}) {
    YAML::Node containers = at(spec, list);
    if (!containers.IsSequence()) continue;
    for (const auto& c : containers) {
      YAML::Node res = at(c, "resources");
      all.push_back({scalars_of(at(res, "requests")), scalars_of(at(res, "limits"))});
    }
  }
  return qos_class_of(all);
}

void prepare_pod_for_create(YAML::Node& pod) {
  if (!at(pod, "spec").IsMap()) pod["spec"] = YAML::Node(YAML::NodeType::Map);
  YAML::Node spec = pod["spec"];
  YAML::Node scheduler = at(spec, "schedulerName");
  if (!scheduler.IsScalar() || scheduler.Scalar().empty()) spec["schedulerName"] = str_node("default-scheduler");
  YAML::Node status(YAML::NodeType::Map);
  status["phase"] = str_node("Pending");
  status["qosClass"] = str_node(pod_qos_class(pod));
  pod["status"] = status;
}

}  // namespace kas::testapi

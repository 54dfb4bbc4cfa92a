// Pod create semantics (pod_strategy.hpp).
#include "tests/apiserver/pod_strategy.hpp"

#include <map>
#include <set>

#include "messages/quantity.hpp"
#include "tests/apiserver/json_tree.hpp"

namespace kas::testapi {

namespace {

using amounts = std::map<std::string, int64_t>;  // cpu/memory -> milli-units

// Adds the container's nonzero cpu/memory entries of `list` to `sum`; returns the names added.
std::set<std::string> add_resources(const YAML::Node& list, amounts& sum) {
  std::set<std::string> found;
  if (!list.IsMap()) return found;
  for (const auto& kv : list) {
    const std::string name = kv.first.Scalar();
    if ((name != "cpu" && name != "memory") || !kv.second.IsScalar()) continue;
    auto q = parse_quantity(kv.second.Scalar());
    if (!q || q->is_zero()) continue;
    sum[name] += q->milli_value();
    found.insert(name);
  }
  return found;
}

}  // namespace

std::string pod_qos_class(const YAML::Node& pod) {
  amounts requests, limits;
  bool guaranteed = true;
  YAML::Node spec = at(pod, "spec");
  for (const char* list : {"containers", "initContainers"}) {
    YAML::Node containers = at(spec, list);
    if (!containers.IsSequence()) continue;
    for (const auto& c : containers) {
      YAML::Node res = at(c, "resources");
      YAML::Node req = at(res, "requests"), lim = at(res, "limits");
      // Defaulting: a limit without a request makes the request equal to it.
      YAML::Node effective = req.IsMap() ? clone(req) : YAML::Node(YAML::NodeType::Map);
      if (lim.IsMap())
        for (const auto& kv : lim)
          if (!at(effective, kv.first.Scalar()).IsDefined()) effective[kv.first.Scalar()] = kv.second;
      add_resources(effective, requests);
      auto with_limits = add_resources(lim, limits);
      if (!with_limits.count("cpu") || !with_limits.count("memory")) guaranteed = false;
    }
  }
  if (requests.empty() && limits.empty()) return "BestEffort";
  if (guaranteed)
    for (const auto& [name, amount] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || it->second != amount) guaranteed = false;
    }
  return guaranteed && requests.size() == limits.size() ? "Guaranteed" : "Burstable";
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

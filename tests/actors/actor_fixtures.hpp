#pragma once
// Test fixtures for the actor tests: pods and nodes described by small structs, rendered to YAML and
// compiled by the same codec and compilers the scheduler uses.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "messages/codec.hpp"

namespace kas::test {

using string_pairs = std::vector<std::pair<std::string, std::string>>;

struct taint_spec {
  std::string key, value, effect;  // effect: NoSchedule | PreferNoSchedule | NoExecute
};

struct toleration_spec {
  std::string key, op = "Equal", value, effect;  // empty effect = every effect
};

struct pod_spec {
  std::string name;
  std::string cpu, mem;  // container requests; empty = none
  int32_t priority = 0;
  std::string scheduler_name;  // empty = default-scheduler
  std::string node;            // spec.nodeName (already bound)
  std::vector<std::string> gates;
  string_pairs node_selector;
  std::vector<toleration_spec> tolerations;
  std::vector<int32_t> host_ports;
  // Required node affinity: one term, `key In values` (skipped when the key is empty).
  std::string affinity_key;
  std::vector<std::string> affinity_values;
  string_pairs labels;
  // A DoNotSchedule topology spread constraint over pods with the same labels (when the key is set).
  std::string spread_topology_key;
  int32_t max_skew = 1;
  // Required pod anti-affinity against pods with the same labels (when the key is set).
  std::string anti_affinity_topology_key;
};

struct node_spec {
  std::string name;
  std::string cpu = "4", mem = "8Gi", pods = "110";
  string_pairs labels;
  std::vector<taint_spec> taints;
};

inline pod_spec pod(std::string name, std::string cpu, std::string mem) {
  pod_spec s;
  s.name = std::move(name);
  s.cpu = std::move(cpu);
  s.mem = std::move(mem);
  return s;
}

inline node_spec node(std::string name, std::string cpu = "4", std::string mem = "8Gi", std::string pods = "110") {
  node_spec s;
  s.name = std::move(name);
  s.cpu = std::move(cpu);
  s.mem = std::move(mem);
  s.pods = std::move(pods);
  return s;
}

inline std::string quoted(const std::string& s) { return "\"" + s + "\""; }

inline pod_info_ptr make_pod(const pod_spec& s) {
  std::string y = "metadata:\n  name: " + s.name + "\n  namespace: default\n  uid: " + s.name + "\n";
  std::string match;  // matchLabels: {k: v, ...} of the pod's own labels
  if (!s.labels.empty()) {
    y += "  labels:\n";
    for (auto& [k, v] : s.labels) {
      y += "    " + k + ": " + quoted(v) + "\n";
      match += (match.empty() ? "" : ", ") + k + ": " + quoted(v);
    }
  }
  y += "spec:\n";
  if (!s.spread_topology_key.empty())
    y += "  topologySpreadConstraints:\n  - maxSkew: " + std::to_string(s.max_skew) + "\n    topologyKey: " +
         s.spread_topology_key + "\n    whenUnsatisfiable: DoNotSchedule\n    labelSelector: {matchLabels: {" + match +
         "}}\n";
  if (s.priority != 0) y += "  priority: " + std::to_string(s.priority) + "\n";
  if (!s.scheduler_name.empty()) y += "  schedulerName: " + s.scheduler_name + "\n";
  if (!s.node.empty()) y += "  nodeName: " + s.node + "\n";
  if (!s.gates.empty()) {
    y += "  schedulingGates:\n";
    for (auto& g : s.gates) y += "  - name: " + g + "\n";
  }
  if (!s.node_selector.empty()) {
    y += "  nodeSelector:\n";
    for (auto& [k, v] : s.node_selector) y += "    " + k + ": " + quoted(v) + "\n";
  }
  if (!s.tolerations.empty()) {
    y += "  tolerations:\n";
    for (auto& t : s.tolerations) {
      y += "  - key: " + quoted(t.key) + "\n    operator: " + t.op + "\n";
      if (t.op != "Exists") y += "    value: " + quoted(t.value) + "\n";
      if (!t.effect.empty()) y += "    effect: " + t.effect + "\n";
    }
  }
  if (!s.affinity_key.empty() || !s.anti_affinity_topology_key.empty()) y += "  affinity:\n";
  if (!s.anti_affinity_topology_key.empty())
    y += "    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - topologyKey: " +
         s.anti_affinity_topology_key + "\n        labelSelector: {matchLabels: {" + match + "}}\n";
  if (!s.affinity_key.empty()) {
    y += "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
         "        nodeSelectorTerms:\n        - matchExpressions:\n          - key: " +
         s.affinity_key + "\n            operator: In\n            values: [";
    for (size_t i = 0; i < s.affinity_values.size(); ++i) y += (i ? ", " : "") + quoted(s.affinity_values[i]);
    y += "]\n";
  }
  y += "  containers:\n  - name: c0\n    image: busybox\n";
  if (!s.cpu.empty() || !s.mem.empty()) {
    y += "    resources: {requests: {";
    if (!s.cpu.empty()) y += "cpu: " + quoted(s.cpu);
    if (!s.cpu.empty() && !s.mem.empty()) y += ", ";
    if (!s.mem.empty()) y += "memory: " + quoted(s.mem);
    y += "}}\n";
  }
  if (!s.host_ports.empty()) {
    y += "    ports:\n";
    for (auto p : s.host_ports) y += "    - {containerPort: " + std::to_string(p) + ", hostPort: " + std::to_string(p) + "}\n";
  }
  auto pod = std::make_shared<k8s::core::Pod>();
  if (auto st = codec::decode_yaml(y, *pod); !st) throw std::runtime_error("pod fixture: " + st.err().message + "\n" + y);
  auto p = compile_pod(pod);
  if (!p) throw std::runtime_error("pod fixture: " + p.err().message);
  return *p;
}

inline node_info_ptr make_node(const node_spec& s) {
  std::string y = "metadata:\n  name: " + s.name + "\n";
  if (!s.labels.empty()) {
    y += "  labels:\n";
    for (auto& [k, v] : s.labels) y += "    " + k + ": " + quoted(v) + "\n";
  }
  if (!s.taints.empty()) {
    y += "spec:\n  taints:\n";
    for (auto& t : s.taints) y += "  - {key: " + quoted(t.key) + ", value: " + quoted(t.value) + ", effect: " + t.effect + "}\n";
  }
  y += "status:\n  allocatable: {cpu: " + quoted(s.cpu) + ", memory: " + quoted(s.mem) + ", pods: " + quoted(s.pods) + "}\n";
  auto node = std::make_shared<k8s::core::Node>();
  if (auto st = codec::decode_yaml(y, *node); !st) throw std::runtime_error("node fixture: " + st.err().message + "\n" + y);
  auto n = compile_node(node);
  if (!n) throw std::runtime_error("node fixture: " + n.err().message);
  return *n;
}

}  // namespace kas::test

#include "bench/micro/cluster.hpp"

#include <map>
#include <stdexcept>
#include <string>

#include "cache/scheduler_cache.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::bench {
namespace {

constexpr const char* pause_image = "registry.k8s.io/pause:3.10";
constexpr const char* agnhost_image = "registry.k8s.io/e2e-test-images/agnhost:2.52";

std::string zone_of(size_t i) { return "moon-" + std::to_string(i % 3 + 1); }

// node-default.yaml, named and labelled as scheduler_perf's node preparation does.
std::string node_yaml(size_t i) {
  const std::string name = "node-" + std::to_string(i);
  std::string images = "[{names: [" + std::string(pause_image) + "], sizeBytes: 311000}";
  if (i % 2 == 0) images += ", {names: [" + std::string(agnhost_image) + "], sizeBytes: 52000000}";
  images += "]";
  return "metadata:\n  name: " + name + "\n  labels: {kubernetes.io/hostname: " + name +
         ", topology.kubernetes.io/zone: " + zone_of(i) +
         "}\n"
         "status:\n"
         "  capacity: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n"
         "  allocatable: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n"
         "  images: " +
         images + "\n";
}

// pod-default.yaml with the given metadata and extra container / pod spec.
std::string pod_yaml(const std::string& meta, const std::string& container_extra = "",
                     const std::string& spec_extra = "") {
  return "metadata: {" + meta +
         "}\n"
         "spec:\n"
         "  containers:\n"
         "  - name: pause\n"
         "    image: " +
         pause_image +
         "\n"
         "    resources: {requests: {cpu: 100m, memory: 500Mi}, limits: {cpu: 100m, memory: 500Mi}}\n" +
         container_extra + spec_extra;
}

const std::string host_port_8080 = "    ports: [{containerPort: 8080, hostPort: 8080}]\n";

const std::string anti_affinity_spec =
  "  affinity:\n"
  "    podAntiAffinity:\n"
  "      requiredDuringSchedulingIgnoredDuringExecution:\n"
  "      - labelSelector: {matchLabels: {color: green}}\n"
  "        topologyKey: kubernetes.io/hostname\n"
  "        namespaces: [sched-1, sched-0]\n";

// A copy of a compiled template under a new name, bound to `node`.
pod_info_ptr placed(const pod_info_ptr& tmpl, const std::string& name, const std::string& node) {
  auto p = std::make_shared<pod_info>(*tmpl);
  p->name = name;
  p->uid = p->ns + "-" + name;
  return with_node_name(*p, node);
}

cluster build_cluster() {
  // Existing pods are compiled once per shape and copied: compiling 10,000 YAML documents would
  // only slow start-up, and every copy is what compile_pod would have produced.
  const pod_info_ptr blue = test::pod_from_yaml(pod_yaml("name: blue, namespace: default, labels: {color: blue}"));
  const pod_info_ptr plain = test::pod_from_yaml(pod_yaml("name: plain, namespace: default, labels: {app: web}"));
  const pod_info_ptr ported =
    test::pod_from_yaml(pod_yaml("name: ported, namespace: default, labels: {app: proxy}", host_port_8080));
  const pod_info_ptr green = test::pod_from_yaml(pod_yaml("name: green, namespace: sched-0, labels: {color: green}"));
  const pod_info_ptr guard = test::pod_from_yaml(
    pod_yaml("name: guard, namespace: sched-0, labels: {color: green, name: test}", "", anti_affinity_spec));

  scheduler_cache cache;
  for (size_t i = 0; i < node_count; ++i) cache.add_or_update_node(test::node_from_yaml(node_yaml(i)));
  for (size_t i = 0; i < node_count; ++i) {
    const std::string node = "node-" + std::to_string(i);
    for (size_t j = 0; j < pods_per_node; ++j) {
      pod_info_ptr tmpl = j == 0 ? blue : plain;
      if (j == 1 && i % 4 == 0) tmpl = ported;
      if (j == 1 && i % 10 == 5) tmpl = guard;
      if (j == 1 && i % 10 == 7) tmpl = green;
      auto st = cache.add_pod(placed(tmpl, "pod-" + std::to_string(i) + "-" + std::to_string(j), node));
      if (!st) throw std::runtime_error("bench cluster: " + st.err().message);
    }
  }
  cluster c;
  c.snap = cache.current();
  c.nodes.reserve(c.snap->size());
  for (size_t i = 0; i < c.snap->size(); ++i) c.nodes.push_back(&c.snap->node(i));
  return c;
}

}  // namespace

const cluster& scheduling_basic_cluster() {
  static const cluster c = build_cluster();
  return c;
}

pod_info_ptr incoming_pod(std::string_view kind) {
  static const std::map<std::string, std::string, std::less<>> pods = {
    {"basic", pod_yaml("name: basic, namespace: default")},
    {"node-affinity",
     pod_yaml("name: node-affinity, namespace: default", "",
              "  affinity:\n"
              "    nodeAffinity:\n"
              "      requiredDuringSchedulingIgnoredDuringExecution:\n"
              "        nodeSelectorTerms:\n"
              "        - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [moon-1, "
              "moon-2]}]\n")},
    {"preferred-node-affinity",
     pod_yaml("name: preferred-node-affinity, namespace: default", "",
              "  affinity:\n"
              "    nodeAffinity:\n"
              "      preferredDuringSchedulingIgnoredDuringExecution:\n"
              "      - weight: 1\n"
              "        preference:\n"
              "          matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [moon-1]}]\n")},
    {"green", pod_yaml("name: green, namespace: sched-1, labels: {color: green}")},
    {"host-port", pod_yaml("name: host-port, namespace: default", host_port_8080)},
    {"spread", pod_yaml("name: spread, namespace: default, labels: {color: blue}", "",
                        "  topologySpreadConstraints:\n"
                        "  - maxSkew: 1\n"
                        "    topologyKey: topology.kubernetes.io/zone\n"
                        "    whenUnsatisfiable: DoNotSchedule\n"
                        "    labelSelector: {matchLabels: {color: blue}}\n")},
    {"preferred-spread", pod_yaml("name: preferred-spread, namespace: default, labels: {color: blue}", "",
                                  "  topologySpreadConstraints:\n"
                                  "  - maxSkew: 1\n"
                                  "    topologyKey: topology.kubernetes.io/zone\n"
                                  "    whenUnsatisfiable: ScheduleAnyway\n"
                                  "    labelSelector: {matchLabels: {color: blue}}\n")},
    {"anti-affinity",
     pod_yaml("name: anti-affinity, namespace: sched-1, labels: {color: green, name: test}", "", anti_affinity_spec)},
    {"preferred-anti-affinity",
     pod_yaml("name: preferred-anti-affinity, namespace: sched-1, labels: {color: green, name: test}", "",
              "  affinity:\n"
              "    podAntiAffinity:\n"
              "      preferredDuringSchedulingIgnoredDuringExecution:\n"
              "      - weight: 1\n"
              "        podAffinityTerm:\n"
              "          labelSelector: {matchLabels: {color: green}}\n"
              "          topologyKey: kubernetes.io/hostname\n"
              "          namespaces: [sched-1, sched-0]\n")},
  };
  auto it = pods.find(kind);
  if (it == pods.end()) throw std::invalid_argument("unknown incoming pod kind: " + std::string(kind));
  return test::pod_from_yaml(it->second);
}

}  // namespace kas::bench

#pragma once
// What kube-apiserver's pod strategy does to a Pod on create, as far as this fixture keeps it: the
// status a client sent is dropped and replaced by {phase: Pending, qosClass: <computed>} (so
// conditions, nodeName-independent status fields and the like start empty), and spec.schedulerName
// defaults to default-scheduler. Other kinds (Nodes in particular) keep the status they are created
// with, as upstream.
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace kas::testapi {

// One container's resources.requests and resources.limits, as (name, quantity text) pairs.
struct container_resources {
  std::vector<std::pair<std::string, std::string>> requests, limits;
};
// The QoS class of a pod with these containers (containers and initContainers).
std::string qos_class_of(const std::vector<container_resources>& containers);

// The pod's QoS class from its containers' cpu/memory requests and limits (a request left unset
// defaults to the limit, as API defaulting does): Guaranteed, Burstable or BestEffort.
std::string pod_qos_class(const YAML::Node& pod);
// Resets status and applies the spec defaults of a pod being created (the tree is changed).
void prepare_pod_for_create(YAML::Node& pod);

}  // namespace kas::testapi

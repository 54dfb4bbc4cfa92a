#pragma once
// Internals of the manifest loader (cluster_manifests.cpp): the workload kinds decoded without
// protos, and the cluster_objects compiled from a loaded cluster.
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cache/cluster_objects.hpp"
#include "cache/pod_info.hpp"
#include "messages/result.hpp"

namespace kas {

struct cluster_manifests;

// The selector of a Service / ReplicationController (spec.selector map; an RC without one takes
// its template's labels, as apiserver defaulting does) or a ReplicaSet / StatefulSet (apps/v1
// spec.selector LabelSelector, required and non-empty). Errors name the field path.
result<label_selector> decode_workload_selector(const YAML::Node& object, const std::string& kind);

// Namespace labels, workload selectors and PodDisruptionBudgets. `pods` are the compiled,
// non-terminal pods (bound and pending); PDBs without a status get the disruptionsAllowed the
// disruption controller would compute from them.
result<cluster_objects_ptr> compile_objects(const cluster_manifests& m, const std::vector<pod_info_ptr>& pods);

}  // namespace kas

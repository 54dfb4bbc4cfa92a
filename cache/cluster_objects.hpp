#pragma once
// cluster_objects: the API objects besides Pods and Nodes that plugins read — namespace labels
// (InterPodAffinity's namespaceSelector), workload selectors (PodTopologySpread's system default
// constraints: Services, ReplicationControllers, ReplicaSets, StatefulSets) and
// PodDisruptionBudgets (DefaultPreemption), and the storage objects (the volume plugins). Immutable; the cache publishes a new one with the
// snapshot when any of them changes.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/labels.hpp"
#include "cache/pod_group.hpp"
#include "cache/selectors.hpp"
#include "cache/volume_objects.hpp"

namespace kas {

struct workload_selector {
  std::string kind;  // Service | ReplicationController | ReplicaSet | StatefulSet
  std::string ns;
  std::string name;
  label_selector selector;
};

struct disruption_budget {
  std::string ns;
  std::string name;
  label_selector selector;
  // status.disruptionsAllowed; when the manifest has no status, what the disruption controller
  // would compute from minAvailable / maxUnavailable and the healthy matching pods.
  int32_t disruptions_allowed = 0;
  // status.disruptedPods: pods already counted as disrupted (kube skips them).
  std::vector<std::string> disrupted_pods;
};

struct cluster_objects {
  std::unordered_map<std::string, label_map> namespace_labels;
  std::vector<workload_selector> workloads;
  std::vector<disruption_budget> pdbs;
  // PersistentVolumes, claims, StorageClasses and the CSI objects (the volume plugins).
  volume_objects volumes;
  // PodGroups of both API forms, by pod_group_key.
  std::unordered_map<std::string, pod_group_ptr> pod_groups;

  const label_map* namespace_labels_of(const std::string& ns) const {
    auto it = namespace_labels.find(ns);
    return it == namespace_labels.end() ? nullptr : &it->second;
  }
  // The group `key` (pod_info::group_key), or null when no such PodGroup exists (yet).
  const pod_group* pod_group_of(const std::string& key) const {
    auto it = pod_groups.find(key);
    return it == pod_groups.end() ? nullptr : it->second.get();
  }
};

using cluster_objects_ptr = std::shared_ptr<const cluster_objects>;

}  // namespace kas

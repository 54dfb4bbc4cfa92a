#pragma once
// Cluster manifests for `simulate`: Kubernetes objects read from files (multi-document YAML, JSON,
// `kind: List` — exactly what `kubectl get -o yaml|json` prints), validated and compiled.
// Every error names the file, the document and the field path; nothing is silently dropped.
#include <memory>
#include <string>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/policy.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/k8s/storage.pb.h"
#include "messages/result.hpp"

namespace kas {

// Where an object came from: "cluster.yaml: document 3 (Pod default/web-1)".
struct manifest_origin {
  std::string file;
  int document = 0;  // 1-based document index in the file
  int item = -1;     // index inside a `kind: List`, or -1
  std::string kind;
  std::string ns;
  std::string name;
  std::string describe() const;
};

struct cluster_manifests {
  std::vector<std::pair<std::shared_ptr<const k8s::core::Node>, manifest_origin>> nodes;
  std::vector<std::pair<std::shared_ptr<const k8s::core::Pod>, manifest_origin>> pods;
  std::vector<std::pair<std::shared_ptr<const k8s::scheduling::PriorityClass>, manifest_origin>> priority_classes;
  std::vector<std::pair<std::shared_ptr<const k8s::policy::PodDisruptionBudget>, manifest_origin>> pdbs;
  std::vector<std::pair<std::shared_ptr<const k8s::core::Namespace>, manifest_origin>> namespaces;
  // PodGroups (gang scheduling), by API: scheduling.k8s.io/v1beta1 and the Coscheduling CRD
  // (scheduling.x-k8s.io/v1alpha1). Namespaced; the namespace is defaulted at load, as for Pods.
  std::vector<std::pair<std::shared_ptr<const k8s::scheduling::PodGroup>, manifest_origin>> pod_groups;
  std::vector<std::pair<std::shared_ptr<const k8s::coscheduling::PodGroup>, manifest_origin>> coscheduling_pod_groups;
  // Service, ReplicationController, ReplicaSet, StatefulSet: the scheduler reads only their
  // selectors, so they are decoded straight from the manifest. A Service without a selector is
  // kept (for the duplicate check) with selector.nothing set.
  std::vector<std::pair<workload_selector, manifest_origin>> workloads;
  // The storage objects the volume plugins read (compiled into cluster_objects::volumes).
  // PersistentVolumeClaims and CSIStorageCapacities are namespaced: their namespace is defaulted
  // to "default" at load, as for Pods.
  std::vector<std::pair<std::shared_ptr<const k8s::core::PersistentVolume>, manifest_origin>> pvs;
  std::vector<std::pair<std::shared_ptr<const k8s::core::PersistentVolumeClaim>, manifest_origin>> pvcs;
  std::vector<std::pair<std::shared_ptr<const k8s::storage::StorageClass>, manifest_origin>> storage_classes;
  std::vector<std::pair<std::shared_ptr<const k8s::storage::CSINode>, manifest_origin>> csi_nodes;
  std::vector<std::pair<std::shared_ptr<const k8s::storage::CSIDriver>, manifest_origin>> csi_drivers;
  std::vector<std::pair<std::shared_ptr<const k8s::storage::CSIStorageCapacity>, manifest_origin>>
    csi_storage_capacities;
  std::vector<std::pair<std::shared_ptr<const k8s::storage::VolumeAttachment>, manifest_origin>> volume_attachments;
  std::vector<std::string> warnings;  // kinds the scheduler does not use (Deployment, ...), skipped
};

// Reads and decodes every file, in order. Errors: missing file, invalid YAML/JSON (with line), a
// document without `kind` or `apiVersion`, a field of the wrong type; and the limits of
// yaml_guard.hpp: a file over 64 MiB, an object (a document, or a List item) over 3 MiB, nesting
// deeper than 100 levels, too many nodes through aliases.
//
// Each entry is a file, "-" for standard input (named <stdin> in messages), or a directory: its
// .yaml, .yml and .json files in name order, not recursively (as `kubectl apply -f DIR`).
// Unknown fields (a typo like `nodeselector`, checked against the Kubernetes schema,
// messages/schema/) are warnings naming the path, or errors when `strict`, as the apiserver's strict
// field validation makes them.
struct manifest_options {
  bool strict = false;
};
result<cluster_manifests> load_manifests(const std::vector<std::string>& files, const manifest_options& opts = {});

struct cluster_input {
  std::vector<std::shared_ptr<node_info>> nodes;
  std::vector<pod_info_ptr> bound_pods;    // spec.nodeName set: already running there
  std::vector<pod_info_ptr> pending_pods;  // in manifest order
  // Namespace labels, Service/RC/ReplicaSet/StatefulSet selectors, PodDisruptionBudgets, PodGroups
  // and the storage objects (volumes).
  cluster_objects_ptr objects = std::make_shared<const cluster_objects>();
  std::vector<std::string> warnings;
};

// Compiles and cross-checks: bad quantities, negative requests, duplicate node names, duplicate
// pods (and duplicates of any other kind: two PersistentVolumes of one name, two claims of one
// namespace/name, ...), a bound pod whose node does not exist, storage objects the apiserver would
// refuse (an unsupported access mode or volumeMode, a bad storage quantity, ...).
result<cluster_input> compile_cluster(const cluster_manifests& m);

}  // namespace kas

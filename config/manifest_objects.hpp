#pragma once
// Internals of the manifest loader (cluster_manifests.cpp): reading a manifest file's documents,
// the workload kinds' selectors, the storage kinds' metadata checks, and the cluster_objects
// compiled from a loaded cluster.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cache/cluster_objects.hpp"
#include "cache/pod_info.hpp"
#include "messages/k8s/apps.pb.h"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/policy.pb.h"
#include "messages/k8s/storage.pb.h"
#include "config/yaml_guard.hpp"
#include "messages/result.hpp"

namespace kas {

struct cluster_manifests;

// The documents of one manifest file, read as load_manifests reads them: at most 64 MiB, through
// load_yaml, errors naming the file and saying "invalid JSON" for a JSON file. Workload templates
// are read this way too.
result<std::vector<yaml_document>> read_manifest_documents(const std::string& file);

// The selector of a Service / ReplicationController (spec.selector map; an RC without one takes
// its template's labels, as apiserver defaulting does; a Service without one selects nothing) or a
// ReplicaSet / StatefulSet (apps/v1 spec.selector LabelSelector, required and non-empty), as the
// manifest loader and the API informers both read them. Errors name the field path.
result<workload_selector> compile_workload(const k8s::core::Service& svc);
result<workload_selector> compile_workload(const k8s::core::ReplicationController& rc);
result<workload_selector> compile_workload(const k8s::apps::ReplicaSet& rs);
result<workload_selector> compile_workload(const k8s::apps::StatefulSet& ss);
// A manifest document of one of those kinds, decoded and compiled; `ns` is its namespace with the
// default applied.
result<workload_selector> decode_workload(const YAML::Node& object, const std::string& kind, const std::string& ns);

// One PodDisruptionBudget: its selector and disruptionsAllowed (status.disruptionsAllowed, or when the
// object has no status, what the disruption controller would compute from `pods`). Errors name the
// field path.
result<disruption_budget> compile_pdb(const k8s::policy::PodDisruptionBudget& pdb, const std::vector<pod_info_ptr>& pods);

// A namespace's labels, with kubernetes.io/metadata.name set to its name as the apiserver sets it
// (both cluster sources build namespace labels through this).
label_map namespace_labels(const k8s::core::Namespace& ns);

// The metadata the apiserver checks on the storage kinds before anything else: the name
// (a DNS subdomain; a CSIDriver's as ValidateCSIDriverName has it), a namespaced kind's namespace
// (a DNS label), the labels. Their spec is checked by the compile_* functions of
// cache/volume_objects.hpp. Errors name the field path.
status_or_error validate_storage_object(const k8s::core::PersistentVolume& pv);
status_or_error validate_storage_object(const k8s::core::PersistentVolumeClaim& pvc);
status_or_error validate_storage_object(const k8s::storage::StorageClass& sc);
status_or_error validate_storage_object(const k8s::storage::CSINode& n);
status_or_error validate_storage_object(const k8s::storage::CSIDriver& d);
status_or_error validate_storage_object(const k8s::storage::CSIStorageCapacity& c);
// A VolumeAttachment's spec is checked here too (compile_volume_attachment takes any): the
// attacher (a CSI driver name) and spec.nodeName are required.
status_or_error validate_storage_object(const k8s::storage::VolumeAttachment& a);

// The value of the PriorityClass of a name, as the Priority admission plugin resolves it; nullopt
// when no such class exists.
using priority_class_lookup = std::function<std::optional<int32_t>(const std::string&)>;

// Namespace labels, workload selectors, PodDisruptionBudgets, PodGroups (both APIs, keyed by
// pod_group_key) and the storage objects (volumes).
// `pods` are the compiled, non-terminal pods (bound and pending); PDBs without a status get the
// disruptionsAllowed the disruption controller would compute from them. Each storage object is
// compiled (cache/volume_objects.hpp) and keyed as the listers key it: PersistentVolumes,
// StorageClasses, CSINodes, CSIDrivers and VolumeAttachments by name, claims and
// CSIStorageCapacities by "ns/name".
// A v1beta1 PodGroup with a priorityClassName and no spec.priority gets the class's value through
// `priority_of` (an unknown class is an error, as admission refuses it); without a lookup the
// priority stays unset.
// Errors name the object's origin and the field path; a second object under one key is an error.
result<cluster_objects_ptr> compile_objects(const cluster_manifests& m, const std::vector<pod_info_ptr>& pods,
                                            const priority_class_lookup& priority_of = {});

}  // namespace kas

// The table of served kinds (resources.hpp). Verbs are the same for every kind, so they live in
// discovery.cpp rather than here.
#include "tests/apiserver/resources.hpp"

#include "messages/k8s/apps.pb.h"
#include "messages/k8s/coordination.pb.h"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/events.pb.h"
#include "messages/k8s/policy.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/k8s/storage.pb.h"

namespace kas::testapi {

namespace {

kind_info make(std::string group, std::string resource, std::string kind, bool namespaced, bool status,
               std::vector<std::string> shorts, const google::protobuf::Message* proto) {
  kind_info k;
  k.group = std::move(group);
  k.version = "v1";
  k.resource = std::move(resource);
  k.kind = std::move(kind);
  k.namespaced = namespaced;
  k.has_status = status;
  k.short_names = std::move(shorts);
  k.singular = k.kind;
  for (auto& c : k.singular) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  k.prototype = proto;
  return k;
}

std::vector<kind_info> build() {
  std::vector<kind_info> v;
  v.push_back(make("", "pods", "Pod", true, true, {"po"}, &k8s::core::Pod::default_instance()));
  v.push_back(make("", "nodes", "Node", false, true, {"no"}, &k8s::core::Node::default_instance()));
  v.push_back(make("", "namespaces", "Namespace", false, true, {"ns"}, &k8s::core::Namespace::default_instance()));
  v.push_back(make("", "events", "Event", true, false, {"ev"}, &k8s::core::Event::default_instance()));
  v.push_back(make("", "services", "Service", true, true, {"svc"}, &k8s::core::Service::default_instance()));
  v.push_back(make("", "replicationcontrollers", "ReplicationController", true, true, {"rc"}, &k8s::core::ReplicationController::default_instance()));
  v.push_back(make("events.k8s.io", "events", "Event", true, false, {}, &k8s::events::Event::default_instance()));
  v.push_back(make("coordination.k8s.io", "leases", "Lease", true, false, {}, &k8s::coordination::Lease::default_instance()));
  v.push_back(make("scheduling.k8s.io", "priorityclasses", "PriorityClass", false, false, {"pc"},
                   &k8s::scheduling::PriorityClass::default_instance()));
  v.push_back(make("policy", "poddisruptionbudgets", "PodDisruptionBudget", true, true, {"pdb"},
                   &k8s::policy::PodDisruptionBudget::default_instance()));
  // PodGroups (gang scheduling): upstream's beta API, and the Coscheduling CRD of
  // kubernetes-sigs/scheduler-plugins (JSON only, as a CRD is served).
  v.push_back(make("scheduling.k8s.io", "podgroups", "PodGroup", true, true, {}, &k8s::scheduling::PodGroup::default_instance()));
  v.back().version = "v1beta1";
  v.push_back(make("scheduling.x-k8s.io", "podgroups", "PodGroup", true, true, {"pg", "pgs"},
                   &k8s::coscheduling::PodGroup::default_instance()));
  v.back().version = "v1alpha1";
  v.back().json_only = true;
  v.push_back(make("apps", "replicasets", "ReplicaSet", true, true, {"rs"}, &k8s::apps::ReplicaSet::default_instance()));
  v.push_back(make("apps", "statefulsets", "StatefulSet", true, true, {"sts"}, &k8s::apps::StatefulSet::default_instance()));
  // The storage kinds the volume plugins read.
  v.push_back(make("", "persistentvolumes", "PersistentVolume", false, true, {"pv"},
                   &k8s::core::PersistentVolume::default_instance()));
  v.push_back(make("", "persistentvolumeclaims", "PersistentVolumeClaim", true, true, {"pvc"},
                   &k8s::core::PersistentVolumeClaim::default_instance()));
  v.push_back(make("storage.k8s.io", "storageclasses", "StorageClass", false, false, {"sc"},
                   &k8s::storage::StorageClass::default_instance()));
  v.push_back(make("storage.k8s.io", "csinodes", "CSINode", false, false, {}, &k8s::storage::CSINode::default_instance()));
  v.push_back(make("storage.k8s.io", "csidrivers", "CSIDriver", false, false, {},
                   &k8s::storage::CSIDriver::default_instance()));
  v.push_back(make("storage.k8s.io", "csistoragecapacities", "CSIStorageCapacity", true, false, {},
                   &k8s::storage::CSIStorageCapacity::default_instance()));
  v.push_back(make("storage.k8s.io", "volumeattachments", "VolumeAttachment", false, true, {},
                   &k8s::storage::VolumeAttachment::default_instance()));
  // Kinds stored as generic JSON objects, not interpreted (no proto, JSON only), so that
  // `kubectl apply -f deploy/` creates every object of the manifests and reads it back.
  v.push_back(make("", "serviceaccounts", "ServiceAccount", true, false, {"sa"}, nullptr));
  v.push_back(make("", "configmaps", "ConfigMap", true, false, {"cm"}, nullptr));
  v.push_back(make("", "secrets", "Secret", true, false, {}, nullptr));
  v.push_back(make("rbac.authorization.k8s.io", "roles", "Role", true, false, {}, nullptr));
  v.push_back(make("rbac.authorization.k8s.io", "rolebindings", "RoleBinding", true, false, {}, nullptr));
  v.push_back(make("rbac.authorization.k8s.io", "clusterroles", "ClusterRole", false, false, {}, nullptr));
  v.push_back(make("rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding", false, false, {}, nullptr));
  v.push_back(make("apps", "deployments", "Deployment", true, true, {"deploy"}, nullptr));
  v.push_back(make("monitoring.coreos.com", "servicemonitors", "ServiceMonitor", true, false, {"smon"}, nullptr));
  return v;
}

// After the vector stops moving: point each kind's storage at itself, and events.k8s.io events at
// core events.
void link_storage(std::vector<kind_info>& v) {
  kind_info* core_events = nullptr;
  for (auto& k : v) {
    k.storage = &k;
    if (k.group.empty() && k.resource == "events") core_events = &k;
  }
  for (auto& k : v)
    if (k.group == "events.k8s.io" && k.resource == "events") k.storage = core_events;
}

}  // namespace

const std::vector<kind_info>& all_kinds() {
  static const std::vector<kind_info> kinds = [] {
    auto v = build();
    link_storage(v);
    return v;
  }();
  return kinds;
}

const kind_info* find_kind(const std::string& group, const std::string& version, const std::string& resource) {
  for (const auto& k : all_kinds())
    if (k.group == group && k.version == version && k.resource == resource) return &k;
  return nullptr;
}

const kind_info* find_kind_by_name(const std::string& api_version, const std::string& kind) {
  for (const auto& k : all_kinds())
    if (k.api_version() == api_version && k.kind == kind) return &k;
  return nullptr;
}

}  // namespace kas::testapi

#pragma once
// pod_group: a group of pods scheduled all or nothing (gang scheduling), compiled from either API
// form the scheduler accepts:
//   - upstream scheduling.k8s.io/v1beta1 PodGroup: spec.schedulingPolicy.gang.minCount (a `basic`
//     policy is no gang), spec.schedulingConstraints.topology[].key, spec.priority /
//     spec.priorityClassName; a pod joins through spec.schedulingGroup.podGroupName;
//   - the scheduler-plugins Coscheduling PodGroup, scheduling.x-k8s.io/v1alpha1: spec.minMember,
//     spec.scheduleTimeoutSeconds, spec.minResources; a pod joins through the label
//     scheduling.x-k8s.io/pod-group.
// Immutable once compiled; shared as pod_group_ptr inside cluster_objects.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/resources.hpp"
#include "messages/result.hpp"

namespace k8s::scheduling {
class PodGroup;
}
namespace k8s::coscheduling {
class PodGroup;
}

namespace kas {

enum class pod_group_api : uint8_t {
  none,          // the pod belongs to no group
  workload,      // scheduling.k8s.io/v1beta1 PodGroup, joined by spec.schedulingGroup
  coscheduling,  // scheduling.x-k8s.io/v1alpha1 PodGroup, joined by the pod-group label
};

inline constexpr const char* coscheduling_pod_group_label = "scheduling.x-k8s.io/pod-group";

struct pod_group {
  pod_group_api api = pod_group_api::workload;
  std::string ns;
  std::string name;
  std::string uid;
  int64_t creation_ns = 0;  // metadata.creationTimestamp (0 when unset)
  // A gang: all or nothing, at least min_count members at once. A v1beta1 `basic` policy is not a
  // gang (its pods schedule one by one, as if they had no group).
  bool gang = false;
  int32_t min_count = 1;  // gang.minCount, or Coscheduling's minMember
  // schedulingConstraints.topology[].key: every member lands in one domain of each key.
  std::vector<std::string> topology_keys;
  std::string priority_class_name;
  // spec.priority, or the value of priorityClassName's PriorityClass when the source resolved it;
  // nullopt: the members' own priorities order the group.
  std::optional<int32_t> priority;
  // Coscheduling's scheduleTimeoutSeconds: how long members wait at Permit; 0 = the plugin's default.
  std::chrono::seconds schedule_timeout{0};
  // Coscheduling's minResources: the group is not tried unless the cluster has this much free.
  resource_list min_resources;

  // "<ns>/<name>", as messages name the group.
  std::string display() const { return ns + "/" + name; }
};

using pod_group_ptr = std::shared_ptr<const pod_group>;

// The key a group is stored under: the two API forms are different kinds, so a v1beta1 and a
// Coscheduling group of the same name are different groups.
inline std::string pod_group_key(pod_group_api api, const std::string& ns, const std::string& name) {
  return std::string(api == pod_group_api::coscheduling ? "x/" : "k/") + ns + "/" + name;
}
inline std::string pod_group_key(const pod_group& g) { return pod_group_key(g.api, g.ns, g.name); }

// Compiles a PodGroup of either API, validated as the apiserver validates it (errors name the field
// path, e.g. "spec.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater than 0").
//
// scheduling.k8s.io/v1beta1: exactly one of schedulingPolicy.basic and .gang; gang.minCount > 0;
// each schedulingConstraints.topology[].key a qualified name (a label key), no key twice; the
// priority is spec.priority when set, else `class_priority` (the value of spec.priorityClassName's
// PriorityClass, when the source resolved it), else unset.
result<pod_group_ptr> compile_pod_group(const k8s::scheduling::PodGroup& pg,
                                        std::optional<int32_t> class_priority = std::nullopt);
// scheduling.x-k8s.io/v1alpha1 (Coscheduling): always a gang; minMember >= 0, where 0 (the CRD's
// omitted value) counts as 1, as the Coscheduling plugin treats it; scheduleTimeoutSeconds >= 0
// (0 or unset: the plugin's default); minResources quantities valid and not negative.
result<pod_group_ptr> compile_pod_group(const k8s::coscheduling::PodGroup& pg);

// The inverse: a group as the API object of its form, less what the apiserver sets (uid, creation
// time); compile_pod_group of it gives the group back. bench --kubeconfig creates PodGroups with it.
void to_api_object(const pod_group& g, k8s::scheduling::PodGroup& out);
void to_api_object(const pod_group& g, k8s::coscheduling::PodGroup& out);

}  // namespace kas

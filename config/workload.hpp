#pragma once
// Bench workloads: scheduler_perf's workload shape (an ordered list of ops over node and pod
// templates), read from one YAML file and compiled up front, so the runner only sends objects.
//
//   name: SchedulingBasic
//   threshold: 680                 # scheduler_perf's SchedulingThroughput threshold, pods/s
//   ops:
//   - opcode: createNodes
//     count: 5000
//     nodeTemplatePath: templates/node-default.yaml       # relative to the workload file
//     labelNodePrepareStrategy: {labelKey: topology.kubernetes.io/zone, labelValues: [a, b]}
//     uniqueNodeLabelStrategy: {labelKey: example.com/id}
//     nodeAllocatableStrategy:      # scheduler_perf's NodeAllocatableStrategy
//       nodeAllocatable: {attachable-volumes-csi-ebs.csi.aws.com: "39"}   # added to status.allocatable
//       csiNodeAllocatable: {ebs.csi.aws.com: {count: 39}}                # a CSINode per node
//       migratedPlugins: [kubernetes.io/aws-ebs]                          # its migrated-plugins annotation
//   - opcode: createAny             # PriorityClass, Namespace, Service, ReplicaSet, PDB, ...
//     templatePath: templates/priorityclass-high.yaml
//   - opcode: createPods
//     count: 10000
//     podTemplatePath: templates/pod-default.yaml
//     namespace: sched-1            # default "namespace-<op index>"
//     collectMetrics: true          # the measured phase
//     skipWaitToCompletion: false   # true: do not wait for these pods to be scheduled
//     persistentVolumeTemplatePath: templates/pv-csi.yaml       # with the next: a PV and a claim per pod
//     persistentVolumeClaimTemplatePath: templates/pvc.yaml
//     podGroup:                     # the op's pods are gangs (see below)
//       size: 8                     # pods per gang; count must be a multiple of it
//       minCount: 8                 # default: size
//       topologyKey: topology.kubernetes.io/zone   # optional: schedulingConstraints.topology[0].key
//       api: workload               # workload (default) | coscheduling
//       competingSet: pool-0        # optional: these gangs compete with the set's others (see below)
//   - opcode: churn
//     mode: recreate                # recreate | create
//     number: 1
//     intervalMilliseconds: 1000    # default 500, as scheduler_perf
//     templatePaths: [templates/node-default.yaml, templates/pod-default.yaml]
//   - opcode: barrier               # wait for every pod created so far (skipWaitToCompletion ones too)
//
// Nodes, as scheduler_perf's node preparer makes them: a template with metadata.generateName gives
// "<generateName><i>" (count may be anything); one with only metadata.name gives that name (count
// must be 1). Every createNodes node gets kubernetes.io/hostname = its name. labelNodePrepareStrategy
// assigns its values round robin over the run's node numbers, values[i % values.size()] (scheduler_perf
// round-robins over the op's nodes; the two agree for a first createNodes op, which is where every
// scheduler_perf workload labels); uniqueNodeLabelStrategy's value is the node's name (a UUID upstream).
// Pods are "<generateName><i>" in the op's namespace, uid "<namespace>/<name>".
//
// nodeAllocatableStrategy, as scheduler_perf's: each nodeAllocatable entry is set in the node's
// status.allocatable (which, when the template has none, starts as a copy of status.capacity, as the
// apiserver defaults it); and every node gets a CSINode of its name whose drivers are the
// csiNodeAllocatable entries (nodeID = the node's name; in driver name order, where scheduler_perf's
// follows Go's map order) and whose storage.alpha.kubernetes.io/migrated-plugins annotation is the
// migratedPlugins joined by commas (set even when empty, as scheduler_perf sets it). The label
// strategies combine with it (scheduler_perf applies only the first of the three it finds).
//
// createPods with persistentVolumeTemplatePath and persistentVolumeClaimTemplatePath (both or
// neither), as scheduler_perf's CreatePodWithPersistentVolume: pod number k of the op (k from 0)
// gets a claim "pvc-<k>" in the op's namespace and a volume "<namespace>-vol-<k>", bound to each
// other the way the PV controller leaves them (the claim's spec.volumeName and the volume's
// spec.claimRef name each other, both in phase Bound; the claim template carries
// pv.kubernetes.io/bind-completed). A CSI volume's volumeHandle is the volume's name; an AWS EBS
// volume's volumeID is "vol-<k>". The pod's spec.volumes are replaced by one volume "vol" using the
// claim. The runner creates the claim, then the volume, then the pod.
//
// createPods with podGroup: pod k of the op (k from 0) belongs to gang k / size, a PodGroup named
// "gang-<op index>-<k / size>" in the op's namespace, which the op creates with its pods (before
// them: the op carries the cluster's objects with its PodGroups added, as a createAny does). With
// api: workload the group is a scheduling.k8s.io/v1beta1 PodGroup (schedulingPolicy.gang.minCount,
// schedulingConstraints.topology[].key = topologyKey) and each pod sets
// spec.schedulingGroup.podGroupName; with api: coscheduling it is a scheduling.x-k8s.io/v1alpha1
// PodGroup (spec.minMember; topologyKey is refused: that API has no topology) and each pod carries
// the label scheduling.x-k8s.io/pod-group. Like a createAny, such an op cannot follow an op that
// created storage objects one by one.
//
// podGroup.competingSet names a set of gangs created to compete for capacity that fits exactly one
// of them: every gang of every op naming the set (two gangs of one op, or one gang each of two ops,
// of either API). bench expects exactly one gang of each set bound whole and every other with no
// member bound (actors/invariants.hpp, check_competing_gangs). Such an op needs
// skipWaitToCompletion: true, and a barrier after the set's last op: that barrier waits only for
// the pods the outcome binds at least (the set's smallest minCount; barrier_may_stay_pending), so
// the losers may stay pending. A set needs at least two gangs, and all of them before one barrier.
//
// Churn: recreate creates `number` objects of each Node/Pod template on one tick and deletes them on
// the next (scheduler_perf's ring of `number` slots; the same for number: 1, the only value its
// workloads use). create makes `number` of each every tick without end (scheduler_perf's number
// caps the ticks instead; its create-mode workloads leave it unset, unlimited). Other objects
// (Services) in a churn op are parsed and not sent: nothing the plugins read per pod depends on them.
//
// createAny also takes storage objects (StorageClasses, CSIDrivers, PersistentVolumes, ...); since
// its objects replace the cluster's, a createAny after an op that created storage objects one by one
// (CSINodes, per-pod volumes) is refused.
//
// Every error names the file and the field path ("w.yaml: ops[2].count: ..."). The workload file
// and its templates are read through load_yaml (yaml_guard.hpp): a workload is at most 3 MiB,
// templates are held to the manifest limits, and the workload is the file's first document.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "cache/volume_objects.hpp"
#include "messages/result.hpp"

namespace kas {

struct node_label_strategy {
  std::string key;
  std::vector<std::string> values;  // empty with unique = true
  bool unique = false;              // uniqueNodeLabelStrategy: value = the node's name
};

// A node template compiled once; make_node(t, i) stamps node number i.
// createNodes' nodeAllocatableStrategy (see the top of the file).
struct node_allocatable_strategy {
  std::vector<std::pair<std::string, std::string>> node_allocatable;  // resource name, quantity as written
  struct csi_driver {
    std::string name;
    std::optional<int32_t> count;  // allocatable.count; nullopt: no allocatable reported
  };
  std::vector<csi_driver> csi_drivers;  // by name
  std::vector<std::string> migrated_plugins;
};

struct node_template {
  std::shared_ptr<const k8s::core::Node> proto;
  std::string name_prefix;  // metadata.generateName, else "node-"; unused when fixed_name is set
  std::string fixed_name;   // metadata.name of a template without generateName: the one node's name
  bool hostname_label = false;  // createNodes: kubernetes.io/hostname = the node's name
  std::vector<node_label_strategy> labels;
  std::shared_ptr<const node_allocatable_strategy> allocatable;  // null: none (no CSINode either)
};

struct pod_template {
  pod_info_ptr compiled;    // compiled in its namespace; copies differ only in name and uid
  std::string name_prefix;  // metadata.generateName, else metadata.name + "-"
};

// createPods' persistentVolumeTemplatePath / persistentVolumeClaimTemplatePath: the templates as
// read, the claim's already in the op's namespace. The op's pod template then has the one claim
// volume "vol" in place of its own volumes.
struct pod_volume_templates {
  std::shared_ptr<const k8s::core::PersistentVolume> pv;
  std::shared_ptr<const k8s::core::PersistentVolumeClaim> pvc;
  std::string ns;
};

// One pod of such an op with its claim and volume, compiled.
struct pod_with_volumes {
  pvc_info_ptr claim;
  pv_info_ptr volume;
  pod_info_ptr pod;
};

// createPods' podGroup: the op's pods in gangs of `size`.
struct gang_spec {
  pod_group_api api = pod_group_api::workload;
  size_t size = 0;
  int32_t min_count = 0;
  std::string topology_key;  // "" = none
  std::string competing_set; // "" = none
  std::string name_prefix;   // "gang-<op index>-": gang n is name_prefix + n
  std::string ns;
  std::string group_name(size_t gang) const { return name_prefix + std::to_string(gang); }
};

enum class workload_opcode { create_nodes, create_pods, create_any, churn, barrier };

struct workload_op {
  workload_opcode opcode = workload_opcode::barrier;
  std::string where;  // "file: ops[i]"
  size_t count = 0;
  // createNodes
  std::shared_ptr<const node_template> nodes;
  // createPods
  std::shared_ptr<const pod_template> pods;
  bool collect_metrics = false;
  bool skip_wait = false;
  std::shared_ptr<const pod_volume_templates> volumes;  // null: plain pods
  std::shared_ptr<const gang_spec> gang;                 // null: no pod groups
  // createAny, and createPods with podGroup: the cluster's non-node, non-pod objects after this op (namespaces, selectors, PDBs).
  cluster_objects_ptr objects;
  // churn
  bool churn_recreate = true;
  size_t churn_number = 1;
  uint32_t churn_interval_ms = 1000;
  std::vector<std::shared_ptr<const node_template>> churn_nodes;
  std::vector<std::shared_ptr<const pod_template>> churn_pods;
  // barrier: of the pods it awaits, how many may stay unbound (the losers of the competing sets it
  // ends: each set's pods minus its smallest minCount).
  size_t barrier_may_stay_pending = 0;
};

// podGroup.competingSet: the gangs of one set, in op order.
struct competing_set {
  std::string name;
  std::string where;                    // "file: ops[i].podGroup.competingSet" of its first op
  std::vector<std::string> group_keys;  // pod_group_key of each gang
  size_t pods = 0;                      // its gangs' pods
  size_t smallest_min_count = 0;
};

struct workload {
  std::string name;
  std::string file;
  std::string description;
  double threshold = 0;
  std::vector<workload_op> ops;
  std::vector<competing_set> competing_sets;
  // What the templates' manifests warned of (unknown fields), each naming the op and the file.
  std::vector<std::string> warnings;

  size_t node_count() const;
  size_t measured_pod_count() const;
  size_t init_pod_count() const;
  // PodGroups the createPods ops make (0 without podGroup ops).
  size_t gang_count() const;
};

// Node number i of a template: its name (fixed, or prefix + i), hostname label and strategies
// applied (labelNodePrepareStrategy values round robin: values[i % values.size()]).
result<std::shared_ptr<node_info>> make_node(const node_template& t, size_t i);
// The CSINode of `node_name` that the template's nodeAllocatableStrategy gives it; null when the
// template has none.
result<csi_node_info_ptr> make_csi_node(const node_template& t, const std::string& node_name);
// Pod number i of a template.
pod_info_ptr make_pod(const pod_template& t, size_t i);
// Pod number `pod_number` of a template with the claim and volume of the op's pod `index` (0 for the
// op's first pod): names as described at the top of the file.
result<pod_with_volumes> make_pod_with_volumes(const pod_template& t, const pod_volume_templates& v,
                                               size_t pod_number, size_t index);

// Pod number `pod_number` of a template, member of gang `index / g.size` of the op (index: the
// pod's position in its op, from 0): the group set in both the API object and the compiled pod.
pod_info_ptr make_gang_pod(const pod_template& t, const gang_spec& g, size_t pod_number, size_t index);

result<workload> load_workload(const std::string& path);

// SchedulingBasic (5000 nodes, 1000 init pods, 10000 measured), built in: `bench` with no
// --workload runs it without needing the repository's files.
workload default_workload();

}  // namespace kas

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
//   - opcode: createAny             # PriorityClass, Namespace, Service, ReplicaSet, PDB, ...
//     templatePath: templates/priorityclass-high.yaml
//   - opcode: createPods
//     count: 10000
//     podTemplatePath: templates/pod-default.yaml
//     namespace: sched-1            # default "namespace-<op index>"
//     collectMetrics: true          # the measured phase
//     skipWaitToCompletion: false   # true: do not wait for these pods to be scheduled
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
// Churn: recreate creates `number` objects of each Node/Pod template on one tick and deletes them on
// the next (scheduler_perf's ring of `number` slots; the same for number: 1, the only value its
// workloads use). create makes `number` of each every tick without end (scheduler_perf's number
// caps the ticks instead; its create-mode workloads leave it unset, unlimited). Other objects
// (Services) in a churn op are parsed and not sent: nothing the plugins read per pod depends on them.
//
// Every error names the file and the field path ("w.yaml: ops[2].count: ..."). Templates that
// need a plugin this scheduler does not implement (volumes, DRA) are refused with that reason. The
// workload file and its templates are read through load_yaml (yaml_guard.hpp): a workload is at
// most 3 MiB, templates are held to the manifest limits, and the workload is the file's first document.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/node_info.hpp"
#include "cache/pod_info.hpp"
#include "messages/result.hpp"

namespace kas {

struct node_label_strategy {
  std::string key;
  std::vector<std::string> values;  // empty with unique = true
  bool unique = false;              // uniqueNodeLabelStrategy: value = the node's name
};

// A node template compiled once; make_node(t, i) stamps node number i.
struct node_template {
  std::shared_ptr<const k8s::core::Node> proto;
  std::string name_prefix;  // metadata.generateName, else "node-"; unused when fixed_name is set
  std::string fixed_name;   // metadata.name of a template without generateName: the one node's name
  bool hostname_label = false;  // createNodes: kubernetes.io/hostname = the node's name
  std::vector<node_label_strategy> labels;
};

struct pod_template {
  pod_info_ptr compiled;    // compiled in its namespace; copies differ only in name and uid
  std::string name_prefix;  // metadata.generateName, else metadata.name + "-"
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
  // createAny: the cluster's non-node, non-pod objects after this op (namespaces, selectors, PDBs).
  cluster_objects_ptr objects;
  // churn
  bool churn_recreate = true;
  size_t churn_number = 1;
  uint32_t churn_interval_ms = 1000;
  std::vector<std::shared_ptr<const node_template>> churn_nodes;
  std::vector<std::shared_ptr<const pod_template>> churn_pods;
};

struct workload {
  std::string name;
  std::string file;
  std::string description;
  double threshold = 0;
  std::vector<workload_op> ops;
  // What the templates' manifests warned of (unknown fields), each naming the op and the file.
  std::vector<std::string> warnings;

  size_t node_count() const;
  size_t measured_pod_count() const;
  size_t init_pod_count() const;
};

// Node number i of a template: its name (fixed, or prefix + i), hostname label and strategies
// applied (labelNodePrepareStrategy values round robin: values[i % values.size()]).
result<std::shared_ptr<node_info>> make_node(const node_template& t, size_t i);
// Pod number i of a template.
pod_info_ptr make_pod(const pod_template& t, size_t i);

result<workload> load_workload(const std::string& path);

// SchedulingBasic (5000 nodes, 1000 init pods, 10000 measured), built in: `bench` with no
// --workload runs it without needing the repository's files.
workload default_workload();

}  // namespace kas

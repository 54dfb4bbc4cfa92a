// Bench workloads: every file in bench/workloads/ loads with scheduler_perf's sizes; nodes and pods
// are stamped the way scheduler_perf names and labels them; and every bad input comes back as one
// error naming the file and the field path.
#include "config/workload.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kas {
namespace {

namespace fs = std::filesystem;

std::string workloads_dir() { return KAS_BENCH_WORKLOADS; }

// --- the shipped workloads ---------------------------------------------------------------------

struct shipped_case {
  std::string file;
  std::string name;
  size_t nodes;
  size_t init_pods;
  size_t measured_pods;
  double threshold;
};

// scheduler_perf's counts and thresholds for the variant each file names in its description.
const std::vector<shipped_case>& shipped() {
  static const std::vector<shipped_case> cases = {
    {"scheduling-basic.yaml", "SchedulingBasic", 5000, 1000, 10000, 680},
    {"scheduling-basic-50000.yaml", "SchedulingBasic", 5000, 5000, 50000, 810},
    {"scheduling-daemonset.yaml", "SchedulingDaemonset", 15001, 0, 30000, 1100},
    {"scheduling-pod-anti-affinity.yaml", "SchedulingPodAntiAffinity", 5000, 1000, 2000, 60},
    {"scheduling-node-affinity.yaml", "SchedulingNodeAffinity", 5000, 5000, 10000, 220},
    {"topology-spreading.yaml", "TopologySpreading", 5000, 5000, 5000, 460},
    {"preferred-topology-spreading.yaml", "PreferredTopologySpreading", 5000, 5000, 5000, 340},
    {"scheduling-with-mixed-churn.yaml", "SchedulingWithMixedChurn", 5000, 0, 10000, 710},
    {"unschedulable.yaml", "Unschedulable", 5000, 100, 10000, 590},
    {"preemption-basic.yaml", "PreemptionBasic", 500, 2000, 500, 18},
    {"scheduling-pod-affinity.yaml", "SchedulingPodAffinity", 5000, 5000, 5000, 70},
    {"scheduling-preferred-pod-affinity.yaml", "SchedulingPreferredPodAffinity", 5000, 5000, 5000, 160},
    {"scheduling-preferred-pod-anti-affinity.yaml", "SchedulingPreferredPodAntiAffinity", 5000, 5000, 5000, 190},
    {"scheduling-required-pod-anti-affinity-with-ns-selector.yaml", "SchedulingRequiredPodAntiAffinityWithNSSelector",
     6000, 4000, 2000, 140},
    {"mixed-scheduling-base-pod.yaml", "MixedSchedulingBasePod", 5000, 10000, 5000, 540},
    {"default-topology-spreading.yaml", "DefaultTopologySpreading", 5000, 5000, 50000, 160},
    {"scheduling-secrets.yaml", "SchedulingSecrets", 5000, 1000, 10000, 790},
    {"scheduling-in-tree-pvs.yaml", "SchedulingInTreePVs", 5000, 1000, 2000, 290},
    {"scheduling-migrated-in-tree-pvs.yaml", "SchedulingMigratedInTreePVs", 5000, 5000, 5000, 100},
    {"scheduling-csi-pvs.yaml", "SchedulingCSIPVs", 5000, 5000, 5000, 100},
    {"preemption-async.yaml", "PreemptionAsync", 5000, 20000, 5000, 570},
    {"scale-1000.yaml", "Scale1000Nodes", 1000, 200, 20000, 0},
    {"scale-5000.yaml", "Scale5000Nodes", 5000, 1000, 50000, 0},
    {"scale-15000.yaml", "Scale15000Nodes", 15000, 3000, 100000, 0},
    {"ci-small.yaml", "CISmall", 100, 50, 500, 0},
    {"churn-soak.yaml", "ChurnSoak", 5000, 0, 100000, 0},
    {"gang-scheduling.yaml", "GangScheduling", 5000, 1000, 10240, 0},
    {"gang-scheduling-topology.yaml", "GangSchedulingTopology", 5000, 1000, 10240, 0},
    {"gang-baseline-plain.yaml", "GangBaselinePlain", 5000, 1000, 10240, 0},
    {"gang-mixed-fill.yaml", "GangMixedFill", 5000, 0, 18000, 0},
    {"gang-mixed-fill-baseline.yaml", "GangMixedFillBaseline", 5000, 0, 18000, 0},
    {"gang-competing.yaml", "GangCompeting", 504, 0, 1136, 0},
    {"gang-competing-ci.yaml", "GangCompetingCI", 32, 0, 72, 0},
  };
  return cases;
}

class ShippedWorkloadTest : public ::testing::TestWithParam<shipped_case> {};

TEST_P(ShippedWorkloadTest, LoadsWithSchedulerPerfSizes) {
  const shipped_case& c = GetParam();
  auto w = load_workload(workloads_dir() + "/" + c.file);
  ASSERT_TRUE(w) << w.err().message;
  EXPECT_EQ(w->name, c.name);
  EXPECT_EQ(w->node_count(), c.nodes);
  EXPECT_EQ(w->init_pod_count(), c.init_pods);
  EXPECT_EQ(w->measured_pod_count(), c.measured_pods);
  EXPECT_EQ(w->threshold, c.threshold);
  EXPECT_FALSE(w->description.empty());
}

INSTANTIATE_TEST_SUITE_P(Files, ShippedWorkloadTest, ::testing::ValuesIn(shipped()),
                         [](const ::testing::TestParamInfo<shipped_case>& i) {
                           std::string n = i.param.file.substr(0, i.param.file.size() - 5);
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// A workload added to bench/workloads/ without a row above would escape the size check.
// unschedulable.yaml and preemption-async.yaml: op 2 creates a priority-10 pod in namespace-2
// every 200 ms (churn, create mode), op 3 the measured pods in namespace-3.
void expect_high_priority_pod_every_200ms(const workload& w) {
  const workload_op& churn = w.ops[2];
  ASSERT_EQ(churn.opcode, workload_opcode::churn);
  EXPECT_FALSE(churn.churn_recreate);
  EXPECT_EQ(churn.churn_interval_ms, 200u);
  ASSERT_EQ(churn.churn_pods.size(), 1u);
  EXPECT_EQ(churn.churn_pods[0]->compiled->ns, "namespace-2");
  EXPECT_EQ(churn.churn_pods[0]->compiled->priority, 10);
  EXPECT_EQ(w.ops[3].pods->compiled->ns, "namespace-3");
}

TEST(ShippedWorkloads, EveryFileIsInTheTable) {
  std::map<std::string, bool> listed;
  for (auto& c : shipped()) listed[c.file] = true;
  size_t files = 0;
  for (auto& e : fs::directory_iterator(workloads_dir())) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    EXPECT_TRUE(listed.count(e.path().filename().string())) << e.path() << " has no row in shipped()";
  }
  EXPECT_EQ(files, shipped().size());
}

TEST(ShippedWorkloads, DaemonsetPinsToTheNamedNode) {
  auto w = load_workload(workloads_dir() + "/scheduling-daemonset.yaml");
  ASSERT_TRUE(w) << w.err().message;
  auto n = make_node(*w->ops[0].nodes, 0);
  ASSERT_TRUE(n) << n.err().message;
  EXPECT_EQ((*n)->name, "scheduler-perf-node");
  auto other = make_node(*w->ops[1].nodes, 1);
  ASSERT_TRUE(other) << other.err().message;
  EXPECT_EQ((*other)->name, "scheduler-perf-1");
  ASSERT_NE((*other)->labels.get("kubernetes.io/hostname"), nullptr);
  EXPECT_EQ(*(*other)->labels.get("kubernetes.io/hostname"), "scheduler-perf-1");
  EXPECT_EQ(make_pod(*w->ops[2].pods, 0)->ns, "namespace-2");
}

TEST(ShippedWorkloads, NamespacesFollowSchedulerPerfOpIndex) {
  auto basic = load_workload(workloads_dir() + "/scheduling-basic.yaml");
  ASSERT_TRUE(basic) << basic.err().message;
  EXPECT_EQ(basic->ops[1].pods->compiled->ns, "namespace-1");
  EXPECT_EQ(basic->ops[2].pods->compiled->ns, "namespace-2");
  auto anti = load_workload(workloads_dir() + "/scheduling-pod-anti-affinity.yaml");
  ASSERT_TRUE(anti) << anti.err().message;
  EXPECT_EQ(anti->ops[2].pods->compiled->ns, "sched-0");
  EXPECT_EQ(anti->ops[3].pods->compiled->ns, "sched-1");
  auto uns = load_workload(workloads_dir() + "/unschedulable.yaml");
  ASSERT_TRUE(uns) << uns.err().message;
  expect_high_priority_pod_every_200ms(*uns);
  auto mixed = load_workload(workloads_dir() + "/scheduling-with-mixed-churn.yaml");
  ASSERT_TRUE(mixed) << mixed.err().message;
  EXPECT_TRUE(mixed->ops[1].churn_recreate);
  EXPECT_EQ(mixed->ops[1].churn_nodes.size(), 1u);
  EXPECT_EQ(mixed->ops[1].churn_pods.size(), 1u);
}

// What the counts above do not show: the namespaces, the objects createAny made, the templates'
// terms, as scheduler_perf's configs have them.
TEST(ShippedWorkloads, AffinityWorkloadsKeepSchedulerPerfNamespacesAndTerms) {
  auto aff = load_workload(workloads_dir() + "/scheduling-pod-affinity.yaml");
  ASSERT_TRUE(aff) << aff.err().message;
  auto zone = make_node(*aff->ops[0].nodes, 4999);
  ASSERT_TRUE(zone) << zone.err().message;
  ASSERT_NE((*zone)->labels.get("topology.kubernetes.io/zone"), nullptr);
  EXPECT_EQ(*(*zone)->labels.get("topology.kubernetes.io/zone"), "zone1");
  const auto& ap = *aff->ops[3].pods->compiled;
  EXPECT_EQ(ap.ns, "sched-1");
  ASSERT_EQ(ap.required_affinity.size(), 1u);
  EXPECT_EQ(ap.required_affinity[0].topology_key, "topology.kubernetes.io/zone");

  auto pref = load_workload(workloads_dir() + "/scheduling-preferred-pod-affinity.yaml");
  ASSERT_TRUE(pref) << pref.err().message;
  EXPECT_EQ(pref->ops[3].pods->compiled->preferred_affinity.size(), 1u);
  auto prefanti = load_workload(workloads_dir() + "/scheduling-preferred-pod-anti-affinity.yaml");
  ASSERT_TRUE(prefanti) << prefanti.err().message;
  EXPECT_TRUE(prefanti->ops[3].pods->compiled->preferred_affinity.empty());
  EXPECT_EQ(prefanti->ops[3].pods->compiled->preferred_anti_affinity.size(), 1u);

  // createPodSets {count: 100, namespacePrefix: init-ns}: one createPods op per namespace.
  auto ns = load_workload(workloads_dir() + "/scheduling-required-pod-anti-affinity-with-ns-selector.yaml");
  ASSERT_TRUE(ns) << ns.err().message;
  ASSERT_EQ(ns->ops.size(), 103u);
  ASSERT_TRUE(ns->ops[1].objects);
  EXPECT_EQ(ns->ops[1].objects->namespace_labels.size(), 101u);
  for (const char* n : {"init-ns-0", "init-ns-99", "measure-ns-0"}) {
    const label_map* l = ns->ops[1].objects->namespace_labels_of(n);
    ASSERT_NE(l, nullptr) << n;
    ASSERT_NE(l->get("team"), nullptr) << n;
    EXPECT_EQ(*l->get("team"), "devops") << n;
  }
  for (size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(ns->ops[2 + i].count, 40u);
    EXPECT_EQ(ns->ops[2 + i].pods->compiled->ns, "init-ns-" + std::to_string(i));
  }
  const auto& np = *ns->ops[102].pods->compiled;
  EXPECT_EQ(np.ns, "measure-ns-0");
  ASSERT_EQ(np.required_anti_affinity.size(), 1u);
  EXPECT_TRUE(np.required_anti_affinity[0].namespace_selector.has_value());

  auto mixed = load_workload(workloads_dir() + "/mixed-scheduling-base-pod.yaml");
  ASSERT_TRUE(mixed) << mixed.err().message;
  for (size_t i = 2; i <= 6; ++i) EXPECT_EQ(mixed->ops[i].pods->compiled->ns, "sched-0");
  EXPECT_EQ(mixed->ops[7].pods->compiled->ns, "namespace-7");
}

TEST(ShippedWorkloads, DefaultSpreadingAndPreemptionAsyncKeepSchedulerPerfObjects) {
  auto dts = load_workload(workloads_dir() + "/default-topology-spreading.yaml");
  ASSERT_TRUE(dts) << dts.err().message;
  ASSERT_TRUE(dts->ops[1].objects);
  ASSERT_EQ(dts->ops[1].objects->workloads.size(), 1u);
  EXPECT_EQ(dts->ops[1].objects->workloads[0].kind, "Service");
  EXPECT_EQ(dts->ops[1].objects->workloads[0].ns, "service-ns");
  EXPECT_EQ(dts->ops[2].pods->compiled->ns, "namespace-2");
  const auto& dp = *dts->ops[3].pods->compiled;
  EXPECT_EQ(dp.ns, "service-ns");
  EXPECT_TRUE(dp.spread_constraints.empty());  // the system defaults apply
  ASSERT_NE(dp.labels.get("app"), nullptr);
  EXPECT_EQ(*dp.labels.get("app"), "scheduler-perf");

  auto pa = load_workload(workloads_dir() + "/preemption-async.yaml");
  ASSERT_TRUE(pa) << pa.err().message;
  EXPECT_EQ(pa->ops[1].pods->compiled->priority, 0);
  expect_high_priority_pod_every_200ms(*pa);

  auto sec = load_workload(workloads_dir() + "/scheduling-secrets.yaml");
  ASSERT_TRUE(sec) << sec.err().message;
  EXPECT_EQ(sec->ops[2].pods->compiled->pod->spec().volumes_size(), 1);
}

// --- stamping nodes and pods ------------------------------------------------------------------

// A scratch directory per test process: ctest runs tests in parallel processes.
fs::path scratch(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("kas_workload_" + std::to_string(::getpid()) + "_" + name);
  fs::create_directories(d / "templates");
  return d;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

const char* node_yaml = R"(apiVersion: v1
kind: Node
metadata:
  generateName: scheduler-perf-
status:
  capacity: {pods: "110", cpu: "4", memory: 32Gi}
)";

const char* named_node_yaml = R"(apiVersion: v1
kind: Node
metadata:
  name: scheduler-perf-node
status:
  capacity: {pods: "90000", cpu: "4", memory: 32Gi}
)";

const char* pod_yaml = R"(apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: 100m, memory: 500Mi}
)";

const char* pvc_pod_yaml = R"(apiVersion: v1
kind: Pod
metadata:
  generateName: pvc-pod-
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.10
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
)";

// A scratch workload over the standard templates; returns the workload file's path.
std::string scratch_workload(const std::string& name, const std::string& text) {
  fs::path d = scratch(name);
  write(d / "templates/node.yaml", node_yaml);
  write(d / "templates/named-node.yaml", named_node_yaml);
  write(d / "templates/pod.yaml", pod_yaml);
  write(d / "templates/pvc-pod.yaml", pvc_pod_yaml);
  write(d / "templates/bad.yaml", "apiVersion: v1\nkind: Node\nmetadata: [\n");
  std::string path = (d / "w.yaml").string();
  write(path, text);
  return path;
}

const std::string measured = R"(
- opcode: createPods
  count: 10
  podTemplatePath: templates/pod.yaml
  collectMetrics: true
)";

TEST(MakeNode, LabelValuesRoundRobinAndNamesCount) {
  auto path = scratch_workload("round_robin", R"(name: RR
ops:
- opcode: createNodes
  count: 7
  nodeTemplatePath: templates/node.yaml
  labelNodePrepareStrategy: {labelKey: topology.kubernetes.io/zone, labelValues: [moon-1, moon-2, moon-3]}
  uniqueNodeLabelStrategy: {labelKey: example.com/id}
)" + measured);
  auto w = load_workload(path);
  ASSERT_TRUE(w) << w.err().message;
  const std::vector<std::string> want_zone = {"moon-1", "moon-2", "moon-3", "moon-1", "moon-2", "moon-3", "moon-1"};
  for (size_t i = 0; i < want_zone.size(); ++i) {
    auto n = make_node(*w->ops[0].nodes, i);
    ASSERT_TRUE(n) << n.err().message;
    std::string name = "scheduler-perf-" + std::to_string(i);
    EXPECT_EQ((*n)->name, name);
    auto* zone = (*n)->labels.get("topology.kubernetes.io/zone");
    ASSERT_NE(zone, nullptr);
    EXPECT_EQ(*zone, want_zone[i]) << "node " << i;
    auto* host = (*n)->labels.get("kubernetes.io/hostname");
    ASSERT_NE(host, nullptr);
    EXPECT_EQ(*host, name);
    auto* id = (*n)->labels.get("example.com/id");
    ASSERT_NE(id, nullptr);
    EXPECT_EQ(*id, name);
  }
}

TEST(MakeNode, NamedTemplateKeepsItsName) {
  auto path = scratch_workload("named", R"(name: Named
ops:
- opcode: createNodes
  count: 1
  nodeTemplatePath: templates/named-node.yaml
)" + measured);
  auto w = load_workload(path);
  ASSERT_TRUE(w) << w.err().message;
  auto n = make_node(*w->ops[0].nodes, 42);
  ASSERT_TRUE(n) << n.err().message;
  EXPECT_EQ((*n)->name, "scheduler-perf-node");
}

TEST(MakePod, NamesAndUidsCountInTheOpNamespace) {
  auto path = scratch_workload("pods", R"(name: Pods
ops:
- opcode: createNodes
  count: 1
  nodeTemplatePath: templates/node.yaml
- opcode: createPods
  count: 3
  podTemplatePath: templates/pod.yaml
  namespace: sched-0
)" + measured);
  auto w = load_workload(path);
  ASSERT_TRUE(w) << w.err().message;
  auto a = make_pod(*w->ops[1].pods, 0);
  auto b = make_pod(*w->ops[1].pods, 7);
  EXPECT_EQ(a->name, "pod-0");
  EXPECT_EQ(a->uid, "sched-0/pod-0");
  EXPECT_EQ(b->name, "pod-7");
  EXPECT_EQ(b->uid, "sched-0/pod-7");
  auto m = make_pod(*w->ops[2].pods, 3);
  EXPECT_EQ(m->ns, "namespace-2");
  EXPECT_EQ(m->uid, "namespace-2/pod-3");
  EXPECT_EQ(w->ops[2].pods->compiled->name, "pod-template") << "the template itself is unchanged";
}

// --- bad inputs ---------------------------------------------------------------------------------

struct bad_case {
  std::string name;
  std::string text;                // the workload file (templates/ as scratch_workload writes them)
  std::vector<std::string> want;   // substrings of the one error; "W" stands for the file's path
};

class BadWorkloadTest : public ::testing::TestWithParam<bad_case> {};

TEST_P(BadWorkloadTest, NamesFileAndFieldPath) {
  const bad_case& c = GetParam();
  std::string path = scratch_workload("bad_" + c.name, c.text);
  auto w = load_workload(path);
  ASSERT_FALSE(w) << "expected an error";
  const std::string& msg = w.err().message;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << "must start with the file: " << msg;
  for (std::string want : c.want) {
    if (size_t at = want.find('W'); at == 0) want = path + want.substr(1);
    EXPECT_NE(msg.find(want), std::string::npos) << "missing \"" << want << "\" in: " << msg;
  }
}

const std::string nodes_op = R"(
- opcode: createNodes
  count: 5
  nodeTemplatePath: templates/node.yaml
)";

std::vector<bad_case> bad_cases() {
  return {
    {"missing_name", "ops:" + nodes_op + measured, {"W: name: required field is missing"}},
    {"unknown_top_level_field", "name: X\nthreshhold: 5\nops:" + nodes_op + measured,
     {"W: threshhold: unknown field"}},
    {"ops_not_a_list", "name: X\nops: {opcode: barrier}\n", {"W: ops: expected a non-empty list of ops"}},
    {"ops_empty", "name: X\nops: []\n", {"W: ops: expected a non-empty list of ops"}},
    {"unknown_opcode", "name: X\nops:" + nodes_op + "- opcode: createNode\n" + measured,
     {"W: ops[1].opcode: unknown opcode \"createNode\"", "known: createNodes"}},
    {"missing_opcode", "name: X\nops:\n- count: 5\n", {"W: ops[0].opcode: required field is missing"}},
    {"unknown_op_field",
     "name: X\nops:" + nodes_op + "- opcode: createPods\n  count: 1\n  podTemplate: templates/pod.yaml\n" + measured,
     {"W: ops[1].podTemplate: unknown field"}},
    {"count_missing", "name: X\nops:\n- opcode: createNodes\n  nodeTemplatePath: templates/node.yaml\n" + measured,
     {"W: ops[0].count: required field is missing"}},
    {"count_negative", "name: X\nops:\n- opcode: createNodes\n  count: -5\n  nodeTemplatePath: templates/node.yaml\n" + measured,
     {"W: ops[0].count: must be between 1 and ", "got -5"}},
    {"count_zero", "name: X\nops:" + nodes_op + "- opcode: createPods\n  count: 0\n  podTemplatePath: templates/pod.yaml\n" + measured,
     {"W: ops[1].count: must be between 1 and ", "got 0"}},
    {"count_not_a_number",
     "name: X\nops:\n- opcode: createNodes\n  count: many\n  nodeTemplatePath: templates/node.yaml\n" + measured,
     {"W: ops[0].count: expected an integer, got \"many\""}},
    {"count_a_list", "name: X\nops:\n- opcode: createNodes\n  count: [1]\n  nodeTemplatePath: templates/node.yaml\n" + measured,
     {"W: ops[0].count: expected an integer, got a list"}},
    {"missing_template_file",
     "name: X\nops:\n- opcode: createNodes\n  count: 5\n  nodeTemplatePath: templates/nope.yaml\n" + measured,
     {"W: ops[0].nodeTemplatePath: ", "templates/nope.yaml", "cannot read"}},
    {"pod_where_node_expected",
     "name: X\nops:\n- opcode: createNodes\n  count: 5\n  nodeTemplatePath: templates/pod.yaml\n" + measured,
     {"W: ops[0].nodeTemplatePath: ", "templates/pod.yaml: a node template must hold exactly one Node"}},
    {"node_where_pod_expected",
     "name: X\nops:" + nodes_op + "- opcode: createPods\n  count: 1\n  podTemplatePath: templates/node.yaml\n  collectMetrics: true\n",
     {"W: ops[1].podTemplatePath: ", "templates/node.yaml: a pod template must hold exactly one Pod"}},
    {"named_node_count", "name: X\nops:\n- opcode: createNodes\n  count: 3\n  nodeTemplatePath: templates/named-node.yaml\n" + measured,
     {"W: ops[0].count: must be 1: ", "metadata.name: scheduler-perf-node", "got 3"}},
    {"invalid_template_yaml",
     "name: X\nops:\n- opcode: createNodes\n  count: 5\n  nodeTemplatePath: templates/bad.yaml\n" + measured,
     {"W: ops[0].nodeTemplatePath: ", "templates/bad.yaml", "invalid YAML"}},
    {"churn_mode_invalid",
     "name: X\nops:" + nodes_op + "- opcode: churn\n  mode: sometimes\n  templatePaths: [templates/pod.yaml]\n" + measured,
     {"W: ops[1].mode: must be recreate or create, got \"sometimes\""}},
    {"churn_no_templates", "name: X\nops:" + nodes_op + "- opcode: churn\n  mode: create\n" + measured,
     {"W: ops[1].templatePaths: expected a non-empty list of template paths"}},
    {"collect_metrics_not_bool",
     "name: X\nops:" + nodes_op + "- opcode: createPods\n  count: 1\n  podTemplatePath: templates/pod.yaml\n  collectMetrics: maybe\n",
     {"W: ops[1].collectMetrics: expected true or false, got \"maybe\""}},
    {"no_collect_metrics_op",
     "name: X\nops:" + nodes_op + "- opcode: createPods\n  count: 1\n  podTemplatePath: templates/pod.yaml\n",
     {"W: ops: no createPods op has collectMetrics: true"}},
    {"threshold_negative", "name: X\nthreshold: -1\nops:" + nodes_op + measured,
     {"W: threshold: expected a non-negative number"}},
    {"label_values_empty",
     "name: X\nops:\n- opcode: createNodes\n  count: 5\n  nodeTemplatePath: templates/node.yaml\n"
     "  labelNodePrepareStrategy: {labelKey: zone, labelValues: []}\n" + measured,
     {"W: ops[0].labelNodePrepareStrategy.labelValues: expected a non-empty list of strings"}},
    {"not_a_mapping", "- just\n- a list\n", {"W: expected a workload (a mapping), got a list"}},
    {"invalid_yaml", "name: X\nops:\n  - opcode: barrier\n - opcode: x\n", {"W: line 4: invalid YAML: "}},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, BadWorkloadTest, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<bad_case>& i) { return i.param.name; });

TEST(BadWorkload, MissingFileNamesIt) {
  std::string path = scratch("missing").string() + "/no-such-workload.yaml";
  auto w = load_workload(path);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.err().message, path + ": cannot read the file");
}

}  // namespace
}  // namespace kas

// Bench workloads with gangs: a createPods op's podGroup makes one PodGroup per gang (either API)
// that reaches the cluster's objects with the op, and puts each pod in its gang; the shipped gang
// workloads have the sizes issue #16 asks for; every bad podGroup is one error naming the field.
#include "config/workload.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kas {
namespace {

namespace fs = std::filesystem;

// --- the shipped gang workloads ------------------------------------------------------------------

TEST(ShippedGangWorkloads, GangSizesSpanEightTo512) {
  auto w = load_workload(std::string(KAS_BENCH_WORKLOADS) + "/gang-scheduling.yaml");
  ASSERT_TRUE(w) << w.err().message;
  std::vector<size_t> sizes;
  for (auto& op : w->ops)
    if (op.gang) {
      sizes.push_back(op.gang->size);
      EXPECT_EQ(op.gang->min_count, static_cast<int32_t>(op.gang->size)) << "minCount defaults to size";
      EXPECT_EQ(op.gang->api, pod_group_api::workload);
      EXPECT_TRUE(op.gang->topology_key.empty());
      EXPECT_TRUE(op.collect_metrics);
    }
  EXPECT_EQ(sizes, (std::vector<size_t>{8, 32, 128, 512}));
  EXPECT_EQ(w->gang_count(), 320u + 80 + 20 + 5);
  // The last op's objects hold every gang of the workload.
  EXPECT_EQ(w->ops.back().objects->pod_groups.size(), w->gang_count());
}

TEST(ShippedGangWorkloads, TopologyVariantKeysEveryGangByZone) {
  auto w = load_workload(std::string(KAS_BENCH_WORKLOADS) + "/gang-scheduling-topology.yaml");
  ASSERT_TRUE(w) << w.err().message;
  size_t with_key = 0;
  for (auto& [key, g] : w->ops.back().objects->pod_groups) {
    EXPECT_EQ(g->topology_keys, std::vector<std::string>{"topology.kubernetes.io/zone"}) << key;
    ++with_key;
  }
  EXPECT_EQ(with_key, 425u);
  auto n = make_node(*w->ops[0].nodes, 7);
  ASSERT_TRUE(n) << n.err().message;
  ASSERT_NE((*n)->labels.get("topology.kubernetes.io/zone"), nullptr) << "the nodes carry the key";
}

TEST(ShippedGangWorkloads, BaselinesHaveTheSamePodsWithoutGangs) {
  for (auto [gangs, plain] : {std::pair{"gang-scheduling.yaml", "gang-baseline-plain.yaml"},
                              std::pair{"gang-mixed-fill.yaml", "gang-mixed-fill-baseline.yaml"}}) {
    auto g = load_workload(std::string(KAS_BENCH_WORKLOADS) + "/" + gangs);
    auto p = load_workload(std::string(KAS_BENCH_WORKLOADS) + "/" + plain);
    ASSERT_TRUE(g && p);
    EXPECT_EQ(p->gang_count(), 0u) << plain;
    ASSERT_EQ(g->ops.size(), p->ops.size()) << plain;
    for (size_t i = 0; i < g->ops.size(); ++i) {
      EXPECT_EQ(g->ops[i].count, p->ops[i].count) << plain << " ops[" << i << "]";
      EXPECT_EQ(g->ops[i].collect_metrics, p->ops[i].collect_metrics) << plain << " ops[" << i << "]";
      EXPECT_EQ(g->ops[i].skip_wait, p->ops[i].skip_wait) << plain << " ops[" << i << "]";
      if (g->ops[i].pods) {
        EXPECT_EQ(g->ops[i].pods->compiled->requests.milli_cpu, p->ops[i].pods->compiled->requests.milli_cpu);
      }
    }
  }
}

TEST(ShippedGangWorkloads, MixedFillTakesNinetyPercentOfTheCpu) {
  auto w = load_workload(std::string(KAS_BENCH_WORKLOADS) + "/gang-mixed-fill.yaml");
  ASSERT_TRUE(w) << w.err().message;
  auto n = make_node(*w->ops[0].nodes, 0);
  ASSERT_TRUE(n) << n.err().message;
  int64_t cluster_cpu = (*n)->allocatable.milli_cpu * static_cast<int64_t>(w->node_count());
  int64_t pods_cpu = 0;
  for (auto& op : w->ops)
    if (op.pods) pods_cpu += op.pods->compiled->requests.milli_cpu * static_cast<int64_t>(op.count);
  EXPECT_EQ(pods_cpu * 10, cluster_cpu * 9);
  EXPECT_GT(w->gang_count(), 0u);
}

// --- scratch workloads --------------------------------------------------------------------------

fs::path scratch(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("kas_workload_gangs_" + std::to_string(::getpid()) + "_" + name);
  fs::create_directories(d / "templates");
  return d;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string scratch_workload(const std::string& name, const std::string& text) {
  fs::path d = scratch(name);
  write(d / "templates/node.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {generateName: n-}\nstatus:\n  capacity: {pods: '110', cpu: '4', "
        "memory: 32Gi}\n");
  write(d / "templates/pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-, labels: {app: a}}\nspec:\n"
        "  containers: [{name: c, image: i}]\n");
  write(d / "templates/grouped-pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\nspec:\n  schedulingGroup: {podGroupName: mine}\n"
        "  containers: [{name: c, image: i}]\n");
  write(d / "templates/pv.yaml",
        "apiVersion: v1\nkind: PersistentVolume\nspec:\n  accessModes: [ReadWriteOnce]\n  capacity: {storage: 1Gi}\n"
        "  csi: {driver: example.csi.k8s.io}\n");
  write(d / "templates/pvc.yaml",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  annotations: {pv.kubernetes.io/bind-completed: "
        "'true'}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n");
  write(d / "templates/namespace.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: extra}\n");
  write(d / "templates/namespace-later.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: later}\n");
  std::string path = (d / "w.yaml").string();
  write(path, text);
  return path;
}

const std::string nodes_op = "- {opcode: createNodes, count: 2, nodeTemplatePath: templates/node.yaml}\n";

// createPods of `count` pods with podGroup `group`, after the nodes.
std::string gang_ops(size_t count, const std::string& group, const std::string& extra = "") {
  return nodes_op + "- {opcode: createPods, count: " + std::to_string(count) +
         ", podTemplatePath: templates/pod.yaml, collectMetrics: true, podGroup: " + group + extra + "}\n";
}

TEST(GangWorkload, WorkloadApiGroupsAndPodsJoinThroughSchedulingGroup) {
  auto w = load_workload(scratch_workload(
    "workload_api", "name: G\nops:\n" + gang_ops(6, "{size: 3, minCount: 2, topologyKey: topology.kubernetes.io/zone}")));
  ASSERT_TRUE(w) << w.err().message;
  const workload_op& op = w->ops[1];
  ASSERT_TRUE(op.gang);
  ASSERT_TRUE(op.objects) << "the op carries the cluster's objects with its PodGroups";
  EXPECT_EQ(w->gang_count(), 2u);
  ASSERT_EQ(op.objects->pod_groups.size(), 2u);
  const pod_group* g1 = op.objects->pod_group_of(pod_group_key(pod_group_api::workload, "namespace-1", "gang-1-1"));
  ASSERT_NE(g1, nullptr);
  EXPECT_TRUE(g1->gang);
  EXPECT_EQ(g1->min_count, 2);
  EXPECT_EQ(g1->topology_keys, std::vector<std::string>{"topology.kubernetes.io/zone"});
  // Pods 0-2 in gang-1-0, 3-5 in gang-1-1, named by the run's pod number.
  auto p = make_gang_pod(*op.pods, *op.gang, 10, 4);
  EXPECT_EQ(p->name, "p-10");
  EXPECT_EQ(p->uid, "namespace-1/p-10");
  EXPECT_EQ(p->group_api, pod_group_api::workload);
  EXPECT_EQ(p->group_name, "gang-1-1");
  EXPECT_EQ(p->group_key, pod_group_key(*g1));
  EXPECT_EQ(p->pod->spec().scheduling_group().pod_group_name(), "gang-1-1");
  EXPECT_EQ(make_gang_pod(*op.pods, *op.gang, 2, 2)->group_name, "gang-1-0");
  EXPECT_FALSE(op.pods->compiled->in_group()) << "the template itself is untouched";
}

TEST(GangWorkload, CoschedulingApiGroupsAndPodsJoinThroughTheLabel) {
  auto w = load_workload(scratch_workload("cosched", "name: G\nops:\n" + gang_ops(4, "{size: 4, api: coscheduling}")));
  ASSERT_TRUE(w) << w.err().message;
  const workload_op& op = w->ops[1];
  const pod_group* g = op.objects->pod_group_of(pod_group_key(pod_group_api::coscheduling, "namespace-1", "gang-1-0"));
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->api, pod_group_api::coscheduling);
  EXPECT_EQ(g->min_count, 4) << "minCount defaults to size";
  auto p = make_gang_pod(*op.pods, *op.gang, 0, 3);
  EXPECT_EQ(p->group_api, pod_group_api::coscheduling);
  EXPECT_EQ(p->group_key, pod_group_key(*g));
  ASSERT_NE(p->labels.get(coscheduling_pod_group_label), nullptr);
  EXPECT_EQ(*p->labels.get(coscheduling_pod_group_label), "gang-1-0");
  ASSERT_NE(p->labels.get("app"), nullptr) << "the template's labels stay";
  EXPECT_EQ(p->pod->metadata().labels().at(coscheduling_pod_group_label), "gang-1-0");
  EXPECT_FALSE(p->pod->spec().has_scheduling_group());
}

TEST(GangWorkload, GroupsAccumulateWithCreateAnyObjects) {
  auto w = load_workload(scratch_workload(
    "accumulate", "name: G\nops:\n- {opcode: createAny, templatePath: templates/namespace.yaml}\n" + gang_ops(2, "{size: 2}") +
                    "- {opcode: createPods, count: 4, podTemplatePath: templates/pod.yaml, podGroup: {size: 2}}\n"
                    "- {opcode: createAny, templatePath: templates/namespace-later.yaml}\n"));
  ASSERT_TRUE(w) << w.err().message;
  EXPECT_EQ(w->ops[2].objects->pod_groups.size(), 1u);
  EXPECT_NE(w->ops[2].objects->namespace_labels_of("extra"), nullptr) << "the createAny's objects stay";
  EXPECT_EQ(w->ops[3].objects->pod_groups.size(), 3u);
  EXPECT_NE(w->ops[3].objects->pod_group_of(pod_group_key(pod_group_api::workload, "namespace-3", "gang-3-1")), nullptr);
  EXPECT_EQ(w->ops[4].objects->pod_groups.size(), 3u) << "a later createAny keeps the gangs";
  EXPECT_EQ(w->gang_count(), 3u);
}

TEST(GangWorkload, CompetingSetsGatherGangsAcrossOpsAndApis) {
  auto w = load_workload(scratch_workload(
    "competing", "name: G\nops:\n" + nodes_op +
                   "- {opcode: createPods, count: 8, podTemplatePath: templates/pod.yaml, collectMetrics: true, "
                   "skipWaitToCompletion: true, podGroup: {size: 4, competingSet: p0}}\n"
                   "- {opcode: createPods, count: 4, podTemplatePath: templates/pod.yaml, collectMetrics: true, "
                   "skipWaitToCompletion: true, podGroup: {size: 4, minCount: 3, competingSet: p1}}\n"
                   "- {opcode: createPods, count: 4, podTemplatePath: templates/pod.yaml, collectMetrics: true, "
                   "skipWaitToCompletion: true, podGroup: {size: 4, api: coscheduling, competingSet: p1}}\n"
                   "- {opcode: barrier}\n"));
  ASSERT_TRUE(w) << w.err().message;
  ASSERT_EQ(w->competing_sets.size(), 2u);
  const competing_set& p0 = w->competing_sets[0];
  EXPECT_EQ(p0.name, "p0");
  EXPECT_EQ(p0.group_keys, (std::vector<std::string>{pod_group_key(pod_group_api::workload, "namespace-1", "gang-1-0"),
                                                     pod_group_key(pod_group_api::workload, "namespace-1", "gang-1-1")}));
  EXPECT_EQ(p0.pods, 8u);
  const competing_set& p1 = w->competing_sets[1];
  EXPECT_EQ(p1.group_keys,
            (std::vector<std::string>{pod_group_key(pod_group_api::workload, "namespace-2", "gang-2-0"),
                                      pod_group_key(pod_group_api::coscheduling, "namespace-3", "gang-3-0")}));
  EXPECT_EQ(p1.smallest_min_count, 3u);
  // The barrier waits for 4 of p0's 8 pods and 3 of p1's 8: 9 may stay pending.
  EXPECT_EQ(w->ops[4].barrier_may_stay_pending, 4u + 5u);
  EXPECT_EQ(w->ops[1].gang->competing_set, "p0");
}

TEST(ShippedGangWorkloads, CompetingWorkloadsPairGangsOfBothApis) {
  for (const char* file : {"gang-competing.yaml", "gang-competing-ci.yaml"}) {
    auto w = load_workload(std::string(KAS_BENCH_WORKLOADS) + "/" + file);
    ASSERT_TRUE(w) << w.err().message;
    EXPECT_GE(w->competing_sets.size(), 3u) << file;
    std::set<pod_group_api> apis;
    for (auto& op : w->ops)
      if (op.gang) {
        EXPECT_FALSE(op.gang->competing_set.empty()) << file << ": " << op.where;
        apis.insert(op.gang->api);
      }
    EXPECT_EQ(apis.size(), 2u) << file << ": both PodGroup APIs";
    for (auto& set : w->competing_sets) EXPECT_GE(set.group_keys.size(), 2u) << file << ": " << set.name;
  }
}

// --- bad inputs ---------------------------------------------------------------------------------

struct bad_case {
  std::string name;
  std::string ops;                // the workload's ops (after "name: X\nops:\n")
  std::vector<std::string> want;  // substrings of the one error; a leading "W" stands for the file's path
};

class BadGangWorkloadTest : public ::testing::TestWithParam<bad_case> {};

TEST_P(BadGangWorkloadTest, NamesFileAndFieldPath) {
  const bad_case& c = GetParam();
  std::string path = scratch_workload("bad_" + c.name, "name: X\nops:\n" + c.ops);
  auto w = load_workload(path);
  ASSERT_FALSE(w) << "expected an error";
  const std::string& msg = w.err().message;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << "must start with the file: " << msg;
  for (std::string want : c.want) {
    if (want.rfind("W", 0) == 0) want = path + want.substr(1);
    EXPECT_NE(msg.find(want), std::string::npos) << "missing \"" << want << "\" in: " << msg;
  }
}

std::vector<bad_case> bad_cases() {
  const std::string pg = "W: ops[1].podGroup";
  return {
    {"not_a_mapping", gang_ops(4, "8"), {pg + ": expected a mapping, got a scalar"}},
    {"unknown_field", gang_ops(4, "{size: 4, minMember: 2}"), {pg + ".minMember: unknown field"}},
    {"size_missing", gang_ops(4, "{minCount: 2}"), {pg + ".size: required field is missing"}},
    {"size_zero", gang_ops(4, "{size: 0}"), {pg + ".size: must be between 1 and 100000, got 0"}},
    {"size_not_a_number", gang_ops(4, "{size: many}"), {pg + ".size: expected an integer, got \"many\""}},
    {"size_does_not_divide_count", gang_ops(10, "{size: 4}"),
     {pg + ".size: must divide the op's count (10) into whole gangs, got 4"}},
    {"min_count_zero", gang_ops(4, "{size: 4, minCount: 0}"), {pg + ".minCount: must be between 1 and 4, got 0"}},
    {"min_count_over_size", gang_ops(4, "{size: 4, minCount: 5}"), {pg + ".minCount: must be between 1 and 4, got 5"}},
    {"api_unknown", gang_ops(4, "{size: 4, api: volcano}"), {pg + ".api: must be workload or coscheduling, got \"volcano\""}},
    {"api_a_list", gang_ops(4, "{size: 4, api: [workload]}"), {pg + ".api: expected a string, got a list"}},
    {"topology_key_invalid", gang_ops(4, "{size: 4, topologyKey: 'not a key'}"),
     {pg + ".topologyKey: invalid label key \"not a key\""}},
    {"topology_key_with_coscheduling", gang_ops(4, "{size: 4, api: coscheduling, topologyKey: zone}"),
     {pg + ".topologyKey: api: coscheduling has no topology constraint"}},
    {"template_already_grouped",
     nodes_op + "- {opcode: createPods, count: 2, podTemplatePath: templates/grouped-pod.yaml, collectMetrics: true, "
                "podGroup: {size: 2}}\n",
     {pg + ": ", "grouped-pod.yaml: the pod template already belongs to pod group \"mine\""}},
    {"with_volume_templates",
     gang_ops(2, "{size: 2}", ", persistentVolumeTemplatePath: templates/pv.yaml, "
                              "persistentVolumeClaimTemplatePath: templates/pvc.yaml"),
     {pg + ": pod groups and persistentVolumeTemplatePath do not go together"}},
    {"after_volume_pods",
     nodes_op + "- {opcode: createPods, count: 1, podTemplatePath: templates/pod.yaml, persistentVolumeTemplatePath: "
                "templates/pv.yaml, persistentVolumeClaimTemplatePath: templates/pvc.yaml}\n"
                "- {opcode: createPods, count: 2, podTemplatePath: templates/pod.yaml, collectMetrics: true, podGroup: "
                "{size: 2}}\n",
     {"W: ops[2].podGroup: a createPods with podGroup cannot follow ", "ops[1], which created storage objects"}},
    {"competing_set_empty", gang_ops(4, "{size: 2, competingSet: ''}", ", skipWaitToCompletion: true"),
     {pg + ".competingSet: must name a set, got \"\""}},
    {"competing_set_a_list", gang_ops(4, "{size: 2, competingSet: [a]}", ", skipWaitToCompletion: true"),
     {pg + ".competingSet: expected a string, got a list"}},
    {"competing_set_waits_per_op", gang_ops(4, "{size: 2, competingSet: p0}") + "- {opcode: barrier}\n",
     {pg + ".competingSet: needs skipWaitToCompletion: true"}},
    {"competing_set_of_one_gang", gang_ops(4, "{size: 4, competingSet: p0}", ", skipWaitToCompletion: true") +
                                    "- {opcode: barrier}\n",
     {pg + ".competingSet: competing set \"p0\" has one gang; it needs at least two"}},
    {"competing_set_without_barrier", gang_ops(4, "{size: 2, competingSet: p0}", ", skipWaitToCompletion: true"),
     {pg + ".competingSet: no barrier after competing set \"p0\""}},
    {"competing_set_split_by_a_barrier",
     gang_ops(2, "{size: 2, competingSet: p0}", ", skipWaitToCompletion: true") +
       "- {opcode: barrier}\n- {opcode: createPods, count: 2, podTemplatePath: templates/pod.yaml, "
       "skipWaitToCompletion: true, podGroup: {size: 2, competingSet: p0}}\n- {opcode: barrier}\n",
     {"W: ops[3].podGroup.competingSet: competing set \"p0\" already ended at the barrier ops[2]"}},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, BadGangWorkloadTest, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<bad_case>& i) { return i.param.name; });

}  // namespace
}  // namespace kas

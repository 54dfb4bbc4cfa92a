// Bench workloads with storage objects: createNodes' nodeAllocatableStrategy (node allocatable and a
// CSINode per node) and createPods' volume templates (a claim and a volume per pod), stamped as
// scheduler_perf's NodeAllocatableStrategy and CreatePodWithPersistentVolume make them; and every
// bad input as one error naming the file and the field path.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/workload.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/storage.pb.h"

namespace kas {
namespace {

namespace fs = std::filesystem;

std::string shipped(const std::string& file) { return std::string(KAS_BENCH_WORKLOADS) + "/" + file; }

// --- the shipped volume workloads ---------------------------------------------------------------

TEST(ShippedVolumeWorkloads, InTreePVsBindEachPodToItsOwnEbsVolume) {
  auto w = load_workload(shipped("scheduling-in-tree-pvs.yaml"));
  ASSERT_TRUE(w) << w.err().message;
  ASSERT_EQ(w->ops.size(), 3u);
  EXPECT_FALSE(w->ops[0].nodes->allocatable) << "no nodeAllocatableStrategy: no CSINode";
  auto csi = make_csi_node(*w->ops[0].nodes, "node-0-0");
  ASSERT_TRUE(csi) << csi.err().message;
  EXPECT_EQ(*csi, nullptr);
  ASSERT_TRUE(w->ops[2].volumes);
  EXPECT_EQ(w->ops[2].volumes->ns, "namespace-2");

  auto p = make_pod_with_volumes(*w->ops[2].pods, *w->ops[2].volumes, 1003, 3);
  ASSERT_TRUE(p) << p.err().message;
  const pv_info& pv = *p->volume;
  EXPECT_EQ(pv.name, "namespace-2-vol-3");
  EXPECT_EQ(pv.source.kind, volume_source::aws_ebs);
  EXPECT_EQ(pv.source.id, "vol-3") << "scheduler_perf's factory id, not namespaced for EBS";
  EXPECT_EQ(pv.phase, "Bound");
  ASSERT_TRUE(pv.claim_ref);
  EXPECT_EQ(pv.claim_ref->ns, "namespace-2");
  EXPECT_EQ(pv.claim_ref->name, "pvc-3");
  EXPECT_EQ(pv.pv->spec().claim_ref().kind(), "PersistentVolumeClaim");
  EXPECT_EQ(pv.access_modes, access_rox);
  EXPECT_EQ(pv.capacity_bytes, int64_t(1) << 30);

  const pvc_info& claim = *p->claim;
  EXPECT_EQ(claim.key(), "namespace-2/pvc-3");
  EXPECT_EQ(claim.volume_name, "namespace-2-vol-3");
  EXPECT_EQ(claim.phase, "Bound");
  // The template's annotation, as scheduler_perf writes it ("true"; VolumeBinding checks presence).
  EXPECT_EQ(claim.pvc->metadata().annotations().at("pv.kubernetes.io/bind-completed"), "true");
  EXPECT_FALSE(claim.storage_class) << "neither template names a class";

  const pod_info& pod = *p->pod;
  EXPECT_EQ(pod.key(), "namespace-2/pod-1003");
  ASSERT_EQ(pod.volumes.size(), 1u);
  EXPECT_EQ(pod.volumes[0].name, "vol");
  EXPECT_EQ(pod.volumes[0].claim_name, "pvc-3");
  ASSERT_EQ(pod.pod->spec().volumes_size(), 1);
  EXPECT_EQ(pod.pod->spec().volumes(0).volume_source().persistent_volume_claim().claim_name(), "pvc-3")
    << "the API object a --kubeconfig run posts names the claim too";
  EXPECT_EQ(pod.requests.milli_cpu, 100);
  EXPECT_EQ(w->ops[2].pods->compiled->volumes[0].claim_name, "pvc-template") << "the template is unchanged";
}

TEST(ShippedVolumeWorkloads, MigratedInTreePVsGiveEveryNodeAnEbsCsiNode) {
  auto w = load_workload(shipped("scheduling-migrated-in-tree-pvs.yaml"));
  ASSERT_TRUE(w) << w.err().message;
  auto n = make_node(*w->ops[0].nodes, 7);
  ASSERT_TRUE(n) << n.err().message;
  EXPECT_EQ((*n)->name, "scheduler-perf-7");
  // The template has capacity only: allocatable starts as a copy of it, then the strategy's entry.
  EXPECT_EQ((*n)->allocatable.milli_cpu, 4000);
  EXPECT_EQ((*n)->allocatable.allowed_pod_number, 110);
  EXPECT_EQ((*n)->node->status().allocatable().at("attachable-volumes-csi-ebs.csi.aws.com").string(), "39");
  EXPECT_EQ((*n)->node->status().allocatable().at("cpu").string(), "4");

  auto c = make_csi_node(*w->ops[0].nodes, (*n)->name);
  ASSERT_TRUE(c) << c.err().message;
  ASSERT_TRUE(*c);
  const csi_node_info& csi = **c;
  EXPECT_EQ(csi.name, "scheduler-perf-7");
  ASSERT_EQ(csi.drivers.size(), 1u);
  EXPECT_EQ(csi.drivers[0].name, "ebs.csi.aws.com");
  EXPECT_EQ(csi.drivers[0].node_id, "scheduler-perf-7");
  ASSERT_TRUE(csi.drivers[0].allocatable_count);
  EXPECT_EQ(*csi.drivers[0].allocatable_count, 39);
  EXPECT_EQ(csi.migrated_plugins, std::vector<std::string>{"kubernetes.io/aws-ebs"});

  auto p = make_pod_with_volumes(*w->ops[1].pods, *w->ops[1].volumes, 0, 0);
  ASSERT_TRUE(p) << p.err().message;
  EXPECT_EQ(p->volume->name, "namespace-1-vol-0");
  EXPECT_EQ(p->volume->source.kind, volume_source::aws_ebs);
}

TEST(ShippedVolumeWorkloads, CsiPVsUseTheVolumeNameAsHandle) {
  auto w = load_workload(shipped("scheduling-csi-pvs.yaml"));
  ASSERT_TRUE(w) << w.err().message;
  auto c = make_csi_node(*w->ops[0].nodes, "scheduler-perf-0");
  ASSERT_TRUE(c) << c.err().message;
  ASSERT_TRUE(*c);
  EXPECT_TRUE((*c)->migrated_plugins.empty());
  // scheduler_perf sets the annotation even with no migrated plugin.
  EXPECT_EQ((*c)->csi_node->metadata().annotations().at("storage.alpha.kubernetes.io/migrated-plugins"), "");

  auto a = make_pod_with_volumes(*w->ops[1].pods, *w->ops[1].volumes, 0, 0);
  auto b = make_pod_with_volumes(*w->ops[2].pods, *w->ops[2].volumes, 5000, 0);
  ASSERT_TRUE(a) << a.err().message;
  ASSERT_TRUE(b) << b.err().message;
  EXPECT_EQ(a->volume->source.kind, volume_source::csi);
  EXPECT_EQ(a->volume->source.driver, "ebs.csi.aws.com");
  EXPECT_EQ(a->volume->source.id, "namespace-1-vol-0");
  EXPECT_EQ(b->volume->source.id, "namespace-2-vol-0") << "the two ops' volumes stay distinct";
  EXPECT_EQ(b->claim->key(), "namespace-2/pvc-0");
}

// --- scratch workloads --------------------------------------------------------------------------

fs::path scratch(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("kas_workload_volumes_" + std::to_string(::getpid()) + "_" + name);
  fs::create_directories(d / "templates");
  return d;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

const char* node_yaml = R"(apiVersion: v1
kind: Node
metadata: {generateName: n-}
status:
  capacity: {pods: "110", cpu: "4", memory: 32Gi}
)";

// A pod with volumes of its own: a volume op replaces them with its claim.
const char* pod_yaml = R"(apiVersion: v1
kind: Pod
metadata: {generateName: p-}
spec:
  containers: [{name: c, image: i}]
  volumes:
  - {name: secret, secret: {secretName: s}}
  - {name: data, persistentVolumeClaim: {claimName: data}}
)";

const char* pv_yaml = R"(apiVersion: v1
kind: PersistentVolume
spec:
  accessModes: [ReadWriteOnce]
  capacity: {storage: 1Gi}
  csi: {driver: example.csi.k8s.io}
)";

const char* pvc_yaml = R"(apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  annotations: {pv.kubernetes.io/bind-completed: "true"}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
)";

std::string scratch_workload(const std::string& name, const std::string& text) {
  fs::path d = scratch(name);
  write(d / "templates/node.yaml", node_yaml);
  write(d / "templates/pod.yaml", pod_yaml);
  write(d / "templates/pv.yaml", pv_yaml);
  write(d / "templates/pvc.yaml", pvc_yaml);
  write(d / "templates/pv-bad-capacity.yaml",
        "apiVersion: v1\nkind: PersistentVolume\nspec:\n  capacity: {storage: lots}\n  csi: {driver: d}\n");
  write(d / "templates/pv-bad-access-mode.yaml",
        "apiVersion: v1\nkind: PersistentVolume\nspec:\n  accessModes: [ReadSometimes]\n  capacity: {storage: 1Gi}\n"
        "  csi: {driver: d}\n");
  write(d / "templates/storageclass.yaml",
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: example.csi.k8s.io\n"
        "volumeBindingMode: WaitForFirstConsumer\n");
  std::string path = (d / "w.yaml").string();
  write(path, text);
  return path;
}

const std::string nodes_op = "- {opcode: createNodes, count: 2, nodeTemplatePath: templates/node.yaml}\n";
const std::string volume_pods_op =
  "- {opcode: createPods, count: 2, podTemplatePath: templates/pod.yaml, persistentVolumeTemplatePath: "
  "templates/pv.yaml, persistentVolumeClaimTemplatePath: templates/pvc.yaml, collectMetrics: true}\n";

TEST(VolumeWorkload, PodVolumesAreReplacedByTheOneClaim) {
  auto w = load_workload(scratch_workload("replaced", "name: R\nops:\n" + nodes_op + volume_pods_op));
  ASSERT_TRUE(w) << w.err().message;
  auto p = make_pod_with_volumes(*w->ops[1].pods, *w->ops[1].volumes, 0, 1);
  ASSERT_TRUE(p) << p.err().message;
  ASSERT_EQ(p->pod->volumes.size(), 1u);
  EXPECT_EQ(p->pod->volumes[0].claim_name, "pvc-1");
  EXPECT_EQ(p->pod->pod->spec().volumes(0).name(), "vol");
  EXPECT_EQ(p->volume->source.id, "namespace-1-vol-1");
  EXPECT_EQ(p->volume->access_modes, access_rwo);
}

TEST(VolumeWorkload, PodTemplateWithItsOwnClaimLoads) {
  // Without volume templates a pod's own claims stay as written (the volume plugins handle them).
  auto w = load_workload(scratch_workload(
    "own_claim", "name: O\nops:\n" + nodes_op +
                   "- {opcode: createPods, count: 1, podTemplatePath: templates/pod.yaml, collectMetrics: true}\n"));
  ASSERT_TRUE(w) << w.err().message;
  EXPECT_FALSE(w->ops[1].volumes);
  ASSERT_EQ(w->ops[1].pods->compiled->volumes.size(), 2u);
  EXPECT_EQ(w->ops[1].pods->compiled->volumes[1].claim_name, "data");
}

TEST(VolumeWorkload, CsiDriversInNameOrderAndCountOptional) {
  auto w = load_workload(scratch_workload("drivers", R"(name: D
ops:
- opcode: createNodes
  count: 1
  nodeTemplatePath: templates/node.yaml
  nodeAllocatableStrategy:
    csiNodeAllocatable:
      z.csi.k8s.io: {count: 0}
      a.csi.k8s.io:
)" + volume_pods_op));
  ASSERT_TRUE(w) << w.err().message;
  auto n = make_node(*w->ops[0].nodes, 0);
  ASSERT_TRUE(n) << n.err().message;
  EXPECT_TRUE((*n)->node->status().allocatable().empty()) << "no nodeAllocatable: the node is left as it is";
  auto c = make_csi_node(*w->ops[0].nodes, "n-0");
  ASSERT_TRUE(c && *c);
  ASSERT_EQ((*c)->drivers.size(), 2u);
  EXPECT_EQ((*c)->drivers[0].name, "a.csi.k8s.io");
  EXPECT_FALSE((*c)->drivers[0].allocatable_count);
  EXPECT_EQ((*c)->drivers[1].name, "z.csi.k8s.io");
  ASSERT_TRUE((*c)->drivers[1].allocatable_count);
  EXPECT_EQ(*(*c)->drivers[1].allocatable_count, 0);
}

TEST(VolumeWorkload, CreateAnyTakesStorageClasses) {
  auto w = load_workload(scratch_workload(
    "storageclass", "name: S\nops:\n- {opcode: createAny, templatePath: templates/storageclass.yaml}\n" + nodes_op +
                      volume_pods_op));
  ASSERT_TRUE(w) << w.err().message;
  ASSERT_TRUE(w->ops[0].objects);
  const storage_class_info* sc = w->ops[0].objects->volumes.storage_class("fast");
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(sc->binding_mode, volume_binding_mode::wait_for_first_consumer);
}

// --- bad inputs ---------------------------------------------------------------------------------

struct bad_case {
  std::string name;
  std::string ops;                // the workload's ops (after "name: X\nops:\n")
  std::vector<std::string> want;  // substrings of the one error; a leading "W" stands for the file's path
};

class BadVolumeWorkloadTest : public ::testing::TestWithParam<bad_case> {};

TEST_P(BadVolumeWorkloadTest, NamesFileAndFieldPath) {
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

// createNodes with `strategy` as its nodeAllocatableStrategy, then the volume pods.
std::string allocatable_ops(const std::string& strategy) {
  return "- opcode: createNodes\n  count: 1\n  nodeTemplatePath: templates/node.yaml\n  nodeAllocatableStrategy: " +
         strategy + "\n" + volume_pods_op;
}

// createPods with these extra fields, after the nodes.
std::string pods_ops(const std::string& fields) {
  return nodes_op + "- {opcode: createPods, count: 1, podTemplatePath: templates/pod.yaml, collectMetrics: true, " +
         fields + "}\n";
}

std::vector<bad_case> bad_cases() {
  const std::string alloc = "W: ops[0].nodeAllocatableStrategy";
  return {
    {"pv_template_alone", pods_ops("persistentVolumeTemplatePath: templates/pv.yaml"),
     {"W: ops[1].persistentVolumeClaimTemplatePath: required field is missing", "go together"}},
    {"claim_template_alone", pods_ops("persistentVolumeClaimTemplatePath: templates/pvc.yaml"),
     {"W: ops[1].persistentVolumeTemplatePath: required field is missing"}},
    {"pv_template_holds_a_pod",
     pods_ops("persistentVolumeTemplatePath: templates/pod.yaml, persistentVolumeClaimTemplatePath: templates/pvc.yaml"),
     {"W: ops[1].persistentVolumeTemplatePath: ", "templates/pod.yaml: a volume template must hold exactly one "
                                                  "PersistentVolume"}},
    {"claim_template_holds_a_volume",
     pods_ops("persistentVolumeTemplatePath: templates/pv.yaml, persistentVolumeClaimTemplatePath: templates/pv.yaml"),
     {"W: ops[1].persistentVolumeClaimTemplatePath: ", "a claim template must hold exactly one PersistentVolumeClaim"}},
    {"pv_template_missing_file",
     pods_ops("persistentVolumeTemplatePath: templates/nope.yaml, persistentVolumeClaimTemplatePath: templates/pvc.yaml"),
     {"W: ops[1].persistentVolumeTemplatePath: ", "templates/nope.yaml", "cannot read"}},
    {"pv_template_bad_capacity",
     pods_ops("persistentVolumeTemplatePath: templates/pv-bad-capacity.yaml, persistentVolumeClaimTemplatePath: "
              "templates/pvc.yaml"),
     {"W: ops[1].persistentVolumeTemplatePath: ", "pv-bad-capacity.yaml", "spec.capacity.storage: "}},
    // Decodes, but the apiserver would refuse the stamped volume: the first pod's is compiled at load.
    {"pv_template_bad_access_mode",
     pods_ops("persistentVolumeTemplatePath: templates/pv-bad-access-mode.yaml, persistentVolumeClaimTemplatePath: "
              "templates/pvc.yaml"),
     {"W: ops[1]: PersistentVolume namespace-1-vol-0: spec.accessModes"}},
    {"strategy_not_a_mapping", allocatable_ops("[1]"), {alloc + ": expected a mapping, got a list"}},
    {"strategy_unknown_field", allocatable_ops("{csiNodeAlocatable: {}}"), {alloc + ".csiNodeAlocatable: unknown field"}},
    {"node_allocatable_bad_quantity", allocatable_ops("{nodeAllocatable: {attachable-volumes-csi-x: many}}"),
     {alloc + ".nodeAllocatable.attachable-volumes-csi-x: "}},
    {"node_allocatable_negative", allocatable_ops("{nodeAllocatable: {attachable-volumes-csi-x: \"-1\"}}"),
     {alloc + ".nodeAllocatable.attachable-volumes-csi-x: must be greater than or equal to 0"}},
    {"node_allocatable_a_list", allocatable_ops("{nodeAllocatable: [a]}"),
     {alloc + ".nodeAllocatable: expected a mapping, got a list"}},
    {"csi_count_negative", allocatable_ops("{csiNodeAllocatable: {ebs.csi.aws.com: {count: -1}}}"),
     {alloc + ".csiNodeAllocatable.ebs.csi.aws.com.count: must be between 0 and ", "got -1"}},
    {"csi_count_not_a_number", allocatable_ops("{csiNodeAllocatable: {ebs.csi.aws.com: {count: many}}}"),
     {alloc + ".csiNodeAllocatable.ebs.csi.aws.com.count: expected an integer, got \"many\""}},
    {"csi_driver_unknown_field", allocatable_ops("{csiNodeAllocatable: {ebs.csi.aws.com: {countt: 3}}}"),
     {alloc + ".csiNodeAllocatable.ebs.csi.aws.com.countt: unknown field"}},
    {"csi_driver_not_a_mapping", allocatable_ops("{csiNodeAllocatable: {ebs.csi.aws.com: 39}}"),
     {alloc + ".csiNodeAllocatable.ebs.csi.aws.com: expected a mapping ({count: N}), got a scalar"}},
    {"migrated_plugins_not_a_list", allocatable_ops("{migratedPlugins: kubernetes.io/aws-ebs}"),
     {alloc + ".migratedPlugins: expected a list of strings, got a scalar"}},
    {"migrated_plugin_empty", allocatable_ops("{migratedPlugins: [\"\"]}"),
     {alloc + ".migratedPlugins[0]: expected a plugin name"}},
    {"create_any_after_csi_nodes",
     "- opcode: createNodes\n  count: 1\n  nodeTemplatePath: templates/node.yaml\n  nodeAllocatableStrategy: "
     "{csiNodeAllocatable: {ebs.csi.aws.com: {count: 1}}}\n"
     "- {opcode: createAny, templatePath: templates/storageclass.yaml}\n" + volume_pods_op,
     {"W: ops[1]: a createAny cannot follow ", "ops[0], which created storage objects"}},
    {"create_any_after_volume_pods",
     nodes_op + volume_pods_op + "- {opcode: createAny, templatePath: templates/storageclass.yaml}\n",
     {"W: ops[2]: a createAny cannot follow ", "ops[1]"}},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, BadVolumeWorkloadTest, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<bad_case>& i) { return i.param.name; });

}  // namespace
}  // namespace kas

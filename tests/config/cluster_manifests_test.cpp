// Manifest loading for `simulate`: every bad input must come back as one error naming the file,
// the document (and List item) and the field path; every good shape kubectl prints must load.
#include "config/cluster_manifests.hpp"

#include <fstream>

#include <unistd.h>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kas {
namespace {

std::string fixture(const std::string& name) { return std::string(KAS_MANIFEST_FIXTURES) + "/" + name; }

// Writes `text` to a fresh file in the test temp dir and returns its path. The cases are built in
// every test process (ctest runs each test as its own process, in parallel), so the path carries
// the pid: a process must never read a file another one is rewriting.
std::string temp_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "kas_manifest_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Loads then compiles; returns the first error's text, or "" when both stages succeed.
std::string load_and_compile(const std::vector<std::string>& files) {
  auto m = load_manifests(files);
  if (!m) return m.err().message;
  auto c = compile_cluster(*m);
  if (!c) return c.err().message;
  return "";
}

struct error_case {
  std::string name;
  std::vector<std::string> files;
  std::vector<std::string> want;  // substrings of the one error message
};

class ManifestErrorTest : public ::testing::TestWithParam<error_case> {};

TEST_P(ManifestErrorTest, NamesFileDocumentAndField) {
  const error_case& c = GetParam();
  std::string msg = load_and_compile(c.files);
  ASSERT_FALSE(msg.empty()) << "expected an error";
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  for (auto& w : c.want) EXPECT_NE(msg.find(w), std::string::npos) << "missing \"" << w << "\" in: " << msg;
}

std::vector<error_case> error_cases() {
  return {
    {"missing_file", {"/nonexistent/cluster.yaml"}, {"/nonexistent/cluster.yaml: cannot read file: No such file"}},
    {"invalid_yaml", {fixture("bad-yaml.yaml")}, {"bad-yaml.yaml: document 2: line ", "invalid YAML: "}},
    {"invalid_yaml_inline",
     {temp_file("bad_indent.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n    labels: {}\n")},
     {"bad_indent.yaml: document 1: line 5, column ", "invalid YAML: "}},
    {"invalid_json", {fixture("bad-json.json")}, {"bad-json.json: line ", "invalid JSON: "}},
    {"no_kind", {fixture("no-kind.yaml")}, {"no-kind.yaml: document 2: kind: required field is missing"}},
    {"no_kind_in_list_item",
     {temp_file("no_kind_item.yaml", "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: a}\n")},
     {"no_kind_item.yaml: document 1 item 1: kind: required field is missing"}},
    {"not_a_mapping", {fixture("not-a-mapping.yaml")},
     {"not-a-mapping.yaml: document 2: expected a Kubernetes object (a mapping), got a list"}},
    {"items_not_a_list", {temp_file("items_map.yaml", "apiVersion: v1\nkind: List\nitems: {a: 1}\n")},
     {"items_map.yaml: document 1 (List): items: expected a list, got a mapping"}},
    {"no_name", {fixture("no-name.yaml")}, {"no-name.yaml: document 1 (Pod): metadata.name: required field is missing"}},
    {"wrong_api_group", {fixture("wrong-api-version.yaml")},
     {"wrong-api-version.yaml: document 1 (Pod default/web): apiVersion: \"apps/v1\"", "expected v1"}},
    {"duplicate_key", {fixture("duplicate-key.yaml")},
     {"duplicate-key.yaml: document 1 (Pod default/web): spec.containers[0]: line 9: key \"image\" already set"}},
    {"wrong_field_type", {fixture("wrong-type.yaml")}, {"wrong-type.yaml: document 2 (Pod default/web): spec.priority"}},
    {"bad_quantity", {fixture("bad-quantity.yaml")},
     {"bad-quantity.yaml: document 2 (Pod default/web): spec.containers[0].resources.requests.cpu"}},
    {"bad_node_quantity",
     {temp_file("bad_alloc.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                                  "status: {allocatable: {cpu: lots, pods: \"110\"}}\n")},
     {"bad_alloc.yaml: document 1 (Node n1): status.allocatable", "cpu"}},
    {"negative_request", {fixture("negative-request.yaml")},
     {"negative-request.yaml: document 2 (Pod shop/web): spec.containers[0].resources.requests.memory"}},
    {"duplicate_node", {fixture("duplicate-node.yaml")},
     {"duplicate-node.yaml: document 3 (Node n1): node \"n1\" is already defined in " +
      fixture("duplicate-node.yaml") + ": document 1 (Node n1)"}},
    {"duplicate_node_across_files",
     {temp_file("nodes_a.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"),
      temp_file("nodes_b.yaml", "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")},
     {"nodes_b.yaml: document 1 (Node n1): node \"n1\" is already defined in ", "nodes_a.yaml: document 1 (Node n1)"}},
    {"duplicate_pod", {fixture("duplicate-pod.yaml")},
     {"duplicate-pod.yaml: document 1 item 2 (Pod default/web): pod default/web is already defined in " +
      fixture("duplicate-pod.yaml") + ": document 1 item 1 (Pod default/web)"}},
    {"pod_on_unknown_node", {fixture("unknown-node.yaml")},
     {"unknown-node.yaml: document 2 (Pod default/x): spec.nodeName: node \"n9\" does not exist"}},
    {"unknown_priority_class", {fixture("unknown-priority-class.yaml")},
     {"unknown-priority-class.yaml: document 1 (Pod default/web): spec.priorityClassName: no PriorityClass with name gold"}},
    {"replicaset_without_selector",
     {temp_file("rs_nosel.yaml", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {replicas: 2}\n")},
     {"rs_nosel.yaml: document 1 (ReplicaSet default/rs): spec.selector: Required value"}},
    {"statefulset_empty_selector",
     {temp_file("ss_empty.yaml", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: ss}\nspec: {selector: {}}\n")},
     {"ss_empty.yaml: document 1 (StatefulSet default/ss): spec.selector: Invalid value: empty selector"}},
    {"replicaset_bad_operator",
     {temp_file("rs_op.yaml", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, namespace: x}\n"
                              "spec: {selector: {matchExpressions: [{key: a, operator: Gt, values: ['1']}]}}\n")},
     {"rs_op.yaml: document 1 (ReplicaSet x/rs): spec.selector.matchExpressions[0].operator: Invalid value: \"Gt\""}},
    {"replicaset_selector_wrong_type",
     {temp_file("rs_type.yaml", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\n"
                                "spec: {selector: {matchExpressions: {key: a}}}\n")},
     {"rs_type.yaml: document 1 (ReplicaSet default/rs): spec.selector.matchExpressions"}},
    {"statefulset_in_core_group",
     {temp_file("ss_core.yaml", "apiVersion: v1\nkind: StatefulSet\nmetadata: {name: ss}\n")},
     {"ss_core.yaml: document 1 (StatefulSet default/ss): apiVersion: \"v1\"", "expected apps/v1"}},
    {"service_selector_not_a_map",
     {temp_file("svc_list.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: [a]}\n")},
     {"svc_list.yaml: document 1 (Service default/s): spec.selector: expected an object, got a list"}},
    {"service_selector_value_not_a_string",
     {temp_file("svc_val.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: {app: {x: 1}}}\n")},
     {"svc_val.yaml: document 1 (Service default/s): spec.selector.app: expected a string, got an object"}},
    {"service_selector_bad_value",
     {temp_file("svc_bad.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: {app: -web}}\n")},
     {"svc_bad.yaml: document 1 (Service default/s): spec.selector: Invalid value: \"-web\""}},
    {"rc_without_selector_or_template_labels",
     {temp_file("rc.yaml", "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\n"
                           "spec: {template: {spec: {containers: [{name: c}]}}}\n")},
     {"rc.yaml: document 1 (ReplicationController default/rc): spec.selector: Required value"}},
    {"duplicate_service",
     {temp_file("svc_dup.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\n---\n"
                                "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\n")},
     {"svc_dup.yaml: document 2 (Service a/s): Service a/s is already defined in ", "svc_dup.yaml: document 1"}},
    {"pdb_both_bounds",
     {temp_file("pdb_both.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\n"
                                 "spec: {minAvailable: 1, maxUnavailable: 1, selector: {}}\n")},
     {"pdb_both.yaml: document 1 (PodDisruptionBudget default/p): spec: Invalid value: minAvailable and "
      "maxUnavailable cannot be both set"}},
    {"pdb_not_a_percentage",
     {temp_file("pdb_str.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\n"
                                "spec: {minAvailable: half, selector: {}}\n")},
     {"pdb_str.yaml: document 1 (PodDisruptionBudget default/p): spec.minAvailable: Invalid value: \"half\": must be "
      "an integer or percentage (e.g '5%')"}},
    {"pdb_negative",
     {temp_file("pdb_neg.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\n"
                                "spec: {maxUnavailable: -1, selector: {}}\n")},
     {"pdb_neg.yaml: document 1 (PodDisruptionBudget default/p): spec.maxUnavailable: Invalid value: -1: must be "
      "greater than or equal to 0"}},
    {"pdb_over_100_percent",
     {temp_file("pdb_pct.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\n"
                                "spec: {maxUnavailable: 150%, selector: {}}\n")},
     {"spec.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%"}},
    {"pdb_bad_selector",
     {temp_file("pdb_sel.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\n"
                                "spec: {minAvailable: 1, selector: {matchExpressions: [{key: a, operator: In}]}}\n")},
     {"pdb_sel.yaml: document 1 (PodDisruptionBudget default/p): spec.selector.matchExpressions[0].values: Required value"}},
    {"pdb_bad_eviction_policy",
     {temp_file("pdb_pol.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\n"
                                "spec: {minAvailable: 1, selector: {}, unhealthyPodEvictionPolicy: Sometimes}\n")},
     {"spec.unhealthyPodEvictionPolicy: Unsupported value: \"Sometimes\""}},
    {"pod_bad_affinity",
     {temp_file("pod_aff.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
                                "  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: z, "
                                "labelSelector: {matchExpressions: [{key: a, operator: Nope}]}}]}}\n")},
     {"pod_aff.yaml: document 1 (Pod default/p): spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
      ".labelSelector.matchExpressions[0].operator"}},
    {"nested_list",
     {temp_file("nested.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: PodList\n  items: []\n")},
     {"nested.yaml: document 1 item 1: kind PodList: a List inside a List is not supported"}},
  };
}

INSTANTIATE_TEST_SUITE_P(Errors, ManifestErrorTest, ::testing::ValuesIn(error_cases()),
                         [](const ::testing::TestParamInfo<error_case>& i) { return i.param.name; });

TEST(ManifestOrigin, Describe) {
  struct row {
    const char* name;
    manifest_origin o;
    const char* want;
  };
  const row rows[] = {
    {"pod", {"cluster.yaml", 3, -1, "Pod", "default", "web-1"}, "cluster.yaml: document 3 (Pod default/web-1)"},
    {"list_item", {"dump.yaml", 1, 2, "Node", "", "n1"}, "dump.yaml: document 1 item 2 (Node n1)"},
    {"no_kind_yet", {"x.yaml", 4, -1, "", "", ""}, "x.yaml: document 4"},
    {"no_name", {"x.yaml", 1, -1, "Pod", "default", ""}, "x.yaml: document 1 (Pod)"},
  };
  for (auto& r : rows) EXPECT_EQ(r.o.describe(), r.want) << r.name;
}

TEST(LoadManifests, MultiDocumentYaml) {
  auto m = load_manifests({fixture("multi-doc.yaml")});
  ASSERT_TRUE(m.ok()) << m.err().message;
  ASSERT_EQ(m->nodes.size(), 1u);
  ASSERT_EQ(m->pods.size(), 3u);
  EXPECT_EQ(m->namespaces.size(), 1u);
  EXPECT_EQ(m->priority_classes.size(), 1u);
  EXPECT_EQ(m->pdbs.size(), 1u);
  EXPECT_EQ(m->nodes[0].second.describe(), fixture("multi-doc.yaml") + ": document 1 (Node n1)");
  EXPECT_EQ(m->pods[1].second.describe(), fixture("multi-doc.yaml") + ": document 5 (Pod default/pending-b)");
  EXPECT_EQ(m->pods[1].first->metadata().namespace_(), "default");
  EXPECT_EQ(m->pdbs[0].first->metadata().namespace_(), "default");
  ASSERT_EQ(m->workloads.size(), 1u);  // the Service: read, but it has no selector
  EXPECT_TRUE(m->workloads[0].first.selector.nothing);
  ASSERT_EQ(m->warnings.size(), 1u);
  EXPECT_EQ(m->warnings[0],
            fixture("multi-doc.yaml") + ": document 7 (Deployment web): kind Deployment is not used by the scheduler; skipped");

  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  ASSERT_EQ(c->nodes.size(), 1u);
  ASSERT_EQ(c->bound_pods.size(), 1u);
  EXPECT_EQ(c->bound_pods[0]->key(), "kube-system/running");
  ASSERT_EQ(c->pending_pods.size(), 2u);  // manifest order, not priority order
  EXPECT_EQ(c->pending_pods[0]->name, "pending-b");
  EXPECT_EQ(c->pending_pods[0]->priority, 1000);  // from PriorityClass high, as admission sets it
  EXPECT_EQ(c->pending_pods[0]->preemption, preemption_policy::never);
  EXPECT_EQ(c->pending_pods[1]->name, "pending-a");
  EXPECT_EQ(c->pending_pods[1]->priority, 0);
  EXPECT_EQ(c->warnings.size(), 1u);
  EXPECT_TRUE(c->objects->workloads.empty());  // a Service without a selector selects nothing
  ASSERT_EQ(c->objects->pdbs.size(), 1u);
  EXPECT_EQ(c->objects->pdbs[0].disruptions_allowed, 0);  // no pod matches app=web
}

TEST(LoadManifests, KubectlList) {
  auto m = load_manifests({fixture("list.yaml")});
  ASSERT_TRUE(m.ok()) << m.err().message;
  ASSERT_EQ(m->nodes.size(), 1u);
  ASSERT_EQ(m->pods.size(), 3u);
  EXPECT_EQ(m->pods[2].second.describe(), fixture("list.yaml") + ": document 1 item 4 (Pod shop/api-1)");
  EXPECT_TRUE(m->warnings.empty());
  ASSERT_EQ(m->workloads.size(), 1u);
  EXPECT_EQ(m->workloads[0].second.describe(), fixture("list.yaml") + ": document 1 item 5 (ReplicaSet shop/api-6f7d9)");

  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  EXPECT_EQ(c->nodes[0]->name, "w1");
  EXPECT_EQ(c->nodes[0]->allocatable.milli_cpu, 2000);
  ASSERT_EQ(c->bound_pods.size(), 1u);  // the Succeeded pod is invisible to the scheduler
  EXPECT_EQ(c->bound_pods[0]->key(), "shop/api-0");
  ASSERT_EQ(c->pending_pods.size(), 1u);
  EXPECT_EQ(c->pending_pods[0]->key(), "shop/api-1");
}

TEST(LoadManifests, TypedLists) {
  auto m = load_manifests({fixture("typed-lists.yaml")});
  ASSERT_TRUE(m.ok()) << m.err().message;
  ASSERT_EQ(m->nodes.size(), 2u);
  ASSERT_EQ(m->pods.size(), 2u);
  EXPECT_EQ(m->nodes[1].second.describe(), fixture("typed-lists.yaml") + ": document 1 item 2 (Node t2)");
  EXPECT_EQ(m->pods[0].second.describe(), fixture("typed-lists.yaml") + ": document 2 item 1 (Pod team-a/p1)");
  ASSERT_EQ(m->warnings.size(), 1u);  // items of typed lists carry no apiVersion: no warning for that
  EXPECT_NE(m->warnings[0].find("document 3 (DeploymentList): kind DeploymentList is not used"), std::string::npos)
    << m->warnings[0];

  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  ASSERT_EQ(c->pending_pods.size(), 1u);
  EXPECT_EQ(c->pending_pods[0]->key(), "team-a/p1");
  ASSERT_EQ(c->bound_pods.size(), 1u);
  EXPECT_EQ(c->bound_pods[0]->node_name, "t2");
}

TEST(LoadManifests, JsonList) {
  auto m = load_manifests({fixture("cluster.json")});
  ASSERT_TRUE(m.ok()) << m.err().message;
  ASSERT_EQ(m->nodes.size(), 1u);
  ASSERT_EQ(m->pods.size(), 1u);
  EXPECT_TRUE(m->warnings.empty());
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  ASSERT_EQ(c->pending_pods.size(), 1u);
  EXPECT_EQ(c->pending_pods[0]->priority, 10);
  ASSERT_EQ(c->nodes.size(), 1u);
  ASSERT_EQ(c->nodes[0]->taints.size(), 1u);
  EXPECT_EQ(c->nodes[0]->taints[0].effect, taint_effect::no_schedule);
}

TEST(LoadManifests, SeveralFilesKeepOrder) {
  auto m = load_manifests({fixture("typed-lists.yaml"), fixture("cluster.json")});
  ASSERT_TRUE(m.ok()) << m.err().message;
  ASSERT_EQ(m->nodes.size(), 3u);
  EXPECT_EQ(m->nodes[2].first->metadata().name(), "j1");
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  ASSERT_EQ(c->pending_pods.size(), 2u);
  EXPECT_EQ(c->pending_pods[0]->name, "p1");
  EXPECT_EQ(c->pending_pods[1]->name, "web-1");
}

TEST(LoadManifests, MissingApiVersionWarns) {
  std::string f = temp_file("no_api_version.yaml", "kind: Node\nmetadata: {name: n1}\n");
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  ASSERT_EQ(m->nodes.size(), 1u);
  ASSERT_EQ(m->warnings.size(), 1u);
  EXPECT_EQ(m->warnings[0], f + ": document 1 (Node n1): apiVersion is missing; assuming v1");
}

TEST(LoadManifests, EmptyFileIsEmptyCluster) {
  auto m = load_manifests({temp_file("empty.yaml", "# nothing here\n---\n")});
  ASSERT_TRUE(m.ok()) << m.err().message;
  EXPECT_TRUE(m->nodes.empty());
  EXPECT_TRUE(m->pods.empty());
  EXPECT_TRUE(m->warnings.empty());
}

TEST(CompileCluster, GlobalDefaultPriorityClass) {
  std::string f = temp_file("global_default.yaml",
                            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: base}\n"
                            "value: 7\nglobalDefault: true\n---\n"
                            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\n"
                            "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"
                            "spec: {priority: 3, containers: [{name: c}]}\n");
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  ASSERT_EQ(c->pending_pods.size(), 2u);
  EXPECT_EQ(c->pending_pods[0]->priority, 7);
  EXPECT_EQ(c->pending_pods[0]->priority_class_name, "base");
  EXPECT_EQ(c->pending_pods[1]->priority, 3);  // already admitted: left as written
}

// Every example shipped for `simulate` must load and compile; the scheduler's verdicts on them are
// checked end to end by tests/integration/simulate_cli_test.sh.
TEST(BenchExamples, LoadAndCompile) {
  struct row {
    const char* file;
    size_t nodes, bound, pending, warnings;
  };
  const row rows[] = {
    {"basic.yaml", 3, 1, 3, 0},  // its Service has no selector: read, contributes nothing
    {"taints.yaml", 5, 0, 6, 0},
    {"affinity.yaml", 4, 1, 8, 0},
    {"ports.yaml", 2, 2, 5, 0},
    {"resources-extended.yaml", 3, 1, 7, 0},
    {"cluster-dump.yaml", 3, 2, 4, 0},  // the Succeeded pod is not counted
    {"cluster-list.json", 2, 0, 3, 0},
  };
  for (auto& r : rows) {
    auto m = load_manifests({std::string(KAS_BENCH_EXAMPLES) + "/" + r.file});
    ASSERT_TRUE(m.ok()) << m.err().message;
    auto c = compile_cluster(*m);
    ASSERT_TRUE(c.ok()) << c.err().message;
    EXPECT_EQ(c->nodes.size(), r.nodes) << r.file;
    EXPECT_EQ(c->bound_pods.size(), r.bound) << r.file;
    EXPECT_EQ(c->pending_pods.size(), r.pending) << r.file;
    EXPECT_EQ(c->warnings.size(), r.warnings) << r.file;
  }
}

TEST(BenchExamples, EffectiveRequests) {
  auto m = load_manifests({std::string(KAS_BENCH_EXAMPLES) + "/resources-extended.yaml"});
  ASSERT_TRUE(m.ok()) << m.err().message;
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  std::map<std::string, pod_info_ptr> by_name;
  for (auto& p : c->pending_pods) by_name[p->name] = p;
  EXPECT_EQ(by_name.at("gpu-high")->priority, 1000);
  EXPECT_EQ(by_name.at("gpu-high")->requests.get_scalar("example.com/gpu"), 1);
  EXPECT_EQ(by_name.at("init-heavy")->requests.milli_cpu, 1500);  // max(init, sum of app containers)
  EXPECT_EQ(by_name.at("with-overhead")->requests.milli_cpu, 1050);
  EXPECT_EQ(by_name.at("scratch")->requests.ephemeral_storage, 20LL << 30);
}

std::string render(const label_map& l) {
  std::string out;
  for (const auto& [k, v] : l.entries()) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

TEST(CompileCluster, Objects) {
  auto m = load_manifests({fixture("objects.yaml")});
  ASSERT_TRUE(m.ok()) << m.err().message;
  EXPECT_TRUE(m->warnings.empty());
  EXPECT_EQ(m->workloads.size(), 5u);
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  const cluster_objects& objs = *c->objects;

  // Declared namespaces get kubernetes.io/metadata.name; used but undeclared ones exist with it only.
  ASSERT_EQ(objs.namespace_labels.size(), 2u);
  ASSERT_NE(objs.namespace_labels_of("shop"), nullptr);
  EXPECT_EQ(render(*objs.namespace_labels_of("shop")), "kubernetes.io/metadata.name=shop,team=a");
  ASSERT_NE(objs.namespace_labels_of("default"), nullptr);
  EXPECT_EQ(render(*objs.namespace_labels_of("default")), "kubernetes.io/metadata.name=default");
  EXPECT_EQ(objs.namespace_labels_of("nowhere"), nullptr);

  struct workload_row {
    const char* kind;
    const char* name;
    label_map matches;
    label_map misses;
  };
  using e = std::vector<label_map::entry>;
  const workload_row workloads[] = {
      {"Service", "web", label_map(e{{"app", "web"}, {"x", "y"}}), label_map(e{{"app", "db"}})},
      {"ReplicationController", "legacy", label_map(e{{"app", "legacy"}}), label_map(e{{"app", "web"}})},
      {"ReplicaSet", "web-6f7d9", label_map(e{{"app", "web"}, {"pod-template-hash", "6f7d9"}}),
       label_map(e{{"app", "web"}})},
      {"StatefulSet", "db", label_map(e{{"app", "db"}}), label_map(e{{"app", "web"}})},
  };
  ASSERT_EQ(objs.workloads.size(), std::size(workloads));  // the ExternalName Service has no selector
  for (size_t i = 0; i < std::size(workloads); ++i) {
    const auto& w = objs.workloads[i];
    const auto& want = workloads[i];
    SCOPED_TRACE(want.name);
    EXPECT_EQ(w.kind, want.kind);
    EXPECT_EQ(w.name, want.name);
    EXPECT_EQ(w.ns, "shop");
    EXPECT_TRUE(w.selector.matches(want.matches));
    EXPECT_FALSE(w.selector.matches(want.misses));
  }

  // Five non-terminal web pods in shop; web-0, web-1 and web-4 are bound and ready.
  struct pdb_row {
    const char* name;
    int32_t allowed;
    std::vector<std::string> disrupted;
  };
  const pdb_row pdbs[] = {
      {"min-int", 2, {}},            // 3 healthy - 1
      {"min-percent", 1, {}},        // 30% of 5 rounds up to 2
      {"max-int", 0, {}},            // desired 5 - 1 = 4 > 3 healthy
      {"max-percent", 1, {}},        // 50% of 5 rounds up to 3: desired 2
      {"from-status", 7, {"web-0", "web-1"}},
      {"no-pods", 0, {}},            // no expected pods: nothing may be disrupted
      {"no-bounds", 0, {}},          // neither minAvailable nor maxUnavailable: expected count 0
      {"db", 4, {}},                 // app exists: 6 pods, 4 healthy, minAvailable 0
      {"elsewhere", 1, {}},          // default namespace: only web-elsewhere
  };
  ASSERT_EQ(objs.pdbs.size(), std::size(pdbs));
  for (size_t i = 0; i < std::size(pdbs); ++i) {
    SCOPED_TRACE(pdbs[i].name);
    EXPECT_EQ(objs.pdbs[i].name, pdbs[i].name);
    EXPECT_EQ(objs.pdbs[i].ns, i + 1 == std::size(pdbs) ? "default" : "shop");
    EXPECT_EQ(objs.pdbs[i].disruptions_allowed, pdbs[i].allowed);
    EXPECT_EQ(objs.pdbs[i].disrupted_pods, pdbs[i].disrupted);
  }
  EXPECT_TRUE(objs.pdbs[0].selector.matches(label_map(e{{"app", "web"}})));
}

TEST(CompileCluster, PodAffinityAndSpreadFromManifest) {
  std::string f = temp_file("affinity_pod.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: shop, labels: {app: web, version: v2}}
spec:
  containers: [{name: c}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [version], topologyKey: kubernetes.io/hostname}
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {}}
status: {nominatedNodeName: n1}
)");
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  ASSERT_EQ(c->pending_pods.size(), 1u);
  const pod_info& p = *c->pending_pods[0];
  ASSERT_EQ(p.required_anti_affinity.size(), 1u);
  EXPECT_EQ(p.required_anti_affinity[0].namespaces, std::vector<std::string>{"shop"});
  EXPECT_EQ(p.required_anti_affinity[0].selector.requirements.size(), 2u);
  ASSERT_EQ(p.spread_constraints.size(), 1u);
  EXPECT_FALSE(p.spread_constraints[0].do_not_schedule);
  EXPECT_EQ(p.nominated_node_name, "n1");
  // The pod's namespace exists, implicitly.
  ASSERT_NE(c->objects->namespace_labels_of("shop"), nullptr);
}

}  // namespace
}  // namespace kas

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
  ASSERT_EQ(m->warnings.size(), 2u);
  EXPECT_EQ(m->warnings[0],
            fixture("multi-doc.yaml") + ": document 3 (Service web): kind Service is not used by the scheduler; skipped");
  EXPECT_EQ(m->warnings[1],
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
  EXPECT_EQ(c->warnings.size(), 2u);
}

TEST(LoadManifests, KubectlList) {
  auto m = load_manifests({fixture("list.yaml")});
  ASSERT_TRUE(m.ok()) << m.err().message;
  ASSERT_EQ(m->nodes.size(), 1u);
  ASSERT_EQ(m->pods.size(), 3u);
  EXPECT_EQ(m->pods[2].second.describe(), fixture("list.yaml") + ": document 1 item 4 (Pod shop/api-1)");
  ASSERT_EQ(m->warnings.size(), 1u);
  EXPECT_EQ(m->warnings[0], fixture("list.yaml") +
                              ": document 1 item 5 (ReplicaSet shop/api-6f7d9): kind ReplicaSet is not used by "
                              "the scheduler; skipped");

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
    {"basic.yaml", 3, 1, 3, 1},
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

}  // namespace
}  // namespace kas

// PodGroups in `simulate` manifests: both APIs (scheduling.k8s.io/v1beta1 and the Coscheduling CRD
// scheduling.x-k8s.io/v1alpha1) load into cluster_objects::pod_groups, and every input the
// apiserver (or the plugin) would refuse is one error naming the file, the document and the field.
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "config/cluster_manifests.hpp"

namespace kas {
namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "kas_podgroup_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

result<cluster_input> load(const std::string& name, const std::string& text, bool strict = false) {
  manifest_options opts;
  opts.strict = strict;
  auto m = load_manifests({temp_file(name, text)}, opts);
  if (!m) return m.err();
  return compile_cluster(*m);
}

std::string error_of(const std::string& name, const std::string& text) {
  auto in = load(name, text);
  return in ? std::string{} : in.err().message;
}

const char* v1beta1 = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n";
const char* cosched = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n";

TEST(PodGroupManifests, UpstreamGang) {
  auto in = load("gang.yaml", std::string(v1beta1) +
                                "metadata: {name: train, namespace: ml, uid: u1, creationTimestamp: '2025-01-02T03:04:05Z'}\n"
                                "spec:\n"
                                "  schedulingPolicy: {gang: {minCount: 4}}\n"
                                "  schedulingConstraints: {topology: [{key: topology.kubernetes.io/zone}]}\n"
                                "  priorityClassName: high\n"
                                "---\n"
                                "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n");
  ASSERT_TRUE(in) << in.err().message;
  const pod_group* g = in->objects->pod_group_of(pod_group_key(pod_group_api::workload, "ml", "train"));
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->api, pod_group_api::workload);
  EXPECT_EQ(g->display(), "ml/train");
  EXPECT_EQ(g->uid, "u1");
  EXPECT_EQ(g->creation_ns, 1735787045LL * 1000000000LL);
  EXPECT_TRUE(g->gang);
  EXPECT_EQ(g->min_count, 4);
  EXPECT_EQ(g->topology_keys, std::vector<std::string>{"topology.kubernetes.io/zone"});
  EXPECT_EQ(g->priority_class_name, "high");
  EXPECT_EQ(g->priority, std::optional<int32_t>(1000));  // resolved from the class, as admission does
  EXPECT_EQ(in->objects->pod_group_of(pod_group_key(pod_group_api::coscheduling, "ml", "train")), nullptr);
  EXPECT_EQ(in->objects->namespace_labels_of("ml") != nullptr, true);  // its namespace exists implicitly
}

TEST(PodGroupManifests, UpstreamBasicWithOwnPriorityAndDefaultNamespace) {
  auto in = load("basic.yaml", std::string(v1beta1) +
                                 "metadata: {name: web}\n"
                                 "spec: {schedulingPolicy: {basic: {}}, priorityClassName: unknown-but-unused, priority: 7}\n");
  ASSERT_TRUE(in) << in.err().message;
  const pod_group* g = in->objects->pod_group_of(pod_group_key(pod_group_api::workload, "default", "web"));
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->gang);
  EXPECT_EQ(g->min_count, 1);
  EXPECT_EQ(g->priority, std::optional<int32_t>(7));  // spec.priority as written
  EXPECT_TRUE(g->topology_keys.empty());
}

TEST(PodGroupManifests, Coscheduling) {
  auto in = load("cosched.yaml", std::string(cosched) +
                                   "metadata: {name: train, namespace: ml}\n"
                                   "spec:\n"
                                   "  minMember: 3\n"
                                   "  scheduleTimeoutSeconds: 30\n"
                                   "  minResources: {cpu: 1500m, memory: 2Gi, nvidia.com/gpu: 2}\n");
  ASSERT_TRUE(in) << in.err().message;
  const pod_group* g = in->objects->pod_group_of(pod_group_key(pod_group_api::coscheduling, "ml", "train"));
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->api, pod_group_api::coscheduling);
  EXPECT_TRUE(g->gang);
  EXPECT_EQ(g->min_count, 3);
  EXPECT_EQ(g->schedule_timeout, std::chrono::seconds(30));
  EXPECT_EQ(g->min_resources.milli_cpu, 1500);
  EXPECT_EQ(g->min_resources.memory, 2LL << 30);
  EXPECT_EQ(g->min_resources.get_scalar("nvidia.com/gpu"), 2);
  EXPECT_FALSE(g->priority.has_value());
}

// minMember is omitempty and the CRD sets no minimum: an omitted (0) minMember is a gang of one.
TEST(PodGroupManifests, CoschedulingWithoutMinMember) {
  auto in = load("cosched0.yaml", std::string(cosched) + "metadata: {name: g}\n");
  ASSERT_TRUE(in) << in.err().message;
  const pod_group* g = in->objects->pod_group_of(pod_group_key(pod_group_api::coscheduling, "default", "g"));
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->gang);
  EXPECT_EQ(g->min_count, 1);
  EXPECT_EQ(g->schedule_timeout, std::chrono::seconds(0));
}

// One name in both APIs: two kinds, two groups.
TEST(PodGroupManifests, BothFormsOfOneNameAndLists) {
  auto in = load("both.yaml",
                 "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroupList\nitems:\n"
                 "- metadata: {name: g}\n  spec: {schedulingPolicy: {gang: {minCount: 2}}}\n"
                 "---\n"
                 "apiVersion: v1\nkind: List\nitems:\n"
                 "- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: g}, spec: {minMember: 5}}\n");
  ASSERT_TRUE(in) << in.err().message;
  EXPECT_EQ(in->objects->pod_groups.size(), 2u);
  ASSERT_NE(in->objects->pod_group_of("k/default/g"), nullptr);
  EXPECT_EQ(in->objects->pod_group_of("k/default/g")->min_count, 2);
  ASSERT_NE(in->objects->pod_group_of("x/default/g"), nullptr);
  EXPECT_EQ(in->objects->pod_group_of("x/default/g")->min_count, 5);
}

// The Coscheduling form in a typed list whose items omit apiVersion: the list's own names the form.
TEST(PodGroupManifests, CoschedulingTypedList) {
  auto in = load("cosched_list.json",
                 R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroupList",)"
                 R"("items":[{"metadata":{"name":"a","namespace":"n"},"spec":{"minMember":2}}]})");
  ASSERT_TRUE(in) << in.err().message;
  ASSERT_NE(in->objects->pod_group_of("x/n/a"), nullptr);
}

// A missing apiVersion assumes upstream's, with a warning; an unknown field of the upstream form is
// checked against the schema (the CRD's is not in it).
TEST(PodGroupManifests, MissingApiVersionAndUnknownFields) {
  auto in = load("noversion.yaml", "kind: PodGroup\nmetadata: {name: g}\nspec: {schedulingPolicy: {gang: {minCount: 2}}, "
                                   "minMember: 3}\n");
  ASSERT_TRUE(in) << in.err().message;
  ASSERT_NE(in->objects->pod_group_of("k/default/g"), nullptr);
  std::string all;
  for (auto& w : in->warnings) all += w + "\n";
  EXPECT_NE(all.find("apiVersion is missing; assuming scheduling.k8s.io/v1beta1"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.minMember: unknown field"), std::string::npos) << all;
  auto strict = load("noversion_strict.yaml", std::string(v1beta1) + "metadata: {name: g}\nspec: {schedulingPolicy: "
                                              "{gang: {mincount: 2}}}\n", true);
  ASSERT_FALSE(strict);
  EXPECT_NE(strict.err().message.find("spec.schedulingPolicy.gang.mincount: unknown field (--strict)"), std::string::npos)
    << strict.err().message;
}

struct bad_case {
  std::string name;
  std::string text;
  std::string want;  // what follows the file name in the error
};

void PrintTo(const bad_case& c, std::ostream* os) { *os << c.name; }

class PodGroupManifestErrors : public ::testing::TestWithParam<bad_case> {};

TEST_P(PodGroupManifestErrors, NamesFileDocumentAndField) {
  const bad_case& c = GetParam();
  std::string msg = error_of(c.name + ".yaml", c.text);
  ASSERT_FALSE(msg.empty()) << "expected an error";
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  EXPECT_NE(msg.find(c.name + ".yaml: " + c.want), std::string::npos) << "missing \"" << c.want << "\" in: " << msg;
}

std::vector<bad_case> bad_cases() {
  const std::string up = v1beta1, co = cosched;
  const std::string doc = "document 1 (PodGroup default/g): ";
  return {
    {"no_policy", up + "metadata: {name: g}\nspec: {}\n",
     doc + "spec.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang`"},
    {"both_policies", up + "metadata: {name: g}\nspec: {schedulingPolicy: {basic: {}, gang: {minCount: 2}}}\n",
     doc + "spec.schedulingPolicy: Invalid value: \"{`basic`, `gang`}\": exactly one of `basic`, `gang` is required, "
           "but multiple fields are set"},
    {"min_count_zero", up + "metadata: {name: g}\nspec: {schedulingPolicy: {gang: {}}}\n",
     doc + "spec.schedulingPolicy.gang.minCount: Required value"},
    {"min_count_negative", up + "metadata: {name: g}\nspec: {schedulingPolicy: {gang: {minCount: -2}}}\n",
     doc + "spec.schedulingPolicy.gang.minCount: Invalid value: -2: must be greater than zero"},
    {"min_count_not_a_number", up + "metadata: {name: g}\nspec: {schedulingPolicy: {gang: {minCount: four}}}\n",
     doc + "spec.schedulingPolicy.gang.minCount: expected an integer, got \"four\""},
    {"topology_key_empty", up + "metadata: {name: g}\nspec: {schedulingPolicy: {basic: {}}, schedulingConstraints: "
                                "{topology: [{key: ''}]}}\n",
     doc + "spec.schedulingConstraints.topology[0].key: Required value"},
    {"topology_key_invalid", up + "metadata: {name: g}\nspec: {schedulingPolicy: {basic: {}}, schedulingConstraints: "
                                  "{topology: [{key: zone}, {key: 'bad key'}]}}\n",
     doc + "spec.schedulingConstraints.topology[1].key: Invalid value: \"bad key\": name part must consist of "
           "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
           "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    {"topology_key_twice", up + "metadata: {name: g}\nspec: {schedulingPolicy: {basic: {}}, schedulingConstraints: "
                                "{topology: [{key: zone}, {key: zone}]}}\n",
     doc + "spec.schedulingConstraints.topology[1].key: Duplicate value: \"zone\""},
    {"unknown_priority_class", up + "metadata: {name: g}\nspec: {schedulingPolicy: {basic: {}}, priorityClassName: "
                                    "nope}\n",
     doc + "spec.priorityClassName: no PriorityClass with name nope was found"},
    {"bad_name", up + "metadata: {name: G_1}\nspec: {schedulingPolicy: {basic: {}}}\n",
     "document 1 (PodGroup default/G_1): metadata.name: Invalid value: \"G_1\": a lowercase RFC 1123 subdomain must "
     "consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
     "character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
    {"no_name", up + "metadata: {}\nspec: {schedulingPolicy: {basic: {}}}\n",
     "document 1 (PodGroup): metadata.name: required field is missing"},
    {"wrong_version", "apiVersion: scheduling.k8s.io/v1\nkind: PodGroup\nmetadata: {name: g}\n",
     doc + "apiVersion: \"scheduling.k8s.io/v1\" is not an API version of kind PodGroup (expected "
           "scheduling.k8s.io/v1beta1 or scheduling.x-k8s.io/v1alpha1)"},
    {"wrong_group", "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n",
     doc + "apiVersion: \"scheduling.volcano.sh/v1beta1\" is not an API version of kind PodGroup (expected "
           "scheduling.k8s.io/v1beta1 or scheduling.x-k8s.io/v1alpha1)"},
    {"duplicate", up + "metadata: {name: g}\nspec: {schedulingPolicy: {basic: {}}}\n---\n" + up +
                    "metadata: {name: g, namespace: default}\nspec: {schedulingPolicy: {basic: {}}}\n",
     "document 2 (PodGroup default/g): PodGroup default/g is already defined in "},
    {"min_member_negative", co + "metadata: {name: g}\nspec: {minMember: -1}\n",
     doc + "spec.minMember: Invalid value: -1: must be greater than or equal to 0"},
    {"timeout_negative", co + "metadata: {name: g}\nspec: {minMember: 2, scheduleTimeoutSeconds: -5}\n",
     doc + "spec.scheduleTimeoutSeconds: Invalid value: -5: must be greater than or equal to 0"},
    {"min_resources_bad_quantity", co + "metadata: {name: g}\nspec: {minMember: 2, minResources: {cpu: lots}}\n",
     doc + "spec.minResources.cpu: "},
    {"min_resources_negative", co + "metadata: {name: g}\nspec: {minMember: 2, minResources: {memory: -1Gi}}\n",
     doc + "spec.minResources.memory: Invalid value: \"-1Gi\": must be greater than or equal to 0"},
    {"min_member_wrong_type", co + "metadata: {name: g}\nspec: {minMember: [1]}\n",
     doc + "spec.minMember: expected a number, got a list"},
    {"cosched_bad_namespace", co + "metadata: {name: g, namespace: Bad.NS}\nspec: {minMember: 2}\n",
     "document 1 (PodGroup Bad.NS/g): metadata.namespace: Invalid value: \"Bad.NS\": a lowercase RFC 1123 label must "
     "consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character "
     "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"},
  };
}

INSTANTIATE_TEST_SUITE_P(Bad, PodGroupManifestErrors, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<bad_case>& i) { return i.param.name; });

}  // namespace
}  // namespace kas

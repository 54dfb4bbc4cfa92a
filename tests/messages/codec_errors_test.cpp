// Bad inputs must fail with text that says where: field paths, JSON line/column, envelope faults.
#include <string>

#include <gtest/gtest.h>

#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/coordination.pb.h"
#include "messages/k8s/events.pb.h"
#include "messages/k8s/meta.pb.h"
#include "messages/k8s/policy.pb.h"

namespace {

using kas::codec::decode_json;
using kas::codec::decode_protobuf;
using kas::codec::decode_yaml;

struct BadDoc {
  const char* name;
  bool json;  // decode_json, else decode_yaml
  const char* text;
  const char* expected;  // substring of the error
};

const BadDoc kBadDocs[] = {
    {"int_from_word", false, "spec:\n  priority: abc\n", "spec.priority: expected an integer, got \"abc\""},
    {"int_from_float", true, R"({"spec":{"priority":1.5}})", "spec.priority: expected an integer, got \"1.5\""},
    {"int32_overflow", true, R"({"spec":{"priority":3000000000}})", "spec.priority: integer out of range"},
    {"object_for_scalar", false, "spec:\n  nodeName:\n    a: b\n", "spec.nodeName: expected a string, got an object"},
    {"list_for_object", true, R"({"spec":[]})", "spec: expected an object, got a list"},
    {"scalar_for_list", true, R"({"spec":{"containers":"x"}})", "spec.containers: expected a list, got \"x\""},
    {"nested_index", true, R"({"spec":{"containers":[{"name":"a"},{"ports":[{"containerPort":"http"}]}]}})",
     "spec.containers[1].ports[0].containerPort: expected an integer, got \"http\""},
    {"bad_quantity", false, "spec:\n  containers:\n  - resources:\n      requests:\n        cpu: 1Kb\n",
     "spec.containers[0].resources.requests.cpu: unable to parse quantity \"1Kb\""},
    {"quantity_object", true, R"({"spec":{"overhead":{"cpu":{"a":1}}}})",
     "spec.overhead.cpu: expected a quantity, got an object"},
    {"bad_bool", true, R"({"spec":{"hostNetwork":"yes"}})", "spec.hostNetwork: expected a boolean, got \"yes\""},
    {"bad_time", true, R"({"metadata":{"creationTimestamp":"yesterday"}})",
     "metadata.creationTimestamp: expected an RFC3339 timestamp, got \"yesterday\""},
    {"map_from_list", true, R"({"spec":{"nodeSelector":["a"]}})", "spec.nodeSelector: expected an object, got a list"},
    {"invalid_json_line", true, "{\n  \"spec\": {\n    \"nodeName\": \"a\",,\n  }\n}", "invalid JSON at line 3"},
    {"unterminated_json", true, "{\"metadata\": {\"name\": \"x\"", "invalid JSON at line 1"},
    {"trailing_comma", true, "{\"a\": 1,\n}", "invalid JSON at line 2, column 1"},
    {"single_quotes", true, "{'a': 1}", "invalid JSON at line 1, column 2"},
    {"bare_word", true, "{\"spec\": {\"nodeName\": abc}}", "invalid JSON at line 1, column 23"},
    {"trailing_garbage", true, "{} x", "invalid JSON at line 1, column 4"},
    {"top_level_list", true, "[1,2]", "expected an object at the top level, got a list"},
    {"invalid_yaml", false, "spec:\n  nodeName: [a\n", "invalid YAML at line"},
};

class DecodeErrors : public testing::TestWithParam<BadDoc> {};

TEST_P(DecodeErrors, NamesThePath) {
  const BadDoc& c = GetParam();
  k8s::core::Pod pod;
  auto st = c.json ? decode_json(c.text, pod) : decode_yaml(c.text, pod);
  ASSERT_FALSE(st.ok()) << c.text;
  EXPECT_NE(st.err().message.find(c.expected), std::string::npos)
      << "got: " << st.err().message << "\nwant substring: " << c.expected;
}

INSTANTIATE_TEST_SUITE_P(Table, DecodeErrors, testing::ValuesIn(kBadDocs),
                         [](const testing::TestParamInfo<BadDoc>& i) { return std::string(i.param.name); });

TEST(DecodeNode, PathPrefixIsUsed) {
  k8s::core::Container c;
  auto st = kas::codec::decode_node(YAML::Load("ports: 5"), c, "spec.containers[3]");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.err().message, "spec.containers[3].ports: expected a list, got \"5\"");
}

TEST(DecodeShapes, ScalarsNullsAndSpecials) {
  k8s::core::Pod pod;
  auto st = decode_yaml(R"(
metadata:
  name: "123"
  labels: {}
  deletionTimestamp: null
spec:
  priority: 4
  hostNetwork: true
  nodeName: ~
  nodeSelector: {"a": "true", "b": "0"}
  containers:
  - name: c
    resources:
      requests: {cpu: 100m, memory: 4}
  volumes:
  - name: v
    persistentVolumeClaim: {claimName: pvc}
  unknownField: {x: 1}
status:
  startTime: "2024-02-29T12:00:00.5+01:00"
)", pod);
  ASSERT_TRUE(st.ok()) << st.err().message;
  EXPECT_EQ(pod.metadata().name(), "123");
  EXPECT_FALSE(pod.metadata().has_deletion_timestamp());
  EXPECT_EQ(pod.spec().priority(), 4);
  EXPECT_TRUE(pod.spec().host_network());
  EXPECT_FALSE(pod.spec().has_node_name());
  EXPECT_EQ(pod.spec().node_selector().at("a"), "true");
  EXPECT_EQ(pod.spec().node_selector().at("b"), "0");
  EXPECT_EQ(pod.spec().containers(0).resources().requests().at("cpu").string(), "100m");
  EXPECT_EQ(pod.spec().containers(0).resources().requests().at("memory").string(), "4");
  EXPECT_EQ(pod.spec().volumes(0).volume_source().persistent_volume_claim().claim_name(), "pvc");
  EXPECT_EQ(pod.status().start_time().seconds(), 1709204400);  // 11:00Z
  EXPECT_EQ(pod.status().start_time().nanos(), 500000000);
}

TEST(DecodeShapes, IntOrStringAndRawExtension) {
  k8s::policy::PodDisruptionBudget pdb;
  ASSERT_TRUE(decode_json(R"({"spec":{"minAvailable":2,"maxUnavailable":"10%"}})", pdb).ok());
  EXPECT_EQ(pdb.spec().min_available().type(), 0);
  EXPECT_EQ(pdb.spec().min_available().int_val(), 2);
  EXPECT_EQ(pdb.spec().max_unavailable().type(), 1);
  EXPECT_EQ(pdb.spec().max_unavailable().str_val(), "10%");
  // A quoted number stays a string, as in Go.
  ASSERT_TRUE(decode_yaml("spec:\n  minAvailable: \"3\"\n", pdb).ok());
  EXPECT_EQ(pdb.spec().min_available().type(), 1);

  k8s::meta::WatchEvent ev;
  ASSERT_TRUE(decode_yaml("type: ADDED\nobject:\n  kind: Pod\n  n: 1\n  s: \"1\"\n  l: [true, null, x]\n", ev).ok());
  EXPECT_EQ(ev.object().raw(), R"({"kind":"Pod","n":1,"s":"1","l":[true,null,"x"]})");
}

// A RawExtension is kept as JSON text; YAML aliases must not make it endless (found by fuzzing).
TEST(DecodeShapes, RawExtensionThroughAliasesIsBounded) {
  k8s::meta::WatchEvent ev;
  auto st = decode_yaml("type: ADDED\nobject: &a [*a]\n", ev);
  ASSERT_FALSE(st.ok()) << "an alias to itself: a stack overflow before";
  EXPECT_NE(st.err().message.find("object: the embedded object is nested deeper than 100 levels"), std::string::npos)
    << st.err().message;
  std::string bomb = "type: ADDED\nobject:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i)
    bomb += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + std::string("*a") + std::to_string(i - 1) +
            std::string(", *a") + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) +
            ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
            std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  st = decode_yaml(bomb, ev);
  ASSERT_FALSE(st.ok()) << "10^10 scalars: hours and gigabytes before";
  EXPECT_NE(st.err().message.find("larger than 3 MiB"), std::string::npos) << st.err().message;
}

TEST(EncodeJson, KubernetesShapes) {
  k8s::coordination::Lease lease;
  lease.mutable_metadata()->set_name("kas");
  lease.mutable_spec()->mutable_renew_time()->set_seconds(1199149261);
  lease.mutable_spec()->mutable_renew_time()->set_nanos(4000);
  k8s::core::Pod pod;
  (*pod.mutable_spec()->mutable_overhead())["cpu"].set_string("100m");
  pod.mutable_metadata()->mutable_creation_timestamp()->set_seconds(0);
  EXPECT_EQ(kas::codec::encode_json(lease),
            R"({"metadata":{"name":"kas"},"spec":{"renewTime":"2008-01-01T01:01:01.000004Z"}})");
  EXPECT_EQ(kas::codec::encode_json(pod),
            R"({"metadata":{"creationTimestamp":"1970-01-01T00:00:00Z"},"spec":{"overhead":{"cpu":"100m"}}})");
}

struct BadBody {
  const char* name;
  std::string bytes;
  const char* expected;
};

std::string pod_body() {
  k8s::core::Pod pod;
  pod.mutable_metadata()->set_name("p");
  return kas::codec::encode_protobuf(pod, "v1", "Pod");
}

class ProtobufErrors : public testing::TestWithParam<BadBody> {};

TEST_P(ProtobufErrors, Rejects) {
  const BadBody& c = GetParam();
  k8s::core::Pod pod;
  auto st = decode_protobuf(c.bytes, pod);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.err().message.find(c.expected), std::string::npos) << st.err().message;
}

INSTANTIATE_TEST_SUITE_P(
    Table, ProtobufErrors,
    testing::Values(
        BadBody{"empty", "", "missing the \"k8s\\0\" magic"},
        BadBody{"json_body", R"({"kind":"Pod"})", "missing the \"k8s\\0\" magic"},
        BadBody{"truncated_envelope", pod_body().substr(0, pod_body().size() - 3), "malformed"},
        BadBody{"garbage_envelope", std::string("k8s\0\xff\xff\xff", 7), "malformed runtime.Unknown"},
        BadBody{"wrong_kind", kas::codec::encode_protobuf(k8s::core::Node(), "v1", "Node"),
                "kind Node (v1) does not match expected k8s.core.Pod"},
        BadBody{"wrong_group", kas::codec::encode_protobuf(k8s::core::Pod(), "example.com/v1", "Pod"),
                "apiVersion example.com/v1 does not match"}),
    [](const testing::TestParamInfo<BadBody>& i) { return std::string(i.param.name); });

TEST(Protobuf, EventGroupsAreDistinguished) {
  k8s::events::Event ev;
  ev.set_note("n");
  k8s::core::Event core_ev;
  EXPECT_FALSE(decode_protobuf(kas::codec::encode_protobuf(ev, "events.k8s.io/v1", "Event"), core_ev).ok());
  k8s::events::Event back;
  ASSERT_TRUE(decode_protobuf(kas::codec::encode_protobuf(ev, "events.k8s.io/v1", "Event"), back).ok());
  EXPECT_EQ(back.note(), "n");
}

}  // namespace

// Create semantics per kind (pod_strategy.hpp): a Pod's status is reset on create, a Node's is kept.
#include <gtest/gtest.h>

#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/pod_strategy.hpp"
#include "tests/apiserver/store.hpp"

namespace kas::testapi {
namespace {

YAML::Node json(const std::string& s) { return *parse_json_object(s); }

TEST(PodStrategy, CreateResetsPodStatusButKeepsNodeStatus) {
  store s;
  auto pod = s.create(*find_kind("", "v1", "pods"), "default", json(R"({"metadata":{"name":"p"},
      "spec":{"containers":[{"name":"c","image":"busybox"}]},
      "status":{"phase":"Running","hostIP":"10.0.0.1","conditions":[{"type":"Ready","status":"True"}]}})"));
  ASSERT_TRUE(pod.ok()) << pod.err.message;
  EXPECT_EQ(to_json(at((*pod.value)->tree(), "status")), R"({"phase":"Pending","qosClass":"BestEffort"})");
  EXPECT_EQ((*pod.value)->field("status.phase"), "Pending");
  EXPECT_EQ(string_at((*pod.value)->tree(), "spec.schedulerName"), "default-scheduler");

  auto node = s.create(*find_kind("", "v1", "nodes"), "", json(R"({"metadata":{"name":"n"},
      "status":{"capacity":{"cpu":"4"},"conditions":[{"type":"Ready","status":"True"}]}})"));
  ASSERT_TRUE(node.ok()) << node.err.message;
  EXPECT_EQ(to_json(at((*node.value)->tree(), "status")),
            R"({"capacity":{"cpu":"4"},"conditions":[{"type":"Ready","status":"True"}]})");
}

TEST(PodStrategy, QosClassFromRequestsAndLimits) {
  auto qos = [](const std::string& resources) {
    return pod_qos_class(json(R"({"spec":{"containers":[{"name":"c","resources":)" + resources + "}]}}"));
  };
  EXPECT_EQ(qos("{}"), "BestEffort");
  EXPECT_EQ(qos(R"({"requests":{"cpu":"100m"}})"), "Burstable");
  EXPECT_EQ(qos(R"({"limits":{"cpu":"1","memory":"1Gi"}})"), "Guaranteed");  // requests default to limits
  EXPECT_EQ(qos(R"({"requests":{"cpu":"1000m","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}})"), "Guaranteed");
  EXPECT_EQ(qos(R"({"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}})"), "Burstable");
  EXPECT_EQ(qos(R"({"limits":{"cpu":"1"}})"), "Burstable");
}

}  // namespace
}  // namespace kas::testapi

namespace kas::testapi {
namespace {

// The tree-less create (store_fast.cpp) applies the same pod strategy as the tree path.
TEST(PodStrategy, TreelessCreateMatchesTheTreePath) {
  store s;
  const kind_info& pods = *find_kind("", "v1", "pods");
  const std::string body = R"({"metadata":{"name":"NAME","labels":{"app":"w"}},"spec":{"containers":[{"name":"c",)"
                           R"("image":"busybox","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]},)"
                           R"("status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}})";
  auto with_name = [&](const std::string& n) { return body.substr(0, body.find("NAME")) + n + body.substr(body.find("NAME") + 4); };
  auto fast = s.create_json(pods, "default", with_name("fast"));
  auto slow = s.create(pods, "default", json(with_name("slow")));
  ASSERT_TRUE(fast.ok() && slow.ok()) << fast.err.message << slow.err.message;
  auto normalized = [](const stored_object& o) {
    YAML::Node t = o.tree();
    for (const char* k : {"name", "uid", "creationTimestamp", "resourceVersion"}) t["metadata"][k] = str_node("x");
    return to_json(t);
  };
  EXPECT_EQ(normalized(**fast.value), normalized(**slow.value));
  EXPECT_EQ(to_json(at((*fast.value)->tree(), "status")), R"({"phase":"Pending","qosClass":"Guaranteed"})");
  EXPECT_EQ((*fast.value)->fields, (*slow.value)->fields);
  EXPECT_EQ((*fast.value)->field("status.phase"), "Pending");
  EXPECT_EQ((*fast.value)->field("spec.schedulerName"), "default-scheduler");
}

}  // namespace
}  // namespace kas::testapi

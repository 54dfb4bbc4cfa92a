#include "cache/pod_group.hpp"

#include <string>

#include <gtest/gtest.h>

#include "messages/codec.hpp"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/scheduling.pb.h"

namespace kas {
namespace {

template <class T>
pod_group_ptr compiled(const std::string& yaml) {
  T obj;
  auto s = codec::decode_yaml(yaml, obj);
  EXPECT_TRUE(s.ok()) << s.err().message;
  auto g = compile_pod_group(obj);
  EXPECT_TRUE(g.ok()) << g.err().message;
  return g.ok() ? *g : nullptr;
}

void expect_same(const pod_group& a, const pod_group& b) {
  EXPECT_EQ(a.api, b.api);
  EXPECT_EQ(a.display(), b.display());
  EXPECT_EQ(a.gang, b.gang);
  EXPECT_EQ(a.min_count, b.min_count);
  EXPECT_EQ(a.topology_keys, b.topology_keys);
  EXPECT_EQ(a.priority_class_name, b.priority_class_name);
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.schedule_timeout, b.schedule_timeout);
  EXPECT_EQ(a.min_resources, b.min_resources);
}

// bench --kubeconfig creates a workload's PodGroups from their compiled form: the API object it
// writes compiles back to the same group, in either form.
TEST(PodGroupApiObject, CompilesBackToTheSameGroup) {
  for (const char* yaml : {
         "metadata: {name: train, namespace: team-a}\n"
         "spec:\n"
         "  schedulingPolicy: {gang: {minCount: 8}}\n"
         "  schedulingConstraints: {topology: [{key: topology.kubernetes.io/zone}, {key: example.com/rack}]}\n"
         "  priorityClassName: high\n"
         "  priority: 1000\n",
         "metadata: {name: serve, namespace: team-b}\nspec: {schedulingPolicy: {basic: {}}}\n",
       }) {
    SCOPED_TRACE(yaml);
    auto g = compiled<k8s::scheduling::PodGroup>(yaml);
    ASSERT_TRUE(g);
    k8s::scheduling::PodGroup obj;
    to_api_object(*g, obj);
    auto back = compile_pod_group(obj);
    ASSERT_TRUE(back.ok()) << back.err().message;
    expect_same(*g, **back);
  }
  auto c = compiled<k8s::coscheduling::PodGroup>(
    "metadata: {name: job, namespace: team-c}\n"
    "spec:\n"
    "  minMember: 4\n"
    "  scheduleTimeoutSeconds: 30\n"
    "  minResources: {cpu: 1500m, memory: 10Gi, ephemeral-storage: 3G, pods: '4', nvidia.com/gpu: '2', "
    "hugepages-2Mi: 4Mi}\n");
  ASSERT_TRUE(c);
  k8s::coscheduling::PodGroup obj;
  to_api_object(*c, obj);
  EXPECT_EQ(obj.spec().min_resources().at("memory").string(), "10Gi");
  EXPECT_EQ(obj.spec().min_resources().at("cpu").string(), "1500m");
  auto back = compile_pod_group(obj);
  ASSERT_TRUE(back.ok()) << back.err().message;
  expect_same(*c, **back);
}

}  // namespace
}  // namespace kas

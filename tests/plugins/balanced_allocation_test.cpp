// NodeResourcesBalancedAllocation, table-driven after kube's balanced_allocation_test.go.
#include <gtest/gtest.h>

#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas {
namespace {

using plugins::node_resources_balanced_allocation;
using test::node_from_yaml;
using test::node_with_allocatable;
using test::pod_from_yaml;
using test::pod_with_requests;

std::shared_ptr<fw::plugin> make_plugin(const std::string& args_yaml = "") {
  YAML::Node args = args_yaml.empty() ? YAML::Node() : YAML::Load(args_yaml);
  auto p = node_resources_balanced_allocation::make(args, "args", fw::handle{});
  EXPECT_TRUE(p) << (p ? "" : p.err().message);
  return *p;
}

// PreScore then Score on each node; -1 marks a PreScore Skip.
std::vector<int64_t> run(const fw::plugin& pl, const pod_info& pod, const std::vector<std::shared_ptr<node_info>>& nodes) {
  auto& ps = dynamic_cast<const fw::pre_score_plugin&>(pl);
  auto& sc = dynamic_cast<const fw::score_plugin&>(pl);
  fw::cycle_state state;
  std::vector<const node_info*> ptrs;
  for (auto& n : nodes) ptrs.push_back(n.get());
  auto s = ps.pre_score(state, pod, ptrs);
  if (s.is_skip()) return {-1};
  EXPECT_TRUE(s.is_success());
  std::vector<int64_t> out;
  for (auto& n : nodes) {
    int64_t v = 0;
    EXPECT_TRUE(sc.score(state, pod, *n, v).is_success());
    out.push_back(v);
  }
  return out;
}

std::shared_ptr<node_info> node_with_foo(const std::string& name, const std::string& cpu, const std::string& mem,
                                         const std::string& foo) {
  return node_from_yaml("metadata: {name: " + name + "}\nstatus:\n  allocatable: {cpu: \"" + cpu + "\", memory: \"" +
                        mem + "\", pods: \"110\", example.com/foo: \"" + foo + "\"}\n");
}

pod_info_ptr pod_with_foo(const std::string& cpu, const std::string& mem, const std::string& foo) {
  return pod_from_yaml("metadata: {name: f, namespace: default, uid: f}\nspec:\n  containers:\n  - name: c\n"
                       "    image: busybox\n    resources: {requests: {cpu: \"" + cpu + "\", memory: \"" + mem +
                       "\", example.com/foo: \"" + foo + "\"}}\n");
}

TEST(NodeResourcesBalancedAllocation, Score) {
  auto cpu_only = pod_with_requests("cpu-only", {{"1000m", ""}, {"2000m", ""}});
  auto cpu_and_memory = pod_with_requests("cpu-mem", {{"1000m", "2000"}, {"2000m", "3000"}});
  struct tc {
    const char* name;
    pod_info_ptr pod;
    std::vector<std::shared_ptr<node_info>> nodes;
    std::string args;
    std::vector<int64_t> want;
  } cases[] = {
    {"nothing requested is best effort: PreScore skips", pod_with_requests("p", {{"", ""}}),
     {node_with_allocatable("node1", "4000m", "10000")}, "", {-1}},
    {"nothing scheduled, resources requested, differently sized nodes", cpu_and_memory,
     {node_with_allocatable("node1", "4000m", "10000"), node_with_allocatable("node2", "6000m", "10000")}, "",
     {87, 100}},
    {"resources requested, pods scheduled with resources", cpu_and_memory,
     {node_with_allocatable("node1", "10000m", "20000", "110", {cpu_only}),
      node_with_allocatable("node2", "10000m", "50000", "110", {cpu_and_memory})},
     "", {82, 80}},
    {"requests above capacity count as a full fraction", cpu_and_memory,
     {node_with_allocatable("node1", "4000m", "10000", "110", {cpu_only})}, "", {75}},
    {"actual requests, not the non-zero defaults: a memory-less pod on an empty node", cpu_only,
     {node_with_allocatable("node1", "6000m", "10000")}, "", {75}},
    {"zero allocatable resources are left out", cpu_and_memory, {node_with_allocatable("node1", "0", "0")}, "",
     {100}},
    {"three resources: standard deviation over all of them", pod_with_foo("1000m", "5000", "2"),
     {node_with_foo("node1", "4000m", "10000", "4")},
     "resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: example.com/foo, weight: 1}]", {88}},
    {"an extended resource the pod does not request is not scored", cpu_and_memory,
     {node_with_foo("node1", "4000m", "10000", "4")},
     "resources: [{name: cpu}, {name: memory}, {name: example.com/foo}]", {87}},
  };
  for (auto& c : cases) {
    auto pl = make_plugin(c.args);
    EXPECT_EQ(run(*pl, *c.pod, c.nodes), c.want) << c.name;
  }
}

TEST(NodeResourcesBalancedAllocation, ScoreWithoutPreScoreState) {
  auto pl = make_plugin();
  auto& sc = dynamic_cast<const fw::score_plugin&>(*pl);
  fw::cycle_state state;
  int64_t v = -1;
  auto node = node_with_allocatable("node1", "4000m", "10000");
  ASSERT_TRUE(sc.score(state, *pod_with_requests("p", {{"1000m", "2000"}, {"2000m", "3000"}}), *node, v).is_success());
  EXPECT_EQ(v, 87);
  ASSERT_TRUE(sc.score(state, *pod_with_requests("p", {{"", ""}}), *node, v).is_success());
  EXPECT_EQ(v, 0);
}

TEST(NodeResourcesBalancedAllocation, Args) {
  struct tc {
    const char* name;
    std::string args;
    std::string want_error;  // empty: valid
    size_t want_resources;
  } cases[] = {
    {"no args: cpu and memory", "", "", 2},
    {"empty resources: the defaults", "resources: []", "", 2},
    {"weight omitted defaults to 1", "resources: [{name: cpu}]", "", 1},
    {"weight other than 1", "resources: [{name: cpu, weight: 2}]",
     "args.resources[0].weight: Invalid value: 2: must be 1", 0},
    {"duplicate resource", "resources: [{name: cpu}, {name: cpu}]",
     "args.resources[1].name: Duplicate value: \"cpu\"", 0},
    {"unknown field", "resourcez: []", "args.resourcez: unknown field", 0},
    {"unknown resource field", "resources: [{name: cpu, wieght: 1}]", "args.resources[0].wieght: unknown field", 0},
  };
  for (auto& c : cases) {
    YAML::Node args = c.args.empty() ? YAML::Node() : YAML::Load(c.args);
    auto r = plugins::parse_balanced_allocation_args(args, "args");
    if (c.want_error.empty()) {
      ASSERT_TRUE(r) << c.name << ": " << r.err().message;
      EXPECT_EQ(r->resources.size(), c.want_resources) << c.name;
    } else {
      ASSERT_FALSE(r) << c.name;
      EXPECT_EQ(r.err().message, c.want_error) << c.name;
    }
  }
}

}  // namespace
}  // namespace kas

// NodeResourcesFit: Filter reasons and codes, scoring strategies, args validation. Cases follow
// kube's noderesources/fit_test.go, least_allocated_test.go, most_allocated_test.go and
// requested_to_capacity_ratio_test.go.
#include <gtest/gtest.h>

#include <random>

#include "plugins/node_resources_fit/node_resources_fit.hpp"
#include "plugins/node_resources_fit/resource_allocation.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_from_yaml;
using test::node_with_allocatable;
using test::pod_from_yaml;
using test::pod_with_requests;

std::shared_ptr<node_resources_fit> make_fit(const std::string& args_yaml = "") {
  auto pl = node_resources_fit::make(args_yaml.empty() ? YAML::Node() : YAML::Load(args_yaml), "args", fw::handle{});
  if (!pl) throw std::runtime_error(pl.err().message);
  return std::dynamic_pointer_cast<node_resources_fit>(*pl);
}

fw::status run_filter(const node_resources_fit& pl, const pod_info& pod, const node_info& node) {
  fw::cycle_state state;
  fw::pre_filter_result r;
  snapshot snap;
  auto s = pl.pre_filter(state, pod, snap, r);
  if (!s.is_success()) return s;
  return pl.filter(state, pod, node);
}

const char* ext_pod(const char* name, const char* requests) {
  static std::string y;
  y = std::string("metadata: {name: ") + name + ", uid: " + name +
      "}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {" + requests + "}}\n";
  return y.c_str();
}

TEST(NodeResourcesFit, Filter) {
  struct tc {
    const char* name;
    pod_info_ptr pod;
    std::shared_ptr<node_info> node;
    std::string args;
    fw::code want_code;
    const char* want_reasons;
  };
  auto used = pod_with_requests("used", {{"10", "20"}});
  auto half = pod_with_requests("half", {{"5", "19"}});
  std::vector<tc> cases = {
    {"no resources requested always fits", pod_with_requests("p", {{"", ""}}),
     node_with_allocatable("n", "10", "20", "32", {used}), "", fw::code::success, ""},
    {"too many resources fails", pod_with_requests("p", {{"1", "1"}}),
     node_with_allocatable("n", "10", "20", "32", {used}), "", fw::code::unschedulable,
     "Insufficient cpu | Insufficient memory"},
    {"too many resources fails due to init container cpu",
     pod_from_yaml("metadata: {name: p}\nspec:\n  containers: [{name: c, resources: {requests: {cpu: \"1\", memory: "
                   "\"1\"}}}]\n  initContainers: [{name: i, resources: {requests: {cpu: \"6\", memory: \"1\"}}}]"),
     node_with_allocatable("n", "10", "20", "32", {half}), "", fw::code::unschedulable, "Insufficient cpu"},
    {"fits after init container cpu is maxed, not summed",
     pod_from_yaml("metadata: {name: p}\nspec:\n  containers: [{name: c, resources: {requests: {cpu: \"1\", memory: "
                   "\"1\"}}}]\n  initContainers: [{name: i, resources: {requests: {cpu: \"5\", memory: \"1\"}}}]"),
     node_with_allocatable("n", "10", "20", "32", {half}), "", fw::code::success, ""},
    {"request larger than the whole node is unresolvable", pod_with_requests("p", {{"11", "1"}}),
     node_with_allocatable("n", "10", "20", "32"), "", fw::code::unschedulable_and_unresolvable, "Insufficient cpu"},
    {"one resolvable and one unresolvable shortfall are both reported", pod_with_requests("p", {{"11", "2"}}),
     node_with_allocatable("n", "10", "20", "32", {half}), "", fw::code::unschedulable_and_unresolvable,
     "Insufficient cpu | Insufficient memory"},
    {"even without specified resources, predicate fails when there's no space for additional pod",
     pod_with_requests("p", {{"", ""}}), node_with_allocatable("n", "10", "20", "1", {half}), "",
     fw::code::unschedulable, "Too many pods"},
    {"even if both resources fit, predicate fails when there's no space for additional pod",
     pod_with_requests("p", {{"1", "1"}}), node_with_allocatable("n", "10", "20", "1", {half}), "",
     fw::code::unschedulable, "Too many pods"},
    {"pod count and resources are reported together", pod_with_requests("p", {{"6", "2"}}),
     node_with_allocatable("n", "10", "20", "1", {half}), "", fw::code::unschedulable,
     "Too many pods | Insufficient cpu | Insufficient memory"},
    {"ephemeral storage is checked",
     pod_from_yaml(ext_pod("p", "ephemeral-storage: \"10Gi\"")),
     node_from_yaml("metadata: {name: n}\nstatus: {allocatable: {cpu: \"10\", memory: \"20\", pods: \"32\", "
                    "ephemeral-storage: \"20Gi\"}}",
                    {pod_from_yaml(ext_pod("e", "ephemeral-storage: \"15Gi\""))}),
     "", fw::code::unschedulable, "Insufficient ephemeral-storage"},
    {"extended resource fits", pod_from_yaml(ext_pod("p", "example.com/aaa: \"1\"")),
     node_from_yaml("metadata: {name: n}\nstatus: {allocatable: {cpu: \"10\", memory: \"20\", pods: \"32\", "
                    "example.com/aaa: \"5\"}}"),
     "", fw::code::success, ""},
    {"extended resource capacity enforced", pod_from_yaml(ext_pod("p", "example.com/aaa: \"3\"")),
     node_from_yaml("metadata: {name: n}\nstatus: {allocatable: {cpu: \"10\", memory: \"20\", pods: \"32\", "
                    "example.com/aaa: \"5\"}}",
                    {pod_from_yaml(ext_pod("e", "example.com/aaa: \"3\""))}),
     "", fw::code::unschedulable, "Insufficient example.com/aaa"},
    {"extended resource missing on the node is unresolvable", pod_from_yaml(ext_pod("p", "example.com/aaa: \"1\"")),
     node_with_allocatable("n", "10", "20"), "", fw::code::unschedulable_and_unresolvable,
     "Insufficient example.com/aaa"},
    {"ignoredResources skips an extended resource", pod_from_yaml(ext_pod("p", "example.com/aaa: \"1\"")),
     node_with_allocatable("n", "10", "20"), "ignoredResources: [example.com/aaa]", fw::code::success, ""},
    {"ignoredResourceGroups skips every resource of the group",
     pod_from_yaml(ext_pod("p", "example.com/aaa: \"1\", example.com/bbb: \"1\"")),
     node_with_allocatable("n", "10", "20"), "ignoredResourceGroups: [example.com]", fw::code::success, ""},
    {"ignoredResourceGroups leaves other groups checked",
     pod_from_yaml(ext_pod("p", "example.com/aaa: \"1\", other.io/bbb: \"1\"")),
     node_with_allocatable("n", "10", "20"), "ignoredResourceGroups: [example.com]",
     fw::code::unschedulable_and_unresolvable, "Insufficient other.io/bbb"},
  };
  for (auto& c : cases) {
    auto pl = make_fit(c.args);
    auto s = run_filter(*pl, *c.pod, *c.node);
    EXPECT_EQ(s.get_code(), c.want_code) << c.name;
    EXPECT_EQ(test::reasons(s), c.want_reasons) << c.name;
  }
}

TEST(NodeResourcesFit, FilterWithoutPreFilterStateUsesThePodRequests) {
  auto pl = make_fit();
  auto pod = pod_with_requests("p", {{"11", "1"}});
  auto node = node_with_allocatable("n", "10", "20");
  auto s = pl->filter(fw::cycle_state{}, *pod, *node);
  EXPECT_EQ(test::reasons(s), "Insufficient cpu");
}

TEST(NodeResourcesFit, PreFilterStateCloneIsDeep) {
  auto pl = make_fit();
  fw::cycle_state state;
  fw::pre_filter_result r;
  snapshot snap;
  auto pod = pod_with_requests("p", {{"1", "1"}});
  ASSERT_TRUE(pl->pre_filter(state, *pod, snap, r).is_success());
  auto copy = state.clone();
  EXPECT_NE(copy.read(node_resources_fit::pre_filter_key), state.read(node_resources_fit::pre_filter_key));
  EXPECT_NE(copy.read(node_resources_fit::pre_filter_key), nullptr);
}

struct score_case {
  const char* name;
  pod_info_ptr pod;
  std::vector<std::shared_ptr<node_info>> nodes;
  std::string args;
  std::vector<int64_t> want;
};

void run_score_cases(const std::vector<score_case>& cases) {
  for (auto& c : cases) {
    auto pl = make_fit(c.args);
    fw::cycle_state state;
    std::vector<const node_info*> nodes;
    for (auto& n : c.nodes) nodes.push_back(n.get());
    ASSERT_TRUE(pl->pre_score(state, *c.pod, nodes).is_success()) << c.name;
    std::vector<int64_t> got;
    for (auto* n : nodes) {
      int64_t s = -1;
      EXPECT_TRUE(pl->score(state, *c.pod, *n, s).is_success()) << c.name;
      got.push_back(s);
    }
    EXPECT_EQ(got, c.want) << c.name;
    EXPECT_FALSE(pl->has_normalize()) << c.name;
  }
}

TEST(NodeResourcesFit, LeastAllocatedScore) {
  auto p3000_5000 = pod_with_requests("p", {{"1000m", "2000"}, {"2000m", "3000"}});
  auto existing = pod_with_requests("e", {{"3000m", "5000"}});
  run_score_cases({
    // Node1: cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50 -> 37.
    // Node2: cpu (6000-3000)*100/6000 = 50, memory 50 -> 50.
    {"nothing scheduled, resources requested, differently sized nodes", p3000_5000,
     {node_with_allocatable("node1", "4000m", "10000"), node_with_allocatable("node2", "6000m", "10000")}, "",
     {37, 50}},
    // The non-zero defaults (100m, 200Mi) apply to a pod that requests nothing:
    // cpu (4000-100)*100/4000 = 97, memory (2000Mi-200Mi)*100/2000Mi = 90 -> 93.
    {"nothing requested counts the non-zero defaults", pod_with_requests("p", {{"", ""}}),
     {node_with_allocatable("node1", "4", "2000Mi")}, "", {93}},
    // cpu (10000-6000)*100/10000 = 40, memory (20000-10000)*100/20000 = 50 -> 45.
    {"resources requested, pods scheduled with resources", p3000_5000,
     {node_with_allocatable("node1", "10000m", "20000", "110", {existing})}, "", {45}},
    // cpu 6000 > 4000 scores 0, memory 50 -> 25.
    {"requested resources exceed node capacity", p3000_5000,
     {node_with_allocatable("node1", "4000m", "20000", "110", {existing})}, "", {25}},
    {"zero node resources, pods scheduled with resources", p3000_5000, {node_with_allocatable("node1", "0", "0")},
     "", {0}},
    // Weights cpu 2, memory 1: (25*2 + 50) / 3 = 33.
    {"resources with custom weights", p3000_5000, {node_with_allocatable("node1", "4000m", "10000")},
     "scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]}",
     {33}},
    // An extended resource the pod does not request is left out: only cpu and memory count.
    {"extended resource not requested is ignored", p3000_5000, {node_with_allocatable("node1", "4000m", "10000")},
     "scoringStrategy: {resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: example.com/foo, "
     "weight: 3}], type: LeastAllocated}",
     {37}},
  });
}

TEST(NodeResourcesFit, MostAllocatedScore) {
  auto p3000_5000 = pod_with_requests("p", {{"1000m", "2000"}, {"2000m", "3000"}});
  auto existing = pod_with_requests("e", {{"3000m", "5000"}});
  const std::string most = "scoringStrategy: {type: MostAllocated}";
  run_score_cases({
    // Node1: cpu 3000*100/4000 = 75, memory 50 -> 62. Node2: cpu 50, memory 50 -> 50.
    {"nothing scheduled, resources requested, differently sized nodes", p3000_5000,
     {node_with_allocatable("node1", "4000m", "10000"), node_with_allocatable("node2", "6000m", "10000")}, most,
     {62, 50}},
    // cpu 6000 capped at 4000 -> 100, memory 10000/20000 -> 50 -> 75.
    {"requested resources exceed node capacity are capped", p3000_5000,
     {node_with_allocatable("node1", "4000m", "20000", "110", {existing})}, most, {75}},
    {"zero node resources", p3000_5000, {node_with_allocatable("node1", "0", "0")}, most, {0}},
  });
}

TEST(NodeResourcesFit, RequestedToCapacityRatioScore) {
  auto p3000_5000 = pod_with_requests("p", {{"1000m", "2000"}, {"2000m", "3000"}});
  const std::string bin_packing =
    "scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 0, score: "
    "0}, {utilization: 100, score: 10}]}}";
  const std::string spreading =
    "scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 0, score: "
    "10}, {utilization: 100, score: 0}]}}";
  run_score_cases({
    // cpu 75, memory 50 -> 62.5 rounds to 63 (MostAllocated truncates to 62).
    {"bin packing rounds the weighted mean", p3000_5000, {node_with_allocatable("node1", "4000m", "10000")},
     bin_packing, {63}},
    // cpu 100-75 = 25, memory 50 -> 37.5 rounds to 38.
    {"spreading shape", p3000_5000, {node_with_allocatable("node1", "4000m", "10000")}, spreading, {38}},
    // Full utilization scores 0 in the spreading shape and drops out of the mean: memory 50 alone.
    {"a zero resource score is left out of the mean", p3000_5000, {node_with_allocatable("node1", "3000m", "10000")},
     spreading, {50}},
  });
}

TEST(NodeResourcesFit, Args) {
  struct tc {
    const char* name;
    const char* yaml;
    const char* want_error;  // "" = valid
  };
  const tc cases[] = {
    {"defaults", "{}", ""},
    {"unknown field", "{foo: 1}", "args.foo: unknown field"},
    {"unsupported strategy", "scoringStrategy: {type: Foo}",
     "args.scoringStrategy.type: Unsupported value: \"Foo\": supported values: \"LeastAllocated\", "
     "\"MostAllocated\", \"RequestedToCapacityRatio\""},
    {"weight out of range", "scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 101}]}",
     "args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, "
     "100]"},
    {"ignored resource group with a slash", "ignoredResourceGroups: [example.com/aaa]",
     "args.ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource group name can't contain '/'"},
    {"invalid ignored resource name", "ignoredResources: [\"foo bar\"]",
     "args.ignoredResources[0]: Invalid value: \"foo bar\": name part must consist of alphanumeric characters, '-', "
     "'_' or '.', and must start and end with an alphanumeric character"},
    {"RequestedToCapacityRatio without shape", "scoringStrategy: {type: RequestedToCapacityRatio}",
     "args.scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified"},
    {"shape not sorted",
     "scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 50, score: "
     "1}, {utilization: 10, score: 2}]}}",
     "args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: utilization values "
     "must be sorted in increasing order"},
    {"shape score out of range",
     "scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 10, score: "
     "11}]}}",
     "args.scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]"},
    {"weight must be an integer", "scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: x}]}",
     "args.scoringStrategy.resources[0].weight: expected an integer, got \"x\""},
  };
  for (auto& c : cases) {
    auto pl = node_resources_fit::make(YAML::Load(c.yaml), "args", fw::handle{});
    if (std::string(c.want_error).empty()) {
      EXPECT_TRUE(pl.ok()) << c.name << ": " << (pl.ok() ? "" : pl.err().message);
    } else {
      ASSERT_FALSE(pl.ok()) << c.name;
      EXPECT_EQ(pl.err().message, c.want_error) << c.name;
    }
  }
  auto defaults = parse_node_resources_fit_args(YAML::Node(), "args");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->type, scoring_strategy_type::least_allocated);
  ASSERT_EQ(defaults->resources.size(), 2u);
  EXPECT_EQ(defaults->resources[0].name, "cpu");
  EXPECT_EQ(defaults->resources[1].name, "memory");
  auto zero_weight = parse_node_resources_fit_args(
    YAML::Load("scoringStrategy: {type: MostAllocated, resources: [{name: cpu}]}"), "args");
  ASSERT_TRUE(zero_weight.ok());
  EXPECT_EQ(zero_weight->resources.at(0).weight, 1);
}

TEST(NodeResourcesFit, QueueingHints) {
  auto pl = make_fit();
  auto hints = pl->events_to_register();
  ASSERT_EQ(hints.size(), 2u);
  auto pod = pod_with_requests("p", {{"2", "1"}});
  auto small = node_with_allocatable("n", "1", "20");
  auto big = node_with_allocatable("n", "4", "20");
  auto& node_hint = hints[1].hint;
  EXPECT_EQ(node_hint(*pod, {nullptr, nullptr, nullptr, small.get()}), fw::queueing_hint::skip);
  EXPECT_EQ(node_hint(*pod, {nullptr, nullptr, nullptr, big.get()}), fw::queueing_hint::queue);
  EXPECT_EQ(node_hint(*pod, {nullptr, nullptr, small.get(), big.get()}), fw::queueing_hint::queue);
  EXPECT_EQ(node_hint(*pod, {nullptr, nullptr, big.get(), big.get()}), fw::queueing_hint::skip);
  auto& pod_hint = hints[0].hint;
  auto unscheduled = pod_with_requests("u", {{"1", "1"}});
  auto scheduled = with_node_name(*unscheduled, "n");
  EXPECT_EQ(pod_hint(*pod, {unscheduled.get(), nullptr, nullptr, nullptr}), fw::queueing_hint::skip);
  EXPECT_EQ(pod_hint(*pod, {scheduled.get(), nullptr, nullptr, nullptr}), fw::queueing_hint::queue);
}

// score_div stands in for the integer division of the hot scoring kernels: it must equal it for
// every quotient in [0, 100], at and beside each multiple of the divisor, for divisors from 1 to
// the largest it takes on (2^56), where a double quotient is most likely to round across an
// integer.
TEST(NodeResourcesFit, ScoreDivIsTheIntegerDivision) {
  std::vector<int64_t> dens = {1, 2, 3, 7, 100, 101, 4000, 4096, 33554432, (int64_t{32} << 30) + 1,
                               (int64_t{1} << 53) - 1, (int64_t{1} << 53), (int64_t{1} << 53) + 1,
                               (int64_t{1} << 55) + 12345, (int64_t{1} << 56)};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i)
    dens.push_back(std::uniform_int_distribution<int64_t>(1, int64_t{1} << 56)(rng));
  for (int64_t den : dens)
    for (int64_t k = 0; k <= 100; ++k)
      for (int64_t d : {int64_t{-1}, int64_t{0}, int64_t{1}}) {
        int64_t num = k * den + d;
        if (num < 0 || num > 100 * den) continue;
        ASSERT_EQ(plugins::score_div(num, den), num / den) << num << " / " << den;
      }
  // Above 2^56 and for divisors <= 0 it is the integer division itself.
  EXPECT_EQ(plugins::score_div(int64_t{3} << 57, int64_t{1} << 57), 3);
  EXPECT_EQ(plugins::score_div(7, -2), 7 / -2);
}

}  // namespace
}  // namespace kas::plugins

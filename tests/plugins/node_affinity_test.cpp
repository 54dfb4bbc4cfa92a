// NodeAffinity: PreFilter (Skip, node-name narrowing, conflicts), Filter, Score/NormalizeScore and
// args; cases from kube's node_affinity_test.go.
#include <gtest/gtest.h>

#include "plugins/node_affinity/node_affinity.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_from_yaml;
using test::pod_from_yaml;

std::shared_ptr<node_affinity> make_affinity(const std::string& args = "") {
  auto pl = node_affinity::make(args.empty() ? YAML::Node() : YAML::Load(args), "args", fw::handle{});
  if (!pl) throw std::runtime_error(pl.err().message);
  return std::dynamic_pointer_cast<node_affinity>(*pl);
}

pod_info_ptr pod_spec(const std::string& spec) { return pod_from_yaml("metadata: {name: p, uid: p}\nspec: " + spec); }

std::string required(const std::string& terms) {
  return "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" + terms +
         "]}}}}";
}

std::shared_ptr<node_info> labeled(const std::string& name, const std::string& labels) {
  return node_from_yaml("metadata: {name: " + name + ", labels: {" + labels + "}}");
}

TEST(NodeAffinity, Filter) {
  struct tc {
    const char* name;
    std::string spec;
    std::string labels;
    std::string args;
    bool want_skip;
    const char* want_reason;  // "" = fits
  };
  const char* pod_reason = "node(s) didn't match Pod's node affinity/selector";
  const tc cases[] = {
    {"no selector", "{}", "", "", true, ""},
    {"missing labels", "{nodeSelector: {foo: bar}}", "", "", false, pod_reason},
    {"same labels", "{nodeSelector: {foo: bar}}", "foo: bar", "", false, ""},
    {"node labels are superset", "{nodeSelector: {foo: bar}}", "foo: bar, baz: blah", "", false, ""},
    {"node labels are subset", "{nodeSelector: {foo: bar, baz: blah}}", "foo: bar", "", false, pod_reason},
    {"Pod with matchExpressions using In operator that matches the existing node",
     required("{matchExpressions: [{key: foo, operator: In, values: [bar, value2]}]}"), "foo: bar", "", false, ""},
    {"Pod with matchExpressions using Gt operator that matches the existing node",
     required("{matchExpressions: [{key: kernel-version, operator: Gt, values: [\"0204\"]}]}"),
     "kernel-version: \"0206\"", "", false, ""},
    {"Pod with matchExpressions using NotIn operator that matches the existing node",
     required("{matchExpressions: [{key: mem-type, operator: NotIn, values: [DDR, DDR2]}]}"), "mem-type: DDR3", "",
     false, ""},
    {"Pod with matchExpressions using Exists operator that matches the existing node",
     required("{matchExpressions: [{key: GPU, operator: Exists}]}"), "GPU: NVIDIA-GRID-K1", "", false, ""},
    {"Pod with affinity that don't match node's labels won't schedule onto the node",
     required("{matchExpressions: [{key: foo, operator: In, values: [value1, value2]}]}"), "foo: bar", "", false,
     pod_reason},
    {"Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
     required("{matchExpressions: []}"), "foo: bar", "", false, pod_reason},
    {"Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     required("{matchExpressions: [{key: GPU, operator: Exists}, {key: GPU, operator: NotIn, values: [AMD, "
              "INTER]}]}"),
     "GPU: AMD", "", false, pod_reason},
    {"Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
     required("{matchExpressions: [{key: foo, operator: In, values: [bar, value2]}]}, {matchExpressions: [{key: "
              "diffkey, operator: In, values: [wrong, value2]}]}"),
     "foo: bar", "", false, ""},
    {"Pod with an Affinity and a PodSpec.NodeSelector both satisfied will schedule onto the node",
     "{nodeSelector: {foo: bar}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
     "{nodeSelectorTerms: [{matchExpressions: [{key: foo, operator: Exists}]}]}}}}",
     "foo: bar", "", false, ""},
    {"Pod with an Affinity matches node's labels but the PodSpec.NodeSelector is not satisfied won't schedule",
     "{nodeSelector: {foo: bar}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
     "{nodeSelectorTerms: [{matchExpressions: [{key: foo, operator: Exists}]}]}}}}",
     "foo: barrrrrr", "", false, pod_reason},
    {"Pod with matchFields using In operator that matches the existing node",
     required("{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}"), "", "", false, ""},
    {"Pod with matchFields using In operator that does not match the existing node",
     required("{matchFields: [{key: metadata.name, operator: In, values: [node2]}]}"), "", "", false, pod_reason},
    {"Pod with no node affinity and addedAffinity that does not match is rejected by the enforced affinity", "{}",
     "foo: bar",
     "addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: "
     "[{key: zone, operator: In, values: [foo]}]}]}}",
     false, "node(s) didn't match scheduler-enforced node affinity"},
    {"addedAffinity and the pod's selector both satisfied", "{nodeSelector: {foo: bar}}", "foo: bar, zone: foo",
     "addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: "
     "[{key: zone, operator: In, values: [foo]}]}]}}",
     false, ""},
  };
  for (auto& c : cases) {
    auto pl = make_affinity(c.args);
    auto pod = pod_spec(c.spec);
    auto node = labeled("node1", c.labels);
    fw::cycle_state state;
    fw::pre_filter_result r;
    snapshot snap;
    auto pre = pl->pre_filter(state, *pod, snap, r);
    EXPECT_EQ(pre.is_skip(), c.want_skip) << c.name;
    auto s = pl->filter(state, *pod, *node);
    if (std::string(c.want_reason).empty()) {
      EXPECT_TRUE(s.is_success()) << c.name;
    } else {
      EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable) << c.name;
      EXPECT_EQ(test::reasons(s), c.want_reason) << c.name;
    }
  }
}

TEST(NodeAffinity, PreFilterResult) {
  struct tc {
    const char* name;
    std::string terms;
    std::optional<std::set<std::string>> want_nodes;
    const char* want_error;
  };
  const tc cases[] = {
    {"one term pinning one node", "{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}",
     std::set<std::string>{"node1"}, ""},
    {"two terms are unioned",
     "{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}, {matchFields: [{key: metadata.name, "
     "operator: In, values: [node2, node3]}]}",
     std::set<std::string>{"node1", "node2", "node3"}, ""},
    {"requirements of one term are intersected",
     "{matchFields: [{key: metadata.name, operator: In, values: [node1, node2]}, {key: metadata.name, operator: In, "
     "values: [node2, node3]}]}",
     std::set<std::string>{"node2"}, ""},
    {"a term without a name pin allows every node",
     "{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}, {matchExpressions: [{key: foo, operator: "
     "Exists}]}",
     std::nullopt, ""},
    {"NotIn does not narrow", "{matchFields: [{key: metadata.name, operator: NotIn, values: [node1]}]}", std::nullopt,
     ""},
    {"conflicting terms",
     "{matchFields: [{key: metadata.name, operator: In, values: [node1]}, {key: metadata.name, operator: In, values: "
     "[node2]}]}",
     std::nullopt, "pod affinity terms conflict"},
  };
  auto pl = make_affinity();
  for (auto& c : cases) {
    auto pod = pod_spec(required(c.terms));
    fw::cycle_state state;
    fw::pre_filter_result r;
    snapshot snap;
    auto s = pl->pre_filter(state, *pod, snap, r);
    if (std::string(c.want_error).empty()) {
      EXPECT_TRUE(s.is_success()) << c.name;
      EXPECT_EQ(r.node_names, c.want_nodes) << c.name;
    } else {
      EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable) << c.name;
      EXPECT_EQ(test::reasons(s), c.want_error) << c.name;
    }
  }
}

TEST(NodeAffinity, Score) {
  const std::string affinity1 =
    "{affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 2, preference: "
    "{matchExpressions: [{key: foo, operator: In, values: [bar]}]}}]}}}";
  const std::string affinity2 =
    "{affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: ["
    "{weight: 2, preference: {matchExpressions: [{key: foo, operator: In, values: [bar]}]}},"
    "{weight: 4, preference: {matchExpressions: [{key: key, operator: In, values: [value]}]}},"
    "{weight: 5, preference: {matchExpressions: [{key: foo, operator: In, values: [bar]}, {key: key, operator: In, "
    "values: [value]}, {key: az, operator: In, values: [az1]}]}}]}}}";
  struct tc {
    const char* name;
    std::string spec;
    std::vector<std::string> labels;
    std::string args;
    bool want_skip;
    std::vector<int64_t> want_raw, want_normalized;
  };
  const tc cases[] = {
    {"all nodes are same priority as NodeAffinity is nil", "{}", {"foo: bar", "key: value", "az: az1"}, "", true, {},
     {}},
    {"no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
     affinity1, {"key: value", "az: az1", "region: r1"}, "", false, {0, 0, 0}, {0, 0, 0}},
    {"only node1 matches the preferred scheduling requirements of pod", affinity1,
     {"foo: bar", "key: value", "az: az1"}, "", false, {2, 0, 0}, {100, 0, 0}},
    {"all nodes matches the preferred scheduling requirements of pod but with different priorities", affinity2,
     {"foo: bar", "foo: bar, key: value, az: az1", "foo: bar, key: value"}, "", false, {2, 11, 6}, {18, 100, 54}},
    {"added affinity",
     "{}",
     {"zone: foo", "zone: bar"},
     "addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, preference: {matchExpressions: "
     "[{key: zone, operator: In, values: [foo]}]}}]}",
     false, {5, 0}, {100, 0}},
  };
  for (auto& c : cases) {
    auto pl = make_affinity(c.args);
    auto pod = pod_spec(c.spec);
    std::vector<std::shared_ptr<node_info>> nodes;
    std::vector<const node_info*> ptrs;
    for (size_t i = 0; i < c.labels.size(); ++i) {
      nodes.push_back(labeled("node" + std::to_string(i + 1), c.labels[i]));
      ptrs.push_back(nodes.back().get());
    }
    fw::cycle_state state;
    auto pre = pl->pre_score(state, *pod, ptrs);
    EXPECT_EQ(pre.is_skip(), c.want_skip) << c.name;
    if (c.want_skip) continue;
    std::vector<int64_t> raw;
    std::vector<fw::node_score> scores;
    for (auto& n : nodes) {
      int64_t s = -1;
      ASSERT_TRUE(pl->score(state, *pod, *n, s).is_success()) << c.name;
      raw.push_back(s);
      scores.push_back({n->name, s});
    }
    EXPECT_EQ(raw, c.want_raw) << c.name;
    ASSERT_TRUE(pl->normalize_score(state, *pod, scores).is_success());
    std::vector<int64_t> normalized;
    for (auto& s : scores) normalized.push_back(s.score);
    EXPECT_EQ(normalized, c.want_normalized) << c.name;
  }
}

TEST(NodeAffinity, Args) {
  EXPECT_TRUE(node_affinity::make(YAML::Load("{}"), "args", fw::handle{}).ok());
  auto bad_field = node_affinity::make(YAML::Load("{foo: 1}"), "args", fw::handle{});
  ASSERT_FALSE(bad_field.ok());
  EXPECT_EQ(bad_field.err().message, "args.foo: unknown field");
  auto bad_op = node_affinity::make(
    YAML::Load("addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
               "[{matchExpressions: [{key: zone, operator: Foo, values: [a]}]}]}}"),
    "args", fw::handle{});
  ASSERT_FALSE(bad_op.ok());
  EXPECT_EQ(bad_op.err().message.rfind("args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution", 0), 0u)
    << bad_op.err().message;
}

TEST(NodeAffinity, NodeHint) {
  auto pl = make_affinity();
  auto hints = pl->events_to_register();
  ASSERT_EQ(hints.size(), 1u);
  auto pod = pod_spec("{nodeSelector: {foo: bar}}");
  auto match = labeled("n", "foo: bar");
  auto miss = labeled("n", "foo: baz");
  auto& hint = hints[0].hint;
  EXPECT_EQ(hint(*pod, {nullptr, nullptr, nullptr, match.get()}), fw::queueing_hint::queue);
  EXPECT_EQ(hint(*pod, {nullptr, nullptr, nullptr, miss.get()}), fw::queueing_hint::skip);
  EXPECT_EQ(hint(*pod, {nullptr, nullptr, miss.get(), match.get()}), fw::queueing_hint::queue);
  EXPECT_EQ(hint(*pod, {nullptr, nullptr, match.get(), match.get()}), fw::queueing_hint::skip);
}

}  // namespace
}  // namespace kas::plugins

namespace kas::plugins {
namespace {

// --explain's detail: the label or the term that did not match (kube's reason does not say).
TEST(NodeAffinity, ExplainNamesWhatDidNotMatch) {
  auto pl = make_affinity();
  fw::cycle_state st;
  auto n = labeled("n1", "zone: a, disk: hdd");
  EXPECT_EQ(pl->explain(st, *pod_spec("{nodeSelector: {zone: b}}"), *n), "nodeSelector {zone: b}: the node has zone=a");
  EXPECT_EQ(pl->explain(st, *pod_spec("{nodeSelector: {gpu: t4}}"), *n), "nodeSelector {gpu: t4}: the node has no label gpu");
  EXPECT_EQ(pl->explain(st,
                        *pod_spec(required("{matchExpressions: [{key: zone, operator: In, values: [a]}, "
                                           "{key: disk, operator: In, values: [ssd, nvme]}]}, "
                                           "{matchExpressions: [{key: arch, operator: Exists}]}")),
                        *n),
            "no required nodeSelectorTerm matched; term 0: disk In [ssd, nvme]; term 1: arch Exists");
  EXPECT_EQ(pl->explain(st, *pod_spec("{nodeSelector: {zone: a}}"), *n), "") << "a fitting node has nothing to explain";
}

}  // namespace
}  // namespace kas::plugins

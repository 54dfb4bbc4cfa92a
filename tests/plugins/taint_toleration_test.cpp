// TaintToleration: Filter and Score/NormalizeScore, cases from kube's taint_toleration_test.go.
#include <gtest/gtest.h>

#include "plugins/taint_toleration/taint_toleration.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_from_yaml;
using test::pod_from_yaml;

pod_info_ptr pod_tolerating(const std::string& tolerations) {
  return pod_from_yaml("metadata: {name: p, uid: p}\nspec: {tolerations: [" + tolerations + "]}");
}

std::shared_ptr<node_info> node_tainted(const std::string& name, const std::string& taints) {
  return node_from_yaml("metadata: {name: " + name + "}\nspec: {taints: [" + taints + "]}");
}

TEST(TaintToleration, Filter) {
  struct tc {
    const char* name;
    std::string tolerations;
    std::string taints;
    bool want_fit;
  };
  const tc cases[] = {
    {"A pod having no tolerations can't be scheduled onto a node with nonempty taints", "",
     "{key: dedicated, value: user1, effect: NoSchedule}", false},
    {"A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     "{key: dedicated, value: user1, effect: NoSchedule}", "{key: dedicated, value: user1, effect: NoSchedule}", true},
    {"A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     "{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}",
     "{key: dedicated, value: user1, effect: NoSchedule}", false},
    {"A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the "
     "node",
     "{key: foo, operator: Exists, effect: NoSchedule}", "{key: foo, value: bar, effect: NoSchedule}", true},
    {"A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled "
     "onto the node",
     "{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}, {key: foo, operator: Exists, effect: "
     "NoSchedule}",
     "{key: dedicated, value: user2, effect: NoSchedule}, {key: foo, value: bar, effect: NoSchedule}", true},
    {"A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't "
     "match, can't be scheduled onto the node",
     "{key: foo, operator: Equal, value: bar, effect: PreferNoSchedule}", "{key: foo, value: bar, effect: NoSchedule}",
     false},
    {"The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, "
     "and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
     "{key: foo, operator: Equal, value: bar}", "{key: foo, value: bar, effect: NoSchedule}", true},
    {"The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node "
     "is PreferNoSchedule. Pod can be scheduled onto the node",
     "{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}",
     "{key: dedicated, value: user1, effect: PreferNoSchedule}", true},
    {"The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the "
     "node",
     "", "{key: dedicated, value: user1, effect: PreferNoSchedule}", true},
    {"An untolerated NoExecute taint rejects the pod", "", "{key: foo, value: bar, effect: NoExecute}", false},
  };
  taint_toleration pl;
  for (auto& c : cases) {
    auto s = pl.filter(fw::cycle_state{}, *pod_tolerating(c.tolerations), *node_tainted("n", c.taints));
    if (c.want_fit) {
      EXPECT_TRUE(s.is_success()) << c.name;
    } else {
      EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable) << c.name;
      EXPECT_EQ(test::reasons(s), "node(s) had untolerated taint(s)") << c.name;
    }
  }
}

TEST(TaintToleration, Score) {
  struct tc {
    const char* name;
    std::string tolerations;
    std::vector<std::string> node_taints;
    std::vector<int64_t> want_raw, want_normalized;
  };
  const tc cases[] = {
    {"node with taints that tolerated by pod gets higher score",
     "{key: foo, operator: Equal, value: bar, effect: PreferNoSchedule}",
     {"{key: foo, value: bar, effect: PreferNoSchedule}", "{key: foo, value: blah, effect: PreferNoSchedule}"},
     {0, 1},
     {100, 0}},
    {"the more intolerable taints a node has, the lower score it gets",
     "{key: foo, operator: Equal, value: bar, effect: PreferNoSchedule}",
     {"", "{key: cpu-type, value: arm64, effect: PreferNoSchedule}",
      "{key: cpu-type, value: arm64, effect: PreferNoSchedule}, {key: gpu, value: \"true\", effect: PreferNoSchedule}"},
     {0, 1, 2},
     {100, 50, 0}},
    {"only taints and tolerations that have effect PreferNoSchedule are checked by score",
     "{key: cpu-type, operator: Equal, value: arm64, effect: NoSchedule}, {key: disk-type, operator: Equal, value: "
     "ssd, effect: NoSchedule}",
     {"", "{key: cpu-type, value: arm64, effect: NoSchedule}",
      "{key: cpu-type, value: arm64, effect: PreferNoSchedule}, {key: disk-type, value: ssd, effect: "
      "PreferNoSchedule}"},
     {0, 0, 2},
     {100, 100, 0}},
    {"Default behaviour No taints and tolerations, lands on node with no taints",
     "",
     {"", "{key: cpu-type, value: arm64, effect: PreferNoSchedule}"},
     {0, 1},
     {100, 0}},
    {"all nodes without taints score the maximum", "", {"", ""}, {0, 0}, {100, 100}},
  };
  taint_toleration pl;
  for (auto& c : cases) {
    auto pod = pod_tolerating(c.tolerations);
    std::vector<std::shared_ptr<node_info>> nodes;
    std::vector<const node_info*> ptrs;
    for (size_t i = 0; i < c.node_taints.size(); ++i) {
      nodes.push_back(node_tainted("n" + std::to_string(i), c.node_taints[i]));
      ptrs.push_back(nodes.back().get());
    }
    fw::cycle_state state;
    ASSERT_TRUE(pl.pre_score(state, *pod, ptrs).is_success()) << c.name;
    std::vector<fw::node_score> scores;
    std::vector<int64_t> raw;
    for (auto& n : nodes) {
      int64_t s = -1;
      ASSERT_TRUE(pl.score(state, *pod, *n, s).is_success()) << c.name;
      raw.push_back(s);
      scores.push_back({n->name, s});
    }
    EXPECT_EQ(raw, c.want_raw) << c.name;
    ASSERT_TRUE(pl.normalize_score(state, *pod, scores).is_success());
    std::vector<int64_t> normalized;
    for (auto& s : scores) normalized.push_back(s.score);
    EXPECT_EQ(normalized, c.want_normalized) << c.name;
  }
}

TEST(TaintToleration, ScoreWithoutPreScoreIsAnError) {
  taint_toleration pl;
  int64_t s = 0;
  auto st = pl.score(fw::cycle_state{}, *pod_tolerating(""), *node_tainted("n", ""), s);
  EXPECT_EQ(st.get_code(), fw::code::error);
}

TEST(TaintToleration, NodeHintQueuesOnlyWhenTheTaintGoesAway) {
  taint_toleration pl;
  auto hints = pl.events_to_register();
  ASSERT_EQ(hints.size(), 2u);
  auto pod = pod_tolerating("");
  auto tainted = node_tainted("n", "{key: foo, value: bar, effect: NoSchedule}");
  auto clean = node_tainted("n", "");
  auto& hint = hints[0].hint;
  EXPECT_EQ(hint(*pod, {nullptr, nullptr, tainted.get(), clean.get()}), fw::queueing_hint::queue);
  EXPECT_EQ(hint(*pod, {nullptr, nullptr, clean.get(), tainted.get()}), fw::queueing_hint::skip);
  EXPECT_EQ(hint(*pod, {nullptr, nullptr, nullptr, clean.get()}), fw::queueing_hint::queue);
  EXPECT_EQ(hint(*pod, {nullptr, nullptr, nullptr, tainted.get()}), fw::queueing_hint::skip);
}

}  // namespace
}  // namespace kas::plugins

namespace kas::plugins {
namespace {

// --explain's detail names the untolerated taint (kube's v1.36 reason, "node(s) had untolerated
// taint(s)", does not).
TEST(TaintToleration, ExplainNamesTheUntoleratedTaint) {
  auto pl = taint_toleration::make(YAML::Node(), "args", fw::handle{});
  ASSERT_TRUE(pl);
  auto& tt = dynamic_cast<taint_toleration&>(**pl);
  fw::cycle_state st;
  auto n = node_tainted("n1", "{key: soft, effect: PreferNoSchedule}, {key: dedicated, value: gpu, effect: NoExecute}");
  EXPECT_EQ(tt.explain(st, *pod_tolerating(""), *n), "untolerated taint {dedicated: gpu} (NoExecute)");
  EXPECT_EQ(tt.explain(st, *pod_tolerating("{key: dedicated, operator: Exists}"), *n), "");
}

}  // namespace
}  // namespace kas::plugins

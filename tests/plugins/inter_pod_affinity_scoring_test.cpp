// InterPodAffinity: PreScore/Score/NormalizeScore (kube's scoring_test.go TestPreferredAffinity and
// TestPreferredAffinityWithHardPodAffinitySymmetricWeight), queueing hints (plugin_test.go),
// SignPod, registration and args validation.
#include <gtest/gtest.h>

#include "plugins/framework/registry.hpp"
#include "tests/plugins/inter_pod_affinity_fixtures.hpp"

namespace kas::plugins {
namespace {

using namespace ipa_test;
using fw::code;

const std::vector<label_map::entry> s1{{"security", "S1"}};
const std::vector<label_map::entry> s2{{"security", "S2"}};

// kube's scoring_test.go affinities, as builders applied to a pod.
pod_builder& stay_with_s1_in_region(pod_builder& b) { return b.pref_aff(5, in("security", {"S1"}, "region")); }
pod_builder& stay_with_s2_in_region(pod_builder& b) { return b.pref_aff(6, in("security", {"S2"}, "region")); }
pod_builder& away_from_s1_in_az(pod_builder& b) { return b.pref_anti(5, in("security", {"S1"}, "az")); }
pod_builder& away_from_s2_in_az(pod_builder& b) { return b.pref_anti(5, in("security", {"S2"}, "az")); }
pod_builder& stay_with_s1_in_region_away_from_s2_in_az(pod_builder& b) {
  return b.pref_aff(8, in("security", {"S1"}, "region")).pref_anti(5, in("security", {"S2"}, "az"));
}
pod_builder& affinity3(pod_builder& b) {
  return b
    .pref_aff(8,
              term({req("security", selector_op::not_in, {"S1"}), req("security", selector_op::in, {"S2"})}, "region"))
    .pref_aff(2, term({req("security", selector_op::exists), req("wrongkey", selector_op::does_not_exist)}, "region"));
}
pod_builder& hard_affinity(pod_builder& b) {
  return b.aff(in("security", {"S1", "value2"}, "region"))
    .aff(term({req("security", selector_op::exists), req("wrongkey", selector_op::does_not_exist)}, "region"));
}
term_spec team1_selector(term_spec t) {
  return t.in_namespaces({"subteam2.team2"}).ns_selector(selector({req("team", selector_op::in, {"team1"})}));
}
pod_builder& affinity_namespace_selector(pod_builder& b) {
  return b.pref_aff(5, team1_selector(in("security", {"S1"}, "region")));
}
pod_builder& anti_affinity_namespace_selector(pod_builder& b) {
  return b.pref_anti(5, team1_selector(in("security", {"S1"}, "region")));
}

template <class F>
pod_info_ptr on(const std::string& node, std::vector<label_map::entry> labels, F with, std::string ns = "default") {
  static int n = 0;
  pod_builder b("e" + std::to_string(++n), std::move(ns));
  b.labels(std::move(labels)).node(node);
  with(b);
  return b.get();
}
pod_info_ptr on(const std::string& node, std::vector<label_map::entry> labels) {
  return on(node, std::move(labels), [](pod_builder& b) -> pod_builder& { return b; });
}
pod_info_ptr on_in(const std::string& node, std::vector<label_map::entry> labels, std::string ns) {
  return on(
    node, std::move(labels), [](pod_builder& b) -> pod_builder& { return b; }, std::move(ns));
}
template <class F>
pod_info_ptr incoming(std::vector<label_map::entry> labels, F with, std::string ns = "default") {
  pod_builder b("incoming", std::move(ns));
  b.labels(std::move(labels));
  with(b);
  return b.get();
}
pod_builder& none(pod_builder& b) { return b; }

struct score_case {
  std::string name;
  pod_info_ptr pod;
  std::vector<pod_info_ptr> pods;
  std::vector<node_spec> nodes;
  std::string args;
  bool want_skip;
  std::vector<int64_t> want;
};

void run_score_cases(const std::vector<score_case>& cases) {
  for (const auto& c : cases) {
    auto pl = make_plugin(c.args);
    auto snap = std::make_shared<const snapshot>(make_snapshot(c.nodes, c.pods));
    // As the cycle driver does; PreScore needs no PreFilter.
    fw::cycle_state state;
    state.set_snapshot(snap);
    std::vector<const node_info*> nodes;
    for (const auto& n : c.nodes) nodes.push_back(snap->find(n.name));
    auto s = pl->pre_score(state, *c.pod, nodes);
    if (c.want_skip) {
      EXPECT_TRUE(s.is_skip()) << c.name << " -> " << describe(s);
      continue;
    }
    ASSERT_TRUE(s.is_success()) << c.name << " -> " << describe(s);
    std::vector<fw::node_score> scores;
    for (const auto* n : nodes) {
      int64_t v = 0;
      ASSERT_TRUE(pl->score(state, *c.pod, *n, v).is_success()) << c.name;
      scores.push_back({n->name, v});
    }
    ASSERT_TRUE(pl->normalize_score(state, *c.pod, scores).is_success()) << c.name;
    std::vector<int64_t> got;
    for (auto& ns : scores) got.push_back(ns.score);
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(InterPodAffinity, PreferredAffinity) {
  const std::vector<node_spec> cia = {{"node1", rg_china}, {"node2", rg_india}, {"node3", az1}};
  const std::vector<score_case> cases = {
    {"all nodes are same priority as Affinity is nil", incoming(s1, none), {}, cia, "", true, {}},
    {"Affinity: pod that matches topology key & pods in nodes will get high score comparing to others which doesn't "
     "match either pods in nodes or in topology key",
     incoming(s1, stay_with_s1_in_region),
     {on("node1", s1), on("node2", s2), on("node3", s1)},
     cia,
     "",
     false,
     {100, 0, 0}},
    {"All the nodes that have the same topology key & label value with one of them has an existing pod that match the "
     "affinity rules, have the same score",
     incoming({}, stay_with_s1_in_region),
     {on("node1", s1)},
     {{"node1", rg_china}, {"node2", rg_china_az1}, {"node3", rg_india}},
     "",
     false,
     {100, 100, 0}},
    {"Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more "
     "matches will get high score",
     incoming(s1, stay_with_s2_in_region),
     {on("node1", s2), on("node1", s2), on("node2", s2), on("node3", s2), on("node4", s2), on("node5", s2)},
     {{"node1", rg_china}, {"node2", rg_india}, {"node3", rg_china}, {"node4", rg_china}, {"node5", rg_india}},
     "",
     false,
     {100, 0, 100, 100, 0}},
    {"Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
     "failures",
     incoming(s1, affinity3),
     {on("node1", s1), on("node2", s2), on("node3", s1)},
     cia,
     "",
     false,
     {20, 100, 0}},
    {"Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     incoming(s2, none),
     {on("node1", s1, stay_with_s1_in_region), on("node2", s2, stay_with_s2_in_region)},
     cia,
     "",
     false,
     {0, 100, 0}},
    {"Affinity symmetry with namespace selector",
     incoming(s1, none, "subteam1.team1"),
     {on("node1", s1, affinity_namespace_selector), on("node2", s2, stay_with_s2_in_region)},
     cia,
     "",
     false,
     {100, 0, 0}},
    {"AntiAffinity symmetry with namespace selector",
     incoming(s1, none, "subteam1.team1"),
     {on("node1", s1, anti_affinity_namespace_selector), on("node2", s2, stay_with_s2_in_region)},
     cia,
     "",
     false,
     {0, 100, 100}},
    {"Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     incoming(s1, none),
     {on("node1", s1, hard_affinity), on("node2", s2, hard_affinity)},
     cia,
     "",
     false,
     {100, 100, 0}},
    {"Anti Affinity: pod that does not match existing pods in node will get high score",
     incoming(s1, away_from_s1_in_az),
     {on("node1", s1), on("node2", s2)},
     {{"node1", az1}, {"node2", rg_china}},
     "",
     false,
     {0, 100}},
    {"Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing "
     "to others",
     incoming(s1, away_from_s1_in_az),
     {on("node1", s1), on("node2", s1)},
     {{"node1", az1}, {"node2", rg_china}},
     "",
     false,
     {0, 100}},
    {"Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches "
     "will get high score",
     incoming(s1, away_from_s1_in_az),
     {on("node1", s1), on("node1", s1), on("node2", s2)},
     {{"node1", az1}, {"node2", rg_india}},
     "",
     false,
     {0, 100}},
    {"Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
     incoming(s2, none),
     {on("node1", s1, away_from_s2_in_az), on("node2", s2, away_from_s1_in_az)},
     {{"node1", az1}, {"node2", az2}},
     "",
     false,
     {0, 100}},
    {"Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity "
     "& anti affinity",
     incoming(s1, stay_with_s1_in_region_away_from_s2_in_az),
     {on("node1", s1), on("node2", s1)},
     {{"node1", rg_china}, {"node2", az1}},
     "",
     false,
     {100, 0}},
    {"Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods "
     "have the same labels",
     incoming(s1, stay_with_s1_in_region_away_from_s2_in_az),
     {on("node1", s1), on("node1", s1), on("node2", s1), on("node3", s1), on("node3", s1), on("node4", s1),
      on("node5", s1)},
     {{"node1", rg_china_az1}, {"node2", rg_india}, {"node3", rg_china}, {"node4", rg_china}, {"node5", rg_india}},
     "",
     false,
     {100, 0, 100, 100, 0}},
    {"Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both "
     "pod affinity & anti affinity & symmetry",
     incoming(s1, stay_with_s1_in_region_away_from_s2_in_az),
     {on("node1", s1), on("node2", s2), on("node3", {}, stay_with_s1_in_region_away_from_s2_in_az),
      on("node4", {}, away_from_s1_in_az)},
     {{"node1", rg_china}, {"node2", az1}, {"node3", rg_india}, {"node4", az2}},
     "",
     false,
     {100, 0, 100, 0}},
    {"Avoid panic when partial nodes in a topology don't have pods with affinity",
     incoming(s1, none),
     {on("node1", s1), on("node2", {}, stay_with_s1_in_region_away_from_s2_in_az)},
     {{"node1", rg_china}, {"node2", rg_china}},
     "",
     false,
     {0, 0}},
    {"incoming pod's namespaceSelector is resolved against the cluster's namespaces and unioned with namespaces",
     incoming(s1, affinity_namespace_selector, "subteam1.team1"),
     {on_in("node1", s1, "subteam1.team1"), on_in("node1", s1, "subteam2.team1"), on_in("node2", s1, "subteam2.team2"),
      on_in("node2", s1, "subteam1.team2"), on_in("node2", s1, "subteam1.team2")},
     {{"node1", rg_china}, {"node2", rg_india}, {"node3", az1}},
     "",
     false,
     {100, 50, 0}},
    {"ignorePreferredTermsOfExistingPods: the existing pods' preferences are ignored when the pod has none",
     incoming(s2, none),
     {on("node1", s1, stay_with_s1_in_region), on("node2", s2, stay_with_s2_in_region)},
     cia,
     "ignorePreferredTermsOfExistingPods: true",
     true,
     {}},
    {"ignorePreferredTermsOfExistingPods: kept when the incoming pod has preferred terms",
     incoming(s2, stay_with_s1_in_region),
     {on("node1", s1), on("node2", s2, stay_with_s2_in_region)},
     cia,
     "ignorePreferredTermsOfExistingPods: true",
     false,
     {83, 100, 0}},
  };
  run_score_cases(cases);
}

// kube's TestPreferredAffinityWithHardPodAffinitySymmetricWeight.
TEST(InterPodAffinity, PreferredAffinityWithHardPodAffinitySymmetricWeight) {
  const std::vector<node_spec> cia = {{"node1", rg_china}, {"node2", rg_india}, {"node3", az1}};
  const std::vector<label_map::entry> svc{{"service", "S1"}};
  auto hard = [](pod_builder& b) -> pod_builder& { return b.aff(in("service", {"S1"}, "region")); };
  const std::vector<score_case> cases = {
    {"with default weight",
     incoming(svc, none),
     {on("node1", {}, hard), on("node2", {}, hard)},
     cia,
     "",
     false,
     {100, 100, 0}},
    {"with zero weight",
     incoming(svc, none),
     {on("node1", {}, hard), on("node2", {}, hard)},
     cia,
     "hardPodAffinityWeight: 0",
     true,
     {}},
    {"with no matching namespace",
     incoming(svc, none, "subteam1.team2"),
     {on("node1", {}, hard), on("node2", {}, hard)},
     cia,
     "",
     true,
     {}},
  };
  run_score_cases(cases);
}

// kube's PreScore walks every node of the snapshot: pods on nodes that failed Filter still count
// for the topology domains they share with feasible nodes. A cycle_state built by hand has no
// snapshot, and only the feasible nodes are seen.
TEST(InterPodAffinity, PreScoreCountsPodsOnEveryNodeOfTheCycleSnapshot) {
  auto pl = make_plugin();
  auto pod = incoming(s1, stay_with_s1_in_region);
  const std::vector<node_spec> all = {{"node1", rg_china}, {"node2", rg_india}, {"node3", rg_china}};
  auto snap = std::make_shared<const snapshot>(make_snapshot(all, {on("node3", s1)}));
  const std::vector<const node_info*> feasible = {snap->find("node1"), snap->find("node2")};

  fw::cycle_state state;
  state.set_snapshot(snap);
  ASSERT_TRUE(pl->pre_score(state, *pod, feasible).is_success());
  std::vector<fw::node_score> scores;
  for (const auto* n : feasible) {
    int64_t v = 0;
    ASSERT_TRUE(pl->score(state, *pod, *n, v).is_success());
    scores.push_back({n->name, v});
  }
  ASSERT_TRUE(pl->normalize_score(state, *pod, scores).is_success());
  EXPECT_EQ(scores[0].score, 100) << "node1 shares region China with node3's S1 pod";
  EXPECT_EQ(scores[1].score, 0);

  fw::cycle_state hand_built;
  EXPECT_TRUE(pl->pre_score(hand_built, *pod, feasible).is_skip()) << "no snapshot: node3 is not seen";
}

TEST(InterPodAffinity, ScoreWithoutPreScoreStateIsAnError) {
  auto pl = make_plugin();
  fw::cycle_state state;
  node_info n;
  int64_t v = 0;
  auto s = pl->score(state, *make_pod().get(), n, v);
  EXPECT_EQ(s.get_code(), code::error);
  EXPECT_EQ(s.message(), "failed to read \"PreScoreInterPodAffinity\" from cycleState: not found");
}

fw::queueing_hint run_hint(size_t which, const pod_info& pod, const fw::event_objects& o) {
  auto events = make_plugin()->events_to_register();
  return events.at(which).hint(pod, o);
}

TEST(InterPodAffinity, EventsToRegister) {
  auto events = make_plugin()->events_to_register();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, fw::event_resource::pod);
  EXPECT_EQ(events[0].event.actions, uint32_t{fw::act_add | fw::act_update_pod_label | fw::act_delete});
  EXPECT_EQ(events[1].event.resource, fw::event_resource::node);
  EXPECT_EQ(events[1].event.actions, uint32_t{fw::act_add | fw::act_update_node_label});
}

TEST(InterPodAffinity, IsSchedulableAfterPodChange) {
  using fw::queueing_hint;
  auto target = make_pod().aff(exists("aaa", "hostname")).anti(exists("bbb", "hostname")).get();
  auto bound = [](std::vector<label_map::entry> l) {
    return pod_builder("other").labels(std::move(l)).node("n1").get();
  };
  auto unbound = pod_builder("other").labels({{"aaa", "a"}}).get();
  auto hater = pod_builder("other").node("n1").anti(exists("aaa", "hostname")).get();
  auto relabelled = make_pod().labels({{"aaa", "a"}}).aff(exists("aaa", "hostname")).get();
  auto repelled = make_pod().labels({{"aaa", "a"}}).get();
  struct tc {
    const char* name;
    pod_info_ptr pod, old_pod, new_pod;
    queueing_hint want;
  };
  const std::vector<tc> cases = {
    {"add a pod which matches the pod's affinity", target, nullptr, bound({{"aaa", "a"}}), queueing_hint::queue},
    {"add a pod which doesn't match the pod's affinity", target, nullptr, bound({{"ccc", "c"}}), queueing_hint::skip},
    {"add an unscheduled pod", target, nullptr, unbound, queueing_hint::skip},
    {"update a pod from non-match to match pod's affinity", target, bound({{"ccc", "c"}}), bound({{"aaa", "a"}}),
     queueing_hint::queue},
    {"update a pod from match to non-match the pod's affinity", target, bound({{"aaa", "a"}}), bound({{"ccc", "c"}}),
     queueing_hint::skip},
    {"update a pod from match to non-match pod's anti-affinity", target, bound({{"bbb", "b"}}), bound({{"ccc", "c"}}),
     queueing_hint::queue},
    {"update a pod from non-match to match pod's anti-affinity", target, bound({{"ccc", "c"}}), bound({{"bbb", "b"}}),
     queueing_hint::skip},
    {"delete a pod which doesn't match pod's anti-affinity", target, bound({{"ccc", "c"}}), nullptr,
     queueing_hint::skip},
    {"delete a pod which matches pod's anti-affinity", target, bound({{"bbb", "b"}}), nullptr, queueing_hint::queue},
    {"delete a pod whose anti-affinity matches the pod", repelled, hater, nullptr, queueing_hint::queue},
    {"delete a pod whose anti-affinity does not match the pod", target, hater, nullptr, queueing_hint::skip},
    {"the pending pod itself is relabelled", relabelled, target, relabelled, queueing_hint::queue},
  };
  for (const auto& c : cases) {
    fw::event_objects o;
    o.old_pod = c.old_pod.get();
    o.new_pod = c.new_pod.get();
    EXPECT_EQ(run_hint(0, *c.pod, o), c.want) << c.name;
  }
}

TEST(InterPodAffinity, IsSchedulableAfterNodeChange) {
  using fw::queueing_hint;
  auto node = [](std::vector<label_map::entry> l) {
    auto n = std::make_shared<node_info>();
    n->name = "n";
    n->labels = label_map(std::move(l));
    return n;
  };
  auto aff = make_pod().aff(exists("aaa", "zone")).get();
  auto anti = make_pod().anti(exists("aaa", "zone")).get();
  struct tc {
    const char* name;
    pod_info_ptr pod;
    std::shared_ptr<node_info> old_node, new_node;
    queueing_hint want;
  };
  const std::vector<tc> cases = {
    {"add a new node with matched pod affinity topologyKey", aff, nullptr, node({{"zone", "z1"}}),
     queueing_hint::queue},
    {"add a new node without matched pod affinity topologyKey", aff, nullptr, node({{"region", "r1"}}),
     queueing_hint::skip},
    {"update node topologyKey value for pod affinity", aff, node({{"zone", "z1"}}), node({{"zone", "z2"}}),
     queueing_hint::queue},
    {"add pod affinity topologyKey to a node", aff, node({}), node({{"zone", "z1"}}), queueing_hint::queue},
    {"update node label but not the pod affinity topologyKey", aff, node({{"zone", "z1"}}),
     node({{"zone", "z1"}, {"foo", "bar"}}), queueing_hint::skip},
    {"add a new node for a pod with anti-affinity", anti, nullptr, node({}), queueing_hint::queue},
    {"remove pod anti-affinity topologyKey from a node", anti, node({{"zone", "z1"}}), node({}), queueing_hint::queue},
    {"add pod anti-affinity topologyKey to a node", anti, node({}), node({{"zone", "z1"}}), queueing_hint::skip},
    {"update node topologyKey value for pod anti-affinity", anti, node({{"zone", "z1"}}), node({{"zone", "z2"}}),
     queueing_hint::queue},
  };
  for (const auto& c : cases) {
    fw::event_objects o;
    o.old_node = c.old_node.get();
    o.new_node = c.new_node.get();
    EXPECT_EQ(run_hint(1, *c.pod, o), c.want) << c.name;
  }
}

TEST(InterPodAffinity, SignPod) {
  auto pl = make_plugin();
  std::string sig;
  EXPECT_TRUE(pl->sign_pod(*make_pod().labels(s1).get(), sig));
  EXPECT_FALSE(pl->sign_pod(*make_pod().pref_anti(1, exists("a", "zone")).get(), sig));
  // kube refuses a pod whose spec sets podAffinity, even with no terms.
  auto yaml = test::pod_from_yaml(
    "metadata: {name: p, uid: p}\nspec: {containers: [{name: c, image: i}], affinity: {podAffinity: {}}}");
  EXPECT_FALSE(pl->sign_pod(*yaml, sig));
  EXPECT_TRUE(
    pl->sign_pod(*test::pod_from_yaml("metadata: {name: p, uid: p}\nspec: {containers: [{name: c, image: i}]}"), sig));
}

TEST(InterPodAffinity, Registered) {
  auto r = fw::in_tree_registry();
  ASSERT_NE(r.find("InterPodAffinity"), nullptr);
  auto pl = (*r.find("InterPodAffinity"))(YAML::Node(), "args", fw::handle{});
  ASSERT_TRUE(pl.ok());
  EXPECT_EQ((*pl)->name(), "InterPodAffinity");
}

TEST(InterPodAffinity, Args) {
  auto defaults = parse_inter_pod_affinity_args(YAML::Node(), "args");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->hard_pod_affinity_weight, 1);
  EXPECT_FALSE(defaults->ignore_preferred_terms_of_existing_pods);
  auto set = parse_inter_pod_affinity_args(
    YAML::Load("{apiVersion: kubescheduler.config.k8s.io/v1, kind: InterPodAffinityArgs, hardPodAffinityWeight: 0, "
               "ignorePreferredTermsOfExistingPods: true}"),
    "args");
  ASSERT_TRUE(set.ok()) << set.err().message;
  EXPECT_EQ(set->hard_pod_affinity_weight, 0);
  EXPECT_TRUE(set->ignore_preferred_terms_of_existing_pods);
  EXPECT_EQ(parse_inter_pod_affinity_args(YAML::Load("{hardPodAffinityWeight: 100}"), "args")->hard_pod_affinity_weight,
            100);
  EXPECT_EQ(
    parse_inter_pod_affinity_args(YAML::Load("{hardPodAffinityWeight: null}"), "args")->hard_pod_affinity_weight, 1);

  struct tc {
    const char* name;
    const char* yaml;
    const char* want;
  };
  const tc cases[] = {
    {"weight above the range", "{hardPodAffinityWeight: 101}",
     "args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},
    {"negative weight", "{hardPodAffinityWeight: -1}",
     "args.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"},
    {"weight not a number", "{hardPodAffinityWeight: x}", "args.hardPodAffinityWeight: expected an integer, got \"x\""},
    {"flag not a boolean", "{ignorePreferredTermsOfExistingPods: maybe}",
     "args.ignorePreferredTermsOfExistingPods: expected a boolean, got \"maybe\""},
    {"unknown field", "{foo: 1}", "args.foo: unknown field"},
    {"not an object", "[1]", "args: expected an object (InterPodAffinityArgs)"},
  };
  for (const auto& c : cases) {
    auto pl = inter_pod_affinity::make(YAML::Load(c.yaml), "args", fw::handle{});
    ASSERT_FALSE(pl.ok()) << c.name;
    EXPECT_EQ(pl.err().message, c.want) << c.name;
  }
}

}  // namespace
}  // namespace kas::plugins

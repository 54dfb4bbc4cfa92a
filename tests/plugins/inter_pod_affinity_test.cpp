// InterPodAffinity: PreFilter/Filter reasons and codes, AddPod/RemovePod and clone isolation,
// PreScore/Score/NormalizeScore, queueing hints, SignPod and args. Cases are named after kube's
// interpodaffinity filtering_test.go, scoring_test.go and plugin_test.go.
//
// Pods are built by hand (the affinity fields of pod_info) so that these tests do not depend on
// compile_pod; node_info lists are completed by hand when add_pod does not maintain them.
#include <gtest/gtest.h>

#include "tests/plugins/inter_pod_affinity_fixtures.hpp"

namespace kas::plugins {
namespace {

using namespace ipa_test;
using fw::code;

struct filter_case {
  const char* name;
  pod_info_ptr pod;
  std::vector<pod_info_ptr> pods;
  std::vector<node_spec> nodes;
  bool want_skip;
  std::vector<want> wants;  // per node; ignored when want_skip
};

void run_filter_cases(const std::vector<filter_case>& cases) {
  auto pl = make_plugin();
  for (const auto& c : cases) {
    auto snap = make_snapshot(c.nodes, c.pods);
    fw::cycle_state state;
    fw::pre_filter_result r;
    auto pre = pl->pre_filter(state, *c.pod, snap, r);
    EXPECT_TRUE(r.all_nodes()) << c.name;
    if (c.want_skip) {
      EXPECT_TRUE(pre.is_skip()) << c.name << " -> " << describe(pre);
      continue;
    }
    ASSERT_TRUE(pre.is_success()) << c.name << " -> " << describe(pre);
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      auto s = pl->filter(state, *c.pod, *snap.find(c.nodes[i].name));
      EXPECT_EQ(describe(s), describe(c.wants[i])) << c.name << " node " << c.nodes[i].name;
    }
  }
}

const std::vector<label_map::entry> svc_scan{{"service", "securityscan"}};
const std::vector<label_map::entry> sec_s1{{"security", "S1"}};
const std::vector<label_map::entry> sec_s2{{"security", "S2"}};
const std::vector<node_spec> node1{{"node1", {{"region", "r1"}, {"zone", "z11"}}}};

TEST(InterPodAffinity, RequiredAffinitySingleNode) {
  auto existing = pod_builder("e").labels(svc_scan).node("node1").get();
  const std::vector<filter_case> cases = {
    {"A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     make_pod().get(),
     {},
     node1,
     true,
     {}},
    {"satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches "
     "the existing pod",
     make_pod().labels(sec_s1).aff(in("service", {"securityscan", "value2"}, "region")).get(),
     {existing},
     node1,
     false,
     {fits}},
    {"satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in "
     "labelSelector that matches the existing pod",
     make_pod().labels(sec_s1).aff(not_in("service", {"securityscan3", "value3"}, "region")).get(),
     {existing},
     node1,
     false,
     {fits}},
    {"Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     make_pod()
       .labels(sec_s1)
       .aff(in("service", {"securityscan", "value2"}, "").in_namespaces({"DiffNameSpace"}))
       .get(),
     {pod_builder("e", "ns").labels(svc_scan).node("node1").get()},
     node1,
     false,
     {affinity_rules}},
    {"Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     make_pod().labels(svc_scan).aff(in("service", {"antivirusscan", "value2"}, "")).get(),
     {existing},
     node1,
     false,
     {affinity_rules}},
    {"satisfies the PodAffinity with different label Operators in multiple "
     "RequiredDuringSchedulingIgnoredDuringExecution",
     make_pod()
       .labels(sec_s1)
       .aff(term({req("service", selector_op::exists), req("wrongkey", selector_op::does_not_exist)}, "region"))
       .aff(
         term({req("service", selector_op::in, {"securityscan"}), req("service", selector_op::not_in, {"WrongValue"})},
              "region"))
       .get(),
     {existing},
     node1,
     false,
     {fits}},
    {"The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
     "because one of the matchExpression item don't match.",
     make_pod()
       .labels(sec_s1)
       .aff(term({req("service", selector_op::exists), req("wrongkey", selector_op::does_not_exist)}, "region"))
       .aff(
         term({req("service", selector_op::in, {"securityscan2"}), req("service", selector_op::not_in, {"WrongValue"})},
              "region"))
       .get(),
     {existing},
     node1,
     false,
     {affinity_rules}},
    {"satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     make_pod()
       .labels(sec_s1)
       .aff(in("service", {"securityscan", "value2"}, "region"))
       .anti(in("service", {"securityscan", "value2"}, "zone"))
       .get(),
     {existing},
     node1,
     false,
     {anti_rules}},
    {"satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     make_pod()
       .labels(svc_scan)
       .aff(in("service", {"securityscan", "value2"}, "region"))
       .anti(in("service", {"antivirusscan", "value2"}, "node"))
       .get(),
     {pod_builder("e").labels(svc_scan).node("node1").anti(in("service", {"securityscan", "value2"}, "zone")).get()},
     node1,
     false,
     {existing_anti}},
    {"pod matches its own Label in PodAffinity and that matches the existing pod Labels",
     make_pod().labels(svc_scan).aff(not_in("service", {"securityscan", "value2"}, "region")).get(),
     {pod_builder("e").labels(svc_scan).node("node2").get()},
     node1,
     false,
     {affinity_rules}},
    {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't "
     "satisfy PodAntiAffinity symmetry with the existing pod",
     make_pod().labels(svc_scan).get(),
     {pod_builder("e").labels(svc_scan).node("node1").anti(in("service", {"securityscan", "value2"}, "zone")).get()},
     node1,
     false,
     {existing_anti}},
    {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy "
     "PodAntiAffinity symmetry with the existing pod",
     make_pod().labels(svc_scan).get(),
     {pod_builder("e")
        .labels(svc_scan)
        .node("node1")
        .anti(not_in("service", {"securityscan", "value2"}, "zone"))
        .get()},
     node1,
     true,
     {}},
    {"satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
     make_pod().labels(svc_scan).anti(exists("service", "region")).anti(exists("security", "region")).get(),
     {pod_builder("e").labels(sec_s1).node("node1").anti(exists("security", "zone")).get()},
     node1,
     false,
     {anti_rules}},
    {"PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
     make_pod().labels(sec_s1).anti(exists("security", "zone")).get(),
     {pod_builder("e")
        .labels(svc_scan)
        .node("node1")
        .anti(exists("service", "zone"))
        .anti(exists("security", "zone"))
        .get()},
     node1,
     false,
     {existing_anti}},
    {"affinity with NamespaceSelector",
     make_pod()
       .labels(sec_s1)
       .aff(in("service", {"securityscan", "value2"}, "region")
              .ns_selector(selector({req("team", selector_op::in, {"team1"})})))
       .get(),
     {pod_builder("e", "subteam1.team1").labels(svc_scan).node("node1").get()},
     node1,
     false,
     {fits}},
    {"affinity with non-matching NamespaceSelector",
     make_pod()
       .labels(sec_s1)
       .aff(in("service", {"securityscan", "value2"}, "region")
              .ns_selector(selector({req("team", selector_op::in, {"team1"})})))
       .get(),
     {pod_builder("e", "subteam1.team2").labels(svc_scan).node("node1").get()},
     node1,
     false,
     {affinity_rules}},
    {"anti-affinity with matching NamespaceSelector",
     make_pod("subteam1.team1")
       .labels(sec_s1)
       .anti(in("service", {"securityscan", "value2"}, "zone")
               .ns_selector(selector({req("team", selector_op::in, {"team1"})})))
       .get(),
     {pod_builder("e", "subteam2.team1").labels(svc_scan).node("node1").get()},
     node1,
     false,
     {anti_rules}},
    {"anti-affinity with matching all NamespaceSelector",
     make_pod("subteam1.team1")
       .labels(sec_s1)
       .anti(in("service", {"securityscan", "value2"}, "zone").ns_selector(selector({})))
       .get(),
     {pod_builder("e", "subteam2.team1").labels(svc_scan).node("node1").get()},
     node1,
     false,
     {anti_rules}},
    {"anti-affinity with non-matching NamespaceSelector",
     make_pod("subteam1.team1")
       .labels(sec_s1)
       .anti(in("service", {"securityscan", "value2"}, "zone")
               .ns_selector(selector({req("team", selector_op::in, {"team1"})})))
       .get(),
     {pod_builder("e", "subteam1.team2").labels(svc_scan).node("node1").get()},
     node1,
     false,
     {fits}},
    {"existing pod's anti-affinity with a namespaceSelector matches the incoming pod's namespace labels",
     make_pod("subteam1.team1").labels(svc_scan).get(),
     {pod_builder("e", "subteam2.team2")
        .node("node1")
        .anti(exists("service", "zone").ns_selector(selector({req("team", selector_op::in, {"team1"})})))
        .get()},
     node1,
     false,
     {existing_anti}},
  };
  run_filter_cases(cases);
}

TEST(InterPodAffinity, RequiredAffinityMultipleNodes) {
  const std::vector<label_map::entry> foo_bar{{"foo", "bar"}};
  const std::vector<filter_case> cases = {
    {"A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has "
     "an existing pod that matches the affinity rules",
     make_pod().aff(in("foo", {"bar"}, "region")).get(),
     {pod_builder("p1").labels(foo_bar).node("node1").get()},
     {{"node1", rg_china}, {"node2", rg_china_az1}, {"node3", rg_india}},
     false,
     {fits, fits, affinity_rules}},
    {"The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
     "collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches "
     "the rule anywhere.",
     make_pod()
       .labels({{"foo", "bar"}, {"service", "securityscan"}})
       .aff(in("foo", {"bar"}, "zone"))
       .aff(in("service", {"securityscan"}, "zone"))
       .get(),
     {pod_builder("p1").labels(foo_bar).node("nodeA").get()},
     {{"nodeA", {{"zone", "az1"}, {"hostname", "h1"}}}, {"nodeB", {{"zone", "az2"}, {"hostname", "h2"}}}},
     false,
     {fits, fits}},
    {"The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
     make_pod()
       .labels({{"foo", "bar"}, {"service", "securityscan"}})
       .aff(in("foo", {"bar"}, "zone"))
       .aff(in("service", {"securityscan"}, "zone"))
       .get(),
     {pod_builder("p1").labels(foo_bar).node("nodeA").get()},
     {{"nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}}, {"nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}}}},
     false,
     {affinity_rules, affinity_rules}},
    {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
     make_pod().anti(in("foo", {"abc"}, "region")).get(),
     {pod_builder("e").labels({{"foo", "abc"}}).node("nodeA").get()},
     {{"nodeA", {{"region", "r1"}, {"hostname", "nodeA"}}}, {"nodeB", {{"region", "r1"}, {"hostname", "nodeB"}}}},
     false,
     {anti_rules, anti_rules}},
    {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
     "existing pod that match the inter pod affinity rule but in different namespace)",
     make_pod("NS1").labels({{"foo", "123"}}).anti(in("foo", {"bar"}, "region")).get(),
     {pod_builder("e1", "NS1").labels(foo_bar).node("nodeA").get(),
      pod_builder("e2", "NS2").node("nodeC").anti(in("foo", {"123"}, "region")).get()},
     {{"nodeA", rg_china}, {"nodeB", rg_china_az1}, {"nodeC", rg_india}},
     false,
     {anti_rules, anti_rules, fits}},
    {"Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the "
     "term is firstly checked, and then topologyKey of the term is also checked",
     make_pod().labels({{"foo", ""}}).get(),
     {pod_builder("e").node("nodeA").anti(exists("foo", "invalid-node-label")).get()},
     {{"nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}},
      {"nodeB", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeB"}}}},
     true,
     {}},
    {"Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
     make_pod().anti(exists("foo", "invalid-node-label")).get(),
     {pod_builder("e").labels({{"foo", ""}}).node("nodeA").get()},
     {{"nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}},
      {"nodeB", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeB"}}}},
     false,
     {fits, fits}},
  };
  run_filter_cases(cases);
}

TEST(InterPodAffinity, FilterWithoutPreFilterStateIsAnError) {
  auto pl = make_plugin();
  fw::cycle_state state;
  node_info n;
  auto s = pl->filter(state, *make_pod().get(), n);
  EXPECT_EQ(s.get_code(), code::error);
  EXPECT_EQ(s.message(), "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
}

// kube's TestPreFilterStateAddRemovePod, reduced: AddPod of a pod the incoming pod hates makes the
// node fail, RemovePod restores it, and a clone is isolated from the original.
TEST(InterPodAffinity, AddRemovePodAndCloneIsolation) {
  struct tc {
    const char* name;
    pod_info_ptr pod;
    pod_info_ptr added;
    want after_add;
  };
  const std::vector<tc> cases = {
    {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
     make_pod().labels(sec_s1).anti(in("security", {"S2"}, "region")).get(),
     pod_builder("added").labels(sec_s2).node("nodeB").get(), anti_rules},
    {"preFilterState existing anti-affinity terms are updated correctly after adding and removing a pod",
     make_pod().labels(sec_s1).anti(in("security", {"S3"}, "region")).get(),
     pod_builder("added").labels(sec_s2).node("nodeB").anti(in("security", {"S1"}, "zone")).get(), existing_anti},
    {"preFilterState matchingAffinityTerms are updated correctly after adding and removing a pod",
     make_pod().labels(sec_s1).aff(in("security", {"S2"}, "region")).get(),
     pod_builder("added").labels(sec_s2).node("nodeB").get(), fits},
  };
  auto pl = make_plugin();
  const std::vector<node_spec> nodes = {{"nodeA", {{"region", "r1"}, {"zone", "z11"}}},
                                        {"nodeB", {{"region", "r1"}, {"zone", "z11"}}}};
  for (const auto& c : cases) {
    auto snap = make_snapshot(nodes, {});
    fw::cycle_state state;
    fw::pre_filter_result r;
    ASSERT_TRUE(pl->pre_filter(state, *c.pod, snap, r).is_success()) << c.name;
    const node_info& a = *snap.find("nodeA");
    const node_info& b = *snap.find("nodeB");
    auto before = describe(pl->filter(state, *c.pod, a));

    auto with = b.clone();
    with->add_pod(c.added);
    fw::cycle_state copy = state.clone();
    ASSERT_TRUE(pl->add_pod(copy, *c.pod, *c.added, *with).is_success()) << c.name;
    EXPECT_EQ(describe(pl->filter(copy, *c.pod, a)), describe(c.after_add)) << c.name;
    EXPECT_EQ(describe(pl->filter(state, *c.pod, a)), before) << c.name << ": the original changed";

    ASSERT_TRUE(pl->remove_pod(copy, *c.pod, *c.added, *with).is_success()) << c.name;
    EXPECT_EQ(describe(pl->filter(copy, *c.pod, a)), before) << c.name << ": RemovePod did not undo AddPod";
  }
  // Preemption works on a clone: it shares the cycle's (immutable) snapshot.
  fw::cycle_state with_snap;
  auto snap = std::make_shared<const snapshot>(make_snapshot(nodes, {}));
  with_snap.set_snapshot(snap);
  EXPECT_EQ(with_snap.clone().snapshot(), snap.get());
  EXPECT_EQ(fw::cycle_state().clone().snapshot(), nullptr);
  fw::cycle_state empty;
  node_info n;
  EXPECT_EQ(pl->add_pod(empty, *make_pod().get(), *make_pod().get(), n).get_code(), code::error);
}

TEST(InterPodAffinity, RemovePodOfTheOnlyMatchLeavesTheFirstPodException) {
  // Removing the only pod that satisfied the affinity empties the counts; the incoming pod matches
  // its own term, so the self-affinity exception lets it through again.
  auto pl = make_plugin();
  auto pod = make_pod().labels(sec_s1).aff(in("security", {"S1"}, "region")).get();
  auto peer = pod_builder("peer").labels(sec_s1).node("nodeA").get();
  auto snap = make_snapshot({{"nodeA", rg_china}, {"nodeB", rg_india}}, {peer});
  fw::cycle_state state;
  fw::pre_filter_result r;
  ASSERT_TRUE(pl->pre_filter(state, *pod, snap, r).is_success());
  EXPECT_EQ(describe(pl->filter(state, *pod, *snap.find("nodeB"))), describe(affinity_rules));
  ASSERT_TRUE(pl->remove_pod(state, *pod, *peer, *snap.find("nodeA")).is_success());
  EXPECT_EQ(describe(pl->filter(state, *pod, *snap.find("nodeB"))), describe(fits));
}

// Through the real decoder and compile_pod: matchLabelKeys / mismatchLabelKeys merged into the
// selector, the default namespace of a term, and namespaceSelector.
pod_info_ptr yaml_pod(const std::string& name, const std::string& ns, const std::string& labels,
                      const std::string& node, const std::string& affinity) {
  std::string y = "metadata: {name: " + name + ", namespace: " + ns + ", uid: " + name + ", labels: {" + labels +
                  "}}\nspec: {containers: [{name: c, image: i}]";
  if (!node.empty()) y += ", nodeName: " + node;
  if (!affinity.empty()) y += ", affinity: {" + affinity + "}";
  return test::pod_from_yaml(y + "}");
}

TEST(InterPodAffinity, CompiledPods) {
  const std::string anti_match_keys =
    "podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: a}}, "
    "topologyKey: zone, matchLabelKeys: [version]}]}";
  const std::string anti_mismatch_keys =
    "podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: a}}, "
    "topologyKey: zone, mismatchLabelKeys: [version]}]}";
  const std::string aff_team1 =
    "podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: a}}, "
    "topologyKey: zone, namespaceSelector: {matchLabels: {team: team1}}}]}";
  const std::string self_aff =
    "podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: a}}, "
    "topologyKey: zone}]}";
  const std::vector<node_spec> zones = {{"n1", {{"zone", "z1"}}}, {"n2", {{"zone", "z2"}}}, {"n3", {}}};
  const std::vector<filter_case> cases = {
    {"matchLabelKeys: only pods with the same version repel",
     yaml_pod("p", "default", "app: a, version: v1", "", anti_match_keys),
     {yaml_pod("e1", "default", "app: a, version: v2", "n1", ""),
      yaml_pod("e2", "default", "app: a, version: v1", "n2", "")},
     zones,
     false,
     {fits, anti_rules, fits}},
    {"mismatchLabelKeys: only pods with another version repel",
     yaml_pod("p", "default", "app: a, version: v1", "", anti_mismatch_keys),
     {yaml_pod("e1", "default", "app: a, version: v2", "n1", ""),
      yaml_pod("e2", "default", "app: a, version: v1", "n2", "")},
     zones,
     false,
     {anti_rules, fits, fits}},
    {"a term without namespaces matches only the pod's own namespace",
     yaml_pod("p", "default", "app: b", "", anti_match_keys),
     {yaml_pod("e1", "other", "app: a", "n1", ""), yaml_pod("e2", "default", "app: a", "n2", "")},
     zones,
     false,
     {fits, anti_rules, fits}},
    {"namespaceSelector selects namespaces by their labels",
     yaml_pod("p", "default", "", "", aff_team1),
     {yaml_pod("e1", "subteam1.team2", "app: a", "n1", ""), yaml_pod("e2", "subteam2.team1", "app: a", "n2", "")},
     zones,
     false,
     {affinity_rules, fits, affinity_rules}},
    {"existing pod's anti-affinity from YAML repels the incoming pod",
     yaml_pod("p", "default", "app: a", "", ""),
     {yaml_pod("e1", "default", "", "n1", anti_match_keys)},
     zones,
     false,
     {existing_anti, fits, fits}},
    {"first pod of a self-affine group goes to any node with the topology key",
     yaml_pod("p", "default", "app: a", "", self_aff),
     {yaml_pod("e1", "default", "app: b", "n1", "")},
     zones,
     false,
     {fits, fits, affinity_rules}},
  };
  run_filter_cases(cases);
}

}  // namespace
}  // namespace kas::plugins

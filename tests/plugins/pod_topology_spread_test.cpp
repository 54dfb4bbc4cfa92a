// PodTopologySpread: PreFilter/Filter (skews, minDomains, inclusion policies, missing labels),
// AddPod/RemovePod and clone isolation, PreScore/Score/NormalizeScore, default constraints (System
// and List), queueing hints and args. Cases and expected values from kube's filtering_test.go and
// scoring_test.go. Most cases set the spread constraints on the compiled pod by hand;
// FilterFromYaml goes through compile_pod.
#include <map>

#include <gtest/gtest.h>

#include "plugins/pod_topology_spread/pod_topology_spread.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_from_yaml;
using test::pod_from_yaml;

constexpr const char* hostname = "kubernetes.io/hostname";

label_selector exists(const std::string& key) {
  label_selector s;
  selector_requirement r;
  r.key = key;
  r.op = selector_op::exists;
  s.requirements.push_back(r);
  return s;
}
label_selector nil_selector() {
  label_selector s;
  s.nothing = true;
  return s;
}
const label_selector foo = exists("foo");

spread_constraint sc(int32_t max_skew, const std::string& key, bool hard, label_selector sel = foo,
                     int32_t min_domains = 1, node_inclusion_policy affinity = node_inclusion_policy::honor,
                     node_inclusion_policy taints = node_inclusion_policy::ignore) {
  spread_constraint c;
  c.max_skew = max_skew;
  c.topology_key = key;
  c.do_not_schedule = hard;
  c.selector = std::move(sel);
  c.min_domains = min_domains;
  c.node_affinity_policy = affinity;
  c.node_taints_policy = taints;
  return c;
}

// The incoming pod: labels and extra spec from YAML, constraints set by hand.
pod_info_ptr incoming(const std::string& labels, std::vector<spread_constraint> cs, const std::string& spec = "{}",
                      const std::string& extra_meta = "") {
  auto p = std::make_shared<pod_info>(*pod_from_yaml("metadata: {name: p, namespace: default, uid: p, labels: {" +
                                                     labels + "}" + extra_meta + "}\nspec: " + spec));
  p->spread_constraints = std::move(cs);
  return p;
}

struct epod {
  std::string name, node, labels = "foo: \"\"", ns = "default";
  bool terminating = false;
};

pod_info_ptr existing(const epod& e) {
  auto pod = std::make_shared<k8s::core::Pod>();
  std::string y = "metadata: {name: " + e.name + ", namespace: " + e.ns + ", uid: " + e.ns + "-" + e.name +
                  ", labels: {" + e.labels + "}}\nspec: {nodeName: " + e.node + "}";
  if (auto st = codec::decode_yaml(y, *pod); !st) throw std::runtime_error(st.err().message);
  if (e.terminating) pod->mutable_metadata()->mutable_deletion_timestamp()->set_seconds(1);
  auto p = compile_pod(pod);
  if (!p) throw std::runtime_error(p.err().message);
  return *p;
}

struct enode {
  std::string name, labels, taints = "";
};

struct cluster {
  snapshot snap;
  std::vector<const node_info*> all;
  const node_info* find(const std::string& n) const { return snap.find(n); }
};

cluster make_cluster(const std::vector<enode>& nodes, const std::vector<epod>& pods,
                     std::shared_ptr<cluster_objects> objects = nullptr) {
  cluster c;
  uint64_t gen = 0;
  for (auto& n : nodes) {
    std::vector<pod_info_ptr> on;
    for (auto& p : pods)
      if (p.node == n.name) on.push_back(existing(p));
    std::string y = "metadata: {name: " + n.name + ", labels: {" + n.labels + "}}";
    if (!n.taints.empty()) y += "\nspec: {taints: [" + n.taints + "]}";
    c.snap = c.snap.with_added_node(node_from_yaml(y, on), ++gen);
  }
  if (objects) c.snap = c.snap.with_objects(objects, ++gen);
  for (size_t i = 0; i < c.snap.size(); ++i) c.all.push_back(&c.snap.node(i));
  return c;
}

std::shared_ptr<pod_topology_spread> make_plugin(const std::string& args = "") {
  auto pl = pod_topology_spread::make(args.empty() ? YAML::Node() : YAML::Load(args), "args", fw::handle{});
  if (!pl) throw std::runtime_error(pl.err().message);
  return std::dynamic_pointer_cast<pod_topology_spread>(*pl);
}

const std::vector<enode> four_nodes = {{"node-a", "zone: zone1, node: node-a"},
                                       {"node-b", "zone: zone1, node: node-b"},
                                       {"node-x", "zone: zone2, node: node-x"},
                                       {"node-y", "zone: zone2, node: node-y"}};
const std::vector<epod> spread_2_1_0_3 = {{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-b1", "node-b"},
                                          {"p-y1", "node-y"}, {"p-y2", "node-y"}, {"p-y3", "node-y"}};

using code_map = std::map<std::string, fw::code>;
constexpr fw::code ok = fw::code::success;
constexpr fw::code unsched = fw::code::unschedulable;
constexpr fw::code unresolvable = fw::code::unschedulable_and_unresolvable;

TEST(PodTopologySpread, Filter) {
  struct tc {
    const char* name;
    pod_info_ptr pod;
    std::vector<enode> nodes;
    std::vector<epod> pods;
    code_map want;
  };
  const std::vector<tc> cases = {
    {"no existing pods", incoming("foo: \"\"", {sc(1, "zone", true)}), four_nodes, {},
     {{"node-a", ok}, {"node-b", ok}, {"node-x", ok}, {"node-y", ok}}},
    {"no existing pods, incoming pod doesn't match itself", incoming("foo: \"\"", {sc(1, "zone", true, exists("bar"))}),
     four_nodes, {}, {{"node-a", ok}, {"node-b", ok}, {"node-x", ok}, {"node-y", ok}}},
    {"existing pods in a different namespace do not count", incoming("foo: \"\"", {sc(1, "zone", true)}), four_nodes,
     {{"p-a1", "node-a", "foo: \"\"", "ns1"}, {"p-b1", "node-a", "foo: \"\"", "ns2"}, {"p-x1", "node-x"},
      {"p-y1", "node-y"}},
     {{"node-a", ok}, {"node-b", ok}, {"node-x", unsched}, {"node-y", unsched}}},
    {"pods spread across zones as 3/3, all nodes fit", incoming("foo: \"\"", {sc(1, "zone", true)}), four_nodes,
     spread_2_1_0_3, {{"node-a", ok}, {"node-b", ok}, {"node-x", ok}, {"node-y", ok}}},
    {"pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
     incoming("foo: \"\"", {sc(1, "zone", true)}),
     {{"node-a", "zone: zone1, node: node-a"}, {"node-b", "zon: zone1, node: node-b"},
      {"node-x", "zone: zone2, node: node-x"}, {"node-y", "zone: zone2, node: node-y"}},
     {{"p-a1", "node-a"}, {"p-b1", "node-b"}, {"p-x1", "node-x"}, {"p-y1", "node-y"}},
     {{"node-a", ok}, {"node-b", unresolvable}, {"node-x", unsched}, {"node-y", unsched}}},
    {"pod cannot be scheduled as all nodes don't have label 'rack'", incoming("foo: \"\"", {sc(1, "rack", true)}),
     {{"node-a", "zone: zone1, node: node-a"}, {"node-x", "zone: zone2, node: node-x"}}, {},
     {{"node-a", unresolvable}, {"node-x", unresolvable}}},
    {"pods spread across nodes as 2/1/0/3, only node-x fits", incoming("foo: \"\"", {sc(1, "node", true)}),
     four_nodes, spread_2_1_0_3, {{"node-a", unsched}, {"node-b", unsched}, {"node-x", ok}, {"node-y", unsched}}},
    {"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
     incoming("foo: \"\"", {sc(2, "node", true)}), four_nodes, spread_2_1_0_3,
     {{"node-a", unsched}, {"node-b", ok}, {"node-x", ok}, {"node-y", unsched}}},
    {"pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
     incoming("bar: \"\"", {sc(1, "node", true)}), four_nodes, spread_2_1_0_3,
     {{"node-a", unsched}, {"node-b", ok}, {"node-x", ok}, {"node-y", unsched}}},
    {"incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     incoming("foo: \"\"", {sc(1, "node", true)},
              "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
              "[{matchExpressions: [{key: node, operator: In, values: [node-a, node-y]}]}]}}}}"),
     four_nodes, spread_2_1_0_3, {{"node-a", ok}, {"node-b", ok}, {"node-x", ok}, {"node-y", unsched}}},
    {"nodeAffinityPolicy Ignore counts every node: 2/1/0/3, node-a no longer fits",
     incoming("foo: \"\"", {sc(1, "node", true, foo, 1, node_inclusion_policy::ignore)},
              "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
              "[{matchExpressions: [{key: node, operator: In, values: [node-a, node-y]}]}]}}}}"),
     four_nodes, spread_2_1_0_3, {{"node-a", unsched}, {"node-b", unsched}, {"node-x", ok}, {"node-y", unsched}}},
    {"terminating Pods should be excluded", incoming("foo: \"\"", {sc(1, "node", true)}),
     {{"node-a", "node: node-a"}, {"node-b", "node: node-b"}},
     {{"p-a", "node-a", "foo: \"\"", "default", true}, {"p-b", "node-b"}}, {{"node-a", ok}, {"node-b", unsched}}},
    {"two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
     incoming("foo: \"\"", {sc(1, "zone", true), sc(1, "node", true)}), four_nodes, spread_2_1_0_3,
     {{"node-a", unsched}, {"node-b", unsched}, {"node-x", ok}, {"node-y", unsched}}},
    {"minDomains 3 with two zones: the global minimum is 0, 3/3 rejects every node",
     incoming("foo: \"\"", {sc(1, "zone", true, foo, 3)}), four_nodes, spread_2_1_0_3,
     {{"node-a", unsched}, {"node-b", unsched}, {"node-x", unsched}, {"node-y", unsched}}},
    {"minDomains 2 with two zones keeps the real global minimum", incoming("foo: \"\"", {sc(1, "zone", true, foo, 2)}),
     four_nodes, spread_2_1_0_3, {{"node-a", ok}, {"node-b", ok}, {"node-x", ok}, {"node-y", ok}}},
    {"nodeTaintsPolicy Ignore counts the tainted node-b as an empty domain",
     incoming("foo: \"\"", {sc(1, "node", true)}),
     {{"node-a", "node: node-a"}, {"node-b", "node: node-b", "{key: k, value: v, effect: NoSchedule}"}},
     {{"p-a1", "node-a"}}, {{"node-a", unsched}, {"node-b", ok}}},
    {"nodeTaintsPolicy Honor leaves the untolerated node-b out",
     incoming("foo: \"\"", {sc(1, "node", true, foo, 1, node_inclusion_policy::honor, node_inclusion_policy::honor)}),
     {{"node-a", "node: node-a"}, {"node-b", "node: node-b", "{key: k, value: v, effect: NoSchedule}"}},
     {{"p-a1", "node-a"}}, {{"node-a", ok}, {"node-b", ok}}},
    {"nodeTaintsPolicy Honor counts a tolerated node",
     incoming("foo: \"\"", {sc(1, "node", true, foo, 1, node_inclusion_policy::honor, node_inclusion_policy::honor)},
              "{tolerations: [{key: k, operator: Exists}]}"),
     {{"node-a", "node: node-a"}, {"node-b", "node: node-b", "{key: k, value: v, effect: NoSchedule}"}},
     {{"p-a1", "node-a"}}, {{"node-a", unsched}, {"node-b", ok}}},
    {"a null selector matches no pod, not even the incoming one",
     incoming("foo: \"\"", {sc(1, "node", true, nil_selector())}), four_nodes, spread_2_1_0_3,
     {{"node-a", ok}, {"node-b", ok}, {"node-x", ok}, {"node-y", ok}}},
    {"an empty selector counts no existing pod (kube v1.36 countPodsMatchSelector)",
     incoming("foo: \"\"", {sc(1, "node", true, label_selector{})}), four_nodes, spread_2_1_0_3,
     {{"node-a", ok}, {"node-b", ok}, {"node-x", ok}, {"node-y", ok}}},
  };
  auto pl = make_plugin();
  for (auto& c : cases) {
    auto cl = make_cluster(c.nodes, c.pods);
    fw::cycle_state state;
    fw::pre_filter_result r;
    auto pre = pl->pre_filter(state, *c.pod, cl.snap, r);
    ASSERT_TRUE(pre.is_success()) << c.name << ": " << pre.message();
    EXPECT_TRUE(r.all_nodes()) << c.name;
    for (auto& [node, want] : c.want) {
      auto s = pl->filter(state, *c.pod, *cl.find(node));
      EXPECT_EQ(s.get_code(), want) << c.name << " / " << node;
      if (want == unsched) {
        EXPECT_EQ(test::reasons(s), "node(s) didn't match pod topology spread constraints");
      } else if (want == unresolvable) {
        EXPECT_EQ(test::reasons(s), "node(s) didn't match pod topology spread constraints (missing required label)");
      }
    }
  }
}

// The same plugin fed by compile_pod: topologySpreadConstraints from YAML, matchLabelKeys merged
// into the selector, the policies and minDomains carried over.
TEST(PodTopologySpread, FilterFromYaml) {
  auto yaml_pod = [](const std::string& labels, const std::string& constraints, const std::string& extra = "") {
    return pod_from_yaml("metadata: {name: p, namespace: default, uid: p, labels: {" + labels +
                         "}}\nspec: {topologySpreadConstraints: [" + constraints + "]" + extra + "}");
  };
  const std::string hard_node = "maxSkew: 1, topologyKey: node, whenUnsatisfiable: DoNotSchedule";
  // node-a: 2 pods of version v1; node-b: 1 pod of v2; node-x: none; node-y: 3 of v1.
  const std::vector<epod> versioned = {{"p-a1", "node-a", "foo: \"\", v: v1"}, {"p-a2", "node-a", "foo: \"\", v: v1"},
                                       {"p-b1", "node-b", "foo: \"\", v: v2"}, {"p-y1", "node-y", "foo: \"\", v: v1"},
                                       {"p-y2", "node-y", "foo: \"\", v: v1"}, {"p-y3", "node-y", "foo: \"\", v: v1"}};
  struct tc {
    const char* name;
    pod_info_ptr pod;
    code_map want;
  };
  const tc cases[] = {
    {"pods spread across nodes as 2/1/0/3, only node-x fits",
     yaml_pod("foo: \"\", v: v2", "{" + hard_node + ", labelSelector: {matchExpressions: [{key: foo, operator: Exists}]}}"),
     {{"node-a", unsched}, {"node-b", unsched}, {"node-x", ok}, {"node-y", unsched}}},
    {"matchLabelKeys [v] counts only v2 pods: 0/1/0/0",
     yaml_pod("foo: \"\", v: v2",
              "{" + hard_node + ", labelSelector: {matchExpressions: [{key: foo, operator: Exists}]}, "
              "matchLabelKeys: [v]}"),
     {{"node-a", ok}, {"node-b", unsched}, {"node-x", ok}, {"node-y", ok}}},
    {"minDomains 3 over two zones spread 3/3: the global minimum is 0",
     yaml_pod("foo: \"\"", "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 3, "
                            "labelSelector: {matchExpressions: [{key: foo, operator: Exists}]}}"),
     {{"node-a", unsched}, {"node-b", unsched}, {"node-x", unsched}, {"node-y", unsched}}},
    {"missing topology key", yaml_pod("foo: \"\"", "{maxSkew: 1, topologyKey: rack, whenUnsatisfiable: DoNotSchedule, "
                                                     "labelSelector: {matchLabels: {foo: \"\"}}}"),
     {{"node-a", unresolvable}, {"node-x", unresolvable}}},
    {"nodeAffinityPolicy Ignore with a nodeSelector counts every node",
     yaml_pod("foo: \"\"",
              "{" + hard_node + ", nodeAffinityPolicy: Ignore, labelSelector: {matchExpressions: [{key: foo, operator: "
              "Exists}]}}",
              ", nodeSelector: {zone: zone1}"),
     {{"node-a", unsched}, {"node-b", unsched}, {"node-x", ok}}},
    {"nodeAffinityPolicy Honor with a nodeSelector counts zone1 only: 2/1",
     yaml_pod("foo: \"\"", "{" + hard_node + ", labelSelector: {matchExpressions: [{key: foo, operator: Exists}]}}",
              ", nodeSelector: {zone: zone1}"),
     {{"node-a", unsched}, {"node-b", ok}, {"node-x", ok}}},
  };
  auto pl = make_plugin();
  auto cl = make_cluster(four_nodes, versioned);
  for (auto& c : cases) {
    ASSERT_FALSE(c.pod->spread_constraints.empty()) << c.name << ": compile_pod left the constraints out";
    fw::cycle_state state;
    fw::pre_filter_result r;
    ASSERT_TRUE(pl->pre_filter(state, *c.pod, cl.snap, r).is_success()) << c.name;
    for (auto& [node, want] : c.want) EXPECT_EQ(pl->filter(state, *c.pod, *cl.find(node)).get_code(), want) << c.name;
  }
}

TEST(PodTopologySpread, PreFilterSkipsWithoutHardConstraints) {
  auto pl = make_plugin();
  auto cl = make_cluster(four_nodes, {});
  fw::pre_filter_result r;
  fw::cycle_state s1;
  EXPECT_TRUE(pl->pre_filter(s1, *incoming("foo: \"\"", {}), cl.snap, r).is_skip()) << "no constraints, no workload";
  fw::cycle_state s2;
  EXPECT_TRUE(pl->pre_filter(s2, *incoming("foo: \"\"", {sc(1, "zone", false)}), cl.snap, r).is_skip())
    << "ScheduleAnyway only";
  fw::cycle_state s3;
  EXPECT_EQ(pl->filter(s3, *incoming("foo: \"\"", {sc(1, "zone", true)}), *cl.all[0]).get_code(), fw::code::error)
    << "Filter without PreFilter state";
}

TEST(PodTopologySpread, AddRemovePodAndCloneIsolation) {
  auto pl = make_plugin();
  // zone1: node-a (1 pod), node-b; zone2: node-x (1 pod).
  auto cl = make_cluster({{"node-a", "zone: zone1"}, {"node-b", "zone: zone1"}, {"node-x", "zone: zone2"}},
                         {{"p-a1", "node-a"}, {"p-x1", "node-x"}});
  auto pod = incoming("foo: \"\"", {sc(1, "zone", true)});
  const node_info& a = *cl.find("node-a");
  const node_info& x = *cl.find("node-x");
  fw::cycle_state state;
  fw::pre_filter_result r;
  ASSERT_TRUE(pl->pre_filter(state, *pod, cl.snap, r).is_success());
  ASSERT_TRUE(pl->filter(state, *pod, x).is_success());

  struct tc {
    const char* name;
    epod changed;
    bool add;  // AddPod, else RemovePod
    const char* node;
    fw::code want_on_x;
  };
  const tc cases[] = {
    {"adding a matching pod to zone2 makes it 2/1", {"new", "node-x"}, true, "node-x", unsched},
    {"removing zone1's pod makes the global minimum 0", {"p-a1", "node-a"}, false, "node-a", unsched},
    {"a pod of another namespace changes nothing", {"other", "node-x", "foo: \"\"", "ns2"}, true, "node-x", ok},
    {"a pod that does not match the selector changes nothing", {"bar", "node-x", "bar: \"\""}, true, "node-x", ok},
  };
  for (auto& c : cases) {
    auto clone = state.clone();
    auto p = existing(c.changed);
    const node_info& n = std::string(c.node) == "node-a" ? a : x;
    auto st = c.add ? pl->add_pod(clone, *pod, *p, n) : pl->remove_pod(clone, *pod, *p, n);
    ASSERT_TRUE(st.is_success()) << c.name;
    EXPECT_EQ(pl->filter(clone, *pod, x).get_code(), c.want_on_x) << c.name;
    EXPECT_TRUE(pl->filter(state, *pod, x).is_success()) << c.name << ": the original state changed";
  }
  // Add then remove on the same clone restores the counts.
  auto clone = state.clone();
  auto p = existing({"new", "node-x"});
  ASSERT_TRUE(pl->add_pod(clone, *pod, *p, x).is_success());
  ASSERT_TRUE(pl->remove_pod(clone, *pod, *p, x).is_success());
  EXPECT_TRUE(pl->filter(clone, *pod, x).is_success());
  fw::cycle_state empty;
  EXPECT_EQ(pl->add_pod(empty, *pod, *p, x).get_code(), fw::code::error);
}

struct score_case {
  const char* name;
  pod_info_ptr pod;
  std::vector<enode> nodes;   // feasible
  std::vector<enode> failed;  // in the snapshot, not feasible
  std::vector<epod> pods;
  std::vector<int64_t> want;  // normalized, in `nodes` order
  std::shared_ptr<cluster_objects> objects = nullptr;
  std::string args = "";
};

void run_score_cases(const std::vector<score_case>& cases) {
  for (auto& c : cases) {
    auto pl = make_plugin(c.args);
    std::vector<enode> all = c.nodes;
    all.insert(all.end(), c.failed.begin(), c.failed.end());
    auto snap = std::make_shared<const snapshot>(make_cluster(all, c.pods, c.objects).snap);
    // As the cycle driver does; PreScore needs no PreFilter.
    fw::cycle_state state;
    state.set_snapshot(snap);
    std::vector<const node_info*> feasible;
    for (auto& n : c.nodes) feasible.push_back(snap->find(n.name));
    auto pre = pl->pre_score(state, *c.pod, feasible);
    if (c.want.empty()) {
      EXPECT_TRUE(pre.is_skip()) << c.name;
      continue;
    }
    ASSERT_TRUE(pre.is_success()) << c.name << ": " << pre.message();
    std::vector<fw::node_score> scores;
    for (auto* n : feasible) {
      int64_t s = -7;
      ASSERT_TRUE(pl->score(state, *c.pod, *n, s).is_success()) << c.name;
      scores.push_back({n->name, s});
    }
    ASSERT_TRUE(pl->normalize_score(state, *c.pod, scores).is_success()) << c.name;
    std::vector<int64_t> got;
    for (auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, c.want) << c.name;
  }
}

enode host(const std::string& name, const std::string& extra = "") {
  return {name, std::string(hostname) + ": " + name + (extra.empty() ? "" : ", " + extra)};
}

TEST(PodTopologySpread, Score) {
  const std::vector<epod> spread_4_3_2_1 = {{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-a3", "node-a"},
                                            {"p-a4", "node-a"}, {"p-b1", "node-b"}, {"p-b2", "node-b"},
                                            {"p-b3", "node-b"}, {"p-c1", "node-c"}, {"p-c2", "node-c"},
                                            {"p-d1", "node-d"}};
  const std::vector<epod> spread_2_1_0_3d = {{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-b1", "node-b"},
                                             {"p-d1", "node-d"}, {"p-d2", "node-d"}, {"p-d3", "node-d"}};
  const std::vector<epod> spread_4_2_1_3 = {{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-a3", "node-a"},
                                            {"p-a4", "node-a"}, {"p-b1", "node-b"}, {"p-b2", "node-b"},
                                            {"p-x1", "node-x"}, {"p-y1", "node-y"}, {"p-y2", "node-y"},
                                            {"p-y3", "node-y"}};
  const auto abcd = std::vector<enode>{host("node-a"), host("node-b"), host("node-c"), host("node-d")};
  const std::vector<score_case> cases = {
    {"one constraint on node, no existing pods", incoming("foo: \"\"", {sc(1, hostname, false)}),
     {host("node-a"), host("node-b")}, {}, {}, {100, 100}},
    {"one constraint on node, only one node is candidate", incoming("foo: \"\"", {sc(1, hostname, false)}),
     {host("node-a")}, {host("node-b")}, {{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-b1", "node-b"}}, {100}},
    {"one constraint on node, all nodes have the same number of matching pods",
     incoming("foo: \"\"", {sc(1, hostname, false)}), {host("node-a"), host("node-b")}, {},
     {{"p-a1", "node-a"}, {"p-b1", "node-b"}}, {100, 100}},
    {"one constraint on node, all 4 nodes are candidates", incoming("foo: \"\"", {sc(1, hostname, false)}), abcd, {},
     spread_2_1_0_3d, {20, 60, 100, 0}},
    {"one constraint on node, null selector", incoming("foo: \"\"", {sc(1, hostname, false, nil_selector())}), abcd,
     {}, spread_2_1_0_3d, {100, 100, 100, 100}},
    {"one constraint on node, all 4 nodes are candidates, maxSkew=2", incoming("foo: \"\"", {sc(2, hostname, false)}),
     abcd, {}, spread_2_1_0_3d, {33, 66, 100, 16}},
    {"one constraint on node, all 4 nodes are candidates, maxSkew=3", incoming("foo: \"\"", {sc(3, hostname, false)}),
     abcd, {}, spread_4_3_2_1, {44, 66, 77, 100}},
    {"one constraint on node, 3 out of 4 nodes are candidates", incoming("foo: \"\"", {sc(1, hostname, false)}),
     {host("node-a"), host("node-b"), host("node-x")}, {host("node-y")}, spread_4_2_1_3, {33, 83, 100}},
    {"one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     incoming("foo: \"\"", {sc(1, hostname, false)}), {host("node-a"), {"node-b", "n: node-b"}, host("node-x")},
     {host("node-y")}, spread_4_2_1_3, {16, 0, 100}},
    {"one constraint on zone, 3 out of 4 nodes are candidates", incoming("foo: \"\"", {sc(1, "zone", false)}),
     {host("node-a", "zone: zone1"), host("node-b", "zone: zone1"), host("node-x", "zone: zone2")},
     {host("node-y", "zone: zone2")}, spread_4_2_1_3, {75, 75, 100}},
    {"two Constraints on zone and node, 2 out of 4 nodes are candidates",
     incoming("foo: \"\"", {sc(1, "zone", false), sc(1, hostname, false)}),
     {host("node-a", "zone: zone1"), host("node-x", "zone: zone2")},
     {host("node-b", "zone: zone1"), host("node-y", "zone: zone2")},
     {{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-b1", "node-b"}, {"p-x1", "node-x"}, {"p-x2", "node-x"},
      {"p-y1", "node-y"}, {"p-y2", "node-y"}, {"p-y3", "node-y"}, {"p-y4", "node-y"}},
     {100, 63}},
    {"DoNotSchedule constraints are not scored", incoming("foo: \"\"", {sc(1, hostname, true)}), abcd, {},
     spread_2_1_0_3d, {}},
  };
  run_score_cases(cases);
}

// PreScore counts over every node of the cycle's snapshot, not only the feasible ones it is handed;
// a cycle_state built by hand has no snapshot, and the feasible nodes stand in.
TEST(PodTopologySpread, PreScoreCountsOverTheCycleSnapshot) {
  const std::vector<epod> spread_4_2_1_3 = {{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-a3", "node-a"},
                                            {"p-a4", "node-a"}, {"p-b1", "node-b"}, {"p-b2", "node-b"},
                                            {"p-x1", "node-x"}, {"p-y1", "node-y"}, {"p-y2", "node-y"},
                                            {"p-y3", "node-y"}};
  auto pl = make_plugin();
  auto pod = incoming("foo: \"\"", {sc(1, "zone", false)});
  auto snap = std::make_shared<const snapshot>(
    make_cluster({host("node-a", "zone: zone1"), host("node-b", "zone: zone1"), host("node-x", "zone: zone2"),
                  host("node-y", "zone: zone2")},
                 spread_4_2_1_3)
      .snap);
  const std::vector<const node_info*> feasible = {snap->find("node-a"), snap->find("node-b"), snap->find("node-x")};
  auto scores_with = [&](fw::cycle_state& state) {
    std::vector<int64_t> got;
    if (!pl->pre_score(state, *pod, feasible).is_success()) return got;
    std::vector<fw::node_score> scores;
    for (auto* n : feasible) {
      int64_t s = -7;
      EXPECT_TRUE(pl->score(state, *pod, *n, s).is_success());
      scores.push_back({n->name, s});
    }
    EXPECT_TRUE(pl->normalize_score(state, *pod, scores).is_success());
    for (auto& s : scores) got.push_back(s.score);
    return got;
  };
  fw::cycle_state state;
  state.set_snapshot(snap);
  EXPECT_EQ(scores_with(state), (std::vector<int64_t>{75, 75, 100})) << "zone2 counts node-y's 3 pods";
  fw::cycle_state hand_built;
  EXPECT_EQ(scores_with(hand_built), (std::vector<int64_t>{12, 12, 100})) << "zone2 counts node-x only";
}

std::shared_ptr<cluster_objects> service_selecting_foo() {
  auto o = std::make_shared<cluster_objects>();
  label_selector s;
  selector_requirement r;
  r.key = "foo";
  r.op = selector_op::in;
  r.values = {""};
  s.requirements.push_back(r);
  o->workloads.push_back({"Service", "default", "svc", s});
  return o;
}

TEST(PodTopologySpread, SystemDefaults) {
  const std::vector<epod> spread_4_3_2_1 = {{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-a3", "node-a"},
                                            {"p-a4", "node-a"}, {"p-b1", "node-b"}, {"p-b2", "node-b"},
                                            {"p-b3", "node-b"}, {"p-c1", "node-c"}, {"p-c2", "node-c"},
                                            {"p-d1", "node-d"}};
  const auto abcd = std::vector<enode>{host("node-a"), host("node-b"), host("node-c"), host("node-d")};
  auto other_ns = std::make_shared<cluster_objects>(*service_selecting_foo());
  other_ns->workloads[0].ns = "other";
  const std::vector<score_case> cases = {
    {"system defaulting, nodes don't have zone, pods match service", incoming("foo: \"\"", {}), abcd, {},
     spread_4_3_2_1, {44, 66, 77, 100}, service_selecting_foo()},
    {"no service selects the pod: the defaults do not apply", incoming("bar: \"\"", {}), abcd, {}, spread_4_3_2_1, {},
     service_selecting_foo()},
    {"a service of another namespace does not select the pod", incoming("foo: \"\"", {}), abcd, {}, spread_4_3_2_1,
     {}, other_ns},
    {"the pod's own constraints replace the defaults", incoming("foo: \"\"", {sc(1, "zone", true)}), abcd, {},
     spread_4_3_2_1, {}, service_selecting_foo()},
  };
  run_score_cases(cases);

  auto pl = make_plugin();
  EXPECT_TRUE(pl->system_defaulted());
  ASSERT_EQ(pl->default_constraints().size(), 2u);
  EXPECT_EQ(pl->default_constraints()[0].topology_key, "kubernetes.io/hostname");
  EXPECT_EQ(pl->default_constraints()[0].max_skew, 3);
  EXPECT_EQ(pl->default_constraints()[1].topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(pl->default_constraints()[1].max_skew, 5);
  EXPECT_FALSE(pl->default_constraints()[1].do_not_schedule);
}

TEST(PodTopologySpread, ListDefaultsWithReplicaSetOwner) {
  const std::string args =
    "defaultingType: List\ndefaultConstraints:\n- {maxSkew: 1, topologyKey: node, whenUnsatisfiable: "
    "DoNotSchedule}";
  auto pl = make_plugin(args);
  EXPECT_FALSE(pl->system_defaulted());
  auto objects = std::make_shared<cluster_objects>();
  objects->workloads.push_back({"ReplicaSet", "default", "rs1", foo});
  const std::string owned = ", ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs1, uid: u, "
                            "controller: true}]";
  struct tc {
    const char* name;
    pod_info_ptr pod;
    bool want_skip;
    code_map want;
  };
  const tc cases[] = {
    {"owned by the ReplicaSet: its selector spreads the pod as 2/1/0/3", incoming("foo: \"\"", {}, "{}", owned),
     false, {{"node-a", unsched}, {"node-b", unsched}, {"node-x", ok}, {"node-y", unsched}}},
    {"not owned: no selector, no defaults", incoming("foo: \"\"", {}), true, {}},
    {"owner of another kind is ignored",
     incoming("foo: \"\"", {}, "{}",
              ", ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: rs1, uid: u, controller: true}]"),
     true, {}},
    {"a non-controller owner reference is ignored",
     incoming("foo: \"\"", {}, "{}", ", ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs1, uid: u}]"),
     true, {}},
  };
  auto cl = make_cluster(four_nodes, spread_2_1_0_3, objects);
  for (auto& c : cases) {
    fw::cycle_state state;
    fw::pre_filter_result r;
    auto pre = pl->pre_filter(state, *c.pod, cl.snap, r);
    EXPECT_EQ(pre.is_skip(), c.want_skip) << c.name;
    for (auto& [node, want] : c.want) EXPECT_EQ(pl->filter(state, *c.pod, *cl.find(node)).get_code(), want) << c.name;
  }
}

TEST(PodTopologySpread, Args) {
  struct tc {
    const char* name;
    std::string yaml;
    std::string want_error;  // "" = valid
  };
  const tc cases[] = {
    {"empty args default to System", "{}", ""},
    {"List with constraints",
     "defaultingType: List\ndefaultConstraints: [{maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]",
     ""},
    {"List without constraints", "defaultingType: List", ""},
    {"System with constraints",
     "defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]",
     "args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"},
    {"unknown defaultingType", "defaultingType: Foo",
     "args.defaultingType: Unsupported value: \"Foo\": supported values: \"System\", \"List\""},
    {"maxSkew zero", "defaultingType: List\ndefaultConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: "
                     "DoNotSchedule}]",
     "args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"},
    {"empty topologyKey", "defaultingType: List\ndefaultConstraints: [{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}]",
     "args.defaultConstraints[0].topologyKey: Required value: can not be empty"},
    {"invalid topologyKey",
     "defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: \"-zone\", whenUnsatisfiable: "
     "DoNotSchedule}]",
     "args.defaultConstraints[0].topologyKey: Invalid value: \"-zone\": name part must consist of alphanumeric "
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
     "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    {"missing whenUnsatisfiable", "defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone}]",
     "args.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"},
    {"unsupported whenUnsatisfiable",
     "defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Never}]",
     "args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Never\": supported values: "
     "\"DoNotSchedule\", \"ScheduleAnyway\""},
    {"labelSelector is forbidden",
     "defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
     "labelSelector: {}}]",
     "args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced "
     "for each pod"},
    {"duplicate constraint",
     "defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, "
     "{maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]",
     "args.defaultConstraints[1]: Duplicate value: \"{zone, DoNotSchedule}\""},
    {"same key, other action is fine",
     "defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, "
     "{maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]",
     ""},
    {"unknown field", "foo: bar", "args.foo: unknown field"},
  };
  for (auto& c : cases) {
    auto pl = pod_topology_spread::make(YAML::Load(c.yaml), "args", fw::handle{});
    if (c.want_error.empty()) {
      EXPECT_TRUE(pl.ok()) << c.name << ": " << pl.err().message;
    } else {
      ASSERT_FALSE(pl.ok()) << c.name;
      EXPECT_EQ(pl.err().message, c.want_error) << c.name;
    }
  }
}

TEST(PodTopologySpread, QueueingHints) {
  auto pl = make_plugin();
  auto events = pl->events_to_register();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, fw::event_resource::pod);
  EXPECT_EQ(events[0].event.actions,
            uint32_t(fw::act_add | fw::act_update_pod_label | fw::act_update_pod_toleration | fw::act_delete));
  EXPECT_EQ(events[1].event.resource, fw::event_resource::node);
  EXPECT_EQ(events[1].event.actions,
            uint32_t(fw::act_add | fw::act_delete | fw::act_update_node_label | fw::act_update_node_taint));
  auto pod = incoming("foo: \"\"", {sc(1, "zone", true)});
  auto matching = existing({"m", "node-a"});
  auto other = existing({"o", "node-a", "bar: \"\""});
  auto other_ns = existing({"n", "node-a", "foo: \"\"", "ns2"});
  auto zoned = node_from_yaml("metadata: {name: n1, labels: {zone: z1}}");
  auto zoned2 = node_from_yaml("metadata: {name: n1, labels: {zone: z2}}");
  auto bare = node_from_yaml("metadata: {name: n1}");
  auto hint = [&](size_t i, fw::event_objects o) { return events[i].hint(*pod, o); };
  using q = fw::queueing_hint;
  EXPECT_EQ(hint(0, {nullptr, matching.get()}), q::queue) << "matching pod added";
  EXPECT_EQ(hint(0, {nullptr, other.get()}), q::skip) << "unrelated pod added";
  EXPECT_EQ(hint(0, {other_ns.get(), nullptr}), q::skip) << "pod of another namespace deleted";
  EXPECT_EQ(hint(0, {matching.get(), nullptr}), q::queue) << "matching pod deleted";
  EXPECT_EQ(hint(0, {other.get(), matching.get()}), q::queue) << "label change flips the match";
  EXPECT_EQ(hint(1, {nullptr, nullptr, nullptr, zoned.get()}), q::queue) << "node with the key added";
  EXPECT_EQ(hint(1, {nullptr, nullptr, nullptr, bare.get()}), q::skip) << "node without the key added";
  EXPECT_EQ(hint(1, {nullptr, nullptr, zoned.get(), zoned2.get()}), q::queue) << "topology value changed";
  EXPECT_EQ(hint(1, {nullptr, nullptr, zoned.get(), zoned.get()}), q::skip) << "nothing relevant changed";
  EXPECT_EQ(hint(1, {nullptr, nullptr, bare.get(), nullptr}), q::skip) << "node without the key deleted";
}

TEST(PodTopologySpread, SignPod) {
  std::string sig;
  EXPECT_FALSE(make_plugin()->sign_pod(*incoming("foo: \"\"", {}), sig)) << "system defaults";
  auto list = make_plugin("defaultingType: List");
  EXPECT_TRUE(list->sign_pod(*incoming("foo: \"\"", {}), sig));
  EXPECT_FALSE(list->sign_pod(*incoming("foo: \"\"", {sc(1, "zone", false)}), sig));
}

}  // namespace
}  // namespace kas::plugins

// Inter-pod affinity terms and topology spread constraints as compile_pod builds them (kube's
// newAffinityTerm / getNamespacesFromPodAffinityTerm, the apiserver's matchLabelKeys merges and
// validation), and AffinityTerm.Matches.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "builders.hpp"
#include "messages/codec.hpp"

namespace kas {
namespace {

// A pod in namespace "ns" with labels {app: web, version: v1, tenant: t1} and `spec` (YAML, indented
// under spec:) and an optional status block.
result<pod_info_ptr> compile_yaml(const std::string& spec, const std::string& status = "") {
  std::string y = "metadata:\n  name: p\n  namespace: ns\n  labels: {app: web, version: v1, tenant: t1}\n"
                  "spec:\n  containers: [{name: c}]\n" + spec;
  if (!status.empty()) y += "status:\n" + status;
  auto pod = std::make_shared<k8s::core::Pod>();
  auto st = codec::decode_yaml(y, *pod);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.err().message);
  return compile_pod(pod);
}

pod_info_ptr compile_yaml_ok(const std::string& spec) {
  auto r = compile_yaml(spec);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.err().message);
  return r.ok() ? *r : nullptr;
}

const char* op_name(selector_op op) {
  switch (op) {
    case selector_op::in: return "in";
    case selector_op::not_in: return "notin";
    case selector_op::exists: return "exists";
    case selector_op::does_not_exist: return "!exists";
    case selector_op::gt: return "gt";
    case selector_op::lt: return "lt";
  }
  return "?";
}

// "nothing", "everything" or "app in (web), version notin (v1)" in requirement order.
std::string render(const label_selector& s) {
  if (s.nothing) return "nothing";
  if (s.requirements.empty()) return "everything";
  std::string out;
  for (const auto& r : s.requirements) {
    if (!out.empty()) out += ", ";
    out += r.key + " " + op_name(r.op);
    if (r.values.empty()) continue;
    out += " (";
    for (size_t i = 0; i < r.values.size(); ++i) out += (i ? "," : "") + r.values[i];
    out += ")";
  }
  return out;
}

std::string render_ns(const affinity_term& t) {
  std::string out = "[";
  for (size_t i = 0; i < t.namespaces.size(); ++i) out += (i ? "," : "") + t.namespaces[i];
  out += "] ";
  return out + (t.namespace_selector ? render(*t.namespace_selector) : "nil");
}

struct term_case {
  const char* name;
  std::string term;  // one required podAffinity term, YAML flow mapping
  std::string selector;
  std::string namespaces;  // render_ns
};

TEST(CompilePod, AffinityTerms) {
  const term_case cases[] = {
      {"no namespaces and nil namespaceSelector: the pod's own namespace",
       "{labelSelector: {matchLabels: {app: web}}, topologyKey: zone}", "app in (web)", "[ns] nil"},
      {"explicit namespaces are a set", "{labelSelector: {}, namespaces: [b, a, b], topologyKey: zone}",
       "everything", "[a,b] nil"},
      {"empty namespaceSelector: every namespace", "{labelSelector: {}, namespaceSelector: {}, topologyKey: zone}",
       "everything", "[] everything"},
      {"namespaceSelector and namespaces",
       "{labelSelector: {}, namespaces: [x], namespaceSelector: {matchLabels: {team: a}}, topologyKey: zone}",
       "everything", "[x] team in (a)"},
      {"nil labelSelector matches nothing", "{topologyKey: zone}", "nothing", "[ns] nil"},
      {"matchLabelKeys and mismatchLabelKeys merged for keys the pod has",
       "{labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [version, absent], "
       "mismatchLabelKeys: [tenant, gone], topologyKey: zone}",
       "app in (web), version in (v1), tenant notin (t1)", "[ns] nil"},
      {"matchLabelKeys leave a nil labelSelector nil", "{matchLabelKeys: [version], topologyKey: zone}", "nothing",
       "[ns] nil"},
      {"expressions follow matchLabels",
       "{labelSelector: {matchLabels: {b: '1', a: '2'}, matchExpressions: [{key: c, operator: Exists}]}, "
       "topologyKey: zone}",
       "a in (2), b in (1), c exists", "[ns] nil"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto p = compile_yaml_ok("  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: [" +
                             c.term + "]\n");
    ASSERT_TRUE(p);
    ASSERT_EQ(p->required_affinity.size(), 1u);
    EXPECT_EQ(render(p->required_affinity[0].selector), c.selector);
    EXPECT_EQ(render_ns(p->required_affinity[0]), c.namespaces);
    EXPECT_EQ(p->required_affinity[0].topology_key, "zone");
    EXPECT_TRUE(p->has_pod_affinity());
    EXPECT_FALSE(p->has_required_anti_affinity());
  }
}

TEST(CompilePod, AffinityKindsAndWeights) {
  auto p = compile_yaml_ok(R"(  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - {weight: 10, podAffinityTerm: {labelSelector: {}, topologyKey: zone}}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}, topologyKey: host}]
      preferredDuringSchedulingIgnoredDuringExecution:
      - {weight: 100, podAffinityTerm: {labelSelector: {}, topologyKey: rack}}
      - {weight: 1, podAffinityTerm: {labelSelector: {}, topologyKey: row}}
)");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->required_affinity.empty());
  ASSERT_EQ(p->preferred_affinity.size(), 1u);
  EXPECT_EQ(p->preferred_affinity[0].weight, 10);
  EXPECT_EQ(p->preferred_affinity[0].term.topology_key, "zone");
  ASSERT_EQ(p->required_anti_affinity.size(), 1u);
  EXPECT_EQ(p->required_anti_affinity[0].topology_key, "host");
  ASSERT_EQ(p->preferred_anti_affinity.size(), 2u);
  EXPECT_EQ(p->preferred_anti_affinity[1].weight, 1);
  EXPECT_EQ(p->preferred_anti_affinity[1].term.topology_key, "row");
  EXPECT_TRUE(p->has_pod_affinity());
  EXPECT_TRUE(p->has_required_anti_affinity());

  auto plain = compile_yaml_ok("  affinity: {nodeAffinity: {}}\n");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->has_pod_affinity());
  EXPECT_TRUE(plain->spread_constraints.empty());
}

struct error_case {
  const char* name;
  std::string spec;
  std::string want;  // the error message starts with this
};

TEST(CompilePod, AffinityErrorsNameThePath) {
  const std::string anti_req = "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: [";
  const std::string aff_pref = "  affinity:\n    podAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution: [";
  const std::string p_req = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";
  const error_case cases[] = {
      {"bad operator",
       anti_req + "{labelSelector: {matchExpressions: [{key: app, operator: Gt, values: ['1']}]}, topologyKey: z}]\n",
       p_req + ".labelSelector.matchExpressions[0].operator: Invalid value: \"Gt\""},
      {"In without values", anti_req + "{labelSelector: {matchExpressions: [{key: app, operator: In}]}, topologyKey: z}]\n",
       p_req + ".labelSelector.matchExpressions[0].values: Required value"},
      {"Exists with values",
       anti_req + "{labelSelector: {matchExpressions: [{key: app, operator: Exists, values: [a]}]}, topologyKey: z}]\n",
       p_req + ".labelSelector.matchExpressions[0].values: Forbidden"},
      {"bad key", anti_req + "{labelSelector: {matchExpressions: [{key: 'a b', operator: Exists}]}, topologyKey: z}]\n",
       p_req + ".labelSelector.matchExpressions[0].key: Invalid value: \"a b\""},
      {"bad value", anti_req + "{labelSelector: {matchExpressions: [{key: a, operator: In, values: [ok, '-x']}]}, topologyKey: z}]\n",
       p_req + ".labelSelector.matchExpressions[0].values[1]: Invalid value: \"-x\""},
      {"bad matchLabels", anti_req + "{labelSelector: {matchLabels: {'a b': x}}, topologyKey: z}]\n",
       p_req + ".labelSelector.matchLabels: Invalid value: \"a b\""},
      {"no topologyKey", anti_req + "{labelSelector: {}}]\n", p_req + ".topologyKey: Required value"},
      {"bad namespaceSelector",
       anti_req + "{labelSelector: {}, namespaceSelector: {matchExpressions: [{key: t, operator: Is}]}, topologyKey: z}]\n",
       p_req + ".namespaceSelector.matchExpressions[0].operator"},
      {"bad matchLabelKeys", anti_req + "{labelSelector: {}, matchLabelKeys: ['', ok], topologyKey: z}]\n",
       p_req + ".matchLabelKeys[0]: Invalid value"},
      {"key in matchLabelKeys and mismatchLabelKeys",
       anti_req + "{labelSelector: {}, matchLabelKeys: [app], mismatchLabelKeys: [x, app], topologyKey: z}]\n",
       p_req + ".mismatchLabelKeys[1]: Invalid value: \"app\": exists in both"},
      {"weight 0", aff_pref + "{weight: 0, podAffinityTerm: {labelSelector: {}, topologyKey: z}}]\n",
       "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be "
       "in the range 1-100"},
      {"weight 101", aff_pref + "{weight: 101, podAffinityTerm: {labelSelector: {}, topologyKey: z}}]\n",
       "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"},
      {"preferred term selector",
       aff_pref + "{weight: 1, podAffinityTerm: {labelSelector: {}, topologyKey: z}}, "
                  "{weight: 1, podAffinityTerm: {labelSelector: {matchExpressions: [{key: a, operator: Nope}]}, topologyKey: z}}]\n",
       "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].podAffinityTerm.labelSelector."
       "matchExpressions[0].operator"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = compile_yaml(c.spec);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.err().message.rfind(c.want, 0), 0u) << r.err().message;
  }
}

pod_info pod_in(const std::string& ns, std::vector<label_map::entry> labels) {
  pod_info p;
  p.ns = ns;
  p.name = "target";
  p.labels = label_map(std::move(labels));
  return p;
}

label_selector everything() { return label_selector{}; }

label_selector equals(const std::string& k, const std::string& v) {
  label_selector s;
  selector_requirement r;
  r.key = k;
  r.values = {v};
  s.requirements.push_back(r);
  return s;
}

label_selector nothing() {
  label_selector s;
  s.nothing = true;
  return s;
}

// kube's AffinityTerm.Matches: (namespace listed || namespaceSelector matches the namespace's
// labels) && selector matches the pod's labels.
TEST(AffinityTerm, Matches) {
  const label_map team_a(std::vector<label_map::entry>{{"team", "a"}});
  const label_map team_b(std::vector<label_map::entry>{{"team", "b"}});
  struct row {
    const char* name;
    affinity_term term;
    pod_info pod;
    const label_map* ns_labels;
    bool want;
  };
  auto term = [](label_selector sel, std::vector<std::string> nss, std::optional<label_selector> ns_sel) {
    affinity_term t;
    t.selector = std::move(sel);
    t.namespaces = std::move(nss);
    t.namespace_selector = std::move(ns_sel);
    t.topology_key = "zone";
    return t;
  };
  const row rows[] = {
      {"listed namespace, labels match", term(equals("app", "web"), {"ns"}, std::nullopt),
       pod_in("ns", {{"app", "web"}}), nullptr, true},
      {"listed namespace, labels differ", term(equals("app", "web"), {"ns"}, std::nullopt),
       pod_in("ns", {{"app", "db"}}), nullptr, false},
      {"other namespace, nil namespaceSelector", term(equals("app", "web"), {"ns"}, std::nullopt),
       pod_in("other", {{"app", "web"}}), &team_a, false},
      {"one of several namespaces", term(everything(), {"b", "ns", "a"}, std::nullopt), pod_in("ns", {}), nullptr,
       true},
      {"empty namespaceSelector matches any namespace", term(equals("app", "web"), {}, everything()),
       pod_in("other", {{"app", "web"}}), nullptr, true},
      {"namespaceSelector matches the namespace labels", term(everything(), {}, equals("team", "a")),
       pod_in("other", {}), &team_a, true},
      {"namespaceSelector does not match", term(everything(), {}, equals("team", "a")), pod_in("other", {}), &team_b,
       false},
      {"namespaceSelector with unknown namespace labels", term(everything(), {}, equals("team", "a")),
       pod_in("other", {}), nullptr, false},
      {"namespaceSelector matches but labels differ", term(equals("app", "web"), {}, equals("team", "a")),
       pod_in("other", {{"app", "db"}}), &team_a, false},
      {"nil selector matches no pod", term(nothing(), {"ns"}, everything()), pod_in("ns", {{"app", "web"}}), nullptr,
       false},
      {"empty selector matches every pod in the namespace", term(everything(), {"ns"}, std::nullopt),
       pod_in("ns", {}), nullptr, true},
  };
  for (const auto& r : rows) EXPECT_EQ(r.term.matches(r.pod, r.ns_labels), r.want) << r.name;
}

std::string render(const spread_constraint& c) {
  auto policy = [](node_inclusion_policy p) { return p == node_inclusion_policy::honor ? "Honor" : "Ignore"; };
  return "skew=" + std::to_string(c.max_skew) + " key=" + c.topology_key +
         (c.do_not_schedule ? " DoNotSchedule" : " ScheduleAnyway") + " min=" + std::to_string(c.min_domains) +
         " affinity=" + policy(c.node_affinity_policy) + " taints=" + policy(c.node_taints_policy) + " sel=[" +
         render(c.selector) + "]";
}

TEST(CompilePod, SpreadConstraints) {
  struct row {
    const char* name;
    std::string constraint;
    std::string want;
  };
  const row rows[] = {
      {"defaults", "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}",
       "skew=1 key=zone DoNotSchedule min=1 affinity=Honor taints=Ignore sel=[app in (web)]"},
      {"ScheduleAnyway with explicit policies",
       "{maxSkew: 3, topologyKey: host, whenUnsatisfiable: ScheduleAnyway, labelSelector: {}, "
       "nodeAffinityPolicy: Ignore, nodeTaintsPolicy: Honor}",
       "skew=3 key=host ScheduleAnyway min=1 affinity=Ignore taints=Honor sel=[everything]"},
      {"minDomains with DoNotSchedule",
       "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}, minDomains: 3, "
       "nodeAffinityPolicy: Honor, nodeTaintsPolicy: Ignore}",
       "skew=1 key=zone DoNotSchedule min=3 affinity=Honor taints=Ignore sel=[everything]"},
      {"nil labelSelector selects nothing", "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}",
       "skew=1 key=zone DoNotSchedule min=1 affinity=Honor taints=Ignore sel=[nothing]"},
      {"matchLabelKeys merged; keys the pod lacks ignored",
       "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}, "
       "matchLabelKeys: [version, pod-template-hash]}",
       "skew=1 key=zone DoNotSchedule min=1 affinity=Honor taints=Ignore sel=[app in (web), version in (v1)]"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto p = compile_yaml_ok("  topologySpreadConstraints: [" + r.constraint + "]\n");
    ASSERT_TRUE(p);
    ASSERT_EQ(p->spread_constraints.size(), 1u);
    EXPECT_EQ(render(p->spread_constraints[0]), r.want);
  }
  auto two = compile_yaml_ok(
      "  topologySpreadConstraints:\n"
      "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}\n"
      "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {}}\n");
  ASSERT_TRUE(two);
  ASSERT_EQ(two->spread_constraints.size(), 2u);  // same key, different action: allowed, in order
  EXPECT_EQ(two->spread_constraints[1].max_skew, 2);
}

TEST(CompilePod, SpreadConstraintErrors) {
  const std::string p0 = "spec.topologySpreadConstraints[0]";
  auto one = [](const std::string& c) { return "  topologySpreadConstraints: [" + c + "]\n"; };
  const error_case cases[] = {
      {"maxSkew 0", one("{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}"),
       p0 + ".maxSkew: Invalid value: 0: must be greater than zero"},
      {"no topologyKey", one("{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}"), p0 + ".topologyKey: Required value"},
      {"bad whenUnsatisfiable", one("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Sometimes}"),
       p0 + ".whenUnsatisfiable: Unsupported value: \"Sometimes\""},
      {"missing whenUnsatisfiable", one("{maxSkew: 1, topologyKey: zone}"), p0 + ".whenUnsatisfiable: Required value"},
      {"minDomains 0", one("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 0}"),
       p0 + ".minDomains: Invalid value: 0: must be greater than zero"},
      {"minDomains with ScheduleAnyway",
       one("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}"),
       p0 + ".minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule"},
      {"bad nodeAffinityPolicy",
       one("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeAffinityPolicy: Maybe}"),
       p0 + ".nodeAffinityPolicy: Unsupported value: \"Maybe\""},
      {"bad nodeTaintsPolicy",
       one("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: honor}"),
       p0 + ".nodeTaintsPolicy: Unsupported value: \"honor\""},
      {"bad labelSelector",
       one("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
           "labelSelector: {matchExpressions: [{key: a, operator: Lt, values: ['1']}]}}"),
       p0 + ".labelSelector.matchExpressions[0].operator"},
      {"matchLabelKeys without labelSelector",
       one("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [app]}"),
       p0 + ".matchLabelKeys: Forbidden"},
      {"bad matchLabelKeys",
       one("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}, matchLabelKeys: ['x/']}"),
       p0 + ".matchLabelKeys[0]: Invalid value"},
      {"duplicate key and action",
       "  topologySpreadConstraints:\n"
       "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
       "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
       "spec.topologySpreadConstraints[1].{topologyKey, whenUnsatisfiable}: Duplicate value"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = compile_yaml(c.spec);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.err().message.rfind(c.want, 0), 0u) << r.err().message;
  }
}

TEST(CompilePod, NominatedNodeName) {
  auto r = compile_yaml("", "  nominatedNodeName: n7\n");
  ASSERT_TRUE(r.ok()) << r.err().message;
  EXPECT_EQ((*r)->nominated_node_name, "n7");
  auto none = compile_yaml_ok("");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->nominated_node_name, "");
}

}  // namespace
}  // namespace kas

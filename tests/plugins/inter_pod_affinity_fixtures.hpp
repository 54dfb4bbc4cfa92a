#pragma once
// InterPodAffinity test helpers: pods with hand-built affinity terms (pod_info's fields, as
// compile_pod fills them), nodes and snapshots, and expected Filter verdicts.
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/inter_pod_affinity/inter_pod_affinity.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins::ipa_test {

using fw::code;

inline selector_requirement req(std::string key, selector_op op, std::vector<std::string> values = {}) {
  selector_requirement r;
  r.key = std::move(key);
  r.op = op;
  r.values = std::move(values);
  return r;
}

inline label_selector selector(std::vector<selector_requirement> reqs) {
  label_selector s;
  s.requirements = std::move(reqs);
  return s;
}

// A term; `namespaces` empty and no namespace selector = the owning pod's namespace (filled in by
// pod_builder, as compile_pod does).
struct term_spec {
  affinity_term t;
  bool own_namespace = true;
  term_spec& in_namespaces(std::vector<std::string> ns) {
    t.namespaces = std::move(ns);
    own_namespace = false;
    return *this;
  }
  term_spec& ns_selector(label_selector s) {
    t.namespace_selector = std::move(s);
    own_namespace = false;
    return *this;
  }
};

inline term_spec term(std::vector<selector_requirement> reqs, std::string topology_key) {
  term_spec s;
  s.t.selector = selector(std::move(reqs));
  s.t.topology_key = std::move(topology_key);
  return s;
}
inline term_spec in(std::string key, std::vector<std::string> values, std::string tk) {
  return term({req(std::move(key), selector_op::in, std::move(values))}, std::move(tk));
}
inline term_spec not_in(std::string key, std::vector<std::string> values, std::string tk) {
  return term({req(std::move(key), selector_op::not_in, std::move(values))}, std::move(tk));
}
inline term_spec exists(std::string key, std::string tk) {
  return term({req(std::move(key), selector_op::exists)}, std::move(tk));
}

struct pod_builder {
  std::shared_ptr<pod_info> p = std::make_shared<pod_info>();
  explicit pod_builder(std::string name = "p", std::string ns = "default") {
    p->name = name;
    p->uid = name;
    p->ns = std::move(ns);
  }
  pod_builder& labels(std::vector<label_map::entry> l) {
    p->labels = label_map(std::move(l));
    return *this;
  }
  pod_builder& node(std::string n) {
    p->node_name = std::move(n);
    return *this;
  }
  affinity_term own(term_spec s) const {
    if (s.own_namespace) s.t.namespaces = {p->ns};
    return s.t;
  }
  pod_builder& aff(term_spec s) {
    p->required_affinity.push_back(own(std::move(s)));
    return *this;
  }
  pod_builder& anti(term_spec s) {
    p->required_anti_affinity.push_back(own(std::move(s)));
    return *this;
  }
  pod_builder& pref_aff(int32_t w, term_spec s) {
    p->preferred_affinity.push_back({own(std::move(s)), w});
    return *this;
  }
  pod_builder& pref_anti(int32_t w, term_spec s) {
    p->preferred_anti_affinity.push_back({own(std::move(s)), w});
    return *this;
  }
  pod_info_ptr get() const { return p; }
};

inline pod_builder make_pod(std::string ns = "default") { return pod_builder("p", std::move(ns)); }

// Adds `pod` to `n` and keeps the affinity subsets in step whether or not add_pod maintains them.
inline void place(node_info& n, pod_info_ptr pod) {
  n.add_pod(pod);
  auto has = [&](const std::vector<pod_info_ptr>& v) {
    return std::any_of(v.begin(), v.end(), [&](const pod_info_ptr& q) { return q->uid == pod->uid; });
  };
  if (pod->has_pod_affinity() && !has(n.pods_with_affinity)) n.pods_with_affinity.push_back(pod);
  if (pod->has_required_anti_affinity() && !has(n.pods_with_required_anti_affinity))
    n.pods_with_required_anti_affinity.push_back(pod);
}

struct node_spec {
  std::string name;
  std::vector<label_map::entry> labels;
};

inline const std::vector<label_map::entry> rg_china{{"region", "China"}};
inline const std::vector<label_map::entry> rg_india{{"region", "India"}};
inline const std::vector<label_map::entry> rg_china_az1{{"region", "China"}, {"az", "az1"}};
inline const std::vector<label_map::entry> az1{{"az", "az1"}};
inline const std::vector<label_map::entry> az2{{"az", "az2"}};

// kube's test namespaces (scoring_test.go `namespaces`).
inline std::shared_ptr<cluster_objects> test_namespaces() {
  auto o = std::make_shared<cluster_objects>();
  o->namespace_labels["subteam1.team1"] = label_map(std::vector<label_map::entry>{{"team", "team1"}});
  o->namespace_labels["subteam2.team1"] = label_map(std::vector<label_map::entry>{{"team", "team1"}});
  o->namespace_labels["subteam1.team2"] = label_map(std::vector<label_map::entry>{{"team", "team2"}});
  o->namespace_labels["subteam2.team2"] = label_map(std::vector<label_map::entry>{{"team", "team2"}});
  o->namespace_labels["default"] = label_map();
  return o;
}

// Existing pods are placed on the node their node_name names.
inline snapshot make_snapshot(const std::vector<node_spec>& nodes, const std::vector<pod_info_ptr>& pods) {
  snapshot s;
  uint64_t gen = 0;
  for (const auto& ns : nodes) {
    auto n = std::make_shared<node_info>();
    n->name = ns.name;
    n->node = std::make_shared<k8s::core::Node>();
    n->labels = label_map(ns.labels);
    for (const auto& p : pods)
      if (p->node_name == ns.name) place(*n, p);
    s = s.with_added_node(n, ++gen);
  }
  return s.with_objects(test_namespaces(), ++gen);
}

inline std::shared_ptr<inter_pod_affinity> make_plugin(const std::string& args = "") {
  auto pl = inter_pod_affinity::make(args.empty() ? YAML::Node() : YAML::Load(args), "args", fw::handle{});
  if (!pl) throw std::runtime_error(pl.err().message);
  return std::dynamic_pointer_cast<inter_pod_affinity>(*pl);
}

struct want {
  code c = code::success;
  std::string_view reason;
};
inline const want fits{};
inline const want affinity_rules{code::unschedulable_and_unresolvable, inter_pod_affinity::err_reason_affinity};
inline const want anti_rules{code::unschedulable, inter_pod_affinity::err_reason_anti_affinity};
inline const want existing_anti{code::unschedulable, inter_pod_affinity::err_reason_existing_anti_affinity};

inline std::string describe(const fw::status& s) {
  return std::string(fw::to_string(s.get_code())) + ": " + test::reasons(s);
}
inline std::string describe(const want& w) { return std::string(fw::to_string(w.c)) + ": " + std::string(w.reason); }

}  // namespace kas::plugins::ipa_test

// topology_index: a differential test against a full recount. Random cluster histories (nodes added,
// relabelled, tainted and removed; pods added, assumed, confirmed elsewhere, forgotten, relabelled,
// made terminating and removed, in several namespaces, some on nodes the snapshot does not hold)
// drive a scheduler_cache whose counter cap is small, so counters are also evicted and rebuilt.
// After every step the current snapshot's index must equal a recount of that snapshot, and every
// snapshot published earlier must still show the counts it had.
#include <algorithm>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "cache/scheduler_cache.hpp"
#include "tests/cache/builders.hpp"

namespace kas {
namespace {

// Domain -> count, per counter (by its key text) and per table (node counts, "#nodes" for the
// number of nodes with the key), plus the hard-tainted node count: everything the index publishes.
using dump = std::map<std::string, std::map<std::string, int64_t>>;

std::string counter_name(const topology_index::counter_key& k) { return "counter " + k.text; }

dump read_index(const snapshot& s) {
  dump out;
  const auto& ix = s.topology();
  out["tainted"][""] = ix.hard_tainted_nodes();
  out["held terms"][""] = ix.held_terms();
  out["scoring pods"][""] = ix.pods_with_scoring_terms();
  EXPECT_TRUE(ix.maintained());
  for (size_t c = 0; c < ix.counter_count(); ++c) {
    const auto& counter = ix.counter_at(c);
    out[counter_name(*counter.key)]["#total"] = counter.total;
    if (counter.key->what == topology_index::kind::held) out[counter_name(*counter.key)]["#refs"] = counter.refs;
    const auto* t = ix.find_table(counter.key->topology_key);
    EXPECT_NE(t, nullptr);
    if (!t) continue;
    auto& nodes = out["table " + t->topology_key];
    nodes["#nodes"] = t->nodes_with_key;
    auto& counts = out[counter_name(*counter.key)];
    for (size_t id = 0; id < t->ids; ++id) {
      if (t->nodes.get(id) == 0) {
        // A domain without nodes holds no pods.
        EXPECT_EQ(counter.counts.get(id), 0) << "free domain id " << id;
        continue;
      }
      nodes[t->values.get(id)] = t->nodes.get(id);
      counts[t->values.get(id)] = counter.counts.get(id);
      EXPECT_EQ(t->id_of(t->values.get(id)), static_cast<long>(id)) << t->values.get(id);
    }
  }
  return out;
}

// The same from scratch: every node of the snapshot, every pod on it (kube's countPodsMatchSelector
// summed per domain), for the counters the index holds.
dump recount(const snapshot& s) {
  dump out;
  const auto& ix = s.topology();
  int64_t tainted = 0;
  for (size_t i = 0; i < s.size(); ++i)
    for (auto& t : s.node(i).taints)
      if (t.effect == taint_effect::no_schedule || t.effect == taint_effect::no_execute) {
        ++tainted;
        break;
      }
  out["tainted"][""] = tainted;
  int64_t held_terms = 0;
  for (size_t i = 0; i < s.size(); ++i)
    for (auto& p : s.node(i).pods) held_terms += static_cast<int64_t>(p->required_anti_affinity.size());
  out["held terms"][""] = held_terms;
  int64_t scoring = 0;
  for (size_t i = 0; i < s.size(); ++i)
    for (auto& p : s.node(i).pods)
      scoring += !p->required_affinity.empty() || !p->preferred_affinity.empty() || !p->preferred_anti_affinity.empty();
  out["scoring pods"][""] = scoring;
  for (size_t c = 0; c < ix.counter_count(); ++c) {
    const auto& k = *ix.counter_at(c).key;
    // Counters of one key share its table: each recomputes it whole.
    auto& nodes = out["table " + k.topology_key];
    nodes.clear();
    nodes["#nodes"] = 0;
    auto& counts = out[counter_name(k)];
    counts["#total"] = 0;
    if (k.what == topology_index::kind::held) counts["#refs"] = 0;
    // A pod's weight: kube's countPodsMatchSelector (spread), AffinityTerm.Matches without
    // namespace labels (term), its terms equal to the counter's, by text (held).
    auto weight = [&](const pod_info& p) -> int64_t {
      switch (k.what) {
        case topology_index::kind::spread: {
          const bool empty = !k.selector.nothing && k.selector.requirements.empty();
          const bool terminating = p.pod && p.pod->metadata().has_deletion_timestamp();
          return !empty && !terminating && intern_namespace(p.ns) == k.ns && k.selector.matches(p.labels);
        }
        case topology_index::kind::term: {
          const bool listed = std::find(k.namespaces.begin(), k.namespaces.end(), p.ns) != k.namespaces.end();
          return (k.all_namespaces || listed) && k.selector.matches(p.labels);
        }
        case topology_index::kind::held: {
          int64_t n = 0;
          for (auto& t : p.required_anti_affinity) n += held_text(t) == k.text;
          return n;
        }
      }
      return 0;
    };
    for (size_t i = 0; i < s.size(); ++i) {
      const node_info& n = s.node(i);
      const std::string* v = n.labels.get(k.topology_key);
      if (k.what == topology_index::kind::held)
        for (auto& p : n.pods) counts["#refs"] += weight(*p);
      if (!v) continue;
      ++nodes["#nodes"];
      ++nodes[*v];
      int64_t on_node = 0;
      for (auto& p : n.pods) on_node += weight(*p);
      counts[*v] += on_node;
      counts["#total"] += on_node;
    }
  }
  return out;
}

label_selector sel(const std::string& key, selector_op op, std::vector<std::string> values = {}) {
  label_selector s;
  selector_requirement r;
  r.key = key;
  r.op = op;
  r.values = std::move(values);
  s.requirements.push_back(r);
  return s;
}

struct history {
  std::mt19937 rng;
  scheduler_cache cache{std::chrono::nanoseconds{0}, 6};
  std::vector<std::string> node_names;  // ever created (some removed, so pods land on ghosts)
  std::map<std::string, pod_info_ptr> bound, assumed;  // uid -> the pod as the cache holds it
  int serial = 0;

  explicit history(unsigned seed) : rng(seed) {}
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
  bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }

  std::shared_ptr<node_info> make_node(const std::string& name) {
    auto n = std::make_shared<k8s::core::Node>();
    n->mutable_metadata()->set_name(name);
    auto& l = *n->mutable_metadata()->mutable_labels();
    l["kubernetes.io/hostname"] = chance(90) ? name : "shared-host";
    if (chance(85)) l["zone"] = "z" + std::to_string(pick(3));
    if (chance(50)) l["region"] = "r" + std::to_string(pick(2));
    if (chance(15)) {
      auto* t = n->mutable_spec()->add_taints();
      t->set_key("dedicated");
      t->set_effect(chance(50) ? "NoSchedule" : "PreferNoSchedule");
    }
    auto r = compile_node(n);
    EXPECT_TRUE(r.ok());
    return *r;
  }

  pod_info_ptr make_pod(const std::string& uid, const std::string& ns, const std::string& node, bool terminating,
                        bool constrained) {
    auto p = test::make_pod(uid, uid);
    p->mutable_metadata()->set_namespace_(ns);
    auto& l = *p->mutable_metadata()->mutable_labels();
    if (chance(80)) l["app"] = std::string(1, static_cast<char>('x' + pick(3)));
    if (chance(50)) l["tier"] = chance(50) ? "fe" : "be";
    if (terminating) p->mutable_metadata()->mutable_deletion_timestamp()->set_seconds(1);
    if (!node.empty()) p->mutable_spec()->set_node_name(node);
    auto compiled = test::compile_ok(p);
    auto out = std::make_shared<pod_info>(*compiled);
    if (chance(30)) {
      // Required anti-affinity terms: own namespace, a list, every namespace (empty selector), a
      // nil namespace selector, a label-dependent one; some pods hold two.
      for (size_t k = 0, n = 1 + pick(2); k < n; ++k) {
        affinity_term t;
        t.topology_key = chance(50) ? "kubernetes.io/hostname" : "zone";
        t.selector = chance(50) ? sel("app", selector_op::in, {"x"}) : sel("tier", selector_op::exists);
        switch (pick(5)) {
          case 0: t.namespaces = {ns}; break;
          case 1: t.namespaces = {"ns-a", "default"}; break;
          case 2: t.namespace_selector = label_selector{}; break;
          case 3: t.namespaces = {ns}; t.namespace_selector = label_selector{{}, true}; break;
          default: t.namespace_selector = sel("team", selector_op::exists); break;
        }
        out->required_anti_affinity.push_back(t);
      }
    }
    // Terms InterPodAffinity's PreScore scores existing pods by.
    if (chance(10)) out->required_affinity.push_back(out->required_anti_affinity.empty() ? affinity_term{} : out->required_anti_affinity[0]);
    if (chance(10)) out->preferred_anti_affinity.push_back({affinity_term{}, 5});
    if (constrained) {
      static const std::vector<label_selector> selectors = {
        sel("app", selector_op::in, {"x"}), sel("app", selector_op::exists), sel("tier", selector_op::not_in, {"fe"}),
        label_selector{}, label_selector{{}, true}, sel("app", selector_op::in, {"y", "z"})};
      static const std::vector<std::string> keys = {"zone", "kubernetes.io/hostname", "region"};
      for (size_t k = 0, n = 1 + pick(2); k < n; ++k) {
        spread_constraint c;
        c.topology_key = keys[pick(keys.size())];
        c.selector = selectors[pick(selectors.size())];
        out->spread_constraints.push_back(c);
      }
    }
    return out;
  }

  std::string any_node() {
    // Mostly existing names; sometimes one never created (the pod lands on a ghost).
    if (node_names.empty() || chance(5)) return "ghost-" + std::to_string(pick(3));
    return node_names[pick(node_names.size())];
  }
  const std::string& ns() {
    static const std::vector<std::string> all = {"default", "ns-a", "ns-b"};
    return all[pick(all.size())];
  }

  void step() {
    const size_t op = pick(100);
    if (op < 8 || node_names.size() < 3) {
      std::string name = "node-" + std::to_string(serial++);
      cache.add_or_update_node(make_node(name));
      node_names.push_back(name);
    } else if (op < 14) {
      cache.add_or_update_node(make_node(node_names[pick(node_names.size())]));  // relabel / retaint
    } else if (op < 18) {
      cache.remove_node(node_names[pick(node_names.size())]);
    } else if (op < 45) {
      std::string uid = "p" + std::to_string(serial++);
      auto p = make_pod(uid, ns(), any_node(), chance(10), chance(40));
      ASSERT_TRUE(cache.add_pod(p).ok());
      bound[uid] = p;
    } else if (op < 60) {
      std::string uid = "p" + std::to_string(serial++);
      auto p = make_pod(uid, ns(), "", false, chance(60));
      const std::string node = any_node();
      ASSERT_TRUE(cache.assume_pod(p, node).ok());
      assumed[uid] = with_node_name(*p, node);
    } else if (op < 68 && !assumed.empty()) {
      auto it = std::next(assumed.begin(), static_cast<long>(pick(assumed.size())));
      if (chance(50)) {
        ASSERT_TRUE(cache.forget_pod(it->first).ok());
      } else {
        // Confirmed, sometimes on another node than assumed.
        auto p = chance(70) ? it->second : with_node_name(*it->second, any_node());
        ASSERT_TRUE(cache.add_pod(p).ok());
        bound[it->first] = p;
      }
      assumed.erase(it);
    } else if (op < 85 && !bound.empty()) {
      auto it = std::next(bound.begin(), static_cast<long>(pick(bound.size())));
      // New labels and perhaps a deletion timestamp, same node and namespace.
      auto p = make_pod(it->first, it->second->ns, it->second->node_name, chance(30), false);
      auto np = std::make_shared<pod_info>(*p);
      np->spread_constraints = it->second->spread_constraints;
      np->required_anti_affinity = it->second->required_anti_affinity;
      np->required_affinity = it->second->required_affinity;
      np->preferred_anti_affinity = it->second->preferred_anti_affinity;
      ASSERT_TRUE(cache.update_pod(it->second, np).ok());
      it->second = np;
    } else if (!bound.empty()) {
      auto it = std::next(bound.begin(), static_cast<long>(pick(bound.size())));
      ASSERT_TRUE(cache.remove_pod(it->second).ok());
      bound.erase(it);
    }
  }
};

TEST(TopologyIndex, EqualsRecountOnRandomHistories) {
  size_t held_complete = 0, held_incomplete = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    history h(seed);
    std::vector<std::pair<snapshot_ptr, dump>> published;
    size_t max_counters_seen = 0, nonempty_checks = 0;
    for (int i = 0; i < 600; ++i) {
      h.step();
      if (HasFatalFailure()) return;
      auto snap = h.cache.current();
      auto want = recount(*snap);
      auto got = read_index(*snap);
      ASSERT_EQ(got, want) << "seed " << seed << " step " << i;
      max_counters_seen = std::max(max_counters_seen, snap->topology().counter_count());
      nonempty_checks += snap->topology().counter_count() > 0 ? 1 : 0;
      if (snap->topology().held_terms() > 0) ++(snap->topology().held_complete() ? held_complete : held_incomplete);
      if (i % 25 == 0) published.emplace_back(snap, std::move(got));
    }
    EXPECT_EQ(max_counters_seen, 6u) << "seed " << seed << ": the cap is reached (and counters evicted)";
    EXPECT_GT(nonempty_checks, 300u) << "seed " << seed;
    // Snapshots handed out earlier kept their counts while the cache changed the index after them.
    for (size_t k = 0; k < published.size(); ++k)
      EXPECT_EQ(read_index(*published[k].first), published[k].second) << "seed " << seed << " snapshot " << k;
  }
  // Both cases arise: every held term in a counter (InterPodAffinity may use them), and some
  // evicted (it must scan).
  EXPECT_GT(held_complete, 100u);
  EXPECT_GT(held_incomplete, 100u);
}

TEST(TopologyIndex, CountsOnlyNodesOfTheSnapshot) {
  scheduler_cache cache;
  auto zone = [](const std::string& name, const std::string& z) {
    auto n = std::make_shared<k8s::core::Node>();
    n->mutable_metadata()->set_name(name);
    (*n->mutable_metadata()->mutable_labels())["zone"] = z;
    return *compile_node(n);
  };
  auto pod = [](const std::string& uid, const std::string& node) {
    auto p = test::make_pod(uid, uid);
    (*p->mutable_metadata()->mutable_labels())["app"] = "x";
    p->mutable_spec()->set_node_name(node);
    auto out = std::make_shared<pod_info>(*test::compile_ok(p));
    spread_constraint c;
    c.topology_key = "zone";
    c.selector = sel("app", selector_op::exists);
    out->spread_constraints.push_back(c);
    return pod_info_ptr(out);
  };
  cache.add_or_update_node(zone("n1", "z1"));
  ASSERT_TRUE(cache.add_pod(pod("a", "n1")).ok());
  ASSERT_TRUE(cache.add_pod(pod("b", "n2")).ok());  // n2 is not a node yet: a ghost
  auto counts = [&] {
    auto s = cache.current();
    std::map<std::string, int> out;
    const auto& ix = s->topology();
    const auto* t = ix.find_table("zone");
    if (!t || ix.counter_count() != 1) return out;
    for (size_t id = 0; id < t->ids; ++id)
      if (t->nodes.get(id) > 0) out[t->values.get(id)] = ix.counter_at(0).counts.get(id);
    return out;
  };
  EXPECT_EQ(counts(), (std::map<std::string, int>{{"z1", 1}}));
  cache.add_or_update_node(zone("n2", "z2"));  // the ghost's pod enters with its node
  EXPECT_EQ(counts(), (std::map<std::string, int>{{"z1", 1}, {"z2", 1}}));
  cache.add_or_update_node(zone("n1", "z2"));  // relabelled: its pod moves domain
  EXPECT_EQ(counts(), (std::map<std::string, int>{{"z2", 2}}));
  cache.remove_node("n2");
  EXPECT_EQ(counts(), (std::map<std::string, int>{{"z2", 1}}));
}

}  // namespace
}  // namespace kas

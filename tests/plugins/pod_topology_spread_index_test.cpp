// PodTopologySpread over the cache's topology index: on random clusters, PreFilter, Filter, PreScore,
// Score and NormalizeScore give on the cache's snapshot (which carries the index) exactly what they
// give on a snapshot of the same nodes built without it (where they scan every pod). The pods vary
// what decides whether the index may be used: nodeSelector and required node affinity with
// nodeAffinityPolicy Honor or Ignore, nodeTaintsPolicy Honor with and without tainted nodes,
// several constraints whose keys some nodes lack, and selectors the index has no counter for.
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "cache/scheduler_cache.hpp"
#include "plugins/pod_topology_spread/common.hpp"
#include "plugins/pod_topology_spread/pod_topology_spread.hpp"
#include "plugins/pod_topology_spread/state.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::selector_in;

constexpr const char* hostname = "kubernetes.io/hostname";

struct random_cluster {
  std::mt19937 rng;
  scheduler_cache cache;
  bool taints;  // some nodes carry a NoSchedule taint
  int serial = 0;

  random_cluster(unsigned seed, bool with_taints) : rng(seed), taints(with_taints) {}
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
  bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }

  std::vector<spread_constraint> constraints(bool hard) {
    static const std::vector<label_selector> selectors = {selector_in("app", {"x"}), selector_in("app", {"x", "y"}),
                                                          selector_in("tier", {"fe"}), label_selector{}};
    static const std::vector<std::string> keys = {"zone", hostname, "rack"};
    std::vector<spread_constraint> out;
    for (size_t k = 0, n = 1 + pick(2); k < n; ++k) {
      spread_constraint c;
      c.max_skew = 1 + static_cast<int32_t>(pick(3));
      c.topology_key = keys[pick(keys.size())];
      c.do_not_schedule = hard;
      c.selector = selectors[pick(selectors.size())];
      c.min_domains = chance(20) ? 3 : 1;
      c.node_affinity_policy = chance(70) ? node_inclusion_policy::honor : node_inclusion_policy::ignore;
      c.node_taints_policy = chance(30) ? node_inclusion_policy::honor : node_inclusion_policy::ignore;
      out.push_back(c);
    }
    return out;
  }

  pod_info_ptr pod(const std::string& node, bool hard) {
    const std::string name = "p" + std::to_string(serial++);
    std::string labels;
    if (chance(70)) labels += std::string("app: ") + static_cast<char>('x' + pick(3)) + ", ";
    if (chance(50)) labels += chance(50) ? "tier: fe, " : "tier: be, ";
    const std::string ns = chance(80) ? "default" : "other";
    std::string spec = "{";
    if (!node.empty()) spec += "nodeName: " + node + ", ";
    if (chance(15)) spec += "nodeSelector: {zone: z1}, ";
    if (chance(10))
      spec += "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
              "[{matchExpressions: [{key: rack, operator: In, values: [r0]}]}]}}}, ";
    if (chance(20)) spec += "tolerations: [{key: dedicated, operator: Exists}], ";
    spec += "}";
    std::string meta = "{name: " + name + ", namespace: " + ns + ", uid: " + name + ", labels: {" + labels + "}";
    if (chance(5)) meta += ", deletionTimestamp: \"2024-01-01T00:00:00Z\"";
    meta += "}";
    auto compiled = test::pod_from_yaml("metadata: " + meta + "\nspec: " + spec);
    auto p = std::make_shared<pod_info>(*compiled);
    p->spread_constraints = constraints(hard);
    return p;
  }

  void add_node() {
    const std::string name = "n" + std::to_string(serial++);
    std::string labels = std::string(hostname) + ": " + name;
    if (chance(90)) labels += ", zone: z" + std::to_string(pick(3));
    if (chance(60)) labels += ", rack: r" + std::to_string(pick(4));
    std::string y = "metadata: {name: " + name + ", labels: {" + labels + "}}";
    if (taints && chance(20)) y += "\nspec: {taints: [{key: dedicated, effect: NoSchedule}]}";
    cache.add_or_update_node(test::node_from_yaml(y));
  }

  void build() {
    for (int i = 0, n = 6 + static_cast<int>(pick(10)); i < n; ++i) add_node();
    auto snap = cache.current();
    for (int i = 0, n = 20 + static_cast<int>(pick(60)); i < n; ++i) {
      const std::string node = snap->node(pick(snap->size())).name;
      auto p = pod(node, chance(50));
      if (chance(50))
        ASSERT_TRUE(cache.add_pod(p).ok());
      else
        ASSERT_TRUE(cache.assume_pod(p, node).ok());
    }
    if (chance(30)) add_node();  // a node without pods, perhaps lacking a key
  }
};

// The same nodes (and pods) in a snapshot without a topology index.
std::shared_ptr<const snapshot> without_index(const snapshot& s) {
  snapshot out;
  for (size_t i = 0; i < s.size(); ++i) out.add_node(s.node_ptr(i), i + 1);
  return std::make_shared<const snapshot>(out.with_objects(s.objects_ptr(), s.size() + 1));
}

struct outcome {
  std::vector<std::map<std::string, int>> counts;
  std::vector<int> min_match;
  std::map<std::string, fw::code> filter;
  std::map<std::string, int64_t> scores;
  bool operator==(const outcome& o) const {
    return counts == o.counts && min_match == o.min_match && filter == o.filter && scores == o.scores;
  }
};

std::string describe(const outcome& o) {
  std::string s;
  for (size_t i = 0; i < o.counts.size(); ++i) {
    s += "constraint " + std::to_string(i) + " min " + std::to_string(o.min_match[i]) + ":";
    for (auto& [v, n] : o.counts[i]) s += " " + v + "=" + std::to_string(n);
    s += "\n";
  }
  for (auto& [n, c] : o.filter) s += n + ":" + std::to_string(static_cast<int>(c)) + " ";
  s += "\n";
  for (auto& [n, v] : o.scores) s += n + "=" + std::to_string(v) + " ";
  return s;
}

outcome run(const pod_topology_spread& pl, const pod_info& pod, std::shared_ptr<const snapshot> snap,
            const std::vector<std::string>& feasible_names) {
  outcome o;
  fw::cycle_state state;
  state.set_snapshot(snap);
  fw::pre_filter_result pfr;
  auto pre = pl.pre_filter(state, pod, *snap, pfr);
  if (pre.is_success()) {
    const auto* s = state.read_as<pts::pre_filter_state>(pod_topology_spread::pre_filter_key);
    for (size_t i = 0; i < s->constraints->size(); ++i) {
      o.counts.emplace_back(s->tp_value_to_match_num[i].begin(), s->tp_value_to_match_num[i].end());
      o.min_match.push_back(s->min_match_num(i, (*s->constraints)[i].min_domains));
    }
    for (size_t i = 0; i < snap->size(); ++i) o.filter[snap->node(i).name] = pl.filter(state, pod, snap->node(i)).get_code();
  }
  std::vector<const node_info*> feasible;
  for (auto& n : feasible_names) feasible.push_back(snap->find(n));
  if (pl.pre_score(state, pod, feasible).is_success()) {
    std::vector<fw::node_score> scores;
    for (auto* n : feasible) {
      int64_t v = 0;
      EXPECT_TRUE(pl.score(state, pod, *n, v).is_success());
      scores.push_back({n->name, v});
    }
    EXPECT_TRUE(pl.normalize_score(state, pod, scores).is_success());
    for (auto& s : scores) o.scores[std::string(s.name)] = s.score;
  }
  return o;
}

TEST(PodTopologySpreadIndex, SameResultsWithAndWithoutTheIndex) {
  auto made = pod_topology_spread::make(YAML::Node(), "args", fw::handle{});
  ASSERT_TRUE(made.ok());
  auto pl = std::dynamic_pointer_cast<pod_topology_spread>(*made);
  size_t indexed_filter = 0, indexed_score = 0, scanned = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    random_cluster c(seed, seed % 3 == 0);
    c.build();
    if (HasFatalFailure()) return;
    auto with = c.cache.current();
    auto plain = without_index(*with);
    for (int k = 0; k < 25; ++k) {
      const bool hard = c.chance(50);
      auto pod = c.pod("", hard);
      std::vector<std::string> feasible;
      for (size_t i = 0; i < with->size(); ++i)
        if (c.chance(70)) feasible.push_back(with->node(i).name);
      if (feasible.empty()) feasible.push_back(with->node(0).name);
      // Which path the indexed run takes, so the test shows it exercised both.
      auto hard_cs = pts::constraints_for(*pod, true, pl->default_constraints(), with->objects());
      auto soft_cs = pts::constraints_for(*pod, false, pl->default_constraints(), with->objects());
      if (!hard_cs.empty() && !pts::exact_counters(*with, *pod, hard_cs, true, false).empty()) ++indexed_filter;
      else if (!soft_cs.empty() && !pts::exact_counters(*with, *pod, soft_cs, true, true).empty()) ++indexed_score;
      else ++scanned;
      auto got = run(*pl, *pod, with, feasible);
      auto want = run(*pl, *pod, plain, feasible);
      ASSERT_EQ(got, want) << "seed " << seed << " pod " << k << "\nindexed:\n"
                           << describe(got) << "\nscanned:\n"
                           << describe(want);
    }
  }
  EXPECT_GT(indexed_filter, 100u);
  EXPECT_GT(indexed_score, 100u);
  EXPECT_GT(scanned, 100u);
}

}  // namespace
}  // namespace kas::plugins

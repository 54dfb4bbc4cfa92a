// InterPodAffinity over the cache's topology index: on random clusters, PreFilter and Filter give on
// the cache's snapshot (which carries the index) exactly what they give on a snapshot of the same
// nodes built without it (where they walk every pod), before and after AddPod/RemovePod on a clone
// of the state. Terms vary what decides whether the index may be used: namespaces listed, every
// namespace, a nil or a label-dependent namespaceSelector, terms the cache has no counter for,
// required affinity beside anti-affinity, terminating pods, nodes lacking a topology key.
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "cache/scheduler_cache.hpp"
#include "plugins/inter_pod_affinity/inter_pod_affinity.hpp"
#include "plugins/inter_pod_affinity/terms.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::selector_in;

struct random_cluster {
  std::mt19937 rng;
  scheduler_cache cache;
  int serial = 0;
  int scoring_terms_percent = 15;  // required affinity / preferred terms, which PreScore scores

  explicit random_cluster(unsigned seed) : rng(seed) {}
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
  bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }

  affinity_term term(const std::string& ns) {
    affinity_term t;
    t.topology_key = chance(60) ? "kubernetes.io/hostname" : "zone";
    t.selector = chance(70) ? selector_in("app", {"x"}) : selector_in("tier", {"fe", "be"});
    switch (pick(6)) {
      case 0: t.namespaces = {"default", "other"}; break;
      case 1: t.namespace_selector = label_selector{}; break;  // every namespace
      case 2:
        t.namespaces = {ns};
        t.namespace_selector = label_selector{{}, true};  // nil: the list only
        break;
      case 3: t.namespace_selector = selector_in("team", {"a"}); break;  // depends on namespace labels
      default: t.namespaces = {ns}; break;
    }
    return t;
  }

  pod_info_ptr pod(const std::string& node) {
    const std::string name = "p" + std::to_string(serial++);
    static const std::vector<std::string> namespaces = {"default", "other", "team-a"};
    const std::string ns = namespaces[pick(namespaces.size())];
    std::string labels;
    if (chance(70)) labels += std::string("app: ") + static_cast<char>('x' + pick(2)) + ", ";
    if (chance(50)) labels += chance(50) ? "tier: fe, " : "tier: be, ";
    std::string meta = "{name: " + name + ", namespace: " + ns + ", uid: " + name + ", labels: {" + labels + "}";
    if (chance(5)) meta += ", deletionTimestamp: \"2024-01-01T00:00:00Z\"";
    meta += "}";
    auto p = std::make_shared<pod_info>(
      *test::pod_from_yaml("metadata: " + meta + "\nspec: {" + (node.empty() ? "" : "nodeName: " + node) + "}"));
    if (chance(60))
      for (size_t k = 0, n = 1 + pick(2); k < n; ++k) p->required_anti_affinity.push_back(term(ns));
    if (chance(scoring_terms_percent)) p->required_affinity.push_back(term(ns));
    if (chance(scoring_terms_percent)) p->preferred_anti_affinity.push_back({term(ns), 7});
    return p;
  }

  void build() {
    auto objects = std::make_shared<cluster_objects>();
    using entries = std::vector<label_map::entry>;
    objects->namespace_labels["default"] = label_map(entries{});
    objects->namespace_labels["other"] = label_map(entries{{"team", "b"}});
    objects->namespace_labels["team-a"] = label_map(entries{{"team", "a"}});
    cache.set_objects(objects);
    std::vector<std::string> names;
    for (int i = 0, n = 6 + static_cast<int>(pick(10)); i < n; ++i) {
      const std::string name = "n" + std::to_string(serial++);
      std::string labels = "kubernetes.io/hostname: " + (chance(90) ? name : std::string("shared"));
      if (chance(85)) labels += ", zone: z" + std::to_string(pick(3));
      cache.add_or_update_node(test::node_from_yaml("metadata: {name: " + name + ", labels: {" + labels + "}}"));
      names.push_back(name);
    }
    for (int i = 0, n = 10 + static_cast<int>(pick(50)); i < n; ++i) {
      const std::string& node = names[pick(names.size())];
      auto p = pod(node);
      if (chance(50))
        ASSERT_TRUE(cache.add_pod(p).ok());
      else
        ASSERT_TRUE(cache.assume_pod(p, node).ok());
    }
  }
};

std::shared_ptr<const snapshot> without_index(const snapshot& s) {
  snapshot out;
  for (size_t i = 0; i < s.size(); ++i) out.add_node(s.node_ptr(i), i + 1);
  return std::make_shared<const snapshot>(out.with_objects(s.objects_ptr(), s.size() + 1));
}

using verdicts = std::map<std::string, std::string>;

verdicts filter_all(const inter_pod_affinity& pl, const fw::cycle_state& state, const pod_info& pod,
                    const snapshot& snap) {
  verdicts out;
  for (size_t i = 0; i < snap.size(); ++i) {
    auto st = pl.filter(state, pod, snap.node(i));
    out[snap.node(i).name] = std::to_string(static_cast<int>(st.get_code())) + " " + st.message();
  }
  return out;
}

struct outcome {
  int pre_filter = -1;
  verdicts before, after_changes;
  int pre_score = -1;
  std::map<std::string, int64_t> scores;  // normalized
  bool operator==(const outcome& o) const {
    return pre_filter == o.pre_filter && before == o.before && after_changes == o.after_changes &&
           pre_score == o.pre_score && scores == o.scores;
  }
};

std::string describe(const outcome& o) {
  std::string s = "pre_filter " + std::to_string(o.pre_filter) + " pre_score " + std::to_string(o.pre_score) + "\n";
  for (auto& [n, v] : o.scores) s += n + "=" + std::to_string(v) + " ";
  s += "\n";
  for (auto& [n, v] : o.before) s += n + ": " + v + "\n";
  s += "after AddPod/RemovePod:\n";
  for (auto& [n, v] : o.after_changes) s += n + ": " + v + "\n";
  return s;
}

outcome run(const inter_pod_affinity& pl, const pod_info& pod, std::shared_ptr<const snapshot> snap,
            const pod_info& added, const std::string& added_on, const pod_info* removed) {
  outcome o;
  {
    fw::cycle_state scoring;
    scoring.set_snapshot(snap);
    std::vector<const node_info*> all;
    for (size_t i = 0; i < snap->size(); ++i) all.push_back(&snap->node(i));
    auto st = pl.pre_score(scoring, pod, all);
    o.pre_score = static_cast<int>(st.get_code());
    if (st.is_success()) {
      std::vector<fw::node_score> scores;
      for (auto* n : all) {
        int64_t v = 0;
        EXPECT_TRUE(pl.score(scoring, pod, *n, v).is_success());
        scores.push_back({n->name, v});
      }
      EXPECT_TRUE(pl.normalize_score(scoring, pod, scores).is_success());
      for (auto& sc : scores) o.scores[std::string(sc.name)] = sc.score;
    }
  }
  fw::cycle_state state;
  state.set_snapshot(snap);
  fw::pre_filter_result pfr;
  auto st = pl.pre_filter(state, pod, *snap, pfr);
  o.pre_filter = static_cast<int>(st.get_code());
  if (!st.is_success()) return o;
  o.before = filter_all(pl, state, pod, *snap);
  // Preemption's and re-validation's path: a clone gets pods added and removed.
  fw::cycle_state copy = state.clone();
  EXPECT_TRUE(pl.add_pod(copy, pod, added, *snap->find(added_on)).is_success());
  if (removed) {
    EXPECT_TRUE(pl.remove_pod(copy, pod, *removed, *snap->find(removed->node_name)).is_success());
  }
  o.after_changes = filter_all(pl, copy, pod, *snap);
  // The original is untouched by the clone's changes.
  EXPECT_EQ(filter_all(pl, state, pod, *snap), o.before);
  return o;
}

TEST(InterPodAffinityIndex, SameResultsWithAndWithoutTheIndex) {
  auto made = inter_pod_affinity::make(YAML::Node(), "args", fw::handle{});
  ASSERT_TRUE(made.ok());
  auto pl = std::dynamic_pointer_cast<inter_pod_affinity>(*made);
  size_t held_indexed = 0, terms_indexed = 0, scanned = 0, rejected = 0, score_skips = 0, scored = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    random_cluster c(seed);
    // Every third cluster has no pod that PreScore scores by its own terms.
    if (seed % 3 == 0) c.scoring_terms_percent = 0;
    c.build();
    if (HasFatalFailure()) return;
    auto with = c.cache.current();
    auto plain = without_index(*with);
    const auto& ix = with->topology();
    for (int k = 0; k < 25; ++k) {
      auto pod = c.pod("");
      const std::string added_on = with->node(c.pick(with->size())).name;
      auto added = with_node_name(*c.pod(""), added_on);
      const node_info& from = with->node(c.pick(with->size()));
      const pod_info* removed = from.pods.empty() ? nullptr : from.pods[c.pick(from.pods.size())].get();

      bool terms = !pod->required_anti_affinity.empty();
      for (auto& t : ipa::merge_namespaces(pod->required_anti_affinity, with->objects())) {
        auto text = term_text(t);
        terms = terms && text && ix.find(*text);
      }
      const bool held = ix.held_terms() > 0 && ix.held_complete();
      held_indexed += held;
      terms_indexed += terms;
      scanned += !held && !terms;

      auto got = run(*pl, *pod, with, *added, added_on, removed);
      auto want = run(*pl, *pod, plain, *added, added_on, removed);
      ASSERT_EQ(got, want) << "seed " << seed << " pod " << k << "\nindexed:\n"
                           << describe(got) << "\nscanned:\n"
                           << describe(want);
      for (auto& [node, v] : got.before) rejected += v.rfind("0 ", 0) != 0;
      (got.pre_score == static_cast<int>(fw::code::skip) ? score_skips : scored) += 1;
    }
  }
  EXPECT_GT(held_indexed, 200u);
  EXPECT_GT(terms_indexed, 200u);
  EXPECT_GT(scanned, 50u);
  EXPECT_GT(score_skips, 200u);
  EXPECT_GT(scored, 200u);
  EXPECT_GT(rejected, 1000u) << "the clusters reject nodes, so the counts decide verdicts";
}

}  // namespace
}  // namespace kas::plugins

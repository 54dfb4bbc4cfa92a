// The node_hot path (cache/node_hot.hpp) against the plugins it stands in for: on random clusters
// and pods, the hot Filter must find exactly the feasible nodes and failure statuses the full
// Filters find, hot Score rows must equal score_nodes' rows, plugin by plugin, and schedule_one's
// fused totals (score_and_weigh) those of score_step + finish_scores. The snapshot's hot records
// must stay equal to hot_of(node) through every kind of cache change.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cache/scheduler_cache.hpp"
#include "plugins/pod_topology_spread/common.hpp"
#include "config/profile.hpp"
#include "plugins/framework/runtime/schedule_one.hpp"
#include "plugins/framework/registry.hpp"
#include "tests/actors/actor_fixtures.hpp"

namespace kas::test {
namespace {

fw::framework_ptr default_framework() {
  auto f = fw::framework::build(default_profile(), fw::in_tree_registry(), fw::handle{}, "profiles[0]");
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.err().message);
  return *f;
}

template <class T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

std::string reasons_of(const fw::status& s) {
  std::string out;
  for (auto r : s.reasons()) out += std::string(r) + "|";
  return out;
}

bool chance(std::mt19937_64& rng, int percent) { return std::uniform_int_distribution<int>(0, 99)(rng) < percent; }

std::shared_ptr<node_info> random_node(std::mt19937_64& rng, int i) {
  auto spec = node("n" + std::to_string(i), pick(rng, std::vector<std::string>{"0", "1", "2", "4", "8"}),
                   pick(rng, std::vector<std::string>{"1Gi", "4Gi", "16Gi"}), pick(rng, std::vector<std::string>{"2", "4", "110"}));
  if (chance(rng, 20)) spec.taints.push_back({"dedicated", "gpu", pick(rng, std::vector<std::string>{"NoSchedule", "PreferNoSchedule", "NoExecute"})});
  auto n = make_node(spec)->clone();
  n->unschedulable = chance(rng, 10);
  if (chance(rng, 15)) n->images.push_back({"registry.k8s.io/pause:3.10", 700000, intern_image_name("registry.k8s.io/pause:3.10")});
  int pods = std::uniform_int_distribution<int>(0, 4)(rng);
  for (int k = 0; k < pods; ++k) {
    auto p = pod(n->name + "-p" + std::to_string(k), pick(rng, std::vector<std::string>{"", "100m", "500m", "1"}),
                 pick(rng, std::vector<std::string>{"", "128Mi", "1Gi"}));
    p.node = n->name;
    n->add_pod(make_pod(p));
  }
  return n;
}

pod_info_ptr random_pod(std::mt19937_64& rng, int i) {
  auto spec = pod("p" + std::to_string(i), pick(rng, std::vector<std::string>{"", "100m", "1", "3"}),
                  pick(rng, std::vector<std::string>{"", "256Mi", "2Gi", "8Gi"}));
  if (chance(rng, 25)) spec.tolerations.push_back({"dedicated", "Equal", "gpu", ""});
  if (chance(rng, 10)) spec.tolerations.push_back({"node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"});
  auto p = std::make_shared<pod_info>(*make_pod(spec));
  if (chance(rng, 10)) p->node_name = "n" + std::to_string(std::uniform_int_distribution<int>(0, 5)(rng));
  if (chance(rng, 10)) p->requests.ephemeral_storage = 1 << 20;
  return p;
}

// The default profile with NodeResourcesFit and NodeResourcesBalancedAllocation configured by
// `fit` and `balanced` (YAML args; empty: the defaults), so the hot kernels' other strategies,
// weights and resource orders are compared too.
fw::framework_ptr framework_with(const std::string& fit, const std::string& balanced) {
  auto profile = default_profile();
  if (!fit.empty()) profile.plugin_args["NodeResourcesFit"] = YAML::Load(fit);
  if (!balanced.empty()) profile.plugin_args["NodeResourcesBalancedAllocation"] = YAML::Load(balanced);
  auto f = fw::framework::build(profile, fw::in_tree_registry(), fw::handle{}, "profiles[0]");
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.err().message);
  return *f;
}

TEST(HotPath, FilterAndScoreAgreeWithTheFullPlugins) {
  const std::vector<std::pair<std::string, std::string>> configs = {
    {"", ""},
    {"scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}, {name: memory, weight: 3}]}",
     "resources: [{name: memory, weight: 1}, {name: cpu, weight: 1}]"},
    {"scoringStrategy: {type: LeastAllocated, resources: [{name: memory, weight: 2}, {name: cpu, weight: 2}]}",
     "resources: [{name: cpu, weight: 1}]"},
    {"scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 5}]}", ""},
    {"scoringStrategy: {type: LeastAllocated, resources: [{name: memory, weight: 1}, {name: cpu, weight: 2}]}", ""},
  };
  for (auto& [fit, balanced] : configs) {
    SCOPED_TRACE("NodeResourcesFit args: " + fit + "; balanced: " + balanced);
    auto fwk = framework_with(fit, balanced);
    std::mt19937_64 rng(2026);
    size_t hot_filtered = 0, hot_scored = 0;
    for (int round = 0; round < 300; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      auto snap = std::make_shared<snapshot>();
      // A third of the nodes copy the previous one's resources and pods (a node pool), which the
      // hot kernels score without recomputing: those scores are compared too.
      std::shared_ptr<node_info> last;
      for (int i = 0; i < 40; ++i) {
        auto n = random_node(rng, i);
        if (last && chance(rng, 33)) {
          n = last->clone();
          n->name = "n" + std::to_string(i);
        }
        snap->add_node(n, static_cast<uint64_t>(i + 1));
        last = n;
      }
      auto pod = random_pod(rng, round);
      fw::cycle_state state;
      state.set_snapshot(snap);
      fw::pre_filter_result pr;
      fw::schedule_result res;
      if (!fw::pre_filter_step(*fwk, state, *pod, *snap, pr, res).is_success()) continue;
      fw::node_to_status absent;
      fw::candidate_nodes all(*snap, pr, 0, absent);
      fw::filtered_nodes hot, full;
      fw::hot_filter hf;
      hot_filtered += fwk->hot_filter_for(state, *pod, hf);
      fw::find_nodes_that_pass_filters(*fwk, state, *pod, *snap, all, 0, all.size(), 0, false, hot);
      state.record_plugin_metrics = true;  // sampled cycles take the full path
      fw::find_nodes_that_pass_filters(*fwk, state, *pod, *snap, all, 0, all.size(), 0, false, full);
      state.record_plugin_metrics = false;
      ASSERT_EQ(hot.feasible, full.feasible);
      ASSERT_EQ(hot.failed.size(), full.failed.size());
      for (size_t k = 0; k < hot.failed.size(); ++k) {
        EXPECT_EQ(hot.failed[k].first, full.failed[k].first);
        EXPECT_EQ(hot.failed[k].second.get_code(), full.failed[k].second.get_code());
        EXPECT_EQ(reasons_of(hot.failed[k].second), reasons_of(full.failed[k].second));
      }
      if (hot.feasible.size() < 2) continue;
      std::vector<const node_info*> nodes;
      std::vector<const node_hot*> hots;
      for (auto idx : hot.feasible) {
        nodes.push_back(&snap->node(idx));
        hots.push_back(&snap->hot(idx));
        ASSERT_TRUE(snap->hot(idx) == hot_of(snap->node(idx)));
      }
      ASSERT_TRUE(fw::pre_score_step(*fwk, state, *pod, nodes).is_success());
      std::vector<std::vector<fw::node_score>> with_hot, without;
      ASSERT_TRUE(fw::score_step(*fwk, state, *pod, nodes, with_hot, hots.data()).is_success());
      ASSERT_TRUE(fw::score_step(*fwk, state, *pod, nodes, without).is_success());
      ASSERT_EQ(with_hot.size(), without.size());
      for (size_t p = 0; p < with_hot.size(); ++p) {
        if (state.skip_score(p)) continue;
        for (size_t k = 0; k < nodes.size(); ++k) {
          EXPECT_EQ(with_hot[p][k].score, without[p][k].score) << fwk->score_plugin_name(p) << " on " << nodes[k]->name;
          EXPECT_EQ(with_hot[p][k].name, without[p][k].name);
        }
      }
      // schedule_one's fused scoring over plain rows, with and without the hot records, against
      // score_step + finish_scores over node_score lists (the fan-out's path).
      std::vector<int64_t> want, fused_hot, fused;
      ASSERT_TRUE(fw::finish_scores(*fwk, state, *pod, nodes.size(), without, want).is_success());
      ASSERT_TRUE(fwk->score_and_weigh(state, *pod, nodes, hots.data(), fused_hot).is_success());
      ASSERT_TRUE(fwk->score_and_weigh(state, *pod, nodes, nullptr, fused).is_success());
      EXPECT_EQ(fused_hot, want);
      EXPECT_EQ(fused, want);
      ++hot_scored;
    }
    // The cases must exercise the hot path, not only its fallbacks.
    EXPECT_GT(hot_filtered, 100u);
    EXPECT_GT(hot_scored, 100u);
  }
}

// The hot scan walks chunk-sized runs of records from the round-robin start: over several chunks,
// from any start, over any range of the candidates and with any number wanted, it must examine
// and find what the full Filters do, in the same order.
// PreFilter for `pod` on `snap` into `pr` (the state reads `snap`); false when PreFilter fails or
// the hot Filter does not apply to the pod, and the round is skipped.
bool prefiltered_for_hot_path(const fw::framework& fwk, fw::cycle_state& state, const pod_info& pod,
                              const snapshot_ptr& snap, fw::pre_filter_result& pr) {
  state.set_snapshot(snap);
  fw::schedule_result res;
  if (!fw::pre_filter_step(fwk, state, pod, *snap, pr, res).is_success()) return false;
  fw::hot_filter hf;
  return fwk.hot_filter_for(state, pod, hf);
}

// The hot and the full scan found the same feasible nodes and failed the others for the same reasons.
void expect_same_scan(const fw::filtered_nodes& hot, const fw::filtered_nodes& full) {
  ASSERT_EQ(hot.feasible, full.feasible);
  ASSERT_EQ(hot.failed.size(), full.failed.size());
  for (size_t k = 0; k < hot.failed.size(); ++k) {
    EXPECT_EQ(hot.failed[k].first, full.failed[k].first);
    EXPECT_EQ(reasons_of(hot.failed[k].second), reasons_of(full.failed[k].second));
  }
}

TEST(HotPath, FilterRunsAcrossChunksFromAnyStart) {
  auto fwk = default_framework();
  std::mt19937_64 rng(77);
  auto snap = std::make_shared<snapshot>();
  const int nodes = 3 * static_cast<int>(snapshot::chunk_size) + 17;
  for (int i = 0; i < nodes; ++i) snap->add_node(random_node(rng, i), static_cast<uint64_t>(i + 1));
  size_t compared = 0;
  for (int round = 0; round < 200; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto p = std::make_shared<pod_info>(*random_pod(rng, round));
    p->node_name.clear();  // every node a candidate
    pod_info_ptr pod = p;
    fw::cycle_state state;
    fw::pre_filter_result pr;
    if (!prefiltered_for_hot_path(*fwk, state, *pod, snap, pr)) continue;
    const size_t start = std::uniform_int_distribution<size_t>(0, 2 * nodes)(rng);
    fw::node_to_status absent;
    fw::candidate_nodes all(*snap, pr, start, absent);
    ASSERT_TRUE(all.all_nodes());
    const size_t begin = std::uniform_int_distribution<size_t>(0, all.size() / 2)(rng);
    const size_t end = std::uniform_int_distribution<size_t>(begin, all.size())(rng);
    const size_t want = std::uniform_int_distribution<size_t>(0, 150)(rng);
    fw::filtered_nodes hot, full;
    fw::find_nodes_that_pass_filters(*fwk, state, *pod, *snap, all, begin, end, want, false, hot);
    state.record_plugin_metrics = true;  // sampled cycles take the full path
    fw::find_nodes_that_pass_filters(*fwk, state, *pod, *snap, all, begin, end, want, false, full);
    ASSERT_EQ(hot.examined, full.examined);
    expect_same_scan(hot, full);
    ++compared;
  }
  EXPECT_GT(compared, 100u);
}

// With pods nominated to some nodes, the hot path leaves exactly those nodes where a nominated pod
// counts (another pod, priority at least the incoming pod's) to the nominated Filter pass, and
// still finds what the full path finds everywhere.
TEST(HotPath, NominatedPodsCountOnTheirNodesOnly) {
  auto fwk = default_framework();
  std::mt19937_64 rng(91);
  snapshot base;
  const int nodes = 2 * static_cast<int>(snapshot::chunk_size) + 9;
  for (int i = 0; i < nodes; ++i) base.add_node(random_node(rng, i), static_cast<uint64_t>(i + 1));
  size_t compared = 0, changed_by_nominations = 0;
  for (int round = 0; round < 200; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Big nominated pods of random priority on a few random nodes (sometimes one that is gone).
    snapshot::nominated_map nominated;
    const int count = std::uniform_int_distribution<int>(1, 6)(rng);
    for (int k = 0; k < count; ++k) {
      auto np = std::make_shared<pod_info>(*make_pod(pod("nom-" + std::to_string(round) + "-" + std::to_string(k),
                                                         pick(rng, std::vector<std::string>{"1", "3", "7"}),
                                                         pick(rng, std::vector<std::string>{"1Gi", "8Gi"}))));
      np->priority = std::uniform_int_distribution<int>(-1, 1)(rng);
      const std::string node = "n" + std::to_string(std::uniform_int_distribution<int>(0, nodes + 2)(rng));
      nominated[node].push_back(np);
    }
    auto snap = std::make_shared<const snapshot>(
      base.with_nominated(std::make_shared<const snapshot::nominated_map>(nominated), 1000 + round));
    auto without = std::make_shared<const snapshot>(
      base.with_nominated(std::make_shared<const snapshot::nominated_map>(), 1000 + round));
    auto p = std::make_shared<pod_info>(*random_pod(rng, round));
    p->node_name.clear();
    p->priority = std::uniform_int_distribution<int>(-1, 1)(rng);
    pod_info_ptr pod = p;
    fw::cycle_state state;
    fw::pre_filter_result pr;
    if (!prefiltered_for_hot_path(*fwk, state, *pod, snap, pr)) continue;
    fw::node_to_status absent;
    fw::candidate_nodes all(*snap, pr, std::uniform_int_distribution<size_t>(0, nodes)(rng), absent);
    fw::filtered_nodes hot, full, plain;
    fw::find_nodes_that_pass_filters(*fwk, state, *pod, *snap, all, 0, all.size(), 0, false, hot);
    fw::find_nodes_that_pass_filters(*fwk, state, *pod, *without, all, 0, all.size(), 0, false, plain);
    state.record_plugin_metrics = true;  // sampled cycles take the full path
    fw::find_nodes_that_pass_filters(*fwk, state, *pod, *snap, all, 0, all.size(), 0, false, full);
    expect_same_scan(hot, full);
    if (plain.feasible != hot.feasible) ++changed_by_nominations;
    ++compared;
  }
  EXPECT_GT(compared, 100u);
  EXPECT_GT(changed_by_nominations, 10u) << "the nominated pods must matter in some rounds";
}

TEST(HotPath, SnapshotRecordsFollowEveryCacheChange) {
  std::mt19937_64 rng(99);
  scheduler_cache c;
  std::vector<pod_info_ptr> placed;
  auto check = [&](const char* after) {
    auto snap = c.current();
    for (size_t i = 0; i < snap->size(); ++i)
      ASSERT_TRUE(snap->hot(i) == hot_of(snap->node(i))) << "node " << snap->node(i).name << " after " << after;
  };
  for (int i = 0; i < 150; ++i) c.add_or_update_node(random_node(rng, i));
  check("adding nodes");
  for (int step = 0; step < 3000; ++step) {
    int what = std::uniform_int_distribution<int>(0, 9)(rng);
    std::string node_name = "n" + std::to_string(std::uniform_int_distribution<int>(0, 170)(rng));
    if (what < 5) {
      auto p = random_pod(rng, 1000 + step);
      if (c.node(node_name) && c.assume_pod(p, node_name).ok()) placed.push_back(with_node_name(*p, node_name));
    } else if (what < 7 && !placed.empty()) {
      size_t k = std::uniform_int_distribution<size_t>(0, placed.size() - 1)(rng);
      auto uid = placed[k]->uid;
      if (c.is_assumed(uid)) {
        if (chance(rng, 50)) (void)c.forget_pod(uid);
        else (void)c.add_pod(placed[k]);
      } else {
        (void)c.remove_pod(placed[k]);
      }
      if (!c.contains(uid)) placed.erase(placed.begin() + static_cast<long>(k));
    } else if (what < 9) {
      auto n = random_node(rng, std::uniform_int_distribution<int>(0, 170)(rng));
      c.add_or_update_node(n);
    } else {
      c.remove_node(node_name);
    }
    if (step % 97 == 0) check("a change");
  }
  check("the last change");
}

TEST(HotPath, EqualLabelSetsShareOneInternedCopy) {
  label_map a({{"app", "web"}, {"tier", "front"}});
  label_map b({{"tier", "front"}, {"app", "web"}});  // same labels, another order
  label_map c(std::vector<label_map::entry>{{"app", "web"}});
  EXPECT_EQ(a.identity(), b.identity());
  EXPECT_NE(a.identity(), c.identity());
  EXPECT_EQ(label_map().identity(), nullptr);
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  ASSERT_NE(a.get("tier"), nullptr);
  EXPECT_EQ(*a.get("tier"), "front");
  EXPECT_EQ(intern_namespace("team-a"), intern_namespace(std::string("team-") + "a"));
  EXPECT_NE(intern_namespace("team-a"), intern_namespace("team-b"));
  EXPECT_NE(intern_namespace("team-a"), 0u);
}

// The pod_keys a pod list keeps, and the selector counter that reads them, against a plain count
// over pod_info objects (kube's countPodsMatchSelector), through random pushes and swap-removes.
TEST(HotPath, SelectorCounterAgreesWithAPlainCountThroughListChanges) {
  std::mt19937_64 rng(5);
  const std::vector<std::string> colors{"blue", "green", "red"}, namespaces{"default", "team-a"};
  auto plain = [](const pod_list& l, const label_selector& sel, const std::string& ns) {
    int n = 0;
    for (auto& p : l)
      if (p->ns == ns && !(p->pod && p->pod->metadata().has_deletion_timestamp()) && sel.matches(p->labels)) ++n;
    return n;
  };
  std::vector<label_selector> selectors;
  for (auto& c : colors) {
    label_selector sel;
    selector_requirement r;
    r.key = "color";
    r.values = {c};
    sel.requirements.push_back(r);
    selectors.push_back(sel);
  }
  for (int round = 0; round < 50; ++round) {
    pod_list l;
    for (int step = 0; step < 300; ++step) {
      if (l.empty() || chance(rng, 60)) {
        auto spec = pod("q" + std::to_string(step), "", "");
        spec.labels = {{"color", pick(rng, colors)}};
        auto p = std::make_shared<pod_info>(*make_pod(spec));
        // Half keep the namespace compile_pod interned ("default"), half move to another one by
        // hand, which must reset the interned id: both kinds of key are checked below.
        ASSERT_EQ(p->ns, "default");
        ASSERT_EQ(p->ns_id, intern_namespace("default"));
        if (chance(rng, 50)) {
          p->ns = pick(rng, namespaces);
          p->ns_id = 0;
        }
        if (chance(rng, 10)) {
          auto proto = std::make_shared<k8s::core::Pod>(*p->pod);
          proto->mutable_metadata()->mutable_deletion_timestamp()->set_seconds(1);
          p->pod = proto;
        }
        l.push_back(p);
      } else {
        l.erase_at(std::uniform_int_distribution<size_t>(0, l.size() - 1)(rng));
      }
      for (size_t i = 0; i < l.size(); ++i) {
        const auto& k = l.key(i);
        ASSERT_EQ(k.labels, l[i]->labels.identity());
        ASSERT_EQ(k.ns, intern_namespace(l[i]->ns));
      }
    }
    for (auto& sel : selectors)
      for (auto& ns : namespaces) {
        plugins::pts::selector_counter counter(sel, ns);
        EXPECT_EQ(counter.count(l), plain(l, sel, ns));
        EXPECT_EQ(counter.count(l), plain(l, sel, ns)) << "memoized verdicts";
      }
  }
}

}  // namespace
}  // namespace kas::test

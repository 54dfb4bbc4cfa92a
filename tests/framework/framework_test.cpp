// The framework runners (plugins/framework/framework.cpp) against kube-scheduler v1.36's
// frameworkImpl semantics (kube-scheduler's framework/runtime). Every case drives scriptable fakes that log their calls.
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "fakes.hpp"
#include "plugins/framework/runtime/schedule_one.hpp"

namespace kas {
namespace {

using namespace std::chrono_literals;
using test::fake_spec;
using test::harness;
using test::spec;
using strings = std::vector<std::string>;

// --- PreFilter / Filter -------------------------------------------------------------------------

TEST(PreFilterSkip, SkipsOnlyTheCoupledFilter) {
  struct row {
    const char* name;
    strings pre_filter, filter;
    std::set<std::string> skipping;  // plugins whose PreFilter returns Skip
    strings want_filter_calls;
  };
  const std::vector<row> rows = {
    {"skip first", {"A", "B"}, {"A", "B"}, {"A"}, {"B"}},
    {"skip second", {"A", "B"}, {"A", "B"}, {"B"}, {"A"}},
    // PreFilter order differs from Filter order: the mask must follow the name, not the index.
    {"different order", {"B", "A"}, {"A", "C", "B"}, {"B"}, {"A", "C"}},
    {"skipping plugin without Filter", {"X", "A"}, {"A", "B"}, {"X"}, {"A", "B"}},
    {"no skip", {"A"}, {"A", "B"}, {}, {"A", "B"}},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    harness h;
    for (auto n : {"A", "B", "C", "X"}) {
      auto s = spec(n);
      if (r.skipping.count(n)) s.pre_filter = fw::status::skip();
      h.add(s);
    }
    h.profile.pre_filter = r.pre_filter;
    h.profile.filter = r.filter;
    auto f = h.build();
    ASSERT_TRUE(f);
    auto pod = test::test_pod();
    snapshot snap;
    fw::cycle_state st;
    fw::pre_filter_result pr;
    EXPECT_TRUE(f->run_pre_filter(st, *pod, snap, pr).is_success());
    EXPECT_TRUE(f->run_filter(st, *pod, test::named_node("n1")).is_success());
    EXPECT_EQ(h.calls("filter"), r.want_filter_calls);
  }
}

TEST(PreFilterSkip, SkippedPluginsPreFilterExtensionsAreNotCalledAndCloneKeepsMask) {
  harness h;
  auto a = spec("A");
  a.pre_filter = fw::status::skip();
  a.filter = fw::status::unschedulable("A rejects");
  h.add(a);
  h.profile.pre_filter = {"A"};
  h.profile.filter = {"A"};
  auto f = h.build();
  ASSERT_TRUE(f);
  auto pod = test::test_pod();
  fw::cycle_state st;
  fw::pre_filter_result pr;
  ASSERT_TRUE(f->run_pre_filter(st, *pod, snapshot{}, pr).is_success());
  // Preemption filters on a clone: the skip must survive cloning.
  auto copy = st.clone();
  EXPECT_TRUE(f->run_filter(copy, *pod, test::named_node("n1")).is_success());
  EXPECT_TRUE(h.calls("filter").empty());
}

TEST(PreFilterResult, IntersectsAndExplainsAnEmptyIntersection) {
  using names = std::optional<std::set<std::string>>;
  struct step {
    const char* plugin;
    fw::status result;
    names nodes;
  };
  struct row {
    const char* name;
    std::vector<step> steps;
    fw::code want_code;
    std::string want_message;
    std::string want_plugin;
    names want_nodes;
    strings want_from;
    strings want_called;
  };
  const auto ok = fw::status::ok();
  const std::vector<row> rows = {
    {"all nodes", {{"A", ok, {}}, {"B", ok, {}}}, fw::code::success, "", "", {}, {}, {"A", "B"}},
    {"intersection",
     {{"A", ok, names{{"n1", "n2"}}}, {"B", ok, {}}, {"C", ok, names{{"n2", "n3"}}}},
     fw::code::success, "", "", names{{"n2"}}, {"A", "C"}, {"A", "B", "C"}},
    {"one plugin, no node",
     {{"A", ok, names{std::set<std::string>{}}}, {"B", ok, {}}},
     fw::code::unschedulable_and_unresolvable, "node(s) didn't satisfy plugin A", "A", names{std::set<std::string>{}},
     {"A"}, {"A"}},
    {"two plugins, disjoint",
     {{"A", ok, names{{"n1"}}}, {"B", ok, names{{"n2"}}}, {"C", ok, {}}},
     fw::code::unschedulable_and_unresolvable, "node(s) didn't satisfy plugin(s) [A B] simultaneously", "B",
     names{std::set<std::string>{}}, {"A", "B"}, {"A", "B"}},
    // kube keeps the plugins in a set: the message lists them sorted, whatever the run order.
    {"message lists plugins sorted",
     {{"Zeta", ok, names{{"n1"}}}, {"Alpha", ok, names{{"n2"}}}},
     fw::code::unschedulable_and_unresolvable, "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously", "Alpha",
     names{std::set<std::string>{}}, {"Zeta", "Alpha"}, {"Zeta", "Alpha"}},
    {"UnschedulableAndUnresolvable stops at once",
     {{"A", fw::status::unresolvable("no"), {}}, {"B", ok, {}}},
     fw::code::unschedulable_and_unresolvable, "no", "A", {}, {}, {"A"}},
    // kube #119770: Unschedulable lets every PreFilter run, so preemption has their state.
    {"Unschedulable runs the rest",
     {{"A", fw::status::unschedulable("full"), {}}, {"B", ok, {}}},
     fw::code::unschedulable, "full", "A", {}, {}, {"A", "B"}},
    {"Error stops at once",
     {{"A", fw::status::error("boom"), {}}, {"B", ok, {}}},
     fw::code::error, "running PreFilter plugin \"A\": boom", "A", {}, {}, {"A"}},
    {"Wait is an Error",
     {{"A", fw::status(fw::code::wait), {}}, {"B", ok, {}}},
     fw::code::error, "running PreFilter plugin \"A\": ", "A", {}, {}, {"A"}},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    harness h;
    for (auto& s : r.steps) {
      auto sp = spec(s.plugin);
      sp.pre_filter = s.result;
      sp.pre_filter_nodes = s.nodes;
      h.add(sp);
      h.profile.pre_filter.push_back(s.plugin);
    }
    auto f = h.build();
    ASSERT_TRUE(f);
    fw::cycle_state st;
    fw::pre_filter_result pr;
    auto s = f->run_pre_filter(st, *test::test_pod(), snapshot{}, pr);
    EXPECT_EQ(s.get_code(), r.want_code);
    EXPECT_EQ(s.message(), r.want_message);
    EXPECT_EQ(std::string(s.plugin()), r.want_plugin);
    EXPECT_EQ(h.calls("preFilter"), r.want_called);
    if (r.want_code == fw::code::success || r.want_nodes) {
      EXPECT_EQ(pr.node_names, r.want_nodes);
      EXPECT_EQ(strings(pr.from_plugins.begin(), pr.from_plugins.end()), r.want_from);
    }
  }
}

// candidate_nodes reads a PreFilterResult in either form the same way: the nodes in snapshot
// order, rotated to the start index, the others absent with the narrowing plugin's message.
TEST(PreFilterResult, CandidatesAreTheSameByIndexOrByName) {
  snapshot snap = test::named_nodes(6);
  fw::pre_filter_result by_index, by_name;
  // An index past the snapshot's end (a plugin's mistake) is dropped, as an unknown name is.
  by_index.node_indexes = std::make_shared<const std::vector<uint32_t>>(std::vector<uint32_t>{1, 3, 4, 9});
  by_name.node_names = std::set<std::string>{"n4", "n1", "n3", "gone"};
  by_index.from_plugins = by_name.from_plugins = {"G"};
  for (size_t start : {0, 1, 2, 7}) {
    SCOPED_TRACE(start);
    fw::node_to_status si, sn;
    fw::candidate_nodes ci(snap, by_index, start, si), cn(snap, by_name, start, sn);
    ASSERT_EQ(ci.size(), 3u);
    ASSERT_EQ(cn.size(), 3u);
    EXPECT_FALSE(ci.all_nodes());
    std::vector<uint32_t> want = {1, 3, 4};
    std::rotate(want.begin(), want.begin() + start % 3, want.end());
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(ci[i], want[i]);
      EXPECT_EQ(cn[i], want[i]);
    }
    ASSERT_TRUE(si.absent && sn.absent);
    EXPECT_EQ(si.absent->message(), "node(s) didn't satisfy plugin(s) [G]");
    EXPECT_EQ(si.absent->message(), sn.absent->message());
    EXPECT_EQ(si.absent->get_code(), fw::code::unschedulable_and_unresolvable);
  }
}

TEST(Filter, FirstFailureWinsAndCarriesThePluginName) {
  struct row {
    const char* name;
    std::vector<fw::status> results;  // for plugins A, B, C
    fw::code want_code;
    std::string want_plugin;
    std::string want_message;
    strings want_called;
  };
  const auto ok = fw::status::ok();
  const std::vector<row> rows = {
    {"all pass", {ok, ok, ok}, fw::code::success, "", "", {"A", "B", "C"}},
    {"first failure wins",
     {ok, fw::status::unschedulable("b says no"), fw::status::unresolvable("c says no")},
     fw::code::unschedulable, "B", "b says no", {"A", "B"}},
    {"unresolvable", {fw::status::unresolvable("a says no"), ok, ok}, fw::code::unschedulable_and_unresolvable, "A",
     "a says no", {"A"}},
    {"error passes", {ok, ok, fw::status::error("broken")}, fw::code::error, "C", "broken", {"A", "B", "C"}},
    {"Wait becomes Error", {ok, fw::status(fw::code::wait), ok}, fw::code::error, "B",
     "filter plugin \"B\" returned Wait", {"A", "B"}},
    {"Skip becomes Error", {fw::status::skip(), ok, ok}, fw::code::error, "A", "filter plugin \"A\" returned Skip",
     {"A"}},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    harness h;
    const char* names[] = {"A", "B", "C"};
    for (size_t i = 0; i < 3; ++i) {
      auto s = spec(names[i]);
      s.filter = r.results[i];
      h.add(s);
      h.profile.filter.push_back(names[i]);
    }
    auto f = h.build();
    ASSERT_TRUE(f);
    fw::cycle_state st;
    auto s = f->run_filter(st, *test::test_pod(), test::named_node("n1"));
    EXPECT_EQ(s.get_code(), r.want_code);
    EXPECT_EQ(std::string(s.plugin()), r.want_plugin);
    EXPECT_EQ(s.message(), r.want_message);
    EXPECT_EQ(h.calls("filter"), r.want_called);
  }
}

TEST(PostFilter, FirstDecisiveStatusReturnsElseAllReasons) {
  struct row {
    const char* name;
    std::vector<fw::status> results;  // for plugins A, B, C
    fw::code want_code;
    std::string want_plugin;
    std::vector<std::string> want_reasons;
    strings want_called;
  };
  const auto un = [](const char* r) { return fw::status::unschedulable(r); };
  const std::vector<row> rows = {
    {"success ends", {un("a"), fw::status::ok(), un("c")}, fw::code::success, "B", {}, {"A", "B"}},
    {"error ends", {fw::status::error("e"), un("b"), un("c")}, fw::code::error, "A", {"e"}, {"A"}},
    {"unresolvable ends", {un("a"), fw::status::unresolvable("u"), un("c")}, fw::code::unschedulable_and_unresolvable,
     "B", {"u"}, {"A", "B"}},
    {"all unschedulable", {un("a"), un("b"), un("c")}, fw::code::unschedulable, "A", {"a", "b", "c"},
     {"A", "B", "C"}},
    // kube: any status other than Success / Unschedulable(AndUnresolvable) / Pending is an Error.
    {"Skip is an Error", {un("a"), fw::status::skip(), un("c")}, fw::code::error, "B", {}, {"A", "B"}},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    harness h;
    const char* names[] = {"A", "B", "C"};
    for (size_t i = 0; i < 3; ++i) {
      auto s = spec(names[i]);
      s.post_filter = r.results[i];
      h.add(s);
      h.profile.post_filter.push_back(names[i]);
    }
    auto f = h.build();
    ASSERT_TRUE(f);
    fw::cycle_state st;
    fw::post_filter_result out;
    auto s = f->run_post_filter(st, *test::test_pod(), snapshot{}, fw::node_to_status{}, out);
    EXPECT_EQ(s.get_code(), r.want_code);
    EXPECT_EQ(std::string(s.plugin()), r.want_plugin);
    if (r.want_code != fw::code::error) {
      EXPECT_EQ(strings(s.reasons().begin(), s.reasons().end()), r.want_reasons);
    }
    EXPECT_EQ(h.calls("postFilter"), r.want_called);
  }
}

// --- PreScore / Score ---------------------------------------------------------------------------

TEST(Score, SkipAtPreScoreSkipsThatPluginsScore) {
  harness h;
  auto a = spec("A");
  a.pre_score = fw::status::skip();
  a.scores = {{"n1", 40}, {"n2", 60}};
  a.normalize = true;
  h.add(a);
  auto b = spec("B");
  b.scores = {{"n1", 10}, {"n2", 20}};
  h.add(b);
  h.profile.pre_score = {"A", "B"};
  h.profile.score = {"B", "A"};  // index order differs from PreScore order
  h.profile.score_weights = {{"A", 5}, {"B", 2}};
  auto f = h.build();
  ASSERT_TRUE(f);
  auto pod = test::test_pod();
  auto n1 = test::named_node("n1"), n2 = test::named_node("n2");
  fw::cycle_state st;
  ASSERT_TRUE(f->run_pre_score(st, *pod, {&n1, &n2}).is_success());

  std::vector<std::vector<fw::node_score>> raw(2, std::vector<fw::node_score>(2));
  for (auto* n : {&n1, &n2}) {
    int64_t out[2] = {-1, -1};
    ASSERT_TRUE(f->score_node(st, *pod, *n, out).is_success());
    EXPECT_EQ(out[1], 0) << "a skipped plugin's raw score is 0";
    size_t k = n == &n1 ? 0 : 1;
    raw[0][k] = {n->name, out[0]};
    raw[1][k] = {n->name, out[1]};
  }
  EXPECT_EQ(h.calls("score"), (strings{"B", "B"}));
  // Even an out-of-range leftover in the skipped row is neither normalized, checked nor weighted.
  raw[1][0].score = 500;
  std::vector<int64_t> totals;
  ASSERT_TRUE(f->normalize_and_weigh(st, *pod, raw, totals).is_success());
  EXPECT_TRUE(h.calls("normalize").empty());
  EXPECT_EQ(totals, (std::vector<int64_t>{20, 40}));
}

TEST(Score, NormalizeOnlyWhereDeclaredWeightsMultiplyRangeIsChecked) {
  struct row {
    const char* name;
    std::vector<int64_t> a_raw, b_raw;  // per node n1, n2
    bool a_normalizes;
    fw::code want_code;
    std::vector<int64_t> want_totals;
    std::string want_plugin;
    std::string want_message;
    strings want_normalized;
  };
  const std::vector<row> rows = {
    // A normalizes x -> 100 - x, weight 3; B weight 1 (default).
    {"normalize and weigh", {10, 30}, {5, 7}, true, fw::code::success, {3 * 90 + 5, 3 * 70 + 7}, "", "", {"A"}},
    {"no normalize", {10, 30}, {5, 7}, false, fw::code::success, {3 * 10 + 5, 3 * 30 + 7}, "", "", {}},
    {"normalized above 100", {-1, 0}, {5, 7}, true, fw::code::error, {}, "A",
     "plugin \"A\" returns an invalid score 101, it should in the range of [0, 100] after normalizing", {"A"}},
    {"raw above 100 without normalize", {10, 10}, {5, 101}, false, fw::code::error, {}, "B",
     "plugin \"B\" returns an invalid score 101, it should in the range of [0, 100] after normalizing", {}},
    {"negative", {10, 10}, {-3, 0}, false, fw::code::error, {}, "B",
     "plugin \"B\" returns an invalid score -3, it should in the range of [0, 100] after normalizing", {}},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    harness h;
    auto a = spec("A");
    a.normalize = r.a_normalizes;
    a.normalize_fn = [](std::vector<fw::node_score>& v) {
      for (auto& s : v) s.score = 100 - s.score;
    };
    a.scores = {{"n1", r.a_raw[0]}, {"n2", r.a_raw[1]}};
    h.add(a);
    auto b = spec("B");
    b.scores = {{"n1", r.b_raw[0]}, {"n2", r.b_raw[1]}};
    h.add(b);
    h.profile.score = {"A", "B"};
    h.profile.score_weights = {{"A", 3}};
    auto f = h.build();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->score_weight(0), 3);
    EXPECT_EQ(f->score_weight(1), 1);
    std::vector<std::vector<fw::node_score>> raw = {
      {{"n1", r.a_raw[0]}, {"n2", r.a_raw[1]}},
      {{"n1", r.b_raw[0]}, {"n2", r.b_raw[1]}},
    };
    std::vector<int64_t> totals;
    fw::cycle_state st;
    auto s = f->normalize_and_weigh(st, *test::test_pod(), raw, totals);
    EXPECT_EQ(s.get_code(), r.want_code);
    EXPECT_EQ(std::string(s.plugin()), r.want_plugin);
    EXPECT_EQ(s.message(), r.want_message);
    if (r.want_code == fw::code::success) {
      EXPECT_EQ(totals, r.want_totals);
    }
    EXPECT_EQ(h.calls("normalize"), r.want_normalized);

    // schedule_one's fused path over plain rows: the same totals, the same first failure.
    auto n1 = test::named_node("n1"), n2 = test::named_node("n2");
    std::vector<int64_t> fused;
    auto fs = f->score_and_weigh(st, *test::test_pod(), {&n1, &n2}, nullptr, fused);
    EXPECT_EQ(fs.get_code(), r.want_code);
    EXPECT_EQ(std::string(fs.plugin()), r.want_plugin);
    EXPECT_EQ(fs.message(), r.want_message);
    if (r.want_code == fw::code::success) {
      EXPECT_EQ(fused, r.want_totals);
    }
  }
}

// --- selectHost ---------------------------------------------------------------------------------

// kube's selectHost (reservoir sampling over the nodes tied at the maximum), the reference for
// fw::select_host's one-draw version: the two must pick the maximum, and among ties each node
// with the same probability.
size_t reservoir_select(const std::vector<int64_t>& totals, std::mt19937_64& rng) {
  size_t best = 0, ties = 1;
  for (size_t i = 1; i < totals.size(); ++i) {
    if (totals[i] > totals[best]) {
      best = i;
      ties = 1;
    } else if (totals[i] == totals[best] && std::uniform_int_distribution<size_t>(0, ties++)(rng) == 0) {
      best = i;
    }
  }
  return best;
}

TEST(SelectHost, AUniqueMaximumIsAlwaysSelected) {
  std::mt19937_64 rng(7);
  EXPECT_EQ(fw::select_host({42}, rng), 0u);
  EXPECT_EQ(fw::select_host({1, 5, 3}, rng), 1u);
  EXPECT_EQ(fw::select_host({9, 5, 3}, rng), 0u);
  EXPECT_EQ(fw::select_host({1, 5, 300}, rng), 2u);
  EXPECT_EQ(fw::select_host({0, 0, -1, 1}, rng), 3u);
}

TEST(SelectHost, TiesAreBrokenUniformlyLikeKubesReservoir) {
  // Four nodes tie at 9, at the start, the middle and the end, around lower totals.
  const std::vector<int64_t> totals = {9, 5, 3, 9, 9, 1, 8, 9};
  const std::vector<size_t> tied = {0, 3, 4, 7};
  constexpr int draws = 40000;
  std::map<size_t, int> ours, kube;
  std::mt19937_64 a(2026), b(2026);
  for (int i = 0; i < draws; ++i) {
    ours[fw::select_host(totals, a)]++;
    kube[reservoir_select(totals, b)]++;
  }
  ASSERT_EQ(ours.size(), tied.size()) << "only nodes at the maximum are selected";
  ASSERT_EQ(kube.size(), tied.size());
  // Fixed seeds, so this is deterministic; the bound is ~6 standard deviations of a binomial
  // count (n = 40000, p = 1/4: sd ~ 87) and would fail on any skew towards an end of the list.
  for (size_t idx : tied) {
    EXPECT_NEAR(ours[idx], draws / 4, 520) << "node " << idx;
    EXPECT_NEAR(kube[idx], draws / 4, 520) << "node " << idx;
  }
  // With every node tied the choice is still uniform over all of them.
  std::vector<int64_t> flat(10, 100);
  std::map<size_t, int> flat_counts;
  for (int i = 0; i < draws; ++i) flat_counts[fw::select_host(flat, a)]++;
  ASSERT_EQ(flat_counts.size(), flat.size());
  for (auto& [idx, n] : flat_counts) EXPECT_NEAR(n, draws / 10, 380) << "node " << idx;
}

// --- Reserve / Permit ---------------------------------------------------------------------------

TEST(Unreserve, RunsEveryReservePluginInReverseOrderAndRepeatsHarmlessly) {
  harness h;
  h.add(spec("A"));
  auto b = spec("B");
  b.reserve = fw::status::unschedulable("no room");
  h.add(b);
  h.add(spec("C"));
  h.profile.reserve = {"A", "B", "C"};
  auto f = h.build();
  ASSERT_TRUE(f);
  auto pod = test::test_pod();
  fw::cycle_state st;
  auto s = f->run_reserve(st, *pod, "n1");
  EXPECT_EQ(s.get_code(), fw::code::unschedulable);
  EXPECT_EQ(s.plugin(), "B");
  EXPECT_EQ(h.calls("reserve"), (strings{"A", "B"}));
  f->run_unreserve(st, *pod, "n1");
  // C's Reserve never ran, yet it is unreserved: Unreserve must be idempotent.
  EXPECT_EQ(h.calls("unreserve"), (strings{"C", "B", "A"}));
  f->run_unreserve(st, *pod, "n1");
  EXPECT_EQ(h.calls("unreserve"), (strings{"C", "B", "A", "C", "B", "A"}));
}

TEST(Permit, CollectsWaitsCapsThemAndLetsARejectionWin) {
  using waits_t = std::vector<std::pair<std::string, std::chrono::milliseconds>>;
  struct row {
    const char* name;
    std::vector<std::pair<fw::status, std::chrono::milliseconds>> results;  // A, B, C
    fw::code want_code;
    std::string want_plugin;
    waits_t want_waits;
  };
  const auto ok = fw::status::ok();
  const auto wait = fw::status(fw::code::wait);
  const std::vector<row> rows = {
    {"all allow", {{ok, 0ms}, {ok, 0ms}, {ok, 0ms}}, fw::code::success, "", {}},
    {"waits collected and capped",
     {{wait, 10s}, {ok, 0ms}, {wait, std::chrono::minutes(20)}},
     fw::code::wait, "", {{"A", 10s}, {"C", std::chrono::minutes(15)}}},
    {"rejection wins over a wait", {{wait, 10s}, {fw::status::unschedulable("denied"), 0ms}, {wait, 5s}},
     fw::code::unschedulable, "B", {{"A", 10s}}},
    {"error", {{fw::status::error("bad"), 0ms}, {ok, 0ms}, {ok, 0ms}}, fw::code::error, "A", {}},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    harness h;
    const char* names[] = {"A", "B", "C"};
    for (size_t i = 0; i < 3; ++i) {
      auto s = spec(names[i]);
      s.permit = r.results[i].first;
      s.permit_timeout = r.results[i].second;
      h.add(s);
      h.profile.permit.push_back(names[i]);
    }
    auto f = h.build();
    ASSERT_TRUE(f);
    fw::cycle_state st;
    std::vector<std::pair<std::string_view, std::chrono::milliseconds>> waits;
    auto s = f->run_permit(st, *test::test_pod(), "n1", waits);
    EXPECT_EQ(s.get_code(), r.want_code);
    EXPECT_EQ(std::string(s.plugin()), r.want_plugin);
    waits_t got;
    for (auto& [p, t] : waits) got.emplace_back(std::string(p), t);
    EXPECT_EQ(got, r.want_waits);
  }
}

// --- Bind / PostBind ----------------------------------------------------------------------------

TEST(Bind, FirstNonSkipPluginWins) {
  struct row {
    const char* name;
    std::vector<fw::status> results;  // for plugins A, B, C
    fw::code want_code;
    std::string want_plugin;
    strings want_called;
    bool want_callback;
  };
  const auto skip = fw::status::skip();
  const auto ok = fw::status::ok();
  const std::vector<row> rows = {
    {"first binds", {ok, ok, ok}, fw::code::success, "A", {"A"}, false},
    {"skip then bind", {skip, ok, ok}, fw::code::success, "B", {"A", "B"}, false},
    {"all skip", {skip, skip, skip}, fw::code::skip, "", {"A", "B", "C"}, false},
    {"pending passes through", {skip, fw::status(fw::code::pending), ok}, fw::code::pending, "B", {"A", "B"}, true},
    {"error stops", {fw::status::error("api down"), ok, ok}, fw::code::error, "A", {"A"}, false},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    harness h;
    const char* names[] = {"A", "B", "C"};
    h.profile.bind.clear();
    for (size_t i = 0; i < 3; ++i) {
      auto s = spec(names[i]);
      s.bind = r.results[i];
      h.add(s);
      h.profile.bind.push_back(names[i]);
    }
    auto f = h.build();
    ASSERT_TRUE(f);
    fw::cycle_state st;
    bool called = false;
    auto s = f->run_bind(st, *test::test_pod(), "n1", [&](fw::status) { called = true; });
    EXPECT_EQ(s.get_code(), r.want_code);
    EXPECT_EQ(std::string(s.plugin()), r.want_plugin);
    EXPECT_EQ(h.calls("bind"), r.want_called);
    EXPECT_EQ(called, r.want_callback);
  }
}

TEST(PostBind, EveryPluginRunsInOrderAndNothingChanges) {
  harness h;
  for (auto n : {"A", "B", "C"}) {
    auto s = spec(n);
    s.pre_bind = fw::status::error("irrelevant to PostBind");
    h.add(s);
  }
  h.profile.post_bind = {"A", "B", "C"};
  auto f = h.build();
  ASSERT_TRUE(f);
  fw::cycle_state st;
  st.skip_filter_mask = 5;
  f->run_post_bind(st, *test::test_pod(), "n1");
  EXPECT_EQ(h.calls("postBind"), (strings{"A", "B", "C"}));
  EXPECT_EQ(st.skip_filter_mask, 5u);
  EXPECT_EQ(h.log->size(), 3u) << "PostBind calls no other point";
}

// --- build --------------------------------------------------------------------------------------

TEST(FrameworkBuild, RejectsBadProfiles) {
  struct row {
    const char* name;
    std::function<void(profile_config&)> edit;
    std::string want_error;  // empty = builds
  };
  const std::vector<row> rows = {
    {"minimal", [](profile_config&) {}, ""},
    {"unknown plugin", [](profile_config& p) { p.filter = {"Nope"}; },
     "profiles[0]: unknown plugin \"Nope\""},
    {"plugin without the point", [](profile_config& p) { p.filter = {"Bare"}; },
     "profiles[0].plugins.filter: plugin \"Bare\" does not extend filter"},
    {"queue sort missing point", [](profile_config& p) { p.queue_sort = {"Bare"}; },
     "profiles[0].plugins.queueSort: plugin \"Bare\" does not extend queueSort"},
    {"no queue sort", [](profile_config& p) { p.queue_sort.clear(); },
     "profiles[0].plugins.queueSort: exactly one queue sort plugin must be enabled, got 0"},
    {"two queue sorts", [](profile_config& p) { p.queue_sort = {"Sort", "A"}; },
     "profiles[0].plugins.queueSort: exactly one queue sort plugin must be enabled, got 2"},
    {"no bind", [](profile_config& p) { p.bind.clear(); },
     "profiles[0].plugins.bind: at least one bind plugin is required"},
    {"factory error carries the args path",
     [](profile_config& p) {
       p.filter = {"Picky"};
       p.plugin_args_path["Picky"] = "profiles[0].pluginConfig[2].args";
     },
     "profiles[0].pluginConfig[2].args.level: must be positive"},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    harness h;
    h.add(spec("A"));
    ASSERT_TRUE(h.reg.add("Picky", [](const YAML::Node&, const std::string& path, const fw::handle&) {
                       return result<std::shared_ptr<fw::plugin>>(error{path + ".level: must be positive"});
                     }).ok());
    r.edit(h.profile);
    auto b = fw::framework::build(h.profile, h.reg, fw::handle{}, "profiles[0]");
    if (r.want_error.empty()) {
      EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.err().message);
    } else {
      ASSERT_FALSE(b.ok());
      EXPECT_EQ(b.err().message, r.want_error);
    }
  }
}

TEST(FrameworkBuild, OnePluginInstanceServesAllItsPoints) {
  harness h;
  int built = 0;
  ASSERT_TRUE(h.reg.add("Counted", [&built, log = h.log](const YAML::Node&, const std::string&, const fw::handle&) {
                     ++built;
                     return result<std::shared_ptr<fw::plugin>>(
                       std::make_shared<test::fake_plugin>(spec("Counted"), log));
                   }).ok());
  h.profile.pre_filter = h.profile.filter = h.profile.score = h.profile.reserve = {"Counted"};
  auto f = h.build();
  ASSERT_TRUE(f);
  EXPECT_EQ(built, 1);
  EXPECT_EQ(f->filter_plugin_count(), 1u);
  EXPECT_EQ(f->score_plugin_name(0), "Counted");
}

// --- plugin_execution_duration_seconds sampling ---------------------------------------------------

// Records what the framework reports, as "Point/Plugin/Code".
class recording_sink final : public fw::plugin_metrics_sink {
public:
  void observe(fw::metric_point point, std::string_view plugin, fw::code result,
               std::chrono::steady_clock::duration took, uint32_t weight) const override {
    std::lock_guard<std::mutex> lock(mu_);
    bool per_node = point == fw::metric_point::filter || point == fw::metric_point::score;
    // Filter: 1 call in per_node_timing_every, with that weight; Score: that too from score_node, or a
    // whole score_nodes pass as one observation weighing its node count.
    if (point == fw::metric_point::filter) {
      EXPECT_EQ(weight, fw::per_node_timing_every);
    }
    if (!per_node) {
      EXPECT_EQ(weight, 1u);
    }
    EXPECT_GE(took.count(), 0);
    if (per_node) {
      per_node_weight[std::string(fw::to_string(point)) + "/" + std::string(plugin)] += weight;
      return;
    }
    seen.push_back(std::string(fw::to_string(point)) + "/" + std::string(plugin) + "/" +
                   std::string(fw::to_string(result)));
  }
  mutable std::map<std::string, uint64_t> per_node_weight;
  mutable std::mutex mu_;
  mutable strings seen;
};

TEST(PluginMetrics, SampledCycleTimesEveryPluginCallAtEveryPoint) {
  harness h;
  auto a = spec("A");
  a.filter = fw::status::unschedulable("A rejects");
  h.add(a);
  h.add(spec("B"));
  h.profile.pre_filter = {"A", "B"};
  h.profile.filter = {"B", "A"};
  h.profile.pre_score = {"B"};
  h.profile.score = {"B"};
  h.profile.reserve = {"B"};
  h.profile.permit = {"B"};
  h.profile.pre_bind = {"B"};
  h.profile.post_bind = {"B"};
  recording_sink sink;
  fw::handle hd;
  hd.plugin_metrics = &sink;
  auto f = h.build(hd);
  ASSERT_TRUE(f);
  auto pod = test::test_pod();
  auto n1 = test::named_node("n1");

  for (bool sampled : {false, true}) {
    SCOPED_TRACE(sampled ? "sampled" : "not sampled");
    sink.seen.clear();
    fw::cycle_state st;
    st.record_plugin_metrics = sampled;
    fw::pre_filter_result pr;
    ASSERT_TRUE(f->run_pre_filter(st, *pod, snapshot{}, pr).is_success());
    EXPECT_FALSE(f->run_filter(st, *pod, n1).is_success());
    ASSERT_TRUE(f->run_pre_score(st, *pod, {&n1}).is_success());
    int64_t score[1];
    ASSERT_TRUE(f->score_node(st, *pod, n1, score).is_success());
    ASSERT_TRUE(f->run_reserve(st, *pod, "n1").is_success());
    f->run_unreserve(st, *pod, "n1");
    std::vector<std::pair<std::string_view, std::chrono::milliseconds>> waits;
    ASSERT_TRUE(f->run_permit(st, *pod, "n1", waits).is_success());
    ASSERT_TRUE(f->run_pre_bind(st, *pod, "n1").is_success());
    f->run_post_bind(st, *pod, "n1");
    if (!sampled) {
      EXPECT_TRUE(sink.seen.empty());
      continue;
    }
    // kube's label values, one observation per call.
    const strings want = {"PreFilter/A/Success", "PreFilter/B/Success", "PreScore/B/Success",
                          "Reserve/B/Success",   "Unreserve/B/Success", "Permit/B/Success",
                          "PreBind/B/Success",   "PostBind/B/Success"};
    EXPECT_EQ(sink.seen, want);
    // Per-node points are timed 1 call in per_node_timing_every, with that weight: over many nodes the
    // weighted count estimates the calls made.
    constexpr int nodes = 16000;
    for (int i = 0; i < nodes; ++i) {
      (void)f->run_filter(st, *pod, n1);
      (void)f->score_node(st, *pod, n1, score);
    }
    for (const char* key : {"Filter/A", "Filter/B", "Score/B"}) {
      double est = static_cast<double>(sink.per_node_weight[key]);
      EXPECT_NEAR(est, nodes, nodes * 0.15) << key;
    }
    // A score_nodes pass over three nodes is one observation of weight 3.
    uint64_t before = sink.per_node_weight["Score/B"];
    std::vector<std::vector<fw::node_score>> raw;
    ASSERT_TRUE(f->score_nodes(st, *pod, {&n1, &n1, &n1}, raw).is_success());
    EXPECT_EQ(sink.per_node_weight["Score/B"], before + 3);
  }
}

}  // namespace
}  // namespace kas

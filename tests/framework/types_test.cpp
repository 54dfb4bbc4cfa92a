// The framework's value types and pure functions: status, cycle_state, registry, PreFilterResult,
// node_to_status, cluster events, numFeasibleNodesToFind and the FitError message.
#include <gtest/gtest.h>

#include "fakes.hpp"

namespace kas {
namespace {

using strings = std::vector<std::string>;

// --- status -------------------------------------------------------------------------------------

TEST(Status, MessageJoinsReasonsWithCommaSpace) {
  struct row {
    const char* name;
    fw::status s;
    std::string want;
  };
  const std::vector<row> rows = {
    {"none", fw::status::ok(), ""},
    {"one", fw::status::unschedulable("Insufficient cpu"), "Insufficient cpu"},
    {"several", fw::status(fw::code::unschedulable, {"a", "b", "c"}), "a, b, c"},
  };
  for (auto& r : rows) EXPECT_EQ(r.s.message(), r.want) << r.name;
}

TEST(Status, CodesAndPredicates) {
  struct row {
    fw::code c;
    const char* text;
    bool rejected;
  };
  const std::vector<row> rows = {
    {fw::code::success, "Success", false},
    {fw::code::error, "Error", false},
    {fw::code::unschedulable, "Unschedulable", true},
    {fw::code::unschedulable_and_unresolvable, "UnschedulableAndUnresolvable", true},
    {fw::code::wait, "Wait", false},
    {fw::code::skip, "Skip", false},
    {fw::code::pending, "Pending", true},
  };
  for (auto& r : rows) {
    EXPECT_EQ(fw::to_string(r.c), r.text);
    EXPECT_EQ(fw::status(r.c).is_rejected(), r.rejected) << r.text;
  }
}

TEST(Status, InternReturnsStableSharedStorage) {
  std::string_view first;
  {
    std::string temp = "node(s) didn't match Pod's node affinity/selector";
    first = fw::intern(temp);
    temp.assign(temp.size(), 'x');  // the source may change or die: the view must not
  }
  auto second = fw::intern(std::string("node(s) didn't match Pod's node affinity/selector"));
  EXPECT_EQ(first, "node(s) didn't match Pod's node affinity/selector");
  EXPECT_EQ(first.data(), second.data()) << "equal text -> identical storage";
  EXPECT_NE(fw::intern("other").data(), first.data());
  // status::error interns its text, so a temporary message survives.
  auto s = fw::status::error(std::string("temporary ") + "message");
  EXPECT_EQ(s.message(), "temporary message");
}

// --- cycle_state --------------------------------------------------------------------------------

struct counter : fw::state_data {
  std::vector<int> values;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<counter>(*this); }
};

TEST(CycleState, WriteReadEraseOverwrite) {
  fw::cycle_state st;
  EXPECT_EQ(st.read("k"), nullptr);
  auto c = std::make_shared<counter>();
  c->values = {1};
  st.write("k", c);
  ASSERT_NE(st.read_as<counter>("k"), nullptr);
  EXPECT_EQ(st.read_as<counter>("k")->values, std::vector<int>{1});
  auto d = std::make_shared<counter>();
  d->values = {2};
  st.write("k", d);
  EXPECT_EQ(st.read_as<counter>("k")->values, std::vector<int>{2}) << "write replaces";
  st.write("other", std::make_shared<counter>());
  st.erase("k");
  EXPECT_EQ(st.read("k"), nullptr);
  EXPECT_NE(st.read("other"), nullptr) << "erase removes only its key";
  st.erase("missing");
}

TEST(CycleState, CloneDeepCopiesDataAndCopiesSkipMasks) {
  fw::cycle_state st;
  auto c = std::make_shared<counter>();
  c->values = {1, 2};
  st.write("k", c);
  st.skip_filter_mask = 0b101;
  st.skip_score_mask = 0b10;
  st.record_plugin_metrics = true;

  auto copy = st.clone();
  auto* cc = copy.read_as<counter>("k");
  ASSERT_NE(cc, nullptr);
  EXPECT_NE(cc, c.get()) << "the clone owns its own data";
  cc->values.push_back(3);  // what AddPod/RemovePod do during preemption
  EXPECT_EQ(c->values, (std::vector<int>{1, 2}));
  EXPECT_EQ(cc->values, (std::vector<int>{1, 2, 3}));
  copy.write("new", std::make_shared<counter>());
  EXPECT_EQ(st.read("new"), nullptr);

  EXPECT_TRUE(copy.skip_filter(0));
  EXPECT_FALSE(copy.skip_filter(1));
  EXPECT_TRUE(copy.skip_filter(2));
  EXPECT_TRUE(copy.skip_score(1));
  EXPECT_TRUE(copy.record_plugin_metrics);
}

// --- registry -----------------------------------------------------------------------------------

TEST(Registry, DuplicateNameIsAnError) {
  fw::registry reg;
  fw::factory f = [](const YAML::Node&, const std::string&, const fw::handle&) {
    return result<std::shared_ptr<fw::plugin>>(std::make_shared<test::bare_plugin>());
  };
  EXPECT_TRUE(reg.add("Bare", f).ok());
  auto again = reg.add("Bare", f);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.err().message, "plugin \"Bare\" is registered twice");
  EXPECT_NE(reg.find("Bare"), nullptr);
  EXPECT_EQ(reg.find("Other"), nullptr);
  EXPECT_EQ(reg.all().size(), 1u);
}

// --- PreFilterResult / node_to_status / events --------------------------------------------------

TEST(PreFilterResultMerge, IntersectsAndConcatenatesPlugins) {
  using names = std::optional<std::set<std::string>>;
  auto res = [](names n, std::vector<std::string_view> from) {
    fw::pre_filter_result r;
    r.node_names = std::move(n);
    r.from_plugins = std::move(from);
    return r;
  };
  struct row {
    const char* name;
    fw::pre_filter_result a, b;
    names want;
    std::vector<std::string_view> want_from;
  };
  const std::vector<row> rows = {
    {"all + all", res({}, {}), res({}, {}), {}, {}},
    {"all + some", res({}, {}), res(names{{"n1"}}, {"B"}), names{{"n1"}}, {"B"}},
    {"some + all", res(names{{"n1"}}, {"A"}), res({}, {}), names{{"n1"}}, {"A"}},
    {"overlap", res(names{{"n1", "n2"}}, {"A"}), res(names{{"n2", "n3"}}, {"B"}), names{{"n2"}}, {"A", "B"}},
    {"disjoint", res(names{{"n1"}}, {"A"}), res(names{{"n2"}}, {"B"}), names{std::set<std::string>{}},
     {"A", "B"}},
  };
  snapshot snap = test::named_nodes(3);
  for (auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto m = r.a.merge(r.b, snap);
    EXPECT_EQ(m.node_names, r.want);
    EXPECT_EQ(m.all_nodes(), !r.want.has_value());
    EXPECT_EQ(m.from_plugins, r.want_from);
  }
}

// A plugin may narrow by snapshot index instead of by name; merging intersects either form, and
// the result reads back as kube's set of names.
TEST(PreFilterResultMerge, IndexesIntersectWithIndexesAndNames) {
  snapshot snap = test::named_nodes(5);
  auto by_index = [](std::vector<uint32_t> idx, std::string_view from) {
    fw::pre_filter_result r;
    r.node_indexes = std::make_shared<const std::vector<uint32_t>>(std::move(idx));
    r.from_plugins = {from};
    return r;
  };
  fw::pre_filter_result by_name;
  by_name.node_names = std::set<std::string>{"n1", "n3", "n4", "gone"};
  by_name.from_plugins = {"Names"};
  auto a = by_index({0, 1, 3}, "A");
  auto b = by_index({1, 2, 3, 4}, "B");

  EXPECT_FALSE(a.all_nodes());
  EXPECT_EQ(*a.names(snap), (std::set<std::string>{"n0", "n1", "n3"}));
  EXPECT_TRUE(a.contains(snap, "n3"));
  EXPECT_FALSE(a.contains(snap, "n2"));
  EXPECT_FALSE(a.contains(snap, "nowhere"));
  EXPECT_TRUE(fw::pre_filter_result{}.contains(snap, "n2")) << "all nodes";

  auto ab = a.merge(b, snap);
  ASSERT_TRUE(ab.node_indexes);
  EXPECT_EQ(*ab.node_indexes, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(ab.from_plugins, (std::vector<std::string_view>{"A", "B"}));

  for (auto* m : {&a, &b}) {
    auto mixed = m->merge(by_name, snap);
    auto back = by_name.merge(*m, snap);
    EXPECT_EQ(mixed.names(snap), back.names(snap)) << "the intersection is symmetric";
  }
  EXPECT_EQ(*a.merge(by_name, snap).names(snap), (std::set<std::string>{"n1", "n3"}));
  EXPECT_EQ(*b.merge(by_name, snap).names(snap), (std::set<std::string>{"n1", "n3", "n4"}));

  auto none = a.merge(by_index({2, 4}, "C"), snap);
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.all_nodes());
  EXPECT_FALSE(a.empty());
  EXPECT_FALSE(fw::pre_filter_result{}.empty()) << "all nodes is not empty";
  EXPECT_EQ(a.merge(fw::pre_filter_result{}, snap).node_indexes, a.node_indexes) << "all nodes keeps the other side";
}

TEST(NodeToStatus, GetFallsBackToAbsent) {
  fw::node_to_status m;
  m.statuses.emplace("n1", fw::status::unschedulable("Insufficient cpu"));
  EXPECT_EQ(m.get("n1")->message(), "Insufficient cpu");
  EXPECT_EQ(m.get("n2"), nullptr) << "no absent status: unknown nodes have none";
  m.absent = fw::status::unresolvable("node(s) didn't satisfy plugin NodeAffinity");
  ASSERT_NE(m.get("n2"), nullptr);
  EXPECT_EQ(m.get("n2")->get_code(), fw::code::unschedulable_and_unresolvable);
  EXPECT_EQ(m.get("n1")->get_code(), fw::code::unschedulable) << "an explicit entry beats the absent status";
}

TEST(ClusterEvent, MatchesByResourceFamilyAndActionBits) {
  using fw::event_resource;
  auto ev = [](event_resource r, uint32_t actions) {
    fw::cluster_event e;
    e.resource = r;
    e.actions = actions;
    return e;
  };
  struct row {
    const char* name;
    fw::cluster_event registered, incoming;
    bool want;
  };
  const std::vector<row> rows = {
    {"exact", ev(event_resource::node, fw::act_add), ev(event_resource::node, fw::act_add), true},
    {"other action", ev(event_resource::node, fw::act_add), ev(event_resource::node, fw::act_delete), false},
    {"update family", ev(event_resource::node, fw::act_update), ev(event_resource::node, fw::act_update_node_taint),
     true},
    {"update is not add", ev(event_resource::node, fw::act_update), ev(event_resource::node, fw::act_add), false},
    {"one of several bits", ev(event_resource::node, fw::act_add | fw::act_update_node_label),
     ev(event_resource::node, fw::act_update_node_label), true},
    {"other resource", ev(event_resource::node, fw::act_all), ev(event_resource::pvc, fw::act_add), false},
    {"pod matches assigned pod", ev(event_resource::pod, fw::act_delete), ev(event_resource::assigned_pod, fw::act_delete),
     true},
    {"pod matches unscheduled pod", ev(event_resource::pod, fw::act_all),
     ev(event_resource::unscheduled_pod, fw::act_update_pod_label), true},
    {"pod family still needs the action", ev(event_resource::pod, fw::act_add),
     ev(event_resource::assigned_pod, fw::act_delete), false},
    {"assigned pod does not match pod", ev(event_resource::assigned_pod, fw::act_all),
     ev(event_resource::unscheduled_pod, fw::act_add), false},
    {"wildcard resource", ev(event_resource::wildcard, fw::act_add), ev(event_resource::pv, fw::act_add), true},
    {"wildcard resource, other action", ev(event_resource::wildcard, fw::act_add), ev(event_resource::pv, fw::act_delete),
     false},
  };
  for (auto& r : rows) EXPECT_EQ(r.registered.matches(r.incoming), r.want) << r.name;
}

// --- numFeasibleNodesToFind ---------------------------------------------------------------------

TEST(NumFeasibleNodesToFind, AdaptivePercentageWithFloorOf100) {
  struct row {
    const char* name;
    std::optional<int32_t> pct;
    int64_t nodes, want;
  };
  const std::vector<row> rows = {
    {"tiny cluster: all", {}, 0, 0},
    {"below 100: all", {}, 99, 99},
    {"below 100 even with a percentage", 10, 50, 50},
    {"150 nodes: 49% = 73 -> floor 100", {}, 150, 100},
    {"1000 nodes: 42%", {}, 1000, 420},
    {"5000 nodes: 10%", {}, 5000, 500},
    {"6000 nodes: 2% -> 5%", {}, 6000, 300},
    {"100000 nodes: 5%", {}, 100000, 5000},
    {"explicit 0 means adaptive", 0, 5000, 500},
    {"explicit 30%", 30, 1000, 300},
    {"explicit 5% of 1000 -> floor 100", 5, 1000, 100},
    {"100%", 100, 5000, 5000},
  };
  for (auto& r : rows) EXPECT_EQ(fw::num_feasible_nodes_to_find(r.pct, r.nodes), r.want) << r.name;
}

// --- FitError message ---------------------------------------------------------------------------

TEST(FitErrorMessage, KubeText) {
  auto un = [](std::vector<std::string_view> r) { return fw::status(fw::code::unschedulable, std::move(r)); };
  auto nodes = [&](int n, std::vector<std::string_view> r, const std::string& prefix) {
    std::unordered_map<std::string, fw::status> m;
    for (int i = 0; i < n; ++i) m.emplace(prefix + std::to_string(i), un(r));
    return m;
  };
  struct row {
    const char* name;
    size_t num_nodes;
    fw::node_to_status statuses;
    std::string pre_filter, post_filter, want;
  };
  std::vector<row> rows;
  {
    fw::node_to_status m;
    m.statuses.emplace("n1", un({"Insufficient cpu"}));
    m.statuses.emplace("n2", un({"node(s) had untolerated taint(s)"}));
    m.statuses.emplace("n3", un({"node(s) had untolerated taint(s)"}));
    rows.push_back({"histogram", 3, m, "", "",
                    "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."});
    rows.push_back({"PreFilter message replaces the histogram", 3, m, "node(s) didn't satisfy plugin NodeAffinity", "",
                    "0/3 nodes are available: node(s) didn't satisfy plugin NodeAffinity."});
    rows.push_back({"PostFilter message appended", 3, m, "",
                    "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
                    "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s). preemption: 0/3 "
                    "nodes are available: 3 No preemption victims found for incoming pod."});
  }
  {
    // "10 Y" sorts before "2 X": the strings are sorted, not the reasons or the counts.
    fw::node_to_status m;
    m.statuses = nodes(10, {"Y reason"}, "y");
    for (auto& [k, v] : nodes(2, {"X reason"}, "x")) m.statuses.emplace(k, v);
    rows.push_back({"sorted as strings", 12, m, "", "", "0/12 nodes are available: 10 Y reason, 2 X reason."});
  }
  {
    fw::node_to_status m;
    m.statuses.emplace("n1", un({"Insufficient cpu", "Insufficient memory"}));
    m.statuses.emplace("n2", un({"Insufficient memory"}));
    rows.push_back({"every reason of a node counts", 2, m, "", "",
                    "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."});
  }
  {
    fw::node_to_status m;
    m.statuses.emplace("n1", un({"Insufficient cpu"}));
    m.absent = fw::status::unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]");
    rows.push_back({"absent nodes counted", 5, m, "", "",
                    "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity]."});
    rows.push_back({"absent status unused when every node is listed", 1, m, "", "",
                    "0/1 nodes are available: 1 Insufficient cpu."});
  }
  rows.push_back({"no reasons at all", 0, fw::node_to_status{}, "", "", "0/0 nodes are available:"});
  for (auto& r : rows)
    EXPECT_EQ(fw::fit_error_message(r.num_nodes, r.statuses, r.pre_filter, r.post_filter), r.want) << r.name;
}

}  // namespace
}  // namespace kas

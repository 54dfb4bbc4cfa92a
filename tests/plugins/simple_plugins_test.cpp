// PrioritySort, SchedulingGates, NodeUnschedulable, NodeName, DefaultBinder.
#include <gtest/gtest.h>

#include "plugins/default_binder/default_binder.hpp"
#include "plugins/node_name/node_name.hpp"
#include "plugins/node_unschedulable/node_unschedulable.hpp"
#include "plugins/priority_sort/priority_sort.hpp"
#include "plugins/scheduling_gates/scheduling_gates.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_from_yaml;
using test::pod_from_yaml;

TEST(PrioritySort, Less) {
  struct tc {
    const char* name;
    int32_t p1, p2;
    int64_t t1, t2;
    bool want;
  };
  const tc cases[] = {
    {"p1.priority less than p2.priority", 100, 200, 0, 0, false},
    {"p1.priority greater than p2.priority", 200, 100, 0, 0, true},
    {"equal priority, p1 added earlier", 100, 100, 1, 2, true},
    {"equal priority, p2 added earlier", 100, 100, 2, 1, false},
    {"equal priority and time", 100, 100, 1, 1, false},
  };
  priority_sort pl;
  for (auto& c : cases) {
    auto p1 = pod_from_yaml("metadata: {name: p1}\nspec: {priority: " + std::to_string(c.p1) + "}");
    auto p2 = pod_from_yaml("metadata: {name: p2}\nspec: {priority: " + std::to_string(c.p2) + "}");
    fw::queued_pod_info a, b;
    a.pod = p1, a.timestamp_ns = c.t1;
    b.pod = p2, b.timestamp_ns = c.t2;
    EXPECT_EQ(pl.less(a, b), c.want) << c.name;
  }
}

TEST(SchedulingGates, PreEnqueue) {
  struct tc {
    const char* name;
    const char* spec;
    fw::code want_code;
    const char* want_reason;
  };
  const tc cases[] = {
    {"pod does not carry scheduling gates", "spec: {}", fw::code::success, ""},
    {"pod carries one scheduling gate", "spec: {schedulingGates: [{name: foo}]}",
     fw::code::unschedulable_and_unresolvable, "waiting for scheduling gates: [foo]"},
    {"pod carries two scheduling gates", "spec: {schedulingGates: [{name: foo}, {name: bar}]}",
     fw::code::unschedulable_and_unresolvable, "waiting for scheduling gates: [foo bar]"},
  };
  scheduling_gates pl;
  for (auto& c : cases) {
    auto pod = pod_from_yaml(std::string("metadata: {name: p}\n") + c.spec);
    auto s = pl.pre_enqueue(*pod, fw::no_groups());
    EXPECT_EQ(s.get_code(), c.want_code) << c.name;
    EXPECT_EQ(test::reasons(s), c.want_reason) << c.name;
  }
  ASSERT_EQ(pl.events_to_register().size(), 1u);
}

TEST(NodeUnschedulable, Filter) {
  struct tc {
    const char* name;
    const char* pod_spec;
    bool unschedulable;
    bool want_fit;
  };
  const tc cases[] = {
    {"does not schedule pod to unschedulable node", "spec: {}", true, false},
    {"schedules pod to schedulable node", "spec: {}", false, true},
    {"schedules pod that tolerates the unschedulable taint to an unschedulable node",
     "spec: {tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}]}", true, true},
    {"a NoExecute toleration does not tolerate the NoSchedule taint",
     "spec: {tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoExecute}]}", true, false},
    {"an operator Exists toleration with no key tolerates everything", "spec: {tolerations: [{operator: Exists}]}", true,
     true},
  };
  node_unschedulable pl;
  fw::cycle_state state;
  for (auto& c : cases) {
    auto pod = pod_from_yaml(std::string("metadata: {name: p}\n") + c.pod_spec);
    auto node = node_from_yaml(std::string("metadata: {name: n}\nspec: {unschedulable: ") +
                               (c.unschedulable ? "true" : "false") + "}");
    auto s = pl.filter(state, *pod, *node);
    if (c.want_fit) {
      EXPECT_TRUE(s.is_success()) << c.name;
    } else {
      EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable) << c.name;
      EXPECT_EQ(test::reasons(s), "node(s) were unschedulable") << c.name;
    }
  }
}

TEST(NodeName, Filter) {
  struct tc {
    const char* name;
    const char* pod_node;
    bool want_fit;
  };
  const tc cases[] = {
    {"no host specified", "", true},
    {"host matches", "foo", true},
    {"host doesn't match", "bar", false},
  };
  node_name pl;
  fw::cycle_state state;
  auto node = node_from_yaml("metadata: {name: foo}");
  for (auto& c : cases) {
    auto pod = pod_from_yaml(std::string("metadata: {name: p}\nspec: {nodeName: \"") + c.pod_node + "\"}");
    auto s = pl.filter(state, *pod, *node);
    if (c.want_fit) {
      EXPECT_TRUE(s.is_success()) << c.name;
    } else {
      EXPECT_EQ(s.get_code(), fw::code::unschedulable_and_unresolvable) << c.name;
      EXPECT_EQ(test::reasons(s), "node(s) didn't match the requested node name") << c.name;
    }
  }
}

struct fake_client : fw::cluster_client {
  std::vector<std::pair<std::string, std::string>> bound;
  void bind(const pod_info& pod, const std::string& node, std::function<void(fw::status)> done) override {
    bound.emplace_back(pod.key(), node);
    done(fw::status::ok());
  }
  void delete_pod(const pod_info&, const std::string&, std::function<void(fw::status)> done) override {
    done(fw::status::ok());
  }
  void set_nominated_node(const pod_info&, const std::string&, std::function<void(fw::status)> done) override {
    done(fw::status::ok());
  }
};

TEST(DefaultBinder, BindsThroughTheClient) {
  fake_client client;
  fw::handle h;
  h.client = fw::unowned_client(&client);
  auto pl = default_binder::make(YAML::Node(), "args", h);
  ASSERT_TRUE(pl.ok());
  auto* binder = dynamic_cast<fw::bind_plugin*>(pl->get());
  ASSERT_NE(binder, nullptr);
  auto pod = pod_from_yaml("metadata: {name: p, namespace: ns}");
  bool called = false;
  auto s = binder->bind(fw::cycle_state{}, *pod, "n1", [&](fw::status st) { called = st.is_success(); });
  EXPECT_EQ(s.get_code(), fw::code::pending);
  EXPECT_TRUE(called);
  ASSERT_EQ(client.bound.size(), 1u);
  EXPECT_EQ(client.bound[0].first, "ns/p");
  EXPECT_EQ(client.bound[0].second, "n1");
}

TEST(DefaultBinder, ErrorsWithoutClient) {
  auto pl = default_binder::make(YAML::Node(), "args", fw::handle{});
  ASSERT_TRUE(pl.ok());
  auto* binder = dynamic_cast<fw::bind_plugin*>(pl->get());
  auto pod = pod_from_yaml("metadata: {name: p}");
  bool called = false;
  auto s = binder->bind(fw::cycle_state{}, *pod, "n1", [&](fw::status) { called = true; });
  EXPECT_EQ(s.get_code(), fw::code::error);
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace kas::plugins

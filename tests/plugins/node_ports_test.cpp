// NodePorts: PreFilter Skip and Filter, cases from kube's node_ports_test.go.
#include <gtest/gtest.h>

#include "plugins/node_ports/node_ports.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_from_yaml;
using test::pod_from_yaml;

// ports: "PROTO/IP/PORT" entries, comma separated.
pod_info_ptr pod_with_ports(const std::string& name, const std::vector<std::string>& ports) {
  std::string y = "metadata: {name: " + name + ", uid: " + name + "}\nspec:\n  containers:\n  - name: c\n    ports:\n";
  if (ports.empty()) y = "metadata: {name: " + name + ", uid: " + name + "}\nspec: {containers: [{name: c}]}";
  for (auto& p : ports) {
    auto a = p.find('/'), b = p.rfind('/');
    y += "    - {protocol: " + p.substr(0, a) + ", hostIP: \"" + p.substr(a + 1, b - a - 1) +
         "\", hostPort: " + p.substr(b + 1) + ", containerPort: " + p.substr(b + 1) + "}\n";
  }
  return pod_from_yaml(y);
}

TEST(NodePorts, PreFilterSkipsPodsWithoutHostPorts) {
  node_ports pl;
  fw::cycle_state state;
  fw::pre_filter_result r;
  snapshot snap;
  EXPECT_TRUE(pl.pre_filter(state, *pod_with_ports("p", {}), snap, r).is_skip());
  EXPECT_EQ(state.read(node_ports::pre_filter_key), nullptr);
  EXPECT_TRUE(pl.pre_filter(state, *pod_with_ports("p", {"TCP/127.0.0.1/8080"}), snap, r).is_success());
  EXPECT_TRUE(r.all_nodes());
}

TEST(NodePorts, Filter) {
  struct tc {
    const char* name;
    std::vector<std::string> want, used;
    bool want_fit;
  };
  const tc cases[] = {
    {"nothing running", {"UDP/127.0.0.1/8080"}, {}, true},
    {"other port", {"UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/9090"}, true},
    {"same udp port", {"UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/8080"}, false},
    {"same tcp port", {"TCP/127.0.0.1/8080"}, {"TCP/127.0.0.1/8080"}, false},
    {"different host ip", {"TCP/127.0.0.1/8080"}, {"TCP/127.0.0.2/8080"}, true},
    {"different protocol", {"UDP/127.0.0.1/8080"}, {"TCP/127.0.0.1/8080"}, true},
    {"second udp port conflict", {"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/8080"}, false},
    {"first tcp port conflict", {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"},
     {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"}, false},
    {"first tcp port conflict due to 0.0.0.0 hostIP", {"TCP/0.0.0.0/8001"}, {"TCP/127.0.0.1/8001"}, false},
    {"TCP hostPort conflict due to 0.0.0.0 hostIP", {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"},
     {"TCP/127.0.0.1/8001"}, false},
    {"second tcp port conflict to 0.0.0.0 hostIP", {"TCP/127.0.0.1/8001"}, {"TCP/0.0.0.0/8001"}, false},
    {"second different protocol", {"UDP/0.0.0.0/8001"}, {"TCP/0.0.0.0/8001"}, true},
    {"UDP hostPort conflict due to 0.0.0.0 hostIP", {"UDP/0.0.0.0/8001"}, {"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"},
     false},
  };
  node_ports pl;
  for (auto& c : cases) {
    auto pod = pod_with_ports("p", c.want);
    std::vector<pod_info_ptr> existing;
    if (!c.used.empty()) existing.push_back(pod_with_ports("e", c.used));
    auto node = node_from_yaml("metadata: {name: n}", existing);
    fw::cycle_state state;
    fw::pre_filter_result r;
    snapshot snap;
    ASSERT_TRUE(pl.pre_filter(state, *pod, snap, r).is_success()) << c.name;
    auto s = pl.filter(state, *pod, *node);
    if (c.want_fit) {
      EXPECT_TRUE(s.is_success()) << c.name;
    } else {
      EXPECT_EQ(s.get_code(), fw::code::unschedulable) << c.name;
      EXPECT_EQ(test::reasons(s), "node(s) didn't have free ports for the requested pod ports") << c.name;
    }
  }
}

TEST(NodePorts, DeletedPodHint) {
  node_ports pl;
  auto hints = pl.events_to_register();
  ASSERT_EQ(hints.size(), 2u);
  auto pod = pod_with_ports("p", {"TCP/0.0.0.0/8080"});
  auto same = with_node_name(*pod_with_ports("d", {"TCP/127.0.0.1/8080"}), "n");
  auto other = with_node_name(*pod_with_ports("d", {"TCP/127.0.0.1/9090"}), "n");
  auto unscheduled = pod_with_ports("d", {"TCP/127.0.0.1/8080"});
  auto& hint = hints[0].hint;
  EXPECT_EQ(hint(*pod, {same.get(), nullptr, nullptr, nullptr}), fw::queueing_hint::queue);
  EXPECT_EQ(hint(*pod, {other.get(), nullptr, nullptr, nullptr}), fw::queueing_hint::skip);
  EXPECT_EQ(hint(*pod, {unscheduled.get(), nullptr, nullptr, nullptr}), fw::queueing_hint::skip);
}

}  // namespace
}  // namespace kas::plugins

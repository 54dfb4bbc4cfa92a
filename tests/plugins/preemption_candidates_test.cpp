// UnschedulableAndUnresolvable nodes are excluded from preemption.
#include <gtest/gtest.h>

#include "plugins/framework/preemption.hpp"

namespace kas::fw {
namespace {

snapshot three_nodes() {
  snapshot s;
  uint64_t gen = 0;
  for (auto name : {"n1", "n2", "n3"}) {
    auto n = std::make_shared<node_info>();
    n->name = name;
    s = s.with_added_node(n, ++gen);
  }
  return s;
}

std::vector<std::string> names(const std::vector<const node_info*>& v) {
  std::vector<std::string> out;
  for (auto* n : v) out.push_back(n->name);
  return out;
}

TEST(PreemptionCandidates, ExcludesUnresolvableAndUnexaminedNodes) {
  struct row {
    const char* name;
    node_to_status m;
    std::vector<std::string> want;
  };
  node_to_status mixed;
  mixed.statuses.emplace("n1", status::unschedulable("Insufficient cpu"));
  mixed.statuses.emplace("n2", status::unresolvable("node(s) had untolerated taint(s)"));
  node_to_status absent_unsched = mixed;
  absent_unsched.absent = status::unschedulable("Too many pods");
  node_to_status absent_unresolvable = mixed;
  absent_unresolvable.absent = status::unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]");
  node_to_status all_resolvable;
  for (auto n : {"n1", "n2", "n3"}) all_resolvable.statuses.emplace(n, status::unschedulable("Insufficient memory"));
  std::vector<row> rows = {
    {"unresolvable excluded, unexamined excluded", mixed, {"n1"}},
    {"absent unschedulable status applies to unexamined nodes", absent_unsched, {"n1", "n3"}},
    {"absent unresolvable status excludes unexamined nodes", absent_unresolvable, {"n1"}},
    {"every node resolvable", all_resolvable, {"n1", "n2", "n3"}},
    {"empty map", node_to_status{}, {}},
  };
  auto snap = three_nodes();
  for (auto& r : rows) EXPECT_EQ(names(nodes_where_preemption_might_help(snap, r.m)), r.want) << r.name;
}

}  // namespace
}  // namespace kas::fw

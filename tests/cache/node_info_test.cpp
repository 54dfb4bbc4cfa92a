#include <gtest/gtest.h>

#include <random>

#include <algorithm>
#include <functional>

#include "builders.hpp"

namespace kas {
namespace {

using test::Gi;
using test::Mi;

TEST(CompileNode, Fields) {
  auto n = std::make_shared<k8s::core::Node>();
  n->mutable_metadata()->set_name("n1");
  (*n->mutable_metadata()->mutable_labels())["zone"] = "a";
  n->mutable_spec()->set_unschedulable(true);
  auto* t = n->mutable_spec()->add_taints();
  t->set_key("dedicated");
  t->set_value("gpu");
  t->set_effect("NoExecute");
  test::set_list(n->mutable_status()->mutable_allocatable(),
                 {{"cpu", "3500m"}, {"memory", "7Gi"}, {"ephemeral-storage", "100Gi"}, {"pods", "110"},
                  {"example.com/gpu", "4"}, {"hugepages-1Gi", "2Gi"}});
  test::set_list(n->mutable_status()->mutable_capacity(), {{"cpu", "4"}});
  auto* img = n->mutable_status()->add_images();
  img->add_names("nginx:1.25");
  img->add_names("docker.io/library/nginx@sha256:abc");
  img->set_size_bytes(1000);

  auto r = compile_node(n);
  ASSERT_TRUE(r.ok()) << r.err().message;
  const node_info& ni = **r;
  EXPECT_EQ(ni.name, "n1");
  EXPECT_EQ(ni.node.get(), n.get());
  EXPECT_EQ(*ni.labels.get("zone"), "a");
  EXPECT_TRUE(ni.unschedulable);
  ASSERT_EQ(ni.taints.size(), 1u);
  EXPECT_EQ(ni.taints[0], (taint{"dedicated", "gpu", taint_effect::no_execute}));
  EXPECT_EQ(ni.allocatable.milli_cpu, 3500);
  EXPECT_EQ(ni.allocatable.memory, 7 * Gi);
  EXPECT_EQ(ni.allocatable.ephemeral_storage, 100 * Gi);
  EXPECT_EQ(ni.allocatable.allowed_pod_number, 110);
  EXPECT_EQ(ni.allocatable.get_scalar("example.com/gpu"), 4);
  EXPECT_EQ(ni.allocatable.get_scalar("hugepages-1Gi"), 2 * Gi);
  ASSERT_EQ(ni.images.size(), 2u);
  EXPECT_EQ(ni.images[1].name, "docker.io/library/nginx@sha256:abc");
  EXPECT_EQ(ni.images[1].size_bytes, 1000);
}

TEST(CompileNode, CapacityWhenNoAllocatable) {
  auto n = std::make_shared<k8s::core::Node>();
  n->mutable_metadata()->set_name("n1");
  test::set_list(n->mutable_status()->mutable_capacity(), {{"cpu", "2"}, {"memory", "1Gi"}});
  auto r = compile_node(n);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->allocatable.milli_cpu, 2000);
  EXPECT_EQ((*r)->allocatable.memory, Gi);
}

TEST(CompileNode, Errors) {
  struct row {
    const char* name;
    std::function<void(k8s::core::Node*)> build;
    std::string want_prefix;
  };
  const row rows[] = {
      {"bad allocatable", [](auto* n) { test::set_list(n->mutable_status()->mutable_allocatable(), {{"cpu", "x"}}); },
       "status.allocatable.cpu: "},
      {"negative capacity",
       [](auto* n) { test::set_list(n->mutable_status()->mutable_capacity(), {{"memory", "-1"}}); },
       "status.capacity.memory: must be greater than or equal to 0"},
      {"bad taint effect", [](auto* n) { n->mutable_spec()->add_taints()->set_effect("Sometimes"); },
       "spec.taints[0].effect: "},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto n = std::make_shared<k8s::core::Node>();
    r.build(n.get());
    auto res = compile_node(n);
    ASSERT_FALSE(res.ok());
    EXPECT_EQ(res.err().message.rfind(r.want_prefix, 0), 0u) << res.err().message;
  }
}

TEST(NodeInfo, AddRemovePodMaintainsAggregates) {
  auto n = test::simple_node("n1");
  const uint64_t g0 = n->generation;
  auto a = test::simple_pod("a", "n1", "500m", "1Gi", {80});
  auto b = test::simple_pod("b", "n1", "0", "0", {443});
  n->add_pod(a);
  EXPECT_GT(n->generation, g0);
  n->add_pod(b);
  EXPECT_EQ(n->pods.size(), 2u);
  EXPECT_EQ(n->requested.milli_cpu, 500);
  EXPECT_EQ(n->requested.memory, Gi);
  // b requests explicit zeros: non-zero keeps them (kube only defaults missing requests).
  EXPECT_EQ(n->non_zero_requested.milli_cpu, 500);
  EXPECT_EQ(n->used_ports.size(), 2u);
  EXPECT_NE(n->find_pod("uid-b"), nullptr);

  const uint64_t g1 = n->generation;
  EXPECT_TRUE(n->remove_pod("uid-a"));
  EXPECT_GT(n->generation, g1);
  EXPECT_FALSE(n->remove_pod("uid-a"));
  EXPECT_EQ(n->find_pod("uid-a"), nullptr);
  EXPECT_EQ(n->requested, resource_list{});
  ASSERT_EQ(n->used_ports.size(), 1u);
  EXPECT_EQ(n->used_ports[0].port, 443);
  EXPECT_TRUE(n->remove_pod("uid-b"));
  EXPECT_TRUE(n->used_ports.empty());
  EXPECT_EQ(n->non_zero_requested, resource_list{});
}

// kube's HostPortInfo.CheckConflict cases.
TEST(NodeInfo, PortConflicts) {
  struct row {
    const char* name;
    std::vector<host_port> used;
    host_port want;
    bool conflict;
  };
  const row rows[] = {
      {"no ports used", {}, {"TCP", "0.0.0.0", 80}, false},
      {"same ip, protocol and port", {{"TCP", "127.0.0.1", 80}}, {"TCP", "127.0.0.1", 80}, true},
      {"different protocol", {{"UDP", "127.0.0.1", 80}}, {"TCP", "127.0.0.1", 80}, false},
      {"different port", {{"TCP", "127.0.0.1", 81}}, {"TCP", "127.0.0.1", 80}, false},
      {"different specific ips", {{"TCP", "127.0.0.2", 80}}, {"TCP", "127.0.0.1", 80}, false},
      {"wanted 0.0.0.0 conflicts with any ip", {{"TCP", "127.0.0.2", 80}}, {"TCP", "0.0.0.0", 80}, true},
      {"used 0.0.0.0 conflicts with a specific ip", {{"TCP", "0.0.0.0", 80}}, {"TCP", "127.0.0.1", 80}, true},
      {"empty ip and protocol default to 0.0.0.0/TCP", {{"TCP", "10.0.0.1", 80}}, {"", "", 80}, true},
      {"port 0 never conflicts", {{"TCP", "0.0.0.0", 0}}, {"TCP", "0.0.0.0", 0}, false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    node_info n;
    n.used_ports = r.used;
    EXPECT_EQ(n.port_conflicts(r.want), r.conflict);
  }
}

// A pod with the given inter-pod terms (counts of required affinity / required anti-affinity /
// preferred affinity / preferred anti-affinity).
pod_info_ptr pod_with_terms(const std::string& name, int req_aff, int req_anti, int pref_aff, int pref_anti) {
  auto p = std::make_shared<pod_info>(*test::simple_pod(name, "n1", "100m", "1Mi"));
  p->required_affinity.resize(req_aff);
  p->required_anti_affinity.resize(req_anti);
  p->preferred_affinity.resize(pref_aff);
  p->preferred_anti_affinity.resize(pref_anti);
  return p;
}

std::vector<std::string> names(const std::vector<pod_info_ptr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->name);
  std::sort(out.begin(), out.end());
  return out;
}

using strings = std::vector<std::string>;

// kube's NodeInfo.PodsWithAffinity / PodsWithRequiredAntiAffinity follow AddPod / RemovePod.
TEST(NodeInfo, PodsWithAffinityLists) {
  struct step {
    const char* name;
    pod_info_ptr add;         // or
    const char* remove;       // uid to remove
    strings with_affinity;    // after the step
    strings with_required_anti;
  };
  const step steps[] = {
      {"plain pod: in neither list", pod_with_terms("plain", 0, 0, 0, 0), nullptr, {}, {}},
      {"required affinity", pod_with_terms("req-aff", 1, 0, 0, 0), nullptr, {"req-aff"}, {}},
      {"preferred anti-affinity only", pod_with_terms("pref-anti", 0, 0, 0, 1), nullptr, {"pref-anti", "req-aff"}, {}},
      {"preferred affinity only", pod_with_terms("pref-aff", 0, 0, 2, 0), nullptr, {"pref-aff", "pref-anti", "req-aff"},
       {}},
      {"required anti-affinity: both lists", pod_with_terms("req-anti", 0, 1, 0, 0), nullptr,
       {"pref-aff", "pref-anti", "req-aff", "req-anti"}, {"req-anti"}},
      {"remove from the middle", nullptr, "uid-req-aff", {"pref-aff", "pref-anti", "req-anti"}, {"req-anti"}},
      {"remove a plain pod leaves the lists", nullptr, "uid-plain", {"pref-aff", "pref-anti", "req-anti"},
       {"req-anti"}},
      {"remove the anti-affinity pod", nullptr, "uid-req-anti", {"pref-aff", "pref-anti"}, {}},
  };
  auto n = test::simple_node("n1");
  for (const auto& s : steps) {
    SCOPED_TRACE(s.name);
    const uint64_t gen = n->generation;
    if (s.add)
      n->add_pod(s.add);
    else
      EXPECT_TRUE(n->remove_pod(s.remove));
    EXPECT_GT(n->generation, gen);
    EXPECT_EQ(names(n->pods_with_affinity), s.with_affinity);
    EXPECT_EQ(names(n->pods_with_required_anti_affinity), s.with_required_anti);
  }
  EXPECT_FALSE(n->remove_pod("uid-req-anti"));
  EXPECT_EQ(names(n->pods_with_affinity), (strings{"pref-aff", "pref-anti"}));
  // A clone carries the lists; changing it leaves the original alone.
  auto c = n->clone();
  EXPECT_TRUE(c->remove_pod("uid-pref-aff"));
  EXPECT_EQ(names(c->pods_with_affinity), strings{"pref-anti"});
  EXPECT_EQ(names(n->pods_with_affinity), (strings{"pref-aff", "pref-anti"}));
}

}  // namespace
}  // namespace kas

namespace kas {
namespace {

pod_info_ptr uid_pod(const std::string& uid) {
  auto p = std::make_shared<pod_info>();
  p->uid = uid;
  return p;
}

std::vector<std::string> uids(const pod_list& l) {
  std::vector<std::string> out;
  for (const auto& p : l) out.push_back(p->uid);
  return out;
}

TEST(PodList, BehavesAsAVectorWithSwapRemoveAcrossChunks) {
  pod_list l;
  EXPECT_TRUE(l.empty());
  const size_t n = pod_list::chunk_size * 2 + 5;
  for (size_t i = 0; i < n; ++i) l.push_back(uid_pod("p" + std::to_string(i)));
  ASSERT_EQ(l.size(), n);
  EXPECT_EQ(l.front()->uid, "p0");
  EXPECT_EQ(l.back()->uid, "p" + std::to_string(n - 1));
  EXPECT_EQ(l[pod_list::chunk_size]->uid, "p" + std::to_string(pod_list::chunk_size));
  l.erase_at(1);  // the last moves into the hole, as kube's RemovePod does
  EXPECT_EQ(l[1]->uid, "p" + std::to_string(n - 1));
  EXPECT_EQ(l.size(), n - 1);
  l.erase_at(l.size() - 1);  // erasing the last just drops it
  EXPECT_EQ(l.size(), n - 2);
  while (l.size() > 3) l.erase_at(0);
  EXPECT_EQ(uids(l).size(), 3u);
  l.clear();
  EXPECT_TRUE(l.empty());
  EXPECT_EQ(l.begin(), l.end());
}

TEST(PodList, CopiesShareChunksAndNeverSeeEachOthersChanges) {
  pod_list a;
  for (int i = 0; i < 100; ++i) a.push_back(uid_pod("a" + std::to_string(i)));
  const auto before = uids(a);
  pod_list b = a;
  b.push_back(uid_pod("new"));
  b.erase_at(3);
  b.erase_at(70);
  EXPECT_EQ(uids(a), before) << "the original is untouched";
  EXPECT_EQ(b.size(), 99u);
  EXPECT_EQ(b[3]->uid, "new");
  pod_list c = b;
  c.clear();
  EXPECT_EQ(b.size(), 99u);
  pod_list d = std::move(b);
  EXPECT_EQ(d.size(), 99u);
  EXPECT_TRUE(b.empty()) << "a moved-from list is empty, not a size without chunks";  // NOLINT(bugprone-use-after-move)
  b.push_back(uid_pod("reused"));
  EXPECT_EQ(uids(b), std::vector<std::string>{"reused"});
  // node_info clones carry it: a pod added to a clone is not on the original.
  node_info n;
  n.name = "n";
  n.add_pod(uid_pod("x"));
  auto copy = n.clone();
  copy->add_pod(uid_pod("y"));
  EXPECT_TRUE(copy->remove_pod("x"));
  EXPECT_EQ(uids(n.pods), std::vector<std::string>{"x"});
  EXPECT_EQ(uids(copy->pods), std::vector<std::string>{"y"});
}

// Past the first block_size pods chunks sit in shared blocks: a random history of pushes and
// swap-removes, with copies taken along the way, matches a plain vector, and no copy sees a later
// change of another.
TEST(PodList, MatchesAVectorPastTheFirstBlockAndCopiesStayApart) {
  std::mt19937 rng(7);
  pod_list l;
  std::vector<std::string> ref;
  std::vector<std::pair<pod_list, std::vector<std::string>>> copies;
  const size_t target = pod_list::block_size * 2 + pod_list::chunk_size * 3 + 5;
  for (size_t step = 0; step < target * 2; ++step) {
    bool grow = ref.size() < target ? rng() % 4 != 0 : rng() % 4 == 0;
    if (grow || ref.empty()) {
      auto uid = "p" + std::to_string(step);
      l.push_back(uid_pod(uid));
      ref.push_back(uid);
    } else {
      size_t i = rng() % ref.size();
      l.erase_at(i);
      ref[i] = ref.back();
      ref.pop_back();
    }
    if (step % 997 == 0) copies.emplace_back(l, ref);
  }
  ASSERT_EQ(l.size(), ref.size());
  EXPECT_EQ(uids(l), ref);
  size_t visited = 0;
  l.for_each([&](size_t i, const pod_key& k, const pod_info_ptr& p) {
    EXPECT_EQ(i, visited++);
    EXPECT_EQ(p.get(), l[i].get());
    EXPECT_EQ(k.labels, l.key(i).labels);
  });
  EXPECT_EQ(visited, ref.size());
  for (auto& [copy, at] : copies) EXPECT_EQ(uids(copy), at);
  while (!l.empty()) l.erase_at(0);
  EXPECT_EQ(l.begin(), l.end());
}

TEST(NodeInfo, RemovesThePodObjectByAddressAndAnEqualOneByUid) {
  node_info n;
  auto a = uid_pod("a"), b = uid_pod("b"), c = uid_pod("c");
  for (auto& p : {a, b, c}) n.add_pod(p);
  EXPECT_TRUE(n.remove_pod(b));
  EXPECT_EQ(uids(n.pods), (std::vector<std::string>{"a", "c"}));
  EXPECT_FALSE(n.remove_pod(b)) << "gone";
  EXPECT_TRUE(n.remove_pod(uid_pod("a"))) << "another object with the same uid";
  EXPECT_EQ(uids(n.pods), std::vector<std::string>{"c"});
  EXPECT_EQ(n.generation, 5u);
}

}  // namespace
}  // namespace kas

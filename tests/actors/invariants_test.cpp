// The placement invariants that read the storage objects: a bound volume's node affinity and the
// CSI attach limits of the nodes' CSINodes, checked on hand-made final states.
#include "actors/invariants.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/scheduler_cache.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/k8s/storage.pb.h"
#include "tests/plugins/fixtures.hpp"

namespace kas::test {
namespace {

node_info_ptr node(const std::string& name, const std::string& zone) {
  auto n = compile_node(decode<k8s::core::Node>("metadata: {name: " + name + ", labels: {zone: " + zone +
                                                "}}\nstatus: {capacity: {cpu: '4', memory: 32Gi, pods: '110'}}\n"));
  if (!n) ADD_FAILURE() << n.err().message;
  return *n;
}

// Pod `name` in namespace ns on `node_name`, with `volumes` (a YAML list).
pod_info_ptr pod(const std::string& name, const std::string& node_name, const std::string& volumes) {
  auto p = compile_pod(decode<k8s::core::Pod>("metadata: {name: " + name + ", namespace: ns}\nspec:\n"
                                              "  containers: [{name: c, image: i}]\n  volumes: " + volumes + "\n"));
  if (!p) ADD_FAILURE() << p.err().message;
  return with_node_name(**p, node_name);
}

std::string claim_volume(const std::string& claim) {
  return "[{name: v, persistentVolumeClaim: {claimName: " + claim + "}}]";
}

class VolumeInvariants : public ::testing::Test {
protected:
  // Claim ns/<claim> bound to volume <pv>, whose spec (beyond capacity and claimRef) is `spec`.
  void bound_pair(const std::string& claim, const std::string& pv, const std::string& spec) {
    auto v = compile_pv(decode<k8s::core::PersistentVolume>(
      "metadata: {name: " + pv + "}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], claimRef: "
      "{namespace: ns, name: " + claim + "}, " + spec + "}\nstatus: {phase: Bound}\n"));
    ASSERT_TRUE(v) << v.err().message;
    objs_.volumes.pvs.put(pv, *v);
    auto c = compile_pvc(decode<k8s::core::PersistentVolumeClaim>(
      "metadata: {name: " + claim + ", namespace: ns, annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n"
      "spec: {accessModes: [ReadWriteOnce], volumeName: " + pv + ", resources: {requests: {storage: 1Gi}}}\n"
      "status: {phase: Bound}\n"));
    ASSERT_TRUE(c) << c.err().message;
    objs_.volumes.pvcs.put("ns/" + claim, *c);
  }
  void csi_node(const std::string& yaml) {
    auto c = compile_csi_node(decode<k8s::storage::CSINode>(yaml));
    ASSERT_TRUE(c) << c.err().message;
    objs_.volumes.csi_nodes.put((*c)->name, *c);
  }
  std::vector<std::string> violations(const std::vector<pod_info_ptr>& pods) {
    auto rep = check_placement(nodes_, pods, &objs_);
    EXPECT_GT(rep.checks, 0u);
    return rep.violations;
  }
  size_t checks(const std::vector<pod_info_ptr>& pods) { return check_placement(nodes_, pods, &objs_).checks; }

  std::vector<node_info_ptr> nodes_ = {node("node-a", "a"), node("node-b", "b")};
  cluster_objects objs_;
};

const std::string zone_a_affinity =
  "nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}, "
  "csi: {driver: d.csi.k8s.io, volumeHandle: h1}";

TEST_F(VolumeInvariants, PodOnANodeItsVolumesAffinityExcludes) {
  bound_pair("data", "pv-a", zone_a_affinity);
  auto v = violations({pod("p", "node-b", claim_volume("data"))});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "ns/p on node-b uses volume pv-a (claim data), whose node affinity excludes the node");
}

TEST_F(VolumeInvariants, PodOnANodeItsVolumesAffinityAllows) {
  bound_pair("data", "pv-a", zone_a_affinity);
  size_t without = check_placement(nodes_, {pod("p", "node-a", "[]")}, &objs_).checks;
  EXPECT_TRUE(violations({pod("p", "node-a", claim_volume("data"))}).empty());
  EXPECT_EQ(checks({pod("p", "node-a", claim_volume("data"))}), without + 1) << "one check for the volume";
}

TEST_F(VolumeInvariants, UnboundOrMissingClaimsAreNotChecked) {
  EXPECT_TRUE(violations({pod("p", "node-b", claim_volume("absent"))}).empty());
}

TEST_F(VolumeInvariants, CsiVolumesOverTheCsiNodeCount) {
  csi_node("metadata: {name: node-a}\nspec: {drivers: [{name: d.csi.k8s.io, nodeID: node-a, allocatable: {count: 1}}]}\n");
  bound_pair("one", "pv-1", "csi: {driver: d.csi.k8s.io, volumeHandle: h1}");
  bound_pair("two", "pv-2", "csi: {driver: d.csi.k8s.io, volumeHandle: h2}");
  auto v = violations({pod("p1", "node-a", claim_volume("one")), pod("p2", "node-a", claim_volume("two"))});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "node-a has 2 unique d.csi.k8s.io volumes attached, over its CSINode's allocatable count 1");
}

TEST_F(VolumeInvariants, ASharedVolumeCountsOnce) {
  csi_node("metadata: {name: node-a}\nspec: {drivers: [{name: d.csi.k8s.io, nodeID: node-a, allocatable: {count: 1}}]}\n");
  bound_pair("one", "pv-1", "csi: {driver: d.csi.k8s.io, volumeHandle: h1}");
  EXPECT_TRUE(violations({pod("p1", "node-a", claim_volume("one")), pod("p2", "node-a", claim_volume("one"))}).empty());
}

TEST_F(VolumeInvariants, LimitsArePerNodeAndDriver) {
  csi_node("metadata: {name: node-a}\nspec: {drivers: [{name: d.csi.k8s.io, nodeID: node-a, allocatable: {count: 1}}, "
           "{name: e.csi.k8s.io, nodeID: node-a}]}\n");
  bound_pair("one", "pv-1", "csi: {driver: d.csi.k8s.io, volumeHandle: h1}");
  bound_pair("two", "pv-2", "csi: {driver: e.csi.k8s.io, volumeHandle: h2}");
  bound_pair("three", "pv-3", "csi: {driver: e.csi.k8s.io, volumeHandle: h3}");
  bound_pair("four", "pv-4", "csi: {driver: d.csi.k8s.io, volumeHandle: h4}");
  // node-a: one d volume (limit 1), two e volumes (no count); node-b has no CSINode.
  EXPECT_TRUE(violations({pod("p1", "node-a", claim_volume("one")), pod("p2", "node-a", claim_volume("two")),
                          pod("p3", "node-a", claim_volume("three")), pod("p4", "node-b", claim_volume("four"))})
                .empty());
}

TEST_F(VolumeInvariants, MigratedInTreeVolumesCountUnderTheirCsiDriver) {
  csi_node("metadata: {name: node-a, annotations: {storage.alpha.kubernetes.io/migrated-plugins: kubernetes.io/aws-ebs}}\n"
           "spec: {drivers: [{name: ebs.csi.aws.com, nodeID: node-a, allocatable: {count: 1}}]}\n");
  bound_pair("one", "pv-1", "awsElasticBlockStore: {volumeID: vol-1}");
  auto inline_ebs = "[{name: v, awsElasticBlockStore: {volumeID: vol-2}}]";
  auto v = violations({pod("p1", "node-a", claim_volume("one")), pod("p2", "node-a", inline_ebs)});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "node-a has 2 unique ebs.csi.aws.com volumes attached, over its CSINode's allocatable count 1");
}

TEST_F(VolumeInvariants, InTreeVolumesOnANodeWithoutCsiNodeAreNotCounted) {
  bound_pair("one", "pv-1", "awsElasticBlockStore: {volumeID: vol-1}");
  bound_pair("two", "pv-2", "awsElasticBlockStore: {volumeID: vol-2}");
  EXPECT_TRUE(violations({pod("p1", "node-b", claim_volume("one")), pod("p2", "node-b", claim_volume("two"))}).empty());
}

// --- gangs -------------------------------------------------------------------------------------

class GangInvariants : public ::testing::Test {
protected:
  // A v1beta1 gang ns/<name> of minCount `min`, with these topology keys.
  void gang(const std::string& name, int min, const std::vector<std::string>& keys = {}) {
    std::string topo;
    for (auto& k : keys) topo += std::string(topo.empty() ? "" : ", ") + "{key: " + k + "}";
    auto g = compile_pod_group(*decode<k8s::scheduling::PodGroup>(
      "metadata: {name: " + name + ", namespace: ns}\nspec:\n  schedulingPolicy: {gang: {minCount: " +
      std::to_string(min) + "}}\n" + (keys.empty() ? "" : "  schedulingConstraints: {topology: [" + topo + "]}\n")));
    ASSERT_TRUE(g) << g.err().message;
    objs_.pod_groups[pod_group_key(**g)] = *g;
  }
  // Member `name` of v1beta1 group `group`, on `node_name` ("" = not bound).
  static pod_info_ptr member(const std::string& name, const std::string& group, const std::string& node_name) {
    auto p = compile_pod(decode<k8s::core::Pod>("metadata: {name: " + name + ", namespace: ns}\nspec:\n"
                                                "  schedulingGroup: {podGroupName: " + group + "}\n"
                                                "  containers: [{name: c, image: i}]\n"));
    if (!p) ADD_FAILURE() << p.err().message;
    return node_name.empty() ? *p : with_node_name(**p, node_name);
  }
  std::vector<std::string> violations(const std::vector<pod_info_ptr>& pods) {
    auto rep = check_placement(nodes_, pods, &objs_);
    return rep.violations;
  }
  std::vector<node_info_ptr> nodes_ = {node("a1", "zone-a"), node("a2", "zone-a"), node("b1", "zone-b"), unlabelled()};
  cluster_objects objs_;

private:
  static node_info_ptr unlabelled() {
    auto n = compile_node(decode<k8s::core::Node>("metadata: {name: bare}\nstatus: {capacity: {cpu: '4', memory: 32Gi, "
                                                  "pods: '110'}}\n"));
    if (!n) ADD_FAILURE() << n.err().message;
    return *n;
  }
};

TEST_F(GangInvariants, WholeOrNoneHold) {
  gang("whole", 2);
  gang("none", 2);
  EXPECT_TRUE(violations({member("w1", "whole", "a1"), member("w2", "whole", "b1"), member("n1", "none", ""),
                          member("n2", "none", "")})
                .empty());
}

TEST_F(GangInvariants, PartlyBoundGangIsAViolation) {
  gang("train", 3);
  auto v = violations({member("t1", "train", "a1"), member("t2", "train", "a2"), member("t3", "train", "")});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "pod group ns/train is partly bound: 2 members bound, minCount 3");
}

TEST_F(GangInvariants, MinCountBelowSizeAllowsStragglersUnbound) {
  gang("train", 2);
  EXPECT_TRUE(violations({member("t1", "train", "a1"), member("t2", "train", "a2"), member("t3", "train", "")}).empty());
}

TEST_F(GangInvariants, CoschedulingGangsAreCheckedToo) {
  auto g = compile_pod_group(*decode<k8s::coscheduling::PodGroup>("metadata: {name: cg, namespace: ns}\nspec: {minMember: 2}\n"));
  ASSERT_TRUE(g) << g.err().message;
  objs_.pod_groups[pod_group_key(**g)] = *g;
  auto p = compile_pod(decode<k8s::core::Pod>("metadata: {name: c1, namespace: ns, labels: {scheduling.x-k8s.io/pod-group: cg}}\n"
                                              "spec: {containers: [{name: c, image: i}]}\n"));
  ASSERT_TRUE(p) << p.err().message;
  auto v = violations({with_node_name(**p, "a1")});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "pod group ns/cg is partly bound: 1 members bound, minCount 2");
}

TEST_F(GangInvariants, BasicPolicyGroupIsNoGang) {
  auto g = compile_pod_group(*decode<k8s::scheduling::PodGroup>(
    "metadata: {name: loose, namespace: ns}\nspec: {schedulingPolicy: {basic: {}}}\n"));
  ASSERT_TRUE(g) << g.err().message;
  objs_.pod_groups[pod_group_key(**g)] = *g;
  EXPECT_TRUE(violations({member("l1", "loose", "a1"), member("l2", "loose", "")}).empty());
}

TEST_F(GangInvariants, TopologyKeyHoldsInOneDomain) {
  gang("zoned", 2, {"zone"});
  EXPECT_TRUE(violations({member("z1", "zoned", "a1"), member("z2", "zoned", "a2")}).empty());
}

TEST_F(GangInvariants, TopologyKeyAcrossDomainsIsAViolation) {
  gang("zoned", 3, {"zone"});
  auto v = violations({member("z1", "zoned", "a1"), member("z2", "zoned", "a2"), member("z3", "zoned", "b1")});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "pod group ns/zoned spans 2 domains of zone (zone-a: 2, zone-b: 1)");
}

TEST_F(GangInvariants, NodeWithoutTheKeyIsInNoDomain) {
  gang("zoned", 1, {"zone"});
  auto v = violations({member("z1", "zoned", "bare")});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "pod group ns/zoned spans 1 domains of zone (<no zone label>: 1)");
}

TEST_F(GangInvariants, WithoutObjectsNoGangCheck) {
  gang("train", 3);
  auto rep = check_placement(nodes_, {member("t1", "train", "a1")}, nullptr);
  EXPECT_TRUE(rep.violations.empty());
}

// --- competing gangs: exactly one of a set bound whole, the others wholly pending -----------------

class CompetingGangs : public GangInvariants {
protected:
  std::vector<std::string> check(const std::vector<competing_gangs>& sets, const std::vector<pod_info_ptr>& pods,
                                 competing_outcome* out = nullptr) {
    auto rep = check_competing_gangs(sets, pods, objs_, out);
    EXPECT_EQ(rep.checks, sets.size()) << "one check per set";
    return rep.violations;
  }
  static std::string key(const std::string& name) { return pod_group_key(pod_group_api::workload, "ns", name); }
  competing_gangs pair_ab() { return {"pool-0", {key("a"), key("b")}}; }
  void SetUp() override {
    gang("a", 2);
    gang("b", 2);
  }
};

TEST_F(CompetingGangs, OneBoundWholeTheOtherWhollyPendingSettles) {
  competing_outcome out;
  auto v = check({pair_ab()}, {member("a1", "a", "a1"), member("a2", "a", "a2"), member("b1", "b", ""),
                               member("b2", "b", "")},
                 &out);
  EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v);
  EXPECT_EQ(out.sets, 1u);
  EXPECT_EQ(out.settled, 1u);
}

TEST_F(CompetingGangs, NoGangBoundIsADeadlock) {
  competing_outcome out;
  auto v = check({pair_ab()}, {member("a1", "a", ""), member("a2", "a", ""), member("b1", "b", ""),
                               member("b2", "b", "")},
                 &out);
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "competing set pool-0: no gang bound whole (a deadlock, or capacity for none): ns/a 0/2 bound "
                  "(minCount 2), ns/b 0/2 bound (minCount 2)");
  EXPECT_EQ(out.settled, 0u);
}

TEST_F(CompetingGangs, EachHoldingPartIsADeadlockToo) {
  // The deadlock gang scheduling exists to prevent: each gang holds part of the capacity.
  auto v = check({pair_ab()}, {member("a1", "a", "a1"), member("a2", "a", ""), member("b1", "b", "b1"),
                               member("b2", "b", "")});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "competing set pool-0: no gang bound whole (a deadlock, or capacity for none): ns/a 1/2 bound "
                  "(minCount 2), ns/b 1/2 bound (minCount 2)");
}

TEST_F(CompetingGangs, LoserPartlyPlacedIsAViolation) {
  auto v = check({pair_ab()}, {member("a1", "a", "a1"), member("a2", "a", "a2"), member("b1", "b", "b1"),
                               member("b2", "b", "")});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "competing set pool-0: a losing gang is partly placed: ns/a 2/2 bound (minCount 2), ns/b 1/2 bound "
                  "(minCount 2)");
}

TEST_F(CompetingGangs, TwoBoundWholeMeansTheCapacityWasNotContested) {
  auto v = check({pair_ab()}, {member("a1", "a", "a1"), member("a2", "a", "a2"), member("b1", "b", "b1"),
                               member("b2", "b", "a1")});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0].rfind("competing set pool-0: 2 gangs bound whole (the capacity was not contested): ", 0), 0u) << v[0];
}

TEST_F(CompetingGangs, MinCountBelowSizeCountsAsWhole) {
  gang("c", 1);
  auto v = check({{"pool-1", {key("b"), key("c")}}},
                 {member("c1", "c", "a1"), member("c2", "c", ""), member("b1", "b", ""), member("b2", "b", "")});
  EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v);
}

TEST_F(CompetingGangs, SetsAreJudgedApartAndAcrossApis) {
  auto cg = compile_pod_group(*decode<k8s::coscheduling::PodGroup>("metadata: {name: x, namespace: ns}\nspec: {minMember: 1}\n"));
  ASSERT_TRUE(cg) << cg.err().message;
  objs_.pod_groups[pod_group_key(**cg)] = *cg;
  auto x1 = compile_pod(decode<k8s::core::Pod>("metadata: {name: x1, namespace: ns, labels: {scheduling.x-k8s.io/pod-group: x}}\n"
                                               "spec: {containers: [{name: c, image: i}]}\n"));
  ASSERT_TRUE(x1) << x1.err().message;
  gang("c", 1);
  competing_outcome out;
  // pool-0 settles (a won); pool-1 (the Coscheduling x against c) has both bound.
  auto v = check({pair_ab(), {"pool-1", {pod_group_key(**cg), key("c")}}},
                 {member("a1", "a", "a1"), member("a2", "a", "a2"), member("b1", "b", ""), member("b2", "b", ""),
                  with_node_name(**x1, "b1"), member("c1", "c", "b1")},
                 &out);
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "competing set pool-1: 2 gangs bound whole (the capacity was not contested): ns/x 1/1 bound "
                  "(minCount 1), ns/c 1/1 bound (minCount 1)");
  EXPECT_EQ(out.sets, 2u);
  EXPECT_EQ(out.settled, 1u);
}

TEST_F(CompetingGangs, AGroupMissingFromTheObjectsIsAViolation) {
  auto v = check({{"pool-0", {key("a"), key("gone")}}}, {member("a1", "a", "a1"), member("a2", "a", "a2")});
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0], "competing set pool-0: no pod group k/ns/gone");
}

// --- nothing reserved after the run --------------------------------------------------------------

class ReservedInvariant : public ::testing::Test {
protected:
  ReservedInvariant() {
    for (auto& n : {node("a1", "zone-a"), node("b1", "zone-b")}) cache_.add_or_update_node(std::make_shared<node_info>(*n));
  }
  static pod_info_ptr plain(const std::string& name, const std::string& node_name = "") {
    auto p = compile_pod(decode<k8s::core::Pod>("metadata: {name: " + name + ", namespace: ns, uid: " + name +
                                                "}\nspec: {containers: [{name: c, image: i}]}\n"));
    if (!p) ADD_FAILURE() << p.err().message;
    return node_name.empty() ? *p : with_node_name(**p, node_name);
  }
  invariant_report check(const std::vector<pod_info_ptr>& cluster_pods) {
    return check_nothing_reserved(*cache_.current(), cluster_pods);
  }
  scheduler_cache cache_;
};

TEST_F(ReservedInvariant, BoundAndConfirmedPodsHold) {
  auto bound = plain("p1", "a1");
  ASSERT_TRUE(cache_.add_pod(bound));
  // Assumed, and the cluster has bound it where it was assumed (the cache has not seen it yet).
  ASSERT_TRUE(cache_.assume_pod(plain("p2"), "b1"));
  auto rep = check({bound, plain("p2", "b1")});
  EXPECT_TRUE(rep.violations.empty()) << ::testing::PrintToString(rep.violations);
  EXPECT_EQ(rep.checks, 2u);
}

TEST_F(ReservedInvariant, AssumedButNotBoundIsAViolation) {
  // A pod waiting at Permit: assumed on its node, never bound.
  ASSERT_TRUE(cache_.assume_pod(plain("waiting"), "a1"));
  auto rep = check({plain("waiting")});
  ASSERT_EQ(rep.violations.size(), 1u);
  EXPECT_EQ(rep.violations[0], "ns/waiting is still reserved on a1 by the scheduler cache but not bound");
}

TEST_F(ReservedInvariant, AssumedOnOneNodeBoundOnAnotherIsAViolation) {
  ASSERT_TRUE(cache_.assume_pod(plain("moved"), "a1"));
  auto rep = check({plain("moved", "b1")});
  ASSERT_EQ(rep.violations.size(), 1u);
  EXPECT_EQ(rep.violations[0], "ns/moved is still reserved on a1 by the scheduler cache but bound to b1");
}

TEST_F(ReservedInvariant, DeletedPodTheCacheStillHoldsIsNotAReservation) {
  ASSERT_TRUE(cache_.add_pod(plain("victim", "a1")));
  EXPECT_TRUE(check({}).violations.empty());
}

}  // namespace
}  // namespace kas::test

// VolumeRestrictions: disk conflicts, ReadWriteOncePod, AddPod/RemovePod and QueueingHints, cases
// from kube's volume_restrictions_test.go.
#include <gtest/gtest.h>

#include "messages/k8s/core.pb.h"
#include "plugins/volume_restrictions/volume_restrictions.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_from_yaml;
using test::pod_from_yaml;

constexpr std::string_view disk_reason = "node(s) had no available disk";
constexpr std::string_view rwop_reason =
  "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod";

pvc_info_ptr pvc(const std::string& name, const std::string& mode, const std::string& ns = "default") {
  auto m = std::make_shared<k8s::core::PersistentVolumeClaim>();
  std::string y = "metadata: {name: " + name + ", namespace: " + ns + "}\nspec: {accessModes: [" + mode + "]}";
  if (auto st = codec::decode_yaml(y, *m); !st) throw std::runtime_error("pvc fixture: " + st.err().message);
  auto r = compile_pvc(m);
  if (!r) throw std::runtime_error("pvc fixture: " + r.err().message);
  return *r;
}

// A pod with the given volumes (YAML flow maps of volume sources, each named v<i>) and claims.
pod_info_ptr make_pod(const std::string& name, const std::vector<std::string>& sources,
                      const std::vector<std::string>& claims = {}, const std::string& ns = "default") {
  std::string y = "metadata: {name: " + name + ", namespace: " + ns + ", uid: " + ns + "-" + name +
                  "}\nspec:\n  containers: [{name: c}]\n  volumes:\n";
  int i = 0;
  for (auto& s : sources) y += "  - {name: v" + std::to_string(i++) + ", " + s + "}\n";
  for (auto& c : claims)
    y += "  - {name: v" + std::to_string(i++) + ", persistentVolumeClaim: {claimName: " + c + "}}\n";
  return pod_from_yaml(y);
}

std::shared_ptr<const snapshot> snapshot_of(const std::vector<std::shared_ptr<node_info>>& nodes,
                                            const std::vector<pvc_info_ptr>& pvcs) {
  auto objs = std::make_shared<cluster_objects>();
  for (auto& c : pvcs) objs->volumes.pvcs.put(c->key(), c);
  snapshot s;
  uint64_t gen = 0;
  for (auto& n : nodes) s = s.with_added_node(n, ++gen);
  return std::make_shared<const snapshot>(s.with_objects(objs, ++gen));
}

struct want_status {
  fw::code code = fw::code::success;
  std::string_view reason;
};
const want_status skip{fw::code::skip, ""};
const want_status disk_conflict{fw::code::unschedulable, disk_reason};

struct filter_case {
  const char* name;
  pod_info_ptr pod;
  std::vector<pod_info_ptr> on_node;
  want_status pre_filter, filter;
};

// As kube's tests: PreFilter, then Filter when PreFilter succeeded.
void run_filter_cases(const std::vector<filter_case>& cases, const std::vector<pvc_info_ptr>& pvcs = {}) {
  volume_restrictions pl;
  for (const auto& c : cases) {
    auto node = node_from_yaml("metadata: {name: node-1}", c.on_node);
    auto snap = snapshot_of({node}, pvcs);
    fw::cycle_state state;
    state.set_snapshot(snap);
    fw::pre_filter_result r;
    auto pre = pl.pre_filter(state, *c.pod, *snap, r);
    EXPECT_EQ(pre.get_code(), c.pre_filter.code) << c.name;
    EXPECT_EQ(test::reasons(pre), c.pre_filter.reason) << c.name;
    if (!pre.is_success()) continue;
    auto got = pl.filter(state, *c.pod, *node);
    EXPECT_EQ(got.get_code(), c.filter.code) << c.name;
    EXPECT_EQ(test::reasons(got), c.filter.reason) << c.name;
  }
}

// kube's four disk tables share their shape: "nothing", "one state", "same state", "different
// state", with the volume source as the only difference.
void run_disk_table(const std::string& vol, const std::string& vol2) {
  run_filter_cases({
    {"nothing", make_pod("p", {}), {}, skip, {}},
    {"one state", make_pod("p", {}), {make_pod("e", {vol})}, skip, {}},
    {"same state", make_pod("p", {vol}), {make_pod("e", {vol})}, {}, disk_conflict},
    {"different state", make_pod("p", {vol2}), {make_pod("e", {vol})}, {}, {}},
  });
}

const std::string gce = "gcePersistentDisk: {pdName: foo}";
const std::string gce2 = "gcePersistentDisk: {pdName: bar}";
const std::string aws = "awsElasticBlockStore: {volumeID: foo}";
const std::string aws2 = "awsElasticBlockStore: {volumeID: bar}";
const std::string rbd = "rbd: {monitors: [a, b], pool: foo, image: bar, fsType: ext4}";
const std::string rbd2 = "rbd: {monitors: [c, d], pool: foo, image: bar, fsType: ext4}";
const std::string iscsi = "iscsi: {targetPortal: \"127.0.0.1:3260\", iqn: iqn.2016-12.server:storage.target01, "
                          "fsType: ext4, lun: 0}";
const std::string iscsi2 = "iscsi: {targetPortal: \"127.0.0.1:3260\", iqn: iqn.2017-12.server:storage.target01, "
                           "fsType: ext4, lun: 0}";

TEST(VolumeRestrictions, GCEDiskConflicts) {
  run_disk_table(gce, gce2);
  run_filter_cases({
    {"pod with a volume that doesn't have restrictions", make_pod("p", {"emptyDir: {}"}), {}, skip, {}},
    // Not in kube's table: a GCE PD may be shared when every pod mounts it read-only.
    {"same disk, both read-only", make_pod("p", {"gcePersistentDisk: {pdName: foo, readOnly: true}"}),
     {make_pod("e", {"gcePersistentDisk: {pdName: foo, readOnly: true}"})}, {}, {}},
    {"same disk, one read-write", make_pod("p", {"gcePersistentDisk: {pdName: foo, readOnly: true}"}),
     {make_pod("e", {gce})}, {}, disk_conflict},
  });
}

TEST(VolumeRestrictions, AWSDiskConflicts) {
  run_disk_table(aws, aws2);
  run_filter_cases({
    // Not in kube's table: an EBS volume conflicts even when both mount it read-only.
    {"same volume, both read-only", make_pod("p", {"awsElasticBlockStore: {volumeID: foo, readOnly: true}"}),
     {make_pod("e", {"awsElasticBlockStore: {volumeID: foo, readOnly: true}"})}, {}, disk_conflict},
  });
}

TEST(VolumeRestrictions, RBDDiskConflicts) {
  run_disk_table(rbd, rbd2);
  run_filter_cases({
    // Not in kube's table: one shared monitor is enough; read-only on both sides is not a conflict.
    {"one shared monitor", make_pod("p", {"rbd: {monitors: [b, c], pool: foo, image: bar}"}), {make_pod("e", {rbd})},
     {}, disk_conflict},
    {"same image, both read-only", make_pod("p", {"rbd: {monitors: [a], pool: foo, image: bar, readOnly: true}"}),
     {make_pod("e", {"rbd: {monitors: [a], pool: foo, image: bar, readOnly: true}"})}, {}, {}},
    {"other pool", make_pod("p", {"rbd: {monitors: [a], pool: baz, image: bar}"}), {make_pod("e", {rbd})}, {}, {}},
  });
}

TEST(VolumeRestrictions, ISCSIDiskConflicts) {
  run_disk_table(iscsi, iscsi2);
  run_filter_cases({
    // Not in kube's table: the IQN alone identifies the volume; read-only on both sides is fine.
    {"same iqn, both read-only",
     make_pod("p", {"iscsi: {targetPortal: \"127.0.0.1:3260\", iqn: iqn.x, lun: 0, readOnly: true}"}),
     {make_pod("e", {"iscsi: {targetPortal: \"10.0.0.1:3260\", iqn: iqn.x, lun: 1, readOnly: true}"})}, {}, {}},
    {"same iqn, other portal", make_pod("p", {"iscsi: {targetPortal: \"127.0.0.1:3260\", iqn: iqn.x, lun: 0}"}),
     {make_pod("e", {"iscsi: {targetPortal: \"10.0.0.1:3260\", iqn: iqn.x, lun: 1}"})}, {}, disk_conflict},
  });
}

TEST(VolumeRestrictions, AccessModeConflicts) {
  auto pod_with_one_pvc = make_pod("pod-with-one-pvc", {}, {"claim-with-rwop-1"});
  auto pod_with_two_pvcs = make_pod("pod-with-two-pvcs", {}, {"claim-with-rwop-1", "claim-with-rwop-2"});
  auto pod_with_one_conflict = make_pod("pod-with-one-conflict", {}, {"claim-with-rwop-1"});
  auto pod_with_two_conflicts = make_pod("pod-with-two-conflicts", {}, {"claim-with-rwop-1", "claim-with-rwop-2"});
  auto pod_with_rwx = make_pod("pod-with-rwx", {}, {"claim-with-rwx"});
  auto rwop1 = pvc("claim-with-rwop-1", "ReadWriteOncePod");
  auto rwop2 = pvc("claim-with-rwop-2", "ReadWriteOncePod");
  auto rwx = pvc("claim-with-rwx", "ReadWriteMany");
  const want_status rwop_conflict{fw::code::unschedulable, rwop_reason};

  run_filter_cases({{"nothing", make_pod("p", {}), {}, skip, {}}});
  const want_status not_found{fw::code::unschedulable_and_unresolvable,
                              "persistentvolumeclaim \"claim-with-rwop-1\" not found"};
  run_filter_cases({{"failed to get PVC", pod_with_one_pvc, {}, not_found, {}}});
  run_filter_cases({{"no access mode conflict", pod_with_one_pvc, {pod_with_rwx}, skip, {}}}, {rwop1, rwx});
  run_filter_cases({{"access mode conflict, unschedulable", pod_with_one_conflict, {pod_with_one_pvc, pod_with_rwx},
                     {}, rwop_conflict}},
                   {rwop1, rwx});
  run_filter_cases({{"two conflicts, unschedulable", pod_with_two_conflicts, {pod_with_two_pvcs, pod_with_rwx}, {},
                     rwop_conflict}},
                   {rwop1, rwop2, rwx});
  // Not in kube's table: the same claim name in another namespace is another claim.
  run_filter_cases({{"claim of the same name in another namespace", pod_with_one_conflict,
                     {make_pod("other", {}, {"claim-with-rwop-1"}, "team-b")}, skip, {}}},
                   {rwop1, pvc("claim-with-rwop-1", "ReadWriteOncePod", "team-b")});
}

// Preemption's what-ifs: removing the claim's user frees the pod; adding it back rejects it again.
TEST(VolumeRestrictions, AddPodRemovePod) {
  volume_restrictions pl;
  auto holder = make_pod("holder", {}, {"claim-with-rwop-1"});
  auto other = make_pod("other", {}, {"claim-with-rwx"});
  auto pod = make_pod("pod", {}, {"claim-with-rwop-1"});
  auto node = node_from_yaml("metadata: {name: node-1}", {holder, other});
  auto snap =
    snapshot_of({node}, {pvc("claim-with-rwop-1", "ReadWriteOncePod"), pvc("claim-with-rwx", "ReadWriteMany")});
  fw::cycle_state state;
  fw::pre_filter_result r;
  ASSERT_TRUE(pl.pre_filter(state, *pod, *snap, r).is_success());
  ASSERT_EQ(pl.filter(state, *pod, *node).get_code(), fw::code::unschedulable);

  auto trial = state.clone();
  ASSERT_TRUE(pl.remove_pod(trial, *pod, *other, *node).is_success());
  EXPECT_EQ(pl.filter(trial, *pod, *node).get_code(), fw::code::unschedulable) << "an unrelated pod";
  ASSERT_TRUE(pl.remove_pod(trial, *pod, *holder, *node).is_success());
  EXPECT_TRUE(pl.filter(trial, *pod, *node).is_success());
  EXPECT_EQ(pl.filter(state, *pod, *node).get_code(), fw::code::unschedulable) << "the clone is independent";
  ASSERT_TRUE(pl.add_pod(trial, *pod, *holder, *node).is_success());
  EXPECT_EQ(pl.filter(trial, *pod, *node).get_code(), fw::code::unschedulable);

  fw::cycle_state empty;
  EXPECT_EQ(pl.add_pod(empty, *pod, *holder, *node).get_code(), fw::code::error);
  EXPECT_EQ(pl.filter(empty, *pod, *node).get_code(), fw::code::error);
}

TEST(VolumeRestrictions, CrossNode) {
  volume_restrictions pl;
  EXPECT_TRUE(pl.cross_node());
  EXPECT_TRUE(pl.skip_may_change_with(*make_pod("p", {}, {"claim"})));
  EXPECT_FALSE(pl.skip_may_change_with(*make_pod("p", {gce})));
  // A claim user on another node rejects the pod everywhere.
  auto pod = make_pod("pod", {}, {"c"});
  auto n1 = node_from_yaml("metadata: {name: node-1}", {make_pod("holder", {}, {"c"})});
  auto n2 = node_from_yaml("metadata: {name: node-2}");
  auto snap = snapshot_of({n1, n2}, {pvc("c", "ReadWriteOncePod")});
  fw::cycle_state state;
  fw::pre_filter_result r;
  ASSERT_TRUE(pl.pre_filter(state, *pod, *snap, r).is_success());
  EXPECT_EQ(test::reasons(pl.filter(state, *pod, *n2)), rwop_reason);
}

// --- QueueingHints ------------------------------------------------------------------------------

const fw::queueing_hint_fn& hint_for(const std::vector<fw::cluster_event_with_hint>& events, fw::event_resource r) {
  for (const auto& e : events)
    if (e.event.resource == r) return e.hint;
  throw std::runtime_error("no event registered for the resource");
}

TEST(VolumeRestrictions, EventsToRegister) {
  volume_restrictions pl;
  auto events = pl.events_to_register();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].event.resource, fw::event_resource::pod);
  EXPECT_EQ(events[0].event.actions, fw::act_delete);
  EXPECT_EQ(events[1].event.resource, fw::event_resource::node);
  EXPECT_EQ(events[1].event.actions, fw::act_add);
  EXPECT_FALSE(events[1].hint);
  EXPECT_EQ(events[2].event.resource, fw::event_resource::pvc);
  EXPECT_EQ(events[2].event.actions, fw::act_add);
}

TEST(VolumeRestrictions, IsSchedulableAfterPodDeleted) {
  struct tc {
    const char* name;
    pod_info_ptr pod, deleted;
    fw::queueing_hint want;
  };
  const auto queue = fw::queueing_hint::queue, skip_hint = fw::queueing_hint::skip;
  const tc cases[] = {
    {"queue-new-object-gcedisk-conflict", make_pod("p", {gce}), make_pod("d", {gce}), queue},
    {"skip-new-object-gcedisk-no-conflict", make_pod("p", {gce}), make_pod("d", {gce2}), skip_hint},
    {"queue-new-object-awsdisk-conflict", make_pod("p", {aws}), make_pod("d", {aws}), queue},
    {"skip-new-object-awsdisk-no-conflict", make_pod("p", {aws}), make_pod("d", {aws2}), skip_hint},
    {"queue-new-object-rbddisk-conflict", make_pod("p", {rbd}), make_pod("d", {rbd}), queue},
    {"skip-new-object-rbddisk-no-conflict", make_pod("p", {rbd}), make_pod("d", {rbd2}), skip_hint},
    {"queue-new-object-iscsidisk-conflict", make_pod("p", {iscsi}), make_pod("d", {iscsi}), queue},
    {"skip-new-object-iscsidisk-no-conflict", make_pod("p", {iscsi}), make_pod("d", {iscsi2}), skip_hint},
    {"queue-has-same-claim", make_pod("pod1", {}, {"claim-rwop"}), make_pod("pod2", {}, {"claim-rwop"}), queue},
    {"skip-no-same-claim", make_pod("pod1", {}, {"claim-1-rwop"}), make_pod("pod2", {}, {"claim-2-rwop"}), skip_hint},
    // Not in kube's table: a pod of another namespace shares neither disks nor claims.
    {"skip-other-namespace", make_pod("pod1", {gce}, {"c"}), make_pod("pod2", {gce}, {"c"}, "team-b"), skip_hint},
  };
  volume_restrictions pl;
  auto events = pl.events_to_register();
  const auto& hint = hint_for(events, fw::event_resource::pod);
  for (const auto& c : cases) {
    fw::event_objects o;
    o.old_pod = c.deleted.get();
    EXPECT_EQ(hint(*c.pod, o), c.want) << c.name;
  }
  EXPECT_EQ(hint(*make_pod("p", {gce}), fw::event_objects{}), queue) << "no deleted pod";
}

TEST(VolumeRestrictions, IsSchedulableAfterPersistentVolumeClaimChange) {
  auto pod_with_one_pvc = make_pod("pod-with-one-pvc", {}, {"claim-with-rwx-1"});
  auto pod_with_two_pvcs = make_pod("pod-with-two-pvcs", {}, {"claim-with-rwx-1", "claim-with-rwx-2"});
  auto pod_with_not_equal_namespace = make_pod("pod-with-one-pvc", {}, {"claim-with-rwx-1"}, "kube-system");
  auto pvc1 = pvc("claim-with-rwx-1", "ReadWriteMany");
  auto pvc2 = pvc("claim-with-rwx-2", "ReadWriteMany");
  struct tc {
    const char* name;
    pod_info_ptr pod;
    pvc_info_ptr added;
    fw::queueing_hint want;
  };
  const tc cases[] = {
    {"queue-new-object-pvc-belong-pod", pod_with_two_pvcs, pvc1, fw::queueing_hint::queue},
    {"skip-new-object-unused", pod_with_one_pvc, pvc2, fw::queueing_hint::skip},
    {"skip-nil-old-object", pod_with_one_pvc, pvc2, fw::queueing_hint::skip},
    {"skip-new-object-not-belong-pod", pod_with_one_pvc, pvc2, fw::queueing_hint::skip},
    {"skip-new-object-namespace-not-equal-pod", pod_with_not_equal_namespace, pvc1, fw::queueing_hint::skip},
  };
  volume_restrictions pl;
  auto events = pl.events_to_register();
  const auto& hint = hint_for(events, fw::event_resource::pvc);
  for (const auto& c : cases) {
    auto ch = pvc_change(nullptr, c.added);
    fw::event_objects o;
    o.volume = &ch;
    EXPECT_EQ(hint(*c.pod, o), c.want) << c.name;
  }
  EXPECT_EQ(hint(*pod_with_one_pvc, fw::event_objects{}), fw::queueing_hint::queue) << "no storage object";
}

TEST(VolumeRestrictions, SignPod) {
  std::string a, b, c;
  EXPECT_TRUE(volume_restrictions{}.sign_pod(*make_pod("p1", {gce}, {"claim"}), a));
  EXPECT_TRUE(volume_restrictions{}.sign_pod(*make_pod("p2", {gce}, {"claim"}), b));
  EXPECT_TRUE(volume_restrictions{}.sign_pod(*make_pod("p3", {gce2}, {"claim"}), c));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace kas::plugins

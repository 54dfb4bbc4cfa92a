// The embedded cluster's PV controller, and the store's storage writes, without an actor system.
#include "actors/pv_controller.hpp"

#include <tuple>

#include <gtest/gtest.h>

#include "actors/cluster_store.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/storage.pb.h"
#include "tests/plugins/fixtures.hpp"

namespace kas::test {
namespace {

pv_info_ptr pv(std::string_view yaml) { return *compile_pv(decode<k8s::core::PersistentVolume>(yaml)); }
pvc_info_ptr pvc(std::string_view yaml) { return *compile_pvc(decode<k8s::core::PersistentVolumeClaim>(yaml)); }
storage_class_info_ptr sc(std::string_view yaml) {
  return *compile_storage_class(decode<k8s::storage::StorageClass>(yaml));
}

node_info_ptr node(const std::string& name, const std::string& zone) {
  auto n = std::make_shared<node_info>();
  n->name = name;
  n->labels = label_map({{"kubernetes.io/hostname", name}, {"topology.example.com/zone", zone}});
  return n;
}

// Applies the controller's writes until it has none; returns how many it made.
size_t settle(volume_objects& v, const node_lookup& nodes) {
  size_t n = 0;
  for (int round = 0; round < 10; ++round) {
    auto writes = pv_controller_sync(v, nodes);
    if (writes.empty()) return n;
    for (auto& w : writes) apply_volume_change(v, w);
    n += writes.size();
  }
  ADD_FAILURE() << "the controller did not settle";
  return n;
}

const node_lookup no_nodes = [](const std::string&) -> const node_info* { return nullptr; };

TEST(PVController, ImmediateClaimBindsTheSmallestMatchingVolume) {
  volume_objects v;
  v.classes.put("manual", sc("metadata: {name: manual}\nprovisioner: kubernetes.io/no-provisioner\n"
                             "volumeBindingMode: Immediate\n"));
  // "released" would fit best, but only Available volumes match (kube's FindMatchingVolume).
  for (auto [name, size, status] : {std::tuple{"big", "100Gi", ""}, {"small", "5Gi", ""}, {"fits", "10Gi", ""},
                                    {"released", "9Gi", "status: {phase: Released}\n"}})
    v.pvs.put(name, pv("metadata: {name: " + std::string(name) + "}\nspec: {capacity: {storage: " + size +
                       "}, accessModes: [ReadWriteOnce], storageClassName: manual}\n" + status));
  v.pvcs.put("default/data", pvc("metadata: {name: data, uid: u1}\nspec: {accessModes: [ReadWriteOnce], "
                                 "storageClassName: manual, resources: {requests: {storage: 8Gi}}}\n"));
  EXPECT_EQ(settle(v, no_nodes), 5u);  // three volumes become Available, then both sides of the binding
  EXPECT_EQ(v.volume("small")->phase, "Available");
  const pvc_info* c = v.claim("default", "data");
  EXPECT_EQ(c->volume_name, "fits");
  EXPECT_TRUE(claim_fully_bound(*c));
  EXPECT_EQ(c->phase, "Bound");
  const pv_info* p = v.volume("fits");
  ASSERT_TRUE(p->claim_ref);
  EXPECT_EQ(p->claim_ref->uid, "u1");
  EXPECT_EQ(p->phase, "Bound");
  EXPECT_TRUE(p->bound_by_controller);
  EXPECT_FALSE(v.volume("small")->claim_ref);
  EXPECT_FALSE(v.volume("released")->claim_ref);
}

TEST(PVController, WaitForFirstConsumerWaitsForTheScheduler) {
  volume_objects v;
  v.classes.put("local", sc("metadata: {name: local}\nprovisioner: kubernetes.io/no-provisioner\n"
                            "volumeBindingMode: WaitForFirstConsumer\n"));
  v.pvs.put("local-1", pv("metadata: {name: local-1}\nspec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], "
                          "storageClassName: local}\n"));
  v.pvcs.put("default/data", pvc("metadata: {name: data, uid: u1}\nspec: {accessModes: [ReadWriteOnce], "
                                 "storageClassName: local, resources: {requests: {storage: 1Gi}}}\n"));
  EXPECT_EQ(settle(v, no_nodes), 1u);  // the volume becomes Available; nothing else until PreBind
  EXPECT_EQ(v.claim("default", "data")->volume_name, "");
  // PreBind's write: the volume's claimRef.
  v.pvs.put("local-1", pv("metadata: {name: local-1}\nspec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], "
                          "storageClassName: local, claimRef: {namespace: default, name: data, uid: u1}}\n"
                          "status: {phase: Available}\n"));
  EXPECT_EQ(settle(v, no_nodes), 2u);
  EXPECT_EQ(v.claim("default", "data")->volume_name, "local-1");
}

TEST(PVController, ProvisionsOnTheSelectedNodesTopology) {
  volume_objects v;
  v.classes.put("csi", sc("metadata: {name: csi}\nprovisioner: example.csi.io\nvolumeBindingMode: WaitForFirstConsumer\n"));
  v.csi_nodes.put("n1", *compile_csi_node(decode<k8s::storage::CSINode>(
                          "metadata: {name: n1}\nspec: {drivers: [{name: example.csi.io, nodeID: n1, "
                          "topologyKeys: [topology.example.com/zone]}]}\n")));
  v.pvcs.put("default/data", pvc("metadata: {name: data, uid: u1, annotations: "
                                 "{volume.kubernetes.io/selected-node: n1}}\nspec: {accessModes: [ReadWriteOnce], "
                                 "storageClassName: csi, resources: {requests: {storage: 3Gi}}}\n"));
  auto n1 = node("n1", "zone-a");
  auto nodes = [&](const std::string& name) -> const node_info* { return name == "n1" ? n1.get() : nullptr; };
  EXPECT_EQ(settle(v, nodes), 3u);  // create the volume, then bind both sides
  const pvc_info* c = v.claim("default", "data");
  ASSERT_TRUE(claim_fully_bound(*c));
  const pv_info* p = v.volume(c->volume_name);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "pvc-u1");
  EXPECT_EQ(p->capacity_bytes, 3LL << 30);
  EXPECT_EQ(p->source.driver, "example.csi.io");
  ASSERT_TRUE(p->node_affinity);
  EXPECT_TRUE(p->node_affinity->matches(n1->labels, "n1"));
  EXPECT_FALSE(p->node_affinity->matches(node("n2", "zone-b")->labels, "n2"));
}

TEST(PVController, TwoClaimsNeverShareAVolume) {
  volume_objects v;
  v.pvs.put("only", pv("metadata: {name: only}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]}\n"));
  for (auto name : {"a", "b"})
    v.pvcs.put(std::string("default/") + name,
               pvc("metadata: {name: " + std::string(name) + "}\nspec: {accessModes: [ReadWriteOnce], "
                   "storageClassName: \"\", resources: {requests: {storage: 1Gi}}}\n"));
  settle(v, no_nodes);
  EXPECT_EQ(v.claim("default", "a")->volume_name, "only");  // claims in key order
  EXPECT_EQ(v.claim("default", "b")->volume_name, "");
}

TEST(ClusterStoreVolumes, PreBindWritesBindAndConflictsAreRefused) {
  cluster_store s;
  s.apply_volume(storage_class_change(
    nullptr, sc("metadata: {name: local}\nprovisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n")));
  s.apply_volume(pv_change(nullptr, pv("metadata: {name: pv1}\nspec: {capacity: {storage: 1Gi}, "
                                       "accessModes: [ReadWriteOnce], storageClassName: local}\n")));
  for (auto name : {"a", "b"})
    s.apply_volume(pvc_change(nullptr, pvc("metadata: {name: " + std::string(name) + ", uid: " + name +
                                           "}\nspec: {accessModes: [ReadWriteOnce], storageClassName: local, "
                                           "resources: {requests: {storage: 1Gi}}}\n")));
  EXPECT_FALSE(s.claims_bound("default", {"a"}));
  auto reserve_for = [](const std::string& claim) {
    return decode<k8s::core::PersistentVolume>("metadata: {name: pv1}\nspec: {capacity: {storage: 1Gi}, accessModes: "
                                               "[ReadWriteOnce], storageClassName: local, claimRef: {namespace: "
                                               "default, name: " + claim + ", uid: " + claim + "}}\n"
                                               "status: {phase: Available}\n");
  };
  auto out = s.write_volumes({reserve_for("a")}, {});
  ASSERT_TRUE(out.status.is_success()) << out.status.message();
  // The write, then the controller's two (the volume was Available already).
  ASSERT_EQ(out.changes.size(), 3u);
  for (auto& ch : out.changes) EXPECT_EQ(ch->type, cluster_event_type::volume);
  EXPECT_TRUE(s.claims_bound("default", {"a"}));
  auto second = s.write_volumes({reserve_for("b")}, {});
  EXPECT_FALSE(second.status.is_success());
  EXPECT_NE(second.status.message().find("Operation cannot be fulfilled on persistentvolumes \"pv1\""), std::string::npos);
  EXPECT_TRUE(second.changes.empty());
  auto missing = s.write_volumes({decode<k8s::core::PersistentVolume>("metadata: {name: nope}\n")}, {});
  EXPECT_EQ(missing.status.message(), "persistentvolumes \"nope\" not found");
}

TEST(ClusterStoreVolumes, WaitingChangesOfOneObjectFold) {
  change_coalescer c(0);
  auto a = pvc("metadata: {name: a}\nspec: {}\n");
  auto b = pvc("metadata: {name: a}\nspec: {volumeName: pv}\n");
  auto push = [&](volume_change vc, uint64_t rv) {
    auto ch = std::make_shared<cluster_change>();
    ch->type = cluster_event_type::volume;
    ch->volume = std::make_shared<const volume_change>(std::move(vc));
    ch->resource_version = rv;
    c.push(ch);
  };
  push(pvc_change(nullptr, a), 1);
  push(pvc_change(a, b), 2);
  auto out = c.take(10);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0]->volume->has_old());  // the watcher never saw it: still an add
  EXPECT_EQ(out[0]->volume->new_pvc, b);
  EXPECT_EQ(out[0]->resource_version, 2u);
  // Created and deleted while waiting: nothing.
  push(pvc_change(nullptr, a), 3);
  push(pvc_change(a, nullptr), 4);
  EXPECT_TRUE(c.take(10).empty());
}

}  // namespace
}  // namespace kas::test

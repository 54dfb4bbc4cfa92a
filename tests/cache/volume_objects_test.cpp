// The storage objects' compiled forms and object_table's sharing.
#include "cache/volume_objects.hpp"

#include <gtest/gtest.h>

#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/storage.pb.h"

namespace kas::test {
namespace {

template <class Proto>
std::shared_ptr<const Proto> decode(std::string_view yaml) {
  auto obj = std::make_shared<Proto>();
  auto st = codec::decode_yaml(yaml, *obj);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.err().message);
  return obj;
}

TEST(ObjectTable, CopiesShareAllButTheChangedShard) {
  object_table<storage_class_info> a;
  for (int i = 0; i < 200; ++i) {
    auto sc = std::make_shared<storage_class_info>();
    sc->name = "sc-" + std::to_string(i);
    a.put(sc->name, sc);
  }
  EXPECT_EQ(a.size(), 200u);
  object_table<storage_class_info> b = a;
  auto changed = std::make_shared<storage_class_info>();
  changed->name = "sc-7";
  changed->provisioner = "p";
  auto old = b.put("sc-7", changed);
  ASSERT_TRUE(old);
  EXPECT_EQ(old->provisioner, "");
  EXPECT_EQ(b.size(), 200u);
  EXPECT_EQ(a.find("sc-7")->provisioner, "");  // the copy's change does not reach the original
  EXPECT_EQ(b.find("sc-7")->provisioner, "p");
  EXPECT_EQ(a.find("sc-8"), b.find("sc-8"));  // unchanged entries are the same objects
  EXPECT_TRUE(b.erase("sc-9"));
  EXPECT_FALSE(b.erase("sc-9"));
  EXPECT_EQ(b.size(), 199u);
  EXPECT_NE(a.find("sc-9"), nullptr);
  size_t n = 0;
  b.for_each([&](const storage_class_info&) { ++n; });
  EXPECT_EQ(n, 199u);
}

TEST(VolumeObjects, CompilesAPersistentVolume) {
  auto pv = compile_pv(decode<k8s::core::PersistentVolume>(R"(
metadata:
  name: pv-1
  labels: {topology.kubernetes.io/zone: us-east-1b}
  annotations: {pv.kubernetes.io/bound-by-controller: "yes"}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  storageClassName: fast
  volumeMode: Block
  claimRef: {namespace: default, name: data, uid: u1}
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1b]}]
status: {phase: Bound}
)"));
  ASSERT_TRUE(pv.ok()) << pv.err().message;
  const pv_info& v = **pv;
  EXPECT_EQ(v.name, "pv-1");
  EXPECT_EQ(v.capacity_bytes, 10LL << 30);
  EXPECT_EQ(v.access_modes, access_rwo | access_rox);
  EXPECT_EQ(v.storage_class, "fast");
  EXPECT_TRUE(v.block_mode);
  ASSERT_TRUE(v.claim_ref);
  EXPECT_EQ(v.claim_ref->name, "data");
  EXPECT_EQ(v.source.kind, volume_source::csi);
  EXPECT_EQ(v.source.driver, "ebs.csi.aws.com");
  EXPECT_EQ(v.source.id, "vol-1");
  ASSERT_TRUE(v.node_affinity);
  EXPECT_TRUE(v.bound_by_controller);
  EXPECT_EQ(v.phase, "Bound");
}

TEST(VolumeObjects, ClaimClassTellsUnsetFromEmpty) {
  auto unset = compile_pvc(decode<k8s::core::PersistentVolumeClaim>("metadata: {name: a}\nspec: {}\n"));
  auto empty = compile_pvc(decode<k8s::core::PersistentVolumeClaim>("metadata: {name: b}\nspec: {storageClassName: \"\"}\n"));
  auto beta = compile_pvc(decode<k8s::core::PersistentVolumeClaim>(
    "metadata: {name: c, annotations: {volume.beta.kubernetes.io/storage-class: old}}\nspec: {storageClassName: new}\n"));
  ASSERT_TRUE(unset.ok() && empty.ok() && beta.ok());
  EXPECT_FALSE((*unset)->storage_class.has_value());
  EXPECT_EQ((*unset)->ns, "default");
  ASSERT_TRUE((*empty)->storage_class.has_value());
  EXPECT_EQ(*(*empty)->storage_class, "");
  EXPECT_EQ((*beta)->class_name(), "old");  // the beta annotation wins, as kube's GetPersistentVolumeClaimClass
}

TEST(VolumeObjects, BadFieldsNameTheirPath) {
  struct bad {
    std::string yaml;
    std::string error;
  };
  for (const auto& c : std::vector<bad>{
         {"metadata: {name: a}\nspec: {accessModes: [ReadWriteSometimes]}\n", "spec.accessModes[0]: Unsupported value"},
         {"metadata: {name: a}\nspec: {resources: {requests: {storage: \"-1\"}}}\n",
          "spec.resources.requests.storage: must be greater than or equal to 0"},
         {"metadata: {name: a}\nspec: {volumeMode: Raw}\n", "spec.volumeMode: Unsupported value: \"Raw\""},
       }) {
    auto r = compile_pvc(decode<k8s::core::PersistentVolumeClaim>(c.yaml));
    ASSERT_FALSE(r.ok()) << c.yaml;
    EXPECT_NE(r.err().message.find(c.error), std::string::npos) << r.err().message;
  }
  auto sc = compile_storage_class(decode<k8s::storage::StorageClass>("metadata: {name: s}\nvolumeBindingMode: Later\n"));
  ASSERT_FALSE(sc.ok());
  EXPECT_NE(sc.err().message.find("volumeBindingMode: Unsupported value: \"Later\""), std::string::npos);
  auto node = compile_csi_node(decode<k8s::storage::CSINode>(
    "metadata: {name: n}\nspec: {drivers: [{name: d, nodeID: x, allocatable: {count: -1}}]}\n"));
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.err().message.find("spec.drivers[0].allocatable.count"), std::string::npos);
  auto cap = compile_csi_storage_capacity(decode<k8s::storage::CSIStorageCapacity>("metadata: {name: c}\n"));
  ASSERT_FALSE(cap.ok());
  EXPECT_NE(cap.err().message.find("storageClassName: Required value"), std::string::npos);
}

TEST(VolumeObjects, CSINodeLimitsAndMigratedPlugins) {
  auto n = compile_csi_node(decode<k8s::storage::CSINode>(R"(
metadata:
  name: node-1
  annotations: {storage.alpha.kubernetes.io/migrated-plugins: "kubernetes.io/aws-ebs, kubernetes.io/gce-pd"}
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: i-1, allocatable: {count: 39}, topologyKeys: [topology.ebs.csi.aws.com/zone]}
  - {name: other, nodeID: i-1}
)"));
  ASSERT_TRUE(n.ok()) << n.err().message;
  ASSERT_NE((*n)->driver("ebs.csi.aws.com"), nullptr);
  EXPECT_EQ(*(*n)->driver("ebs.csi.aws.com")->allocatable_count, 39);
  EXPECT_FALSE((*n)->driver("other")->allocatable_count.has_value());
  EXPECT_EQ((*n)->migrated_plugins, (std::vector<std::string>{"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"}));
}

TEST(VolumeChange, LabelsAndFolding) {
  auto a = compile_pvc(decode<k8s::core::PersistentVolumeClaim>("metadata: {name: a}\nspec: {}\n"));
  auto b = compile_pvc(decode<k8s::core::PersistentVolumeClaim>("metadata: {name: a}\nspec: {volumeName: pv}\n"));
  ASSERT_TRUE(a.ok() && b.ok());
  auto add = pvc_change(nullptr, *a);
  auto update = pvc_change(*a, *b);
  auto del = pvc_change(*b, nullptr);
  EXPECT_EQ(add.label(), "PersistentVolumeClaimAdd");
  EXPECT_EQ(update.label(), "PersistentVolumeClaimUpdate");
  EXPECT_EQ(del.label(), "PersistentVolumeClaimDelete");
  EXPECT_EQ(add.key, "c:default/a");
  auto folded = fold_volume_changes(add, update);
  EXPECT_FALSE(folded.has_old());
  EXPECT_EQ(folded.new_pvc, *b);
  volume_objects v;
  apply_volume_change(v, add);
  EXPECT_NE(v.claim("default", "a"), nullptr);
  apply_volume_change(v, update);
  EXPECT_EQ(v.claim("default", "a")->volume_name, "pv");
  apply_volume_change(v, del);
  EXPECT_EQ(v.claim("default", "a"), nullptr);
}

}  // namespace
}  // namespace kas::test

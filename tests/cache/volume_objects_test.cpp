// The storage objects' compiled forms and object_table's sharing.
#include "cache/volume_objects.hpp"

#include "cache/scheduler_cache.hpp"

#include <gtest/gtest.h>

#include "messages/k8s/core.pb.h"
#include "messages/k8s/storage.pb.h"
#include "tests/plugins/fixtures.hpp"

namespace kas::test {
namespace {

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

namespace kas::test {
namespace {

// The cache's assumed storage (kube's AssumePodVolumes): published at once, put back on forget,
// superseded by the cluster's own version.
TEST(SchedulerCacheVolumes, AssumedVolumesArePublishedRestoredAndSuperseded) {
  scheduler_cache c;
  auto free_pv = *compile_pv(decode<k8s::core::PersistentVolume>(
    "metadata: {name: pv1}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]}\nstatus: {phase: Available}\n"));
  auto claimed = *compile_pv(decode<k8s::core::PersistentVolume>(
    "metadata: {name: pv1}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], claimRef: {namespace: "
    "default, name: data}}\nstatus: {phase: Available}\n"));
  c.apply_volume(pv_change(nullptr, free_pv));
  uint64_t before = c.snapshot_generation();
  EXPECT_FALSE(c.storage_changed_since(before));

  // A pod must be assumed for forget to apply; an assumption of storage alone is enough here.
  c.assume_volumes("uid-a", {pv_change(free_pv, claimed)});
  EXPECT_TRUE(c.storage_changed_since(before));
  ASSERT_TRUE(c.current()->objects().volumes.volume("pv1")->claim_ref);

  // The cluster's version replaces the assumption; nothing is put back later.
  auto bound = *compile_pv(decode<k8s::core::PersistentVolume>(
    "metadata: {name: pv1}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], claimRef: {namespace: "
    "default, name: data}}\nstatus: {phase: Bound}\n"));
  c.apply_volume(pv_change(free_pv, bound));
  EXPECT_EQ(c.current()->objects().volumes.volume("pv1")->phase, "Bound");
}

TEST(SchedulerCacheVolumes, ForgettingThePodPutsTheClustersVersionBack) {
  scheduler_cache c;
  auto node = std::make_shared<node_info>();
  node->name = "n1";
  c.add_or_update_node(node);
  auto free_pv = *compile_pv(decode<k8s::core::PersistentVolume>(
    "metadata: {name: pv1}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]}\nstatus: {phase: Available}\n"));
  auto claimed = *compile_pv(decode<k8s::core::PersistentVolume>(
    "metadata: {name: pv1}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], claimRef: {namespace: "
    "default, name: data}}\nstatus: {phase: Available}\n"));
  c.apply_volume(pv_change(nullptr, free_pv));
  auto pod = std::make_shared<pod_info>();
  pod->name = "a";
  pod->ns = "default";
  pod->uid = "uid-a";
  pod->node_name = "n1";
  ASSERT_TRUE(c.assume_pod(pod, "n1").ok());
  c.assume_volumes("uid-a", {pv_change(free_pv, claimed)});
  ASSERT_TRUE(c.current()->objects().volumes.volume("pv1")->claim_ref);
  ASSERT_TRUE(c.forget_pod("uid-a").ok());
  EXPECT_FALSE(c.current()->objects().volumes.volume("pv1")->claim_ref);
}

}  // namespace
}  // namespace kas::test

// VolumeAttachments: compiled form, change labels and the per-node index.
namespace kas::test {
namespace {

volume_attachment_info_ptr attachment(const std::string& name, const std::string& node, const std::string& pv) {
  std::string source = pv.empty() ? "{}" : "{persistentVolumeName: " + pv + "}";
  auto a = compile_volume_attachment(decode<k8s::storage::VolumeAttachment>(
    "metadata: {name: " + name + "}\nspec: {attacher: ebs.csi.aws.com, nodeName: " + node + ", source: " + source + "}"));
  EXPECT_TRUE(a.ok());
  return *a;
}

// The names of `node`'s attachments, in the index's order.
std::vector<std::string> on_node(const volume_objects& v, const std::string& node) {
  std::vector<std::string> out;
  if (const auto* n = v.attachments_on(node))
    for (const auto& a : n->items) out.push_back(a->name);
  return out;
}

TEST(VolumeAttachments, Compile) {
  auto a = attachment("va-1", "n1", "pv-1");
  EXPECT_EQ(a->name, "va-1");
  EXPECT_EQ(a->attacher, "ebs.csi.aws.com");
  EXPECT_EQ(a->node_name, "n1");
  EXPECT_EQ(a->pv_name, std::optional<std::string>("pv-1"));
  ASSERT_NE(a->attachment, nullptr);
  // An inline volume's attachment names no PV; an empty object compiles too (Filter skips it).
  EXPECT_FALSE(attachment("va-2", "n1", "")->pv_name.has_value());
  auto empty = compile_volume_attachment(decode<k8s::storage::VolumeAttachment>("metadata: {name: e}\n"));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->attacher, "");
  EXPECT_EQ((*empty)->node_name, "");
}

TEST(VolumeAttachments, LabelsAndKeys) {
  auto a = attachment("va-1", "n1", "pv-1");
  auto b = attachment("va-1", "n1", "pv-2");
  EXPECT_EQ(volume_attachment_change(nullptr, a).label(), "VolumeAttachmentAdd");
  EXPECT_EQ(volume_attachment_change(a, b).label(), "VolumeAttachmentUpdate");
  EXPECT_EQ(volume_attachment_change(b, nullptr).label(), "VolumeAttachmentDelete");
  EXPECT_EQ(volume_attachment_change(a, nullptr).key, "va:va-1");
  auto folded = fold_volume_changes(volume_attachment_change(nullptr, a), volume_attachment_change(a, b));
  EXPECT_FALSE(folded.has_old());
  EXPECT_EQ(folded.new_attachment, b);
}

// apply_volume_change keeps the per-node index in step with the table: adds, updates, a node
// change, deletes, and a node's entry gone with its last attachment.
TEST(VolumeAttachments, NodeIndex) {
  volume_objects v;
  auto b1 = attachment("b", "n1", "pv-b");
  auto a1 = attachment("a", "n1", "pv-a");
  auto c2 = attachment("c", "n2", "pv-c");
  apply_volume_change(v, volume_attachment_change(nullptr, b1));
  apply_volume_change(v, volume_attachment_change(nullptr, a1));
  apply_volume_change(v, volume_attachment_change(nullptr, c2));
  EXPECT_FALSE(v.empty());
  EXPECT_EQ(v.attachments.size(), 3u);
  EXPECT_EQ(on_node(v, "n1"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(on_node(v, "n2"), (std::vector<std::string>{"c"}));
  EXPECT_EQ(v.attachments_on("n3"), nullptr);

  // An update on the same node replaces the entry the index holds.
  auto b1_next = attachment("b", "n1", "pv-b2");
  apply_volume_change(v, volume_attachment_change(b1, b1_next));
  ASSERT_EQ(on_node(v, "n1"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(v.attachments_on("n1")->items[1], b1_next);
  EXPECT_EQ(v.attachments.find("b")->pv_name, std::optional<std::string>("pv-b2"));

  // A copy taken now keeps its view while the original moves "a" to n2.
  volume_objects before = v;
  apply_volume_change(v, volume_attachment_change(a1, attachment("a", "n2", "pv-a")));
  EXPECT_EQ(on_node(v, "n1"), (std::vector<std::string>{"b"}));
  EXPECT_EQ(on_node(v, "n2"), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(on_node(before, "n1"), (std::vector<std::string>{"a", "b"}));

  // A folded change whose old state is older than the stored one still unindexes the stored node.
  apply_volume_change(v, fold_volume_changes(volume_attachment_change(nullptr, a1),
                                             volume_attachment_change(a1, attachment("a", "n3", "pv-a"))));
  EXPECT_EQ(on_node(v, "n2"), (std::vector<std::string>{"c"}));
  EXPECT_EQ(on_node(v, "n3"), (std::vector<std::string>{"a"}));

  apply_volume_change(v, volume_attachment_change(v.attachments.get("a"), nullptr));
  apply_volume_change(v, volume_attachment_change(b1_next, nullptr));
  EXPECT_EQ(v.attachments_on("n1"), nullptr);
  EXPECT_EQ(v.attachments_on("n3"), nullptr);
  EXPECT_EQ(on_node(v, "n2"), (std::vector<std::string>{"c"}));
  EXPECT_EQ(v.attachments_by_node.size(), 1u);
  apply_volume_change(v, volume_attachment_change(c2, nullptr));
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(v.attachments_by_node.empty());
}

}  // namespace
}  // namespace kas::test

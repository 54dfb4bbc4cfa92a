// The storage kinds in `simulate` manifests (PersistentVolume, PersistentVolumeClaim, StorageClass,
// CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment and their Lists): each shape kubectl prints loads into
// cluster_objects::volumes under the listers' keys, and every bad input is one error naming the
// file, the document (and List item) and the field path.
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/cluster_manifests.hpp"
#include "config/manifest_objects.hpp"

namespace kas {
namespace {

// A fresh file in the test temp dir; the pid keeps parallel test processes apart.
std::string temp_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "kas_storage_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

constexpr int64_t gi = int64_t{1} << 30;

label_map labels(std::vector<label_map::entry> entries) { return label_map(std::move(entries)); }

// One object of each kind, and a pod that uses the claim. The claim and the first capacity omit
// their namespace: both land in "default".
const char* storage_yaml = R"(apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-a
  labels: {tier: gold}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  storageClassName: fast
  claimRef: {namespace: default, name: data, uid: u-1}
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [z1]}]
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  annotations: {volume.kubernetes.io/selected-node: n1}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  volumeName: pv-a
  volumeMode: Filesystem
  resources: {requests: {storage: 5Gi}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [z1, z2]}]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: i-1, topologyKeys: [topology.kubernetes.io/zone], allocatable: {count: 25}}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {attachRequired: false, storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-1}
storageClassName: fast
capacity: 100Gi
maximumVolumeSize: 50Gi
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: z1}}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-2, namespace: storage}
storageClassName: fast
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
)";

// The same objects as a JSON `kind: List`.
const char* storage_json = R"({"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "PersistentVolume",
  "metadata": {"name": "pv-a", "labels": {"tier": "gold"}},
  "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
           "storageClassName": "fast", "claimRef": {"namespace": "default", "name": "data", "uid": "u-1"},
           "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
           "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]}]}}},
  "status": {"phase": "Bound"}},
 {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
  "metadata": {"name": "data", "annotations": {"volume.kubernetes.io/selected-node": "n1"}},
  "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast", "volumeName": "pv-a",
           "volumeMode": "Filesystem", "resources": {"requests": {"storage": "5Gi"}}}},
 {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
  "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
  "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["z1", "z2"]}]}]},
 {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
  "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1",
                        "topologyKeys": ["topology.kubernetes.io/zone"], "allocatable": {"count": 25}}]}},
 {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "ebs.csi.aws.com"},
  "spec": {"attachRequired": false, "storageCapacity": true}},
 {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "cap-1"},
  "storageClassName": "fast", "capacity": "100Gi", "maximumVolumeSize": "50Gi",
  "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "z1"}}},
 {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
  "metadata": {"name": "cap-2", "namespace": "storage"}, "storageClassName": "fast"},
 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
  "spec": {"containers": [{"name": "c"}], "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}}
]})";

// What storage_yaml / storage_json compile into.
void expect_storage_objects(const cluster_input& in) {
  const volume_objects& v = in.objects->volumes;
  ASSERT_EQ(v.pvs.size(), 1u);
  const pv_info* pv = v.volume("pv-a");
  ASSERT_NE(pv, nullptr);
  EXPECT_EQ(pv->capacity_bytes, 10 * gi);
  EXPECT_EQ(pv->access_modes, access_rwo | access_rox);
  EXPECT_EQ(pv->storage_class, "fast");
  EXPECT_FALSE(pv->block_mode);
  ASSERT_TRUE(pv->claim_ref.has_value());
  EXPECT_EQ(pv->claim_ref->ns, "default");
  EXPECT_EQ(pv->claim_ref->name, "data");
  EXPECT_EQ(pv->claim_ref->uid, "u-1");
  EXPECT_EQ(pv->phase, "Bound");
  ASSERT_TRUE(pv->node_affinity.has_value());
  EXPECT_TRUE(pv->node_affinity->matches(labels({{"topology.kubernetes.io/zone", "z1"}}), "n1"));
  EXPECT_FALSE(pv->node_affinity->matches(labels({{"topology.kubernetes.io/zone", "z2"}}), "n1"));
  EXPECT_EQ(pv->source.kind, volume_source::csi);
  EXPECT_EQ(pv->source.driver, "ebs.csi.aws.com");
  EXPECT_EQ(pv->source.id, "vol-1");
  ASSERT_NE(pv->labels.get("tier"), nullptr);
  EXPECT_EQ(*pv->labels.get("tier"), "gold");
  ASSERT_NE(pv->pv, nullptr);

  ASSERT_EQ(v.pvcs.size(), 1u);
  const pvc_info* pvc = v.claim("default", "data");
  ASSERT_NE(pvc, nullptr);
  EXPECT_EQ(pvc->key(), "default/data");
  EXPECT_EQ(pvc->class_name(), "fast");
  EXPECT_EQ(pvc->volume_name, "pv-a");
  EXPECT_EQ(pvc->access_modes, access_rwo);
  EXPECT_EQ(pvc->request_bytes, 5 * gi);
  EXPECT_FALSE(pvc->block_mode);
  EXPECT_EQ(pvc->selected_node, "n1");
  ASSERT_NE(pvc->pvc, nullptr);
  EXPECT_EQ(pvc->pvc->metadata().namespace_(), "default");  // the default applied to the object too

  ASSERT_EQ(v.classes.size(), 1u);
  const storage_class_info* sc = v.storage_class("fast");
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(sc->provisioner, "ebs.csi.aws.com");
  EXPECT_EQ(sc->binding_mode, volume_binding_mode::wait_for_first_consumer);
  ASSERT_EQ(sc->allowed_topologies.size(), 1u);
  ASSERT_EQ(sc->allowed_topologies[0].size(), 1u);
  EXPECT_EQ(sc->allowed_topologies[0][0].key, "topology.kubernetes.io/zone");
  EXPECT_EQ(sc->allowed_topologies[0][0].values, (std::vector<std::string>{"z1", "z2"}));

  ASSERT_EQ(v.csi_nodes.size(), 1u);
  const csi_node_info* cn = v.csi_node("n1");
  ASSERT_NE(cn, nullptr);
  const csi_node_driver* d = cn->driver("ebs.csi.aws.com");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->node_id, "i-1");
  EXPECT_EQ(d->allocatable_count, 25);
  EXPECT_EQ(d->topology_keys, (std::vector<std::string>{"topology.kubernetes.io/zone"}));

  ASSERT_EQ(v.csi_drivers.size(), 1u);
  const csi_driver_info* drv = v.csi_driver("ebs.csi.aws.com");
  ASSERT_NE(drv, nullptr);
  EXPECT_FALSE(drv->attach_required);
  EXPECT_TRUE(drv->storage_capacity);

  ASSERT_EQ(v.capacities.size(), 2u);
  auto cap1 = v.capacities.get("default/cap-1");
  ASSERT_NE(cap1, nullptr);
  EXPECT_EQ(cap1->storage_class, "fast");
  EXPECT_EQ(cap1->capacity_bytes, 100 * gi);
  EXPECT_EQ(cap1->maximum_volume_size_bytes, 50 * gi);
  ASSERT_TRUE(cap1->node_topology.has_value());
  EXPECT_TRUE(cap1->node_topology->matches(labels({{"topology.kubernetes.io/zone", "z1"}})));
  auto cap2 = v.capacities.get("storage/cap-2");
  ASSERT_NE(cap2, nullptr);
  EXPECT_FALSE(cap2->capacity_bytes.has_value());
  EXPECT_FALSE(cap2->node_topology.has_value());  // nil: matches no node

  // A claim's or a capacity's namespace exists, as a pod's does.
  EXPECT_NE(in.objects->namespace_labels_of("default"), nullptr);
  EXPECT_NE(in.objects->namespace_labels_of("storage"), nullptr);

  ASSERT_EQ(in.pending_pods.size(), 1u);
  ASSERT_EQ(in.pending_pods[0]->volumes.size(), 1u);
  EXPECT_EQ(in.pending_pods[0]->volumes[0].claim_name, "data");
  EXPECT_NE(v.claim(in.pending_pods[0]->ns, in.pending_pods[0]->volumes[0].claim_name), nullptr);
}

result<cluster_input> load_and_compile(const std::vector<std::string>& files, manifest_options opts = {}) {
  auto m = load_manifests(files, opts);
  if (!m) return m.err();
  return compile_cluster(*m);
}

TEST(StorageManifests, YamlDocuments) {
  std::string f = temp_file("storage.yaml", storage_yaml);
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  EXPECT_TRUE(m->warnings.empty()) << m->warnings[0];  // nothing skipped any more
  ASSERT_EQ(m->pvs.size(), 1u);
  ASSERT_EQ(m->pvcs.size(), 1u);
  ASSERT_EQ(m->storage_classes.size(), 1u);
  ASSERT_EQ(m->csi_nodes.size(), 1u);
  ASSERT_EQ(m->csi_drivers.size(), 1u);
  ASSERT_EQ(m->csi_storage_capacities.size(), 2u);
  EXPECT_EQ(m->pvs[0].second.describe(), f + ": document 1 (PersistentVolume pv-a)");
  EXPECT_EQ(m->pvcs[0].second.describe(), f + ": document 2 (PersistentVolumeClaim default/data)");
  EXPECT_EQ(m->storage_classes[0].second.describe(), f + ": document 3 (StorageClass fast)");
  EXPECT_EQ(m->csi_nodes[0].second.describe(), f + ": document 4 (CSINode n1)");
  EXPECT_EQ(m->csi_drivers[0].second.describe(), f + ": document 5 (CSIDriver ebs.csi.aws.com)");
  EXPECT_EQ(m->csi_storage_capacities[0].second.describe(), f + ": document 6 (CSIStorageCapacity default/cap-1)");
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  expect_storage_objects(*c);
}

TEST(StorageManifests, JsonList) {
  std::string f = temp_file("storage.json", storage_json);
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  EXPECT_TRUE(m->warnings.empty()) << m->warnings[0];
  ASSERT_EQ(m->csi_storage_capacities.size(), 2u);
  EXPECT_EQ(m->csi_storage_capacities[1].second.describe(),
            f + ": document 1 item 7 (CSIStorageCapacity storage/cap-2)");
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  expect_storage_objects(*c);
}

// The YAML documents wrapped in a `kind: List`, as `kubectl get -o yaml` prints several kinds.
TEST(StorageManifests, YamlKindList) {
  std::string items;
  std::string text = storage_yaml;
  text += "---\n";
  for (size_t start = 0, end; (end = text.find("---\n", start)) != std::string::npos; start = end + 4) {
    std::string one = text.substr(start, end - start);
    std::string indented = "- ";
    for (size_t i = 0; i < one.size(); ++i) {
      indented += one[i];
      if (one[i] == '\n' && i + 1 < one.size()) indented += "  ";
    }
    items += indented;
  }
  std::string f = temp_file("storage_list.yaml", "apiVersion: v1\nkind: List\nitems:\n" + items);
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  EXPECT_EQ(m->storage_classes[0].second.describe(), f + ": document 1 item 3 (StorageClass fast)");
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  expect_storage_objects(*c);
}

// Typed lists, as the apiserver returns them: items without kind or apiVersion.
TEST(StorageManifests, TypedLists) {
  std::string f = temp_file("typed.yaml", R"(apiVersion: v1
kind: PersistentVolumeList
items:
- metadata: {name: pv-1}
  spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOncePod], volumeMode: Block, hostPath: {path: /d}}
- metadata: {name: pv-2}
  spec: {capacity: {storage: 2Gi}, accessModes: [ReadWriteMany], local: {path: /mnt}}
---
apiVersion: v1
kind: PersistentVolumeClaimList
items:
- metadata: {name: c1, namespace: team-a}
  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeMode: Block}
---
apiVersion: storage.k8s.io/v1
kind: StorageClassList
items:
- metadata: {name: std}
  provisioner: kubernetes.io/no-provisioner
  volumeBindingMode: Immediate
---
apiVersion: storage.k8s.io/v1
kind: CSINodeList
items:
- metadata: {name: n1}
  spec: {drivers: [{name: d.example.com, nodeID: x}]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriverList
items:
- metadata: {name: d.example.com}
  spec: {}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacityList
items:
- metadata: {name: cap, namespace: kube-system}
  storageClassName: std
  capacity: 1Ti
)");
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  EXPECT_TRUE(m->warnings.empty()) << m->warnings[0];  // typed list items carry no apiVersion: fine
  EXPECT_EQ(m->pvs[1].second.describe(), f + ": document 1 item 2 (PersistentVolume pv-2)");
  EXPECT_EQ(m->pvcs[0].second.describe(), f + ": document 2 item 1 (PersistentVolumeClaim team-a/c1)");
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  const volume_objects& v = c->objects->volumes;
  ASSERT_EQ(v.pvs.size(), 2u);
  EXPECT_EQ(v.volume("pv-1")->access_modes, access_rwop);
  EXPECT_TRUE(v.volume("pv-1")->block_mode);
  EXPECT_EQ(v.volume("pv-1")->source.kind, volume_source::host_path);
  EXPECT_EQ(v.volume("pv-2")->capacity_bytes, 2 * gi);
  EXPECT_EQ(v.volume("pv-2")->source.kind, volume_source::local);
  EXPECT_FALSE(v.volume("pv-2")->claim_ref.has_value());
  ASSERT_NE(v.claim("team-a", "c1"), nullptr);
  EXPECT_TRUE(v.claim("team-a", "c1")->block_mode);
  EXPECT_FALSE(v.claim("team-a", "c1")->storage_class.has_value());  // nil class, not ""
  EXPECT_EQ(v.storage_class("std")->binding_mode, volume_binding_mode::immediate);
  EXPECT_EQ(v.csi_node("n1")->driver("d.example.com")->allocatable_count, std::nullopt);
  EXPECT_TRUE(v.csi_driver("d.example.com")->attach_required);  // the default
  EXPECT_FALSE(v.csi_driver("d.example.com")->storage_capacity);
  ASSERT_NE(v.capacities.get("kube-system/cap"), nullptr);
  EXPECT_EQ(v.capacities.get("kube-system/cap")->capacity_bytes, int64_t{1} << 40);
  EXPECT_NE(c->objects->namespace_labels_of("team-a"), nullptr);
  EXPECT_NE(c->objects->namespace_labels_of("kube-system"), nullptr);
}

// The apiserver drops metadata.namespace on a cluster-scoped object; so does the loader.
TEST(StorageManifests, ClusterScopedKindsIgnoreNamespace) {
  std::string f = temp_file("pv_ns.yaml",
                            "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1, namespace: a}\n"
                            "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\n");
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  EXPECT_EQ(m->pvs[0].second.describe(), f + ": document 1 (PersistentVolume pv1)");
  EXPECT_EQ(m->pvs[0].first->metadata().namespace_(), "");
  auto c = compile_cluster(*m);
  ASSERT_FALSE(c.ok());  // one PersistentVolume, written twice
  EXPECT_NE(c.err().message.find("PersistentVolume \"pv1\" is already defined in"), std::string::npos)
    << c.err().message;
}

// VolumeAttachments load (NodeVolumeLimits counts them), a typed List too, with a namespace
// dropped as for any cluster-scoped kind, and land in the table and the per-node index.
TEST(StorageManifests, VolumeAttachments) {
  std::string f = temp_file("va.yaml", "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\n"
                                       "spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: "
                                       "pv1}}\nstatus: {attached: true}\n"
                                       "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachmentList\nitems:\n"
                                       "- metadata: {name: vb, namespace: x}\n"
                                       "  spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {}}\n");
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  EXPECT_TRUE(m->warnings.empty()) << m->warnings[0];
  ASSERT_EQ(m->volume_attachments.size(), 2u);
  EXPECT_EQ(m->volume_attachments[1].second.describe(), f + ": document 2 item 1 (VolumeAttachment vb)");
  EXPECT_EQ(m->volume_attachments[1].first->metadata().namespace_(), "");
  auto c = compile_cluster(*m);
  ASSERT_TRUE(c.ok()) << c.err().message;
  const volume_objects& v = c->objects->volumes;
  ASSERT_EQ(v.attachments.size(), 2u);
  const volume_attachment_info* va = v.attachments.find("va");
  ASSERT_NE(va, nullptr);
  EXPECT_EQ(va->attacher, "ebs.csi.aws.com");
  EXPECT_EQ(va->node_name, "n1");
  EXPECT_EQ(va->pv_name, std::optional<std::string>("pv1"));
  EXPECT_FALSE(v.attachments.find("vb")->pv_name.has_value());
  ASSERT_NE(v.attachments_on("n1"), nullptr);
  ASSERT_EQ(v.attachments_on("n1")->items.size(), 2u);
  EXPECT_EQ(v.attachments_on("n1")->items[0]->name, "va");
}

// Unknown fields of the storage kinds are found (messages/schema covers core/v1 and storage/v1).
TEST(StorageManifests, UnknownFields) {
  std::string f = temp_file("typos.yaml", R"(apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec: {capacty: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c1}
spec: {resources: {request: {storage: 1Gi}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: s}
provisioner: p
bindingMode: Immediate
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: d.x, allocatable: {cnt: 1}}]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: d.x}
spec: {attachRequird: false}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap}
storageClassName: s
nodeTopolgy: {}
)");
  auto m = load_manifests({f});
  ASSERT_TRUE(m.ok()) << m.err().message;
  const std::vector<std::string> want = {
    f + ": document 1 (PersistentVolume pv1): spec.capacty: unknown field",
    f + ": document 2 (PersistentVolumeClaim default/c1): spec.resources.request: unknown field",
    f + ": document 3 (StorageClass s): bindingMode: unknown field",
    f + ": document 4 (CSINode n1): spec.drivers[0].allocatable.cnt: unknown field",
    f + ": document 5 (CSIDriver d.x): spec.attachRequird: unknown field",
    f + ": document 6 (CSIStorageCapacity default/cap): nodeTopolgy: unknown field",
  };
  EXPECT_EQ(m->warnings, want);
  manifest_options strict;
  strict.strict = true;
  auto s = load_manifests({f}, strict);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err().message, f + ": document 1 (PersistentVolume pv1): spec.capacty: unknown field (--strict)");
}

// compile_objects on its own (without compile_cluster's uniqueness pass) still refuses two objects
// under one key.
TEST(StorageManifests, CompileObjectsRefusesDuplicateKeys) {
  cluster_manifests m;
  auto sc = std::make_shared<k8s::storage::StorageClass>();
  sc->mutable_metadata()->set_name("fast");
  m.storage_classes.emplace_back(sc, manifest_origin{"a.yaml", 1, -1, "StorageClass", "", "fast"});
  m.storage_classes.emplace_back(sc, manifest_origin{"a.yaml", 2, -1, "StorageClass", "", "fast"});
  auto objs = compile_objects(m, {});
  ASSERT_FALSE(objs.ok());
  EXPECT_EQ(objs.err().message, "a.yaml: document 2 (StorageClass fast): StorageClass fast is defined twice");
}

struct error_case {
  std::string name;
  std::string yaml;
  std::vector<std::string> want;  // substrings of the one error; "FILE" stands for the file's path
};

// Keeps gtest from dumping the struct's bytes in failure lines.
void PrintTo(const error_case& c, std::ostream* os) { *os << c.name; }

class StorageManifestErrors : public ::testing::TestWithParam<error_case> {};

TEST_P(StorageManifestErrors, NamesFileDocumentAndField) {
  const error_case& c = GetParam();
  std::string f = temp_file(c.name + ".yaml", c.yaml);
  auto r = load_and_compile({f});
  ASSERT_FALSE(r.ok()) << "expected an error";
  const std::string& msg = r.err().message;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  for (std::string w : c.want) {
    for (size_t at; (at = w.find("FILE")) != std::string::npos;) w.replace(at, 4, f);
    EXPECT_NE(msg.find(w), std::string::npos) << "missing \"" << w << "\" in: " << msg;
  }
}

const char* pv_head = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\n";
const char* pvc_head = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c1}\n";
const char* sc_head = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: p\n";

std::vector<error_case> error_cases() {
  return {
    {"pv_unsupported_access_mode", std::string(pv_head) + "spec: {accessModes: [ReadWriteOnce, ReadWriteSometimes]}\n",
     {"FILE: document 1 (PersistentVolume pv1): spec.accessModes[1]: Unsupported value: \"ReadWriteSometimes\": "
      "supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\""}},
    {"pvc_unsupported_access_mode", std::string(pvc_head) + "spec: {accessModes: [rwo]}\n",
     {"FILE: document 1 (PersistentVolumeClaim default/c1): spec.accessModes[0]: Unsupported value: \"rwo\""}},
    {"pv_bad_storage_quantity", std::string(pv_head) + "spec: {capacity: {storage: ten-gigs}}\n",
     {"FILE: document 1 (PersistentVolume pv1): spec.capacity.storage: "}},
    {"pv_negative_storage", std::string(pv_head) + "spec: {capacity: {storage: -1Gi}}\n",
     {"FILE: document 1 (PersistentVolume pv1): spec.capacity.storage: must be greater than or equal to 0"}},
    {"pvc_bad_storage_quantity", std::string(pvc_head) + "spec: {resources: {requests: {storage: 5GB!}}}\n",
     {"FILE: document 1 (PersistentVolumeClaim default/c1): spec.resources.requests.storage: "}},
    {"pv_unsupported_volume_mode", std::string(pv_head) + "spec: {volumeMode: Raw}\n",
     {"FILE: document 1 (PersistentVolume pv1): spec.volumeMode: Unsupported value: \"Raw\": supported values: "
      "\"Block\", \"Filesystem\""}},
    {"pvc_unsupported_volume_mode", std::string(pvc_head) + "spec: {volumeMode: block}\n",
     {"FILE: document 1 (PersistentVolumeClaim default/c1): spec.volumeMode: Unsupported value: \"block\""}},
    {"pvc_bad_selector", std::string(pvc_head) + "spec: {selector: {matchExpressions: [{key: a, operator: In}]}}\n",
     {"FILE: document 1 (PersistentVolumeClaim default/c1): spec.selector.matchExpressions[0].values: Required value"}},
    {"csinode_negative_allocatable_count",
     "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\n"
     "spec: {drivers: [{name: a.b, allocatable: {count: 1}}, {name: c.d, allocatable: {count: -3}}]}\n",
     {"FILE: document 1 (CSINode n1): spec.drivers[1].allocatable.count: Invalid value: -3: must be greater than or "
      "equal to 0"}},
    {"csinode_driver_without_name",
     "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\nspec: {drivers: [{nodeID: x}]}\n",
     {"FILE: document 1 (CSINode n1): spec.drivers[0].name: Required value"}},
    {"storageclass_unsupported_binding_mode", std::string(sc_head) + "volumeBindingMode: Later\n",
     {"FILE: document 1 (StorageClass s): volumeBindingMode: Unsupported value: \"Later\": supported values: "
      "\"Immediate\", \"WaitForFirstConsumer\""}},
    {"storageclass_topology_without_values",
     std::string(sc_head) + "allowedTopologies: [{matchLabelExpressions: [{key: zone}]}]\n",
     {"FILE: document 1 (StorageClass s): allowedTopologies[0].matchLabelExpressions[0].values: Required value"}},
    {"csistoragecapacity_without_storage_class",
     "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: cap, namespace: ns1}\ncapacity: 1Gi\n",
     {"FILE: document 1 (CSIStorageCapacity ns1/cap): storageClassName: Required value"}},
    {"csistoragecapacity_bad_capacity",
     "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: cap}\nstorageClassName: s\n"
     "capacity: lots\n",
     {"FILE: document 1 (CSIStorageCapacity default/cap): capacity: "}},
    {"duplicate_pv", std::string(pv_head) + "---\n" + pv_head,
     {"FILE: document 2 (PersistentVolume pv1): PersistentVolume \"pv1\" is already defined in FILE: document 1 "
      "(PersistentVolume pv1)"}},
    {"duplicate_pvc_default_namespace",
     std::string(pvc_head) +
       "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c1, namespace: default}\n",
     {"FILE: document 2 (PersistentVolumeClaim default/c1): PersistentVolumeClaim default/c1 is already defined in "
      "FILE: document 1"}},
    {"duplicate_storage_class_in_list",
     "apiVersion: storage.k8s.io/v1\nkind: StorageClassList\nitems:\n- metadata: {name: s}\n- metadata: {name: s}\n",
     {"FILE: document 1 item 2 (StorageClass s): StorageClass \"s\" is already defined in FILE: document 1 item 1"}},
    {"duplicate_csi_storage_capacity",
     "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c}\nstorageClassName: s\n---\n"
     "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c}\nstorageClassName: s\n",
     {"FILE: document 2 (CSIStorageCapacity default/c): CSIStorageCapacity default/c is already defined"}},
    {"pod_empty_claim_name",
     "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
     "  volumes: [{name: a, emptyDir: {}}, {name: b, persistentVolumeClaim: {claimName: \"\"}}]\n",
     {"FILE: document 1 (Pod default/p): spec.volumes[1].persistentVolumeClaim.claimName: Required value"}},
    {"pv_in_storage_group", "apiVersion: storage.k8s.io/v1\nkind: PersistentVolume\nmetadata: {name: pv1}\n",
     {"FILE: document 1 (PersistentVolume pv1): apiVersion: \"storage.k8s.io/v1\" is not an API version of kind "
      "PersistentVolume (expected v1)"}},
    {"storage_class_in_core_group", "apiVersion: v1\nkind: StorageClass\nmetadata: {name: s}\n",
     {"FILE: document 1 (StorageClass s): apiVersion: \"v1\"", "(expected storage.k8s.io/v1)"}},
    {"pv_access_modes_not_a_list", std::string(pv_head) + "spec: {accessModes: ReadWriteOnce}\n",
     {"FILE: document 1 (PersistentVolume pv1): spec.accessModes"}},
    {"pv_bad_name", "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: Disk_1}\n",
     {"FILE: document 1 (PersistentVolume Disk_1): metadata.name: Invalid value: \"Disk_1\""}},
    {"pvc_bad_namespace", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, namespace: Team.A}\n",
     {"FILE: document 1 (PersistentVolumeClaim Team.A/c): metadata.namespace: Invalid value: \"Team.A\""}},
    {"csidriver_bad_name", "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: -driver}\n",
     {"FILE: document 1 (CSIDriver -driver): metadata.name: Invalid value: \"-driver\": must consist of alphanumeric "
      "characters"}},
    {"volumeattachment_without_attacher",
     "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\nspec: {nodeName: n1}\n",
     {"FILE: document 1 (VolumeAttachment va): spec.attacher: Required value"}},
    {"volumeattachment_bad_attacher",
     "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\n"
     "spec: {attacher: -d, nodeName: n1}\n",
     {"FILE: document 1 (VolumeAttachment va): spec.attacher: Invalid value: \"-d\": must consist of alphanumeric"}},
    {"volumeattachment_without_node",
     "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\nspec: {attacher: d.io}\n",
     {"FILE: document 1 (VolumeAttachment va): spec.nodeName: Required value"}},
    {"duplicate_volume_attachment",
     "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\n"
     "spec: {attacher: d.io, nodeName: n1}\n---\n"
     "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\n"
     "spec: {attacher: d.io, nodeName: n2}\n",
     {"FILE: document 2 (VolumeAttachment va): VolumeAttachment \"va\" is already defined in FILE: document 1"}},
    {"pvc_error_in_list_item",
     "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: PersistentVolumeClaim\n  metadata: {name: ok}\n"
     "- apiVersion: v1\n  kind: PersistentVolumeClaim\n  metadata: {name: bad, namespace: x}\n"
     "  spec: {accessModes: [Sometimes]}\n",
     {"FILE: document 1 item 2 (PersistentVolumeClaim x/bad): spec.accessModes[0]: Unsupported value"}},
  };
}

INSTANTIATE_TEST_SUITE_P(Errors, StorageManifestErrors, ::testing::ValuesIn(error_cases()),
                         [](const ::testing::TestParamInfo<error_case>& i) { return i.param.name; });

// A CSIDriver name is not a DNS subdomain: capitals and underscores are allowed, as upstream allows them.
TEST(StorageManifests, CsiDriverNames) {
  struct row {
    const char* name;
    bool ok;
  };
  const std::string too_long(64, 'a');
  const row rows[] = {
    {"ebs.csi.aws.com", true}, {"My_Driver.io", true}, {"ab", true},  {"a", false},
    {"-a", false},             {"a.", false},          {"a b", false}, {too_long.c_str(), false},
  };
  for (const auto& r : rows) {
    k8s::storage::CSIDriver d;
    d.mutable_metadata()->set_name(r.name);
    EXPECT_EQ(validate_storage_object(d).ok(), r.ok) << r.name;
  }
}

}  // namespace
}  // namespace kas

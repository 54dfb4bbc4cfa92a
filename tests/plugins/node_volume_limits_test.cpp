// NodeVolumeLimits: PreFilter/Filter cases from kube's csi_test.go (TestCSILimits), its
// QueueingHint tables, and the CSI translation the plugin relies on.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "cache/cluster_objects.hpp"
#include "messages/codec.hpp"
#include "messages/k8s/storage.pb.h"
#include "plugins/node_volume_limits/node_volume_limits.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_from_yaml;
using test::pod_from_yaml;

// --- storage objects from YAML, through the real compilers -----------------------------------

template <class Msg, class Compile>
auto compiled(std::string_view yaml, Compile compile) {
  auto msg = std::make_shared<Msg>();
  if (auto st = codec::decode_yaml(yaml, *msg); !st) throw std::runtime_error("fixture: " + st.err().message);
  auto r = compile(std::shared_ptr<const Msg>(msg));
  if (!r) throw std::runtime_error("fixture: " + r.err().message);
  return *r;
}

pv_info_ptr pv(std::string_view y) { return compiled<k8s::core::PersistentVolume>(y, compile_pv); }
pvc_info_ptr pvc(std::string_view y) { return compiled<k8s::core::PersistentVolumeClaim>(y, compile_pvc); }
storage_class_info_ptr storage_class(std::string_view y) {
  return compiled<k8s::storage::StorageClass>(y, compile_storage_class);
}
csi_node_info_ptr csi_node(std::string_view y) { return compiled<k8s::storage::CSINode>(y, compile_csi_node); }
volume_attachment_info_ptr attachment(std::string_view y) {
  return compiled<k8s::storage::VolumeAttachment>(y, compile_volume_attachment);
}

struct objects_builder {
  cluster_objects objs;
  // Keyed as the listers key them (claims by "ns/name").
  void add(const pv_info_ptr& p) { objs.volumes.pvs.put(p->name, p); }
  void add(const pvc_info_ptr& p) { objs.volumes.pvcs.put(p->key(), p); }
  void add(const storage_class_info_ptr& s) { objs.volumes.classes.put(s->name, s); }
  void add(const csi_node_info_ptr& n) { objs.volumes.csi_nodes.put(n->name, n); }
  void add(const volume_attachment_info_ptr& a) {
    apply_volume_change(objs.volumes, volume_attachment_change(nullptr, a));
  }
  snapshot snap() const { return snapshot().with_objects(std::make_shared<const cluster_objects>(objs), 1); }
};

std::shared_ptr<node_volume_limits> make_plugin() {
  auto p = node_volume_limits::make(YAML::Node(), "pluginConfig[0].args", fw::handle{});
  if (!p) throw std::runtime_error(p.err().message);
  return std::dynamic_pointer_cast<node_volume_limits>(*p);
}

// --- kube's csi_test.go fixtures ---------------------------------------------------------------

constexpr std::string_view node_name = "node-for-max-pd-test-1";
constexpr std::string_view sc_name = "csi-sc";
const std::string ebs_driver(csi_migration::aws_ebs_driver);
const std::string gce_driver(csi_migration::gce_pd_driver);
const std::string ebs_in_tree(csi_migration::aws_ebs_plugin);
const std::string hostpath_in_tree = "kubernetes.io/hostpath";

// getFakeCSIPVLister / getFakeCSIPVCLister / getFakeCSIStorageClassLister: per driver, four
// bound claims "csi-<driver>-<j>" (in-tree AWS EBS and hostPath PVs for those plugin names), plus
// csi-4 (unbound, StorageClass csi-sc), csi-5 (unbound, no class) and csi-6 (its PV missing).
void add_upstream_volumes(objects_builder& b, const std::vector<std::string>& drivers) {
  for (const auto& d : drivers)
    for (int j = 0; j < 4; ++j) {
      std::string name = "csi-" + d + "-" + std::to_string(j);
      std::string source = "csi: {driver: \"" + d + "\", volumeHandle: \"" + name + "\"}";
      if (d == ebs_in_tree) source = "awsElasticBlockStore: {volumeID: \"" + name + "\"}";
      if (d == hostpath_in_tree) source = "hostPath: {path: /tmp}";
      b.add(pv("metadata: {name: \"" + name + "\"}\nspec: {" + source + "}"));
      b.add(pvc("metadata: {name: \"" + name + "\", namespace: default}\nspec: {volumeName: \"" + name + "\"}"));
    }
  b.add(pvc("metadata: {name: csi-4, namespace: default}\nspec: {storageClassName: csi-sc}"));
  b.add(pvc("metadata: {name: csi-5, namespace: default}\nspec: {}"));
  b.add(pvc(
    "metadata: {name: csi-6, namespace: default}\nspec: {storageClassName: csi-sc, volumeName: missing-in-action}"));
  b.add(storage_class("metadata: {name: " + std::string(sc_name) + "}\nprovisioner: \"" + drivers.front() + "\""));
}

// getFakeVolumeAttachmentLister: per driver, `count` attachments "va-<driver>-<j>" on the test node
// of the PVs csi-<driver>-<j>.
void add_upstream_attachments(objects_builder& b, int count, const std::vector<std::string>& drivers) {
  for (const auto& d : drivers)
    for (int j = 0; j < count; ++j)
      b.add(attachment("metadata: {name: \"va-" + d + "-" + std::to_string(j) + "\"}\nspec: {nodeName: " +
                       std::string(node_name) + ", attacher: \"" + d + "\", source: {persistentVolumeName: \"csi-" + d +
                       "-" + std::to_string(j) + "\"}}"));
}

// getNodeWithPodAndVolumeLimits: "csinode" lists every driver with the limit,
// "csinode-with-no-limit" lists them without, "" has no CSINode. enableMigrationOnNode's
// annotation is set too, though v1.36 does not read it.
void add_upstream_csi_node(objects_builder& b, std::string_view source, int32_t limit,
                           const std::vector<std::string>& drivers) {
  if (source.empty()) return;
  std::string y = "metadata:\n  name: " + std::string(node_name) +
                  "\n  annotations: {storage.alpha.kubernetes.io/migrated-plugins: kubernetes.io/aws-ebs}\n"
                  "spec:\n  drivers:\n";
  for (const auto& d : drivers) {
    y += "  - {name: \"" + d + "\", nodeID: " + std::string(node_name);
    if (source == "csinode") y += ", allocatable: {count: " + std::to_string(limit) + "}";
    y += "}\n";
  }
  if (drivers.empty()) y = "metadata: {name: " + std::string(node_name) + "}\nspec: {drivers: []}";
  b.add(csi_node(y));
}

std::string pod_yaml(const std::string& name, const std::string& ns, const std::string& uid,
                     const std::vector<std::string>& volumes) {
  std::string y =
    "metadata: {name: " + name + ", namespace: " + ns + ", uid: \"" + uid + "\"}\nspec:\n  containers: [{name: c}]\n";
  if (volumes.empty()) return y;
  y += "  volumes:\n";
  for (const auto& v : volumes) y += "  - " + v + "\n";
  return y;
}

// st.MakePod().PVC(...): a pod using these claims.
pod_info_ptr claims_pod(const std::string& name, const std::vector<std::string>& claims) {
  std::vector<std::string> vols;
  for (size_t i = 0; i < claims.size(); ++i)
    vols.push_back("{name: v" + std::to_string(i) + ", persistentVolumeClaim: {claimName: \"" + claims[i] + "\"}}");
  return pod_from_yaml(pod_yaml(name, "default", name, vols));
}

pod_info_ptr volumes_pod(const std::string& name, const std::string& ns, const std::string& uid,
                         const std::vector<std::string>& volumes) {
  return pod_from_yaml(pod_yaml(name, ns, uid, volumes));
}

pvc_info_ptr ephemeral_claim(const std::string& name, const std::string& owner, const std::string& owner_uid) {
  std::string owners = owner.empty() ? ""
                                     : ", ownerReferences: [{apiVersion: v1, kind: Pod, name: " + owner + ", uid: \"" +
                                         owner_uid + "\", controller: true}]";
  return pvc("metadata: {name: " + name + ", namespace: test" + owners + "}\nspec: {storageClassName: csi-sc}");
}

struct csi_limits_case {
  std::string name;
  pod_info_ptr new_pod;
  std::vector<pod_info_ptr> existing;
  std::vector<pvc_info_ptr> extra_claims;
  int32_t max_vols = 0;
  std::vector<std::string> drivers;
  std::string limit_source;
  int va_count = 0;  // attachments per driver (add_upstream_attachments)
  fw::code want_code = fw::code::success;
  std::string want_message;
  bool want_pre_filter_skip = false;
};

// A case whose Filter passes, and one whose Filter returns `code` with `message`.
csi_limits_case fits(std::string name, pod_info_ptr pod, std::vector<pod_info_ptr> existing,
                     std::vector<pvc_info_ptr> claims, int32_t max_vols, std::vector<std::string> drivers,
                     std::string limit_source) {
  csi_limits_case c;
  c.name = std::move(name);
  c.new_pod = std::move(pod);
  c.existing = std::move(existing);
  c.extra_claims = std::move(claims);
  c.max_vols = max_vols;
  c.drivers = std::move(drivers);
  c.limit_source = std::move(limit_source);
  return c;
}

csi_limits_case fails(std::string name, pod_info_ptr pod, std::vector<pod_info_ptr> existing,
                      std::vector<pvc_info_ptr> claims, int32_t max_vols, std::vector<std::string> drivers,
                      std::string limit_source, fw::code code, std::string message) {
  auto c = fits(std::move(name), std::move(pod), std::move(existing), std::move(claims), max_vols, std::move(drivers),
                std::move(limit_source));
  c.want_code = code;
  c.want_message = std::move(message);
  return c;
}

std::vector<csi_limits_case> csi_limits_cases() {
  auto running = claims_pod("running", {"csi-ebs.csi.aws.com-3"});
  auto pending = claims_pod("pending", {"csi-4"});
  auto unbound2 = claims_pod("unbound2", {"csi-4"});
  auto missing_pv = claims_pod("missing-pv", {"csi-6"});
  auto no_sc = claims_pod("no-sc", {"csi-5"});
  auto gce_two = claims_pod("gce-two", {"csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2"});
  auto in_tree_one = claims_pod("in-tree-one", {"csi-kubernetes.io/aws-ebs-0"});
  auto in_tree_two = claims_pod("in-tree-two", {"csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2"});
  auto ebs_one = claims_pod("ebs-one", {"csi-ebs.csi.aws.com-0"});
  auto ebs_two = claims_pod("ebs-two", {"csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"});
  auto non_migratable = claims_pod("hostpath-one", {"csi-kubernetes.io/hostpath-0"});
  auto ephemeral = volumes_pod("abc", "test", "12345", {"{name: xyz, ephemeral: {}}"});
  auto ephemeral_two = volumes_pod("abc", "test", "12345II", {"{name: x, ephemeral: {}}", "{name: y, ephemeral: {}}"});
  auto claim = ephemeral_claim("abc-xyz", "abc", "12345");
  auto conflicting = ephemeral_claim("abc-xyz", "", "");
  auto claim_x = ephemeral_claim("abc-x", "abc", "12345II");
  auto claim_y = ephemeral_claim("abc-y", "abc", "12345II");
  const std::string cm = "{name: cm, configMap: {name: config}}", secret = "{name: s, secret: {secretName: creds}}";
  auto inline_ebs =
    volumes_pod("inline", "default", "inline", {"{name: ebs, awsElasticBlockStore: {volumeID: aws-inline1}}"});
  auto inline_same_id = volumes_pod("inline-same", "default", "inline-same",
                                    {"{name: ebs, awsElasticBlockStore: {volumeID: csi-ebs.csi.aws.com-1}}"});
  auto only_cm_secret = volumes_pod("cm-secret", "default", "cm-secret", {cm, secret});
  auto pvc_cm_secret =
    volumes_pod("pvc-cm-secret", "default", "pvc-cm-secret",
                {cm, secret, "{name: c, persistentVolumeClaim: {claimName: csi-ebs.csi.aws.com-0}}"});
  auto ephemeral_cm_secret = volumes_pod("abc", "test", "", {cm, secret, "{name: xyz, ephemeral: {}}"});
  auto inline_cm_secret = volumes_pod("inline-cm-secret", "default", "inline-cm-secret",
                                      {cm, secret, "{name: ebs, awsElasticBlockStore: {volumeID: aws-inline1}}"});

  const std::vector<std::string> ebs = {ebs_driver}, ebs_gce = {ebs_driver, gce_driver},
                                 migrated = {ebs_in_tree, ebs_driver}, hostpath = {hostpath_in_tree, ebs_driver};
  const auto unsched = fw::code::unschedulable;
  const std::string exceed(node_volume_limits::err_reason_max_volume_count);
  const std::string missing = "looking up PVC test/abc-xyz: persistentvolumeclaims \"abc-xyz\" not found";
  auto with_attachments = [](csi_limits_case c, int count) {
    c.va_count = count;
    return c;
  };
  std::vector<csi_limits_case> cases = {
    with_attachments(fails("should count VolumeAttachments towards volume limit when no pods exist", ebs_one, {}, {},
                           2, ebs, "csinode", unsched, exceed),
                     2),
    with_attachments(
      fits("should schedule pod when VolumeAttachments count does not exceed limit", ebs_one, {}, {}, 2, ebs, "csinode"),
      1),
    fits("fits when node volume limit >= new pods CSI volume", ebs_one, {running, ebs_two}, {}, 4, ebs, "csinode"),
    fails("doesn't when node volume limit <= pods CSI volume", ebs_one, {running, ebs_two}, {}, 2, ebs, "csinode",
          unsched, exceed),
    fits("should when driver does not support volume limits", ebs_one, {running, ebs_two}, {}, 2, ebs,
         "csinode-with-no-limit"),
    fails("count pending PVCs towards volume limit <= pods CSI volume", ebs_one, {pending, ebs_two}, {}, 2, ebs,
          "csinode", unsched, exceed),
    fits("count multiple pending pvcs towards volume limit >= pods CSI volume", ebs_one, {pending, unbound2, ebs_two},
         {}, 4, ebs, "csinode"),
    fails("should count PVCs with invalid PV name but valid SC", ebs_one, {missing_pv, ebs_two}, {}, 2, ebs, "csinode",
          unsched, exceed),
    fits("don't count pvcs with missing SC towards volume limit", ebs_one, {running, no_sc}, {}, 2, ebs, "csinode"),
    fails("count pvcs with the same type towards volume limit", ebs_one, {gce_two, ebs_two}, {}, 2, ebs_gce, "csinode",
          unsched, exceed),
    fits("don't count pvcs with different type towards volume limit", gce_two, {ebs_two, running}, {}, 2, ebs_gce,
         "csinode"),
    fails("should count in-tree volumes if migration is enabled", in_tree_one, {in_tree_two}, {}, 2, migrated,
          "csinode", unsched, exceed),
    fits("nil csi node", inline_ebs, {in_tree_two}, {}, 0, migrated, ""),
    fails("should count unbound in-tree volumes if migration is enabled", pending, {in_tree_two}, {}, 2, migrated,
          "csinode", unsched, exceed),
    fits("should not limit pod if volume used does not report limits", in_tree_one, {in_tree_two}, {}, 2, migrated,
         "csinode-with-no-limit"),
    fits("should not count non-migratable in-tree volumes", non_migratable, {ebs_two}, {}, 2, hostpath, "csinode"),
    fails("should count in-tree inline volumes if migration is enabled", inline_ebs, {in_tree_two}, {}, 2, migrated,
          "csinode", unsched, exceed),
    fails("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)", in_tree_one,
          {ebs_two}, {}, 2, migrated, "csinode", unsched, exceed),
    fails("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
          inline_ebs, {ebs_two, in_tree_one}, {}, 3, migrated, "csinode", unsched, exceed),
    fits("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
         inline_same_id, {ebs_two, in_tree_one}, {}, 3, migrated, "csinode"),
    fails("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", ebs_one,
          {in_tree_two}, {}, 2, migrated, "csinode", unsched, exceed),
    fails("ephemeral volume missing", ephemeral, {}, {}, 0, ebs, "csinode-with-no-limit",
          fw::code::unschedulable_and_unresolvable, missing),
    fails("ephemeral volume not owned", ephemeral, {}, {conflicting}, 0, ebs, "csinode-with-no-limit", fw::code::error,
          "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"),
    fits("ephemeral volume unbound", ephemeral, {}, {claim}, 0, ebs, "csinode-with-no-limit"),
    fails("ephemeral doesn't when node volume limit <= pods CSI volume", ephemeral, {running, ebs_two}, {claim}, 2, ebs,
          "csinode", unsched, exceed),
    fails("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", ebs_one, {running, ephemeral_two},
          {claim_x, claim_y}, 2, ebs, "csinode", unsched, exceed),
    fails(
      "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral disabled",
      ebs_one, {running, ephemeral, ebs_two}, {claim}, 3, ebs, "csinode", unsched, exceed),
    fails("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", ebs_one,
          {running, ephemeral, ebs_two}, {claim}, 3, ebs, "csinode", unsched, exceed),
    fits("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", ebs_one,
         {running, ephemeral, ebs_two}, {claim}, 5, ebs, "csinode"),
    fits("don't skip Filter when the pod has pvcs", pvc_cm_secret, {}, {}, 2, ebs, "csinode"),
    fails("don't skip Filter when the pod has ephemeral volumes", ephemeral_cm_secret, {}, {}, 0, ebs,
          "csinode-with-no-limit", fw::code::unschedulable_and_unresolvable, missing),
    fails("don't skip Filter when the pod has inline migratable volumes", inline_cm_secret, {in_tree_two}, {}, 2,
          migrated, "csinode", unsched, exceed),
  };
  auto skipped =
    fits("skip Filter when the pod only uses secrets and configmaps", only_cm_secret, {}, {}, 2, ebs, "csinode");
  skipped.want_pre_filter_skip = true;
  cases.insert(cases.end() - 3, std::move(skipped));
  return cases;
}

TEST(NodeVolumeLimits, CSILimits) {
  auto pl = make_plugin();
  for (const auto& tc : csi_limits_cases()) {
    objects_builder b;
    add_upstream_volumes(b, tc.drivers);
    for (const auto& extra : tc.extra_claims) b.add(extra);
    add_upstream_csi_node(b, tc.limit_source, tc.max_vols, tc.drivers);
    add_upstream_attachments(b, tc.va_count, tc.drivers);
    auto snap = b.snap();
    auto node = node_from_yaml("metadata: {name: " + std::string(node_name) + "}", tc.existing);
    fw::cycle_state state;
    fw::pre_filter_result r;
    auto pre = pl->pre_filter(state, *tc.new_pod, snap, r);
    EXPECT_EQ(pre.is_skip(), tc.want_pre_filter_skip) << tc.name;
    EXPECT_TRUE(pre.is_success() || pre.is_skip()) << tc.name;
    EXPECT_TRUE(r.all_nodes()) << tc.name;
    if (pre.is_skip()) continue;
    auto s = pl->filter(state, *tc.new_pod, *node);
    EXPECT_EQ(fw::to_string(s.get_code()), fw::to_string(tc.want_code)) << tc.name << ": " << s.message();
    EXPECT_EQ(s.message(), tc.want_message) << tc.name;
  }
}

// v1.36's isCSIMigrationOn needs a CSINode, not the migrated-plugins annotation on it.
TEST(NodeVolumeLimits, InTreeVolumesCountWithoutMigratedPluginsAnnotation) {
  auto pl = make_plugin();
  objects_builder b;
  add_upstream_volumes(b, {ebs_in_tree, ebs_driver});
  b.add(
    csi_node("metadata: {name: n1}\nspec: {drivers: [{name: ebs.csi.aws.com, nodeID: n1, allocatable: {count: 1}}]}"));
  auto snap = b.snap();
  auto node = node_from_yaml("metadata: {name: n1}", {claims_pod("on-node", {"csi-ebs.csi.aws.com-0"})});
  fw::cycle_state state;
  fw::pre_filter_result r;
  auto pod = claims_pod("new", {"csi-kubernetes.io/aws-ebs-1"});
  ASSERT_TRUE(pl->pre_filter(state, *pod, snap, r).is_success());
  EXPECT_EQ(test::reasons(pl->filter(state, *pod, *node)), "node(s) exceed max volume count");
  EXPECT_EQ(pl->explain(state, *pod, *node), "CSI driver ebs.csi.aws.com: 1 volume(s) in use + 1 new > limit 1");
}

// A pod already on the node whose ephemeral claim belongs to another pod fails Filter (kube's
// VolumeIsForPod error for existing pods), while its missing claims are only skipped.
TEST(NodeVolumeLimits, ExistingPodsClaims) {
  auto pl = make_plugin();
  objects_builder b;
  add_upstream_volumes(b, {ebs_driver});
  b.add(ephemeral_claim("abc-xyz", "", ""));
  b.add(
    csi_node("metadata: {name: n1}\nspec: {drivers: [{name: ebs.csi.aws.com, nodeID: n1, allocatable: {count: 2}}]}"));
  auto snap = b.snap();
  auto pod = claims_pod("new", {"csi-ebs.csi.aws.com-0"});
  struct tc {
    const char* name;
    pod_info_ptr on_node;
    fw::code want;
    std::string message;
  } cases[] = {
    {"missing claim of a pod on the node is skipped", claims_pod("gone", {"no-such-claim"}), fw::code::success, ""},
    {"foreign ephemeral claim of a pod on the node is an error",
     volumes_pod("abc", "test", "other-uid", {"{name: xyz, ephemeral: {}}"}), fw::code::error,
     "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"},
  };
  for (const auto& c : cases) {
    auto node = node_from_yaml("metadata: {name: n1}", {c.on_node});
    fw::cycle_state state;
    fw::pre_filter_result r;
    ASSERT_TRUE(pl->pre_filter(state, *pod, snap, r).is_success()) << c.name;
    auto s = pl->filter(state, *pod, *node);
    EXPECT_EQ(fw::to_string(s.get_code()), fw::to_string(c.want)) << c.name;
    EXPECT_EQ(s.message(), c.message) << c.name;
  }
}

// Without PreFilter state (a re-check outside the cycle) Filter reads the cycle's snapshot.
TEST(NodeVolumeLimits, FilterWithoutPreFilterState) {
  auto pl = make_plugin();
  objects_builder b;
  add_upstream_volumes(b, {ebs_driver});
  add_upstream_csi_node(b, "csinode", 1, {ebs_driver});
  auto snap = std::make_shared<const snapshot>(b.snap());
  auto node = node_from_yaml("metadata: {name: " + std::string(node_name) + "}",
                             {claims_pod("on-node", {"csi-ebs.csi.aws.com-1"})});
  auto pod = claims_pod("new", {"csi-ebs.csi.aws.com-0"});
  fw::cycle_state state;
  EXPECT_EQ(pl->filter(state, *pod, *node).get_code(), fw::code::error);
  state.set_snapshot(snap);
  EXPECT_EQ(test::reasons(pl->filter(state, *pod, *node)), "node(s) exceed max volume count");
}

// Which of the node's VolumeAttachments count (kube's getNodeVolumeAttachmentInfo). With a limit
// of 2, one counted attachment of csi-...-1 and the pod's one volume, one more counted volume is
// too many.
TEST(NodeVolumeLimits, VolumeAttachments) {
  auto pl = make_plugin();
  auto va = [](const std::string& name, const std::string& node, const std::string& attacher, const std::string& pv) {
    std::string source = pv.empty() ? "{}" : "{persistentVolumeName: " + pv + "}";
    return attachment("metadata: {name: " + name + "}\nspec: {nodeName: " + node + ", attacher: \"" + attacher +
                      "\", source: " + source + "}");
  };
  const std::string ebs_pv1 = "csi-ebs.csi.aws.com-1", ebs_pv2 = "csi-ebs.csi.aws.com-2";
  auto first = va("first", "n1", ebs_driver, ebs_pv1);
  struct tc {
    const char* name;
    std::vector<volume_attachment_info_ptr> attachments;
    std::vector<pod_info_ptr> on_node;
    bool want_fit;
  } cases[] = {
    {"one attachment fits", {first}, {}, true},
    {"a second CSI volume's attachment counts", {first, va("second", "n1", ebs_driver, ebs_pv2)}, {}, false},
    {"an attachment without attacher is skipped", {first, va("second", "n1", "", ebs_pv2)}, {}, true},
    {"an inline volume's attachment is skipped", {first, va("second", "n1", ebs_driver, "")}, {}, true},
    {"an attachment of a missing PV is skipped", {first, va("second", "n1", ebs_driver, "gone")}, {}, true},
    {"an attachment of a non-CSI PV is skipped", {first, va("second", "n1", ebs_driver, "in-tree")}, {}, true},
    {"an attachment on another node is skipped", {first, va("second", "n2", ebs_driver, ebs_pv2)}, {}, true},
    {"two attachments of one volume count once", {first, va("second", "n1", ebs_driver, ebs_pv1)}, {}, true},
    {"an attachment counts under its attacher", {first, va("second", "n1", "other.csi.example.com", ebs_pv2)}, {},
     true},
    {"a volume a pod on the node uses counts once", {va("second", "n1", ebs_driver, ebs_pv2)},
     {claims_pod("on-node", {ebs_pv2})}, true},
    {"a volume a pod on the node uses still counts", {first, va("second", "n1", ebs_driver, ebs_pv2)},
     {claims_pod("on-node", {ebs_pv2})}, false},
  };
  for (const auto& c : cases) {
    objects_builder b;
    add_upstream_volumes(b, {ebs_driver});
    b.add(pv("metadata: {name: in-tree}\nspec: {awsElasticBlockStore: {volumeID: vol-1}}"));
    b.add(csi_node(
      "metadata: {name: n1}\nspec: {drivers: [{name: ebs.csi.aws.com, nodeID: n1, allocatable: {count: 2}}]}"));
    for (const auto& a : c.attachments) b.add(a);
    auto snap = b.snap();
    auto node = node_from_yaml("metadata: {name: n1}", c.on_node);
    auto pod = claims_pod("new", {"csi-ebs.csi.aws.com-0"});
    fw::cycle_state state;
    fw::pre_filter_result r;
    ASSERT_TRUE(pl->pre_filter(state, *pod, snap, r).is_success()) << c.name;
    auto s = pl->filter(state, *pod, *node);
    EXPECT_EQ(s.is_success(), c.want_fit) << c.name << ": " << s.message();
    if (!c.want_fit) {
      EXPECT_EQ(test::reasons(s), "node(s) exceed max volume count") << c.name;
      EXPECT_EQ(pl->explain(state, *pod, *node), "CSI driver ebs.csi.aws.com: 2 volume(s) in use + 1 new > limit 2")
        << c.name;
    }
  }
}

TEST(NodeVolumeLimits, Translation) {
  using namespace csi_migration;
  struct ebs_case {
    const char* id;
    const char* want;  // nullptr: an error
  } ebs_cases[] = {
    {"vol-123", "vol-123"},
    {"aws://us-east-1a/vol-123", "vol-123"},
    {"aws:///vol-123", "vol-123"},
    {"aws://us-east-1a/foo", nullptr},
    {"aws://us-east-1a/a/vol-123", nullptr},
    {"aws://vol-123", nullptr},
  };
  for (const auto& c : ebs_cases) {
    volume_source s;
    s.kind = volume_source::aws_ebs;
    s.id = c.id;
    auto h = inline_volume_handle(s);
    EXPECT_EQ(h.ok(), c.want != nullptr) << c.id;
    if (h && c.want) {
      EXPECT_EQ(*h, c.want) << c.id;
    }
  }
  struct gce_case {
    const char* labels;
    const char* want;
  } gce_cases[] = {
    {"{}", "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd"},
    {"{topology.kubernetes.io/zone: us-central1-a}", "projects/UNSPECIFIED/zones/us-central1-a/disks/pd"},
    {"{failure-domain.beta.kubernetes.io/zone: us-central1-b, topology.kubernetes.io/zone: us-central1-a}",
     "projects/UNSPECIFIED/zones/us-central1-b/disks/pd"},
    {"{topology.kubernetes.io/zone: us-central1-a__us-central1-b}",
     "projects/UNSPECIFIED/regions/us-central1/disks/pd"},
    {"{topology.kubernetes.io/zone: us-central1-a__europe-west1-b}", nullptr},
  };
  for (const auto& c : gce_cases) {
    auto p = pv(std::string("metadata: {name: p, labels: ") + c.labels + "}\nspec: {gcePersistentDisk: {pdName: pd}}");
    auto h = pv_volume_handle(*p);
    EXPECT_EQ(h.ok(), c.want != nullptr) << c.labels;
    if (h && c.want) {
      EXPECT_EQ(*h, c.want) << c.labels;
    }
  }
  volume_source gce_inline;
  gce_inline.kind = volume_source::gce_pd;
  gce_inline.id = "pd";
  EXPECT_EQ(*inline_volume_handle(gce_inline), "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd");
  EXPECT_EQ(*pv_volume_handle(*pv("metadata: {name: a}\nspec: {azureDisk: {diskName: d, diskURI: /sub/d}}")), "/sub/d");
  EXPECT_EQ(*pv_volume_handle(*pv("metadata: {name: c}\nspec: {cinder: {volumeID: c-1}}")), "c-1");
  EXPECT_EQ(csi_driver_of("kubernetes.io/portworx-volume"), "pxd.portworx.com");
  EXPECT_TRUE(is_migratable_plugin("kubernetes.io/vsphere-volume"));
  EXPECT_FALSE(migration_ga("kubernetes.io/vsphere-volume"));
  EXPECT_FALSE(is_migratable_plugin("kubernetes.io/hostpath"));
  csi_node_info any_node;
  EXPECT_TRUE(migration_on(&any_node, "kubernetes.io/cinder"));
  EXPECT_FALSE(migration_on(nullptr, "kubernetes.io/cinder"));
}

// An unbound claim whose class has an in-tree provisioner counts under the CSI driver, or not at
// all for the provisioners kube translates but never counts (Azure File, vSphere).
TEST(NodeVolumeLimits, UnboundClaimProvisioners) {
  struct tc {
    const char* provisioner;
    bool want_counted;
    const char* want_driver;
  } cases[] = {
    {"kubernetes.io/gce-pd", true, "pd.csi.storage.gke.io"},
    {"kubernetes.io/portworx-volume", true, "pxd.portworx.com"},
    {"kubernetes.io/azure-file", false, ""},
    {"example.com/csi", true, "example.com/csi"},
  };
  for (const auto& c : cases) {
    objects_builder b;
    b.add(pvc("metadata: {name: claim, namespace: default}\nspec: {storageClassName: sc}"));
    b.add(storage_class(std::string("metadata: {name: sc}\nprovisioner: ") + c.provisioner));
    auto got = attachable_volumes(*claims_pod("p", {"claim"}), b.objs.volumes, true);
    ASSERT_EQ(got.size(), c.want_counted ? 1u : 0u) << c.provisioner;
    if (got.empty()) continue;
    EXPECT_EQ(got[0].driver, c.want_driver) << c.provisioner;
    EXPECT_TRUE(got[0].unbound_claim) << c.provisioner;
    EXPECT_EQ(got[0].handle, "default/claim") << c.provisioner;
  }
}

TEST(NodeVolumeLimits, SignPod) {
  auto pl = make_plugin();
  auto sign = [&](const pod_info_ptr& p) {
    std::string s;
    EXPECT_TRUE(pl->sign_pod(*p, s));
    return s;
  };
  const std::string cm = "{name: cm, configMap: {name: config}}";
  auto a = volumes_pod("a", "default", "a", {cm, "{name: v, persistentVolumeClaim: {claimName: data}}"});
  auto b = volumes_pod("b", "default", "b", {"{name: w, persistentVolumeClaim: {claimName: data}}"});
  auto other_ns = volumes_pod("c", "other", "c", {"{name: v, persistentVolumeClaim: {claimName: data}}"});
  auto other_claim = volumes_pod("d", "default", "d", {"{name: v, persistentVolumeClaim: {claimName: logs}}"});
  EXPECT_EQ(sign(a), sign(b));
  EXPECT_NE(sign(a), sign(other_ns));
  EXPECT_NE(sign(a), sign(other_claim));
}

// --- QueueingHints -------------------------------------------------------------------------------

TEST(NodeVolumeLimits, CSILimitsQHint) {
  namespace h = node_volume_limits_hints;
  auto pod = claims_pod("p", {"csi-ebs.csi.aws.com-2"});
  auto on_node = [](const std::string& name, const std::vector<std::string>& vols) {
    return with_node_name(*volumes_pod(name, "default", name, vols), "n1");
  };
  struct tc {
    const char* name;
    pod_info_ptr deleted;
    fw::queueing_hint want;
  } cases[] = {
    {"return a Queue when a deleted pod has a PVC",
     on_node("d1", {"{name: v, persistentVolumeClaim: {claimName: placeholder}}"}), fw::queueing_hint::queue},
    {"return a Queue when a deleted pod has a inline migratable volume",
     on_node("d2", {"{name: v, awsElasticBlockStore: {}}"}), fw::queueing_hint::queue},
    {"return a QueueSkip when a deleted pod doesn't have any volume", on_node("d3", {}), fw::queueing_hint::skip},
    {"return a QueueSkip when a deleted pod is not scheduled.", claims_pod("d4", {"csi-ebs.csi.aws.com-0"}),
     fw::queueing_hint::skip},
  };
  for (const auto& c : cases) EXPECT_EQ(h::assigned_pod_deleted(*pod, c.deleted.get()), c.want) << c.name;
}

TEST(NodeVolumeLimits, CSILimitsAddedPVCQHint) {
  namespace h = node_volume_limits_hints;
  const std::string pvc1 = "{name: v, persistentVolumeClaim: {claimName: pvc1}}";
  struct tc {
    const char* name;
    pod_info_ptr pod;
    pvc_info_ptr added;
    fw::queueing_hint want;
  } cases[] = {
    {"a pod isn't in the same namespace as an added PVC", volumes_pod("p", "ns1", "p", {}),
     pvc("metadata: {name: pvc, namespace: ns2}"), fw::queueing_hint::skip},
    {"a pod is in the same namespace as an added PVC", volumes_pod("p", "ns1", "p", {pvc1}),
     pvc("metadata: {name: pvc1, namespace: ns1}"), fw::queueing_hint::queue},
    {"a pod has an ephemeral volume related to an added PVC",
     volumes_pod("pod1", "ns1", "pod1", {"{name: ephemeral, ephemeral: {}}"}),
     pvc("metadata: {name: pod1-ephemeral, namespace: ns1}"), fw::queueing_hint::queue},
    {"a pod doesn't have the same PVC as an added PVC", volumes_pod("p", "ns1", "p", {pvc1}),
     pvc("metadata: {name: pvc2, namespace: ns1}"), fw::queueing_hint::skip},
    {"a pod doesn't have any PVC attached", volumes_pod("p", "ns1", "p", {}),
     pvc("metadata: {name: pvc2, namespace: ns1}"), fw::queueing_hint::skip},
  };
  for (const auto& c : cases) EXPECT_EQ(h::claim_added(*c.pod, c.added.get()), c.want) << c.name;
}

TEST(NodeVolumeLimits, CSILimitsDeletedVolumeAttachmentQHint) {
  namespace h = node_volume_limits_hints;
  const std::string claim = "{name: c, persistentVolumeClaim: {claimName: pvc1}}";
  const std::string aws = "{name: a, awsElasticBlockStore: {volumeID: test}}";
  const std::string gce = "{name: g, gcePersistentDisk: {pdName: test}}";
  // Upstream's: a PV's attachment by test.storage.gke.io, an inline volume's by ebs.csi.aws.com.
  auto gke_pv = attachment(
    "metadata: {name: volumeattachment1}\n"
    "spec: {nodeName: fake-node, attacher: test.storage.gke.io, source: {persistentVolumeName: pv1}}");
  auto ebs_inline =
    attachment("metadata: {name: volumeattachment1}\nspec: {nodeName: fake-node, attacher: ebs.csi.aws.com}");
  struct tc {
    const char* name;
    std::vector<std::string> volumes;
    volume_attachment_info_ptr deleted;
    fw::queueing_hint want;
  } cases[] = {
    {"a pod has PVC when VolumeAttachment is deleting", {claim}, gke_pv, fw::queueing_hint::queue},
    {"a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting (match)",
     {aws},
     ebs_inline,
     fw::queueing_hint::queue},
    {"a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting (no match)",
     {gce},
     ebs_inline,
     fw::queueing_hint::skip},
    {"a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) is deleting",
     {aws, claim},
     ebs_inline,
     fw::queueing_hint::queue},
    {"a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver)  is deleting",
     {aws, claim},
     gke_pv,
     fw::queueing_hint::queue},
    {"a pod has no PVC when VolumeAttachment is deleting", {}, gke_pv, fw::queueing_hint::skip},
    // Not upstream's: a generic ephemeral volume is not a PVC volume to this hint.
    {"an ephemeral volume alone does not queue", {"{name: e, ephemeral: {}}"}, gke_pv, fw::queueing_hint::skip},
    // kube queues when the event does not carry a VolumeAttachment.
    {"an event without the attachment queues", {}, nullptr, fw::queueing_hint::queue},
  };
  for (const auto& c : cases)
    EXPECT_EQ(h::volume_attachment_deleted(*volumes_pod("p", "ns1", "p", c.volumes), c.deleted.get()), c.want)
      << c.name;
}

TEST(NodeVolumeLimits, CSILimitsAfterCSINodeUpdatedQHint) {
  namespace h = node_volume_limits_hints;
  auto pod = claims_pod("test-pod", {"csi-ebs.csi.aws.com-0"});
  auto with_count = [](const char* count) {
    return csi_node(std::string("metadata: {name: test-node}\nspec: {drivers: [{name: ebs.csi.aws.com, nodeID: "
                                "test-node, allocatable: {count: ") +
                    count + "}}]}");
  };
  struct tc {
    const char* name;
    csi_node_info_ptr old_node, new_node;
    fw::queueing_hint want;
  } cases[] = {
    {"limit raised, queue", with_count("1"), with_count("2"), fw::queueing_hint::queue},
    {"limit decreased, skip queueing", with_count("2"), with_count("1"), fw::queueing_hint::skip},
    {"limit unchanged, skip queueing", with_count("1"), with_count("1"), fw::queueing_hint::skip},
  };
  for (const auto& c : cases)
    EXPECT_EQ(h::csi_node_updated(*pod, c.old_node.get(), c.new_node.get()), c.want) << c.name;
}

// The registered events and their hints, fed the way the queue feeds them.
TEST(NodeVolumeLimits, EventsToRegister) {
  auto pl = make_plugin();
  auto events = pl->events_to_register();
  std::map<std::string, const fw::cluster_event_with_hint*> by_label;
  for (const auto& e : events) by_label[e.event.label] = &e;
  ASSERT_EQ(by_label.size(), 5u);
  EXPECT_EQ(by_label.at("CSINodeAdd")->event.resource, fw::event_resource::csi_node);
  EXPECT_FALSE(by_label.at("CSINodeAdd")->hint);
  EXPECT_EQ(by_label.at("AssignedPodDelete")->event.resource, fw::event_resource::assigned_pod);
  EXPECT_EQ(by_label.at("AssignedPodDelete")->event.actions, fw::act_delete);
  EXPECT_EQ(by_label.at("VolumeAttachmentDelete")->event.resource, fw::event_resource::volume_attachment);

  auto pod = claims_pod("p", {"data"});
  volume_change added;
  added.kind = volume_change::pvc;
  added.new_pvc = pvc("metadata: {name: data, namespace: default}");
  fw::event_objects objs;
  objs.volume = &added;
  EXPECT_EQ(by_label.at("PersistentVolumeClaimAdd")->hint(*pod, objs), fw::queueing_hint::queue);
  added.new_pvc = pvc("metadata: {name: other, namespace: default}");
  EXPECT_EQ(by_label.at("PersistentVolumeClaimAdd")->hint(*pod, objs), fw::queueing_hint::skip);

  volume_change updated;
  updated.kind = volume_change::csi_node;
  updated.old_csi_node = csi_node("metadata: {name: n}\nspec: {drivers: [{name: d, nodeID: n}]}");
  updated.new_csi_node =
    csi_node("metadata: {name: n}\nspec: {drivers: [{name: d, nodeID: n, allocatable: {count: 3}}]}");
  objs.volume = &updated;
  EXPECT_EQ(by_label.at("CSINodeUpdate")->hint(*pod, objs), fw::queueing_hint::queue);
  std::swap(updated.old_csi_node, updated.new_csi_node);
  EXPECT_EQ(by_label.at("CSINodeUpdate")->hint(*pod, objs), fw::queueing_hint::skip);

  volume_change detached = volume_attachment_change(
    attachment("metadata: {name: va}\nspec: {nodeName: n1, attacher: ebs.csi.aws.com}"), nullptr);
  auto inline_gce = volumes_pod("g", "default", "g", {"{name: g, gcePersistentDisk: {pdName: test}}"});
  objs.volume = &detached;
  EXPECT_EQ(by_label.at("VolumeAttachmentDelete")->hint(*pod, objs), fw::queueing_hint::queue);
  EXPECT_EQ(by_label.at("VolumeAttachmentDelete")->hint(*inline_gce, objs), fw::queueing_hint::skip);

  fw::event_objects deleted;
  auto gone = with_node_name(*claims_pod("gone", {"data"}), "n1");
  deleted.old_pod = gone.get();
  EXPECT_EQ(by_label.at("AssignedPodDelete")->hint(*pod, deleted), fw::queueing_hint::queue);
}

}  // namespace
}  // namespace kas::plugins

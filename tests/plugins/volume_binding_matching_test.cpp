// PV matching shared by the PV controller and VolumeBinding (component-helpers'
// FindMatchingVolume, CheckAccessModes, CheckVolumeModeMismatches, CheckNodeAffinity,
// GetBindVolumeToClaim), over compiled objects from YAML.
#include <gtest/gtest.h>

#include <stdexcept>

#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "plugins/volume_binding/pv_matching.hpp"

namespace kas::plugins {
namespace {

pv_info_ptr pv(const std::string& yaml) {
  auto m = std::make_shared<k8s::core::PersistentVolume>();
  if (auto st = codec::decode_yaml(yaml, *m); !st) throw std::runtime_error(st.err().message);
  auto r = compile_pv(m);
  if (!r) throw std::runtime_error(r.err().message);
  return *r;
}

pvc_info_ptr pvc(const std::string& yaml) {
  auto m = std::make_shared<k8s::core::PersistentVolumeClaim>();
  if (auto st = codec::decode_yaml(yaml, *m); !st) throw std::runtime_error(st.err().message);
  auto r = compile_pvc(m);
  if (!r) throw std::runtime_error(r.err().message);
  return *r;
}

// An Available PV of class "sc" with `size`, RWO, and `extra` spec lines.
pv_info_ptr avail(const std::string& name, const std::string& size, const std::string& extra = "",
                  const std::string& meta = "") {
  return pv("metadata: {name: " + name + meta + "}\nspec:\n  storageClassName: sc\n  capacity: {storage: " + size +
            "}\n  accessModes: [ReadWriteOnce]\n" + extra + "status: {phase: Available}\n");
}

pvc_info_ptr claim(const std::string& extra = "") {
  return pvc("metadata: {name: claim, namespace: ns, uid: claim-uid}\nspec:\n  storageClassName: sc\n"
             "  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 5Gi}}\n" + extra);
}

const std::string zone_a_affinity =
  "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}\n";

TEST(VolumeBindingMatching, FindMatchingVolume) {
  const label_map zone_a(std::vector<label_map::entry>{{"zone", "a"}});
  const label_map zone_b(std::vector<label_map::entry>{{"zone", "b"}});
  struct tc {
    const char* name;
    std::vector<pv_info_ptr> pvs;
    pvc_info_ptr claim;
    const label_map* node;
    std::set<std::string> excluded;
    std::string want;  // "" = no match
  };
  const tc cases[] = {
    {"smallest fitting volume", {avail("big", "20Gi"), avail("small", "5Gi"), avail("tiny", "1Gi")}, claim(), &zone_a, {},
     "small"},
    {"excluded volume is skipped", {avail("big", "20Gi"), avail("small", "5Gi")}, claim(), &zone_a, {"small"}, "big"},
    {"volume claimed by another claim",
     {avail("other", "5Gi", "  claimRef: {namespace: ns, name: someone}\n")}, claim(), &zone_a, {}, ""},
    {"pre-bound volume wins over a smaller one",
     {avail("small", "5Gi"), avail("mine", "50Gi", "  claimRef: {namespace: ns, name: claim}\n")}, claim(), &zone_a, {},
     "mine"},
    {"pre-bound volume with another uid", {avail("mine", "50Gi", "  claimRef: {namespace: ns, name: claim, uid: x}\n")},
     claim(), &zone_a, {}, ""},
    {"pre-bound volume failing node affinity matches nothing",
     {avail("small", "5Gi"), avail("mine", "50Gi", "  claimRef: {namespace: ns, name: claim}\n" + zone_a_affinity)},
     claim(), &zone_b, {}, ""},
    {"node affinity", {avail("a", "5Gi", zone_a_affinity)}, claim(), &zone_a, {}, "a"},
    {"node affinity mismatch", {avail("a", "5Gi", zone_a_affinity)}, claim(), &zone_b, {}, ""},
    {"volume too small", {avail("small", "1Gi")}, claim(), &zone_a, {}, ""},
    {"wrong class", {pv("metadata: {name: x}\nspec: {storageClassName: other, capacity: {storage: 5Gi}, accessModes: "
                        "[ReadWriteOnce]}\nstatus: {phase: Available}")},
     claim(), &zone_a, {}, ""},
    {"not Available", {pv("metadata: {name: x}\nspec: {storageClassName: sc, capacity: {storage: 5Gi}, accessModes: "
                          "[ReadWriteOnce]}\nstatus: {phase: Released}")},
     claim(), &zone_a, {}, ""},
    {"being deleted", {avail("x", "5Gi", "", ", deletionTimestamp: \"2024-01-01T00:00:00Z\"")}, claim(), &zone_a, {}, ""},
    {"volume mode mismatch", {avail("x", "5Gi", "  volumeMode: Block\n")}, claim(), &zone_a, {}, ""},
    {"block volume for a block claim", {avail("x", "5Gi", "  volumeMode: Block\n")}, claim("  volumeMode: Block\n"),
     &zone_a, {}, "x"},
    {"access modes not offered", {avail("x", "5Gi")}, claim("  accessModes: [ReadWriteMany]\n"), &zone_a, {}, ""},
    {"selector matches labels", {avail("x", "5Gi", "", ", labels: {tier: gold}"), avail("y", "5Gi")},
     claim("  selector: {matchLabels: {tier: gold}}\n"), &zone_a, {}, "x"},
    {"selector matches nothing", {avail("y", "5Gi")}, claim("  selector: {matchLabels: {tier: gold}}\n"), &zone_a, {}, ""},
    {"volume attributes class must be equal", {avail("x", "5Gi", "  volumeAttributesClassName: fast\n")}, claim(),
     &zone_a, {}, ""},
    {"equal volume attributes class", {avail("x", "5Gi", "  volumeAttributesClassName: fast\n")},
     claim("  volumeAttributesClassName: fast\n"), &zone_a, {}, "x"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<const pv_info*> vols;
    for (auto& p : c.pvs) vols.push_back(p.get());
    const pv_info* got = find_matching_volume(*c.claim, vols, c.node, c.excluded, true);
    EXPECT_EQ(got ? got->name : "", c.want);
  }
}

TEST(VolumeBindingMatching, DelayBindingOnControllerPath) {
  // Without a node and with delayed binding, only a volume pre-bound to the claim matches.
  auto c = claim();
  auto free = avail("free", "5Gi");
  auto mine = avail("mine", "5Gi", "  claimRef: {namespace: ns, name: claim}\n");
  EXPECT_EQ(find_matching_volume(*c, {free.get()}, nullptr, {}, true), nullptr);
  EXPECT_EQ(find_matching_volume(*c, {free.get()}, nullptr, {}, false), free.get());
  EXPECT_EQ(find_matching_volume(*c, {free.get(), mine.get()}, nullptr, {}, true), mine.get());
  // Access modes are the scheduler's check: the controller path has its own access-mode index.
  EXPECT_EQ(find_matching_volume(*claim("  accessModes: [ReadWriteMany]\n"), {free.get()}, nullptr, {}, false),
            free.get());
}

TEST(VolumeBindingMatching, CheckNodeAffinity) {
  const label_map a(std::vector<label_map::entry>{{"zone", "a"}});
  EXPECT_TRUE(check_node_affinity(*avail("x", "1Gi"), a));
  EXPECT_TRUE(check_node_affinity(*avail("x", "1Gi", zone_a_affinity), a));
  EXPECT_FALSE(check_node_affinity(*avail("x", "1Gi", zone_a_affinity), label_map{}));
  // The node is seen by its labels only, so a metadata.name field never matches.
  EXPECT_FALSE(check_node_affinity(
    *avail("x", "1Gi", "  nodeAffinity: {required: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: "
                       "In, values: [n]}]}]}}\n"),
    a));
}

TEST(VolumeBindingMatching, AccessAndVolumeModes) {
  auto rwo_rox = avail("x", "1Gi", "  accessModes: [ReadWriteOnce, ReadOnlyMany]\n");
  EXPECT_TRUE(check_access_modes(*claim("  accessModes: [ReadOnlyMany]\n"), *rwo_rox));
  EXPECT_TRUE(check_access_modes(*claim("  accessModes: [ReadWriteOnce, ReadOnlyMany]\n"), *rwo_rox));
  EXPECT_FALSE(check_access_modes(*claim("  accessModes: [ReadWriteOncePod]\n"), *rwo_rox));
  EXPECT_FALSE(check_volume_mode_mismatches(*claim(), *avail("x", "1Gi", "  volumeMode: Filesystem\n")));
  EXPECT_TRUE(check_volume_mode_mismatches(*claim("  volumeMode: Block\n"), *avail("x", "1Gi")));
}

TEST(VolumeBindingMatching, BindVolumeToClaim) {
  bool dirty = false;
  auto c = claim();
  auto bound = bind_volume_to_claim(*avail("x", "5Gi"), *c, dirty);
  EXPECT_TRUE(dirty);
  EXPECT_EQ(bound->spec().claim_ref().name(), "claim");
  EXPECT_EQ(bound->spec().claim_ref().uid(), "claim-uid");
  EXPECT_EQ(bound->metadata().annotations().at("pv.kubernetes.io/bound-by-controller"), "yes");
  // Pre-bound by the user (no uid): the uid is filled in, but the binding stays the user's.
  auto pre = bind_volume_to_claim(*avail("x", "5Gi", "  claimRef: {namespace: ns, name: claim}\n"), *c, dirty);
  EXPECT_TRUE(dirty);
  EXPECT_EQ(pre->spec().claim_ref().uid(), "claim-uid");
  EXPECT_EQ(pre->metadata().annotations().count("pv.kubernetes.io/bound-by-controller"), 0u);
  // Already bound exactly: nothing to write.
  bind_volume_to_claim(*avail("x", "5Gi", "  claimRef: {namespace: ns, name: claim, uid: claim-uid}\n"), *c, dirty);
  EXPECT_FALSE(dirty);
}

}  // namespace
}  // namespace kas::plugins

// VolumeZone: PreFilter, Filter and QueueingHints, cases from kube's volume_zone_test.go.
#include <gtest/gtest.h>

#include "messages/k8s/core.pb.h"
#include "messages/k8s/storage.pb.h"
#include "plugins/volume_zone/volume_zone.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::plugins {
namespace {

using test::node_from_yaml;
using test::pod_from_yaml;

// A storage object from YAML through the real decoder and compiler.
template <class Msg, class Compile>
auto storage_from_yaml(std::string_view yaml, Compile compile) {
  auto m = std::make_shared<Msg>();
  if (auto st = codec::decode_yaml(yaml, *m); !st) throw std::runtime_error("fixture: " + st.err().message);
  auto r = compile(std::shared_ptr<const Msg>(m));
  if (!r) throw std::runtime_error("fixture: " + r.err().message);
  return *r;
}

pv_info_ptr pv(const std::string& name, const std::string& labels) {
  return storage_from_yaml<k8s::core::PersistentVolume>("metadata: {name: " + name + ", labels: {" + labels + "}}",
                                                        compile_pv);
}

// `spec` is the claim's spec as a YAML flow map body ("volumeName: Vol_1").
pvc_info_ptr pvc(const std::string& name, const std::string& spec, const std::string& ns = "default") {
  return storage_from_yaml<k8s::core::PersistentVolumeClaim>(
    "metadata: {name: " + name + ", namespace: " + ns + "}\nspec: {" + spec + "}", compile_pvc);
}

storage_class_info_ptr storage_class(const std::string& name, const std::string& mode) {
  std::string y = "metadata: {name: " + name + "}\nprovisioner: p\n";
  if (!mode.empty()) y += "volumeBindingMode: " + mode + "\n";
  return storage_from_yaml<k8s::storage::StorageClass>(y, compile_storage_class);
}

// kube's createPodWithVolume; an empty claim gives a pod without volumes.
pod_info_ptr pod_with_claim(const std::string& name, const std::string& claim, const std::string& ns = "default") {
  std::string y = "metadata: {name: " + name + ", namespace: " + ns + "}\nspec:\n  containers: [{name: c}]\n";
  if (!claim.empty()) y += "  volumes: [{name: v, persistentVolumeClaim: {claimName: " + claim + "}}]\n";
  return pod_from_yaml(y);
}

std::shared_ptr<const snapshot> snapshot_of(const std::vector<pv_info_ptr>& pvs, const std::vector<pvc_info_ptr>& pvcs,
                                            const std::vector<storage_class_info_ptr>& classes) {
  auto objs = std::make_shared<cluster_objects>();
  for (auto& p : pvs) objs->volumes.pvs.put(p->name, p);
  for (auto& c : pvcs) objs->volumes.pvcs.put(c->key(), c);
  for (auto& c : classes) objs->volumes.classes.put(c->name, c);
  return std::make_shared<const snapshot>(snapshot{}.with_objects(objs, 1));
}

constexpr const char* beta_zone = "failure-domain.beta.kubernetes.io/zone";
constexpr const char* beta_region = "failure-domain.beta.kubernetes.io/region";
constexpr const char* ga_zone = "topology.kubernetes.io/zone";
constexpr const char* ga_region = "topology.kubernetes.io/region";

std::string label(const char* key, const std::string& value) { return std::string(key) + ": " + value; }

// Expected status: code and reasons; a default one is success.
struct want_status {
  fw::code code = fw::code::success;
  std::string_view reason;  // a literal
};
const want_status skip{fw::code::skip, ""};
const want_status conflict{fw::code::unschedulable_and_unresolvable, "node(s) had no available volume zone"};
constexpr want_status unresolvable(std::string_view r) { return {fw::code::unschedulable_and_unresolvable, r}; }

struct zone_case {
  const char* name;
  pod_info_ptr pod;
  std::string node_labels;  // YAML flow map body
  want_status pre_filter, filter;
};

// As kube's tests: PreFilter, then Filter on the same state whatever PreFilter returned (Filter
// computes the topologies itself when PreFilter wrote none).
void run_cases(const std::vector<zone_case>& cases, const std::shared_ptr<const snapshot>& snap) {
  volume_zone pl;
  for (const auto& c : cases) {
    fw::cycle_state state;
    state.set_snapshot(snap);
    fw::pre_filter_result r;
    auto pre = pl.pre_filter(state, *c.pod, *snap, r);
    EXPECT_EQ(pre.get_code(), c.pre_filter.code) << c.name;
    EXPECT_EQ(test::reasons(pre), c.pre_filter.reason) << c.name;
    EXPECT_TRUE(r.all_nodes()) << c.name;
    auto node = node_from_yaml("metadata: {name: host1, labels: {" + c.node_labels + "}}");
    auto got = pl.filter(state, *c.pod, *node);
    EXPECT_EQ(got.get_code(), c.filter.code) << c.name;
    EXPECT_EQ(test::reasons(got), c.filter.reason) << c.name;
  }
}

TEST(VolumeZone, SingleZone) {
  auto snap = snapshot_of(
    {
      pv("Vol_1", label(beta_zone, "us-west1-a")),
      pv("Vol_2", label(beta_region, "us-west1") + ", uselessLabel: none"),
      pv("Vol_3", label(beta_region, "us-west1")),
      pv("Vol_Stable_1", label(ga_zone, "us-west1-a")),
      pv("Vol_Stable_2", label(ga_region, "us-west1") + ", uselessLabel: none"),
      pv("Vol_Stable_3", label(ga_zone, "us-west1-a") + ", " + label(ga_region, "us-west1-a")),
    },
    {
      pvc("PVC_1", "volumeName: Vol_1"),
      pvc("PVC_2", "volumeName: Vol_2"),
      pvc("PVC_3", "volumeName: Vol_3"),
      pvc("PVC_4", "volumeName: Vol_not_exist"),
      pvc("PVC_Stable_1", "volumeName: Vol_Stable_1"),
      pvc("PVC_Stable_2", "volumeName: Vol_Stable_2"),
      pvc("PVC_Stable_3", "volumeName: Vol_Stable_3"),
    },
    {});
  const std::string useless = ", uselessLabel: none";
  run_cases(
    {
      {"pod without volume", pod_with_claim("pod_1", ""), label(beta_zone, "us-west1-a"), skip, {}},
      {"node without labels", pod_with_claim("pod_1", "PVC_1"), "", {}, {}},
      {"beta zone label matched", pod_with_claim("pod_1", "PVC_1"), label(beta_zone, "us-west1-a") + useless, {}, {}},
      {"beta region label matched", pod_with_claim("pod_1", "PVC_2"), label(beta_region, "us-west1") + useless, {},
       {}},
      {"beta region label doesn't match", pod_with_claim("pod_1", "PVC_2"),
       label(beta_region, "no_us-west1") + useless, {}, conflict},
      {"beta zone label doesn't match", pod_with_claim("pod_1", "PVC_1"), label(beta_zone, "no_us-west1-a") + useless,
       {}, conflict},
      {"zone label matched", pod_with_claim("pod_1", "PVC_Stable_1"), label(ga_zone, "us-west1-a") + useless, {}, {}},
      {"region label matched", pod_with_claim("pod_1", "PVC_Stable_2"), label(ga_region, "us-west1") + useless, {},
       {}},
      {"region label doesn't match", pod_with_claim("pod_1", "PVC_Stable_2"),
       label(ga_region, "no_us-west1") + useless, {}, conflict},
      {"zone label doesn't match", pod_with_claim("pod_1", "PVC_Stable_1"), label(ga_zone, "no_us-west1-a") + useless,
       {}, conflict},
      {"pv with zone and region, node with only zone", pod_with_claim("pod_1", "PVC_Stable_3"),
       label(ga_zone, "us-west1-a"), {}, conflict},
      {"pv with zone,node with beta zone", pod_with_claim("pod_1", "PVC_Stable_1"), label(beta_zone, "us-west1-a"), {},
       conflict},
      {"pv with beta label,node with ga label, matched", pod_with_claim("pod_1", "PVC_1"),
       label(ga_zone, "us-west1-a"), {}, {}},
      {"pv with beta label,node with ga label, don't match", pod_with_claim("pod_1", "PVC_1"),
       label(ga_zone, "us-west1-b"), {}, conflict},
      // Not in kube's table: the NotFound texts of kube's informer listers.
      {"claim not found", pod_with_claim("pod_1", "PVC_missing"), label(ga_zone, "us-west1-a"),
       unresolvable("persistentvolumeclaim \"PVC_missing\" not found"),
       unresolvable("persistentvolumeclaim \"PVC_missing\" not found")},
      {"bound pv not found", pod_with_claim("pod_1", "PVC_4"), label(ga_zone, "us-west1-a"),
       unresolvable("persistentvolume \"Vol_not_exist\" not found"),
       unresolvable("persistentvolume \"Vol_not_exist\" not found")},
      {"claim in another namespace is not the pod's", pod_with_claim("pod_1", "PVC_1", "other"),
       label(ga_zone, "us-west1-a"), unresolvable("persistentvolumeclaim \"PVC_1\" not found"),
       unresolvable("persistentvolumeclaim \"PVC_1\" not found")},
    },
    snap);
}

TEST(VolumeZone, MultiZone) {
  auto snap = snapshot_of(
    {
      pv("Vol_1", label(beta_zone, "us-west1-a")),
      pv("Vol_2", label(beta_zone, "us-west1-b") + ", uselessLabel: none"),
      pv("Vol_3", label(beta_zone, "us-west1-c__us-west1-a")),
      pv("Vol_Stable_1", label(ga_zone, "us-west1-a")),
      pv("Vol_Stable_2", label(ga_zone, "us-west1-c__us-west1-a")),
    },
    {
      pvc("PVC_1", "volumeName: Vol_1"),
      pvc("PVC_2", "volumeName: Vol_2"),
      pvc("PVC_3", "volumeName: Vol_3"),
      pvc("PVC_4", "volumeName: Vol_not_exist"),
      pvc("PVC_Stable_1", "volumeName: Vol_Stable_1"),
      pvc("PVC_Stable_2", "volumeName: Vol_Stable_2"),
    },
    {});
  const std::string useless = ", uselessLabel: none";
  run_cases(
    {
      {"node without labels", pod_with_claim("pod_1", "PVC_3"), "", {}, {}},
      {"beta zone label matched", pod_with_claim("pod_1", "PVC_3"), label(beta_zone, "us-west1-a") + useless, {}, {}},
      {"beta zone label doesn't match", pod_with_claim("pod_1", "PVC_1"), label(beta_zone, "us-west1-b") + useless, {},
       conflict},
      {"zone label matched", pod_with_claim("pod_1", "PVC_Stable_2"), label(ga_zone, "us-west1-a") + useless, {}, {}},
      {"zone label doesn't match", pod_with_claim("pod_1", "PVC_Stable_1"), label(ga_zone, "us-west1-b") + useless,
       {}, conflict},
    },
    snap);
}

TEST(VolumeZone, WithBinding) {
  auto snap = snapshot_of({pv("Vol_1", label(beta_zone, "us-west1-a"))},
                          {
                            pvc("PVC_1", "volumeName: Vol_1"),
                            pvc("PVC_NoSC", "storageClassName: Class_0"),
                            pvc("PVC_EmptySC", ""),
                            pvc("PVC_WaitSC", "storageClassName: Class_Wait"),
                            pvc("PVC_ImmediateSC", "storageClassName: Class_Immediate"),
                            pvc("PVC_ExplicitImmediate", "storageClassName: Class_Explicit"),
                          },
                          {
                            storage_class("Class_Immediate", ""),
                            storage_class("Class_Wait", "WaitForFirstConsumer"),
                            storage_class("Class_Explicit", "Immediate"),
                          });
  const std::string node = label(beta_zone, "us-west1-a") + ", uselessLabel: none";
  const auto no_class = unresolvable("PersistentVolumeClaim had no pv name and storageClass name");
  // kube's table expects its fake lister's text ("storageclasses.storage.k8s.io"); a scheduler
  // reads StorageClasses through the informer lister, whose resource is singular.
  const auto class_missing = unresolvable("storageclass.storage.k8s.io \"Class_0\" not found");
  const auto mode_unset = unresolvable("VolumeBindingMode not set for StorageClass \"Class_Immediate\"");
  const auto no_pv = unresolvable("PersistentVolume had no name");
  run_cases(
    {
      {"label zone failure domain matched", pod_with_claim("pod_1", "PVC_1"), node, {}, {}},
      {"unbound volume empty storage class", pod_with_claim("pod_1", "PVC_EmptySC"), node, no_class, no_class},
      {"unbound volume no storage class", pod_with_claim("pod_1", "PVC_NoSC"), node, class_missing, class_missing},
      {"unbound volume immediate binding mode", pod_with_claim("pod_1", "PVC_ImmediateSC"), node, mode_unset,
       mode_unset},
      {"unbound volume wait binding mode", pod_with_claim("pod_1", "PVC_WaitSC"), node, skip, {}},
      // Not in kube's table: an Immediate claim the PV controller has not bound yet.
      {"unbound volume explicit immediate binding mode", pod_with_claim("pod_1", "PVC_ExplicitImmediate"), node, no_pv,
       no_pv},
    },
    snap);
}

TEST(VolumeZone, LabelZonesToSet) {
  EXPECT_EQ(label_zones_to_set("us-west1-a"), (std::vector<std::string>{"us-west1-a"}));
  EXPECT_EQ(label_zones_to_set("us-west1-c__us-west1-a"), (std::vector<std::string>{"us-west1-a", "us-west1-c"}));
  EXPECT_EQ(label_zones_to_set(" a __b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(label_zones_to_set("a____b"), std::nullopt);
  EXPECT_EQ(label_zones_to_set(""), std::nullopt);
  // A label that does not parse is ignored, as kube ignores it.
  EXPECT_TRUE(pv_topologies(*pv("Vol_bad", label(ga_zone, "a__"))).empty());
}

// --- QueueingHints ------------------------------------------------------------------------------

const fw::queueing_hint_fn& hint_for(const std::vector<fw::cluster_event_with_hint>& events, fw::event_resource r) {
  for (const auto& e : events)
    if (e.event.resource == r) return e.hint;
  throw std::runtime_error("no event registered for the resource");
}

fw::queueing_hint run_hint(fw::event_resource r, const pod_info& pod, const volume_change* ch) {
  volume_zone pl;
  auto events = pl.events_to_register();
  fw::event_objects o;
  o.volume = ch;
  return hint_for(events, r)(pod, o);
}

// A StorageClass "SC_1" added, with this volumeBindingMode ("" for none).
volume_change class_added(const std::string& mode) {
  return storage_class_change(nullptr, storage_class("SC_1", mode));
}

TEST(VolumeZone, EventsToRegister) {
  volume_zone pl;
  auto events = pl.events_to_register();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].event.resource, fw::event_resource::storage_class);
  EXPECT_EQ(events[0].event.actions, fw::act_add);
  EXPECT_EQ(events[1].event.resource, fw::event_resource::node);
  EXPECT_EQ(events[1].event.actions, fw::act_add | fw::act_update_node_label);
  EXPECT_FALSE(events[1].hint);
  EXPECT_EQ(events[2].event.resource, fw::event_resource::pvc);
  EXPECT_EQ(events[2].event.actions, fw::act_add | fw::act_update);
  EXPECT_EQ(events[3].event.resource, fw::event_resource::pv);
  EXPECT_EQ(events[3].event.actions, fw::act_add | fw::act_update);
}

TEST(VolumeZone, IsSchedulableAfterPersistentVolumeClaimAdded) {
  struct tc {
    const char* name;
    pod_info_ptr pod;
    volume_change change;
    fw::queueing_hint want;
  };
  auto bound = pvc("PVC_1", "volumeName: Vol_1");
  auto unbound = pvc("PVC_1", "");
  const tc cases[] = {
    {"error-wrong-new-object", pod_with_claim("pod_1", "PVC_1"), class_added(""), fw::queueing_hint::queue},
    {"pvc-was-added-but-pod-refers-no-pvc", pod_with_claim("pod_1", ""), pvc_change(nullptr, bound),
     fw::queueing_hint::skip},
    {"pvc-was-added-and-pod-was-bound-to-different-pvc", pod_with_claim("pod_1", "PVC_2"),
     pvc_change(nullptr, bound), fw::queueing_hint::skip},
    {"pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", pod_with_claim("pod_1", "PVC_1"),
     pvc_change(nullptr, pvc("PVC_1", "volumeName: Vol_1", "ns1")), fw::queueing_hint::skip},
    {"pvc-was-added-and-pod-was-bound-to-the-pvc", pod_with_claim("pod_1", "PVC_1"), pvc_change(nullptr, bound),
     fw::queueing_hint::queue},
    {"pvc-was-updated-and-pod-was-bound-to-the-pvc", pod_with_claim("pod_1", "PVC_1"), pvc_change(unbound, bound),
     fw::queueing_hint::queue},
    {"pvc-was-updated-but-pod-refers-no-pvc", pod_with_claim("pod_1", ""), pvc_change(unbound, bound),
     fw::queueing_hint::skip},
  };
  for (const auto& c : cases) EXPECT_EQ(run_hint(fw::event_resource::pvc, *c.pod, &c.change), c.want) << c.name;
  // No storage object at all is as wrong an object as one of another kind.
  EXPECT_EQ(run_hint(fw::event_resource::pvc, *pod_with_claim("pod_1", "PVC_1"), nullptr), fw::queueing_hint::queue);
}

TEST(VolumeZone, IsSchedulableAfterStorageClassAdded) {
  struct tc {
    const char* name;
    volume_change change;
    fw::queueing_hint want;
  };
  const tc cases[] = {
    {"error-wrong-new-object", pvc_change(nullptr, pvc("PVC_1", "")), fw::queueing_hint::queue},
    {"sc-doesn't-have-volume-binding-mode", class_added(""), fw::queueing_hint::skip},
    {"new-sc-is-wait-for-first-consumer-mode", class_added("WaitForFirstConsumer"), fw::queueing_hint::queue},
    // Not in kube's table: an Immediate class cannot help either.
    {"new-sc-is-immediate-mode", class_added("Immediate"), fw::queueing_hint::skip},
  };
  auto pod = pod_with_claim("pod_1", "PVC_1");
  for (const auto& c : cases)
    EXPECT_EQ(run_hint(fw::event_resource::storage_class, *pod, &c.change), c.want) << c.name;
}

TEST(VolumeZone, IsSchedulableAfterPersistentVolumeChange) {
  struct tc {
    const char* name;
    volume_change change;
    fw::queueing_hint want;
  };
  const std::string zone_a = label(beta_zone, "us-west1-a");
  const std::string both = zone_a + ", " + label(ga_zone, "zone");
  const tc cases[] = {
    {"error-wrong-new-object", pvc_change(nullptr, pvc("PVC_1", "")), fw::queueing_hint::queue},
    {"error-wrong-old-object", class_added(""), fw::queueing_hint::queue},
    {"new-pv-was-added", pv_change(nullptr, pv("Vol_1", label(beta_zone, "us-west1-b"))), fw::queueing_hint::queue},
    {"pv-was-updated-and-changed-topology", pv_change(pv("Vol_1", zone_a), pv("Vol_1", label(beta_zone, "us-west1-b"))),
     fw::queueing_hint::queue},
    {"pv-was-updated-and-added-topology-label", pv_change(pv("Vol_1", zone_a), pv("Vol_1", both)),
     fw::queueing_hint::queue},
    {"pv-was-updated-but-no-topology-is-changed", pv_change(pv("Vol_1", both), pv("Vol_1", both)),
     fw::queueing_hint::skip},
    // Not in kube's table: a label other than a topology one changed.
    {"pv-was-updated-with-unrelated-label", pv_change(pv("Vol_1", zone_a), pv("Vol_1", zone_a + ", app: db")),
     fw::queueing_hint::skip},
  };
  auto pod = pod_with_claim("pod_1", "PVC_1");
  for (const auto& c : cases) EXPECT_EQ(run_hint(fw::event_resource::pv, *pod, &c.change), c.want) << c.name;
}

// --- SignPod ------------------------------------------------------------------------------------

TEST(VolumeZone, SignPod) {
  auto sign = [](const std::string& name, const std::string& volumes) {
    auto pod =
      pod_from_yaml("metadata: {name: " + name + "}\nspec:\n  containers: [{name: c}]\n  volumes:\n" + volumes);
    std::string out;
    EXPECT_TRUE(volume_zone{}.sign_pod(*pod, out));
    return out;
  };
  const std::string claim_a = "  - {name: data, persistentVolumeClaim: {claimName: a}}\n";
  const std::string claim_b = "  - {name: logs, persistentVolumeClaim: {claimName: b}}\n";
  const std::string config = "  - {name: cfg, configMap: {name: settings}}\n";
  // The volume names and configMap/secret volumes do not matter; the sources do, in any order.
  EXPECT_EQ(sign("p1", claim_a), sign("p2", claim_a + config));
  EXPECT_EQ(sign("p1", claim_a + claim_b), sign("p2", claim_b + claim_a));
  EXPECT_NE(sign("p1", claim_a), sign("p1", claim_b));
}

}  // namespace
}  // namespace kas::plugins

// VolumeBinding: args validation, PreFilter/Filter/Score, FindPodVolumes, Reserve/PreBind and
// QueueingHints, with case names from kube's volume_binding_test.go, binder_test.go and
// validation_pluginargs_test.go.
#include <gtest/gtest.h>

#include "plugins/volume_binding/binder.hpp"
#include "plugins/volume_binding/volume_binding.hpp"
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/snapshot.hpp"
#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/storage.pb.h"
#include "plugins/framework/handle.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas::test::vb {

// makePV(name, class) with its options, as YAML.
struct pv_spec {
  std::string name, cls;
  std::string phase;
  std::string capacity;                                // "" = none
  std::map<std::string, std::vector<std::string>> affinity;  // one term, key In values
  std::string claim_ns, claim_name, claim_uid;         // claimRef
  std::string access_modes;                            // "[ReadWriteOnce]"
  std::string volume_mode;
  std::string labels;                                  // "{a: b}"
  std::string annotations;
  bool deleting = false;
  pv_spec& with_phase(std::string p) { phase = std::move(p); return *this; }
  pv_spec& with_capacity(std::string c) { capacity = std::move(c); return *this; }
  pv_spec& with_node_affinity(std::map<std::string, std::vector<std::string>> a) { affinity = std::move(a); return *this; }
  pv_spec& with_claim(std::string ns, std::string n, std::string uid = "") {
    claim_ns = std::move(ns), claim_name = std::move(n), claim_uid = std::move(uid);
    return *this;
  }
  pv_spec& with_access_modes(std::string m) { access_modes = std::move(m); return *this; }
  pv_spec& with_volume_mode(std::string m) { volume_mode = std::move(m); return *this; }
  pv_spec& with_labels(std::string l) { labels = std::move(l); return *this; }
  std::string yaml() const {
    std::string y = "metadata:\n  name: " + name + "\n  resourceVersion: \"1\"\n";
    if (!labels.empty()) y += "  labels: " + labels + "\n";
    if (!annotations.empty()) y += "  annotations: " + annotations + "\n";
    if (deleting) y += "  deletionTimestamp: \"2024-01-01T00:00:00Z\"\n";
    y += "spec:\n  storageClassName: \"" + cls + "\"\n";
    if (!capacity.empty()) y += "  capacity: {storage: " + capacity + "}\n";
    if (!access_modes.empty()) y += "  accessModes: " + access_modes + "\n";
    if (!volume_mode.empty()) y += "  volumeMode: " + volume_mode + "\n";
    if (!claim_name.empty())
      y += "  claimRef: {namespace: " + claim_ns + ", name: " + claim_name +
           (claim_uid.empty() ? "" : ", uid: " + claim_uid) + "}\n";
    if (!affinity.empty()) {
      y += "  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n";
      for (auto& [k, vs] : affinity) {
        y += "        - {key: \"" + k + "\", operator: In, values: [";
        for (size_t i = 0; i < vs.size(); ++i) y += (i ? ", " : "") + vs[i];
        y += "]}\n";
      }
    }
    if (!phase.empty()) y += "status: {phase: " + phase + "}\n";
    return y;
  }
};
inline pv_spec make_pv(std::string name, std::string cls) {
  pv_spec s;
  s.name = std::move(name);
  s.cls = std::move(cls);
  return s;
}

// makePVC(name, class): namespace default, uid "<name>-uid".
struct pvc_spec {
  std::string name, cls;
  std::string volume_name;
  bool bind_completed = false;
  std::string request;
  std::string phase;
  std::string selected_node;
  bool has_selected_node = false;
  std::string owner_uid;  // a controller ownerReference
  bool deleting = false;
  std::string access_modes;
  std::string selector;
  bool no_class = false;
  pvc_spec& with_bound_pv(std::string pv) { volume_name = std::move(pv), bind_completed = true; return *this; }
  pvc_spec& with_pre_bound_pv(std::string pv) { volume_name = std::move(pv); return *this; }
  pvc_spec& with_request_storage(std::string r) { request = std::move(r); return *this; }
  pvc_spec& with_phase(std::string p) { phase = std::move(p); return *this; }
  pvc_spec& with_selected_node(std::string n) { selected_node = std::move(n), has_selected_node = true; return *this; }
  pvc_spec& with_owner(std::string uid) { owner_uid = std::move(uid); return *this; }
  pvc_spec& with_access_modes(std::string m) { access_modes = std::move(m); return *this; }
  std::string yaml() const {
    std::string y = "metadata:\n  name: " + name + "\n  namespace: default\n  uid: " + name + "-uid\n  resourceVersion: \"1\"\n";
    std::string ann;
    if (bind_completed) ann += "pv.kubernetes.io/bind-completed: \"yes\", ";
    if (has_selected_node) ann += "volume.kubernetes.io/selected-node: \"" + selected_node + "\", ";
    if (!ann.empty()) y += "  annotations: {" + ann.substr(0, ann.size() - 2) + "}\n";
    if (!owner_uid.empty())
      y += "  ownerReferences: [{apiVersion: v1, kind: Pod, name: owner, uid: " + owner_uid + ", controller: true}]\n";
    if (deleting) y += "  deletionTimestamp: \"2024-01-01T00:00:00Z\"\n";
    y += "spec:\n";
    if (!no_class) y += "  storageClassName: \"" + cls + "\"\n";
    if (!volume_name.empty()) y += "  volumeName: " + volume_name + "\n";
    if (!request.empty()) y += "  resources: {requests: {storage: " + request + "}}\n";
    if (!access_modes.empty()) y += "  accessModes: " + access_modes + "\n";
    if (!selector.empty()) y += "  selector: " + selector + "\n";
    if (!phase.empty()) y += "status: {phase: " + phase + "}\n";
    return y;
  }
};
inline pvc_spec make_pvc(std::string name, std::string cls) {
  pvc_spec s;
  s.name = std::move(name);
  s.cls = std::move(cls);
  return s;
}

// makePod(name) with volumes: {volume name, claim name}; an ephemeral volume has claim "".
struct pod_spec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> claims;
  std::vector<std::string> ephemeral;
  std::string extra_volumes;
  pod_spec& with_pvc_volume(std::string pvc, std::string vol = "") {
    if (vol.empty()) vol = pvc + "-vol";
    claims.emplace_back(std::move(vol), std::move(pvc));
    return *this;
  }
  pod_spec& with_generic_ephemeral_volume(std::string vol) { ephemeral.push_back(std::move(vol)); return *this; }
  pod_info_ptr build() const {
    std::string y = "metadata: {name: " + name + ", namespace: default, uid: " + name + "-uid}\nspec:\n  containers: [{name: c}]\n";
    if (!claims.empty() || !ephemeral.empty() || !extra_volumes.empty()) y += "  volumes:\n";
    for (auto& [vol, pvc] : claims) y += "  - {name: " + vol + ", persistentVolumeClaim: {claimName: " + pvc + "}}\n";
    for (auto& vol : ephemeral)
      y += "  - name: " + vol + "\n    ephemeral: {volumeClaimTemplate: {spec: {storageClassName: wait-sc}}}\n";
    y += extra_volumes;
    return pod_from_yaml(y);
  }
};
inline pod_spec make_pod(std::string name) {
  pod_spec s;
  s.name = std::move(name);
  return s;
}

// makeNode(name): labelled kubernetes.io/hostname=name, plus `labels`.
inline std::shared_ptr<node_info> make_node(const std::string& name, const std::map<std::string, std::string>& labels = {}) {
  std::string y = "metadata:\n  name: " + name + "\n  labels: {\"kubernetes.io/hostname\": " + name;
  for (auto& [k, v] : labels) y += ", \"" + k + "\": \"" + v + "\"";
  y += "}\n";
  return node_from_yaml(y);
}

// The storage objects of one test case.
struct world {
  std::shared_ptr<cluster_objects> objs = std::make_shared<cluster_objects>();

  world() {
    add_class("metadata: {name: immediate-sc}\nprovisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: Immediate");
    add_class("metadata: {name: wait-sc}\nprovisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer");
    add_class("metadata: {name: wait-hdd-sc}\nprovisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer");
  }
  void add(const pv_spec& s) {
    auto pv = compile_pv(decode<k8s::core::PersistentVolume>(s.yaml(), "pv"));
    if (!pv) throw std::runtime_error("pv: " + pv.err().message);
    objs->volumes.pvs.put((*pv)->name, *pv);
  }
  void add(const pvc_spec& s) {
    auto c = compile_pvc(decode<k8s::core::PersistentVolumeClaim>(s.yaml(), "pvc"));
    if (!c) throw std::runtime_error("pvc: " + c.err().message);
    objs->volumes.pvcs.put((*c)->key(), *c);
  }
  void add_class(const std::string& yaml) {
    auto sc = compile_storage_class(decode<k8s::storage::StorageClass>(yaml, "class"));
    if (!sc) throw std::runtime_error("class: " + sc.err().message);
    objs->volumes.classes.put((*sc)->name, *sc);
  }
  void add_driver(const std::string& yaml) {
    auto d = compile_csi_driver(decode<k8s::storage::CSIDriver>(yaml, "driver"));
    if (!d) throw std::runtime_error("driver: " + d.err().message);
    objs->volumes.csi_drivers.put((*d)->name, *d);
  }
  void add_capacity(const std::string& yaml) {
    auto c = compile_csi_storage_capacity(decode<k8s::storage::CSIStorageCapacity>(yaml, "capacity"));
    if (!c) throw std::runtime_error("capacity: " + c.err().message);
    objs->volumes.capacities.put((*c)->ns + "/" + (*c)->name, *c);
  }
  snapshot snap() const { return snapshot().with_objects(objs, 1); }
};

// A cluster client that records bind_volumes calls; the test answers them.
class fake_client final : public fw::cluster_client {
public:
  struct call {
    std::string pod;
    std::vector<std::shared_ptr<const k8s::core::PersistentVolume>> pvs;
    std::vector<std::shared_ptr<const k8s::core::PersistentVolumeClaim>> claims;
    std::vector<std::string> wait_for;
    std::chrono::milliseconds timeout{0};
    std::function<void(fw::status)> done;
  };
  std::vector<call> calls;

  void bind(const pod_info&, const std::string&, std::function<void(fw::status)> done) override { done(fw::status::ok()); }
  void delete_pod(const pod_info&, const std::string&, std::function<void(fw::status)> done) override {
    done(fw::status::ok());
  }
  void set_nominated_node(const pod_info&, const std::string&, std::function<void(fw::status)> done) override {
    done(fw::status::ok());
  }
  void bind_volumes(const pod_info& pod, std::vector<std::shared_ptr<const k8s::core::PersistentVolume>> pvs,
                    std::vector<std::shared_ptr<const k8s::core::PersistentVolumeClaim>> claims,
                    std::vector<std::string> wait_for, std::chrono::milliseconds timeout,
                    std::function<void(fw::status)> done) override {
    calls.push_back({pod.key(), std::move(pvs), std::move(claims), std::move(wait_for), timeout, std::move(done)});
  }
};

}  // namespace kas::test::vb

namespace kas::plugins {
namespace {

using test::vb::fake_client;
using test::vb::make_node;
using test::vb::make_pod;
using test::vb::make_pv;
using test::vb::make_pvc;
using test::vb::world;

constexpr const char* hostname = "kubernetes.io/hostname";

std::shared_ptr<volume_binding> make_plugin(const std::string& args_yaml = "", bool capacity_scoring = false,
                                            fw::cluster_client* client = nullptr) {
  fw::handle h;
  if (client) h.client = fw::unowned_client(client);
  YAML::Node args = args_yaml.empty() ? YAML::Node() : YAML::Load(args_yaml);
  volume_binding_features f;
  f.storage_capacity_scoring = capacity_scoring;
  auto p = volume_binding::make_with_features(args, "args", h, f);
  if (!p) throw std::runtime_error(p.err().message);
  return std::dynamic_pointer_cast<volume_binding>(*p);
}

std::string describe(const fw::status& s) {
  if (s.is_success()) return "Success";
  if (s.reasons().empty()) return std::string(fw::to_string(s.get_code()));
  return std::string(fw::to_string(s.get_code())) + ": " + test::reasons(s);
}

// --- args ----------------------------------------------------------------------------------------

TEST(VolumeBindingArgs, Validation) {
  struct tc {
    const char* name;
    const char* yaml;
    bool scoring;
    std::string want_err;  // "" = valid
  };
  const tc cases[] = {
    {"zero is a valid config", "bindTimeoutSeconds: 0", false, ""},
    {"positive value is valid config", "bindTimeoutSeconds: 10", false, ""},
    {"negative value is invalid config", "bindTimeoutSeconds: -10", false,
     "args.bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value"},
    {"[StorageCapacityScoring=off] shape should be nil when the feature is off", "bindTimeoutSeconds: 10", false, ""},
    {"[StorageCapacityScoring=off] error if the shape is not nil when the feature is off",
     "{bindTimeoutSeconds: 10, shape: [{utilization: 1, score: 1}, {utilization: 3, score: 3}]}", false,
     "args.shape: Invalid value: []config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:1, Score:1}, "
     "config.UtilizationShapePoint{Utilization:3, Score:3}}: unexpected field `shape`, remove it or turn on the "
     "feature gate StorageCapacityScoring"},
    {"[StorageCapacityScoring=on] shape should not be empty", "{bindTimeoutSeconds: 10, shape: []}", true, ""},
    {"[StorageCapacityScoring=on] shape points must be sorted in increasing order",
     "{bindTimeoutSeconds: 10, shape: [{utilization: 3, score: 3}, {utilization: 1, score: 1}]}", true,
     "args.shape[1].utilization: Invalid value: 1: values must be sorted in increasing order"},
    {"[StorageCapacityScoring=on] shape point: invalid utilization and score",
     "{bindTimeoutSeconds: 10, shape: [{utilization: -1, score: 1}, {utilization: 10, score: -1}, "
     "{utilization: 20, score: 11}, {utilization: 101, score: 1}]}",
     true, "args.shape[0].utilization: Invalid value: -1: not in valid range [0, 100]"},
    {"[StorageCapacityScoring=on] score out of range", "{shape: [{utilization: 0, score: 11}]}", true,
     "args.shape[0].score: Invalid value: 11: not in valid range [0, 10]"},
    {"unknown field", "{bindTimeout: 1}", false, "args.bindTimeout: unknown field"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    volume_binding_features f;
    f.storage_capacity_scoring = c.scoring;
    auto r = parse_volume_binding_args(YAML::Load(c.yaml), "args", f);
    if (c.want_err.empty()) {
      EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.err().message);
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.err().message, c.want_err);
    }
  }
}

TEST(VolumeBindingArgs, Defaults) {
  auto off = parse_volume_binding_args(YAML::Node(), "args");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->bind_timeout_seconds, 600);
  EXPECT_TRUE(off->shape.empty());
  volume_binding_features on;
  on.storage_capacity_scoring = true;
  auto with = parse_volume_binding_args(YAML::Node(), "args", on);
  ASSERT_TRUE(with.ok());
  ASSERT_EQ(with->shape.size(), 2u);
  EXPECT_EQ(with->shape[0].utilization, 0);
  EXPECT_EQ(with->shape[0].score, 10);
  EXPECT_EQ(with->shape[1].utilization, 100);
  EXPECT_EQ(with->shape[1].score, 0);
}

TEST(VolumeBindingScorer, BrokenLinearShape) {
  volume_capacity_scorer s({{0, 0}, {50, 3}, {100, 5}});
  EXPECT_EQ(s.shape_value(0), 0);
  EXPECT_EQ(s.shape_value(25), 15);
  EXPECT_EQ(s.shape_value(50), 30);
  EXPECT_EQ(s.shape_value(75), 40);
  EXPECT_EQ(s.shape_value(100), 50);
  EXPECT_EQ(s.shape_value(150), 50);
  // Two classes average, rounded: (25 + 50) / 2 = 37.5 -> 38 with {0:0, 100:10}.
  volume_capacity_scorer lin({{0, 0}, {100, 10}});
  EXPECT_EQ(lin.score({{"a", {50, 200}}, {"b", {100, 200}}}), 38);
  EXPECT_EQ(lin.score({{"a", {300, 200}}}), 100);  // over-committed counts as full
  EXPECT_EQ(lin.score({}), 0);
}

// --- PreFilter, Filter, Score (kube's TestVolumeBinding) -----------------------------------------

struct binding_case {
  std::string name;
  test::vb::pod_spec pod;
  std::vector<std::shared_ptr<node_info>> nodes;
  std::vector<test::vb::pvc_spec> pvcs;
  std::vector<test::vb::pv_spec> pvs;
  bool capacity_scoring = false;
  std::string args;
  std::string want_pre_filter = "Success";
  std::vector<std::string> want_filter;  // per node
  std::vector<int64_t> want_scores;      // per node, when PreScore does not skip
  bool want_pre_score_skip = true;
};

void run_binding_case(const binding_case& c) {
  SCOPED_TRACE(c.name);
  world w;
  for (auto& p : c.pvcs) w.add(p);
  for (auto& p : c.pvs) w.add(p);
  auto pl = make_plugin(c.args, c.capacity_scoring);
  auto pod = c.pod.build();
  auto snap = w.snap();
  fw::cycle_state state;
  fw::pre_filter_result r;
  auto pre = pl->pre_filter(state, *pod, snap, r);
  EXPECT_EQ(describe(pre), c.want_pre_filter);
  EXPECT_TRUE(r.all_nodes());
  if (!pre.is_success()) return;
  ASSERT_EQ(c.want_filter.size(), c.nodes.size());
  std::vector<const node_info*> feasible;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    auto st = pl->filter(state, *pod, *c.nodes[i]);
    EXPECT_EQ(describe(st), c.want_filter[i]) << c.nodes[i]->name;
  }
  for (auto& n : c.nodes) feasible.push_back(n.get());
  auto ps = pl->pre_score(state, *pod, feasible);
  EXPECT_EQ(ps.is_skip(), c.want_pre_score_skip);
  if (ps.is_skip()) return;
  ASSERT_EQ(c.want_scores.size(), c.nodes.size());
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    int64_t score = -1;
    EXPECT_TRUE(pl->score(state, *pod, *c.nodes[i], score).is_success());
    EXPECT_EQ(score, c.want_scores[i]) << c.nodes[i]->name;
  }
}

const std::string unresolvable = "UnschedulableAndUnresolvable: ";

std::vector<test::vb::pv_spec> local_pvs(const std::string& cls_a, const std::string& cls_b, int first) {
  std::vector<test::vb::pv_spec> out;
  for (int i = 0; i < 2; ++i)
    out.push_back(make_pv("pv-a-" + std::to_string(first + i), cls_a)
                    .with_phase("Available")
                    .with_capacity("200Gi")
                    .with_node_affinity({{hostname, {"node-a"}}}));
  for (int i = 0; i < 2; ++i)
    out.push_back(make_pv("pv-b-" + std::to_string(first + i), cls_b)
                    .with_phase("Available")
                    .with_capacity("100Gi")
                    .with_node_affinity({{hostname, {"node-b"}}}));
  return out;
}

std::vector<test::vb::pv_spec> zonal_pvs() {
  std::vector<test::vb::pv_spec> out;
  for (auto [zone, cap] : {std::pair{"a", "200Gi"}, std::pair{"b", "100Gi"}})
    for (int i = 0; i < 2; ++i)
      out.push_back(make_pv(std::string("pv-") + zone + "-" + std::to_string(i), "wait-sc")
                      .with_phase("Available")
                      .with_capacity(cap)
                      .with_node_affinity({{"topology.kubernetes.io/region", {std::string("region-") + zone}},
                                           {"topology.kubernetes.io/zone", {std::string("zone-") + zone}}}));
  return out;
}

std::vector<std::shared_ptr<node_info>> zonal_nodes() {
  std::vector<std::shared_ptr<node_info>> out;
  for (const char* z : {"a", "b", "c"})
    for (const char* n : {"a", "b"})
      out.push_back(make_node(std::string("zone-") + z + "-node-" + n,
                              {{"topology.kubernetes.io/region", std::string("region-") + z},
                               {"topology.kubernetes.io/zone", std::string("zone-") + z}}));
  return out;
}

TEST(VolumeBinding, PreFilterFilterScore) {
  const std::string no_pv = unresolvable + std::string(err_reason_bind_conflict);
  std::vector<binding_case> cases;
  cases.push_back({"pod has not pvcs", make_pod("pod-a"), {make_node("node-a")}, {}, {}, false, "", "Skip", {}, {}});
  cases.push_back({"all bound", make_pod("pod-a").with_pvc_volume("pvc-a"), {make_node("node-a")},
                   {make_pvc("pvc-a", "wait-sc").with_bound_pv("pv-a")},
                   {make_pv("pv-a", "wait-sc").with_phase("Available")}, false, "", "Success", {"Success"}, {}});
  cases.push_back({"all bound with local volumes",
                   make_pod("pod-a").with_pvc_volume("pvc-a", "volume-a").with_pvc_volume("pvc-b", "volume-b"),
                   {make_node("node-a"), make_node("node-b")},
                   {make_pvc("pvc-a", "wait-sc").with_bound_pv("pv-a"), make_pvc("pvc-b", "wait-sc").with_bound_pv("pv-b")},
                   {make_pv("pv-a", "wait-sc").with_phase("Bound").with_node_affinity({{hostname, {"node-a"}}}),
                    make_pv("pv-b", "wait-sc").with_phase("Bound").with_node_affinity({{hostname, {"node-a"}}})},
                   false, "", "Success", {"Success", unresolvable + std::string(err_reason_node_conflict)}, {}});
  cases.push_back({"PVC does not exist", make_pod("pod-a").with_pvc_volume("pvc-a"), {make_node("node-a")}, {}, {},
                   false, "", unresolvable + "persistentvolumeclaim \"pvc-a\" not found", {}, {}});
  cases.push_back({"Part of PVCs do not exist", make_pod("pod-a").with_pvc_volume("pvc-a").with_pvc_volume("pvc-b"),
                   {make_node("node-a")}, {make_pvc("pvc-a", "wait-sc").with_bound_pv("pv-a")}, {}, false, "",
                   unresolvable + "persistentvolumeclaim \"pvc-b\" not found", {}, {}});
  cases.push_back({"immediate claims not bound", make_pod("pod-a").with_pvc_volume("pvc-a"), {make_node("node-a")},
                   {make_pvc("pvc-a", "immediate-sc")}, {}, false, "",
                   unresolvable + "pod has unbound immediate PersistentVolumeClaims", {}, {}});
  cases.push_back({"unbound claims no matches", make_pod("pod-a").with_pvc_volume("pvc-a"), {make_node("node-a")},
                   {make_pvc("pvc-a", "wait-sc")}, {}, false, "", "Success", {no_pv}, {}});
  cases.push_back({"bound and unbound unsatisfied", make_pod("pod-a").with_pvc_volume("pvc-a").with_pvc_volume("pvc-b"),
                   {make_node("node-a", {{"foo", "barbar"}})},
                   {make_pvc("pvc-a", "wait-sc").with_bound_pv("pv-a"), make_pvc("pvc-b", "wait-sc")},
                   {make_pv("pv-a", "wait-sc").with_phase("Available").with_node_affinity({{"foo", {"bar"}}})}, false, "",
                   "Success",
                   {unresolvable + std::string(err_reason_node_conflict) + " | " + std::string(err_reason_bind_conflict)},
                   {}});
  cases.push_back({"pv not found", make_pod("pod-a").with_pvc_volume("pvc-a"), {make_node("node-a")},
                   {make_pvc("pvc-a", "wait-sc").with_bound_pv("pv-a")}, {}, false, "", "Success",
                   {unresolvable + "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"}, {}});
  cases.push_back({"pv not found claim lost", make_pod("pod-a").with_pvc_volume("pvc-a"), {make_node("node-a")},
                   {make_pvc("pvc-a", "wait-sc").with_bound_pv("pv-a").with_phase("Lost")}, {}, false, "",
                   unresolvable + "persistentvolumeclaim \"pvc-a\" bound to non-existent persistentvolume \"pv-a\"", {},
                   {}});
  const auto three = std::vector<std::shared_ptr<node_info>>{make_node("node-a"), make_node("node-b"), make_node("node-c")};
  cases.push_back({"local volumes with close capacity are preferred", make_pod("pod-a").with_pvc_volume("pvc-a"), three,
                   {make_pvc("pvc-a", "wait-sc").with_request_storage("50Gi")}, local_pvs("wait-sc", "wait-sc", 0), true,
                   "shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]", "Success",
                   {"Success", "Success", no_pv}, {25, 50, 0}, false});
  {
    auto pvs = local_pvs("wait-sc", "wait-sc", 0);
    auto hdd = local_pvs("wait-hdd-sc", "wait-hdd-sc", 2);
    pvs.insert(pvs.end(), hdd.begin(), hdd.end());
    cases.push_back({"local volumes with close capacity are preferred (multiple pvcs)",
                     make_pod("pod-a").with_pvc_volume("pvc-0").with_pvc_volume("pvc-1"), three,
                     {make_pvc("pvc-0", "wait-sc").with_request_storage("50Gi"),
                      make_pvc("pvc-1", "wait-hdd-sc").with_request_storage("100Gi")},
                     pvs, true, "shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]", "Success",
                     {"Success", "Success", no_pv}, {38, 75, 0}, false});
  }
  cases.push_back({"zonal volumes with close capacity are preferred", make_pod("pod-a").with_pvc_volume("pvc-a"),
                   zonal_nodes(), {make_pvc("pvc-a", "wait-sc").with_request_storage("50Gi")}, zonal_pvs(), true,
                   "shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]", "Success",
                   {"Success", "Success", "Success", "Success", no_pv, no_pv}, {25, 25, 50, 50, 0, 0}, false});
  cases.push_back({"zonal volumes with close capacity are preferred (custom shape)",
                   make_pod("pod-a").with_pvc_volume("pvc-a"), zonal_nodes(),
                   {make_pvc("pvc-a", "wait-sc").with_request_storage("50Gi")}, zonal_pvs(), true,
                   "{bindTimeoutSeconds: 300, shape: [{utilization: 0, score: 0}, {utilization: 50, score: 3}, "
                   "{utilization: 100, score: 5}]}",
                   "Success", {"Success", "Success", "Success", "Success", no_pv, no_pv}, {15, 15, 30, 30, 0, 0}, false});
  cases.push_back({"default shape prefers free capacity", make_pod("pod-a").with_pvc_volume("pvc-a"), three,
                   {make_pvc("pvc-a", "wait-sc").with_request_storage("50Gi")}, local_pvs("wait-sc", "wait-sc", 0), true,
                   "", "Success", {"Success", "Success", no_pv}, {75, 50, 0}, false});
  cases.push_back({"scoring off by default in v1.36", make_pod("pod-a").with_pvc_volume("pvc-a"), three,
                   {make_pvc("pvc-a", "wait-sc").with_request_storage("50Gi")}, local_pvs("wait-sc", "wait-sc", 0), false,
                   "", "Success", {"Success", "Success", no_pv}, {}, true});
  for (const auto& c : cases) run_binding_case(c);
}

TEST(VolumeBinding, PreFilterClaimChecks) {
  struct tc {
    const char* name;
    test::vb::pvc_spec pvc;
    test::vb::pod_spec pod;
    std::string want;
  };
  auto ephemeral = make_pod("pod-a").with_generic_ephemeral_volume("ephemeral");
  const tc cases[] = {
    {"persistent volume claim being deleted", [] { auto p = make_pvc("pvc-a", "wait-sc"); p.deleting = true; return p; }(),
     make_pod("pod-a").with_pvc_volume("pvc-a"), unresolvable + "persistentvolumeclaim \"pvc-a\" is being deleted"},
    {"generic ephemeral volume missing", make_pvc("other", "wait-sc"), ephemeral,
     unresolvable + "waiting for ephemeral volume controller to create the persistentvolumeclaim \"pod-a-ephemeral\""},
    {"generic ephemeral volume not owned by the pod", make_pvc("pod-a-ephemeral", "wait-sc").with_owner("someone-else"),
     ephemeral, unresolvable + "PVC default/pod-a-ephemeral was not created for pod default/pod-a (pod is not owner)"},
    {"generic ephemeral volume owned by the pod", make_pvc("pod-a-ephemeral", "wait-sc").with_owner("pod-a-uid"), ephemeral,
     "Success"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    world w;
    w.add(c.pvc);
    auto pl = make_plugin();
    fw::cycle_state state;
    fw::pre_filter_result r;
    EXPECT_EQ(describe(pl->pre_filter(state, *c.pod.build(), w.snap(), r)), c.want);
  }
}

// --- FindPodVolumes (kube's binder_test TestFindPodVolumesWithoutProvisioning / WithProvisioning) --

struct find_case {
  std::string name;
  std::vector<test::vb::pvc_spec> pvcs;  // the pod uses them all
  std::vector<test::vb::pv_spec> pvs;
  std::string want;                       // Filter status on node1
  std::vector<std::string> want_bindings;  // "pv<-pvc"
  std::vector<std::string> want_provisions;
};

void run_find_case(const find_case& c, world& w) {
  SCOPED_TRACE(c.name);
  auto pod = make_pod("pod-a");
  for (auto& p : c.pvcs) {
    w.add(p);
    pod.with_pvc_volume(p.name);
  }
  for (auto& p : c.pvs) w.add(p);
  auto node = make_node("node1", {{"nodeKey", "node1"}});
  auto built = pod.build();
  auto snap = w.snap();
  fw::cycle_state state;
  fw::pre_filter_result r;
  auto pre = make_plugin()->pre_filter(state, *built, snap, r);
  if (pre.is_skip()) {
    // No claims: PreFilter skips the plugin, which is Filter's success.
    EXPECT_EQ("Success", c.want);
    return;
  }
  if (!pre.is_success()) {
    EXPECT_EQ(describe(pre), c.want);
    return;
  }
  const auto& claims = get_pod_volume_claims(*built, snap.objects().volumes);
  pod_volumes out;
  auto st = find_pod_volumes(*built, claims, *node, snap.objects().volumes, out);
  EXPECT_EQ(describe(st), c.want);
  std::vector<std::string> bindings, provisions;
  for (auto& b : out.static_bindings) bindings.push_back(b.pv->name + "<-" + b.pvc->name);
  for (auto& p : out.dynamic_provisions) provisions.push_back(p.pvc->name);
  EXPECT_EQ(bindings, c.want_bindings);
  EXPECT_EQ(provisions, c.want_provisions);
}

test::vb::pv_spec pv_node1(const std::string& name, const std::string& cap, const std::string& cls = "wait-sc") {
  return make_pv(name, cls).with_phase("Available").with_capacity(cap).with_node_affinity({{"nodeKey", {"node1"}}});
}
test::vb::pv_spec pv_node2(const std::string& name, const std::string& cap) {
  return make_pv(name, "wait-sc").with_phase("Available").with_capacity(cap).with_node_affinity({{"nodeKey", {"node2"}}});
}

TEST(VolumeBinding, FindPodVolumesWithoutProvisioning) {
  const std::string bind_conflict = unresolvable + std::string(err_reason_bind_conflict);
  const std::vector<find_case> cases = {
    {"no-volumes", {}, {}, "Success", {}, {}},
    {"bound-pvc", {make_pvc("bound-pvc", "wait-sc").with_bound_pv("pv-bound")},
     {pv_node1("pv-bound", "1G").with_claim("default", "bound-pvc")}, "Success", {}, {}},
    {"bound-pvc,pv-not-exists", {make_pvc("bound-pvc", "wait-sc").with_bound_pv("pv-bound")}, {},
     unresolvable + std::string(err_reason_pv_not_exist), {}, {}},
    {"prebound-pvc", {make_pvc("prebound-pvc", "wait-sc").with_pre_bound_pv("pv-node1a")},
     {pv_node1("pv-node1a", "1G")}, unresolvable + "pod has unbound immediate PersistentVolumeClaims", {}, {}},
    {"unbound-pvc,pv-same-node", {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G")},
     {pv_node2("pv-node2a", "1G"), pv_node1("pv-node1a", "1G"), pv_node1("pv-node1b", "2G")}, "Success",
     {"pv-node1a<-unbound-pvc"}, {}},
    {"unbound-pvc,pv-different-node", {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G")},
     {pv_node2("pv-node2a", "1G")}, bind_conflict, {}, {}},
    {"two-unbound-pvcs",
     {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G"),
      make_pvc("unbound-pvc2", "wait-sc").with_request_storage("5G")},
     {pv_node1("pv-node1a", "1G"), pv_node1("pv-node1b", "10G")}, "Success",
     {"pv-node1a<-unbound-pvc", "pv-node1b<-unbound-pvc2"}, {}},
    {"two-unbound-pvcs,order-by-size",
     {make_pvc("unbound-pvc2", "wait-sc").with_request_storage("5G"),
      make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G")},
     {pv_node1("pv-node1a", "1G"), pv_node1("pv-node1b", "10G")}, "Success",
     {"pv-node1a<-unbound-pvc", "pv-node1b<-unbound-pvc2"}, {}},
    {"two-unbound-pvcs,partial-match",
     {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G"),
      make_pvc("unbound-pvc2", "wait-sc").with_request_storage("5G")},
     {pv_node1("pv-node1a", "1G")}, bind_conflict, {"pv-node1a<-unbound-pvc"}, {}},
    {"one-bound,one-unbound",
     {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G"),
      make_pvc("bound-pvc", "wait-sc").with_bound_pv("pv-bound")},
     {pv_node1("pv-bound", "1G").with_claim("default", "bound-pvc"), pv_node1("pv-node1a", "1G")}, "Success",
     {"pv-node1a<-unbound-pvc"}, {}},
    {"one-bound,one-unbound,no-match",
     {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G"),
      make_pvc("bound-pvc", "wait-sc").with_bound_pv("pv-bound")},
     {pv_node1("pv-bound", "1G").with_claim("default", "bound-pvc"), pv_node2("pv-node2a", "1G")}, bind_conflict, {},
     {}},
    {"one-prebound,one-unbound",
     {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G"),
      make_pvc("prebound-pvc", "wait-sc").with_pre_bound_pv("pv-node1a")},
     {pv_node1("pv-node1a", "1G"), pv_node1("pv-node1b", "1G")},
     unresolvable + "pod has unbound immediate PersistentVolumeClaims", {}, {}},
    {"immediate-bound-pvc", {make_pvc("immediate-bound-pvc", "immediate-sc").with_bound_pv("pv-bound-immediate")},
     {pv_node1("pv-bound-immediate", "1G", "immediate-sc").with_claim("default", "immediate-bound-pvc")}, "Success", {},
     {}},
    {"immediate-bound-pvc-wrong-node",
     {make_pvc("immediate-bound-pvc", "immediate-sc").with_bound_pv("pv-bound-immediate-node2")},
     {pv_node2("pv-bound-immediate-node2", "1G").with_claim("default", "immediate-bound-pvc")},
     unresolvable + std::string(err_reason_node_conflict), {}, {}},
    {"immediate-unbound-pvc", {make_pvc("immediate-unbound-pvc", "immediate-sc")}, {},
     unresolvable + "pod has unbound immediate PersistentVolumeClaims", {}, {}},
    {"unbound-pvc,pv-claimed-by-other", {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G")},
     {pv_node1("pv-node1a", "1G").with_claim("default", "someone-else")}, bind_conflict, {}, {}},
    {"unbound-pvc,pv-pre-bound-to-it", {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G")},
     {pv_node1("pv-node1a", "1G"), pv_node1("pv-node1z", "5G").with_claim("default", "unbound-pvc")}, "Success",
     {"pv-node1z<-unbound-pvc"}, {}},
  };
  for (const auto& c : cases) {
    world w;
    run_find_case(c, w);
  }
}

TEST(VolumeBinding, FindPodVolumesWithProvisioning) {
  const std::string bind_conflict = unresolvable + std::string(err_reason_bind_conflict);
  auto prov = [](const std::string& name) {
    return make_pvc(name, "wait-provision-sc").with_request_storage("1G");
  };
  const std::vector<find_case> cases = {
    {"one-provisioned", {prov("provisioned-pvc")}, {}, "Success", {}, {"provisioned-pvc"}},
    {"two-unbound-pvcs,one-matched,one-provisioned",
     {make_pvc("unbound-pvc", "wait-sc").with_request_storage("1G"), prov("provisioned-pvc")},
     {pv_node1("pv-node1a", "1G")}, "Success", {"pv-node1a<-unbound-pvc"}, {"provisioned-pvc"}},
    {"one-bound,one-provisioned",
     {make_pvc("bound-pvc", "wait-sc").with_bound_pv("pv-bound"), prov("provisioned-pvc")},
     {pv_node1("pv-bound", "1G").with_claim("default", "bound-pvc")}, "Success", {}, {"provisioned-pvc"}},
    {"one-binding,one-selected-node",
     {make_pvc("bound-pvc", "wait-sc").with_bound_pv("pv-bound"), prov("provisioned-pvc").with_selected_node("node1")},
     {pv_node1("pv-bound", "1G").with_claim("default", "bound-pvc")}, "Success", {}, {"provisioned-pvc"}},
    {"selected-node-elsewhere", {prov("provisioned-pvc").with_selected_node("node2")}, {}, bind_conflict, {}, {}},
    {"invalid-provisioner", {make_pvc("no-provisioner-pvc", "wait-sc").with_request_storage("1G")}, {}, bind_conflict, {},
     {}},
    {"volume-topology-unsatisfied", {make_pvc("topo-pvc", "wait-topology-sc").with_request_storage("1G")}, {},
     bind_conflict, {}, {}},
    {"volume-topology-satisfied", {make_pvc("topo-pvc", "wait-topology-node1-sc").with_request_storage("1G")}, {},
     "Success", {}, {"topo-pvc"}},
  };
  for (const auto& c : cases) {
    world w;
    w.add_class("metadata: {name: wait-provision-sc}\nprovisioner: test-provisioner\nvolumeBindingMode: WaitForFirstConsumer");
    w.add_class("metadata: {name: wait-topology-sc}\nprovisioner: test-provisioner\nvolumeBindingMode: "
                "WaitForFirstConsumer\nallowedTopologies: [{matchLabelExpressions: [{key: nodeKey, values: [node2]}]}]");
    w.add_class("metadata: {name: wait-topology-node1-sc}\nprovisioner: test-provisioner\nvolumeBindingMode: "
                "WaitForFirstConsumer\nallowedTopologies: [{matchLabelExpressions: [{key: nodeKey, values: [node2, "
                "node1]}]}]");
    run_find_case(c, w);
  }
}

// kube's TestCapacity: CSIStorageCapacity objects for a driver with storageCapacity: true.
TEST(VolumeBinding, FindPodVolumesCapacity) {
  struct tc {
    const char* name;
    std::vector<std::string> capacities;  // YAML
    bool driver_tracks = true;
    std::string want;
  };
  const std::string space = unresolvable + std::string(err_reason_not_enough_space);
  auto cap = [](const std::string& name, const std::string& cls, const std::string& topo, const std::string& fields) {
    return "metadata: {name: " + name + ", namespace: kube-system}\nstorageClassName: " + cls +
           "\n" + (topo.empty() ? "" : "nodeTopology: " + topo + "\n") + fields;
  };
  const std::string match = "{matchLabels: {nodeKey: node1}}";
  const tc cases[] = {
    {"network-attached", {cap("c", "wait-provision-sc", "{}", "capacity: 1Gi")}, true, "Success"},
    {"local-storage", {cap("c", "wait-provision-sc", match, "capacity: 1Gi")}, true, "Success"},
    {"other-node", {cap("c", "wait-provision-sc", "{matchLabels: {nodeKey: node2}}", "capacity: 1Gi")}, true, space},
    {"no-topology", {cap("c", "wait-provision-sc", "", "capacity: 1Gi")}, true, space},
    {"wrong-storage-class", {cap("c", "other-sc", match, "capacity: 1Gi")}, true, space},
    {"insufficient-storage", {cap("c", "wait-provision-sc", match, "capacity: 1Ki")}, true, space},
    {"insufficient-volume-size", {cap("c", "wait-provision-sc", match, "capacity: 1Gi\nmaximumVolumeSize: 1Ki")}, true,
     space},
    {"zero storage capacity", {cap("c", "wait-provision-sc", match, "capacity: \"0\"")}, true, space},
    {"nil storage capacity", {cap("c", "wait-provision-sc", match, "")}, true, space},
    {"no-capacity-objects", {}, true, space},
    {"capacity-tracking-off", {}, false, "Success"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    world w;
    w.add_class("metadata: {name: wait-provision-sc}\nprovisioner: test-provisioner\nvolumeBindingMode: WaitForFirstConsumer");
    w.add_driver(std::string("metadata: {name: test-provisioner}\nspec: {storageCapacity: ") +
                 (c.driver_tracks ? "true" : "false") + "}");
    for (auto& y : c.capacities) w.add_capacity(y);
    find_case f{c.name, {make_pvc("provisioned-pvc", "wait-provision-sc").with_request_storage("1Mi")}, {}, c.want, {}, {}};
    if (c.want == "Success") f.want_provisions = {"provisioned-pvc"};
    run_find_case(f, w);
  }
}

// --- Reserve, Unreserve, PreBind --------------------------------------------------------------------

struct cycle {
  world w;
  fake_client client;
  std::shared_ptr<volume_binding> pl;
  pod_info_ptr pod;
  fw::cycle_state state;
  std::shared_ptr<node_info> node = make_node("node-a");

  void run_to_reserve(const test::vb::pod_spec& p) {
    pl = make_plugin("bindTimeoutSeconds: 30", false, &client);
    pod = p.build();
    fw::pre_filter_result r;
    auto pre = pl->pre_filter(state, *pod, w.snap(), r);
    ASSERT_TRUE(pre.is_success() || pre.is_skip()) << describe(pre);
    if (pre.is_success()) {
      ASSERT_TRUE(pl->filter(state, *pod, *node).is_success());
    }
    ASSERT_TRUE(pl->reserve(state, *pod, node->name).is_success());
  }
};

TEST(VolumeBinding, ReserveAndPreBindStaticBinding) {
  cycle c;
  c.w.add(make_pvc("pvc-a", "wait-sc").with_request_storage("1Gi"));
  c.w.add(make_pv("pv-a", "wait-sc").with_phase("Available").with_capacity("1Gi").with_node_affinity({{hostname, {"node-a"}}}));
  c.run_to_reserve(make_pod("pod-a").with_pvc_volume("pvc-a"));

  const volume_bindings* b = volume_binding::assumed(c.state);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->node, "node-a");
  ASSERT_EQ(b->pvs.size(), 1u);
  EXPECT_TRUE(b->claims.empty());
  const auto& ref = b->pvs[0]->spec().claim_ref();
  EXPECT_EQ(ref.kind(), "PersistentVolumeClaim");
  EXPECT_EQ(ref.api_version(), "v1");
  EXPECT_EQ(ref.namespace_(), "default");
  EXPECT_EQ(ref.name(), "pvc-a");
  EXPECT_EQ(ref.uid(), "pvc-a-uid");
  EXPECT_EQ(b->pvs[0]->metadata().annotations().at("pv.kubernetes.io/bound-by-controller"), "yes");
  ASSERT_EQ(b->compiled_pvs.size(), 1u);
  ASSERT_TRUE(b->compiled_pvs[0]->claim_ref.has_value());
  EXPECT_EQ(b->compiled_pvs[0]->claim_ref->name, "pvc-a");
  EXPECT_EQ(b->wait_for, std::vector<std::string>{"pvc-a"});

  EXPECT_TRUE(c.pl->pre_bind_pre_flight(c.state, *c.pod, "node-a").is_success());
  std::vector<fw::status> results;
  auto st = c.pl->pre_bind_async(c.state, *c.pod, "node-a", [&](fw::status s) { results.push_back(s); });
  EXPECT_EQ(st.get_code(), fw::code::pending);
  ASSERT_EQ(c.client.calls.size(), 1u);
  EXPECT_EQ(c.client.calls[0].pod, "default/pod-a");
  EXPECT_EQ(c.client.calls[0].pvs.size(), 1u);
  EXPECT_EQ(c.client.calls[0].wait_for, std::vector<std::string>{"pvc-a"});
  EXPECT_EQ(c.client.calls[0].timeout, std::chrono::milliseconds(30000));
  EXPECT_TRUE(results.empty());
  c.client.calls[0].done(fw::status::ok());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].is_success());
  // The synchronous PreBind cannot wait for the PV controller.
  EXPECT_EQ(c.pl->pre_bind(c.state, *c.pod, "node-a").get_code(), fw::code::error);
}

TEST(VolumeBinding, ReserveAndPreBindProvisioning) {
  cycle c;
  c.w.add_class("metadata: {name: wait-provision-sc}\nprovisioner: test-provisioner\nvolumeBindingMode: WaitForFirstConsumer");
  c.w.add(make_pvc("pvc-a", "wait-provision-sc").with_request_storage("1Gi"));
  c.run_to_reserve(make_pod("pod-a").with_pvc_volume("pvc-a"));
  const volume_bindings* b = volume_binding::assumed(c.state);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->pvs.empty());
  ASSERT_EQ(b->claims.size(), 1u);
  EXPECT_EQ(b->claims[0]->metadata().annotations().at("volume.kubernetes.io/selected-node"), "node-a");
  EXPECT_EQ(b->compiled_claims[0]->selected_node, "node-a");

  std::vector<fw::status> results;
  EXPECT_EQ(c.pl->pre_bind_async(c.state, *c.pod, "node-a", [&](fw::status s) { results.push_back(s); }).get_code(),
            fw::code::pending);
  ASSERT_EQ(c.client.calls.size(), 1u);
  EXPECT_EQ(c.client.calls[0].claims.size(), 1u);
  c.client.calls[0].done(fw::status::error("binding volumes: timed out waiting for the condition"));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].get_code(), fw::code::error);

  c.pl->unreserve(c.state, *c.pod, "node-a");
  EXPECT_EQ(volume_binding::assumed(c.state), nullptr);
  c.pl->unreserve(c.state, *c.pod, "node-a");  // idempotent
  EXPECT_EQ(volume_binding::assumed(c.state), nullptr);
}

TEST(VolumeBinding, AllBoundSkipsPreBind) {
  struct tc {
    const char* name;
    bool with_claim;
  };
  for (const tc t : {tc{"pod has not pvcs", false}, tc{"all bound", true}}) {
    SCOPED_TRACE(t.name);
    cycle c;
    auto pod = make_pod("pod-a");
    if (t.with_claim) {
      c.w.add(make_pvc("pvc-a", "wait-sc").with_bound_pv("pv-a"));
      c.w.add(make_pv("pv-a", "wait-sc").with_phase("Bound").with_claim("default", "pvc-a"));
      pod.with_pvc_volume("pvc-a");
    }
    c.run_to_reserve(pod);
    EXPECT_EQ(volume_binding::assumed(c.state), nullptr);
    EXPECT_TRUE(c.pl->pre_bind_pre_flight(c.state, *c.pod, "node-a").is_skip());
    EXPECT_TRUE(c.pl->pre_bind(c.state, *c.pod, "node-a").is_success());
    EXPECT_TRUE(c.pl->pre_bind_async(c.state, *c.pod, "node-a", [](fw::status) { FAIL(); }).is_success());
    EXPECT_TRUE(c.client.calls.empty());
  }
}

TEST(VolumeBinding, PreBindWithoutPlanForNode) {
  cycle c;
  c.w.add(make_pvc("pvc-a", "wait-sc").with_request_storage("1Gi"));
  c.w.add(make_pv("pv-a", "wait-sc").with_phase("Available").with_capacity("1Gi"));
  c.run_to_reserve(make_pod("pod-a").with_pvc_volume("pvc-a"));
  auto st = c.pl->pre_bind_pre_flight(c.state, *c.pod, "node-b");
  EXPECT_EQ(describe(st), "Error: no pod volumes found for node \"node-b\"");
}

TEST(VolumeBinding, CloneIsDeep) {
  cycle c;
  c.w.add(make_pvc("pvc-a", "wait-sc").with_request_storage("1Gi"));
  c.w.add(make_pv("pv-a", "wait-sc").with_phase("Available").with_capacity("1Gi"));
  c.run_to_reserve(make_pod("pod-a").with_pvc_volume("pvc-a"));
  fw::cycle_state copy = c.state.clone();
  c.pl->unreserve(copy, *c.pod, "node-a");
  EXPECT_EQ(volume_binding::assumed(copy), nullptr);
  EXPECT_NE(volume_binding::assumed(c.state), nullptr);
}

// --- QueueingHints --------------------------------------------------------------------------------

fw::queueing_hint run_hint(fw::event_resource r, const pod_info& pod, const volume_change& ch) {
  auto events = make_plugin()->events_to_register();
  for (auto& e : events)
    if (e.event.resource == r) {
      if (!e.hint) return fw::queueing_hint::queue;
      fw::event_objects o;
      o.volume = &ch;
      return e.hint(pod, o);
    }
  ADD_FAILURE() << "event not registered";
  return fw::queueing_hint::skip;
}

template <class T, class Msg>
std::shared_ptr<const T> compiled(result<std::shared_ptr<const T>> (*compile)(std::shared_ptr<const Msg>),
                                  const std::string& yaml) {
  auto r = compile(test::decode<Msg>(yaml, "object"));
  if (!r) throw std::runtime_error(r.err().message);
  return *r;
}

TEST(VolumeBinding, QueueingHints) {
  using fw::event_resource;
  using fw::queueing_hint;
  auto pod = make_pod("pod-a").with_pvc_volume("pvc-a").build();
  auto sc = [](const std::string& topo) {
    return compiled<storage_class_info, k8s::storage::StorageClass>(
      compile_storage_class, "metadata: {name: sc}\nprovisioner: p\nvolumeBindingMode: WaitForFirstConsumer\n" + topo);
  };
  auto claim = [](const std::string& ns, const std::string& name) {
    return compiled<pvc_info, k8s::core::PersistentVolumeClaim>(
      compile_pvc, "metadata: {name: " + name + ", namespace: " + ns + "}");
  };
  auto csi_node = [](const std::string& ann) {
    return compiled<csi_node_info, k8s::storage::CSINode>(
      compile_csi_node, "metadata: {name: node-a" + (ann.empty() ? "" : ", annotations: {storage.alpha.kubernetes.io/migrated-plugins: \"" + ann + "\"}") + "}");
  };
  auto capacity = [](const std::string& fields) {
    return compiled<csi_storage_capacity_info, k8s::storage::CSIStorageCapacity>(
      compile_csi_storage_capacity, "metadata: {name: c, namespace: ns}\nstorageClassName: sc\n" + fields);
  };
  auto driver = [](bool tracks) {
    return compiled<csi_driver_info, k8s::storage::CSIDriver>(
      compile_csi_driver, std::string("metadata: {name: drv}\nspec: {storageCapacity: ") + (tracks ? "true" : "false") + "}");
  };
  struct tc {
    const char* name;
    event_resource resource;
    volume_change change;
    pod_info_ptr pod;
    queueing_hint want;
  };
  auto ch = [](volume_change::kind_t k) {
    volume_change c;
    c.kind = k;
    return c;
  };
  std::vector<tc> cases;
  {
    auto c = ch(volume_change::storage_class);
    c.new_class = sc("");
    cases.push_back({"queue on StorageClass add", event_resource::storage_class, c, pod, queueing_hint::queue});
    c.old_class = sc("");
    cases.push_back({"skip on StorageClass update without allowedTopologies change", event_resource::storage_class, c,
                     pod, queueing_hint::skip});
    c.new_class = sc("allowedTopologies: [{matchLabelExpressions: [{key: zone, values: [a]}]}]");
    cases.push_back({"queue on StorageClass allowedTopologies change", event_resource::storage_class, c, pod,
                     queueing_hint::queue});
  }
  {
    auto c = ch(volume_change::pvc);
    c.new_pvc = claim("default", "pvc-a");
    cases.push_back({"queue if the PVC the pod uses is added", event_resource::pvc, c, pod, queueing_hint::queue});
    c.new_pvc = claim("other", "pvc-a");
    cases.push_back({"skip if a PVC in another namespace changes", event_resource::pvc, c, pod, queueing_hint::skip});
    c.new_pvc = claim("default", "pvc-b");
    cases.push_back({"skip if a PVC the pod does not use changes", event_resource::pvc, c, pod, queueing_hint::skip});
    c.new_pvc = claim("default", "pod-a-eph");
    cases.push_back({"queue if the pod's ephemeral claim is created", event_resource::pvc, c,
                     make_pod("pod-a").with_generic_ephemeral_volume("eph").build(), queueing_hint::queue});
  }
  {
    auto c = ch(volume_change::pv);
    cases.push_back({"queue on any PV add or update", event_resource::pv, c, pod, queueing_hint::queue});
  }
  {
    auto c = ch(volume_change::csi_node);
    c.new_csi_node = csi_node("");
    cases.push_back({"queue on CSINode add", event_resource::csi_node, c, pod, queueing_hint::queue});
    c.old_csi_node = csi_node("");
    cases.push_back({"skip on CSINode update without migrated plugins change", event_resource::csi_node, c, pod,
                     queueing_hint::skip});
    c.new_csi_node = csi_node("kubernetes.io/aws-ebs");
    cases.push_back({"queue on CSINode migrated plugins change", event_resource::csi_node, c, pod, queueing_hint::queue});
  }
  {
    auto c = ch(volume_change::csi_storage_capacity);
    c.new_capacity = capacity("capacity: 1Gi");
    cases.push_back({"queue on CSIStorageCapacity add", event_resource::csi_storage_capacity, c, pod, queueing_hint::queue});
    c.old_capacity = capacity("capacity: 1Gi");
    c.new_capacity = capacity("capacity: 2Gi");
    cases.push_back({"queue when the volume limit grows", event_resource::csi_storage_capacity, c, pod,
                     queueing_hint::queue});
    c.new_capacity = capacity("capacity: 2Gi\nmaximumVolumeSize: 1Mi");
    cases.push_back({"skip when maximumVolumeSize shrinks the limit", event_resource::csi_storage_capacity, c, pod,
                     queueing_hint::skip});
    c.new_capacity = capacity("");
    cases.push_back({"skip when the limit is removed", event_resource::csi_storage_capacity, c, pod, queueing_hint::skip});
  }
  {
    auto c = ch(volume_change::csi_driver);
    c.old_csi_driver = driver(true);
    c.new_csi_driver = driver(false);
    auto csi_pod = make_pod("pod-a");
    csi_pod.extra_volumes = "  - {name: inline, csi: {driver: drv}}\n";
    cases.push_back({"queue when the pod's CSI driver stops tracking capacity", event_resource::csi_driver, c,
                     csi_pod.build(), queueing_hint::queue});
    cases.push_back({"skip when the pod does not use the driver", event_resource::csi_driver, c, pod, queueing_hint::skip});
    c.old_csi_driver = driver(false);
    c.new_csi_driver = driver(true);
    cases.push_back({"skip when the driver starts tracking capacity", event_resource::csi_driver, c, csi_pod.build(),
                     queueing_hint::skip});
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(run_hint(c.resource, *c.pod, c.change), c.want);
  }
}

TEST(VolumeBinding, EventsToRegister) {
  auto events = make_plugin()->events_to_register();
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[3].event.resource, fw::event_resource::node);
  EXPECT_EQ(events[3].event.actions, fw::act_add | fw::act_update_node_label);
  EXPECT_EQ(events[5].event.resource, fw::event_resource::csi_driver);
  EXPECT_EQ(events[5].event.actions, fw::act_update);
}

TEST(VolumeBinding, SignPod) {
  auto pl = make_plugin();
  auto sign = [&](const pod_info_ptr& p) {
    std::string s;
    EXPECT_TRUE(pl->sign_pod(*p, s));
    return s;
  };
  auto a = make_pod("pod-a").with_pvc_volume("pvc-a", "data").build();
  auto b = make_pod("pod-b").with_pvc_volume("pvc-a", "other-name").build();
  auto other = make_pod("pod-c").with_pvc_volume("pvc-b", "data").build();
  EXPECT_EQ(sign(a), sign(b));  // the volume's name is not part of its source
  EXPECT_NE(sign(a), sign(other));
  EXPECT_NE(sign(make_pod("pod-a").with_generic_ephemeral_volume("e").build()),
            sign(make_pod("pod-b").with_generic_ephemeral_volume("e").build()));
}

}  // namespace
}  // namespace kas::plugins

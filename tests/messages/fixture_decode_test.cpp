// The real apiserver fixtures (k8s.io/api testdata) must decode identically from .pb, .json and
// .yaml, and the fields the scheduler reads must come through; the storage fixtures must also
// compile (cache/volume_objects.hpp) into what the volume plugins read.
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "cache/pod_group.hpp"
#include "cache/volume_objects.hpp"
#include "messages/codec.hpp"
#include "messages/k8s/coordination.pb.h"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/events.pb.h"
#include "messages/k8s/meta.pb.h"
#include "messages/k8s/policy.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/k8s/storage.pb.h"
#include "messages/quantity.hpp"

namespace {

namespace pb = google::protobuf;
using pb::util::MessageDifferencer;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Case {
  std::string version;  // fixture directory: HEAD or v1.36.0
  std::string file;     // base name without extension
  std::string api_version;
  std::string kind;
  std::function<std::unique_ptr<pb::Message>()> make;
  std::function<void(const pb::Message&)> check;  // spot checks on the decoded object
};

// Keeps gtest from dumping the struct's bytes in failure lines.
void PrintTo(const Case& c, std::ostream* os) { *os << c.version << "/" << c.file; }

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string n = info.param.version + "_" + info.param.file;
  for (char& c : n) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

void check_meta(const k8s::meta::ObjectMeta& m) {
  EXPECT_EQ(m.name(), "nameValue");
  EXPECT_EQ(m.namespace_(), "namespaceValue");
  EXPECT_EQ(m.uid(), "uidValue");
  EXPECT_EQ(m.resource_version(), "resourceVersionValue");
  EXPECT_EQ(m.generation(), 7);
  EXPECT_EQ(m.labels().at("labelsKey"), "labelsValue");
  EXPECT_EQ(m.annotations().at("annotationsKey"), "annotationsValue");
  EXPECT_EQ(m.creation_timestamp().seconds(), 1199149261);  // 2008-01-01T01:01:01Z
  ASSERT_EQ(m.owner_references_size(), 1);
  EXPECT_TRUE(m.owner_references(0).controller());
  EXPECT_EQ(m.owner_references(0).kind(), "kindValue");
}

void check_pod(const pb::Message& msg) {
  const auto& pod = dynamic_cast<const k8s::core::Pod&>(msg);
  check_meta(pod.metadata());
  const auto& spec = pod.spec();
  EXPECT_EQ(spec.node_selector().at("nodeSelectorKey"), "nodeSelectorValue");
  EXPECT_EQ(spec.node_name(), "nodeNameValue");
  EXPECT_EQ(spec.scheduler_name(), "schedulerNameValue");
  EXPECT_EQ(spec.priority_class_name(), "priorityClassNameValue");
  EXPECT_TRUE(spec.has_priority());
  EXPECT_TRUE(spec.host_network());
  EXPECT_EQ(spec.preemption_policy(), "preemptionPolicyValue");
  ASSERT_EQ(spec.containers_size(), 1);
  const auto& c = spec.containers(0);
  EXPECT_EQ(c.name(), "nameValue");
  EXPECT_EQ(c.image(), "imageValue");
  ASSERT_EQ(c.resources().requests().count("requestsKey"), 1u);
  EXPECT_TRUE(kas::parse_quantity(c.resources().requests().at("requestsKey").string()).ok());
  ASSERT_EQ(c.resources().limits().count("limitsKey"), 1u);
  ASSERT_EQ(c.ports_size(), 1);
  EXPECT_EQ(c.ports(0).container_port(), 3);
  EXPECT_EQ(c.ports(0).host_port(), 2);
  EXPECT_EQ(c.ports(0).host_ip(), "hostIPValue");
  ASSERT_EQ(spec.init_containers_size(), 1);
  EXPECT_EQ(spec.init_containers(0).restart_policy(), "restartPolicyValue");
  ASSERT_EQ(spec.tolerations_size(), 1);
  EXPECT_EQ(spec.tolerations(0).key(), "keyValue");
  EXPECT_EQ(spec.tolerations(0).operator_(), "operatorValue");
  EXPECT_EQ(spec.tolerations(0).effect(), "effectValue");
  EXPECT_TRUE(spec.tolerations(0).has_toleration_seconds());
  const auto& na = spec.affinity().node_affinity();
  ASSERT_EQ(na.required_during_scheduling_ignored_during_execution().node_selector_terms_size(), 1);
  const auto& term = na.required_during_scheduling_ignored_during_execution().node_selector_terms(0);
  EXPECT_EQ(term.match_expressions(0).values(0), "valuesValue");
  EXPECT_EQ(term.match_fields(0).key(), "keyValue");
  ASSERT_EQ(na.preferred_during_scheduling_ignored_during_execution_size(), 1);
  EXPECT_EQ(na.preferred_during_scheduling_ignored_during_execution(0).weight(), 1);
  const auto& pa = spec.affinity().pod_affinity();
  ASSERT_EQ(pa.required_during_scheduling_ignored_during_execution_size(), 1);
  const auto& pat = pa.required_during_scheduling_ignored_during_execution(0);
  EXPECT_EQ(pat.topology_key(), "topologyKeyValue");
  EXPECT_EQ(pat.label_selector().match_labels().at("matchLabelsKey"), "matchLabelsValue");
  EXPECT_EQ(pat.match_label_keys(0), "matchLabelKeysValue");
  EXPECT_EQ(pat.mismatch_label_keys(0), "mismatchLabelKeysValue");
  EXPECT_EQ(pat.namespaces(0), "namespacesValue");
  EXPECT_EQ(spec.affinity().pod_anti_affinity().preferred_during_scheduling_ignored_during_execution(0)
                .pod_affinity_term().topology_key(),
            "topologyKeyValue");
  ASSERT_EQ(spec.topology_spread_constraints_size(), 1);
  const auto& tsc = spec.topology_spread_constraints(0);
  EXPECT_EQ(tsc.max_skew(), 1);
  EXPECT_EQ(tsc.topology_key(), "topologyKeyValue");
  EXPECT_EQ(tsc.when_unsatisfiable(), "whenUnsatisfiableValue");
  EXPECT_TRUE(tsc.has_min_domains());
  EXPECT_EQ(tsc.match_label_keys(0), "matchLabelKeysValue");
  ASSERT_EQ(spec.scheduling_gates_size(), 1);
  EXPECT_EQ(spec.scheduling_gates(0).name(), "nameValue");
  EXPECT_EQ(spec.overhead().count("overheadKey"), 1u);
  ASSERT_EQ(spec.volumes_size(), 1);
  EXPECT_EQ(spec.volumes(0).name(), "nameValue");
  EXPECT_EQ(spec.volumes(0).volume_source().persistent_volume_claim().claim_name(), "claimNameValue");
  EXPECT_TRUE(spec.volumes(0).volume_source().has_ephemeral());
  EXPECT_EQ(spec.volumes(0).volume_source().host_path().path(), "pathValue");
  EXPECT_EQ(pod.status().phase(), "phaseValue");
  EXPECT_EQ(pod.status().nominated_node_name(), "nominatedNodeNameValue");
  ASSERT_EQ(pod.status().conditions_size(), 1);
  EXPECT_EQ(pod.status().conditions(0).type(), "typeValue");
}

void check_node(const pb::Message& msg) {
  const auto& node = dynamic_cast<const k8s::core::Node&>(msg);
  check_meta(node.metadata());
  EXPECT_TRUE(node.spec().unschedulable());
  ASSERT_EQ(node.spec().taints_size(), 1);
  EXPECT_EQ(node.spec().taints(0).key(), "keyValue");
  EXPECT_EQ(node.spec().taints(0).value(), "valueValue");
  EXPECT_EQ(node.spec().taints(0).effect(), "effectValue");
  EXPECT_TRUE(node.spec().taints(0).has_time_added());
  EXPECT_EQ(node.spec().pod_cidr(), "podCIDRValue");
  ASSERT_EQ(node.status().allocatable().count("allocatableKey"), 1u);
  ASSERT_EQ(node.status().capacity().count("capacityKey"), 1u);
  EXPECT_TRUE(kas::parse_quantity(node.status().allocatable().at("allocatableKey").string()).ok());
  ASSERT_EQ(node.status().images_size(), 1);
  EXPECT_EQ(node.status().images(0).names(0), "namesValue");
  EXPECT_EQ(node.status().images(0).size_bytes(), 2);
  ASSERT_EQ(node.status().conditions_size(), 1);
  EXPECT_EQ(node.status().conditions(0).status(), "statusValue");
}

void check_binding(const pb::Message& msg) {
  const auto& b = dynamic_cast<const k8s::core::Binding&>(msg);
  check_meta(b.metadata());
  EXPECT_EQ(b.target().name(), "nameValue");
  EXPECT_EQ(b.target().kind(), "kindValue");
}

void check_lease(const pb::Message& msg) {
  const auto& l = dynamic_cast<const k8s::coordination::Lease&>(msg);
  check_meta(l.metadata());
  EXPECT_EQ(l.spec().holder_identity(), "holderIdentityValue");
  EXPECT_EQ(l.spec().lease_duration_seconds(), 2);
  EXPECT_EQ(l.spec().acquire_time().nanos(), 3000);  // 2003-01-01T01:01:01.000003Z
  EXPECT_EQ(l.spec().renew_time().nanos(), 4000);
  EXPECT_EQ(l.spec().lease_transitions(), 5);
}

void check_core_event(const pb::Message& msg) {
  const auto& e = dynamic_cast<const k8s::core::Event&>(msg);
  check_meta(e.metadata());
  EXPECT_EQ(e.involved_object().name(), "nameValue");
  EXPECT_EQ(e.reason(), "reasonValue");
  EXPECT_EQ(e.message(), "messageValue");
  EXPECT_EQ(e.source().component(), "componentValue");
  EXPECT_TRUE(e.has_first_timestamp());
  EXPECT_TRUE(e.has_event_time());
  EXPECT_EQ(e.reporting_component(), "reportingComponentValue");
  EXPECT_EQ(e.action(), "actionValue");
}

void check_events_event(const pb::Message& msg) {
  const auto& e = dynamic_cast<const k8s::events::Event&>(msg);
  check_meta(e.metadata());
  EXPECT_EQ(e.regarding().name(), "nameValue");
  EXPECT_EQ(e.note(), "noteValue");
  EXPECT_EQ(e.reporting_controller(), "reportingControllerValue");
}

void check_priority_class(const pb::Message& msg) {
  const auto& pc = dynamic_cast<const k8s::scheduling::PriorityClass&>(msg);
  check_meta(pc.metadata());
  EXPECT_EQ(pc.value(), 2);
  EXPECT_TRUE(pc.global_default());
  EXPECT_EQ(pc.description(), "descriptionValue");
  EXPECT_EQ(pc.preemption_policy(), "preemptionPolicyValue");
}

void check_pod_group(const pb::Message& msg) {
  const auto& pg = dynamic_cast<const k8s::scheduling::PodGroup&>(msg);
  check_meta(pg.metadata());
  const auto& spec = pg.spec();
  EXPECT_TRUE(spec.scheduling_policy().has_basic());
  EXPECT_TRUE(spec.scheduling_policy().has_gang());
  EXPECT_EQ(spec.scheduling_policy().gang().min_count(), 1);
  ASSERT_EQ(spec.scheduling_constraints().topology_size(), 1);
  EXPECT_EQ(spec.scheduling_constraints().topology(0).key(), "keyValue");
  EXPECT_EQ(spec.priority_class_name(), "priorityClassNameValue");
  EXPECT_TRUE(spec.has_priority());
  EXPECT_EQ(spec.priority(), 8);
}

void check_pdb(const pb::Message& msg) {
  const auto& pdb = dynamic_cast<const k8s::policy::PodDisruptionBudget&>(msg);
  check_meta(pdb.metadata());
  EXPECT_EQ(pdb.spec().min_available().type(), 1);
  EXPECT_EQ(pdb.spec().min_available().str_val(), "minAvailableValue");
  EXPECT_EQ(pdb.spec().max_unavailable().str_val(), "maxUnavailableValue");
  EXPECT_EQ(pdb.spec().selector().match_labels().at("matchLabelsKey"), "matchLabelsValue");
  EXPECT_EQ(pdb.status().disruptions_allowed(), 3);
  EXPECT_EQ(pdb.status().disrupted_pods().count("disruptedPodsKey"), 1u);
}

void check_namespace(const pb::Message& msg) {
  const auto& ns = dynamic_cast<const k8s::core::Namespace&>(msg);
  check_meta(ns.metadata());
  EXPECT_EQ(ns.status().phase(), "phaseValue");
}

void check_pv(const pb::Message& msg) {
  const auto& pv = dynamic_cast<const k8s::core::PersistentVolume&>(msg);
  check_meta(pv.metadata());
  EXPECT_EQ(pv.spec().capacity().count("capacityKey"), 1u);
  EXPECT_EQ(pv.spec().persistent_volume_source().csi().driver(), "driverValue");
  EXPECT_EQ(pv.spec().storage_class_name(), "storageClassNameValue");
  EXPECT_EQ(pv.spec().node_affinity().required().node_selector_terms_size(), 1);
}

void check_pvc(const pb::Message& msg) {
  const auto& pvc = dynamic_cast<const k8s::core::PersistentVolumeClaim&>(msg);
  check_meta(pvc.metadata());
  EXPECT_EQ(pvc.spec().volume_name(), "volumeNameValue");
  EXPECT_EQ(pvc.spec().resources().requests().count("requestsKey"), 1u);
}

void check_storage_class(const pb::Message& msg) {
  const auto& sc = dynamic_cast<const k8s::storage::StorageClass&>(msg);
  check_meta(sc.metadata());
  EXPECT_EQ(sc.provisioner(), "provisionerValue");
  EXPECT_EQ(sc.volume_binding_mode(), "volumeBindingModeValue");
  ASSERT_EQ(sc.allowed_topologies_size(), 1);
}

void check_watch_event(const pb::Message& msg) {
  const auto& w = dynamic_cast<const k8s::meta::WatchEvent&>(msg);
  EXPECT_EQ(w.type(), "typeValue");
  EXPECT_NE(w.object().raw().find("\"kind\":\"CustomType\""), std::string::npos) << w.object().raw();
}

template <class T>
std::function<std::unique_ptr<pb::Message>()> maker() {
  return [] { return std::make_unique<T>(); };
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const std::string v : {"HEAD", "v1.36.0"}) {
    out.push_back({v, "core.v1.Pod", "v1", "Pod", maker<k8s::core::Pod>(), check_pod});
    out.push_back({v, "core.v1.Node", "v1", "Node", maker<k8s::core::Node>(), check_node});
    out.push_back({v, "core.v1.Binding", "v1", "Binding", maker<k8s::core::Binding>(), check_binding});
    out.push_back({v, "core.v1.Event", "v1", "Event", maker<k8s::core::Event>(), check_core_event});
    out.push_back({v, "core.v1.Namespace", "v1", "Namespace", maker<k8s::core::Namespace>(), check_namespace});
    out.push_back({v, "core.v1.PersistentVolume", "v1", "PersistentVolume",
                   maker<k8s::core::PersistentVolume>(), check_pv});
    out.push_back({v, "core.v1.PersistentVolumeClaim", "v1", "PersistentVolumeClaim",
                   maker<k8s::core::PersistentVolumeClaim>(), check_pvc});
    out.push_back({v, "core.v1.WatchEvent", "v1", "WatchEvent", maker<k8s::meta::WatchEvent>(),
                   check_watch_event});
    out.push_back({v, "coordination.k8s.io.v1.Lease", "coordination.k8s.io/v1", "Lease",
                   maker<k8s::coordination::Lease>(), check_lease});
    out.push_back({v, "events.k8s.io.v1.Event", "events.k8s.io/v1", "Event", maker<k8s::events::Event>(),
                   check_events_event});
    out.push_back({v, "policy.v1.PodDisruptionBudget", "policy/v1", "PodDisruptionBudget",
                   maker<k8s::policy::PodDisruptionBudget>(), check_pdb});
    out.push_back({v, "scheduling.k8s.io.v1.PriorityClass", "scheduling.k8s.io/v1", "PriorityClass",
                   maker<k8s::scheduling::PriorityClass>(), check_priority_class});
    out.push_back({v, "storage.k8s.io.v1.StorageClass", "storage.k8s.io/v1", "StorageClass",
                   maker<k8s::storage::StorageClass>(), check_storage_class});
  }
  // The gang-scheduling PodGroup exists at HEAD only.
  out.push_back({"HEAD", "scheduling.k8s.io.v1beta1.PodGroup", "scheduling.k8s.io/v1beta1", "PodGroup",
                 maker<k8s::scheduling::PodGroup>(), check_pod_group});
  return out;
}

class FixtureDecode : public testing::TestWithParam<Case> {};

bool same(const pb::Message& a, const pb::Message& b, std::string* diff) {
  MessageDifferencer d;
  d.ReportDifferencesToString(diff);
  return d.Compare(a, b);
}

TEST_P(FixtureDecode, AllFormatsDecodeIdentically) {
  const Case& c = GetParam();
  const std::string base = std::string(KAS_FIXTURES_DIR) + "/" + c.version + "/" + c.file;
  auto from_pb = c.make();
  auto from_json = c.make();
  auto from_yaml = c.make();
  auto st = kas::codec::decode_protobuf(slurp(base + ".pb"), *from_pb);
  ASSERT_TRUE(st.ok()) << st.err().message;
  st = kas::codec::decode_json(slurp(base + ".json"), *from_json);
  ASSERT_TRUE(st.ok()) << st.err().message;
  st = kas::codec::decode_yaml(slurp(base + ".yaml"), *from_yaml);
  ASSERT_TRUE(st.ok()) << st.err().message;

  std::string diff;
  EXPECT_TRUE(same(*from_pb, *from_json, &diff)) << "pb vs json:\n" << diff;
  diff.clear();
  EXPECT_TRUE(same(*from_json, *from_yaml, &diff)) << "json vs yaml:\n" << diff;
  EXPECT_TRUE(MessageDifferencer::Equals(*from_pb, *from_yaml));

  c.check(*from_pb);
  c.check(*from_json);
}

TEST_P(FixtureDecode, ProtobufRoundTrip) {
  const Case& c = GetParam();
  const std::string bytes = slurp(std::string(KAS_FIXTURES_DIR) + "/" + c.version + "/" + c.file + ".pb");
  auto first = c.make();
  ASSERT_TRUE(kas::codec::decode_protobuf(bytes, *first).ok());
  const std::string encoded = kas::codec::encode_protobuf(*first, c.api_version, c.kind);
  auto second = c.make();
  auto st = kas::codec::decode_protobuf(encoded, *second);
  ASSERT_TRUE(st.ok()) << st.err().message;
  EXPECT_TRUE(MessageDifferencer::Equals(*first, *second));
}

TEST_P(FixtureDecode, JsonRoundTrip) {
  const Case& c = GetParam();
  const std::string text = slurp(std::string(KAS_FIXTURES_DIR) + "/" + c.version + "/" + c.file + ".json");
  auto first = c.make();
  ASSERT_TRUE(kas::codec::decode_json(text, *first).ok());
  const std::string encoded = kas::codec::encode_json(*first);
  auto second = c.make();
  auto st = kas::codec::decode_json(encoded, *second);
  ASSERT_TRUE(st.ok()) << st.err().message << "\n" << encoded;
  std::string diff;
  EXPECT_TRUE(same(*first, *second, &diff)) << diff << "\n" << encoded;
}

INSTANTIATE_TEST_SUITE_P(K8sApi, FixtureDecode, testing::ValuesIn(all_cases()), case_name);

// ---- the storage fixtures, compiled ----
//
// The fixtures fill enum-valued fields with placeholders ("accessModesValue") that the apiserver's
// validation would refuse, and so do the compilers: each placeholder is refused with its field path,
// then replaced by a valid value, until the object compiles; the compiled form must then carry the
// fixture's own values.

struct compile_case {
  std::string version;
  std::string ext;  // pb, json or yaml
};

void PrintTo(const compile_case& c, std::ostream* os) { *os << c.version << "." << c.ext; }

std::vector<compile_case> compile_cases() {
  std::vector<compile_case> out;
  for (const std::string v : {"HEAD", "v1.36.0"})
    for (const std::string e : {"pb", "json", "yaml"}) out.push_back({v, e});
  return out;
}

std::string compile_case_name(const testing::TestParamInfo<compile_case>& info) {
  std::string n = info.param.version + "_" + info.param.ext;
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

template <class T>
std::shared_ptr<T> decode_fixture(const compile_case& c, const std::string& file) {
  auto msg = std::make_shared<T>();
  const std::string bytes = slurp(std::string(KAS_FIXTURES_DIR) + "/" + c.version + "/" + file + "." + c.ext);
  kas::status_or_error st = c.ext == "pb"     ? kas::codec::decode_protobuf(bytes, *msg)
                            : c.ext == "json" ? kas::codec::decode_json(bytes, *msg)
                                              : kas::codec::decode_yaml(bytes, *msg);
  EXPECT_TRUE(st.ok()) << st.err().message;
  return msg;
}

// The error a compiler gives, or "" when it succeeds.
template <class Result>
std::string error_of(const Result& r) {
  return r.ok() ? std::string{} : r.err().message;
}

kas::label_map labels(std::vector<kas::label_map::entry> entries) { return kas::label_map(std::move(entries)); }

class FixtureCompile : public testing::TestWithParam<compile_case> {};

TEST_P(FixtureCompile, PersistentVolume) {
  auto pv = decode_fixture<k8s::core::PersistentVolume>(GetParam(), "core.v1.PersistentVolume");
  EXPECT_EQ(error_of(kas::compile_pv(pv)), "spec.accessModes[0]: Unsupported value: \"accessModesValue\": supported "
                                           "values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", "
                                           "\"ReadWriteOncePod\"");
  pv->mutable_spec()->clear_access_modes();
  pv->mutable_spec()->add_access_modes("ReadWriteOnce");
  pv->mutable_spec()->add_access_modes("ReadWriteOncePod");
  EXPECT_EQ(error_of(kas::compile_pv(pv)),
            "spec.volumeMode: Unsupported value: \"volumeModeValue\": supported values: \"Block\", \"Filesystem\"");
  pv->mutable_spec()->set_volume_mode("Block");
  auto compiled = kas::compile_pv(pv);
  ASSERT_TRUE(compiled.ok()) << compiled.err().message;
  const kas::pv_info& info = **compiled;
  EXPECT_EQ(info.pv, pv);
  EXPECT_EQ(info.name, "nameValue");
  EXPECT_EQ(info.uid, "uidValue");
  EXPECT_EQ(info.resource_version, "resourceVersionValue");
  ASSERT_NE(info.labels.get("labelsKey"), nullptr);
  EXPECT_EQ(*info.labels.get("labelsKey"), "labelsValue");
  EXPECT_EQ(info.storage_class, "storageClassNameValue");
  EXPECT_EQ(info.capacity_bytes, 0);  // the fixture's one capacity key is "capacityKey", not "storage"
  EXPECT_EQ(info.access_modes, kas::access_rwo | kas::access_rwop);
  EXPECT_TRUE(info.block_mode);
  ASSERT_TRUE(info.claim_ref.has_value());
  EXPECT_EQ(info.claim_ref->ns, "namespaceValue");
  EXPECT_EQ(info.claim_ref->name, "nameValue");
  EXPECT_EQ(info.claim_ref->uid, "uidValue");
  EXPECT_EQ(info.phase, "phaseValue");
  // nodeAffinity.required: one term; its "operatorValue" operators compile to requirements that
  // never match, as kube treats an unparsable requirement.
  ASSERT_TRUE(info.node_affinity.has_value());
  ASSERT_EQ(info.node_affinity->terms.size(), 1u);
  const auto& term = info.node_affinity->terms[0];
  ASSERT_EQ(term.match_expressions.size(), 1u);
  EXPECT_EQ(term.match_expressions[0].key, "keyValue");
  EXPECT_EQ(term.match_expressions[0].values, std::vector<std::string>{"valuesValue"});
  EXPECT_TRUE(term.match_expressions[0].invalid);
  ASSERT_EQ(term.match_fields.size(), 1u);
  EXPECT_TRUE(term.match_fields[0].invalid);
  EXPECT_FALSE(info.node_affinity->matches(labels({{"keyValue", "valuesValue"}}), "nameValue"));
  // Every source is set in the fixture; the first in-tree kind (gcePersistentDisk) wins.
  EXPECT_EQ(info.source.kind, kas::volume_source::gce_pd);
  EXPECT_EQ(info.source.id, "pdNameValue");
  EXPECT_TRUE(info.source.read_only);
  EXPECT_FALSE(info.bound_by_controller);
  EXPECT_TRUE(info.deleting);  // deletionTimestamp is set
}

TEST_P(FixtureCompile, PersistentVolumeClaim) {
  auto pvc = decode_fixture<k8s::core::PersistentVolumeClaim>(GetParam(), "core.v1.PersistentVolumeClaim");
  EXPECT_EQ(error_of(kas::compile_pvc(pvc)).rfind("spec.accessModes[0]: Unsupported value: \"accessModesValue\"", 0),
            0u);
  pvc->mutable_spec()->clear_access_modes();
  pvc->mutable_spec()->add_access_modes("ReadWriteMany");
  EXPECT_EQ(error_of(kas::compile_pvc(pvc)).rfind("spec.volumeMode: Unsupported value: \"volumeModeValue\"", 0), 0u);
  pvc->mutable_spec()->set_volume_mode("Filesystem");
  EXPECT_EQ(error_of(kas::compile_pvc(pvc)).rfind("spec.selector.matchExpressions[0].operator: Invalid value: "
                                                  "\"operatorValue\"", 0),
            0u);
  pvc->mutable_spec()->mutable_selector()->mutable_match_expressions(0)->set_operator_("In");
  auto compiled = kas::compile_pvc(pvc);
  ASSERT_TRUE(compiled.ok()) << compiled.err().message;
  const kas::pvc_info& info = **compiled;
  EXPECT_EQ(info.pvc, pvc);
  EXPECT_EQ(info.key(), "namespaceValue/nameValue");
  EXPECT_EQ(info.uid, "uidValue");
  EXPECT_EQ(info.resource_version, "resourceVersionValue");
  ASSERT_TRUE(info.storage_class.has_value());
  EXPECT_EQ(*info.storage_class, "storageClassNameValue");
  EXPECT_EQ(info.volume_name, "volumeNameValue");
  EXPECT_EQ(info.access_modes, kas::access_rwx);
  EXPECT_FALSE(info.block_mode);
  EXPECT_EQ(info.request_bytes, 0);  // the fixture requests "requestsKey", not "storage"
  ASSERT_TRUE(info.selector.has_value());
  EXPECT_TRUE(info.selector->matches(labels({{"matchLabelsKey", "matchLabelsValue"}, {"keyValue", "valuesValue"}})));
  EXPECT_FALSE(info.selector->matches(labels({{"matchLabelsKey", "matchLabelsValue"}})));
  EXPECT_EQ(info.phase, "phaseValue");
  EXPECT_EQ(info.controller_uid, "uidValue");  // the owner reference with controller: true
  EXPECT_EQ(info.selected_node, "");
  EXPECT_FALSE(info.bind_completed);
  EXPECT_TRUE(info.deleting);
}

TEST_P(FixtureCompile, StorageClass) {
  auto sc = decode_fixture<k8s::storage::StorageClass>(GetParam(), "storage.k8s.io.v1.StorageClass");
  EXPECT_EQ(error_of(kas::compile_storage_class(sc)),
            "volumeBindingMode: Unsupported value: \"volumeBindingModeValue\": supported values: \"Immediate\", "
            "\"WaitForFirstConsumer\"");
  sc->set_volume_binding_mode("WaitForFirstConsumer");
  auto compiled = kas::compile_storage_class(sc);
  ASSERT_TRUE(compiled.ok()) << compiled.err().message;
  const kas::storage_class_info& info = **compiled;
  EXPECT_EQ(info.sc, sc);
  EXPECT_EQ(info.name, "nameValue");
  EXPECT_EQ(info.provisioner, "provisionerValue");
  EXPECT_EQ(info.binding_mode, kas::volume_binding_mode::wait_for_first_consumer);
  ASSERT_EQ(info.allowed_topologies.size(), 1u);
  ASSERT_EQ(info.allowed_topologies[0].size(), 1u);
  EXPECT_EQ(info.allowed_topologies[0][0].key, "keyValue");
  EXPECT_EQ(info.allowed_topologies[0][0].values, std::vector<std::string>{"valuesValue"});
}

// The PodGroup fixture sets both policies of the basic/gang union: refused as the apiserver refuses
// it, then each policy alone compiles.
TEST_P(FixtureCompile, PodGroup) {
  if (GetParam().version != "HEAD") GTEST_SKIP() << "PodGroup is at HEAD only";
  auto pg = decode_fixture<k8s::scheduling::PodGroup>(GetParam(), "scheduling.k8s.io.v1beta1.PodGroup");
  EXPECT_EQ(error_of(kas::compile_pod_group(*pg)),
            "spec.schedulingPolicy: Invalid value: \"{`basic`, `gang`}\": exactly one of `basic`, `gang` is "
            "required, but multiple fields are set");
  auto gang = std::make_shared<k8s::scheduling::PodGroup>(*pg);
  gang->mutable_spec()->mutable_scheduling_policy()->clear_basic();
  EXPECT_EQ(error_of(kas::compile_pod_group(*gang)),
            "spec.priorityClassName: Invalid value: \"priorityClassNameValue\": a lowercase RFC 1123 subdomain "
            "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  pg->mutable_spec()->set_priority_class_name("high");
  gang->mutable_spec()->set_priority_class_name("high");
  // "keyValue" is a valid label key, and spec.priority wins over the class's value.
  auto compiled = kas::compile_pod_group(*gang, 1000);
  ASSERT_TRUE(compiled.ok()) << compiled.err().message;
  const kas::pod_group& g = **compiled;
  EXPECT_EQ(g.api, kas::pod_group_api::workload);
  EXPECT_EQ(g.ns, "namespaceValue");
  EXPECT_EQ(g.name, "nameValue");
  EXPECT_EQ(g.uid, "uidValue");
  EXPECT_EQ(g.creation_ns, 1199149261LL * 1000000000LL);
  EXPECT_TRUE(g.gang);
  EXPECT_EQ(g.min_count, 1);
  EXPECT_EQ(g.topology_keys, std::vector<std::string>{"keyValue"});
  EXPECT_EQ(g.priority_class_name, "high");
  EXPECT_EQ(g.priority, std::optional<int32_t>(8));
  EXPECT_EQ(kas::pod_group_key(g), "k/namespaceValue/nameValue");

  auto basic = std::make_shared<k8s::scheduling::PodGroup>(*pg);
  basic->mutable_spec()->mutable_scheduling_policy()->clear_gang();
  basic->mutable_spec()->clear_priority();
  compiled = kas::compile_pod_group(*basic, 1000);
  ASSERT_TRUE(compiled.ok()) << compiled.err().message;
  EXPECT_FALSE((*compiled)->gang);
  EXPECT_EQ((*compiled)->priority, std::optional<int32_t>(1000));  // the class's value
}

INSTANTIATE_TEST_SUITE_P(K8sApi, FixtureCompile, testing::ValuesIn(compile_cases()), compile_case_name);

}  // namespace

// Store semantics of the test apiserver fixture (store.hpp), without HTTP.
#include "tests/apiserver/store.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <google/protobuf/util/message_differencer.h>

#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/scheduling.pb.h"

#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/wire.hpp"

namespace kas::testapi {
namespace {

const kind_info& pods() { return *find_kind("", "v1", "pods"); }
const kind_info& nodes() { return *find_kind("", "v1", "nodes"); }

YAML::Node json(const std::string& s) { return *parse_json_object(s); }

YAML::Node pod_body(const std::string& name, const std::string& labels = "{}") {
  return json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","labels":)" + labels +
              R"(},"spec":{"containers":[{"name":"c","image":"busybox"}]}})");
}

TEST(Store, CreateSetsMetadataAndRejectsDuplicates) {
  store s;
  uint64_t before = s.current_rv();
  auto r = s.create(pods(), "default", pod_body("a"));
  ASSERT_TRUE(r.ok()) << r.err.message;
  const auto& o = **r.value;
  EXPECT_EQ(o.rv, before + 1);
  EXPECT_EQ(o.uid.size(), 36u);
  EXPECT_EQ(string_at(o.tree(), "metadata.resourceVersion"), std::to_string(o.rv));
  EXPECT_TRUE(string_at(o.tree(), "metadata.creationTimestamp").has_value());
  EXPECT_EQ(string_at(o.tree(), "status.phase"), "Pending");
  auto dup = s.create(pods(), "default", pod_body("a"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.err.code, 409);
  EXPECT_EQ(dup.err.reason, "AlreadyExists");
  EXPECT_EQ(dup.err.message, "pods \"a\" already exists");
}

TEST(Store, GenerateNameAndMissingNamespace) {
  store s;
  auto r = s.create(pods(), "default", json(R"({"metadata":{"generateName":"web-"}})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r.value)->name.rfind("web-", 0), 0u);
  EXPECT_EQ((*r.value)->name.size(), 9u);
  auto missing = s.create(pods(), "nope", pod_body("a"));
  EXPECT_EQ(missing.err.code, 404);
  EXPECT_EQ(missing.err.message, "namespaces \"nope\" not found");
  auto noname = s.create(pods(), "default", json(R"({"metadata":{}})"));
  EXPECT_EQ(noname.err.code, 422);
}

TEST(Store, BadTypesAre400NamingTheField) {
  store s;
  auto r = s.create(pods(), "default", json(R"({"metadata":{"name":"x"},"spec":{"priority":"high"}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.err.code, 400);
  EXPECT_NE(r.err.message.find("spec.priority"), std::string::npos) << r.err.message;
}

// kube-apiserver's Priority admission plugin, on both create paths (the tree path through create(),
// the tree-less one through create_json()).
class PriorityAdmission : public ::testing::TestWithParam<bool> {
protected:
  const kind_info& classes() { return *find_kind("scheduling.k8s.io", "v1", "priorityclasses"); }
  op_result<object_ptr> create_pod(store& s, const std::string& name, const std::string& spec_extra) {
    std::string body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                       R"("},"spec":{)" + spec_extra + R"("containers":[{"name":"c","image":"busybox"}]}})";
    return GetParam() ? s.create_json(pods(), "default", body) : s.create(pods(), "default", json(body));
  }
};

TEST_P(PriorityAdmission, ClassValueAndPolicyAreCopiedIntoThePod) {
  store s;
  ASSERT_TRUE(s.create(classes(), "", json(R"({"metadata":{"name":"high"},"value":1000,"preemptionPolicy":"Never"})")).ok());
  auto r = create_pod(s, "a", R"("priorityClassName":"high",)");
  ASSERT_TRUE(r.ok()) << r.err.message;
  EXPECT_EQ(string_at((*r.value)->tree(), "spec.priority"), "1000");
  EXPECT_EQ(string_at((*r.value)->tree(), "spec.preemptionPolicy"), "Never");
}

TEST_P(PriorityAdmission, NoClassMeansTheGlobalDefaultOrZero) {
  store s;
  auto zero = create_pod(s, "a", "");
  ASSERT_TRUE(zero.ok()) << zero.err.message;
  EXPECT_EQ(string_at((*zero.value)->tree(), "spec.priority"), "0");
  EXPECT_EQ(string_at((*zero.value)->tree(), "spec.preemptionPolicy"), "PreemptLowerPriority");
  EXPECT_FALSE(string_at((*zero.value)->tree(), "spec.priorityClassName").has_value());
  ASSERT_TRUE(s.create(classes(), "", json(R"({"metadata":{"name":"d2"},"value":20,"globalDefault":true})")).ok());
  ASSERT_TRUE(s.create(classes(), "", json(R"({"metadata":{"name":"d1"},"value":10,"globalDefault":true})")).ok());
  auto def = create_pod(s, "b", "");
  ASSERT_TRUE(def.ok()) << def.err.message;
  EXPECT_EQ(string_at((*def.value)->tree(), "spec.priority"), "10");  // the lowest of two defaults
  EXPECT_EQ(string_at((*def.value)->tree(), "spec.priorityClassName"), "d1");
}

TEST_P(PriorityAdmission, UnknownClassOrOtherValuesAre403) {
  store s;
  auto unknown = create_pod(s, "a", R"("priorityClassName":"gold",)");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.err.code, 403);
  EXPECT_EQ(unknown.err.reason, "Forbidden");
  EXPECT_EQ(unknown.err.message, "pods \"a\" is forbidden: no PriorityClass with name gold was found");
  auto given = create_pod(s, "b", R"("priority":10,)");
  ASSERT_FALSE(given.ok());
  EXPECT_EQ(given.err.message, "pods \"b\" is forbidden: the integer value of priority (10) must not be provided "
                               "in pod spec; priority admission controller computed 0 from the given PriorityClass name");
  auto policy = create_pod(s, "c", R"("preemptionPolicy":"Never",)");
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.err.message.find("the string value of PreemptionPolicy (Never) must not be provided"), std::string::npos);
  // The system classes exist without being created; giving the class's own value is allowed.
  auto sys = create_pod(s, "d", R"("priorityClassName":"system-node-critical","priority":2000001000,)");
  ASSERT_TRUE(sys.ok()) << sys.err.message;
  EXPECT_EQ(string_at((*sys.value)->tree(), "spec.priority"), "2000001000");
}

TEST_P(PriorityAdmission, DisabledKeepsWhatThePodGives) {
  store_options o;
  o.priority_admission_plugin = false;
  store s(o);
  auto r = create_pod(s, "a", R"("priority":10,)");
  ASSERT_TRUE(r.ok()) << r.err.message;
  EXPECT_EQ(string_at((*r.value)->tree(), "spec.priority"), "10");
  EXPECT_FALSE(string_at((*r.value)->tree(), "spec.preemptionPolicy").has_value());
}

INSTANTIATE_TEST_SUITE_P(CreatePaths, PriorityAdmission, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Json" : "Tree"; });

TEST(Store, GetMissingIs404) {
  store s;
  auto r = s.get(pods(), "default", "ghost");
  EXPECT_EQ(r.err.code, 404);
  EXPECT_EQ(r.err.message, "pods \"ghost\" not found");
}

TEST(Store, LabelSelectors) {
  store s;
  s.create(pods(), "default", pod_body("a", R"({"app":"web","tier":"fe"})"));
  s.create(pods(), "default", pod_body("b", R"({"app":"db"})"));
  s.create(pods(), "default", pod_body("c"));
  auto names = [&](const std::string& sel) {
    list_request req;
    req.label_selector = sel;
    auto r = s.list(pods(), "", req);
    std::string out;
    for (const auto& o : r.value->items) out += o->name;
    return out;
  };
  EXPECT_EQ(names("app=web"), "a");
  EXPECT_EQ(names("app==db"), "b");
  EXPECT_EQ(names("app!=web"), "bc");
  EXPECT_EQ(names("app in (web,db)"), "ab");
  EXPECT_EQ(names("app notin (web)"), "bc");
  EXPECT_EQ(names("tier"), "a");
  EXPECT_EQ(names("!app"), "c");
  EXPECT_EQ(names("app,tier=fe"), "a");
  list_request bad;
  bad.label_selector = "app in web";
  EXPECT_EQ(s.list(pods(), "", bad).err.code, 400);
}

// A binding of a pod already served in protobuf edits its protobuf form too; that form must be what
// converting the bound pod's JSON gives.
TEST(Store, BindingEditsTheProtobufFormAsTheJson) {
  store s;
  auto created = s.create(pods(), "default", json(R"({"metadata":{"name":"a","annotations":{"x":"1"}},)"
                                                  R"("spec":{"containers":[{"name":"c","image":"i"}]},)"
                                                  R"("status":{"conditions":[{"type":"PodScheduled",)"
                                                  R"("status":"False","reason":"Unschedulable"}]}})"));
  ASSERT_TRUE(created.ok()) << created.err.message;
  // The pod strategy drops the status a create sends; give it conditions through /status.
  auto with_status = s.patch(pods(), "default", "a", patch_kind::merge,
                             json(R"({"status":{"conditions":[{"type":"Ready","status":"False"},)"
                                  R"({"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}})"),
                             true);
  ASSERT_TRUE(with_status.ok()) << with_status.err.message;
  ASSERT_FALSE(object_proto_raw(**with_status.value).empty());  // served in protobuf once
  auto bound = s.bind("default", "a",
                      *parse_binding(R"({"metadata":{"name":"a","annotations":{"y":"2"}},"target":{"name":"n1"}})", false));
  ASSERT_TRUE(bound.ok()) << bound.err.message;
  ASSERT_FALSE((*bound.value)->proto_raw_cache.empty());  // built by the binding, not converted
  k8s::core::Pod edited, converted;
  ASSERT_TRUE(edited.ParseFromString((*bound.value)->proto_raw_cache));
  ASSERT_TRUE(codec::decode_json((*bound.value)->json, converted));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(edited, converted))
      << edited.DebugString() << "\n---\n" << converted.DebugString();
  EXPECT_EQ(edited.spec().node_name(), "n1");
  ASSERT_EQ(edited.status().conditions_size(), 2);
  EXPECT_EQ(edited.status().conditions(1).status(), "True");
}

// The tree-less JSON-to-protobuf path decodes real apiserver bodies exactly as the codec does, and
// takes the common ones (Pod, Node, Lease, PriorityClass, PodDisruptionBudget) itself.
TEST(Store, FastProtobufFormEqualsTheCodecs) {
  const std::pair<const char*, const google::protobuf::Message*> cases[] = {
      {"core.v1.Pod.json", &k8s::core::Pod::default_instance()},
      {"core.v1.Node.json", &k8s::core::Node::default_instance()},
      {"coordination.k8s.io.v1.Lease.json", find_kind("coordination.k8s.io", "v1", "leases")->prototype},
      {"scheduling.k8s.io.v1.PriorityClass.json", find_kind("scheduling.k8s.io", "v1", "priorityclasses")->prototype},
      {"policy.v1.PodDisruptionBudget.json", find_kind("policy", "v1", "poddisruptionbudgets")->prototype},
      {"core.v1.Event.json", &k8s::core::Event::default_instance()}};
  int fast = 0;
  for (const auto& [file, proto] : cases) {
    std::ifstream in(std::string(KAS_FIXTURES_DIR) + "/v1.36.0/" + file);
    std::stringstream text;
    text << in.rdbuf();
    std::unique_ptr<google::protobuf::Message> a(proto->New()), b(proto->New());
    ASSERT_TRUE(codec::decode_json(text.str(), *b)) << file;
    if (!json_to_proto_fast(text.str(), *a)) continue;  // left to the codec: nothing to compare
    ++fast;
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*a, *b)) << file;
  }
  EXPECT_GE(fast, 3);
  // A number where the proto keeps text is left to the codec.
  k8s::core::Pod p;
  EXPECT_FALSE(json_to_proto_fast(R"({"metadata":{"name":7}})", p));
}

TEST(Store, FieldSelectorsAndBinding) {
  store s;
  s.create(pods(), "default", pod_body("a"));
  s.create(pods(), "default", pod_body("b"));
  auto bound = s.bind("default", "a", *parse_binding(R"({"metadata":{"name":"a"},"target":{"kind":"Node","name":"n1"}})", false));
  ASSERT_TRUE(bound.ok()) << bound.err.message;
  EXPECT_EQ(string_at((*bound.value)->tree(), "spec.nodeName"), "n1");
  EXPECT_NE(object_json(**bound.value).find(R"({"type":"PodScheduled","status":"True")"), std::string::npos);
  auto again = s.bind("default", "a", *parse_binding(R"({"target":{"name":"n2"}})", false));
  EXPECT_EQ(again.err.code, 409);
  EXPECT_EQ(again.err.message,
            "Operation cannot be fulfilled on pods/binding \"a\": pod a is already assigned to node \"n1\"");
  EXPECT_EQ(s.bind("default", "ghost", *parse_binding(R"({"target":{"name":"n2"}})", false)).err.code, 404);
  list_request req;
  req.field_selector = "spec.nodeName=";
  EXPECT_EQ(s.list(pods(), "default", req).value->items.size(), 1u);
  req.field_selector = "spec.nodeName!=,metadata.name=a";
  EXPECT_EQ(s.list(pods(), "default", req).value->items.size(), 1u);
  req.field_selector = "status.phase=Pending";
  EXPECT_EQ(s.list(pods(), "default", req).value->items.size(), 2u);
  req.field_selector = "spec.bogus=x";
  EXPECT_EQ(s.list(pods(), "default", req).err.code, 400);
}

TEST(Store, LimitAndContinue) {
  store_options o;
  o.history = 20;
  store s(o);
  for (int i = 0; i < 5; ++i) s.create(nodes(), "", json(R"({"metadata":{"name":"n)" + std::to_string(i) + R"("}})"));
  list_request req;
  req.limit = 2;
  auto p1 = s.list(nodes(), "", req);
  ASSERT_EQ(p1.value->items.size(), 2u);
  ASSERT_FALSE(p1.value->continue_token.empty());
  EXPECT_EQ(p1.value->remaining, 3);
  req.continue_token = p1.value->continue_token;
  auto p2 = s.list(nodes(), "", req);
  ASSERT_EQ(p2.value->items.size(), 2u);
  EXPECT_EQ(p2.value->items[0]->name, "n2");
  EXPECT_EQ(p2.value->rv, p1.value->rv);
  req.continue_token = p2.value->continue_token;
  auto p3 = s.list(nodes(), "", req);
  ASSERT_EQ(p3.value->items.size(), 1u);
  EXPECT_TRUE(p3.value->continue_token.empty());
  s.create(nodes(), "", json(R"({"metadata":{"name":"later"}})"));
  s.compact();  // the first page's resourceVersion is now older than the history
  req.continue_token = p1.value->continue_token;
  EXPECT_EQ(s.list(nodes(), "", req).err.code, 410);
  req.continue_token = "!!!";
  EXPECT_EQ(s.list(nodes(), "", req).err.code, 400);
}

TEST(Store, UpdateConflictsOnStaleResourceVersion) {
  store s;
  auto a = *s.create(pods(), "default", pod_body("a")).value;
  YAML::Node body = clone(a->tree());
  body["metadata"]["labels"]["x"] = str_node("1");
  auto u = s.update(pods(), "default", "a", body, false);
  ASSERT_TRUE(u.ok()) << u.err.message;
  EXPECT_GT((*u.value)->rv, a->rv);
  auto stale = s.update(pods(), "default", "a", body, false);
  EXPECT_EQ(stale.err.code, 409);
  EXPECT_EQ(stale.err.message,
            "Operation cannot be fulfilled on pods \"a\": the object has been modified; please apply your changes to "
            "the latest version and try again");
  // Main-resource writes leave status alone; /status writes only status.
  YAML::Node st = clone((*u.value)->tree());
  st["status"]["phase"] = str_node("Running");
  st["metadata"]["labels"]["y"] = str_node("2");
  auto su = s.update(pods(), "default", "a", st, true);
  ASSERT_TRUE(su.ok()) << su.err.message;
  EXPECT_EQ(string_at((*su.value)->tree(), "status.phase"), "Running");
  EXPECT_FALSE(string_at((*su.value)->tree(), "metadata.labels.y"));
}

TEST(Store, MergeAndStrategicPatches) {
  store s;
  s.create(pods(), "default", pod_body("a", R"({"keep":"1","drop":"2"})"));
  auto m = s.patch(pods(), "default", "a", patch_kind::merge, json(R"({"metadata":{"labels":{"drop":null,"new":"3"}}})"), false);
  ASSERT_TRUE(m.ok()) << m.err.message;
  EXPECT_EQ(to_json((*m.value)->tree()["metadata"]["labels"]), R"({"keep":"1","new":"3"})");
  auto c1 = s.patch(pods(), "default", "a", patch_kind::strategic,
                    json(R"({"status":{"conditions":[{"type":"Ready","status":"False"}]}})"), true);
  ASSERT_TRUE(c1.ok());
  auto c2 = s.patch(pods(), "default", "a", patch_kind::strategic,
                    json(R"({"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}})"), true);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ((*c2.value)->tree()["status"]["conditions"].size(), 2u);
  auto c3 = s.patch(pods(), "default", "a", patch_kind::strategic,
                    json(R"({"status":{"conditions":[{"type":"Ready","status":"True"}]}})"), true);
  EXPECT_EQ((*c3.value)->tree()["status"]["conditions"].size(), 2u);
  EXPECT_EQ(to_json((*c3.value)->tree()["status"]["conditions"][0]), R"({"type":"Ready","status":"True"})");
}

TEST(Store, DeletePreconditions) {
  store s;
  auto a = *s.create(pods(), "default", pod_body("a")).value;
  delete_preconditions bad;
  bad.uid = "other";
  EXPECT_EQ(s.remove(pods(), "default", "a", bad).err.code, 409);
  delete_preconditions stale;
  stale.resource_version = "1";
  EXPECT_EQ(s.remove(pods(), "default", "a", stale).err.code, 409);
  delete_preconditions good;
  good.uid = a->uid;
  ASSERT_TRUE(s.remove(pods(), "default", "a", good).ok());
  EXPECT_EQ(s.get(pods(), "default", "a").err.code, 404);
  EXPECT_EQ(s.remove(pods(), "default", "a", good).err.code, 404);
}

TEST(Store, WatchHistoryAndCompaction) {
  store_options o;
  o.history = 3;
  store s(o);
  std::vector<change_type> seen;
  s.set_listener([&](const change& c) { seen.push_back(c.type); });
  uint64_t start = s.current_rv();
  s.create(pods(), "default", pod_body("a"));
  s.patch(pods(), "default", "a", patch_kind::merge, json(R"({"metadata":{"labels":{"x":"1"}}})"), false);
  s.remove(pods(), "default", "a", {});
  ASSERT_EQ(seen.size(), 3u);
  auto ch = s.changes_since(pods(), start);
  ASSERT_TRUE(ch.ok());
  ASSERT_EQ(ch.value->size(), 3u);
  EXPECT_EQ((*ch.value)[2]->type, change_type::deleted);
  EXPECT_EQ((*ch.value)[2]->obj->rv, s.current_rv());
  s.create(pods(), "default", pod_body("b"));  // pushes the oldest change out
  auto old = s.changes_since(pods(), start);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.err.code, 410);
  EXPECT_EQ(old.err.message.rfind("too old resource version: ", 0), 0u);
  s.compact();
  EXPECT_EQ(s.changes_since(pods(), s.current_rv() - 1).err.code, 410);
  EXPECT_TRUE(s.changes_since(pods(), s.current_rv()).ok());
}

TEST(JsonTree, HostileBodiesAreErrorsNotCrashes) {
  EXPECT_FALSE(parse_json_object(std::string(100000, '[')).ok());
  // YAML aliases take the guarded path (kas::load_yaml bounds their expansion).
  EXPECT_TRUE(parse_json_object("{\"a\": &x [1], \"b\": *x}").ok());
  EXPECT_FALSE(parse_json_object("[1,2]").ok());
  EXPECT_FALSE(parse_json_object("{").ok());
  auto quoted = parse_json_object(R"({"a":"[[[&*!'","n":12,"s":"12"})");
  ASSERT_TRUE(quoted.ok());
  EXPECT_EQ(to_json(*quoted), R"({"a":"[[[&*!'","n":12,"s":"12"})");
}

// Bodies recorded from a real apiserver (every field set) are accepted for each kind served, and
// their protobuf encoding decodes again.
TEST(Store, AcceptsRealApiserverBodiesOfEveryProtoKind) {
  store s;
  ASSERT_TRUE(s.create(*find_kind("", "v1", "namespaces"), "", json(R"({"metadata":{"name":"namespaceValue"}})")).ok());
  // The class the Pod fixture names, with the values it carries (Priority admission checks them).
  ASSERT_TRUE(s.create(*find_kind("scheduling.k8s.io", "v1", "priorityclasses"), "",
                       json(R"({"metadata":{"name":"priorityClassNameValue"},"value":25,)"
                            R"("preemptionPolicy":"preemptionPolicyValue"})"))
                  .ok());
  const std::pair<const char*, const char*> cases[] = {
      {"core.v1.Pod.json", "pods"}, {"core.v1.Node.json", "nodes"}, {"core.v1.Event.json", "events"},
      {"events.k8s.io.v1.Event.json", "events.k8s.io"}, {"coordination.k8s.io.v1.Lease.json", "leases"},
      {"policy.v1.PodDisruptionBudget.json", "poddisruptionbudgets"},
      {"scheduling.k8s.io.v1.PriorityClass.json", "priorityclasses"}};
  for (const auto& [file, resource] : cases) {
    std::ifstream in(std::string(KAS_FIXTURES_DIR) + "/v1.36.0/" + file);
    std::stringstream text;
    text << in.rdbuf();
    auto body = parse_json_object(text.str());
    ASSERT_TRUE(body.ok()) << file << ": " << body.err().message;
    const kind_info* k = std::string(resource) == "events.k8s.io" ? find_kind("events.k8s.io", "v1", "events")
                                                                 : nullptr;
    for (const auto& cand : all_kinds())
      if (!k && cand.resource == resource && (cand.group.empty() || cand.resource != "events")) k = &cand;
    ASSERT_NE(k, nullptr) << file;
    (*body)["metadata"].remove("resourceVersion");
    (*body)["metadata"]["name"] = str_node(file);  // both Event fixtures are one resource's names
    auto r = s.create(*k, k->namespaced ? "namespaceValue" : "", *body);
    ASSERT_TRUE(r.ok()) << file << ": " << r.err.message;
    EXPECT_FALSE(object_proto_raw(**r.value).empty()) << file;
  }
}

// PodGroups: upstream's v1beta1 is validated as the apiserver validates it and served in protobuf;
// the Coscheduling CRD is type-checked only (its schema has no minimums) and served as JSON only.
TEST(Store, PodGroupsOfBothApis) {
  store s;
  const kind_info* up = find_kind("scheduling.k8s.io", "v1beta1", "podgroups");
  const kind_info* co = find_kind("scheduling.x-k8s.io", "v1alpha1", "podgroups");
  ASSERT_NE(up, nullptr);
  ASSERT_NE(co, nullptr);
  EXPECT_EQ(find_kind_by_name("scheduling.k8s.io/v1beta1", "PodGroup"), up);
  EXPECT_EQ(find_kind_by_name("scheduling.x-k8s.io/v1alpha1", "PodGroup"), co);

  auto good = s.create(*up, "default", json(R"({"metadata":{"name":"g"},"spec":{"schedulingPolicy":{"gang":{"minCount":3}}}})"));
  ASSERT_TRUE(good.ok()) << good.err.message;
  auto bad = s.create(*up, "default", json(R"({"metadata":{"name":"h"},"spec":{"schedulingPolicy":{"gang":{"minCount":0}}}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.err.code, 422);
  EXPECT_EQ(bad.err.message,
            "PodGroup.scheduling.k8s.io \"h\" is invalid: spec.schedulingPolicy.gang.minCount: Required value");
  auto both = s.create(*up, "default", json(R"({"metadata":{"name":"h"},"spec":{"schedulingPolicy":{"basic":{},"gang":{"minCount":1}}}})"));
  EXPECT_EQ(both.err.code, 422);
  // An update is validated too.
  auto upd = s.update(*up, "default", "g", json(R"({"metadata":{"name":"g"},"spec":{"schedulingPolicy":{}}})"), false);
  EXPECT_EQ(upd.err.code, 422) << upd.err.message;

  list_result l = *s.list(*up, "", {}).value;
  ASSERT_EQ(l.items.size(), 1u);
  std::string pb = list_body(*up, l, wire_format::protobuf);
  k8s::scheduling::PodGroupList decoded;
  ASSERT_TRUE(codec::decode_protobuf(pb, decoded).ok());
  ASSERT_EQ(decoded.items_size(), 1);
  EXPECT_EQ(decoded.items(0).spec().scheduling_policy().gang().min_count(), 3);
  EXPECT_EQ(negotiate("application/vnd.kubernetes.protobuf, application/json", up), wire_format::protobuf);

  auto cg = s.create(*co, "default", json(R"({"metadata":{"name":"g"},"spec":{"minMember":-1,"scheduleTimeoutSeconds":5}})"));
  ASSERT_TRUE(cg.ok()) << cg.err.message;
  auto typed = s.create(*co, "default", json(R"({"metadata":{"name":"t"},"spec":{"minMember":"many"}})"));
  EXPECT_EQ(typed.err.code, 400) << typed.err.message;
  EXPECT_EQ(negotiate("application/vnd.kubernetes.protobuf, application/json", co), wire_format::json);
  list_result cl = *s.list(*co, "", {}).value;
  std::string js = list_body(*co, cl, wire_format::json);
  k8s::coscheduling::PodGroupList clist;
  ASSERT_TRUE(codec::decode_json(js, clist).ok()) << js;
  ASSERT_EQ(clist.items_size(), 1);
  EXPECT_EQ(clist.items(0).spec().schedule_timeout_seconds(), 5);
}

TEST(Wire, ProtobufListAndWatchFrames) {
  store s;
  s.create(nodes(), "", json(R"({"metadata":{"name":"n1"},"status":{"capacity":{"cpu":"4"}}})"));
  list_result l = *s.list(nodes(), "", {}).value;
  std::string pb = list_body(nodes(), l, wire_format::protobuf);
  EXPECT_EQ(pb.compare(0, 4, std::string("k8s\0", 4)), 0);
  std::string js = list_body(nodes(), l, wire_format::json);
  EXPECT_EQ(js.rfind(R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":")", 0), 0u) << js;
  std::string frame = watch_object_frame("ADDED", *l.items[0], wire_format::json);
  EXPECT_EQ(frame.back(), '\n');
}

}  // namespace
}  // namespace kas::testapi

// Events as one resource with two API views (event_views.hpp): what is written through one API
// reads, lists and watches through the other, with the same name, uid and resourceVersion.
#include <gtest/gtest.h>

#include "tests/apiserver/event_views.hpp"
#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/store.hpp"

namespace kas::testapi {
namespace {

const kind_info& core_events() { return *find_kind("", "v1", "events"); }
const kind_info& new_events() { return *find_kind("events.k8s.io", "v1", "events"); }

YAML::Node json(const std::string& s) { return *parse_json_object(s); }

TEST(EventViews, WrittenThroughEventsK8sIoReadsAsCoreV1) {
  store s;
  auto made = s.create(new_events(), "default", json(R"({"apiVersion":"events.k8s.io/v1","kind":"Event",
      "metadata":{"name":"p1.1"},"eventTime":"2026-01-02T03:04:05.000001Z","reportingController":"kube-actor-scheduler",
      "reportingInstance":"sched-0","action":"Binding","reason":"Scheduled","type":"Normal",
      "note":"Successfully assigned default/p1 to n1","regarding":{"kind":"Pod","namespace":"default","name":"p1"},
      "series":{"count":2,"lastObservedTime":"2026-01-02T03:04:06.000000Z"}})"));
  ASSERT_TRUE(made.ok()) << made.err.message;
  EXPECT_EQ((*made.value)->kind, &new_events());
  EXPECT_EQ(string_at((*made.value)->tree(), "note"), "Successfully assigned default/p1 to n1");

  auto got = s.get(core_events(), "default", "p1.1");
  ASSERT_TRUE(got.ok());
  const stored_object& core = **got.value;
  EXPECT_EQ(core.rv, (*made.value)->rv);
  EXPECT_EQ(core.uid, (*made.value)->uid);
  YAML::Node t = core.tree();
  EXPECT_EQ(string_at(t, "apiVersion"), "v1");
  EXPECT_EQ(string_at(t, "involvedObject.name"), "p1");
  EXPECT_EQ(string_at(t, "message"), "Successfully assigned default/p1 to n1");
  EXPECT_EQ(string_at(t, "reportingComponent"), "kube-actor-scheduler");
  EXPECT_EQ(string_at(t, "reportingInstance"), "sched-0");
  EXPECT_EQ(string_at(t, "source.component"), "kube-actor-scheduler");
  EXPECT_EQ(string_at(t, "source.host"), "sched-0");
  EXPECT_EQ(string_at(t, "series.count"), "2");
  EXPECT_EQ(string_at(t, "eventTime"), "2026-01-02T03:04:05.000001Z");
  EXPECT_FALSE(string_at(t, "note").has_value());
  EXPECT_FALSE(at(t, "regarding").IsDefined());

  // Back through events.k8s.io: as written (no deprecatedSource made up from the reporting fields).
  auto again = s.get(new_events(), "default", "p1.1");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(at((*again.value)->tree(), "deprecatedSource").IsDefined());
  EXPECT_EQ((*again.value)->json, (*made.value)->json);

  list_request lr;
  lr.field_selector = "involvedObject.name=p1";
  auto l = s.list(core_events(), "", lr);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l.value->items.size(), 1u);
  lr.field_selector = "regarding.name=p1";
  auto l2 = s.list(new_events(), "default", lr);
  ASSERT_TRUE(l2.ok()) << l2.err.message;
  ASSERT_EQ(l2.value->items.size(), 1u);
  EXPECT_EQ(l2.value->items[0]->kind, &new_events());

  // One history for both views.
  auto core_changes = s.changes_since(core_events(), (*made.value)->rv - 1);
  auto new_changes = s.changes_since(new_events(), (*made.value)->rv - 1);
  ASSERT_TRUE(core_changes.ok() && new_changes.ok());
  EXPECT_EQ(core_changes.value->size(), 1u);
  EXPECT_EQ(new_changes.value->size(), 1u);
}

TEST(EventViews, WrittenThroughCoreV1ReadsAsEventsK8sIo) {
  store s;
  auto made = s.create(core_events(), "default", json(R"({"metadata":{"name":"web.1"},
      "involvedObject":{"kind":"Pod","name":"web","namespace":"default"},"reason":"Pulled","message":"pulled",
      "type":"Normal","count":3,"firstTimestamp":"2026-01-02T03:04:05Z","lastTimestamp":"2026-01-02T03:05:05Z",
      "source":{"component":"kubelet","host":"n1"}})"));
  ASSERT_TRUE(made.ok()) << made.err.message;
  auto got = s.get(new_events(), "default", "web.1");
  ASSERT_TRUE(got.ok());
  YAML::Node t = (*got.value)->tree();
  EXPECT_EQ(string_at(t, "apiVersion"), "events.k8s.io/v1");
  EXPECT_EQ(string_at(t, "regarding.name"), "web");
  EXPECT_EQ(string_at(t, "note"), "pulled");
  EXPECT_EQ(string_at(t, "deprecatedCount"), "3");
  EXPECT_EQ(string_at(t, "deprecatedFirstTimestamp"), "2026-01-02T03:04:05Z");
  EXPECT_EQ(string_at(t, "deprecatedLastTimestamp"), "2026-01-02T03:05:05Z");
  EXPECT_EQ(string_at(t, "deprecatedSource.component"), "kubelet");
  EXPECT_EQ(string_at(t, "deprecatedSource.host"), "n1");
  EXPECT_EQ(string_at(t, "metadata.resourceVersion"), std::to_string((*made.value)->rv));
  EXPECT_FALSE(at(t, "involvedObject").IsDefined());
  EXPECT_FALSE(at(t, "message").IsDefined());

  // A merge patch through events.k8s.io lands in the shared storage.
  auto p = s.patch(new_events(), "default", "web.1", patch_kind::merge, json(R"({"note":"pulled again"})"), false);
  ASSERT_TRUE(p.ok()) << p.err.message;
  EXPECT_EQ(string_at((*p.value)->tree(), "note"), "pulled again");
  auto core = s.get(core_events(), "default", "web.1");
  EXPECT_EQ(string_at((*core.value)->tree(), "message"), "pulled again");
  EXPECT_EQ((*core.value)->rv, (*p.value)->rv);
  // Names are one namespace: creating the same name through the other API conflicts.
  auto dup = s.create(new_events(), "default", json(R"({"metadata":{"name":"web.1"},"eventTime":"2026-01-02T03:04:05.000000Z"})"));
  EXPECT_EQ(dup.err.code, 409);
  EXPECT_EQ(dup.err.message, "events.events.k8s.io \"web.1\" already exists");
  EXPECT_EQ(dup.err.group, "events.k8s.io");
  ASSERT_TRUE(s.remove(new_events(), "default", "web.1", {}).ok());
  EXPECT_EQ(s.get(core_events(), "default", "web.1").err.code, 404);
  EXPECT_EQ(s.get(new_events(), "default", "web.1").err.message, "events.events.k8s.io \"web.1\" not found");
}

}  // namespace
}  // namespace kas::testapi

namespace kas::testapi {
namespace {

// create_json stores plain bodies without a tree (store_fast.cpp); what it stores must be what the
// tree path stores, and whatever it is unsure of must get the tree path's answer.
TEST(CreateJson, TreelessCreateMatchesTheTreePath) {
  store s;
  const std::string body = R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"NAME","labels":{"a":"b"}},)"
                           R"("involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"count":2,)"
                           R"("reason":"Scheduled","message":"m \"q\"","type":"Normal","eventTime":"2026-01-02T03:04:05.000001Z"})";
  auto with_name = [&](const std::string& n) { return body.substr(0, body.find("NAME")) + n + body.substr(body.find("NAME") + 4); };
  auto fast = s.create_json(core_events(), "default", with_name("fast"));
  auto slow = s.create(core_events(), "default", json(with_name("slow")));
  ASSERT_TRUE(fast.ok() && slow.ok()) << fast.err.message << slow.err.message;
  auto normalized = [](const stored_object& o) {
    YAML::Node t = o.tree();
    for (const char* k : {"name", "uid", "creationTimestamp", "resourceVersion"}) t["metadata"][k] = str_node("x");
    return to_json(t);
  };
  EXPECT_EQ(normalized(**fast.value), normalized(**slow.value));
  EXPECT_EQ((*fast.value)->labels, (*slow.value)->labels);
  EXPECT_EQ((*fast.value)->fields, (*slow.value)->fields);
  EXPECT_EQ(string_at((*fast.value)->tree(), "metadata.resourceVersion"), std::to_string((*fast.value)->rv));

  // Unsure or failing requests get the tree path's errors.
  EXPECT_EQ(s.create_json(core_events(), "default", with_name("fast")).err.reason, "AlreadyExists");
  auto bad = s.create_json(core_events(), "default", R"({"metadata":{"name":"b"},"count":"many"})");
  EXPECT_EQ(bad.err.code, 400);
  EXPECT_NE(bad.err.message.find("count"), std::string::npos) << bad.err.message;
  EXPECT_EQ(s.create_json(core_events(), "nope", with_name("x")).err.code, 404);
  auto gen = s.create_json(new_events(), "default", R"({"metadata":{"generateName":"e-"},"note":"n"})");
  ASSERT_TRUE(gen.ok()) << gen.err.message;
  EXPECT_EQ((*gen.value)->name.size(), 7u);
  EXPECT_EQ(string_at((*gen.value)->tree(), "note"), "n");
  EXPECT_EQ(string_at(s.get(core_events(), "default", (*gen.value)->name).value.value()->tree(), "message"), "n");
}

}  // namespace
}  // namespace kas::testapi

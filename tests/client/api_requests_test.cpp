// The scheduler's writes as HTTP requests: paths, methods, content types and bodies, checked
// against what the apiserver decodes (the Binding round-trips through the project's own codecs).
#include "client/api_requests.hpp"

#include <gtest/gtest.h>

#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/events.pb.h"

namespace kas::api {
namespace {

const object_ref pod{"team-a", "web 0", "1f0e-uid"};

TEST(ApiRequests, BindingInProtobufDecodesAsABinding) {
  auto r = binding_request(pod, "node-7", encoding::protobuf);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/api/v1/namespaces/team-a/pods/web%200/binding");
  EXPECT_EQ(r.content_type, "application/vnd.kubernetes.protobuf");
  k8s::core::Binding b;
  ASSERT_TRUE(codec::decode_protobuf(r.body, b)) << "envelope";
  EXPECT_EQ(b.metadata().name(), "web 0");
  EXPECT_EQ(b.metadata().uid(), "1f0e-uid");
  EXPECT_EQ(b.target().kind(), "Node");
  EXPECT_EQ(b.target().name(), "node-7");
}

TEST(ApiRequests, BindingInJsonNamesItsKind) {
  auto r = binding_request(pod, "node-7", encoding::json);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body.rfind(R"({"kind":"Binding","apiVersion":"v1","metadata":{)", 0), 0u) << r.body;
  k8s::core::Binding b;
  ASSERT_TRUE(codec::decode_json(r.body, b));
  EXPECT_EQ(b.target().name(), "node-7");
}

TEST(ApiRequests, DeleteCarriesAUidPrecondition) {
  auto r = delete_pod_request(pod);
  EXPECT_EQ(r.method, "DELETE");
  EXPECT_EQ(r.path, "/api/v1/namespaces/team-a/pods/web%200");
  EXPECT_EQ(r.body, R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"1f0e-uid"}})");
}

TEST(ApiRequests, ConditionIsAStrategicMergePatchOfStatus) {
  auto r = condition_patch_request(pod, {"PodScheduled", "False", "Unschedulable", "0/3 nodes are \"available\"",
                                         "2026-12-02T07:00:00Z"});
  EXPECT_EQ(r.method, "PATCH");
  EXPECT_EQ(r.path, "/api/v1/namespaces/team-a/pods/web%200/status");
  EXPECT_EQ(r.content_type, "application/strategic-merge-patch+json");
  EXPECT_EQ(r.body,
            R"({"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"}],"conditions":[{"type":"PodScheduled",)"
            R"("status":"False","reason":"Unschedulable","message":"0/3 nodes are \"available\"","lastProbeTime":null,)"
            R"("lastTransitionTime":"2026-12-02T07:00:00Z"}]}})");
}

TEST(ApiRequests, NominationSetsAndClears) {
  EXPECT_EQ(nominated_node_request(pod, "n1").body, R"({"status":{"nominatedNodeName":"n1"}})");
  EXPECT_EQ(nominated_node_request(pod, "").body, R"({"status":{"nominatedNodeName":null}})");
  EXPECT_EQ(nominated_node_request(pod, "").content_type, "application/merge-patch+json");
}

TEST(ApiRequests, EventIsAnEventsV1Event) {
  event_fields f;
  f.name = "web 0.18a";
  f.type = "Normal";
  f.reason = "Scheduled";
  f.action = "Binding";
  f.note = "Successfully assigned team-a/web 0 to node-7";
  f.event_time_rfc3339 = "2026-12-02T07:00:00.000001Z";
  f.reporting_instance = "kas-1";
  auto r = event_request(pod, f);
  EXPECT_EQ(r.path, "/apis/events.k8s.io/v1/namespaces/team-a/events");
  k8s::events::Event ev;
  ASSERT_TRUE(codec::decode_json(r.body, ev)) << r.body;
  EXPECT_EQ(ev.metadata().name(), "web 0.18a");
  EXPECT_EQ(ev.regarding().name(), "web 0");
  EXPECT_EQ(ev.regarding().uid(), "1f0e-uid");
  EXPECT_EQ(ev.reason(), "Scheduled");
  EXPECT_EQ(ev.note(), f.note);
  EXPECT_FALSE(ev.has_series());
  f.count = 3;
  f.last_observed_rfc3339 = "2026-12-02T07:01:00.000001Z";
  ASSERT_TRUE(codec::decode_json(event_request(pod, f).body, ev));
  EXPECT_EQ(ev.series().count(), 3);
}

TEST(ApiRequests, FailuresReadAsTheApiserverWroteThem) {
  http_response r;
  r.status = 409;
  r.content_type = "application/json";
  r.body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"pod web is already assigned to node \"n1\"","reason":"Conflict","code":409})";
  EXPECT_NE(describe_failure(r).find("already assigned"), std::string::npos) << describe_failure(r);
  http_response t;
  t.error = "Connection refused";
  EXPECT_EQ(describe_failure(t), "Connection refused");
}

}  // namespace
}  // namespace kas::api

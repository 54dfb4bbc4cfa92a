// The API's wire shapes as a client reads them (client/api_wire.hpp): bodies and Lists in both
// encodings, metav1.Status errors, and watch streams cut at every possible byte.
#include "client/api_wire.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/meta.pb.h"

namespace kas::api {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(KAS_FIXTURES_DIR) + "/v1.36.0/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

k8s::core::Pod fixture_pod() {
  k8s::core::Pod p;
  EXPECT_TRUE(codec::decode_protobuf(fixture("core.v1.Pod.pb"), p));
  return p;
}

// One protobuf watch frame: 4-byte big-endian length, then the WatchEvent without envelope; the
// object inside is a whole protobuf body.
std::string pb_frame(const std::string& type, const std::string& object_body) {
  k8s::meta::WatchEvent ev;
  ev.set_type(type);
  ev.mutable_object()->set_raw(object_body);
  std::string payload = ev.SerializeAsString();
  std::string out(4, '\0');
  uint32_t n = static_cast<uint32_t>(payload.size());
  out[0] = static_cast<char>(n >> 24);
  out[1] = static_cast<char>(n >> 16);
  out[2] = static_cast<char>(n >> 8);
  out[3] = static_cast<char>(n);
  return out + payload;
}

// Feeds `stream` in pieces of the sizes `cut` yields; returns the events.
template <class Cut>
std::vector<watch_event> feed_in_pieces(encoding e, const std::string& stream, Cut cut) {
  watch_decoder d(e);
  std::vector<watch_event> events;
  size_t at = 0;
  while (at < stream.size()) {
    size_t n = std::min(stream.size() - at, cut());
    auto r = d.feed(std::string_view(stream).substr(at, n), events);
    EXPECT_TRUE(r) << r.err().message;
    at += n;
  }
  auto f = d.finish();
  EXPECT_TRUE(f) << f.err().message;
  EXPECT_EQ(d.events(), events.size());
  return events;
}

TEST(ApiWire, MediaTypes) {
  EXPECT_EQ(media_type(encoding::protobuf), "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(media_type(encoding::json), "application/json");
  EXPECT_EQ(encoding_of("application/vnd.kubernetes.protobuf;stream=watch"), encoding::protobuf);
  EXPECT_EQ(encoding_of(" Application/JSON ; charset=utf-8"), encoding::json);
  EXPECT_EQ(encoding_of("text/html"), std::nullopt);
  EXPECT_EQ(encoding_of(""), std::nullopt);
}

TEST(ApiWire, ListsInBothEncodings) {
  auto pod = fixture_pod();
  k8s::core::PodList list;
  list.mutable_metadata()->set_resource_version("12345");
  list.mutable_metadata()->set_continue_("next-page");
  *list.add_items() = pod;
  *list.add_items() = pod;
  list.mutable_items(1)->mutable_metadata()->set_name("second");

  k8s::core::PodList from_pb;
  ASSERT_TRUE(decode_body(codec::encode_protobuf(list, "v1", "PodList"), encoding::protobuf, from_pb));
  EXPECT_EQ(from_pb.SerializeAsString(), list.SerializeAsString());

  std::string json = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"12345\","
                     "\"continue\":\"next-page\"},\"items\":[" +
                     fixture("core.v1.Pod.json") + "," + codec::encode_json(list.items(1)) + "]}";
  k8s::core::PodList from_json;
  auto r = decode_body(json, encoding::json, from_json);
  ASSERT_TRUE(r) << r.err().message;
  ASSERT_EQ(from_json.items_size(), 2);
  EXPECT_EQ(from_json.metadata().resource_version(), "12345");
  EXPECT_EQ(from_json.metadata().continue_(), "next-page");
  EXPECT_EQ(from_json.items(0).SerializeAsString(), pod.SerializeAsString());
  EXPECT_EQ(from_json.items(1).metadata().name(), "second");
}

TEST(ApiWire, BodyErrorsNameEncodingAndKind) {
  k8s::core::PodList pods;
  auto r = decode_body(codec::encode_protobuf(k8s::core::NodeList(), "v1", "NodeList"), encoding::protobuf, pods);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("protobuf response body (PodList)"), std::string::npos) << r.err().message;
  EXPECT_NE(r.err().message.find("NodeList"), std::string::npos) << r.err().message;
  r = decode_body("{\"items\": 5}", encoding::json, pods);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("JSON response body (PodList)"), std::string::npos) << r.err().message;
  EXPECT_NE(r.err().message.find("items"), std::string::npos) << r.err().message;
  EXPECT_FALSE(decode_body("<html>502 Bad Gateway</html>", encoding::json, pods));
  EXPECT_FALSE(decode_body("", encoding::protobuf, pods));
}

TEST(ApiWire, StatusBodies) {
  // As the apiserver answers a GET of a missing pod.
  auto s = decode_status(404,
                         R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                         R"("message":"pods \"nope\" not found","reason":"NotFound",)"
                         R"("details":{"name":"nope","kind":"pods"},"code":404})",
                         encoding::json);
  EXPECT_TRUE(s.from_status);
  EXPECT_EQ(s.code, 404);
  EXPECT_EQ(s.reason, "NotFound");
  EXPECT_EQ(s.kind, "pods");
  EXPECT_EQ(s.name, "nope");
  EXPECT_EQ(to_string(s), "pods \"nope\" not found (404 NotFound)");

  k8s::meta::Status st;
  st.set_status("Failure");
  st.set_reason("TooManyRequests");
  st.set_message("too many requests");
  st.set_code(429);
  st.mutable_details()->set_retry_after_seconds(3);
  s = decode_status(429, codec::encode_protobuf(st, "v1", "Status"), encoding::protobuf);
  EXPECT_TRUE(s.from_status);
  EXPECT_EQ(s.retry_after_seconds, 3);
  EXPECT_EQ(to_string(s), "too many requests (429 TooManyRequests)");

  // Not a Status: a proxy's page, an empty body, a JSON object of another shape.
  s = decode_status(502, "<html><body>Bad Gateway\x01</body></html>", encoding::json);
  EXPECT_FALSE(s.from_status);
  EXPECT_EQ(s.code, 502);
  EXPECT_NE(s.message.find("<html><body>Bad Gateway?</body></html>"), std::string::npos) << s.message;
  s = decode_status(500, "", encoding::protobuf);
  EXPECT_EQ(to_string(s), "empty response body (500)");
  s = decode_status(503, "{\"unrelated\":true}", encoding::json);
  EXPECT_FALSE(s.from_status);
  EXPECT_EQ(s.code, 503);
  s = decode_status(500, std::string(1000, 'x'), encoding::json);
  EXPECT_LT(s.message.size(), 300u);
}

TEST(ApiWire, ProtobufWatchStreamAtEveryCut) {
  auto pod = fixture_pod();
  auto body = codec::encode_protobuf(pod, "v1", "Pod");
  k8s::core::Pod bookmark;
  bookmark.mutable_metadata()->set_resource_version("777");
  std::string stream = pb_frame("ADDED", body) + pb_frame("MODIFIED", body) + pb_frame("DELETED", body) +
                       pb_frame("BOOKMARK", codec::encode_protobuf(bookmark, "v1", "Pod"));
  auto check = [&](const std::vector<watch_event>& evs) {
    ASSERT_EQ(evs.size(), 4u);
    EXPECT_EQ(evs[0].type, watch_event_type::added);
    EXPECT_EQ(evs[1].type, watch_event_type::modified);
    EXPECT_EQ(evs[2].type, watch_event_type::deleted);
    EXPECT_EQ(evs[3].type, watch_event_type::bookmark);
    k8s::core::Pod got;
    ASSERT_TRUE(decode_body(evs[1].object, encoding::protobuf, got));
    EXPECT_EQ(got.SerializeAsString(), pod.SerializeAsString());
    ASSERT_TRUE(decode_body(evs[3].object, encoding::protobuf, got));
    EXPECT_EQ(got.metadata().resource_version(), "777");
  };
  check(feed_in_pieces(encoding::protobuf, stream, [] { return size_t{1} << 30; }));  // whole
  for (size_t first = 1; first < stream.size(); first += 7) {
    size_t calls = 0;
    check(feed_in_pieces(encoding::protobuf, stream, [&] { return calls++ == 0 ? first : size_t{1} << 20; }));
  }
  check(feed_in_pieces(encoding::protobuf, stream, [] { return size_t{1}; }));
}

TEST(ApiWire, JsonWatchStreamAtEveryCut) {
  // Pretty-printed objects (newlines inside events), and strings holding braces, quotes and escapes.
  auto pod_json = fixture("core.v1.Pod.json");
  auto pod = fixture_pod();
  pod.mutable_metadata()->mutable_annotations()->insert({"tricky", "}{\"[\\"});
  std::string stream = "{\"type\":\"ADDED\",\"object\":" + pod_json + "}\n" +
                       "{\"type\":\"MODIFIED\",\"object\":" + codec::encode_json(pod) + "}\n\n" +
                       "  {\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
                       "\"metadata\":{\"resourceVersion\":\"778\"}}}";
  auto check = [&](const std::vector<watch_event>& evs) {
    ASSERT_EQ(evs.size(), 3u);
    k8s::core::Pod got;
    ASSERT_TRUE(decode_body(evs[0].object, encoding::json, got));
    EXPECT_EQ(got.SerializeAsString(), fixture_pod().SerializeAsString());
    ASSERT_TRUE(decode_body(evs[1].object, encoding::json, got));
    EXPECT_EQ(got.metadata().annotations().at("tricky"), "}{\"[\\");
    EXPECT_EQ(evs[2].type, watch_event_type::bookmark);
    ASSERT_TRUE(decode_body(evs[2].object, encoding::json, got));
    EXPECT_EQ(got.metadata().resource_version(), "778");
  };
  check(feed_in_pieces(encoding::json, stream, [] { return size_t{1}; }));
  std::mt19937 rng(7);
  for (int i = 0; i < 50; ++i) check(feed_in_pieces(encoding::json, stream, [&] { return size_t{1} + rng() % 300; }));
}

TEST(ApiWire, WatchErrorEventCarriesStatus) {
  std::string stream = R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)j"
                       R"j("status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}})j"
                       "\n";
  watch_decoder d(encoding::json);
  std::vector<watch_event> evs;
  ASSERT_TRUE(d.feed(stream, evs));
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].type, watch_event_type::error);
  auto s = decode_status(0, evs[0].object, encoding::json);
  EXPECT_EQ(s.code, 410);
  EXPECT_EQ(s.reason, "Expired");

  k8s::meta::Status st;
  st.set_code(410);
  st.set_reason("Expired");
  watch_decoder p(encoding::protobuf);
  evs.clear();
  ASSERT_TRUE(p.feed(pb_frame("ERROR", codec::encode_protobuf(st, "v1", "Status")), evs));
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(decode_status(0, evs[0].object, encoding::protobuf).code, 410);
}

TEST(ApiWire, BadStreamsAreErrorsThatNameTheEvent) {
  auto body = codec::encode_protobuf(fixture_pod(), "v1", "Pod");
  std::vector<watch_event> evs;
  {
    watch_decoder d(encoding::protobuf, 1024);
    auto r = d.feed(pb_frame("ADDED", std::string(100, 'x')) + std::string("\x7f\xff\xff\xff", 4), evs);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.err().message, "protobuf watch stream, event 2: frame of 2147483647 bytes exceeds the limit of 1024");
    EXPECT_EQ(evs.size(), 1u);
    EXPECT_FALSE(d.feed(pb_frame("ADDED", body), evs));  // a failed stream stays failed
  }
  {
    watch_decoder d(encoding::protobuf);
    auto r = d.feed(pb_frame("CREATED", body), evs);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.err().message, "protobuf watch stream, event 1: unknown event type \"CREATED\"");
  }
  {
    watch_decoder d(encoding::protobuf);
    auto r = d.feed(pb_frame("ADDED", ""), evs);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.err().message, "protobuf watch stream, event 1: ADDED event without an object");
  }
  {
    watch_decoder d(encoding::protobuf);
    std::string junk = std::string("\0\0\0\x03", 4) + "\xff\xff\xff";
    EXPECT_FALSE(d.feed(junk, evs));
  }
  {
    watch_decoder d(encoding::protobuf);
    ASSERT_TRUE(d.feed(pb_frame("ADDED", body).substr(0, 20), evs));
    auto f = d.finish();
    ASSERT_FALSE(f);
    EXPECT_EQ(f.err().message, "protobuf watch stream, event 1: the stream ended inside an event (20 bytes of it received)");
  }
  {
    watch_decoder d(encoding::json);
    auto r = d.feed("[{\"type\":\"ADDED\"}]", evs);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.err().message, "JSON watch stream, event 1: expected '{' to start an event, got '['");
  }
  {
    watch_decoder d(encoding::json);
    auto r = d.feed("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":5,}}}", evs);
    ASSERT_FALSE(r);
    EXPECT_NE(r.err().message.find("JSON watch stream, event 1:"), std::string::npos) << r.err().message;
  }
  {
    watch_decoder d(encoding::json, 64);
    auto r = d.feed("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"" + std::string(100, 'a'), evs);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.err().message, "JSON watch stream, event 1: event larger than the limit of 64 bytes");
  }
  {
    watch_decoder d(encoding::json);
    ASSERT_TRUE(d.feed("{\"type\":\"ADDED\",\"object\":{\"a\":\"}\"", evs));
    EXPECT_FALSE(d.finish());
    watch_decoder e(encoding::json);
    ASSERT_TRUE(e.feed(" \n\r\t", evs));
    EXPECT_TRUE(e.finish());
  }
}

}  // namespace
}  // namespace kas::api

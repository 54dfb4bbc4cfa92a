// The test apiserver binary over HTTP, driven by the project's own client (client/http_transport.hpp
// and client/kubeconfig.hpp): authentication, JSON and protobuf bodies, lists, watches, bindings and
// the Status errors a scheduler relies on. The server is started per test and reaped with SIGTERM
// and a blocking waitpid; readiness is its `listening on` line, never a sleep.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "client/api_wire.hpp"
#include "client/http_transport.hpp"
#include "client/kubeconfig.hpp"
#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/meta.pb.h"
#include "tests/apiserver/test_server_process.hpp"

namespace kas::api {
namespace {

using namespace std::chrono_literals;

using apiserver = testapi::server_process;
using testapi::call;
using testapi::connect;
using watcher = testapi::stream_watch;

http_request req(const std::string& method, const std::string& path, std::string body = "",
                 encoding e = encoding::json) {
  http_request r;
  r.method = method;
  r.path = path;
  r.body = std::move(body);
  if (!r.body.empty()) r.content_type = std::string(media_type(e));
  r.accept = std::string(media_type(e));
  return r;
}

std::string pod_pb(const std::string& name) {
  k8s::core::Pod p;
  p.mutable_metadata()->set_name(name);
  auto* c = p.mutable_spec()->add_containers();
  c->set_name("c");
  c->set_image("busybox");
  return codec::encode_protobuf(p, "v1", "Pod");
}

TEST(TestApiserver, RejectsRequestsWithoutCredentials) {
  apiserver s({"--token", "tok"});
  ASSERT_FALSE(s.url().empty());
  auto conn = load_kubeconfig(s.kubeconfig());
  ASSERT_TRUE(conn);
  conn->client_cert_pem.clear();
  conn->client_key_pem.clear();
  auto anon = http_transport::create(*conn);
  ASSERT_TRUE(anon);
  auto resp = call(**anon, req("GET", "/api/v1/pods"));
  EXPECT_EQ(resp.status, 401);
  EXPECT_EQ(decode_status(resp.status, resp.body, encoding::json).reason, "Unauthorized");
  auto token = connect(s.cert_dir() + "/kubeconfig-token");
  ASSERT_TRUE(token);
  EXPECT_EQ(call(*token, req("GET", "/api/v1/pods")).status, 200);
}

TEST(TestApiserver, CreateListInJsonAndProtobufOverHttp2) {
  apiserver s;
  auto t = connect(s.kubeconfig());
  ASSERT_TRUE(t);
  auto node = call(*t, req("POST", "/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},)"
                                                     R"("status":{"capacity":{"cpu":"4","pods":"110"}}})"));
  ASSERT_EQ(node.status, 201) << node.body;
  EXPECT_TRUE(node.http2);
  k8s::core::Node n;
  ASSERT_TRUE(decode_body(node.body, encoding::json, n));
  EXPECT_EQ(n.metadata().name(), "n1");
  EXPECT_FALSE(n.metadata().uid().empty());

  auto pod = call(*t, req("POST", "/api/v1/namespaces/default/pods", pod_pb("p1"), encoding::protobuf));
  ASSERT_EQ(pod.status, 201) << pod.body;
  EXPECT_EQ(pod.content_type, "application/vnd.kubernetes.protobuf");
  k8s::core::Pod p;
  ASSERT_TRUE(decode_body(pod.body, encoding::protobuf, p));
  EXPECT_EQ(p.spec().containers(0).image(), "busybox");
  EXPECT_EQ(p.status().phase(), "Pending");

  auto list = call(*t, req("GET", "/api/v1/pods", "", encoding::protobuf));
  ASSERT_EQ(list.status, 200);
  k8s::core::PodList pl;
  auto d = decode_body(list.body, encoding::protobuf, pl);
  ASSERT_TRUE(d) << d.err().message;
  ASSERT_EQ(pl.items_size(), 1);
  EXPECT_EQ(pl.items(0).metadata().name(), "p1");
  EXPECT_EQ(pl.metadata().resource_version(), p.metadata().resource_version());

  auto dup = call(*t, req("POST", "/api/v1/namespaces/default/pods", pod_pb("p1"), encoding::protobuf));
  EXPECT_EQ(dup.status, 409);
  EXPECT_EQ(decode_status(dup.status, dup.body, encoding::protobuf).reason, "AlreadyExists");
  auto bad = call(*t, req("POST", "/api/v1/namespaces/default/pods", R"({"metadata":{"name":"x"},"spec":{"priority":"hi"}})"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(decode_status(bad.status, bad.body, encoding::json).message.find("spec.priority"), std::string::npos);
}

TEST(TestApiserver, WatchSeesCreateAndBinding) {
  apiserver s;
  auto t = connect(s.kubeconfig());
  ASSERT_TRUE(t);
  auto list = call(*t, req("GET", "/api/v1/pods"));
  k8s::core::PodList pl;
  ASSERT_TRUE(decode_body(list.body, encoding::json, pl));
  const std::string rv = pl.metadata().resource_version();
  watcher pb(*t, "/api/v1/pods?watch=1&resourceVersion=" + rv, encoding::protobuf);
  watcher js(*t, "/api/v1/namespaces/default/pods?watch=true&resourceVersion=" + rv + "&fieldSelector=spec.nodeName%3D",
             encoding::json);
  ASSERT_EQ(call(*t, req("POST", "/api/v1/namespaces/default/pods", pod_pb("p1"), encoding::protobuf)).status, 201);
  const std::string binding = R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},"target":{"kind":"Node","name":"n1"}})";
  auto b1 = call(*t, req("POST", "/api/v1/namespaces/default/pods/p1/binding", binding));
  EXPECT_EQ(b1.status, 201) << b1.body;
  auto b2 = call(*t, req("POST", "/api/v1/namespaces/default/pods/p1/binding", binding));
  EXPECT_EQ(b2.status, 409);
  EXPECT_EQ(decode_status(b2.status, b2.body, encoding::json).message,
            "Operation cannot be fulfilled on pods/binding \"p1\": pod p1 is already assigned to node \"n1\"");
  auto b3 = call(*t, req("POST", "/api/v1/namespaces/default/pods/ghost/binding", binding));
  EXPECT_EQ(b3.status, 404);
  EXPECT_EQ(decode_status(b3.status, b3.body, encoding::json).reason, "NotFound");

  auto events = pb.events(2);
  ASSERT_EQ(events.size(), 2u) << pb.decode_error();
  EXPECT_EQ(events[0].type, watch_event_type::added);
  EXPECT_EQ(events[1].type, watch_event_type::modified);
  k8s::core::Pod bound;
  ASSERT_TRUE(decode_body(events[1].object, encoding::protobuf, bound));
  EXPECT_EQ(bound.spec().node_name(), "n1");
  ASSERT_GT(bound.status().conditions_size(), 0);
  EXPECT_EQ(bound.status().conditions(0).type(), "PodScheduled");

  // The unbound-pods watch sees the pod leave its selector as a DELETED.
  auto unbound = js.events(2);
  ASSERT_EQ(unbound.size(), 2u) << js.decode_error();
  EXPECT_EQ(unbound[0].type, watch_event_type::added);
  EXPECT_EQ(unbound[1].type, watch_event_type::deleted);
}

TEST(TestApiserver, TooOldWatchGets410Expired) {
  apiserver s({"--watch-history", "2"});
  auto t = connect(s.kubeconfig());
  ASSERT_TRUE(t);
  for (const char* name : {"a", "b", "c"})
    ASSERT_EQ(call(*t, req("POST", "/api/v1/nodes", std::string(R"({"metadata":{"name":")") + name + "\"}}")).status, 201);
  for (encoding e : {encoding::json, encoding::protobuf}) {
    watcher w(*t, "/api/v1/nodes?watch=1&resourceVersion=1", e);
    auto events = w.events(1);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].type, watch_event_type::error);
    auto st = decode_status(0, events[0].object, e);
    EXPECT_EQ(st.code, 410);
    EXPECT_EQ(st.reason, "Expired");
    EXPECT_EQ(st.message.rfind("too old resource version: 1 (", 0), 0u) << st.message;
    EXPECT_TRUE(w.end().has_value());
  }
}

TEST(TestApiserver, UpdateConflictPatchAndDelete) {
  apiserver s;
  auto t = connect(s.kubeconfig());
  ASSERT_TRUE(t);
  auto created = call(*t, req("POST", "/api/v1/nodes", R"({"metadata":{"name":"n1","labels":{"a":"1"}}})"));
  ASSERT_EQ(created.status, 201);
  k8s::core::Node n;
  ASSERT_TRUE(decode_body(created.body, encoding::json, n));
  auto patched = call(*t, [] {
    auto r = req("PATCH", "/api/v1/nodes/n1", R"({"metadata":{"labels":{"b":"2"}}})");
    r.content_type = "application/merge-patch+json";
    return r;
  }());
  ASSERT_EQ(patched.status, 200) << patched.body;
  std::string stale = R"({"metadata":{"name":"n1","resourceVersion":")" + n.metadata().resource_version() + "\"}}";
  auto put = call(*t, req("PUT", "/api/v1/nodes/n1", stale));
  EXPECT_EQ(put.status, 409);
  EXPECT_EQ(decode_status(put.status, put.body, encoding::json).reason, "Conflict");
  auto sel = call(*t, req("GET", "/api/v1/nodes?labelSelector=a%3D1%2Cb"));
  k8s::core::NodeList nl;
  ASSERT_TRUE(decode_body(sel.body, encoding::json, nl));
  EXPECT_EQ(nl.items_size(), 1);
  auto del = call(*t, req("DELETE", "/api/v1/nodes/n1", R"({"preconditions":{"uid":"wrong"}})"));
  EXPECT_EQ(del.status, 409);
  EXPECT_EQ(call(*t, req("DELETE", "/api/v1/nodes/n1")).status, 200);
  EXPECT_EQ(call(*t, req("GET", "/api/v1/nodes/n1")).status, 404);
}

// An HTTP/1.1 keep-alive client (python's http.client, curl) keeps its connection across POSTs:
// every response carries a Content-Length instead of being framed by closing the connection.
TEST(TestApiserver, Http1PostsKeepTheConnectionAlive) {
  apiserver s({"--no-tls"});
  ASSERT_EQ(s.url().rfind("http://127.0.0.1:", 0), 0u) << s.url();
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(s.port()));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  for (const char* name : {"n1", "n2"}) {
    std::string body = std::string(R"({"metadata":{"name":")") + name + "\"}}";
    std::string msg = "POST /api/v1/nodes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_EQ(write(fd, msg.data(), msg.size()), static_cast<ssize_t>(msg.size()));
    std::string resp;
    char buf[4096];
    size_t header_end = std::string::npos, length = 0;
    while (header_end == std::string::npos || resp.size() < header_end + 4 + length) {
      ssize_t n = read(fd, buf, sizeof buf);
      ASSERT_GT(n, 0) << "connection closed after: " << resp;
      resp.append(buf, static_cast<size_t>(n));
      header_end = resp.find("\r\n\r\n");
      size_t cl = resp.find("Content-Length: ");
      if (header_end != std::string::npos) {
        ASSERT_NE(cl, std::string::npos) << resp;
        length = std::stoul(resp.substr(cl + 16));
      }
    }
    EXPECT_EQ(resp.rfind("HTTP/1.1 201", 0), 0u) << resp;
    EXPECT_EQ(resp.find("Connection: close"), std::string::npos) << resp;
  }
  close(fd);
}

TEST(TestApiserver, InjectedFaultsAreCounted) {
  apiserver s({"--fault-binding-409-percent", "100", "--fault-watch-close-every", "1"});
  auto t = connect(s.kubeconfig());
  ASSERT_TRUE(t);
  watcher w(*t, "/api/v1/pods?watch=1&resourceVersion=4", encoding::json);
  ASSERT_EQ(call(*t, req("POST", "/api/v1/namespaces/default/pods", R"({"metadata":{"name":"p1"}})")).status, 201);
  ASSERT_EQ(call(*t, req("POST", "/api/v1/namespaces/default/pods", R"({"metadata":{"name":"p2"}})")).status, 201);
  EXPECT_EQ(w.events(1).size(), 1u);
  EXPECT_TRUE(w.end().has_value());  // closed after one event
  auto b = call(*t, req("POST", "/api/v1/namespaces/default/pods/p1/binding", R"({"target":{"name":"n1"}})"));
  EXPECT_EQ(b.status, 409);
  auto pod = call(*t, req("GET", "/api/v1/namespaces/default/pods/p1"));
  EXPECT_EQ(pod.body.find("nodeName"), std::string::npos);  // an injected 409 does not bind
  auto faults = call(*t, req("GET", "/debug/faults"));
  EXPECT_NE(faults.body.find("\"binding409\":1"), std::string::npos) << faults.body;
  EXPECT_NE(faults.body.find("\"watchClosed\":1"), std::string::npos) << faults.body;

  apiserver failing({"--fault-write-500-percent", "100"});
  auto f = connect(failing.kubeconfig());
  ASSERT_TRUE(f);
  EXPECT_EQ(call(*f, req("POST", "/api/v1/nodes", R"({"metadata":{"name":"n"}})")).status, 500);
  EXPECT_EQ(call(*f, req("GET", "/api/v1/nodes")).status, 200);  // reads are not failed
}

}  // namespace
}  // namespace kas::api

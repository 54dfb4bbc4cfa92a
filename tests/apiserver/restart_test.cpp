// The restart fault of the test apiserver (--fault-restart-every-seconds, POST /debug/restart) over
// real sockets, driven by the project's client: HTTP/2 over TLS and plain HTTP/1.1. A restart plays
// kube-apiserver restarting with its etcd intact: open connections (a watch among them) are cut
// below HTTP, connections are refused for --fault-restart-down-ms, the objects and the
// resourceVersion survive, and the watch history starts over at the restart's resourceVersion.
// Nothing here sleeps: each step waits for its event (an answer, a stream's end, the server's
// `listening on` line once the outage is over), with a generous bound that only turns a hang into
// a failure.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>

#include "client/api_wire.hpp"
#include "client/http_transport.hpp"
#include "messages/k8s/core.pb.h"
#include "tests/apiserver/test_server_process.hpp"

namespace kas::api {
namespace {

using testapi::call;
using testapi::connect;
using testapi::server_process;
using watch = testapi::stream_watch;

constexpr auto kBound = testapi::kTestBound;  // a hang bound, never a decision

// 0 when a TCP connection to 127.0.0.1:port is accepted (by the kernel), else the connect errno.
int try_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 ? 0 : errno;
  close(fd);
  return rc;
}

std::string create_node(http_transport& t, const std::string& name) {
  auto r = call(t, "POST", "/api/v1/nodes", R"({"metadata":{"name":")" + name + "\"}}");
  EXPECT_EQ(r.status, 201) << r.error << r.body;
  k8s::core::Node n;
  EXPECT_TRUE(decode_body(r.body, encoding::json, n));
  return n.metadata().resource_version();
}

std::string rv_of(const watch_event& ev) {
  k8s::core::Node n;
  EXPECT_TRUE(decode_body(ev.object, encoding::json, n));
  return n.metadata().resource_version();
}

// true: TLS, so the client speaks HTTP/2; false: --no-tls, HTTP/1.1.
class Restart : public ::testing::TestWithParam<bool> {};

TEST_P(Restart, CutsConnectionsRefusesThenKeepsObjectsButNotTheWatchHistory) {
  const bool tls = GetParam();
  std::vector<std::string> flags = {"--fault-restart-down-ms", "1000"};
  if (!tls) flags.push_back("--no-tls");
  server_process s(flags);
  ASSERT_FALSE(s.url().empty());
  auto t = connect(s.kubeconfig());
  ASSERT_TRUE(t);
  create_node(*t, "n1");
  const std::string rv_before = create_node(*t, "n2");
  watch open(*t, "/api/v1/nodes?watch=1&resourceVersion=" + rv_before);
  const std::string rv_restart = create_node(*t, "n3");
  auto seen = open.events(1);  // the watch is established
  ASSERT_EQ(seen.size(), 1u) << open.decode_error();
  EXPECT_EQ(rv_of(seen[0]), rv_restart);

  auto answer = call(*t, "POST", "/debug/restart");
  ASSERT_EQ(answer.status, 200) << answer.error;
  EXPECT_EQ(answer.body, R"({"restarts":1})");
  EXPECT_EQ(answer.http2, tls);

  // The open watch is cut below HTTP: no ERROR event, no clean end, a transport error.
  auto cut = open.end();
  ASSERT_TRUE(cut) << "the watch outlived the restart";
  EXPECT_EQ(open.events(1).size(), 1u);
  EXPECT_FALSE(cut->error.empty()) << "the watch ended cleanly, status " << cut->status;

  // The restart closed the listener before it cut the connections, so until the server says it
  // listens again, connections are refused (if the outage is already over, that line is waiting).
  int rc = try_connect(s.port());
  if (rc != 0) {
    EXPECT_EQ(rc, ECONNREFUSED) << strerror(rc);
  }
  EXPECT_EQ(s.next_line(), "listening on " + s.url());
  EXPECT_EQ(try_connect(s.port()), 0);

  // etcd survived: every object, and the resourceVersion goes on from where it was.
  auto list = call(*t, "GET", "/api/v1/nodes");
  ASSERT_EQ(list.status, 200) << list.error;
  k8s::core::NodeList nl;
  ASSERT_TRUE(decode_body(list.body, encoding::json, nl));
  ASSERT_EQ(nl.items_size(), 3);
  EXPECT_EQ(nl.items(2).metadata().name(), "n3");
  EXPECT_EQ(nl.metadata().resource_version(), rv_restart);

  // The watch cache did not: a watch from before the restart gets 410 Expired and must relist ...
  watch stale(*t, "/api/v1/nodes?watch=1&resourceVersion=" + rv_before);
  auto expired = stale.events(1);
  ASSERT_EQ(expired.size(), 1u) << stale.decode_error();
  EXPECT_EQ(expired[0].type, watch_event_type::error);
  auto st = decode_status(0, expired[0].object, encoding::json);
  EXPECT_EQ(st.code, 410);
  EXPECT_EQ(st.reason, "Expired");
  EXPECT_EQ(st.message, "too old resource version: " + rv_before + " (" + rv_restart + ")");
  auto stale_end = stale.end();
  ASSERT_TRUE(stale_end);
  EXPECT_TRUE(stale_end->error.empty()) << stale_end->error;

  // ... while one from the restart's resourceVersion (the relist's) sees the next write, rv + 1.
  watch fresh(*t, "/api/v1/nodes?watch=1&resourceVersion=" + rv_restart);
  const std::string rv_next = create_node(*t, "n4");
  EXPECT_EQ(rv_next, std::to_string(std::stoull(rv_restart) + 1));
  auto added = fresh.events(1);
  ASSERT_EQ(added.size(), 1u) << fresh.decode_error();
  EXPECT_EQ(added[0].type, watch_event_type::added);
  EXPECT_EQ(rv_of(added[0]), rv_next);

  auto faults = call(*t, "GET", "/debug/faults");
  EXPECT_NE(faults.body.find("\"restarts\":1,"), std::string::npos) << faults.body;
}

INSTANTIATE_TEST_SUITE_P(TestApiserver, Restart, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Http2" : "Http1"; });

// The flag restarts on the server's one-second tick; the server announces each return.
TEST(TestApiserverRestart, EveryNSecondsByFlag) {
  server_process s({"--fault-restart-every-seconds", "1", "--fault-restart-down-ms", "0"});
  ASSERT_FALSE(s.url().empty());
  EXPECT_EQ(s.next_line(), "listening on " + s.url());
  auto t = connect(s.kubeconfig());
  ASSERT_TRUE(t);
  // A request the next restart happens to cut fails below HTTP (status 0): ask again.
  auto ask = [&](const std::string& method, const std::string& path) {
    http_response r;
    for (int i = 0; i < 5 && r.status == 0; ++i) r = call(*t, method, path);
    return r;
  };
  auto faults = ask("GET", "/debug/faults");
  ASSERT_EQ(faults.status, 200) << faults.error;
  EXPECT_EQ(faults.body.find("\"restarts\":0,"), std::string::npos) << faults.body;
  EXPECT_EQ(ask("GET", "/debug/restart").status, 405);
}

}  // namespace
}  // namespace kas::api

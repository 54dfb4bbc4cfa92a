#include "observability/http_server.hpp"

#include <atomic>
#include <chrono>
#include <iterator>
#include <mutex>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "http_client.hpp"
#include "observability/kube_metrics.hpp"

namespace kas::obs {
namespace {

using testing::http_request;

struct server_fixture {
  metrics_registry reg;
  std::atomic<bool> ready{false};
  std::mutex mu;
  std::vector<std::pair<std::string, int>> answered;  // on_request calls: (path, code)
  std::unique_ptr<http_server> server;

  explicit server_fixture(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    kube_metrics km(reg);
    km.schedule_attempts.counter_series({kube_label::scheduled, "default-scheduler"}).inc(7);
    http_server_config cfg;
    cfg.bind_address = "127.0.0.1:0";
    cfg.collectables = {&reg};
    cfg.ready = [this] { return ready.load() ? readiness{} : readiness{false, "caches not synced"}; };
    cfg.request_timeout = timeout;
    cfg.on_request = [this](const std::string& path, int code) {
      std::lock_guard<std::mutex> lock(mu);
      answered.emplace_back(path, code);
    };
    auto s = http_server::start(std::move(cfg));
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.err().message);
    if (s.ok()) server = std::move(s.value());
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(server->port()) + path;
  }
};

struct endpoint_case {
  const char* name;
  const char* method;
  const char* path;
  bool ready;
  long code;
  const char* body_contains;
  const char* content_type;  // nullptr: not checked
};

TEST(HttpServer, Endpoints) {
  const endpoint_case cases[] = {
      {"metrics", "GET", "/metrics", true, 200,
       "scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default-scheduler\"} 7",
       "text/plain; version=0.0.4; charset=utf-8"},
      {"metrics with a query string", "GET", "/metrics?name[]=x", true, 200, "# TYPE scheduler_schedule_attempts_total",
       nullptr},
      {"healthz", "GET", "/healthz", false, 200, "ok", nullptr},
      {"livez", "GET", "/livez", false, 200, "ok", nullptr},
      {"readyz when ready", "GET", "/readyz", true, 200, "ok", nullptr},
      {"readyz when not ready", "GET", "/readyz", false, 503, "caches not synced", nullptr},
      {"unknown path", "GET", "/nope", true, 404, "not found", nullptr},
      {"root", "GET", "/", true, 404, "not found", nullptr},
      {"POST", "POST", "/metrics", true, 405, "method not allowed", nullptr},
      {"DELETE", "DELETE", "/healthz", true, 405, "", nullptr},
      {"HEAD", "HEAD", "/healthz", true, 200, "", nullptr},
  };
  server_fixture f;
  ASSERT_TRUE(f.server);
  EXPECT_NE(f.server->port(), 0);
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    f.ready = c.ready;
    auto r = http_request(f.url(c.path), c.method);
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.code, c.code);
    EXPECT_NE(r.body.find(c.body_contains), std::string::npos) << r.body;
    if (c.content_type) {
      EXPECT_EQ(r.content_type, c.content_type);
    }
    // on_request ran before the response was sent, with the path (query string dropped) and code.
    std::lock_guard<std::mutex> lock(f.mu);
    ASSERT_FALSE(f.answered.empty());
    std::string want_path = std::string(c.path).substr(0, std::string(c.path).find('?'));
    EXPECT_EQ(f.answered.back(), (std::pair<std::string, int>(want_path, static_cast<int>(c.code))));
  }
  std::lock_guard<std::mutex> lock(f.mu);
  EXPECT_EQ(f.answered.size(), std::size(cases));
}

TEST(HttpServer, ReadyzFollowsTheCallback) {
  server_fixture f;
  ASSERT_TRUE(f.server);
  EXPECT_EQ(http_request(f.url("/readyz")).code, 503);
  f.ready = true;
  EXPECT_EQ(http_request(f.url("/readyz")).code, 200);
  f.ready = false;
  EXPECT_EQ(http_request(f.url("/readyz")).code, 503);
}

struct bad_bind_case {
  const char* value;
  const char* why;
};

TEST(HttpServer, BadBindAddressesAreErrorsNamingFlagAndValue) {
  const bad_bind_case cases[] = {
      {"", "host:port"},
      {"nonsense", "host:port"},
      {"127.0.0.1", "host:port"},
      {"127.0.0.1:", "not a number"},
      {"127.0.0.1:abc", "not a number"},
      {"127.0.0.1:65536", "not a number"},
      {"127.0.0.1:-1", "not a number"},
      {"127.0.0.1:123456", "not a number"},
      {"::1:80", "[addr]:port"},
      {"[::1:80", "[addr]:port"},
      {"256.1.1.1:80", "not an IP address"},
      {"example.com:80", "not an IP address"},
      {"192.0.2.1:0", "bind:"},  // TEST-NET-1: not an address of this machine
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.value);
    http_server_config cfg;
    cfg.bind_address = c.value;
    auto s = http_server::start(cfg);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.err().message.find("--metrics-bind-address=\"" + std::string(c.value) + "\""), std::string::npos)
        << s.err().message;
    EXPECT_NE(s.err().message.find(c.why), std::string::npos) << s.err().message;
  }
}

TEST(HttpServer, PortInUseIsAnError) {
  server_fixture f;
  ASSERT_TRUE(f.server);
  http_server_config cfg;
  cfg.bind_address = "127.0.0.1:" + std::to_string(f.server->port());
  auto s = http_server::start(cfg);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.err().message.find("Address already in use"), std::string::npos) << s.err().message;
}

TEST(HttpServer, ZeroDisables) {
  http_server_config cfg;
  cfg.bind_address = "0";
  auto s = http_server::start(cfg);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value(), nullptr);
}

TEST(HttpServer, ParseBindAddress) {
  auto any = parse_bind_address(":10259");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any.value()->host, "");
  EXPECT_EQ(any.value()->port, 10259);
  auto v6 = parse_bind_address("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6.value()->host, "::1");
  auto custom = parse_bind_address("x", "--bind-address");
  ASSERT_FALSE(custom.ok());
  EXPECT_EQ(custom.err().message.rfind("--bind-address=\"x\"", 0), 0u) << custom.err().message;
}

TEST(HttpServer, LocalhostBindsLoopback) {
  http_server_config cfg;
  cfg.bind_address = "localhost:0";
  auto s = http_server::start(cfg);
  ASSERT_TRUE(s.ok()) << s.err().message;
  ASSERT_TRUE(s.value());
  EXPECT_EQ(http_request("http://127.0.0.1:" + std::to_string(s.value()->port()) + "/livez").body, "ok");
}

TEST(HttpServer, SilentAndPartialClientsDoNotBlockOthers) {
  server_fixture f;
  ASSERT_TRUE(f.server);
  int silent = testing::raw_connect(f.server->port());
  int partial = testing::raw_connect(f.server->port());
  ASSERT_GE(silent, 0);
  ASSERT_GE(partial, 0);
  testing::raw_send(partial, "GET /metr");
  auto r = http_request(f.url("/healthz"), "GET", 2000);
  EXPECT_EQ(r.code, 200) << r.error;
  ::close(silent);
  ::close(partial);
}

TEST(HttpServer, SlowClientIsDisconnectedAfterTheRequestTimeout) {
  server_fixture f(std::chrono::milliseconds(200));
  ASSERT_TRUE(f.server);
  int fd = testing::raw_connect(f.server->port(), 5000);
  ASSERT_GE(fd, 0);
  testing::raw_send(fd, "GET /healthz HTTP/1.1\r\n");  // never finishes the header
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(testing::raw_read_all(fd), "");  // closed without a response
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4)) << "closed by the server, not recv's timeout";
  ::close(fd);
}

struct raw_case {
  const char* name;
  std::string request;
  const char* status_line;
};

TEST(HttpServer, GarbageAndOversizedRequestsGetErrors) {
  const raw_case cases[] = {
      {"binary garbage", std::string("\x01\x02\xff garbage\r\n\r\n"), "HTTP/1.1 400 "},
      {"no version", "GET /metrics\r\n\r\n", "HTTP/1.1 400 "},
      {"relative target", "GET metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 400 "},
      {"oversized header", "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a'), "HTTP/1.1 431 "},
      {"bare LF line endings", "GET /livez HTTP/1.0\n\n", "HTTP/1.1 200 "},
  };
  server_fixture f;
  ASSERT_TRUE(f.server);
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    int fd = testing::raw_connect(f.server->port());
    ASSERT_GE(fd, 0);
    testing::raw_send(fd, c.request);
    std::string got = testing::raw_read_all(fd);
    EXPECT_EQ(got.rfind(c.status_line, 0), 0u) << got.substr(0, 200);
    ::close(fd);
  }
  EXPECT_EQ(http_request(f.url("/healthz")).code, 200) << "still serving";
}

TEST(HttpServer, StopReturnsPromptlyWithClientsConnected) {
  server_fixture f;
  ASSERT_TRUE(f.server);
  int fd = testing::raw_connect(f.server->port());
  testing::raw_send(fd, "GET /");
  auto t0 = std::chrono::steady_clock::now();
  f.server->stop();
  f.server->stop();  // idempotent
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_EQ(testing::raw_read_all(fd), "");
  ::close(fd);
  EXPECT_NE(http_request(f.url("/healthz"), "GET", 1000).error, "") << "no longer listening";
}

}  // namespace
}  // namespace kas::obs

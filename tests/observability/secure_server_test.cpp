// The HTTP server's secure side: TLS driven by the poll loop (non-blocking handshakes, a stalled one
// holds only its own slot, stop() stays prompt) and the asynchronous access check (decisions come
// back from other threads through the wake-up pipe; the loop serves others meanwhile).
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include <curl/curl.h>
#include <gtest/gtest.h>

#include "client/pki.hpp"
#include "http_client.hpp"
#include "observability/http_server.hpp"
#include "observability/kube_metrics.hpp"
#include "observability/metrics.hpp"

namespace kas::obs {
namespace {

struct tls_files {
  pki::key_pair ca, leaf;
  std::string ca_file;
  tls_files() {
    ca = *pki::make_ca("test-ca");
    pki::cert_request req;
    req.common_name = "localhost";
    req.dns_names = {"localhost"};
    req.ip_addresses = {"127.0.0.1"};
    leaf = *pki::issue(ca, req);
    char path[] = "/tmp/kas-secure-test-ca-XXXXXX";
    int fd = ::mkstemp(path);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, ca.cert_pem.data(), ca.cert_pem.size()), static_cast<ssize_t>(ca.cert_pem.size()));
    ::close(fd);
    ca_file = path;
  }
  ~tls_files() { ::unlink(ca_file.c_str()); }
  tls_material material() const { return {leaf.cert_pem, leaf.key_pem, "cert.pem", "key.pem"}; }
};

struct reply {
  long code = 0;
  std::string body, error;
};

// GET over HTTPS, verified against `ca_file`, with an optional bearer token.
reply https_get(const std::string& url, const std::string& ca_file, const std::string& token = "", long timeout_ms = 20000) {
  reply r;
  CURL* c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CAINFO, ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, testing::append_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  curl_slist* headers = nullptr;
  if (!token.empty()) {
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  }
  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.code);
  else r.error = curl_easy_strerror(rc);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  return r;
}

std::unique_ptr<http_server> start_tls(const tls_files& t, metrics_registry& reg, access_check check = {},
                                       std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  http_server_config cfg;
  cfg.bind_address = "127.0.0.1:0";
  cfg.collectables = {&reg};
  cfg.tls = t.material();
  cfg.authorize = std::move(check);
  cfg.request_timeout = timeout;
  auto s = http_server::start(std::move(cfg));
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.err().message);
  return s.ok() ? std::move(*s) : nullptr;
}

std::string url(const http_server& s, const std::string& path) {
  return "https://127.0.0.1:" + std::to_string(s.port()) + path;
}

TEST(SecureServer, ServesOverTlsVerifiedByTheCa) {
  tls_files t;
  metrics_registry reg;
  auto s = start_tls(t, reg);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->tls());
  auto r = https_get(url(*s, "/healthz"), t.ca_file);
  EXPECT_EQ(r.code, 200) << r.error;
  EXPECT_EQ(r.body, "ok");
  r = https_get(url(*s, "/metrics"), t.ca_file);
  EXPECT_EQ(r.code, 200) << r.error;
}

TEST(SecureServer, AnotherCaIsRefusedByTheClient) {
  tls_files t, other;
  metrics_registry reg;
  auto s = start_tls(t, reg);
  ASSERT_TRUE(s);
  auto r = https_get(url(*s, "/healthz"), other.ca_file);
  EXPECT_EQ(r.code, 0);
  EXPECT_FALSE(r.error.empty());
  // The server goes on serving after the failed handshake.
  EXPECT_EQ(https_get(url(*s, "/healthz"), t.ca_file).code, 200);
}

TEST(SecureServer, PlainHttpOnTheTlsPortGetsNoAnswerAndHurtsNothing) {
  tls_files t;
  metrics_registry reg;
  auto s = start_tls(t, reg);
  ASSERT_TRUE(s);
  int fd = testing::raw_connect(s->port(), 10000);
  ASSERT_GE(fd, 0);
  testing::raw_send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got = testing::raw_read_all(fd);
  EXPECT_EQ(got.find("HTTP/1.1 200"), std::string::npos);
  ::close(fd);
  EXPECT_EQ(https_get(url(*s, "/healthz"), t.ca_file).code, 200);
}

TEST(SecureServer, StalledHandshakeHoldsOnlyItsOwnSlotUntilTheTimeout) {
  tls_files t;
  metrics_registry reg;
  auto s = start_tls(t, reg, {}, std::chrono::milliseconds(300));
  ASSERT_TRUE(s);
  int silent = testing::raw_connect(s->port(), 20000);  // connects, never sends a ClientHello
  int partial = testing::raw_connect(s->port(), 20000);
  ASSERT_GE(silent, 0);
  ASSERT_GE(partial, 0);
  testing::raw_send(partial, std::string("\x16\x03\x01\x00\x80", 5));  // a record header, then nothing
  EXPECT_EQ(https_get(url(*s, "/healthz"), t.ca_file).code, 200);
  // Both are closed once their request timeout passes (read returns at EOF).
  EXPECT_EQ(testing::raw_read_all(silent), "");
  EXPECT_EQ(testing::raw_read_all(partial), "");
  ::close(silent);
  ::close(partial);
}

TEST(SecureServer, StopIsPromptWithStalledHandshakesAndPendingChecks) {
  tls_files t;
  metrics_registry reg;
  std::mutex mu;
  std::vector<access_done> pending;
  auto s = start_tls(t, reg, [&](const access_request&, access_done done) {
    std::lock_guard<std::mutex> lock(mu);
    pending.push_back(std::move(done));  // never answered before stop
  }, std::chrono::seconds(600));
  ASSERT_TRUE(s);
  int silent = testing::raw_connect(s->port(), 20000);
  ASSERT_GE(silent, 0);
  std::thread client([&] { https_get(url(*s, "/metrics"), t.ca_file, "tok", 60000); });
  for (;;) {  // wait until the request is parked in the check
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!pending.empty()) break;
    }
    std::this_thread::yield();
  }
  s->stop();  // returns without waiting out the 600 s request timeout
  client.join();
  s.reset();
  // A decision that arrives after the server is gone is dropped, not a crash.
  access_decision d;
  d.allowed = true;
  pending.front()(d);
  ::close(silent);
}

TEST(SecureServer, AccessChecksAnswerFromOtherThreadsWhileOthersAreServed) {
  tls_files t;
  metrics_registry reg;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<access_request, access_done>> pending;
  kube_metrics km(reg);
  km.schedule_attempts.counter_series({kube_label::scheduled, "default-scheduler"}).inc(3);
  auto s = start_tls(t, reg, [&](const access_request& r, access_done done) {
    if (r.path == "/healthz") {  // answered at once, on the loop's thread
      access_decision d;
      d.allowed = true;
      return done(d);
    }
    std::lock_guard<std::mutex> lock(mu);
    pending.emplace_back(r, std::move(done));
    cv.notify_all();
  });
  ASSERT_TRUE(s);
  reply denied, allowed;
  std::thread a([&] { denied = https_get(url(*s, "/metrics"), t.ca_file, "bad-token"); });
  std::thread b([&] { allowed = https_get(url(*s, "/metrics?x=1"), t.ca_file, "good-token"); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return pending.size() == 2; });
  }
  // Both are parked; the loop still answers others.
  EXPECT_EQ(https_get(url(*s, "/healthz"), t.ca_file).code, 200);
  std::thread answerer([&] {
    for (auto& [req, done] : pending) {
      access_decision d;
      if (req.token == "good-token") {
        d.allowed = true;
      } else {
        d.code = 403;
        d.body = "{\"reason\":\"Forbidden\"}";
      }
      done(d);
    }
  });
  answerer.join();
  a.join();
  b.join();
  EXPECT_EQ(pending[0].first.method, "GET");
  EXPECT_EQ(denied.code, 403) << denied.error;
  EXPECT_EQ(denied.body, "{\"reason\":\"Forbidden\"}");
  EXPECT_EQ(allowed.code, 200) << allowed.error;
  EXPECT_NE(allowed.body.find("scheduler_schedule_attempts_total{"), std::string::npos) << allowed.body;
}

TEST(SecureServer, TheBearerTokenReachesTheCheck) {
  metrics_registry reg;
  std::mutex mu;
  std::vector<access_request> seen;
  http_server_config cfg;
  cfg.bind_address = "127.0.0.1:0";
  cfg.collectables = {&reg};
  cfg.authorize = [&](const access_request& r, access_done done) {
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(r);
    }
    access_decision d;
    d.code = 401;
    d.body = "no";
    done(d);
  };
  auto s = http_server::start(std::move(cfg));
  ASSERT_TRUE(s.ok()) << s.err().message;
  struct raw_case {
    const char* header;
    const char* token;
  } cases[] = {{"Authorization: Bearer abc.def\r\n", "abc.def"},
               {"authorization:   bearer   xyz  \r\n", "xyz"},
               {"Authorization: Basic dXNlcjpwdw==\r\n", ""},
               {"", ""}};
  for (auto& c : cases) {
    int fd = testing::raw_connect((*s)->port());
    ASSERT_GE(fd, 0);
    testing::raw_send(fd, std::string("GET /metrics?a=b HTTP/1.1\r\nHost: x\r\n") + c.header + "\r\n");
    std::string got = testing::raw_read_all(fd);
    ::close(fd);
    EXPECT_EQ(got.rfind("HTTP/1.1 401 Unauthorized\r\n", 0), 0u) << got;
  }
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(seen[i].token, cases[i].token) << i;
    EXPECT_EQ(seen[i].path, "/metrics");
  }
}

TEST(SecureServer, BadTlsMaterialIsAnErrorNamingTheInput) {
  tls_files t, other;
  struct bad_case {
    const char* name;
    tls_material m;
    const char* names;
  } cases[] = {
      {"garbage certificate", {"not a pem", t.leaf.key_pem, "--tls-cert-file=/c", "--tls-private-key-file=/k"},
       "--tls-cert-file=/c"},
      {"garbage key", {t.leaf.cert_pem, "not a pem", "--tls-cert-file=/c", "--tls-private-key-file=/k"},
       "--tls-private-key-file=/k"},
      {"key of another certificate",
       {t.leaf.cert_pem, other.leaf.key_pem, "--tls-cert-file=/c", "--tls-private-key-file=/k"},
       "does not match"},
      {"empty", {"", "", "--tls-cert-file=/c", "--tls-private-key-file=/k"}, "--tls-cert-file=/c"},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(check_tls_material(c.m).ok());
    http_server_config cfg;
    cfg.bind_address = "127.0.0.1:0";
    cfg.tls = c.m;
    auto s = http_server::start(std::move(cfg));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.err().message.find(c.names), std::string::npos) << s.err().message;
  }
  EXPECT_TRUE(check_tls_material(t.material()).ok());
}

}  // namespace
}  // namespace kas::obs

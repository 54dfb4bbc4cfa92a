// The libcurl transport (client/http_transport.hpp) against an independent HTTPS server (Python's,
// tests/client/http_peer.py), with certificates made by client/pki.hpp: TLS verification, client
// certificates, bearer tokens, every method, streamed bodies, Status errors, cancel, timeouts,
// keep-alive and the QPS limit. HTTP/2 is checked against the test apiserver, which speaks it.
#include "client/http_transport.hpp"
#include "tests/client/python_peer.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>

#include "client/api_wire.hpp"
#include "client/pki.hpp"

namespace kas::api {
namespace {

using namespace std::chrono_literals;

struct tls_files {
  pki::key_pair ca, other_ca, server, client;
};

const tls_files& tls() {
  static tls_files t = [] {
    tls_files f;
    f.ca = *pki::make_ca("kas-test-ca");
    f.other_ca = *pki::make_ca("somebody-else");
    pki::cert_request s;
    s.common_name = "localhost";
    s.dns_names = {"localhost", "kubernetes.default.svc"};
    s.ip_addresses = {"127.0.0.1"};
    f.server = *pki::issue(f.ca, s);
    pki::cert_request c;
    c.common_name = "kube-actor-scheduler";
    c.organizations = {"system:kube-scheduler"};
    c.server = false;
    f.client = *pki::issue(f.ca, c);
    return f;
  }();
  return t;
}

std::string write_file(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  auto p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

// The Python peer, started per test; stopped by closing its stdin.
class peer {
public:
  explicit peer(bool require_client_cert) {
    char tmpl[] = "/tmp/kas-http-peer-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto cert = write_file(dir_, "server.crt", tls().server.cert_pem);
    auto key = write_file(dir_, "server.key", tls().server.key_pem);
    auto ca = write_file(dir_, "ca.crt", tls().ca.cert_pem);
    std::vector<std::string> args{"--cert", cert, "--key", key};
    if (require_client_cert) args.insert(args.end(), {"--client-ca", ca});
    child_ = std::make_unique<testing::python_peer>("http_peer.py", args);
  }
  ~peer() {
    child_.reset();
    std::filesystem::remove_all(dir_);
  }
  int port() const { return child_->port(); }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port()); }

private:
  std::filesystem::path dir_;
  std::unique_ptr<testing::python_peer> child_;
};

connection_config trusted(const peer& p) {
  connection_config c;
  c.server = p.url();
  c.ca_pem = tls().ca.cert_pem;
  c.source = "test";
  return c;
}

// Runs one request to completion (a bound wait: a hang fails the test instead of stalling it).
http_response call(http_transport& t, http_request r) {
  auto done = std::make_shared<std::promise<http_response>>();
  auto f = done->get_future();
  t.start(std::move(r), http_callbacks{nullptr, nullptr, [done](http_response resp) { done->set_value(std::move(resp)); }});
  if (f.wait_for(30s) != std::future_status::ready) {
    ADD_FAILURE() << "no answer within 30 s";
    return {};
  }
  return f.get();
}

http_request get(const std::string& path) {
  http_request r;
  r.path = path;
  r.timeout = 20s;
  return r;
}

TEST(HttpTransport, VerifiedTlsBearerTokenAndEveryMethod) {
  peer p(false);
  ASSERT_GT(p.port(), 0);
  auto conn = trusted(p);
  conn.token = "s3cret-token";
  auto t = http_transport::create(conn);
  ASSERT_TRUE(t) << t.err().message;
  for (const char* method : {"GET", "POST", "PUT", "PATCH", "DELETE"}) {
    auto r = get("/echo?x=1");
    r.method = method;
    if (std::string(method) != "GET") {
      r.body = std::string("{\"m\":\"") + method + "\"}";
      r.content_type = "application/merge-patch+json";
    }
    r.accept = "application/json";
    auto resp = call(**t, r);
    ASSERT_TRUE(resp.ok()) << resp.error << " " << resp.status;
    EXPECT_EQ(resp.content_type, "application/json");
    EXPECT_FALSE(resp.http2);  // Python's server speaks HTTP/1.1 only
    EXPECT_NE(resp.body.find(std::string("\"method\": \"") + method + "\""), std::string::npos) << resp.body;
    EXPECT_NE(resp.body.find("\"authorization\": \"Bearer s3cret-token\""), std::string::npos) << resp.body;
    EXPECT_NE(resp.body.find("\"path\": \"/echo?x=1\""), std::string::npos) << resp.body;
    EXPECT_NE(resp.body.find("\"accept\": \"application/json\""), std::string::npos) << resp.body;
    if (std::string(method) != "GET") {
      EXPECT_NE(resp.body.find("merge-patch+json"), std::string::npos) << resp.body;
      EXPECT_NE(resp.body.find(std::string("{\\\"m\\\":\\\"") + method), std::string::npos) << resp.body;
    }
  }
  EXPECT_EQ((*t)->started(), 5u);
}

TEST(HttpTransport, TokenFileIsRead) {
  peer p(false);
  char tmpl[] = "/tmp/kas-token-XXXXXX";
  std::filesystem::path dir = mkdtemp(tmpl);
  auto conn = trusted(p);
  conn.token_file = write_file(dir, "token", "from-file\n");
  auto t = http_transport::create(conn);
  ASSERT_TRUE(t);
  auto resp = call(**t, get("/echo"));
  EXPECT_NE(resp.body.find("\"authorization\": \"Bearer from-file\""), std::string::npos) << resp.body;
  std::filesystem::remove_all(dir);
}

TEST(HttpTransport, ClientCertificate) {
  peer p(true);
  auto conn = trusted(p);
  conn.client_cert_pem = tls().client.cert_pem;
  conn.client_key_pem = tls().client.key_pem;
  auto t = http_transport::create(conn);
  ASSERT_TRUE(t) << t.err().message;
  auto resp = call(**t, get("/echo"));
  ASSERT_TRUE(resp.ok()) << resp.error;
  EXPECT_NE(resp.body.find("\"clientCN\": \"kube-actor-scheduler\""), std::string::npos) << resp.body;

  // Without one, the server refuses the handshake.
  auto anon = http_transport::create(trusted(p));
  ASSERT_TRUE(anon);
  auto refused = call(**anon, get("/echo"));
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.status, 0);
  EXPECT_NE(refused.error.find("GET /echo: "), std::string::npos) << refused.error;
}

TEST(HttpTransport, WrongCaIsRefusedWithoutLeakingSecrets) {
  peer p(false);
  auto conn = trusted(p);
  conn.ca_pem = tls().other_ca.cert_pem;
  conn.token = "never-print-me";
  auto t = http_transport::create(conn);
  ASSERT_TRUE(t);
  auto resp = call(**t, get("/echo"));
  EXPECT_FALSE(resp.ok());
  EXPECT_EQ(resp.status, 0);
  EXPECT_NE(resp.error.find("certificate"), std::string::npos) << resp.error;
  EXPECT_EQ(resp.error.find("never-print-me"), std::string::npos) << resp.error;

  // The system trust store does not know the test CA either; insecure-skip-tls-verify does not ask.
  conn.ca_pem.clear();
  auto sys = http_transport::create(conn);
  EXPECT_FALSE(call(**sys, get("/echo")).ok());
  conn.insecure_skip_tls_verify = true;
  auto insecure = http_transport::create(conn);
  EXPECT_TRUE(call(**insecure, get("/echo")).ok());
}

TEST(HttpTransport, TlsServerNameIsVerifiedInsteadOfTheAddress) {
  peer p(false);
  auto conn = trusted(p);
  conn.tls_server_name = "kubernetes.default.svc";
  auto t = http_transport::create(conn);
  ASSERT_TRUE(t);
  auto resp = call(**t, get("/echo"));
  EXPECT_TRUE(resp.ok()) << resp.error;
  conn.tls_server_name = "not-in-the-certificate.example";
  auto wrong = http_transport::create(conn);
  ASSERT_TRUE(wrong);
  resp = call(**wrong, get("/echo"));
  EXPECT_FALSE(resp.ok());
  EXPECT_NE(resp.error.find("not-in-the-certificate.example"), std::string::npos) << resp.error;
}

TEST(HttpTransport, BadConnectionSettingsNameTheField) {
  connection_config c;
  c.source = "kubeconfig /k (context a)";
  c.server = "ftp://x";
  auto r = http_transport::create(c);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().message, "kubeconfig /k (context a): server \"ftp://x\" is not an http(s) URL");
  c.server = "https://127.0.0.1:1";
  c.ca_pem = "not a pem";
  r = http_transport::create(c);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().message, "kubeconfig /k (context a): certificate-authority: no PEM certificate in it");
  c.ca_pem.clear();
  c.client_cert_pem = tls().client.cert_pem;
  c.client_key_pem = "-----BEGIN PRIVATE KEY-----\nsecretbytes\n-----END PRIVATE KEY-----\n";
  r = http_transport::create(c);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().message, "kubeconfig /k (context a): client-key: not a PEM private key");
  transport_options o;
  o.qps = -1;
  c.client_cert_pem.clear();
  c.client_key_pem.clear();
  EXPECT_FALSE(http_transport::create(c, o));
}

TEST(HttpTransport, ConnectionRefusedIsAnError) {
  connection_config c;
  c.server = "https://127.0.0.1:1";
  auto t = http_transport::create(c);
  ASSERT_TRUE(t);
  auto resp = call(**t, get("/api"));
  EXPECT_FALSE(resp.ok());
  EXPECT_NE(resp.error.find("GET /api: Couldn't connect to server"), std::string::npos) << resp.error;
}

TEST(HttpTransport, StreamedBodyArrivesInPieces) {
  peer p(false);
  auto t = http_transport::create(trusted(p));
  ASSERT_TRUE(t);
  std::mutex mu;
  std::string got;
  int headers = 0, status = 0;
  auto done = std::make_shared<std::promise<http_response>>();
  auto f = done->get_future();
  auto r = get("/stream?n=5");
  r.stream = true;
  (*t)->start(r, http_callbacks{[&](int s, std::string_view) {
                                  std::lock_guard<std::mutex> l(mu);
                                  headers++;
                                  status = s;
                                },
                                [&](std::string_view chunk) {
                                  std::lock_guard<std::mutex> l(mu);
                                  got.append(chunk);
                                },
                                [done](http_response resp) { done->set_value(std::move(resp)); }});
  ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
  auto resp = f.get();
  EXPECT_TRUE(resp.ok()) << resp.error;
  EXPECT_TRUE(resp.body.empty());
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(headers, 1);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(got, "{\"i\": 0}\n{\"i\": 1}\n{\"i\": 2}\n{\"i\": 3}\n{\"i\": 4}\n");
}

TEST(HttpTransport, ErrorStatusIsReadWholeEvenForStreams) {
  peer p(false);
  auto t = http_transport::create(trusted(p));
  ASSERT_TRUE(t);
  auto r = get("/status/404");
  r.stream = true;
  bool data = false;
  auto done = std::make_shared<std::promise<http_response>>();
  auto f = done->get_future();
  (*t)->start(r, http_callbacks{nullptr, [&](std::string_view) { data = true; },
                                [done](http_response resp) { done->set_value(std::move(resp)); }});
  ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
  auto resp = f.get();
  EXPECT_FALSE(data);
  EXPECT_FALSE(resp.ok());
  EXPECT_TRUE(resp.error.empty());
  EXPECT_EQ(resp.status, 404);
  auto enc = encoding_of(resp.content_type);
  ASSERT_TRUE(enc);
  EXPECT_EQ(to_string(decode_status(resp.status, resp.body, *enc)), "as asked (404 NotFound)");
}

TEST(HttpTransport, CancelEndsAStream) {
  peer p(false);
  auto t = http_transport::create(trusted(p));
  ASSERT_TRUE(t);
  auto first = std::make_shared<std::promise<void>>();
  auto done = std::make_shared<std::promise<http_response>>();
  auto f = done->get_future();
  auto r = get("/forever");
  r.stream = true;
  r.timeout = 0ms;
  std::once_flag once;
  uint64_t id = (*t)->start(r, http_callbacks{nullptr, [&, first](std::string_view) { std::call_once(once, [&] { first->set_value(); }); },
                                              [done](http_response resp) { done->set_value(std::move(resp)); }});
  ASSERT_EQ(first->get_future().wait_for(30s), std::future_status::ready);
  (*t)->cancel(id);
  ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(f.get().error, "GET /forever: cancelled");
}

TEST(HttpTransport, TimeoutIsAnError) {
  peer p(false);
  auto t = http_transport::create(trusted(p));
  ASSERT_TRUE(t);
  auto r = get("/sleep?ms=3000");
  r.timeout = 200ms;
  auto resp = call(**t, r);
  EXPECT_FALSE(resp.ok());
  EXPECT_NE(resp.error.find("GET /sleep?ms=3000: Timeout was reached"), std::string::npos) << resp.error;
}

TEST(HttpTransport, KeepAliveReusesTheConnection) {
  peer p(false);
  auto t = http_transport::create(trusted(p));
  ASSERT_TRUE(t);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(call(**t, get("/echo")).ok());
  EXPECT_EQ((*t)->connections_opened(), 1u);
}

TEST(HttpTransport, QpsLimitSpacesRequests) {
  peer p(false);
  transport_options o;
  o.qps = 20;
  o.burst = 1;
  auto t = http_transport::create(trusted(p), o);
  ASSERT_TRUE(t);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(call(**t, get("/echo")).ok());
  // Five waits of 1/20 s at least; a lower bound only, so a slow machine cannot fail it.
  EXPECT_GE(std::chrono::steady_clock::now() - start, 240ms);
}

TEST(HttpTransport, DestructionEndsWhatIsInFlight) {
  peer p(false);
  auto done = std::make_shared<std::promise<http_response>>();
  auto f = done->get_future();
  {
    auto t = http_transport::create(trusted(p));
    ASSERT_TRUE(t);
    auto r = get("/forever");
    r.stream = true;
    (*t)->start(r, http_callbacks{nullptr, nullptr, [done](http_response resp) { done->set_value(std::move(resp)); }});
  }
  ASSERT_EQ(f.wait_for(1s), std::future_status::ready);
  EXPECT_EQ(f.get().error, "GET /forever: transport stopped");
}

}  // namespace
}  // namespace kas::api

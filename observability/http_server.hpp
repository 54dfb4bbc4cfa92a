#pragma once
// A minimal HTTP/1.1 server for /metrics and the health endpoints, beside the scheduler's actors.
//
// Why our own: prometheus-cpp's civetweb Exposer cannot serve /healthz, /livez or /readyz, and its
// destructor blocks about 2 s. This one is a single background thread running a poll() loop over the
// listening socket, a wake-up pipe and up to max_connections non-blocking client sockets. Each client
// sends one request and gets one response ("Connection: close"); a client that is slow, silent or sends
// garbage only holds its own slot until request_timeout, and a request larger than max_request_bytes is
// refused with 431. stop() writes to the wake-up pipe, so it returns as soon as the loop notices (no
// timeout to wait out).
//
// Routes: GET (or HEAD) /metrics -> text exposition 0.0.4 of every collectable; /healthz, /livez -> the
// health checks in kube's healthz style: 200 "ok" when every check passes ("?verbose" lists them,
// "[+]ping ok" ... "livez check passed"), else 500 listing every check, a failed one as
// "[-]actor/cycle_driver-0 failed: <reason>", then "livez check failed"; /readyz -> 200 "ok" when the
// readiness callback says ready, else 503 and the reason; other paths 404; other methods 405.
//
// Secure serving (run's --secure-port, as kube-scheduler's 10259) adds two things to the same loop:
// - TLS (http_server_config::tls): each accepted socket gets an OpenSSL session whose handshake is
//   driven non-blocking by the loop, so a client that stalls its handshake holds only its own slot
//   until request_timeout; requests and responses then go through SSL_read/SSL_write.
// - An access check before routing (http_server_config::authorize): the loop hands it the method,
//   path and bearer token and parks the connection; the check answers through a callback from any
//   thread (at once from a cache, or later from an HTTP client's I/O thread), which queues the
//   decision under a lock and writes to the wake-up pipe. The loop never blocks on a review.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/collectable.h>

#include "messages/result.hpp"

namespace kas::obs {

struct readiness {
  bool ready = true;
  std::string reason;  // shown in the 503 body when not ready
};

// One named check of /healthz and /livez (kube's healthz.HealthChecker).
struct health_check {
  std::string name;    // "ping", "actor/cycle_driver-0"
  bool ok = true;
  std::string reason;  // why it failed; shown in the 500 body (kube withholds it; this endpoint
                       // binds to loopback unless told otherwise, and the reason is what an operator needs)
};

// TLS material for HTTPS: a PEM certificate (chain: the server's first, then intermediates) and its
// PEM private key. start() checks that both parse and match; errors name cert_source / key_source
// (e.g. "--tls-cert-file=/etc/tls/tls.crt") so the operator knows which input is wrong.
struct tls_material {
  std::string cert_pem;
  std::string key_pem;
  std::string cert_source = "the TLS certificate";
  std::string key_source = "the TLS private key";
};

// What the access check is asked about one request.
struct access_request {
  std::string method;  // "GET", "HEAD"
  std::string path;    // without the query
  std::string token;   // the bearer token of `Authorization: Bearer ...`; empty when none was sent
};

// Its answer. allowed: the request is routed as usual. Otherwise the response is `code` (401, 403,
// 500 ...) with this body, written as is.
struct access_decision {
  bool allowed = false;
  int code = 403;
  std::string content_type = "application/json";
  std::string body;
  std::string user;  // who the request was authenticated as (for logs); may be empty
};
using access_done = std::function<void(access_decision)>;
using access_check = std::function<void(const access_request&, access_done)>;

struct http_server_config {
  // kube's --bind-address style "host:port": "127.0.0.1:10259", "0.0.0.0:10259", "[::1]:10259",
  // ":10259" (every interface), "localhost:0" (port 0 picks a free port). "0" disables the server.
  // The host must be an IP address or "localhost"; names are not resolved.
  std::string bind_address = "127.0.0.1:10259";
  std::string flag_name = "--metrics-bind-address";  // named in error messages
  // Rendered on /metrics in this order. Empty means default_registry(). Must outlive the server.
  std::vector<const prometheus::Collectable*> collectables;
  // Called on the server thread for each /readyz, so it must be thread-safe (e.g. read atomics).
  // Empty means always ready.
  std::function<readiness()> ready;
  // Called on the server thread for each /healthz and /livez; must be thread-safe. Empty means one
  // "ping" check that always passes.
  std::function<std::vector<health_check>()> live;
  // Called on the server thread after each request was answered (its response rendered), with the
  // request path ("/metrics") and status code. Lets a caller wait for scrapes instead of guessing
  // their timing; must be thread-safe. Empty means nothing is called.
  std::function<void(const std::string& path, int code)> on_request;
  // HTTPS instead of plain HTTP when set.
  std::optional<tls_material> tls;
  // Called on the server thread for every well-formed request before it is routed; must not block.
  // It calls `done` exactly once, from any thread, now or later (a done called after stop() is
  // ignored). Empty means every request is allowed. A request whose answer takes longer than
  // request_timeout is closed without a response.
  access_check authorize;
  std::chrono::milliseconds request_timeout{5000};
  size_t max_request_bytes = 8192;
  size_t max_connections = 64;
};

struct bind_endpoint {
  std::string host;  // empty: every interface
  uint16_t port = 0;
};

// nullopt when the value is "0" (disabled). Errors name the flag and the value.
result<std::optional<bind_endpoint>> parse_bind_address(const std::string& value,
                                                        const std::string& flag_name = "--metrics-bind-address");

// Whether the material parses and the key matches the certificate (what start() checks), without
// binding anything: lets a command refuse bad files before it starts working.
result<bool> check_tls_material(const tls_material& tls);

class http_server {
public:
  // Binds, listens and starts the thread. A null pointer when the address is "0" (disabled); an error
  // naming the flag and value when the address is malformed or cannot be bound. Never throws.
  static result<std::unique_ptr<http_server>> start(http_server_config cfg);

  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;
  ~http_server();  // stop()

  // Idempotent; closes the listener and every client, joins the thread.
  void stop();

  uint16_t port() const { return port_; }  // the bound port, also when 0 was asked for
  bool tls() const { return tls_; }
  const std::string& host() const { return host_; }

private:
  struct impl;
  explicit http_server(std::unique_ptr<impl> p, std::string host, uint16_t port, bool tls);

  std::unique_ptr<impl> impl_;
  std::string host_;
  uint16_t port_;
  bool tls_;
};

}  // namespace kas::obs

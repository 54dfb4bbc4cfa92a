#pragma once
// The HTTP transport to one apiserver, on libcurl: HTTP/2 multiplexing over TLS where the server
// offers it (ALPN), HTTP/1.1 with a pool of keep-alive connections otherwise; TLS verified against
// the connection's CA unless it says insecure; client certificate or bearer token; streamed
// responses for watches.
//
// It owns one I/O thread that runs curl's multi loop, like CAF's own network multiplexer: libcurl
// handles are not thread-safe, so they live on that thread only. Other threads (actors) hand it
// requests through a short locked queue and get their answers through callbacks, which run on the
// I/O thread and must only copy or forward (an actor sends itself a message).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "client/kubeconfig.hpp"
#include "messages/result.hpp"

namespace kas::api {

struct transport_options {
  // clientConnection.qps / burst: a token bucket over request starts (0 = unlimited). kube's own
  // default of 50 QPS would cap binding at 50 pods/s, so the default here is unlimited.
  double qps = 0;
  int burst = 0;
  std::chrono::milliseconds connect_timeout{10000};
  // Connections per host for HTTP/1.1 (HTTP/2 multiplexes every request over one).
  long max_host_connections = 16;
  std::string user_agent = "kube-actor-scheduler";
};

struct http_request {
  std::string method = "GET";  // GET, POST, PUT, PATCH, DELETE
  std::string path;            // with query, e.g. /api/v1/pods?watch=1&resourceVersion=5
  std::string body;
  std::string content_type;    // of the body
  std::string accept;
  // Deliver the body as it arrives (watch streams) instead of once at the end.
  bool stream = false;
  // Whole-request limit; zero means none (a watch ends when the server ends it or on cancel).
  std::chrono::milliseconds timeout{0};
};

struct http_response {
  int status = 0;            // 0 when the request failed below HTTP
  std::string content_type;
  std::string body;          // empty for streamed requests (the chunks went to on_data)
  std::string error;         // transport failure (connect, TLS, timeout, cancelled); never holds secrets
  bool http2 = false;        // the response came over HTTP/2
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

struct http_callbacks {
  // Streamed requests: the status and content type, once, before the first chunk.
  std::function<void(int status, std::string_view content_type)> on_headers;
  std::function<void(std::string_view chunk)> on_data;
  // Always called exactly once per started request (also on failure and cancel).
  std::function<void(http_response)> on_done;
};

class http_transport {
public:
  // Checks the connection settings libcurl will use (a PEM that does not parse fails here, with the
  // field named, not at the first request) and starts the I/O thread.
  static result<std::unique_ptr<http_transport>> create(const connection_config& conn, transport_options opts = {});
  ~http_transport();  // cancels what is in flight (each gets on_done with an error) and joins the thread
  http_transport(const http_transport&) = delete;
  http_transport& operator=(const http_transport&) = delete;

  // Thread-safe. Returns the request's id for cancel().
  uint64_t start(http_request req, http_callbacks cb);
  // Thread-safe. The request ends with error "cancelled" (unless it already ended).
  void cancel(uint64_t id);

  const std::string& server() const;
  // Counters for tests and metrics.
  uint64_t started() const;
  uint64_t connections_opened() const;

  struct impl;

private:
  explicit http_transport(std::unique_ptr<impl> p);
  std::unique_ptr<impl> p_;
};

}  // namespace kas::api

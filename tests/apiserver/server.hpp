#pragma once
// The HTTP side of the test apiserver fixture, on h2o's event loop (one thread): TLS with ALPN
// (HTTP/2, else HTTP/1.1), client-certificate or bearer-token authentication, REST routes onto the
// store (store.hpp), streamed watches, discovery and kubectl's Table output, fault injection.
//
// Everything runs on the loop thread; handlers never block. Watches are h2o generators that queue
// their frames and send them from `proceed` (watch.cpp). Handlers catch every exception and answer
// a 500 Status, so none escapes into h2o's C callbacks.
//
// The restart fault (restart()) plays a kube-apiserver process that dies and comes back with its
// etcd intact: the listener is closed (new connections are refused) and every accepted socket is
// shut down under h2o (no GOAWAY, no TLS close_notify, no last chunk), so h2o closes each connection
// on its next read or write; after --fault-restart-down-ms a new listener is bound to the same
// address. The store keeps its objects and resourceVersion; only the watch history starts over.
#include <netinet/in.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#define H2O_USE_LIBUV 0
extern "C" {
#include <h2o.h>
}

#include "tests/apiserver/selectors.hpp"
#include "tests/apiserver/store.hpp"
#include "tests/apiserver/wire.hpp"

namespace kas::testapi {

struct fault_options {
  uint64_t watch_close_every = 0;  // close each watch after N events (0 = never)
  double write_500_percent = 0;
  double binding_409_percent = 0;
  uint64_t slow_ms = 0;
  uint64_t compact_every_seconds = 0;
  uint64_t restart_every_seconds = 0;  // restart() every N s (0 = only on POST /debug/restart)
  uint64_t restart_down_ms = 500;      // how long a restart refuses connections
};

struct fault_counts {
  uint64_t watch_closed = 0, write_500 = 0, binding_409 = 0, slowed = 0, compactions = 0, watch_expired = 0;
  uint64_t restarts = 0, restart_cut_connections = 0;  // restarts, and the connections they closed
  uint64_t lease_writes_refused = 0;  // POST /debug/partition-lease-holder at work
};

struct server_options {
  std::string host = "127.0.0.1";
  int port = 0;
  bool tls = true;
  std::string token;
  std::string kubeconfig_out, cert_dir;
  size_t history = 200000;
  bool priority_admission_plugin = true;  // --disable-admission-plugins Priority turns it off
  uint64_t bookmark_seconds = 5;
  fault_options faults;
};

// One parsed request: what the routes need, independent of h2o.
struct request {
  h2o_req_t* req = nullptr;
  std::string method, path;
  std::map<std::string, std::string> query;
  std::string accept, content_type;
  std::string_view body;
  std::string param(const std::string& k) const {
    auto it = query.find(k);
    return it == query.end() ? "" : it->second;
  }
};

class watch_stream;

class server {
public:
  explicit server(server_options opts);
  int run();  // serves until SIGTERM/SIGINT; returns the exit code

  // Routing (server_routes.cpp).
  void handle(request& r);
  // Responses.
  void respond(h2o_req_t* req, int status, const char* content_type, const std::string& body);
  void respond_error(h2o_req_t* req, const api_error& e, wire_format f);

  // Watches (watch.cpp).
  void start_watch(request& r, const kind_info& k, const std::string& ns, wire_format f, bool table);
  void on_change(const change& c);
  void unregister(watch_stream* w);
  void abort_watches();  // ends every watch now, dropping what it had queued (restart)
  void tick();  // once a second: bookmarks, watch timeouts, compaction and restart faults
  // The restart fault: connections cut, the listener closed for restart_down_ms, the watch history
  // emptied at the current resourceVersion. Does nothing while the last restart's outage lasts.
  void restart();
  // restart() once the loop has written what is queued (POST /debug/restart answers first).
  void restart_soon();
  // Changes with every restart: work deferred across one (a slowed request) is dropped.
  uint64_t epoch() const { return epoch_; }

  // Discovery and tables (discovery.cpp). Return false when the path is not theirs.
  bool handle_discovery(request& r);
  std::string table_body(const kind_info& k, const std::vector<object_ptr>& items, uint64_t rv,
                         const std::string& cont) const;

  store& db() { return store_; }
  const server_options& options() const { return opts_; }
  fault_counts& faults() { return faults_; }
  bool roll(double percent);
  h2o_loop_t* loop() { return ctx_.loop; }

private:
  bool authenticated(h2o_req_t* req) const;
  bool setup_tls(std::string& err);
  bool write_credentials(std::string& err);
  void route_resource(request& r, const kind_info& k, const std::string& ns, const std::string& name,
                      const std::string& sub);
  void route_collection(request& r, const kind_info& k, const std::string& ns, wire_format f);
  void route_object(request& r, const kind_info& k, const std::string& ns, const std::string& name,
                    const std::string& sub, wire_format f);
  void route_binding(request& r, const std::string& ns, const std::string& name, wire_format f);
  void respond_object(request& r, int status, const op_result<object_ptr>& res, wire_format f);

  static int on_req(h2o_handler_t* h, h2o_req_t* req);
  static void on_accept(h2o_socket_t* listener, const char* err);
  // Binds and listens on listen_addr_ (its port becomes the one bound) and starts accepting.
  bool open_listener(std::string& err);
  void reopen_listener();

  server_options opts_;
  store store_;
  fault_counts faults_;
  // Holder identities cut off from the Lease: a Lease write whose body names one gets 503, as if
  // that replica were partitioned from the apiserver (POST /debug/partition-lease-holder?holder=ID).
  std::vector<std::string> partitioned_holders_;
  std::vector<watch_stream*> watches_;
  bool iterating_ = false;
  sockaddr_in listen_addr_{};
  h2o_socket_t* listener_ = nullptr;  // null while a restart's outage lasts
  std::unordered_set<h2o_socket_t*> conns_;  // accepted sockets h2o has not closed yet
  uint64_t epoch_ = 0;
  h2o_globalconf_t config_{};
  h2o_context_t ctx_{};
  h2o_accept_ctx_t accept_ctx_{};
  SSL_CTX* ssl_ctx_ = nullptr;
  std::string ca_pem_, ca_key_pem_, client_cert_pem_, client_key_pem_, server_url_;
  h2o_timeout_t tick_timeout_{};
  h2o_timeout_entry_t tick_entry_{};
  h2o_timeout_t slow_timeout_{};
  h2o_timeout_t restart_down_timeout_{}, restart_retry_timeout_{}, restart_now_timeout_{};
  h2o_timeout_entry_t reopen_entry_{}, restart_now_entry_{};
  uint64_t last_compaction_ = 0, ticks_ = 0;
  friend struct server_access;

public:
  h2o_timeout_t& slow_timeout() { return slow_timeout_; }
};

// Percent-decoding of a query component.
std::string url_decode(std::string_view s);

}  // namespace kas::testapi

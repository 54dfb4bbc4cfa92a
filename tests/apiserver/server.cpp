// The test apiserver fixture's HTTP plumbing on h2o (server.hpp): listener, TLS and certificates,
// kubeconfig files, authentication, request parsing and responses. Routing is server_routes.cpp.
#include "tests/apiserver/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

extern "C" {
#include <h2o/http2.h>
}

#include "client/pki.hpp"
#include "tests/apiserver/request_log.hpp"

namespace kas::testapi {

namespace {

struct handler_ext {
  h2o_handler_t super;
  server* srv;
};

server* g_server = nullptr;
volatile sig_atomic_t g_stop = 0;

// h2o 2.2's socket keeps its SSL* in a private struct whose first two members are the SSL_CTX* and
// the SSL*; the SSL_CTX is checked against ours before the SSL* is trusted.
struct h2o_ssl_prefix {
  SSL_CTX* ssl_ctx;
  SSL* ossl;
};

std::string base64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string header(h2o_req_t* req, const h2o_token_t* token) {
  ssize_t i = h2o_find_header(&req->headers, token, -1);
  if (i < 0) return "";
  const auto& v = req->headers.entries[i].value;
  return std::string(v.base, v.len);
}

void parse_query(std::string_view q, std::map<std::string, std::string>& out) {
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view part = q.substr(0, amp);
    size_t eq = part.find('=');
    std::string key = url_decode(part.substr(0, eq));
    std::string val = eq == std::string_view::npos ? "" : url_decode(part.substr(eq + 1));
    if (!key.empty()) out[key] = val;
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
}

bool write_text(const std::string& path, const std::string& text, std::string& err) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
  if (!f) {
    err = "cannot write " + path;
    return false;
  }
  return true;
}

X509* pem_cert(const std::string& pem) {
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  return x;
}

EVP_PKEY* pem_key(const std::string& pem) {
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  return k;
}

}  // namespace

std::string url_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

server::server(server_options opts) : opts_(std::move(opts)), store_(store_options{opts_.history, opts_.priority_admission_plugin}) {
  store_.set_listener([this](const change& c) { on_change(c); });
}

bool server::setup_tls(std::string& err) {
  auto ca = pki::make_ca("kube-actor-test-apiserver-ca");
  if (!ca) { err = ca.err().message; return false; }
  pki::cert_request s;
  s.common_name = "kube-actor-test-apiserver";
  s.dns_names = {"localhost", "kubernetes", "kubernetes.default.svc"};
  s.ip_addresses = {"127.0.0.1"};
  auto srv = pki::issue(*ca, s);
  pki::cert_request c;
  c.common_name = "kube-actor-admin";
  c.organizations = {"system:masters"};
  c.server = false;
  auto cli = pki::issue(*ca, c);
  if (!srv || !cli) { err = !srv ? srv.err().message : cli.err().message; return false; }
  ca_pem_ = ca->cert_pem;
  client_cert_pem_ = cli->cert_pem;
  client_key_pem_ = cli->key_pem;
  ssl_ctx_ = SSL_CTX_new(TLS_server_method());
  X509* cert = pem_cert(srv->cert_pem);
  EVP_PKEY* key = pem_key(srv->key_pem);
  X509* ca_cert = pem_cert(ca->cert_pem);
  bool ok = cert && key && ca_cert && SSL_CTX_use_certificate(ssl_ctx_, cert) == 1 &&
            SSL_CTX_use_PrivateKey(ssl_ctx_, key) == 1 &&
            X509_STORE_add_cert(SSL_CTX_get_cert_store(ssl_ctx_), ca_cert) == 1 &&
            SSL_CTX_add_client_CA(ssl_ctx_, ca_cert) == 1;
  X509_free(cert);
  EVP_PKEY_free(key);
  X509_free(ca_cert);
  if (!ok) { err = "loading the generated certificates into OpenSSL failed"; return false; }
  // Ask for a client certificate but let the handshake finish without one: the request then needs a
  // bearer token, and gets a 401 Status otherwise (as kube-apiserver answers).
  SSL_CTX_set_verify(ssl_ctx_, SSL_VERIFY_PEER, nullptr);
  h2o_ssl_register_alpn_protocols(ssl_ctx_, h2o_http2_alpn_protocols);
  return true;
}

bool server::write_credentials(std::string& err) {
  auto kubeconfig = [&](bool token) {
    std::string user = token ? "    token: " + opts_.token + "\n"
                             : "    client-certificate-data: " + base64(client_cert_pem_) +
                                   "\n    client-key-data: " + base64(client_key_pem_) + "\n";
    std::string cluster = "    server: " + server_url_ + "\n";
    if (opts_.tls) cluster += "    certificate-authority-data: " + base64(ca_pem_) + "\n";
    return "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-actor-test\n  cluster:\n" + cluster +
           "users:\n- name: kube-actor-admin\n  user:\n" + user +
           "contexts:\n- name: kube-actor-test\n  context:\n    cluster: kube-actor-test\n    user: kube-actor-admin\n"
           "current-context: kube-actor-test\n";
  };
  bool certs = opts_.tls;
  if (!opts_.kubeconfig_out.empty() &&
      !write_text(opts_.kubeconfig_out, kubeconfig(!certs && !opts_.token.empty()), err))
    return false;
  if (opts_.cert_dir.empty()) return true;
  std::filesystem::create_directories(opts_.cert_dir);
  const std::string d = opts_.cert_dir + "/";
  if (certs && !(write_text(d + "ca.crt", ca_pem_, err) && write_text(d + "client.crt", client_cert_pem_, err) &&
                 write_text(d + "client.key", client_key_pem_, err) && write_text(d + "kubeconfig", kubeconfig(false), err)))
    return false;
  if (!opts_.token.empty() && !write_text(d + "kubeconfig-token", kubeconfig(true), err)) return false;
  return true;
}

bool server::authenticated(h2o_req_t* req) const {
  if (!opts_.token.empty() && header(req, H2O_TOKEN_AUTHORIZATION) == "Bearer " + opts_.token) return true;
  if (!opts_.tls) return opts_.token.empty();
  h2o_socket_t* sock = req->conn->callbacks->get_socket ? req->conn->callbacks->get_socket(req->conn) : nullptr;
  if (!sock || !sock->ssl) return false;
  auto* prefix = reinterpret_cast<const h2o_ssl_prefix*>(sock->ssl);
  if (prefix->ssl_ctx != ssl_ctx_ || !prefix->ossl) return false;
  X509* peer = SSL_get_peer_certificate(prefix->ossl);
  if (!peer) return false;
  X509_free(peer);
  return SSL_get_verify_result(prefix->ossl) == X509_V_OK;
}

void server::respond(h2o_req_t* req, int status, const char* ct, const std::string& body) {
  req->res.status = status;
  req->res.reason = status < 300 ? "OK" : "Error";
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, ct, strlen(ct));
  // A Content-Length keeps HTTP/1.1 connections alive after requests with a body: without one,
  // h2o 2.2 frames such a response by closing the connection (chunked encoding is only used for
  // bodiless requests), so a keep-alive client paid a new TLS handshake for every POST (~5-10 ms).
  req->res.content_length = body.size();
  h2o_send_inline(req, body.data(), body.size());
}

void server::respond_error(h2o_req_t* req, const api_error& e, wire_format f) {
  respond(req, e.code, content_type(f), status_body(e, f));
}

bool server::roll(double percent) {
  if (percent <= 0) return false;
  uint64_t r = fast_random();
  return (r % 1000000) < static_cast<uint32_t>(percent * 10000);
}

namespace {

struct deferred {
  h2o_timeout_entry_t entry;
  h2o_req_t* req;
  server* srv;
  uint64_t epoch;
};

void dispatch(server* srv, h2o_req_t* req) {
  request r;
  r.req = req;
  r.method.assign(req->method.base, req->method.len);
  std::string_view full(req->path.base, req->path.len);
  size_t q = req->query_at;
  r.path = std::string(q == SIZE_MAX ? full : full.substr(0, q));
  if (q != SIZE_MAX) parse_query(full.substr(q + 1), r.query);
  r.accept = header(req, H2O_TOKEN_ACCEPT);
  r.content_type = header(req, H2O_TOKEN_CONTENT_TYPE);
  if (req->entity.base) r.body = std::string_view(req->entity.base, req->entity.len);
  try {
    srv->handle(r);
  } catch (const std::exception& e) {
    srv->respond_error(req, {500, "InternalError", std::string("internal error: ") + e.what(), "", "", ""},
                       wire_format::json);
  } catch (...) {
    srv->respond_error(req, {500, "InternalError", "internal error", "", "", ""}, wire_format::json);
  }
}

// Runs dispatch() from `timeout` (the slow-response fault).
void defer(server* srv, h2o_req_t* req, h2o_timeout_t* timeout) {
  auto* d = static_cast<deferred*>(h2o_mem_alloc_shared(&req->pool, sizeof(deferred), [](void* p) {
    auto* d = static_cast<deferred*>(p);
    if (h2o_timeout_is_linked(&d->entry)) h2o_timeout_unlink(&d->entry);
  }));
  memset(d, 0, sizeof *d);
  d->req = req;
  d->srv = srv;
  d->epoch = srv->epoch();
  d->entry.cb = [](h2o_timeout_entry_t* e) {
    auto* d = reinterpret_cast<deferred*>(reinterpret_cast<char*>(e) - offsetof(deferred, entry));
    // A restart since the request arrived cut its connection (h2o has not noticed, as an HTTP/1.1
    // connection is not read while a request is processed): it must not be carried out. The
    // answer only lets h2o find the connection closed.
    if (d->epoch != d->srv->epoch())
      return d->srv->respond_error(d->req, {503, "ServiceUnavailable", "the apiserver restarted", "", "", ""},
                                   wire_format::json);
    dispatch(d->srv, d->req);
  };
  h2o_timeout_link(srv->loop(), timeout, &d->entry);
}

}  // namespace

int server::on_req(h2o_handler_t* h, h2o_req_t* req) {
  server* srv = reinterpret_cast<handler_ext*>(h)->srv;
  log_request(req);
  std::string_view path(req->path.base, req->path.len);
  bool open_path = path.rfind("/healthz", 0) == 0 || path.rfind("/readyz", 0) == 0 || path.rfind("/livez", 0) == 0;
  if (!open_path && !srv->authenticated(req)) {
    srv->respond_error(req, {401, "Unauthorized", "Unauthorized", "", "", ""}, wire_format::json);
    return 0;
  }
  if (srv->opts_.faults.slow_ms > 0 && !open_path) {
    ++srv->faults_.slowed;
    defer(srv, req, &srv->slow_timeout_);
    return 0;
  }
  dispatch(srv, req);
  return 0;
}

void server::on_accept(h2o_socket_t* listener, const char* err) {
  if (err) return;
  h2o_socket_t* sock = h2o_evloop_socket_accept(listener);
  if (!sock) return;
  // Every accepted socket is known until h2o disposes of it (on_close runs then, after the close),
  // so a restart can cut them all.
  g_server->conns_.insert(sock);
  sock->on_close.cb = [](void* s) { g_server->conns_.erase(static_cast<h2o_socket_t*>(s)); };
  sock->on_close.data = sock;
  h2o_accept(&g_server->accept_ctx_, sock);
}

bool server::open_listener(std::string& err) {
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  if (fd < 0) {
    err = std::string("socket: ") + strerror(errno);
    return false;
  }
  // SO_REUSEADDR also lets a restart bind the port again while the connections it cut linger.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // Accepted sockets inherit TCP_NODELAY on Linux: without it small HTTP/2 frames wait for ACKs.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  socklen_t len = sizeof listen_addr_;
  if (bind(fd, reinterpret_cast<sockaddr*>(&listen_addr_), sizeof listen_addr_) != 0 || listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&listen_addr_), &len) != 0) {
    err = strerror(errno);
    close(fd);
    return false;
  }
  listener_ = h2o_evloop_socket_create(ctx_.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
  h2o_socket_read_start(listener_, on_accept);
  return true;
}

void server::restart() {
  if (!listener_) return;  // the last restart's outage is not over
  ++faults_.restarts;
  ++epoch_;
  // The process is gone: nothing listens (connections are refused; those waiting in the backlog
  // are reset by the close) ...
  h2o_socket_close(listener_);
  listener_ = nullptr;
  // ... and its connections died with it. shutdown() under h2o sends the peer a bare FIN (no GOAWAY,
  // TLS close_notify or last chunk: the client sees the connection closed, not an answer) and makes
  // h2o's next read or write on the socket fail, so h2o closes the connection through its own error
  // path. A connection that h2o reads (HTTP/2, idle HTTP/1.1, a TLS handshake) goes at once; an
  // HTTP/1.1 one serving a request goes when its answer is written: watches end now
  // (abort_watches), a slowed request when its timer fires (it sees the epoch change).
  for (h2o_socket_t* s : conns_) {
    shutdown(h2o_socket_get_fd(s), SHUT_RDWR);
    ++faults_.restart_cut_connections;
  }
  abort_watches();
  // etcd is intact (objects, the resourceVersion, continue tokens), the watch cache is new.
  store_.restart_watch_cache();
  h2o_timeout_link(ctx_.loop, &restart_down_timeout_, &reopen_entry_);
}

void server::reopen_listener() {
  std::string err;
  if (!open_listener(err)) {
    // The address is taken (another socket bound the port during the outage): try again.
    fprintf(stderr, "kube-actor-test-apiserver: restart: listening on %s again: %s; retrying in 100 ms\n",
            server_url_.c_str(), err.c_str());
    h2o_timeout_link(ctx_.loop, &restart_retry_timeout_, &reopen_entry_);
    return;
  }
  printf("listening on %s\n", server_url_.c_str());
  fflush(stdout);
}

void server::restart_soon() {
  if (!h2o_timeout_is_linked(&restart_now_entry_)) h2o_timeout_link(ctx_.loop, &restart_now_timeout_, &restart_now_entry_);
}

int server::run() {
  g_server = this;
  std::string err;
  if (opts_.tls && !setup_tls(err)) {
    fprintf(stderr, "kube-actor-test-apiserver: %s\n", err.c_str());
    return 1;
  }
  listen_addr_.sin_family = AF_INET;
  listen_addr_.sin_port = htons(static_cast<uint16_t>(opts_.port));
  if (inet_pton(AF_INET, opts_.host.c_str(), &listen_addr_.sin_addr) != 1) {
    fprintf(stderr, "kube-actor-test-apiserver: --listen %s:%d: not an IPv4 address\n", opts_.host.c_str(), opts_.port);
    return 1;
  }
  h2o_config_init(&config_);
  h2o_hostconf_t* host = h2o_config_register_host(&config_, h2o_iovec_init(H2O_STRLIT("default")), 65535);
  h2o_pathconf_t* pc = h2o_config_register_path(host, "/", 0);
  auto* h = reinterpret_cast<handler_ext*>(h2o_create_handler(pc, sizeof(handler_ext)));
  h->super.on_req = on_req;
  h->srv = this;
  h2o_context_init(&ctx_, h2o_evloop_create(), &config_);
  accept_ctx_.ctx = &ctx_;
  accept_ctx_.hosts = config_.hosts;
  accept_ctx_.ssl_ctx = ssl_ctx_;
  h2o_timeout_init(ctx_.loop, &tick_timeout_, 1000);
  h2o_timeout_init(ctx_.loop, &slow_timeout_, opts_.faults.slow_ms);
  tick_entry_.cb = [](h2o_timeout_entry_t*) {
    g_server->tick();
    h2o_timeout_link(g_server->ctx_.loop, &g_server->tick_timeout_, &g_server->tick_entry_);
  };
  h2o_timeout_link(ctx_.loop, &tick_timeout_, &tick_entry_);
  // Initialised after the context's own timeouts, so in a loop iteration the zero timeout h2o
  // flushes HTTP/2 frames from runs before restart_now_timeout_: POST /debug/restart's answer is
  // written before the restart cuts its connection.
  h2o_timeout_init(ctx_.loop, &restart_down_timeout_, opts_.faults.restart_down_ms);
  h2o_timeout_init(ctx_.loop, &restart_retry_timeout_, 100);
  h2o_timeout_init(ctx_.loop, &restart_now_timeout_, 0);
  reopen_entry_.cb = [](h2o_timeout_entry_t*) { g_server->reopen_listener(); };
  restart_now_entry_.cb = [](h2o_timeout_entry_t*) { g_server->restart(); };
  if (!open_listener(err)) {
    fprintf(stderr, "kube-actor-test-apiserver: --listen %s:%d: %s\n", opts_.host.c_str(), opts_.port, err.c_str());
    return 1;
  }
  server_url_ = std::string(opts_.tls ? "https://" : "http://") + opts_.host + ":" + std::to_string(ntohs(listen_addr_.sin_port));
  if (!write_credentials(err)) {
    fprintf(stderr, "kube-actor-test-apiserver: %s\n", err.c_str());
    return 1;
  }
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = 1; };
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  printf("listening on %s\n", server_url_.c_str());
  fflush(stdout);
  // An interrupted epoll_wait (a signal, a debugger or strace attaching) is not a reason to stop.
  while (!g_stop)
    if (h2o_evloop_run(ctx_.loop, 1000) != 0 && errno != EINTR) break;
  return 0;
}

}  // namespace kas::testapi

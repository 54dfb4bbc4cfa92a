#include "observability/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <list>
#include <mutex>
#include <thread>

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include "observability/metrics.hpp"

namespace kas::obs {

namespace {

using clock = std::chrono::steady_clock;

error bind_error(const std::string& flag, const std::string& value, const std::string& why) {
  return error{flag + "=\"" + value + "\": " + why};
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

struct response {
  int code = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string extra_headers;
};

// Whether `query` ("a=1&verbose") has the key, with or without a value.
bool has_query_key(const std::string& query, const std::string& key) {
  size_t i = 0;
  while (i <= query.size()) {
    size_t amp = query.find('&', i);
    if (amp == std::string::npos) amp = query.size();
    std::string part = query.substr(i, amp - i);
    if (part.substr(0, part.find('=')) == key) return true;
    i = amp + 1;
  }
  return false;
}

const char* reason_phrase(int code) {
  switch (code) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

std::string serialize(const response& r, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(r.code) + " " + reason_phrase(r.code) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  out += r.extra_headers;
  out += "Connection: close\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// One client connection: read one request, write one response, then drain what the client still sends
// until it closes (closing with unread input would reset the connection and lose the response).
// With TLS, `ssl` is the session: `handshaking` until SSL_accept completes, and `want` says which
// readiness (POLLIN or POLLOUT) OpenSSL waits for, whatever the phase. `authorizing` parks the
// connection until the access check's decision for `id` arrives.
struct connection {
  enum class phase { handshaking, reading, authorizing, writing, draining };
  uint64_t id = 0;
  int fd = -1;
  SSL* ssl = nullptr;
  phase state = phase::reading;
  short want = POLLIN;
  std::string in;
  std::string out;
  size_t written = 0;
  clock::time_point deadline;
  // The parsed request while it is being authorized.
  std::string method, path, query;
  bool head_only = false;
};

template <class T, void (*F)(T*)>
struct deleter {
  void operator()(T* p) const { F(p); }
};
using ssl_ctx_ptr = std::unique_ptr<SSL_CTX, deleter<SSL_CTX, SSL_CTX_free>>;
using bio_ptr = std::unique_ptr<BIO, deleter<BIO, BIO_free_all>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509, X509_free>>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY, EVP_PKEY_free>>;

std::string openssl_reason() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no details from OpenSSL";
  char buf[256] = {};
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

// A server context for the material; errors name its sources.
result<ssl_ctx_ptr> make_tls_context(const tls_material& t) {
  ERR_clear_error();
  ssl_ctx_ptr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return error{"TLS: cannot create a context: " + openssl_reason()};
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  bio_ptr cb(BIO_new_mem_buf(t.cert_pem.data(), static_cast<int>(t.cert_pem.size())));
  x509_ptr leaf(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
  if (!leaf) return error{t.cert_source + ": no PEM certificate could be read: " + openssl_reason()};
  if (SSL_CTX_use_certificate(ctx.get(), leaf.get()) != 1)
    return error{t.cert_source + ": the certificate is not usable: " + openssl_reason()};
  for (;;) {  // the rest of the chain
    X509* extra = PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr);
    if (!extra) break;
    if (SSL_CTX_add0_chain_cert(ctx.get(), extra) != 1) {
      X509_free(extra);
      return error{t.cert_source + ": a chain certificate is not usable: " + openssl_reason()};
    }
  }
  ERR_clear_error();  // the end of the PEM stream
  bio_ptr kb(BIO_new_mem_buf(t.key_pem.data(), static_cast<int>(t.key_pem.size())));
  pkey_ptr key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  if (!key) return error{t.key_source + ": no PEM private key could be read: " + openssl_reason()};
  if (SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 || SSL_CTX_check_private_key(ctx.get()) != 1)
    return error{t.key_source + ": the private key does not match the certificate of " + t.cert_source + ": " +
                 openssl_reason()};
  return ctx;
}

// Decisions handed back to the loop: shared with every pending `done`, so a late one (after stop)
// writes into a queue nobody reads and a pipe that is still open.
struct mailbox {
  std::mutex mu;
  std::vector<std::pair<uint64_t, access_decision>> decided;
  int wake_rd = -1;
  int wake_wr = -1;
  ~mailbox() {
    if (wake_rd >= 0) ::close(wake_rd);
    if (wake_wr >= 0) ::close(wake_wr);
  }
  void wake() {
    char b = 1;
    while (::write(wake_wr, &b, 1) < 0 && errno == EINTR) {
    }
  }
  void post(uint64_t id, access_decision d) {
    {
      std::lock_guard<std::mutex> lock(mu);
      decided.emplace_back(id, std::move(d));
    }
    wake();
  }
};

}  // namespace

result<bool> check_tls_material(const tls_material& tls) {
  auto ctx = make_tls_context(tls);
  if (!ctx) return ctx.err();
  return true;
}

result<std::optional<bind_endpoint>> parse_bind_address(const std::string& value, const std::string& flag) {
  if (value == "0") return std::optional<bind_endpoint>{};
  auto colon = value.rfind(':');
  if (colon == std::string::npos)
    return bind_error(flag, value, "expected host:port (e.g. 127.0.0.1:10259), or 0 to disable");
  std::string host = value.substr(0, colon);
  std::string port = value.substr(colon + 1);
  if (!host.empty() && host.front() == '[') {
    if (host.size() < 3 || host.back() != ']')
      return bind_error(flag, value, "an IPv6 host must be written [addr]:port");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return bind_error(flag, value, "an IPv6 host must be written [addr]:port");
  }
  if (!all_digits(port) || port.size() > 5 || std::stoul(port) > 65535)
    return bind_error(flag, value, "port \"" + port + "\" is not a number in 0..65535");
  return std::optional<bind_endpoint>{bind_endpoint{host, static_cast<uint16_t>(std::stoul(port))}};
}

struct http_server::impl {
  http_server_config cfg;
  int listen_fd = -1;
  std::shared_ptr<mailbox> box = std::make_shared<mailbox>();
  ssl_ctx_ptr tls;
  std::thread thread;
  std::atomic<bool> stopped{false};
  std::list<connection> conns;
  uint64_t next_id = 1;

  ~impl() {
    close_fd(listen_fd);
    for (auto& c : conns) close_conn(c);
  }

  void run();
  void accept_all();
  void on_event(connection& c);
  void on_readable(connection& c);
  void on_writable(connection& c);
  void on_decision(uint64_t id, access_decision d);
  void respond(connection& c, const response& r, const std::string& path);
  static void close_conn(connection& c);
  // Reads or writes through TLS or the plain socket. >0 bytes; 0 would block (c.want set); <0 the
  // connection is over (EOF or error).
  ssize_t io_read(connection& c, char* buf, size_t n);
  ssize_t io_write(connection& c, const char* buf, size_t n);
  void handshake(connection& c);
  response route(const std::string& method, const std::string& path, const std::string& query) const;
  response metrics() const;
  response ready() const;
  response health(const std::string& endpoint, bool verbose) const;
};

result<std::unique_ptr<http_server>> http_server::start(http_server_config cfg) {
  auto parsed = parse_bind_address(cfg.bind_address, cfg.flag_name);
  if (!parsed) return parsed.err();
  if (!parsed.value()) return std::unique_ptr<http_server>{};
  const bind_endpoint ep = *parsed.value();
  const std::string value = cfg.bind_address;

  // Numeric hosts only (plus "localhost"), as kube's bind addresses: no DNS lookup can stall startup.
  const std::string host = ep.host == "localhost" ? "127.0.0.1" : ep.host;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  std::string port_str = std::to_string(ep.port);
  int gai = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port_str.c_str(), &hints, &res);
  if (gai != 0) return bind_error(cfg.flag_name, value, "host \"" + ep.host + "\" is not an IP address");

  auto p = std::make_unique<impl>();
  std::string last_error = "no usable address";
  for (addrinfo* ai = res; ai && p->listen_fd < 0; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      last_error = std::string("bind: ") + std::strerror(errno);
      ::close(fd);
      continue;
    }
    p->listen_fd = fd;
  }
  ::freeaddrinfo(res);
  if (p->listen_fd < 0) return bind_error(cfg.flag_name, value, last_error);

  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(p->listen_fd, reinterpret_cast<sockaddr*>(&ss), &len);
  uint16_t port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                                  : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0)
    return bind_error(cfg.flag_name, value, std::string("pipe: ") + std::strerror(errno));
  p->box->wake_rd = pipe_fds[0];
  p->box->wake_wr = pipe_fds[1];
  if (cfg.tls) {
    auto ctx = make_tls_context(*cfg.tls);
    if (!ctx) return ctx.err();
    p->tls = std::move(*ctx);
  }
  if (cfg.collectables.empty()) cfg.collectables.push_back(&default_registry());
  const bool tls = cfg.tls.has_value();
  p->cfg = std::move(cfg);
  impl* raw = p.get();
  p->thread = std::thread([raw] { raw->run(); });
  return std::unique_ptr<http_server>(new http_server(std::move(p), ep.host, port, tls));
}

http_server::http_server(std::unique_ptr<impl> p, std::string host, uint16_t port, bool tls)
    : impl_(std::move(p)), host_(std::move(host)), port_(port), tls_(tls) {}

http_server::~http_server() { stop(); }

void http_server::stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  impl_->box->wake();
  if (impl_->thread.joinable()) impl_->thread.join();
  // Close the listener now, not at destruction: a stopped server must refuse connections at once.
  close_fd(impl_->listen_fd);
}

void http_server::impl::close_conn(connection& c) {
  if (c.ssl) SSL_free(c.ssl);
  c.ssl = nullptr;
  close_fd(c.fd);
}

void http_server::impl::run() {
  // A peer that resets the connection must not kill the process: SSL_write writes with write(2),
  // which raises SIGPIPE (send(MSG_NOSIGNAL) cannot be asked of it). Blocked in this thread only,
  // the signal stays pending here and the write fails with EPIPE instead.
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
  std::vector<pollfd> fds;
  std::vector<connection*> by_index;
  for (;;) {
    fds.clear();
    by_index.clear();
    fds.push_back({box->wake_rd, POLLIN, 0});
    if (conns.size() < cfg.max_connections) fds.push_back({listen_fd, POLLIN, 0});
    auto now = clock::now();
    auto wait = std::chrono::milliseconds(1000);
    for (auto& c : conns) {
      // A parked connection waits for nothing on its socket (poll still reports a hang-up).
      short ev = c.state == connection::phase::authorizing ? 0 : c.want;
      fds.push_back({c.fd, ev, 0});
      by_index.push_back(&c);
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(std::max(c.deadline - now, clock::duration{})));
    }
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      char buf[64];
      while (::read(box->wake_rd, buf, sizeof buf) > 0) {
      }
      if (stopped.load()) break;  // stop()
      std::vector<std::pair<uint64_t, access_decision>> decided;
      {
        std::lock_guard<std::mutex> lock(box->mu);
        decided.swap(box->decided);
      }
      for (auto& [id, d] : decided) on_decision(id, std::move(d));
    }
    size_t first_conn = 1;
    if (conns.size() < cfg.max_connections) {
      if (fds[1].revents != 0) accept_all();
      first_conn = 2;
    }
    for (size_t i = first_conn; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      connection& c = *by_index[i - first_conn];
      if (c.fd < 0) continue;
      if (c.state == connection::phase::authorizing) {
        if (fds[i].revents & (POLLHUP | POLLERR)) close_conn(c);  // the client gave up
        continue;
      }
      on_event(c);
    }
    now = clock::now();
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->fd < 0 || it->deadline <= now) {
        close_conn(*it);
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& c : conns) close_conn(c);
  conns.clear();
  // Consume a SIGPIPE left pending by a reset peer (it is blocked in this thread only).
  timespec zero{0, 0};
  while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
  }
}

void http_server::impl::accept_all() {
  while (conns.size() < cfg.max_connections) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a transient error such as ECONNABORTED / EMFILE
    connection c;
    c.id = next_id++;
    c.fd = fd;
    c.deadline = clock::now() + cfg.request_timeout;
    if (tls) {
      c.ssl = SSL_new(tls.get());
      if (!c.ssl || SSL_set_fd(c.ssl, fd) != 1) {
        ERR_clear_error();
        close_conn(c);
        continue;
      }
      c.state = connection::phase::handshaking;
    }
    conns.push_back(std::move(c));
    if (tls) handshake(conns.back());  // the ClientHello may be there already
  }
}

void http_server::impl::on_event(connection& c) {
  switch (c.state) {
    case connection::phase::handshaking: handshake(c); break;
    case connection::phase::writing: on_writable(c); break;
    case connection::phase::reading:
    case connection::phase::draining: on_readable(c); break;
    case connection::phase::authorizing: break;
  }
}

void http_server::impl::handshake(connection& c) {
  ERR_clear_error();
  int r = SSL_accept(c.ssl);
  if (r == 1) {
    c.state = connection::phase::reading;
    c.want = POLLIN;
    on_readable(c);  // the request may have come with the handshake's last flight
    return;
  }
  int e = SSL_get_error(c.ssl, r);
  ERR_clear_error();
  if (e == SSL_ERROR_WANT_READ) c.want = POLLIN;
  else if (e == SSL_ERROR_WANT_WRITE) c.want = POLLOUT;
  else close_conn(c);  // not TLS, or a handshake that failed: nothing to answer
}

ssize_t http_server::impl::io_read(connection& c, char* buf, size_t n) {
  if (!c.ssl) {
    ssize_t r = ::recv(c.fd, buf, n, 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      c.want = POLLIN;
      return 0;
    }
    return r == 0 ? -1 : r;
  }
  ERR_clear_error();
  int r = SSL_read(c.ssl, buf, static_cast<int>(n));
  if (r > 0) return r;
  int e = SSL_get_error(c.ssl, r);
  ERR_clear_error();
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    c.want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
    return 0;
  }
  return -1;
}

ssize_t http_server::impl::io_write(connection& c, const char* buf, size_t n) {
  if (!c.ssl) {
    ssize_t w = ::send(c.fd, buf, n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      c.want = POLLOUT;
      return 0;
    }
    return w <= 0 ? -1 : w;
  }
  ERR_clear_error();
  int w = SSL_write(c.ssl, buf, static_cast<int>(n));
  if (w > 0) return w;
  int e = SSL_get_error(c.ssl, w);
  ERR_clear_error();
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    c.want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
    return 0;
  }
  return -1;
}

namespace {

// The bearer token of an `Authorization: Bearer T` header (case-insensitive name and scheme, as
// kube's bearertoken authenticator); empty when there is none or another scheme is used.
std::string bearer_token(const std::string& head) {
  size_t i = head.find('\n');
  while (i != std::string::npos && i + 1 < head.size()) {
    size_t eol = head.find('\n', i + 1);
    std::string line = head.substr(i + 1, eol == std::string::npos ? std::string::npos : eol - i - 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (name == "authorization") {
        std::string v = line.substr(colon + 1);
        size_t b = v.find_first_not_of(" \t");
        v = b == std::string::npos ? "" : v.substr(b);
        if (v.size() < 7) return "";
        std::string scheme = v.substr(0, 7);
        std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char ch) { return std::tolower(ch); });
        if (scheme != "bearer ") return "";
        std::string t = v.substr(7);
        size_t tb = t.find_first_not_of(" \t"), te = t.find_last_not_of(" \t");
        return tb == std::string::npos ? "" : t.substr(tb, te - tb + 1);
      }
    }
    i = eol;
  }
  return "";
}

}  // namespace

void http_server::impl::on_readable(connection& c) {
  char buf[4096];
  for (;;) {
    ssize_t r = io_read(c, buf, sizeof buf);
    if (r == 0) return;  // would block
    if (r < 0) {  // EOF or error: nothing more to read or answer
      close_conn(c);
      return;
    }
    if (c.state == connection::phase::draining) continue;
    c.in.append(buf, static_cast<size_t>(r));
    size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) end = c.in.find("\n\n");
    if (end != std::string::npos && end <= cfg.max_request_bytes) break;
    if (c.in.size() > cfg.max_request_bytes) {
      respond(c, {431, "text/plain; charset=utf-8", "request too large\n", ""}, "");
      return;
    }
    if (!c.ssl) return;  // plain: wait for poll (TLS may hold decrypted bytes poll cannot see)
  }
  size_t end = c.in.find("\r\n\r\n");
  if (end == std::string::npos) end = c.in.find("\n\n");
  const std::string head = c.in.substr(0, end);
  std::string line = head.substr(0, head.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  auto sp1 = line.find(' ');
  auto sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 7, "HTTP/1.") != 0)
    return respond(c, {400, "text/plain; charset=utf-8", "malformed request line\n", ""}, "");
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.empty() || target.front() != '/')
    return respond(c, {400, "text/plain; charset=utf-8", "malformed request target\n", ""}, "");
  c.method = line.substr(0, sp1);
  c.path = target.substr(0, target.find('?'));
  c.query = target.size() > c.path.size() ? target.substr(c.path.size() + 1) : std::string{};
  c.head_only = c.method == "HEAD";
  if (!cfg.authorize) return respond(c, route(c.method, c.path, c.query), c.path);
  c.state = connection::phase::authorizing;
  c.deadline = clock::now() + cfg.request_timeout;
  access_request ar{c.method, c.path, bearer_token(head)};
  std::weak_ptr<mailbox> box_ref = box;
  uint64_t id = c.id;
  try {
    cfg.authorize(ar, [box_ref, id](access_decision d) {
      if (auto b = box_ref.lock()) b->post(id, std::move(d));
    });
  } catch (const std::exception& e) {
    access_decision d;
    d.code = 500;
    d.content_type = "text/plain; charset=utf-8";
    d.body = std::string("Internal Server Error: ") + e.what() + "\n";
    box->post(id, std::move(d));
  }
}

void http_server::impl::on_decision(uint64_t id, access_decision d) {
  for (auto& c : conns) {
    if (c.id != id || c.fd < 0 || c.state != connection::phase::authorizing) continue;
    if (d.allowed) {
      respond(c, route(c.method, c.path, c.query), c.path);
    } else {
      std::string extra = d.code == 403 ? "X-Content-Type-Options: nosniff\r\n" : "";
      respond(c, {d.code, d.content_type, d.body, extra}, c.path);
    }
    return;
  }
  // The connection is gone (closed by the client or its deadline): nothing to answer.
}

void http_server::impl::respond(connection& c, const response& r, const std::string& path) {
  if (cfg.on_request) cfg.on_request(path, r.code);
  c.out = serialize(r, c.head_only);
  c.in.clear();
  c.state = connection::phase::writing;
  c.deadline = clock::now() + cfg.request_timeout;
  on_writable(c);
}

void http_server::impl::on_writable(connection& c) {
  while (c.written < c.out.size()) {
    ssize_t w = io_write(c, c.out.data() + c.written, c.out.size() - c.written);
    if (w == 0) return;  // would block
    if (w < 0) {
      close_conn(c);
      return;
    }
    c.written += static_cast<size_t>(w);
  }
  if (c.ssl) {
    ERR_clear_error();
    SSL_shutdown(c.ssl);  // close_notify, best effort: the response is complete either way
    ERR_clear_error();
  }
  ::shutdown(c.fd, SHUT_WR);
  c.state = connection::phase::draining;
  c.want = POLLIN;
  c.deadline = std::min(c.deadline, clock::now() + std::chrono::seconds(1));
}

response http_server::impl::route(const std::string& method, const std::string& path,
                                 const std::string& query) const {
  if (method != "GET" && method != "HEAD")
    return {405, "text/plain; charset=utf-8", "method not allowed\n", "Allow: GET, HEAD\r\n"};
  if (path == "/metrics") return metrics();
  if (path == "/healthz" || path == "/livez") return health(path.substr(1), has_query_key(query, "verbose"));
  if (path == "/readyz") return ready();
  return {404, "text/plain; charset=utf-8", "404 page not found\n", ""};
}

response http_server::impl::metrics() const {
  try {
    std::vector<prometheus::MetricFamily> all;
    for (auto* c : cfg.collectables) {
      auto part = c->Collect();
      std::move(part.begin(), part.end(), std::back_inserter(all));
    }
    return {200, "text/plain; version=0.0.4; charset=utf-8", prometheus::TextSerializer{}.Serialize(all), ""};
  } catch (const std::exception& e) {
    return {500, "text/plain; charset=utf-8", std::string("collecting metrics failed: ") + e.what() + "\n", ""};
  }
}

// kube's healthz handler (k8s.io/apiserver/pkg/server/healthz): "ok" when every check passes (the
// list with ?verbose), else 500 with every check's line and "<endpoint> check failed".
response http_server::impl::health(const std::string& endpoint, bool verbose) const {
  std::vector<health_check> checks;
  try {
    if (cfg.live) checks = cfg.live();
    else checks.push_back({"ping", true, {}});
  } catch (const std::exception& e) {
    checks.push_back({"checks", false, e.what()});
  }
  std::string lines;
  bool failed = false;
  for (auto& c : checks) {
    if (c.ok) {
      lines += "[+]" + c.name + " ok\n";
    } else {
      lines += "[-]" + c.name + " failed: " + c.reason + "\n";
      failed = true;
    }
  }
  const std::string type = "text/plain; charset=utf-8";
  if (failed) return {500, type, lines + endpoint + " check failed\n", "X-Content-Type-Options: nosniff\r\n"};
  if (!verbose) return {200, type, "ok", "X-Content-Type-Options: nosniff\r\n"};
  return {200, type, lines + endpoint + " check passed\n", "X-Content-Type-Options: nosniff\r\n"};
}

response http_server::impl::ready() const {
  if (!cfg.ready) return {200, "text/plain; charset=utf-8", "ok", ""};
  try {
    readiness r = cfg.ready();
    if (r.ready) return {200, "text/plain; charset=utf-8", "ok", ""};
    return {503, "text/plain; charset=utf-8", "not ready: " + r.reason + "\n", ""};
  } catch (const std::exception& e) {
    return {503, "text/plain; charset=utf-8", std::string("not ready: readiness check failed: ") + e.what() + "\n", ""};
  }
}

}  // namespace kas::obs

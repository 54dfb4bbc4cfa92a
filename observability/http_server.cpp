#include "observability/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <list>
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
struct connection {
  enum class phase { reading, writing, draining };
  int fd = -1;
  phase state = phase::reading;
  std::string in;
  std::string out;
  size_t written = 0;
  clock::time_point deadline;
};

}  // namespace

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
  int wake_rd = -1;
  int wake_wr = -1;
  std::thread thread;
  std::atomic<bool> stopped{false};
  std::list<connection> conns;

  ~impl() {
    close_fd(listen_fd);
    close_fd(wake_rd);
    close_fd(wake_wr);
  }

  void run();
  void accept_all();
  void on_readable(connection& c);
  void on_writable(connection& c);
  response handle(const std::string& request, bool& head_only, std::string& path) const;
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
  p->wake_rd = pipe_fds[0];
  p->wake_wr = pipe_fds[1];
  if (cfg.collectables.empty()) cfg.collectables.push_back(&default_registry());
  p->cfg = std::move(cfg);
  impl* raw = p.get();
  p->thread = std::thread([raw] { raw->run(); });
  return std::unique_ptr<http_server>(new http_server(std::move(p), ep.host, port));
}

http_server::http_server(std::unique_ptr<impl> p, std::string host, uint16_t port)
    : impl_(std::move(p)), host_(std::move(host)), port_(port) {}

http_server::~http_server() { stop(); }

void http_server::stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  char b = 1;
  while (::write(impl_->wake_wr, &b, 1) < 0 && errno == EINTR) {
  }
  if (impl_->thread.joinable()) impl_->thread.join();
  // Close the listener now, not at destruction: a stopped server must refuse connections at once.
  close_fd(impl_->listen_fd);
}

void http_server::impl::run() {
  std::vector<pollfd> fds;
  std::vector<connection*> by_index;
  for (;;) {
    fds.clear();
    by_index.clear();
    fds.push_back({wake_rd, POLLIN, 0});
    if (conns.size() < cfg.max_connections) fds.push_back({listen_fd, POLLIN, 0});
    auto now = clock::now();
    auto wait = std::chrono::milliseconds(1000);
    for (auto& c : conns) {
      fds.push_back({c.fd, static_cast<short>(c.state == connection::phase::writing ? POLLOUT : POLLIN), 0});
      by_index.push_back(&c);
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(std::max(c.deadline - now, clock::duration{})));
    }
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;  // stop()
    size_t first_conn = 1;
    if (conns.size() < cfg.max_connections) {
      if (fds[1].revents != 0) accept_all();
      first_conn = 2;
    }
    for (size_t i = first_conn; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      connection& c = *by_index[i - first_conn];
      if (c.state == connection::phase::writing) on_writable(c);
      else on_readable(c);
    }
    now = clock::now();
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->fd < 0 || it->deadline <= now) {
        close_fd(it->fd);
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& c : conns) close_fd(c.fd);
  conns.clear();
}

void http_server::impl::accept_all() {
  while (conns.size() < cfg.max_connections) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a transient error such as ECONNABORTED / EMFILE
    connection c;
    c.fd = fd;
    c.deadline = clock::now() + cfg.request_timeout;
    conns.push_back(std::move(c));
  }
}

void http_server::impl::on_readable(connection& c) {
  char buf[4096];
  ssize_t r = ::recv(c.fd, buf, sizeof buf, 0);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (r <= 0) {  // EOF or error: nothing more to read or answer
    close_fd(c.fd);
    return;
  }
  if (c.state == connection::phase::draining) return;
  c.in.append(buf, static_cast<size_t>(r));
  size_t end = c.in.find("\r\n\r\n");
  if (end == std::string::npos) end = c.in.find("\n\n");
  bool head_only = false;
  response resp;
  if (end != std::string::npos && end <= cfg.max_request_bytes) {
    std::string path;
    resp = handle(c.in.substr(0, end), head_only, path);
    if (cfg.on_request) cfg.on_request(path, resp.code);
  } else if (c.in.size() > cfg.max_request_bytes) {
    resp = {431, "text/plain; charset=utf-8", "request too large\n", ""};
  } else {
    return;  // wait for the rest of the header
  }
  c.out = serialize(resp, head_only);
  c.in.clear();
  c.state = connection::phase::writing;
  c.deadline = clock::now() + cfg.request_timeout;
  on_writable(c);
}

void http_server::impl::on_writable(connection& c) {
  while (c.written < c.out.size()) {
    ssize_t w = ::send(c.fd, c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (w <= 0) {
      close_fd(c.fd);
      return;
    }
    c.written += static_cast<size_t>(w);
  }
  ::shutdown(c.fd, SHUT_WR);
  c.state = connection::phase::draining;
  c.deadline = std::min(c.deadline, clock::now() + std::chrono::seconds(1));
}

response http_server::impl::handle(const std::string& request, bool& head_only, std::string& path) const {
  std::string line = request.substr(0, request.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  auto sp1 = line.find(' ');
  auto sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 7, "HTTP/1.") != 0)
    return {400, "text/plain; charset=utf-8", "malformed request line\n", ""};
  std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.empty() || target.front() != '/')
    return {400, "text/plain; charset=utf-8", "malformed request target\n", ""};
  path = target.substr(0, target.find('?'));
  std::string query = target.size() > path.size() ? target.substr(path.size() + 1) : std::string{};
  head_only = method == "HEAD";
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

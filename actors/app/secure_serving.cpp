#include "actors/app/secure_serving.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "actors/app/cli.hpp"
#include "client/delegated_auth.hpp"
#include "client/http_transport.hpp"
#include "client/kubeconfig.hpp"
#include "client/pki.hpp"
#include "config/go_duration.hpp"
#include "observability/http_server.hpp"
#include "observability/metrics.hpp"

namespace kas {

const char* const secure_serving_help =
  "  --secure-port N                serve /metrics, /healthz, /livez, /readyz over HTTPS with delegated\n"
  "                                 authentication and authorization (default 10259; 0 disables)\n"
  "  --bind-address IP              the address of --secure-port (default 0.0.0.0)\n"
  "  --tls-cert-file FILE, --tls-private-key-file FILE\n"
  "                                 the serving certificate (chain) and key in PEM (default: a\n"
  "                                 self-signed certificate generated at start, in memory)\n"
  "  --authorization-always-allow-paths LIST\n"
  "                                 paths served without authentication or authorization\n"
  "                                 (default /healthz,/readyz,/livez; a trailing * is a prefix)\n"
  "  --authentication-kubeconfig FILE, --authorization-kubeconfig FILE\n"
  "                                 where TokenReviews / SubjectAccessReviews go (default: the\n"
  "                                 scheduler's own connection)\n"
  "  --authentication-token-webhook-cache-ttl D, --authorization-webhook-cache-authorized-ttl D,\n"
  "  --authorization-webhook-cache-unauthorized-ttl D\n"
  "                                 how long review answers are reused (Go durations, default 10s)\n";

// Accepts "--flag value" and "--flag=value" (a flag last on the line takes "").
bool take_flag(int argc, char** argv, int& i, const char* flag, std::string& out) {
  size_t n = std::strlen(flag);
  if (std::strncmp(argv[i], flag, n) != 0) return false;
  if (argv[i][n] == '=') {
    out = argv[i] + n + 1;
    return true;
  }
  if (argv[i][n] != '\0') return false;
  out = i + 1 < argc ? argv[++i] : "";
  return true;
}

namespace {


result<std::string> read_file(const std::string& flag, const std::string& path) {
  if (path.empty()) return error{flag + ": needs a file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return error{flag + "=" + path + ": cannot read: " + std::strerror(errno)};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (ss.str().size() > (1u << 20)) return error{flag + "=" + path + ": larger than 1 MiB, not a PEM file"};
  return ss.str();
}

result<std::chrono::milliseconds> ttl_flag(const std::string& flag, const std::string& v) {
  auto d = parse_go_duration(v);
  if (!d) return error{flag + ": invalid argument \"" + v + "\": " + d.err().message};
  if (d->count() < 0) return error{flag + ": invalid argument \"" + v + "\": must not be negative"};
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

result<connection_config> review_connection(const std::string& flag, const std::string& kubeconfig,
                                            const connection_config& own) {
  if (kubeconfig.empty()) return own;
  auto c = load_kubeconfig(kubeconfig);
  if (!c) return error{flag + ": " + c.err().message};
  return *c;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

// kube's MaybeDefaultWithSelfSignedCerts: a CA and a serving certificate it signs, for localhost,
// the host name, 127.0.0.1 and the bind address when it is a specific one. In memory only.
result<obs::tls_material> self_signed(const std::string& bind_ip) {
  const std::string stamp = std::to_string(std::time(nullptr));
  auto ca = pki::make_ca("localhost-ca@" + stamp);
  if (!ca) return error{"generating a self-signed certificate: " + ca.err().message};
  pki::cert_request req;
  req.common_name = "localhost@" + stamp;
  req.dns_names = {"localhost"};
  if (auto h = host_name(); h != "localhost") req.dns_names.push_back(h);
  req.ip_addresses = {"127.0.0.1"};
  if (bind_ip != "0.0.0.0" && bind_ip != "::" && bind_ip != "127.0.0.1") req.ip_addresses.push_back(bind_ip);
  auto leaf = pki::issue(*ca, req);
  if (!leaf) return error{"generating a self-signed certificate: " + leaf.err().message};
  obs::tls_material t;
  t.cert_pem = leaf->cert_pem + ca->cert_pem;  // the chain: the serving certificate, then its CA
  t.key_pem = leaf->key_pem;
  t.cert_source = "the self-signed certificate";
  t.key_source = "the self-signed key";
  return t;
}

}  // namespace

bool take_secure_serving_flag(int argc, char** argv, int& i, secure_serving_flags& f) {
  std::pair<const char*, std::string*> flags[] = {
    {"--secure-port", &f.secure_port},
    {"--bind-address", &f.bind_address},
    {"--tls-cert-file", &f.tls_cert_file},
    {"--tls-private-key-file", &f.tls_private_key_file},
    {"--authorization-always-allow-paths", &f.always_allow_paths},
    {"--authentication-kubeconfig", &f.authentication_kubeconfig},
    {"--authorization-kubeconfig", &f.authorization_kubeconfig},
    {"--authentication-token-webhook-cache-ttl", &f.authn_cache_ttl},
    {"--authorization-webhook-cache-authorized-ttl", &f.authz_allowed_ttl},
    {"--authorization-webhook-cache-unauthorized-ttl", &f.authz_denied_ttl}};
  for (auto& [name, out] : flags)
    if (take_flag(argc, argv, i, name, *out)) return true;
  return false;
}

struct secure_serving::impl {
  std::string bind;  // host:port for http_server
  std::string shown_host;
  obs::tls_material tls;
  api::delegated_auth_options auth_opts;
  connection_config authn_conn, authz_conn;
  bool same_conn = true;
  // Destroyed in reverse order: the server first (no new checks), then the transports (their I/O
  // threads joined, callbacks done), then the checker their callbacks use.
  std::unique_ptr<api::delegated_auth> auth;
  std::unique_ptr<api::http_transport> authn_transport, authz_transport;
  std::unique_ptr<obs::http_server> server;
};

secure_serving::secure_serving(std::unique_ptr<impl> p) : p_(std::move(p)) {}
secure_serving::~secure_serving() { stop(); }

result<std::unique_ptr<secure_serving>> secure_serving::prepare(const secure_serving_flags& f,
                                                               const connection_config& own) {
  const std::string& port = f.secure_port;
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535)
    return error{"--secure-port: invalid argument \"" + port + "\": must be a port number in 0..65535 (0 disables)"};
  auto p = std::make_unique<impl>();
  in6_addr a6{};
  in_addr a4{};
  const std::string& ip = f.bind_address;
  if (inet_pton(AF_INET, ip.c_str(), &a4) == 1) p->bind = ip + ":" + port;
  else if (inet_pton(AF_INET6, ip.c_str(), &a6) == 1) p->bind = "[" + ip + "]:" + port;
  else return error{"--bind-address: invalid argument \"" + ip + "\": not an IP address"};
  p->shown_host = p->bind.substr(0, p->bind.rfind(':'));

  if (f.tls_cert_file.empty() != f.tls_private_key_file.empty())
    return error{f.tls_cert_file.empty() ? "--tls-private-key-file is given without --tls-cert-file"
                                         : "--tls-cert-file is given without --tls-private-key-file"};
  auto authn_ttl = ttl_flag("--authentication-token-webhook-cache-ttl", f.authn_cache_ttl);
  if (!authn_ttl) return authn_ttl.err();
  auto allow_ttl = ttl_flag("--authorization-webhook-cache-authorized-ttl", f.authz_allowed_ttl);
  if (!allow_ttl) return allow_ttl.err();
  auto deny_ttl = ttl_flag("--authorization-webhook-cache-unauthorized-ttl", f.authz_denied_ttl);
  if (!deny_ttl) return deny_ttl.err();
  p->auth_opts.authn_ttl = *authn_ttl;
  p->auth_opts.allow_ttl = *allow_ttl;
  p->auth_opts.deny_ttl = *deny_ttl;
  p->auth_opts.always_allow_paths = api::split_paths(f.always_allow_paths);

  auto authn = review_connection("--authentication-kubeconfig", f.authentication_kubeconfig, own);
  if (!authn) return authn.err();
  auto authz = review_connection("--authorization-kubeconfig", f.authorization_kubeconfig, own);
  if (!authz) return authz.err();
  p->authn_conn = std::move(*authn);
  p->authz_conn = std::move(*authz);
  p->same_conn = f.authentication_kubeconfig == f.authorization_kubeconfig;

  if (port == "0") return std::unique_ptr<secure_serving>{};  // disabled; the flags were still checked

  if (!f.tls_cert_file.empty()) {
    auto cert = read_file("--tls-cert-file", f.tls_cert_file);
    if (!cert) return cert.err();
    auto key = read_file("--tls-private-key-file", f.tls_private_key_file);
    if (!key) return key.err();
    p->tls.cert_pem = std::move(*cert);
    p->tls.key_pem = std::move(*key);
    p->tls.cert_source = "--tls-cert-file=" + f.tls_cert_file;
    p->tls.key_source = "--tls-private-key-file=" + f.tls_private_key_file;
  } else {
    auto t = self_signed(ip);
    if (!t) return t.err();
    p->tls = std::move(*t);
    spdlog::info("Generated self-signed cert in-memory");
  }
  if (auto ok = obs::check_tls_material(p->tls); !ok) return ok.err();
  return std::unique_ptr<secure_serving>(new secure_serving(std::move(p)));
}

status_or_error secure_serving::start(std::function<obs::readiness()> ready,
                                      std::function<std::vector<obs::health_check>()> live) {
  api::transport_options topts;
  topts.user_agent = "kube-actor-scheduler/delegated-auth";
  auto authn_t = api::http_transport::create(p_->authn_conn, topts);
  if (!authn_t) return error{"--authentication-kubeconfig: " + authn_t.err().message};
  p_->authn_transport = std::move(*authn_t);
  if (!p_->same_conn) {
    auto authz_t = api::http_transport::create(p_->authz_conn, topts);
    if (!authz_t) return error{"--authorization-kubeconfig: " + authz_t.err().message};
    p_->authz_transport = std::move(*authz_t);
  }
  api::http_transport* authz_via = p_->authz_transport ? p_->authz_transport.get() : p_->authn_transport.get();
  const auto review_timeout = std::chrono::seconds(10);  // kube's ClientTimeout for both reviews
  p_->auth = std::make_unique<api::delegated_auth>(p_->auth_opts, api::post_through(p_->authn_transport.get(), review_timeout),
                                                   api::post_through(authz_via, review_timeout));

  obs::http_server_config cfg;
  cfg.bind_address = p_->bind;
  cfg.flag_name = "--bind-address/--secure-port";
  cfg.collectables = {&obs::default_registry()};
  cfg.ready = std::move(ready);
  cfg.live = std::move(live);
  cfg.tls = p_->tls;
  // A review may take up to its own 10 s timeout: the request waits that long, plus a margin.
  cfg.request_timeout = std::chrono::seconds(15);
  cfg.on_request = [](const std::string& path, int code) {
    spdlog::trace("Served HTTPS request path=\"{}\" code=\"{}\"", path, code);
  };
  api::delegated_auth* auth = p_->auth.get();
  cfg.authorize = [auth](const obs::access_request& r, obs::access_done done) {
    auth->check(r.method, r.path, r.token, [done = std::move(done), path = r.path](api::auth_outcome o) {
      if (!o.note.empty()) spdlog::warn("secure serving: {} (path=\"{}\", answered {})", o.note, path, o.code);
      else if (!o.allowed) spdlog::debug("secure serving: refused path=\"{}\" user=\"{}\" code=\"{}\"", path, o.user, o.code);
      obs::access_decision d;
      d.allowed = o.allowed;
      d.code = o.code;
      d.content_type = o.content_type;
      d.body = std::move(o.body);
      d.user = std::move(o.user);
      done(std::move(d));
    });
  };
  auto server = obs::http_server::start(std::move(cfg));
  if (!server) return server.err();
  p_->server = std::move(*server);
  spdlog::info("Serving securely on {}:{}", p_->shown_host, p_->server->port());
  return ok_t{};
}

void secure_serving::stop() {
  if (!p_) return;
  if (p_->server) p_->server->stop();
  p_->authn_transport.reset();
  p_->authz_transport.reset();
}

}  // namespace kas

#pragma once
// `run`'s secure serving, as kube-scheduler's port 10259: /metrics, /healthz, /livez and /readyz
// over HTTPS, behind delegated authentication (TokenReview) and authorization (SubjectAccessReview)
// through the apiserver (client/delegated_auth.hpp), on the same poll-loop server as the plain
// endpoint (observability/http_server.hpp) with TLS and an asynchronous access check.
//
// Flags, named as kube-scheduler's: --secure-port (default 10259; 0 disables), --bind-address
// (default 0.0.0.0), --tls-cert-file / --tls-private-key-file (without them a self-signed certificate
// is generated at start, in memory, for localhost, the host name and 127.0.0.1),
// --authorization-always-allow-paths (default /healthz,/readyz,/livez),
// --authentication-kubeconfig / --authorization-kubeconfig (default: the scheduler's own connection),
// --authentication-token-webhook-cache-ttl, --authorization-webhook-cache-authorized-ttl,
// --authorization-webhook-cache-unauthorized-ttl (Go durations, default 10s each).
//
// Two steps, because run blocks its signals before any thread starts: prepare() checks every flag and
// reads (or generates) the certificate, starting no thread, so bad input exits 2 before anything
// runs; start() then creates the review clients and the server. Once listening it logs
// "Serving securely on HOST:PORT" (the bound address), as kube does; a test picks a free port itself
// and waits for that line.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "messages/result.hpp"

namespace kas {

struct connection_config;
namespace obs {
struct readiness;
struct health_check;
}  // namespace obs

struct secure_serving_flags {
  std::string secure_port = "10259";
  std::string bind_address = "0.0.0.0";
  std::string tls_cert_file, tls_private_key_file;
  std::string always_allow_paths = "/healthz,/readyz,/livez";
  std::string authentication_kubeconfig, authorization_kubeconfig;
  std::string authn_cache_ttl = "10s", authz_allowed_ttl = "10s", authz_denied_ttl = "10s";
};

// Takes argv[i] (and its value, "--flag value" or "--flag=value") when it is one of the flags above;
// values are checked by secure_serving::prepare.
bool take_secure_serving_flag(int argc, char** argv, int& i, secure_serving_flags& f);

// The --help lines of these flags.
extern const char* const secure_serving_help;

class secure_serving {
public:
  // Checks the flags, reads the certificate and key (or generates a self-signed pair) and checks
  // that they match. A null pointer when --secure-port is 0. Errors name the flag (and file).
  // `own` is the scheduler's connection, the default for both review kubeconfigs.
  static result<std::unique_ptr<secure_serving>> prepare(const secure_serving_flags& flags,
                                                         const connection_config& own);
  ~secure_serving();  // stop()

  // Starts the review clients and the HTTPS server; `ready` and `live` as the plain endpoint's.
  status_or_error start(std::function<obs::readiness()> ready, std::function<std::vector<obs::health_check>()> live);
  // Idempotent: closes the server, then the review clients.
  void stop();

  struct impl;

private:
  explicit secure_serving(std::unique_ptr<impl> p);
  std::unique_ptr<impl> p_;
};

}  // namespace kas

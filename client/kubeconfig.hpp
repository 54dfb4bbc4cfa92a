#pragma once
// Where the real-cluster mode connects and with which credentials: a kubeconfig file, the pod's
// service account (in-cluster), and kube-scheduler's --master override, read the way client-go's
// clientcmd reads them (kubeconfig.cpp says where this differs and why).
//
// Only what a scheduler's connection needs is supported: client certificates, bearer tokens
// (inline or tokenFile), a CA bundle or insecure-skip-tls-verify, tls-server-name. exec and
// auth-provider plugins, basic auth, impersonation and proxy-url are errors when the selected user
// or cluster uses them (they are fine in entries that are not selected), so a connection is never
// silently made as someone else or by another route.
//
// Tokens, keys and certificate bytes never appear in an error or in describe(): errors name the
// file, the field path and, for referenced files, their path.
#include <functional>
#include <string>
#include <string_view>

#include "messages/result.hpp"

namespace kas {

struct connection_config {
  std::string server;  // https://host:port (http:// only when the kubeconfig or --master says so)
  std::string ca_pem;  // PEM bytes of the CA bundle; empty = the system trust store
  std::string client_cert_pem, client_key_pem;  // both or neither
  std::string token;                            // bearer token (from token or tokenFile)
  std::string token_file;  // set when a token file exists: client-go re-reads it (rotated tokens)
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string source;  // "kubeconfig /x/config (context kind-a)", "in-cluster service account"
  // One line for logs: server, source, auth kind and TLS mode. Never the token, key or certificate.
  std::string describe() const;
};

// Reads the kubeconfig at `path` (one file; KUBECONFIG's merged path lists are not read) and
// selects `context`, or its current-context when `context` is empty.
result<connection_config> load_kubeconfig(const std::string& path, const std::string& context = "");

// What load_kubeconfig runs on the file's text. Errors start with `path_for_errors`; relative file
// paths inside resolve against `base_dir` (the kubeconfig's directory, as client-go does).
result<connection_config> parse_kubeconfig(std::string_view yaml, const std::string& path_for_errors,
                                           const std::string& base_dir, const std::string& context = "");

// The pod's service account: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT looked up through
// `env` (std::getenv in the binary, a fake in tests), token and ca.crt from `sa_dir`.
result<connection_config> load_in_cluster(
    const std::function<const char*(const char*)>& env,
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// kube-scheduler's choice: the --kubeconfig flag, else clientConnection.kubeconfig from --config,
// else in-cluster. --master, when set, replaces the server (and clears tls-server-name, as client-go
// does). --master without any kubeconfig connects to that server without credentials, as
// kube-scheduler does: the service account is only used when neither is given.
result<connection_config> resolve_connection(const std::string& kubeconfig_flag,
                                             const std::string& config_file_kubeconfig,
                                             const std::string& master_flag, const std::string& context,
                                             const std::function<const char*(const char*)>& env);

}  // namespace kas

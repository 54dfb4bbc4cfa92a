#pragma once
// Certificates made in-process with OpenSSL: a self-signed CA, and server or client certificates it
// signs. The test apiserver serves TLS with them and writes a kubeconfig that trusts its CA and
// authenticates with a client certificate; tests use them for good and wrong CAs. ECDSA P-256 keys
// (fast to generate), SHA-256 signatures, PEM out.
#include <string>
#include <vector>

#include "messages/result.hpp"

namespace kas::pki {

struct key_pair {
  std::string cert_pem;
  std::string key_pem;
};

result<key_pair> make_ca(const std::string& common_name, int days = 365);

struct cert_request {
  std::string common_name;
  std::vector<std::string> organizations;  // a client certificate's groups (O=system:masters ...)
  std::vector<std::string> dns_names;      // subjectAltName DNS entries (server)
  std::vector<std::string> ip_addresses;   // subjectAltName IP entries, e.g. 127.0.0.1 (server)
  bool server = true;                      // extendedKeyUsage serverAuth, else clientAuth
  int days = 365;
};
result<key_pair> issue(const key_pair& ca, const cert_request& req);

}  // namespace kas::pki

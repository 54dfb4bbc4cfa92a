// kubeconfig.hpp's loaders. Where they depart from client-go, the comment there says why.
#include "client/kubeconfig.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/yaml_guard.hpp"
#include "messages/field_path.hpp"

namespace kas {

namespace {

namespace fs = std::filesystem;

// A kubeconfig holds a few KiB per context: 16 MiB is thousands of them.
constexpr std::size_t max_kubeconfig_bytes = std::size_t{16} << 20;
// A CA bundle, certificate, key or token file (a whole system CA bundle is about 200 KiB).
constexpr std::size_t max_referenced_file_bytes = std::size_t{4} << 20;

// Why decoding stopped: thrown inside this file only, caught by parse_impl and turned into an
// error. `what` never holds a token, key or certificate.
struct failure {
  std::string path;  // field path ("users[0].user.client-key-data"); empty: the whole file
  std::string what;
};

const char* what_is(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "null";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
  }
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool has_space_or_control(const std::string& s) {
  for (unsigned char c : s)
    if (c <= 0x20 || c == 0x7f) return true;
  return false;
}

// Every mapping read is checked whole: go-yaml refuses a repeated key, and which of two `token:`
// lines won would otherwise be yaml-cpp's choice. Keys are echoed in errors, values never.
void expect_map(const YAML::Node& n, const std::string& path) {
  if (!n.IsMap()) throw failure{path, std::string("expected a mapping, got ") + what_is(n)};
  std::set<std::string> keys;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar())
      throw failure{path, std::string("a key is ") + what_is(it->first) + ", not a field name"};
    if (!keys.insert(it->first.Scalar()).second) throw failure{field_path(path, it->first.Scalar()), "duplicate field"};
  }
}

// Absent and null read as "", as client-go reads them. Any scalar is a string (`name: 1` is "1").
std::string string_field(const YAML::Node& map, const std::string& path, const char* key) {
  const YAML::Node n = map[key];
  if (!n || n.IsNull()) return {};
  if (!n.IsScalar()) throw failure{field_path(path, key), std::string("expected a string, got ") + what_is(n)};
  return n.Scalar();
}

bool bool_field(const YAML::Node& map, const std::string& path, const char* key) {
  const YAML::Node n = map[key];
  if (!n || n.IsNull()) return false;
  bool b = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b))
    throw failure{field_path(path, key),
                  "expected true or false, got " + (n.IsScalar() ? kas::quoted(n.Scalar()) : std::string(what_is(n)))};
  return b;
}

// Go's encoding/json []byte: standard alphabet, padding required, line breaks skipped.
std::optional<std::string> decode_base64(const std::string& s) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(s.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t chars = 0, pad = 0;
  for (char c : s) {
    if (c == '\r' || c == '\n') continue;
    ++chars;
    if (c == '=') {
      ++pad;
      continue;
    }
    int v = value(c);
    if (v < 0 || pad) return std::nullopt;  // not base64, or data after padding
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  std::size_t tail = (chars - pad) % 4;  // data characters in the last quantum
  if (chars % 4 != 0 || pad > 2 || tail == 1 || (tail == 0 ? pad != 0 : pad != 4 - tail)) return std::nullopt;
  return out;
}

// A `*-data` field. Empty is absent (client-go tests the length).
std::optional<std::string> data_field(const YAML::Node& map, const std::string& path, const char* key) {
  std::string s = string_field(map, path, key);
  if (s.empty()) return std::nullopt;
  auto d = decode_base64(s);
  if (!d) throw failure{field_path(path, key), "invalid base64"};
  return d;
}

// Whether the field has a value (an empty string or list is unset, as for client-go).
bool is_set(const YAML::Node& map, const char* key) {
  const YAML::Node n = map[key];
  if (!n || n.IsNull()) return false;
  if (n.IsScalar()) return !n.Scalar().empty();
  if (n.IsSequence()) return n.size() > 0;
  return true;
}

bool has_pem_certificate(const std::string& s) { return s.find("-----BEGIN CERTIFICATE-----") != std::string::npos; }

// "-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----".
bool has_pem_private_key(const std::string& s) {
  for (auto at = s.find("-----BEGIN "); at != std::string::npos; at = s.find("-----BEGIN ", at + 1)) {
    auto eol = s.find('\n', at);
    std::string line = s.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string tail = "PRIVATE KEY-----";
    if (line.size() >= tail.size() && line.compare(line.size() - tail.size(), tail.size(), tail) == 0) return true;
  }
  return false;
}

// A file the kubeconfig or the service account names. Regular files only: a FIFO or a device
// (a tokenFile of /dev/stdin) could block forever or never end. Errors read "<path>: ...".
result<std::string> read_referenced(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return error{path + ": cannot read file: " + std::strerror(errno)};
  if (S_ISDIR(st.st_mode)) return error{path + ": cannot read file: it is a directory"};
  if (!S_ISREG(st.st_mode)) return error{path + ": cannot read file: not a regular file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return error{path + ": cannot read file: " + std::strerror(errno)};
  std::string text;
  if (auto r = read_bounded(in, path, max_referenced_file_bytes, text); !r) return r.err();
  return text;
}

// Relative paths are relative to the kubeconfig's directory (client-go's ResolvePaths, which
// joins and cleans lexically as this does).
std::string resolve(const std::string& base_dir, const std::string& p) {
  fs::path q(p);
  if (q.is_absolute() || base_dir.empty()) return p;
  return (fs::path(base_dir) / q).lexically_normal().string();
}

// A bearer token as the HTTP header will carry it: surrounding whitespace dropped (client-go's
// token file source trims), nothing inside that would break the header. "" when it is fine.
std::string token_problem(std::string& token) {
  std::size_t b = 0, e = token.size();
  while (b < e && is_space(token[b])) ++b;
  while (e > b && is_space(token[e - 1])) --e;
  token = token.substr(b, e - b);
  if (token.empty()) return "holds no token (only whitespace)";
  if (has_space_or_control(token)) return "the token contains whitespace or control characters";
  return {};
}

// An apiserver URL (a kubeconfig's server or --master): "" when it is fine. Values are echoed only
// once they are known to carry no userinfo.
std::string server_problem(const std::string& s) {
  if (s.empty()) return "Required value";
  if (has_space_or_control(s)) return "contains whitespace or control characters";
  if (s.find('@') != std::string::npos) return "credentials in the URL (user@host) are not supported";
  auto lower = [](std::string v) {
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return v;
  };
  std::string head = lower(s.substr(0, 8));
  std::size_t n = starts_with(head, "https://") ? 8 : starts_with(head, "http://") ? 7 : 0;
  if (n == 0) return "must start with https:// or http://, got " + kas::quoted(s);
  if (n >= s.size() || s[n] == '/' || s[n] == '?' || s[n] == '#') return "no host in " + kas::quoted(s);
  return {};
}

// Go's url.Parse lowercases the scheme: "HTTPS://h" works there too.
std::string normalize_server(const std::string& s) {
  std::size_t n = s.find("://");
  std::string out = s;
  for (std::size_t i = 0; i < n && i < out.size(); ++i)
    out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[i])));
  return out;
}

std::string name_list(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  std::size_t shown = 0;
  for (auto& n : names) {
    if (shown == 20) return out + ", ... (" + std::to_string(names.size()) + " in all)";
    out += (shown++ ? ", " : "") + n;
  }
  return out;
}

struct cluster_entry {
  std::string name, path;  // path: "clusters[0].cluster"
  std::string server, ca_file, tls_server_name, proxy_url;
  std::optional<std::string> ca_data;
  bool insecure = false;
};

struct user_entry {
  std::string name, path;
  std::string cert_file, key_file, token, token_file;
  std::optional<std::string> cert_data, key_data;
  std::string unsupported_field, unsupported_why;  // the first unsupported way to authenticate
};

struct context_entry {
  std::string name, path, cluster, user;
};

// clusters / contexts / users: lists of {name, <item>: {...}}. Each entry is decoded, selected or
// not, as client-go decodes the whole file: a wrong type or bad base64 anywhere is an error.
template <class F>
std::vector<std::string> each_named(const YAML::Node& root, const char* list, const char* item, F&& decode) {
  std::vector<std::string> names;
  const YAML::Node l = root[list];
  if (!l || l.IsNull()) return names;
  if (!l.IsSequence()) throw failure{list, std::string("expected a list, got ") + what_is(l)};
  std::set<std::string> seen;
  std::size_t i = 0;
  for (auto it = l.begin(); it != l.end(); ++it, ++i) {
    std::string path = std::string(list) + "[" + std::to_string(i) + "]";
    const YAML::Node entry = *it;
    expect_map(entry, path);
    std::string name = string_field(entry, path, "name");
    if (name.empty()) throw failure{path + ".name", "Required value"};
    if (!seen.insert(name).second) throw failure{path + ".name", "duplicate name " + kas::quoted(name)};
    std::string body_path = path + "." + item;
    const YAML::Node raw = entry[item];
    // A null body is an entry with nothing set.
    const YAML::Node body = raw && !raw.IsNull() ? raw : YAML::Node(YAML::NodeType::Map);
    expect_map(body, body_path);
    decode(name, body_path, body);
    names.push_back(std::move(name));
  }
  return names;
}

// The ways a kubeconfig user can authenticate that the scheduler does not implement. Refused only
// for the selected user, so a kubeconfig that also holds an EKS or GKE user still works.
struct unsupported_auth {
  const char* field;
  const char* why;
};
constexpr unsupported_auth unsupported_auths[] = {
    {"exec", "exec credential plugins are not supported"},
    {"auth-provider", "auth-provider plugins are not supported"},
    {"username", "basic authentication is not supported"},
    {"password", "basic authentication is not supported"},
    {"as", "impersonation is not supported"},
    {"as-uid", "impersonation is not supported"},
    {"as-groups", "impersonation is not supported"},
    {"as-user-extra", "impersonation is not supported"},
};
constexpr const char* supported_auth =
    " (supported: client-certificate and client-key or their -data, token, tokenFile)";

// The selected cluster's CA or user's certificate (key = false) or key: inline data, else the file
// (client-go's order); "" when neither is set.
std::string credential(const std::optional<std::string>& data, const std::string& file, const std::string& path,
                       const char* data_key, const char* file_key, const std::string& base_dir, bool key) {
  auto pem_ok = [key](const std::string& s) { return key ? has_pem_private_key(s) : has_pem_certificate(s); };
  const char* kind = key ? "PEM private key" : "PEM certificate";
  if (data) {
    if (!pem_ok(*data)) throw failure{field_path(path, data_key), std::string("no ") + kind + " in the decoded data"};
    return *data;
  }
  if (file.empty()) return {};
  std::string p = resolve(base_dir, file);
  auto text = read_referenced(p);
  if (!text) throw failure{field_path(path, file_key), text.err().message};
  if (!pem_ok(*text)) throw failure{field_path(path, file_key), p + ": no " + kind + " in the file"};
  return std::move(*text);
}

connection_config decode(const YAML::Node& root, const std::string& file, const std::string& base_dir,
                         const std::string& context, const std::string& master) {
  expect_map(root, "");
  std::string api_version = string_field(root, "", "apiVersion");
  if (!api_version.empty() && api_version != "v1")
    throw failure{"apiVersion", "unsupported " + kas::quoted(api_version) + " (a kubeconfig is v1)"};
  std::string kind = string_field(root, "", "kind");
  if (!kind.empty() && kind != "Config") throw failure{"kind", "unsupported " + kas::quoted(kind) + " (a kubeconfig is Config)"};
  std::string current = string_field(root, "", "current-context");

  std::vector<cluster_entry> clusters;
  auto cluster_names = each_named(root, "clusters", "cluster", [&](const std::string& name, const std::string& path,
                                                                   const YAML::Node& b) {
    cluster_entry c{name, path, {}, {}, {}, {}, {}, false};
    c.server = string_field(b, path, "server");
    c.ca_file = string_field(b, path, "certificate-authority");
    c.ca_data = data_field(b, path, "certificate-authority-data");
    c.insecure = bool_field(b, path, "insecure-skip-tls-verify");
    c.tls_server_name = string_field(b, path, "tls-server-name");
    c.proxy_url = string_field(b, path, "proxy-url");
    clusters.push_back(std::move(c));
  });
  std::vector<user_entry> users;
  auto user_names = each_named(root, "users", "user", [&](const std::string& name, const std::string& path,
                                                          const YAML::Node& b) {
    user_entry u;
    u.name = name;
    u.path = path;
    u.cert_file = string_field(b, path, "client-certificate");
    u.cert_data = data_field(b, path, "client-certificate-data");
    u.key_file = string_field(b, path, "client-key");
    u.key_data = data_field(b, path, "client-key-data");
    u.token = string_field(b, path, "token");
    u.token_file = string_field(b, path, "tokenFile");
    for (auto& a : unsupported_auths)
      if (u.unsupported_field.empty() && is_set(b, a.field)) {
        u.unsupported_field = a.field;
        u.unsupported_why = a.why;
      }
    users.push_back(std::move(u));
  });
  std::vector<context_entry> contexts;
  auto context_names = each_named(root, "contexts", "context", [&](const std::string& name, const std::string& path,
                                                                   const YAML::Node& b) {
    contexts.push_back(context_entry{name, path, string_field(b, path, "cluster"), string_field(b, path, "user")});
  });

  // ---- the context, its cluster and its user ----
  if (clusters.empty() && users.empty() && contexts.empty() && current.empty())
    throw failure{"", "empty kubeconfig: no contexts, clusters or users"};
  const std::string& want = context.empty() ? current : context;
  if (want.empty())
    throw failure{"current-context", "not set, and no context was given (contexts: " + name_list(context_names) + ")"};
  const context_entry* ctx = nullptr;
  for (auto& c : contexts)
    if (c.name == want) ctx = &c;
  if (!ctx)
    throw failure{context.empty() ? "current-context" : "",
                  "context " + kas::quoted(want) + " not found (contexts: " + name_list(context_names) + ")"};
  if (ctx->cluster.empty()) throw failure{ctx->path + ".cluster", "Required value (context " + kas::quoted(want) + ")"};
  const cluster_entry* cl = nullptr;
  for (auto& c : clusters)
    if (c.name == ctx->cluster) cl = &c;
  if (!cl)
    throw failure{ctx->path + ".cluster",
                  "cluster " + kas::quoted(ctx->cluster) + " not found (clusters: " + name_list(cluster_names) + ")"};
  const user_entry* user = nullptr;
  if (!ctx->user.empty()) {  // no user: no credentials, as in client-go
    for (auto& u : users)
      if (u.name == ctx->user) user = &u;
    if (!user)
      throw failure{ctx->path + ".user", "user " + kas::quoted(ctx->user) + " not found (users: " + name_list(user_names) + ")"};
  }

  connection_config out;
  out.source = "kubeconfig " + file + " (context " + want + ")";

  // ---- cluster ----
  if (master.empty()) {
    if (auto p = server_problem(cl->server); !p.empty()) throw failure{cl->path + ".server", p};
    out.server = normalize_server(cl->server);
    out.tls_server_name = cl->tls_server_name;
  } else {
    // --master stands in for the server, and a server override clears tls-server-name in client-go
    // (the name belonged to the server it replaces).
    out.server = master;
  }
  if (!cl->proxy_url.empty())
    throw failure{cl->path + ".proxy-url", "not supported (the scheduler connects to the server directly)"};
  bool has_ca = cl->ca_data || !cl->ca_file.empty();
  if (cl->ca_data && !cl->ca_file.empty())
    throw failure{cl->path, "certificate-authority and certificate-authority-data are both set; set one"};
  if (cl->insecure && has_ca)
    throw failure{cl->path,
                  "specifying a root certificates file with the insecure flag is not allowed "
                  "(insecure-skip-tls-verify is true and certificate-authority" +
                      std::string(cl->ca_data ? "-data" : "") + " is set)"};
  out.insecure_skip_tls_verify = cl->insecure;
  out.ca_pem = credential(cl->ca_data, cl->ca_file, cl->path, "certificate-authority-data", "certificate-authority",
                          base_dir, false);

  // ---- user ----
  if (!user) return out;
  const user_entry& u = *user;
  if (!u.unsupported_field.empty())
    throw failure{field_path(u.path, u.unsupported_field), u.unsupported_why + std::string(supported_auth)};
  if (u.cert_data && !u.cert_file.empty())
    throw failure{u.path, "client-certificate and client-certificate-data are both set; set one"};
  if (u.key_data && !u.key_file.empty()) throw failure{u.path, "client-key and client-key-data are both set; set one"};
  bool has_cert = u.cert_data || !u.cert_file.empty(), has_key = u.key_data || !u.key_file.empty();
  if (has_cert && !has_key) throw failure{u.path, "a client certificate is set without its key (client-key or client-key-data)"};
  if (has_key && !has_cert)
    throw failure{u.path, "a client key is set without its certificate (client-certificate or client-certificate-data)"};
  out.client_cert_pem = credential(u.cert_data, u.cert_file, u.path, "client-certificate-data", "client-certificate",
                                   base_dir, false);
  out.client_key_pem = credential(u.key_data, u.key_file, u.path, "client-key-data", "client-key", base_dir, true);
  // client-go starts with an inline token when there is one and re-reads tokenFile later; the
  // file is read here as well, so a bad path fails now rather than at the first refresh.
  if (!u.token_file.empty()) {
    std::string p = resolve(base_dir, u.token_file);
    auto text = read_referenced(p);
    if (!text) throw failure{u.path + ".tokenFile", text.err().message};
    if (auto why = token_problem(*text); !why.empty()) throw failure{u.path + ".tokenFile", p + ": " + why};
    out.token = std::move(*text);
    out.token_file = p;
  }
  if (!u.token.empty()) {
    std::string t = u.token;
    if (auto why = token_problem(t); !why.empty()) throw failure{u.path + ".token", why};
    out.token = std::move(t);
  }
  return out;
}

result<connection_config> parse_impl(std::string_view yaml, const std::string& file, const std::string& base_dir,
                                     const std::string& context, const std::string& master) {
  if (yaml.size() > max_kubeconfig_bytes)
    return error{file + ": the file is larger than " + mebibytes(max_kubeconfig_bytes) +
                 ", the most a kubeconfig may hold"};
  // The guard's nesting, alias and no-progress limits; the size is bounded above instead of per
  // document (its per-document message speaks of API objects).
  yaml_limits limits;
  limits.max_file_bytes = max_kubeconfig_bytes;
  limits.max_document_bytes = 0;
  std::string text(yaml);
  auto docs = load_yaml(file, text, yaml_input::single, limits);
  if (!docs) return docs.err();
  const YAML::Node* root = nullptr;
  std::size_t count = 0;
  for (auto& d : *docs)
    if (!d.root.IsNull()) {
      ++count;
      if (!root) root = &d.root;
    }
  if (!root) return error{file + ": empty kubeconfig: no contexts, clusters or users"};
  if (count > 1) return error{file + ": " + std::to_string(count) + " YAML documents; a kubeconfig is one"};
  try {
    return decode(*root, file, base_dir, context, master);
  } catch (const failure& f) {
    return error{file + ": " + (f.path.empty() ? f.what : f.path + ": " + f.what)};
  } catch (const YAML::Exception& e) {  // not expected: every node is type-checked before use
    return error{file + ": " + e.msg};
  }
}

result<connection_config> load_impl(const std::string& path, const std::string& context, const std::string& master) {
  if (path.empty()) return error{"kubeconfig: empty path"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return error{path + ": cannot read kubeconfig: " + std::strerror(errno)};
  std::string text;
  if (auto r = read_bounded(in, path, max_kubeconfig_bytes, text); !r) return r.err();
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  std::string base_dir = (ec ? fs::path(path) : abs).parent_path().string();
  return parse_impl(text, path, base_dir, context, master);
}

}  // namespace

std::string connection_config::describe() const {
  bool cert = !client_cert_pem.empty(), bearer = !token.empty();
  std::string auth = cert && bearer ? "client certificate and bearer token"
                     : cert         ? "client certificate"
                     : bearer       ? "bearer token"
                                    : "none";
  if (bearer && !token_file.empty()) auth += " (token file " + token_file + ")";
  std::string tls;
  if (starts_with(server, "http://"))
    tls = "none (plain HTTP)";
  else if (insecure_skip_tls_verify)
    tls = "server certificate NOT verified (insecure-skip-tls-verify)";
  else if (!ca_pem.empty())
    tls = "verified against the configured CA";
  else
    tls = "verified against the system trust store";
  if (!tls_server_name.empty() && !starts_with(server, "http://")) tls += ", server name " + tls_server_name;
  return "server " + server + " (" + source + "); auth: " + auth + "; TLS: " + tls;
}

result<connection_config> parse_kubeconfig(std::string_view yaml, const std::string& path_for_errors,
                                           const std::string& base_dir, const std::string& context) {
  return parse_impl(yaml, path_for_errors, base_dir, context, "");
}

result<connection_config> load_kubeconfig(const std::string& path, const std::string& context) {
  return load_impl(path, context, "");
}

result<connection_config> load_in_cluster(const std::function<const char*(const char*)>& env,
                                          const std::string& sa_dir) {
  const char* host = env ? env("KUBERNETES_SERVICE_HOST") : nullptr;
  const char* port = env ? env("KUBERNETES_SERVICE_PORT") : nullptr;
  if (!host || !*host || !port || !*port)
    return error{"not running in a Kubernetes cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are "
                 "not set): pass --kubeconfig"};
  std::string h = host, p = port;
  if (has_space_or_control(h) || h.find_first_of("/@?#[]") != std::string::npos)
    return error{"in-cluster: KUBERNETES_SERVICE_HOST: not a host name or address: " + kas::quoted(h)};
  bool port_ok = p.size() <= 5 && p.find_first_not_of("0123456789") == std::string::npos;
  if (!port_ok || std::stoi(p) < 1 || std::stoi(p) > 65535)
    return error{"in-cluster: KUBERNETES_SERVICE_PORT: expected a port number (1-65535), got " + kas::quoted(p)};
  connection_config out;
  // net.JoinHostPort: an IPv6 address is bracketed.
  out.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + p;
  out.source = "in-cluster service account";
  const std::string where = "in-cluster service account: ";
  std::string token_path = (fs::path(sa_dir) / "token").string();
  auto token = read_referenced(token_path);
  if (!token) return error{where + token.err().message};
  if (auto why = token_problem(*token); !why.empty()) return error{where + token_path + ": " + why};
  out.token = std::move(*token);
  out.token_file = token_path;
  // client-go logs a missing or unparsable ca.crt and goes on with the system trust store, which
  // does not hold a cluster's own CA: the first request would fail the TLS handshake instead.
  std::string ca_path = (fs::path(sa_dir) / "ca.crt").string();
  auto ca = read_referenced(ca_path);
  if (!ca) return error{where + ca.err().message};
  if (!has_pem_certificate(*ca)) return error{where + ca_path + ": no PEM certificate in the file"};
  out.ca_pem = std::move(*ca);
  return out;
}

result<connection_config> resolve_connection(const std::string& kubeconfig_flag,
                                             const std::string& config_file_kubeconfig,
                                             const std::string& master_flag, const std::string& context,
                                             const std::function<const char*(const char*)>& env) {
  std::string master;
  if (!master_flag.empty()) {
    if (auto p = server_problem(master_flag); !p.empty()) return error{"--master: " + p};
    master = normalize_server(master_flag);
  }
  const std::string& path = !kubeconfig_flag.empty() ? kubeconfig_flag : config_file_kubeconfig;
  if (!path.empty()) {
    auto r = load_impl(path, context, master);
    if (r && !master.empty()) r->source += ", server from --master";
    return r;
  }
  if (!context.empty())
    return error{"context " + kas::quoted(context) +
                 " was given but there is no kubeconfig to take it from (--kubeconfig or clientConnection.kubeconfig)"};
  // kube-scheduler (clientcmd.BuildConfigFromFlags) tries in-cluster only when neither --kubeconfig
  // nor --master is set: --master alone is that server with no credentials, and the service
  // account's token is never sent to a server it was not issued for.
  if (!master.empty()) {
    connection_config out;
    out.server = master;
    out.source = "--master, no kubeconfig";
    return out;
  }
  return load_in_cluster(env);
}

}  // namespace kas

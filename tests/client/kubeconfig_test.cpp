// Connection settings of the real-cluster mode: kubeconfigs of the shapes kind and kubeadm write,
// the service account of a pod, kube-scheduler's precedence among them and --master. Every bad
// input is one error naming the file and the field path, and no error or describe() ever holds a
// token, key or certificate.
#include "client/kubeconfig.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

namespace kas {
namespace {

namespace fs = std::filesystem;

std::string b64(const std::string& in) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16 | static_cast<unsigned char>(in[i + 1]) << 8 |
                 static_cast<unsigned char>(in[i + 2]);
    out += {abc[v >> 18], abc[v >> 12 & 63], abc[v >> 6 & 63], abc[v & 63]};
  }
  if (i + 1 == in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += {abc[v >> 18], abc[v >> 12 & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16 | static_cast<unsigned char>(in[i + 1]) << 8;
    out += {abc[v >> 18], abc[v >> 12 & 63], abc[v >> 6 & 63], '='};
  }
  return out;
}

// PEM-shaped stand-ins: the loader checks the PEM armour, not the DER inside.
const std::string ca_pem =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIC/jCCAeagAwIBAgIBADANBgkqhkiG9w0BAQsFADAVMRMwEQYDVQQDEwprdWJl\n"
    "cm5ldGVzMB4XDTI0MDEwMTAwMDAwMFoXDTM0MDEwMTAwMDAwMFowFTETMBEGA1UE\n"
    "-----END CERTIFICATE-----\n";
const std::string cert_pem =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIDITCCAgmgAwIBAgIIUHQbZ1k2x8EwDQYJKoZIhvcNAQELBQAwFTETMBEGA1UE\n"
    "-----END CERTIFICATE-----\n";
const std::string key_pem =
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "-----END RSA PRIVATE KEY-----\n";
const std::string sa_token = "eyJhbGciOiJSUzI1NiIsImtpZCI6IkRHZ0FzIn0.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJl";

// A kubeconfig with one cluster, user and context, all named `name`, laid out as kind writes them.
// Each line of `cluster` and `user` is one field of that entry.
std::string kubeconfig(const std::vector<std::string>& cluster, const std::vector<std::string>& user,
                       const std::string& name = "kind-kind") {
  std::string y = "apiVersion: v1\nclusters:\n- cluster:\n";
  for (auto& l : cluster) y += "    " + l + "\n";
  y += "  name: " + name + "\ncontexts:\n- context:\n    cluster: " + name + "\n    user: " + name + "\n  name: " + name +
       "\ncurrent-context: " + name + "\nkind: Config\npreferences: {}\nusers:\n- name: " + name + "\n  user:\n";
  for (auto& l : user) y += "    " + l + "\n";
  return y;
}

const std::string kind_server = "server: https://127.0.0.1:39603";

std::vector<std::string> kind_user() {
  return {"client-certificate-data: " + b64(cert_pem), "client-key-data: " + b64(key_pem)};
}

// A fresh directory per test (mkdtemp), removed after it.
class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "kas_kubeconfig_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& rel, const std::string& text) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  // The message of loading `yaml` as dir/config ("OK: <describe()>" when it loads).
  std::string load_message(const std::string& yaml, const std::string& context = "") {
    auto r = load_kubeconfig(write("config", yaml), context);
    return r ? "OK: " + r->describe() : r.err().message;
  }

  std::string config_path() const { return (dir_ / "config").string(); }

  struct bad_case {
    const char* name;
    std::string yaml;
    std::string want;  // after "<file>: "
    std::string context = "";
  };

  // Each case loaded as dir/config: one error, exactly `want` after the file's path.
  void expect_errors(const std::vector<bad_case>& cases) {
    for (auto& c : cases) {
      SCOPED_TRACE(c.name);
      auto r = load_kubeconfig(write("config", c.yaml), c.context);
      ASSERT_FALSE(r) << r->describe();
      EXPECT_EQ(r.err().message, config_path() + ": " + c.want);
    }
  }

  fs::path dir_;
};

class Kubeconfig : public TempDirTest {};
class InCluster : public TempDirTest {};

// An environment of its own for a test: no real variables are read or set.
struct fake_env {
  std::map<std::string, std::string> vars;
  std::function<const char*(const char*)> fn() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

// --- good kubeconfigs ----------------------------------------------------------------------------

TEST_F(Kubeconfig, KindClientCertificateData) {
  auto r = load_kubeconfig(write("config", kubeconfig({"certificate-authority-data: " + b64(ca_pem), kind_server},
                                                      kind_user())));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "https://127.0.0.1:39603");
  EXPECT_EQ(r->ca_pem, ca_pem);
  EXPECT_EQ(r->client_cert_pem, cert_pem);
  EXPECT_EQ(r->client_key_pem, key_pem);
  EXPECT_EQ(r->token, "");
  EXPECT_EQ(r->token_file, "");
  EXPECT_FALSE(r->insecure_skip_tls_verify);
  EXPECT_EQ(r->source, "kubeconfig " + config_path() + " (context kind-kind)");
  EXPECT_EQ(r->describe(), "server https://127.0.0.1:39603 (kubeconfig " + config_path() +
                               " (context kind-kind)); auth: client certificate; TLS: verified against the configured CA");
}

// kubeadm's admin.conf, and line-wrapped base64 (Go's decoder skips line breaks).
TEST_F(Kubeconfig, KubeadmAdminConfWithWrappedBase64) {
  std::string ca = b64(ca_pem);
  std::string yaml =
      "apiVersion: v1\n"
      "clusters:\n"
      "- cluster:\n"
      "    certificate-authority-data: |\n      " + ca.substr(0, 40) + "\n      " + ca.substr(40) + "\n"
      "    server: https://192.168.1.10:6443\n"
      "  name: kubernetes\n"
      "contexts:\n"
      "- context:\n"
      "    cluster: kubernetes\n"
      "    user: kubernetes-admin\n"
      "  name: kubernetes-admin@kubernetes\n"
      "current-context: kubernetes-admin@kubernetes\n"
      "kind: Config\n"
      "preferences: {}\n"
      "users:\n"
      "- name: kubernetes-admin\n"
      "  user:\n"
      "    client-certificate-data: " + b64(cert_pem) + "\n"
      "    client-key-data: " + b64(key_pem) + "\n";
  auto r = load_kubeconfig(write("admin.conf", yaml));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "https://192.168.1.10:6443");
  EXPECT_EQ(r->ca_pem, ca_pem);
  EXPECT_EQ(r->client_key_pem, key_pem);
  EXPECT_EQ(r->source, "kubeconfig " + (dir_ / "admin.conf").string() + " (context kubernetes-admin@kubernetes)");
}

TEST_F(Kubeconfig, TokenAndCaFile) {
  std::string ca = write("pki/ca.crt", ca_pem);
  auto r = load_kubeconfig(write("config", kubeconfig({"certificate-authority: " + ca, "server: https://10.0.0.1:6443"},
                                                      {"token: " + sa_token})));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->ca_pem, ca_pem);
  EXPECT_EQ(r->token, sa_token);
  EXPECT_EQ(r->token_file, "");
  EXPECT_EQ(r->client_cert_pem, "");
  EXPECT_NE(r->describe().find("; auth: bearer token; TLS: verified against the configured CA"), std::string::npos)
      << r->describe();
}

// client-go resolves relative paths against the kubeconfig's directory, not the working directory.
TEST_F(Kubeconfig, RelativePathsResolveAgainstTheKubeconfigsDirectory) {
  write("kube/pki/ca.crt", ca_pem);
  write("kube/pki/admin.crt", cert_pem);
  write("kube/pki/admin.key", key_pem);
  write("kube/token", "  " + sa_token + "\n");
  std::string path = write("kube/config", kubeconfig({"certificate-authority: pki/ca.crt", kind_server},
                                                     {"client-certificate: pki/admin.crt",
                                                      "client-key: ./pki/../pki/admin.key", "tokenFile: token"}));
  auto r = load_kubeconfig(path);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->ca_pem, ca_pem);
  EXPECT_EQ(r->client_cert_pem, cert_pem);
  EXPECT_EQ(r->client_key_pem, key_pem);
  EXPECT_EQ(r->token, sa_token);  // trimmed, as client-go's token file source does
  EXPECT_EQ(r->token_file, (dir_ / "kube/token").string());
  EXPECT_EQ(r->describe(), "server https://127.0.0.1:39603 (kubeconfig " + path +
                               " (context kind-kind)); auth: client certificate and bearer token (token file " +
                               (dir_ / "kube/token").string() + "); TLS: verified against the configured CA");

  // The same file through parse_kubeconfig with another base directory finds nothing there.
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto elsewhere = parse_kubeconfig(text, "k", (dir_ / "nowhere").string());
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.err().message, "k: clusters[0].cluster.certificate-authority: " + (dir_ / "nowhere/pki/ca.crt").string() +
                                         ": cannot read file: No such file or directory");
}

// client-go starts with the inline token and re-reads tokenFile later: both are kept.
TEST_F(Kubeconfig, InlineTokenComesFirstTokenFileIsKept) {
  write("token", "from-file\n");
  auto r = load_kubeconfig(write("config", kubeconfig({kind_server}, {"token: inline", "tokenFile: token"})));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->token, "inline");
  EXPECT_EQ(r->token_file, (dir_ / "token").string());
}

TEST_F(Kubeconfig, ContextArgumentOverridesCurrentContext) {
  std::string yaml =
      "apiVersion: v1\nkind: Config\ncurrent-context: kind-a\n"
      "clusters:\n"
      "- name: kind-a\n  cluster: {server: 'https://127.0.0.1:1111', insecure-skip-tls-verify: true}\n"
      "- name: kind-b\n  cluster: {server: 'https://127.0.0.1:2222', certificate-authority-data: " + b64(ca_pem) + "}\n"
      "contexts:\n"
      "- name: kind-a\n  context: {cluster: kind-a, user: kind-a, namespace: default}\n"
      "- name: kind-b\n  context: {cluster: kind-b, user: kind-b}\n"
      "users:\n"
      "- name: kind-a\n  user: {token: token-a}\n"
      "- name: kind-b\n  user: {token: token-b}\n";
  std::string path = write("config", yaml);
  auto a = load_kubeconfig(path);
  ASSERT_TRUE(a) << a.err().message;
  EXPECT_EQ(a->server, "https://127.0.0.1:1111");
  EXPECT_EQ(a->token, "token-a");
  auto b = load_kubeconfig(path, "kind-b");
  ASSERT_TRUE(b) << b.err().message;
  EXPECT_EQ(b->server, "https://127.0.0.1:2222");
  EXPECT_EQ(b->token, "token-b");
  EXPECT_EQ(b->ca_pem, ca_pem);
  EXPECT_EQ(b->source, "kubeconfig " + path + " (context kind-b)");
}

TEST_F(Kubeconfig, InsecureSkipTlsVerifyAndServerName) {
  auto r = load_kubeconfig(write("config", kubeconfig({kind_server, "insecure-skip-tls-verify: true",
                                                       "tls-server-name: kubernetes.default.svc"},
                                                      {"token: abc"})));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_TRUE(r->insecure_skip_tls_verify);
  EXPECT_EQ(r->tls_server_name, "kubernetes.default.svc");
  EXPECT_EQ(r->ca_pem, "");
  EXPECT_NE(r->describe().find("TLS: server certificate NOT verified (insecure-skip-tls-verify), server name "
                               "kubernetes.default.svc"),
            std::string::npos)
      << r->describe();
}

TEST_F(Kubeconfig, PlainHttpServerAndNoUser) {
  // A context without a user connects without credentials (client-go's empty AuthInfo).
  std::string yaml = "clusters:\n- name: local\n  cluster:\n    server: http://localhost:8080\n"
                     "contexts:\n- name: local\n  context:\n    cluster: local\ncurrent-context: local\n";
  auto r = load_kubeconfig(write("config", yaml));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "http://localhost:8080");
  EXPECT_EQ(r->describe(),
            "server http://localhost:8080 (kubeconfig " + config_path() + " (context local)); auth: none; TLS: none (plain HTTP)");
}

TEST_F(Kubeconfig, SystemTrustStoreWhenNoCa) {
  auto r = load_kubeconfig(write("config", kubeconfig({"server: HTTPS://api.example.com"}, {"token: t"})));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "https://api.example.com");  // Go's url.Parse lowercases the scheme
  EXPECT_NE(r->describe().find("TLS: verified against the system trust store"), std::string::npos) << r->describe();
}

// Entries that are not selected may use what is not supported, and unknown fields are ignored, as
// client-go ignores them: a real ~/.kube/config with a cloud provider's exec user still works.
TEST_F(Kubeconfig, UnselectedEntriesAndUnknownFieldsDoNotMatter) {
  std::string yaml = kubeconfig({kind_server, "disable-compression: true", "extensions: [{name: x, extension: {}}]"},
                                {"token: t", "extensions: []"}) +
                     "- name: eks\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                     "      command: aws\n      args: [eks, get-token, --cluster-name, prod]\n"
                     "- name: basic\n  user: {username: admin, password: hunter2}\n"
                     "extensions: []\n";
  auto r = load_kubeconfig(write("config", yaml));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->token, "t");
}



// --- bad kubeconfigs -----------------------------------------------------------------------------

TEST_F(Kubeconfig, SelectionErrorsNameWhatIsMissing) {
  const std::string two =
      "contexts:\n- name: a\n  context: {cluster: c, user: u}\n- name: b\n  context: {cluster: c}\n"
      "clusters:\n- name: c\n  cluster: {server: 'https://h:6443'}\nusers:\n- name: u\n  user: {}\n";
  const std::string lone_context = "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n";
  expect_errors({
      {"context argument not found", two, "context \"foo\" not found (contexts: a, b)", "foo"},
      {"current-context not found", two + "current-context: gone\n",
       "current-context: context \"gone\" not found (contexts: a, b)"},
      {"no current-context, no argument", two, "current-context: not set, and no context was given (contexts: a, b)"},
      {"no contexts at all", "clusters:\n- name: c\n  cluster: {server: 'https://h'}\ncurrent-context: c\n",
       "current-context: context \"c\" not found (contexts: none)"},
      {"context without a cluster", "current-context: x\ncontexts:\n- name: x\n  context: {user: u}\n",
       "contexts[0].context.cluster: Required value (context \"x\")"},
      {"cluster not found", lone_context + "clusters:\n- name: other\n  cluster: {server: 'https://h'}\n",
       "contexts[0].context.cluster: cluster \"c\" not found (clusters: other)"},
      {"user not found",
       lone_context + "clusters:\n- name: c\n  cluster: {server: 'https://h'}\nusers:\n- name: v\n  user: {}\n",
       "contexts[0].context.user: user \"u\" not found (users: v)"},
  });
}

TEST_F(Kubeconfig, ClusterErrors) {
  const std::string u = "token: t";
  const std::string ca_data = "certificate-authority-data: " + b64(ca_pem);
  fs::create_directories(dir_ / "pki");
  write("not-pem.crt", "just text\n");
  expect_errors({
      {"no server", kubeconfig({ca_data}, {u}), "clusters[0].cluster.server: Required value"},
      {"null cluster", kubeconfig({}, {u}), "clusters[0].cluster.server: Required value"},
      {"no scheme", kubeconfig({"server: 127.0.0.1:6443"}, {u}),
       "clusters[0].cluster.server: must start with https:// or http://, got \"127.0.0.1:6443\""},
      {"other scheme", kubeconfig({"server: ftp://h"}, {u}),
       "clusters[0].cluster.server: must start with https:// or http://, got \"ftp://h\""},
      {"no host", kubeconfig({"server: https://"}, {u}), "clusters[0].cluster.server: no host in \"https://\""},
      {"no host, a path", kubeconfig({"server: https:///api"}, {u}),
       "clusters[0].cluster.server: no host in \"https:///api\""},
      {"whitespace", kubeconfig({"server: \"https://h:6443 \""}, {u}),
       "clusters[0].cluster.server: contains whitespace or control characters"},
      {"credentials in the URL", kubeconfig({"server: https://admin:pw@h:6443"}, {u}),
       "clusters[0].cluster.server: credentials in the URL (user@host) are not supported"},
      {"insecure with CA data", kubeconfig({kind_server, ca_data, "insecure-skip-tls-verify: true"}, {u}),
       "clusters[0].cluster: specifying a root certificates file with the insecure flag is not allowed "
       "(insecure-skip-tls-verify is true and certificate-authority-data is set)"},
      {"insecure with CA file", kubeconfig({kind_server, "certificate-authority: ca.crt", "insecure-skip-tls-verify: yes"}, {u}),
       "clusters[0].cluster: specifying a root certificates file with the insecure flag is not allowed "
       "(insecure-skip-tls-verify is true and certificate-authority is set)"},
      {"CA file and data", kubeconfig({kind_server, ca_data, "certificate-authority: ca.crt"}, {u}),
       "clusters[0].cluster: certificate-authority and certificate-authority-data are both set; set one"},
      {"CA file missing", kubeconfig({kind_server, "certificate-authority: missing.crt"}, {u}),
       "clusters[0].cluster.certificate-authority: " + (dir_ / "missing.crt").string() +
           ": cannot read file: No such file or directory"},
      {"CA file a directory", kubeconfig({kind_server, "certificate-authority: pki"}, {u}),
       "clusters[0].cluster.certificate-authority: " + (dir_ / "pki").string() + ": cannot read file: it is a directory"},
      {"CA file a device", kubeconfig({kind_server, "certificate-authority: /dev/null"}, {u}),
       "clusters[0].cluster.certificate-authority: /dev/null: cannot read file: not a regular file"},
      {"CA file not PEM", kubeconfig({kind_server, "certificate-authority: not-pem.crt"}, {u}),
       "clusters[0].cluster.certificate-authority: " + (dir_ / "not-pem.crt").string() + ": no PEM certificate in the file"},
      {"CA data not PEM", kubeconfig({kind_server, "certificate-authority-data: " + b64("not a certificate")}, {u}),
       "clusters[0].cluster.certificate-authority-data: no PEM certificate in the decoded data"},
      {"CA data not base64", kubeconfig({kind_server, "certificate-authority-data: 'LS0tLS1CRUdJTi*'"}, {u}),
       "clusters[0].cluster.certificate-authority-data: invalid base64"},
      {"insecure not a boolean", kubeconfig({kind_server, "insecure-skip-tls-verify: maybe"}, {u}),
       "clusters[0].cluster.insecure-skip-tls-verify: expected true or false, got \"maybe\""},
      {"proxy-url", kubeconfig({kind_server, "proxy-url: http://proxy:3128"}, {u}),
       "clusters[0].cluster.proxy-url: not supported (the scheduler connects to the server directly)"},
  });
}

TEST_F(Kubeconfig, UserErrors) {
  const std::string cert = "client-certificate-data: " + b64(cert_pem);
  const std::string key = "client-key-data: " + b64(key_pem);
  const std::string supported = " (supported: client-certificate and client-key or their -data, token, tokenFile)";
  write("empty-token", " \n\t\n");
  write("spaced-token", "two words\n");
  expect_errors({
      {"key data not base64", kubeconfig({kind_server}, {cert, "client-key-data: 'not base64!'"}),
       "users[0].user.client-key-data: invalid base64"},
      {"cert data unpadded", kubeconfig({kind_server}, {"client-certificate-data: YQ", key}),
       "users[0].user.client-certificate-data: invalid base64"},
      {"cert data with data after padding", kubeconfig({kind_server}, {"client-certificate-data: YQ==YQ==", key}),
       "users[0].user.client-certificate-data: invalid base64"},
      {"bad base64 in a user not selected", kubeconfig({kind_server}, {"token: t"}) +
                                                "- name: other\n  user:\n    client-key-data: '%%%%'\n",
       "users[1].user.client-key-data: invalid base64"},
      {"cert without key", kubeconfig({kind_server}, {cert}),
       "users[0].user: a client certificate is set without its key (client-key or client-key-data)"},
      {"key without cert", kubeconfig({kind_server}, {"client-key: admin.key"}),
       "users[0].user: a client key is set without its certificate (client-certificate or client-certificate-data)"},
      {"cert data and file", kubeconfig({kind_server}, {cert, "client-certificate: admin.crt", key}),
       "users[0].user: client-certificate and client-certificate-data are both set; set one"},
      {"key data and file", kubeconfig({kind_server}, {cert, key, "client-key: admin.key"}),
       "users[0].user: client-key and client-key-data are both set; set one"},
      {"key data holds a certificate", kubeconfig({kind_server}, {cert, "client-key-data: " + b64(cert_pem)}),
       "users[0].user.client-key-data: no PEM private key in the decoded data"},
      {"cert data holds a key", kubeconfig({kind_server}, {"client-certificate-data: " + b64(key_pem), key}),
       "users[0].user.client-certificate-data: no PEM certificate in the decoded data"},
      {"key file missing", kubeconfig({kind_server}, {cert, "client-key: pki/admin.key"}),
       "users[0].user.client-key: " + (dir_ / "pki/admin.key").string() + ": cannot read file: No such file or directory"},
      {"exec", kubeconfig({kind_server}, {"exec:", "  apiVersion: client.authentication.k8s.io/v1beta1", "  command: aws"}),
       "users[0].user.exec: exec credential plugins are not supported" + supported},
      {"auth-provider", kubeconfig({kind_server}, {"auth-provider: {name: oidc, config: {idp-issuer-url: 'https://i'}}"}),
       "users[0].user.auth-provider: auth-provider plugins are not supported" + supported},
      {"username", kubeconfig({kind_server}, {"username: admin"}),
       "users[0].user.username: basic authentication is not supported" + supported},
      {"password", kubeconfig({kind_server}, {"password: pw"}),
       "users[0].user.password: basic authentication is not supported" + supported},
      {"impersonation", kubeconfig({kind_server}, {"token: t", "as-groups: [system:masters]"}),
       "users[0].user.as-groups: impersonation is not supported" + supported},
      {"tokenFile missing", kubeconfig({kind_server}, {"tokenFile: no-such-token"}),
       "users[0].user.tokenFile: " + (dir_ / "no-such-token").string() + ": cannot read file: No such file or directory"},
      {"tokenFile blank", kubeconfig({kind_server}, {"tokenFile: empty-token"}),
       "users[0].user.tokenFile: " + (dir_ / "empty-token").string() + ": holds no token (only whitespace)"},
      {"tokenFile with a space inside", kubeconfig({kind_server}, {"tokenFile: spaced-token"}),
       "users[0].user.tokenFile: " + (dir_ / "spaced-token").string() +
           ": the token contains whitespace or control characters"},
      {"tokenFile a device", kubeconfig({kind_server}, {"tokenFile: /dev/zero"}),
       "users[0].user.tokenFile: /dev/zero: cannot read file: not a regular file"},
      {"token with a line break inside", kubeconfig({kind_server}, {"token: \"abc\\ndef\""}),
       "users[0].user.token: the token contains whitespace or control characters"},
  });
}

TEST_F(Kubeconfig, MalformedInputNamesTheFileAndPath) {
  const std::string ok_user = "users:\n- name: u\n  user: {}\n";
  expect_errors({
      {"empty file", "", "empty kubeconfig: no contexts, clusters or users"},
      {"only comments", "# nothing here\n", "empty kubeconfig: no contexts, clusters or users"},
      {"only the header", "apiVersion: v1\nkind: Config\npreferences: {}\n",
       "empty kubeconfig: no contexts, clusters or users"},
      {"a list", "- a\n- b\n", "expected a mapping, got a list"},
      {"a scalar", "hello\n", "expected a mapping, got a scalar"},
      {"two documents", "current-context: a\n---\ncurrent-context: b\n", "2 YAML documents; a kubeconfig is one"},
      {"clusters: 5", "clusters: 5\n", "clusters: expected a list, got a scalar"},
      {"contexts a mapping", "contexts: {a: b}\n", "contexts: expected a list, got a mapping"},
      {"users a string", "users: alice\n", "users: expected a list, got a scalar"},
      {"an entry not a mapping", "clusters:\n- kind\n", "clusters[0]: expected a mapping, got a scalar"},
      {"entry body a list", "clusters:\n- name: a\n  cluster: [x]\n", "clusters[0].cluster: expected a mapping, got a list"},
      {"server a list", "clusters:\n- name: a\n  cluster:\n    server: [1]\n",
       "clusters[0].cluster.server: expected a string, got a list"},
      {"token a mapping", "users:\n- name: a\n  user: {token: {value: x}}\n",
       "users[0].user.token: expected a string, got a mapping"},
      {"name missing", "users:\n- user: {}\n", "users[0].name: Required value"},
      {"name a mapping", "users:\n- name: {a: b}\n", "users[0].name: expected a string, got a mapping"},
      {"duplicate names", ok_user + "- name: u\n  user: {}\n", "users[1].name: duplicate name \"u\""},
      {"duplicate field", "users:\n- name: u\n  user:\n    token: a\n    token: b\n", "users[0].user.token: duplicate field"},
      {"duplicate top-level field", "clusters: []\nclusters: []\n", "clusters: duplicate field"},
      {"a key that is a list", "? [a, b]\n: 1\n", "a key is a list, not a field name"},
      {"current-context a list", "current-context: [a]\n", "current-context: expected a string, got a list"},
      {"another kind", "apiVersion: v1\nkind: Pod\n", "kind: unsupported \"Pod\" (a kubeconfig is Config)"},
      {"another apiVersion", "apiVersion: v2\nkind: Config\n", "apiVersion: unsupported \"v2\" (a kubeconfig is v1)"},
  });
}

// What the YAML guard stops: each ends in an error that starts with the file's path.
TEST_F(Kubeconfig, HostileYamlEndsInAnError) {
  std::string laughs = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 9; ++i) {
    laughs += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) laughs += (j ? ", *l" : "*l") + std::to_string(i - 1);
    laughs += "]\n";
  }
  const char junk[] = "\x00\xff\xfe\x01\x02garbage\x7f\x80\x81";
  struct tc {
    const char* name;
    std::string yaml;
    std::string want;  // a part of the message
  } cases[] = {
      {"deep nesting", "clusters: " + std::string(5000, '[') + std::string(5000, ']') + "\n", "nesting deeper than 100 levels"},
      {"deep nesting in a server", "clusters:\n- name: a\n  cluster:\n    server: " + std::string(200, '[') +
                                       std::string(200, ']') + "\n",
       "nesting deeper than 100 levels"},
      {"alias bomb", "preferences:\n" + laughs, "too many alias expansions"},
      {"recursive alias", "users: &u [*u]\n", "refers to a node that contains it"},
      {"a lone comma", ",", "invalid YAML"},
      {"unterminated flow", "clusters: [\n", "invalid YAML"},
      {"binary junk", std::string(junk, sizeof junk - 1), ""},
      {"NUL bytes in a value", std::string("current-context: a\0\0", 20) + "b\n", ""},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = load_kubeconfig(write("config", c.yaml));
    ASSERT_FALSE(r) << r->describe();
    EXPECT_EQ(r.err().message.rfind(config_path() + ": ", 0), 0u) << r.err().message;
    EXPECT_NE(r.err().message.find(c.want), std::string::npos) << r.err().message;
  }
}

TEST_F(Kubeconfig, UnreadableKubeconfigNamesItsPath) {
  auto missing = load_kubeconfig((dir_ / "nope").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.err().message, (dir_ / "nope").string() + ": cannot read kubeconfig: No such file or directory");
  auto directory = load_kubeconfig(dir_.string());
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.err().message.rfind(dir_.string() + ": cannot read file: ", 0), 0u) << directory.err().message;
  auto empty = load_kubeconfig("");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.err().message, "kubeconfig: empty path");
}

// Distinctive secrets through every error path and every describe(): none may show up. Every
// secret contains "SECRET", which nothing else in these inputs does.
TEST_F(Kubeconfig, SecretsNeverLeak) {
  const std::string token = "tok-SECRET-4b1d9e";
  const std::string file_token = "filetok-SECRET-77aa";
  const std::string key = "-----BEGIN EC PRIVATE KEY-----\nKEY-SECRET-9c2f\n-----END EC PRIVATE KEY-----\n";
  const std::string cert = "-----BEGIN CERTIFICATE-----\nCERT-SECRET-51e0\n-----END CERTIFICATE-----\n";
  const std::string cert_data = "client-certificate-data: " + b64(cert);
  const std::string key_data = "client-key-data: " + b64(key);
  const std::string tok = "token: " + token;
  write("token", file_token + "\n");
  write("spaced-token", "SECRET two\n");
  write("key-not-pem", "KEY-SECRET-file\n");
  write("cert-not-pem", "CERT-SECRET-file\n");
  write("sa/token", "sa-SECRET-0d0d\n");
  write("sa/ca.crt", "CA-SECRET-not-pem\n");
  write("sa2/token", "sa SECRET with spaces\n");
  write("sa2/ca.crt", ca_pem);

  std::vector<std::string> said;
  auto record = [&](const result<connection_config>& r) { said.push_back(r ? r->describe() : r.err().message); };
  auto load = [&](const std::string& yaml, const std::string& context = "") {
    record(load_kubeconfig(write("config", yaml), context));
  };
  // Successes, so describe() is checked too.
  load(kubeconfig({kind_server}, {cert_data, key_data, tok}));
  load(kubeconfig({kind_server}, {"tokenFile: token"}));
  load(kubeconfig({kind_server, "insecure-skip-tls-verify: true"}, {tok, "tokenFile: token"}));
  // Every error path of the user, with the other secrets present.
  const std::vector<std::vector<std::string>> bad_users = {
      {"client-key-data: 'KEY-SECRET-not-base64!'", cert_data, tok},
      {"client-certificate-data: 'CERT-SECRET-not-base64!'", key_data},
      {"client-key-data: " + b64("KEY-SECRET-plain"), cert_data},
      {"client-certificate-data: " + b64("CERT-SECRET-plain"), key_data},
      {"client-key: key-not-pem", cert_data},
      {"client-certificate: cert-not-pem", key_data},
      {cert_data, tok},
      {key_data, tok},
      {cert_data, key_data, "client-key: k"},
      {cert_data, key_data, "client-certificate: c"},
      {"token: \"SECRET with spaces\""},
      {"token: \"SECRET\\u0007bell\""},
      {"tokenFile: spaced-token", cert_data, key_data},
      {"tokenFile: missing", tok},
      {tok, "exec: {command: aws, env: [{name: AWS_SECRET_ACCESS_KEY, value: SECRET-exec-env}]}"},
      {tok, "auth-provider: {name: oidc, config: {id-token: id-SECRET-token, refresh-token: r-SECRET}}"},
      {tok, "username: admin"},
      {tok, "password: pw-SECRET-1"},
      {tok, "as: someone"},
      {tok, "token: " + token + "-again"},
      {"token: [" + token + "]"},
      {"token: {" + token + ": x}"},
  };
  for (auto& u : bad_users) load(kubeconfig({kind_server}, u));
  // Cluster errors with a user full of secrets.
  const std::vector<std::vector<std::string>> bad_clusters = {
      {},
      {"server: 127.0.0.1"},
      {"server: https://SECRET@h"},
      {"server: https://user:pw-SECRET@h:6443"},
      {kind_server, "certificate-authority-data: " + b64(ca_pem), "insecure-skip-tls-verify: true"},
      {kind_server, "certificate-authority: missing.crt"},
      {kind_server, "proxy-url: http://p"},
      {kind_server, "insecure-skip-tls-verify: [x]"},
  };
  for (auto& c : bad_clusters) load(kubeconfig(c, {cert_data, key_data, tok}));
  // Selection errors and malformed files around the secrets.
  std::string full = kubeconfig({kind_server}, {cert_data, key_data, tok});
  load(full, "no-such-context");
  load(full + "---\n" + full);
  load(full + "users: []\n");
  load(full.substr(0, full.size() - 5) + "\"\n");  // an unterminated quote in the last line
  load("token: " + token + "\nclient-key-data: " + b64(key) + "\n");
  load("users:\n- name: u\n  user:\n    token: \"" + token);
  load("users:\n- name: u\n  user: {token: " + token + ", token: " + token + "}\n");
  load("users:\n- name: u\n  user:\n    token:" + token + "\n  bad indent: [\n");
  load("- " + token + "\n- " + b64(key) + "\n");
  load(token + "\n");
  load("users: &a [{name: u, user: {token: " + token + "}}, *a, *a]\nextra: " + std::string(300, '[') + "\n");
  // In-cluster, and resolve_connection with --master.
  fake_env env{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}};
  record(load_in_cluster(env.fn(), (dir_ / "sa").string()));
  record(load_in_cluster(env.fn(), (dir_ / "sa2").string()));
  write("sa3/token", "sa-SECRET-fine\n");
  write("sa3/ca.crt", ca_pem);
  record(load_in_cluster(env.fn(), (dir_ / "sa3").string()));
  std::string good = write("good", kubeconfig({kind_server}, {cert_data, key_data, tok}));
  record(resolve_connection(good, "", "https://other:6443", "", env.fn()));
  record(resolve_connection(good, "", "https://user:SECRET@other", "", env.fn()));
  record(resolve_connection("", "", "SECRET-not-a-url-but-@", "", env.fn()));

  ASSERT_GE(said.size(), 45u);
  const std::vector<std::string> secret_data = {b64(cert), b64(key), b64("KEY-SECRET-plain"),
                                                b64("CERT-SECRET-plain")};
  for (auto& m : said) {
    EXPECT_EQ(m.find("SECRET"), std::string::npos) << m;
    for (auto& d : secret_data) EXPECT_EQ(m.find(d), std::string::npos) << m;
  }
}

// --- in-cluster ----------------------------------------------------------------------------------

TEST_F(InCluster, ReadsTheServiceAccount) {
  write("sa/token", sa_token + "\n");
  write("sa/ca.crt", ca_pem);
  write("sa/namespace", "kube-system");
  fake_env env{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}};
  auto r = load_in_cluster(env.fn(), (dir_ / "sa").string());
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "https://10.96.0.1:443");
  EXPECT_EQ(r->token, sa_token);
  EXPECT_EQ(r->token_file, (dir_ / "sa/token").string());
  EXPECT_EQ(r->ca_pem, ca_pem);
  EXPECT_EQ(r->client_cert_pem, "");
  EXPECT_FALSE(r->insecure_skip_tls_verify);
  EXPECT_EQ(r->source, "in-cluster service account");
  EXPECT_EQ(r->describe(), "server https://10.96.0.1:443 (in-cluster service account); auth: bearer token (token file " +
                               (dir_ / "sa/token").string() + "); TLS: verified against the configured CA");
}

TEST_F(InCluster, Ipv6HostIsBracketed) {
  write("sa/token", sa_token);
  write("sa/ca.crt", ca_pem);
  fake_env env{{{"KUBERNETES_SERVICE_HOST", "fd00:10:96::1"}, {"KUBERNETES_SERVICE_PORT", "6443"}}};
  auto r = load_in_cluster(env.fn(), (dir_ / "sa").string());
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "https://[fd00:10:96::1]:6443");
}

TEST_F(InCluster, NotInAClusterSaysToPassKubeconfig) {
  const std::string want =
      "not running in a Kubernetes cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set): "
      "pass --kubeconfig";
  std::vector<fake_env> envs = {
      fake_env{},
      fake_env{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}},
      fake_env{{{"KUBERNETES_SERVICE_PORT", "443"}}},
      fake_env{{{"KUBERNETES_SERVICE_HOST", ""}, {"KUBERNETES_SERVICE_PORT", "443"}}},
  };
  for (auto& e : envs) {
    auto r = load_in_cluster(e.fn(), dir_.string());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.err().message, want);
  }
  auto no_function = load_in_cluster(nullptr, dir_.string());
  ASSERT_FALSE(no_function);
  EXPECT_EQ(no_function.err().message, want);
}

TEST_F(InCluster, BadHostOrPort) {
  write("sa/token", sa_token);
  write("sa/ca.crt", ca_pem);
  struct tc {
    std::string host, port, want;
  } cases[] = {
      {"10.96.0.1", "https", "in-cluster: KUBERNETES_SERVICE_PORT: expected a port number (1-65535), got \"https\""},
      {"10.96.0.1", "0", "in-cluster: KUBERNETES_SERVICE_PORT: expected a port number (1-65535), got \"0\""},
      {"10.96.0.1", "65536", "in-cluster: KUBERNETES_SERVICE_PORT: expected a port number (1-65535), got \"65536\""},
      {"10.96.0.1", "99999999999999999999",
       "in-cluster: KUBERNETES_SERVICE_PORT: expected a port number (1-65535), got \"99999999999999999999\""},
      {"10.96.0.1", "-1", "in-cluster: KUBERNETES_SERVICE_PORT: expected a port number (1-65535), got \"-1\""},
      {"a b", "443", "in-cluster: KUBERNETES_SERVICE_HOST: not a host name or address: \"a b\""},
      {"h/x", "443", "in-cluster: KUBERNETES_SERVICE_HOST: not a host name or address: \"h/x\""},
      {"[::1]", "443", "in-cluster: KUBERNETES_SERVICE_HOST: not a host name or address: \"[::1]\""},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.host + " " + c.port);
    fake_env env{{{"KUBERNETES_SERVICE_HOST", c.host}, {"KUBERNETES_SERVICE_PORT", c.port}}};
    auto r = load_in_cluster(env.fn(), (dir_ / "sa").string());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.err().message, c.want);
  }
}

TEST_F(InCluster, MissingOrBadServiceAccountFiles) {
  fake_env env{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}};
  auto in = [&](const std::string& sub) { return load_in_cluster(env.fn(), (dir_ / sub).string()); };
  const std::string w = "in-cluster service account: ";

  auto no_dir = in("absent");
  ASSERT_FALSE(no_dir);
  EXPECT_EQ(no_dir.err().message, w + (dir_ / "absent/token").string() + ": cannot read file: No such file or directory");

  write("no-ca/token", sa_token);
  auto no_ca = in("no-ca");
  ASSERT_FALSE(no_ca);
  EXPECT_EQ(no_ca.err().message, w + (dir_ / "no-ca/ca.crt").string() + ": cannot read file: No such file or directory");

  write("bad-ca/token", sa_token);
  write("bad-ca/ca.crt", "garbage");
  auto bad_ca = in("bad-ca");
  ASSERT_FALSE(bad_ca);
  EXPECT_EQ(bad_ca.err().message, w + (dir_ / "bad-ca/ca.crt").string() + ": no PEM certificate in the file");

  write("empty-token/token", "");
  write("empty-token/ca.crt", ca_pem);
  auto empty = in("empty-token");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.err().message, w + (dir_ / "empty-token/token").string() + ": holds no token (only whitespace)");
}

// --- resolve_connection --------------------------------------------------------------------------

// Two kubeconfigs, one for --kubeconfig and one for clientConnection.kubeconfig, and a pod's environment.
class ResolveConnection : public TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    flag_ = write("flag/config", kubeconfig({"server: https://flag:6443", "tls-server-name: flag.internal",
                                             "certificate-authority-data: " + b64(ca_pem)},
                                            {"token: flag-token"}, "flag"));
    file_ = write("file/config", kubeconfig({"server: https://file:6443"}, {"token: file-token"}, "file"));
  }
  fake_env in_cluster_{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}};
  std::string flag_, file_;
};

TEST_F(ResolveConnection, KubeconfigFlagComesFirst) {
  auto r = resolve_connection(flag_, file_, "", "", in_cluster_.fn());
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "https://flag:6443");
  EXPECT_EQ(r->token, "flag-token");
  EXPECT_EQ(r->source, "kubeconfig " + flag_ + " (context flag)");
}

TEST_F(ResolveConnection, ThenTheConfigFilesKubeconfig) {
  auto r = resolve_connection("", file_, "", "", in_cluster_.fn());
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "https://file:6443");
  EXPECT_EQ(r->token, "file-token");
  // An error in it is that file's.
  auto missing = resolve_connection("", (dir_ / "gone").string(), "", "", in_cluster_.fn());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.err().message, (dir_ / "gone").string() + ": cannot read kubeconfig: No such file or directory");
}

TEST_F(ResolveConnection, ThenInCluster) {
  // The default service account directory: absent on a build machine, present in a pod.
  auto r = resolve_connection("", "", "", "", in_cluster_.fn());
  if (r)
    EXPECT_EQ(r->source, "in-cluster service account");
  else
    EXPECT_EQ(r.err().message.rfind("in-cluster service account: /var/run/secrets/kubernetes.io/serviceaccount/", 0), 0u)
        << r.err().message;
  auto outside = resolve_connection("", "", "", "", fake_env{}.fn());
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.err().message.find("not running in a Kubernetes cluster"), std::string::npos);
  EXPECT_NE(outside.err().message.find("--kubeconfig"), std::string::npos);
}

TEST_F(ResolveConnection, ContextIsPassedToTheKubeconfig) {
  std::string ok = write("ok/config", "clusters:\n- name: a\n  cluster: {server: 'https://a:1'}\n"
                                      "users:\n- name: a\n  user: {token: a}\n- name: b\n  user: {token: b}\n"
                                      "contexts:\n- name: a\n  context: {cluster: a, user: a}\n"
                                      "- name: b\n  context: {cluster: a, user: b}\ncurrent-context: a\n");
  auto b = resolve_connection("", ok, "", "b", in_cluster_.fn());
  ASSERT_TRUE(b) << b.err().message;
  EXPECT_EQ(b->token, "b");
}

TEST_F(ResolveConnection, MasterReplacesTheServer) {
  auto r = resolve_connection(flag_, file_, "https://10.0.0.5:6443", "", in_cluster_.fn());
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "https://10.0.0.5:6443");
  EXPECT_EQ(r->token, "flag-token");
  EXPECT_EQ(r->ca_pem, ca_pem);
  EXPECT_EQ(r->tls_server_name, "");  // client-go clears it when the server is overridden
  EXPECT_EQ(r->source, "kubeconfig " + flag_ + " (context flag), server from --master");

  // A kubeconfig without a server is usable with --master (client-go's override fills it in).
  std::string serverless = write("serverless", kubeconfig({"insecure-skip-tls-verify: true"}, {"token: t"}));
  auto s = resolve_connection(serverless, "", "http://127.0.0.1:8080", "", in_cluster_.fn());
  ASSERT_TRUE(s) << s.err().message;
  EXPECT_EQ(s->server, "http://127.0.0.1:8080");
  EXPECT_TRUE(s->insecure_skip_tls_verify);
  // Without --master it is not.
  auto no_master = resolve_connection(serverless, "", "", "", in_cluster_.fn());
  ASSERT_FALSE(no_master);
  EXPECT_EQ(no_master.err().message, serverless + ": clusters[0].cluster.server: Required value");
}

// kube-scheduler uses the service account only when neither --kubeconfig nor --master is given.
TEST_F(ResolveConnection, MasterAloneConnectsWithoutCredentials) {
  auto r = resolve_connection("", "", "http://localhost:8080", "", in_cluster_.fn());
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->server, "http://localhost:8080");
  EXPECT_EQ(r->token, "");
  EXPECT_EQ(r->ca_pem, "");
  EXPECT_EQ(r->describe(), "server http://localhost:8080 (--master, no kubeconfig); auth: none; TLS: none (plain HTTP)");
}

TEST_F(ResolveConnection, BadMasterOrContextWithoutKubeconfig) {
  struct tc {
    std::string kubeconfig, master, context, want;
  } cases[] = {
      {flag_, "localhost:8080", "", "--master: must start with https:// or http://, got \"localhost:8080\""},
      {"", "https://", "", "--master: no host in \"https://\""},
      {"", "https://u:p@h", "", "--master: credentials in the URL (user@host) are not supported"},
      {"", "", "kind-kind",
       "context \"kind-kind\" was given but there is no kubeconfig to take it from (--kubeconfig or "
       "clientConnection.kubeconfig)"},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.want);
    auto r = resolve_connection(c.kubeconfig, "", c.master, c.context, in_cluster_.fn());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.err().message, c.want);
  }
}

}  // namespace
}  // namespace kas

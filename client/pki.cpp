#include "client/pki.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace kas::pki {

namespace {

template <class T, void (*F)(T*)>
struct deleter {
  void operator()(T* p) const { F(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY, EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509, X509_free>>;
using bio_ptr = std::unique_ptr<BIO, deleter<BIO, BIO_free_all>>;

error openssl_error(const std::string& what) {
  char buf[256] = {};
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  ERR_clear_error();
  return error{"pki: " + what + ": " + buf};
}

pkey_ptr new_key() { return pkey_ptr(EVP_EC_gen("P-256")); }

std::string pem_of(X509* x) {
  bio_ptr b(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(b.get(), x);
  char* data = nullptr;
  long n = BIO_get_mem_data(b.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string pem_of(EVP_PKEY* k) {
  bio_ptr b(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(b.get(), k, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(b.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

bool add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key`, named `cn` (and O=`orgs`), valid from an hour ago (clock skew) for `days`.
x509_ptr new_cert(EVP_PKEY* key, const std::string& cn, const std::vector<std::string>& orgs, int days) {
  x509_ptr x(X509_new());
  X509_set_version(x.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), static_cast<long>(days) * 86400);
  X509_set_pubkey(x.get(), key);
  X509_NAME* name = X509_get_subject_name(x.get());
  for (auto& o : orgs)
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return x;
}

result<pkey_ptr> read_key(const std::string& pem) {
  bio_ptr b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  pkey_ptr k(PEM_read_bio_PrivateKey(b.get(), nullptr, nullptr, nullptr));
  if (!k) return openssl_error("reading the CA key");
  return k;
}

result<x509_ptr> read_cert(const std::string& pem) {
  bio_ptr b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  x509_ptr x(PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr));
  if (!x) return openssl_error("reading the CA certificate");
  return x;
}

}  // namespace

result<key_pair> make_ca(const std::string& common_name, int days) {
  auto key = new_key();
  if (!key) return openssl_error("generating a key");
  auto x = new_cert(key.get(), common_name, {}, days);
  X509_set_issuer_name(x.get(), X509_get_subject_name(x.get()));
  if (!add_ext(x.get(), x.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !add_ext(x.get(), x.get(), NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") ||
      !add_ext(x.get(), x.get(), NID_subject_key_identifier, "hash"))
    return openssl_error("CA extensions");
  if (X509_sign(x.get(), key.get(), EVP_sha256()) == 0) return openssl_error("signing the CA");
  return key_pair{pem_of(x.get()), pem_of(key.get())};
}

result<key_pair> issue(const key_pair& ca, const cert_request& req) {
  auto ca_key = read_key(ca.key_pem);
  if (!ca_key) return ca_key.err();
  auto ca_cert = read_cert(ca.cert_pem);
  if (!ca_cert) return ca_cert.err();
  auto key = new_key();
  if (!key) return openssl_error("generating a key");
  auto x = new_cert(key.get(), req.common_name, req.organizations, req.days);
  X509_set_issuer_name(x.get(), X509_get_subject_name(ca_cert->get()));
  std::string san;
  for (auto& d : req.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (auto& ip : req.ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
  bool ok = add_ext(x.get(), ca_cert->get(), NID_basic_constraints, "critical,CA:FALSE") &&
            add_ext(x.get(), ca_cert->get(), NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
            add_ext(x.get(), ca_cert->get(), NID_ext_key_usage, req.server ? "serverAuth" : "clientAuth") &&
            add_ext(x.get(), ca_cert->get(), NID_authority_key_identifier, "keyid:always") &&
            (san.empty() || add_ext(x.get(), ca_cert->get(), NID_subject_alt_name, san));
  if (!ok) return openssl_error("certificate extensions");
  if (X509_sign(x.get(), ca_key->get(), EVP_sha256()) == 0) return openssl_error("signing the certificate");
  return key_pair{pem_of(x.get()), pem_of(key.get())};
}

}  // namespace kas::pki

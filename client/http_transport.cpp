#include "client/http_transport.hpp"

#include <curl/curl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <deque>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

namespace kas::api {

namespace {

using clock = std::chrono::steady_clock;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// How many PEM certificates (or a private key) `pem` holds; the OpenSSL error queue is cleared.
int count_certificates(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  int n = 0;
  while (X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_free(x);
    ++n;
  }
  BIO_free(bio);
  ERR_clear_error();
  return n;
}

bool parses_as_key(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  bool ok = k != nullptr;
  EVP_PKEY_free(k);
  BIO_free(bio);
  ERR_clear_error();
  return ok;
}

std::string read_token_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  return t;
}

}  // namespace

struct http_transport::impl {
  connection_config conn;
  transport_options opts;
  CURLM* multi = nullptr;
  std::thread io;

  struct call {
    uint64_t id = 0;
    http_request req;
    http_callbacks cb;
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    http_response resp;
    bool headers_seen = false;
    bool streaming = false;  // a 2xx streamed response: chunks go to on_data
    char errbuf[CURL_ERROR_SIZE] = {};
  };

  // Shared with other threads, under mu.
  std::mutex mu;
  std::deque<std::unique_ptr<call>> submitted;
  std::vector<uint64_t> cancelled;
  bool stopping = false;
  std::atomic<uint64_t> next_id{0}, started{0}, connections{0};

  // The I/O thread's own.
  std::unordered_map<uint64_t, std::unique_ptr<call>> active;
  std::deque<std::unique_ptr<call>> throttled;  // waiting for a rate-limit token
  double tokens = 0;
  clock::time_point refilled = clock::now();
  std::string token;  // the bearer token, re-read from token_file once a minute as client-go does
  clock::time_point token_read{};

  // tls-server-name: the URL names that host (SNI and certificate verification use it) and
  // CONNECT_TO sends the connection to the server's real address.
  std::string tls_name_server;
  curl_slist* connect_to = nullptr;

  ~impl() {
    if (multi) curl_multi_cleanup(multi);
    curl_slist_free_all(connect_to);
  }

  std::string describe(const http_request& r) const { return r.method + " " + r.path; }

  void finish(std::unique_ptr<call> c) {
    if (c->easy) {
      curl_multi_remove_handle(multi, c->easy);
      curl_easy_cleanup(c->easy);
    }
    curl_slist_free_all(c->headers);
    if (c->cb.on_done) c->cb.on_done(std::move(c->resp));
  }

  void fail(std::unique_ptr<call> c, const std::string& why) {
    c->resp.error = describe(c->req) + ": " + why;
    finish(std::move(c));
  }

  const std::string& bearer() {
    if (!conn.token_file.empty() && (token_read == clock::time_point{} || clock::now() - token_read > std::chrono::minutes(1))) {
      auto t = read_token_file(conn.token_file);
      if (!t.empty()) token = t;  // keep the last good token if the file is being rotated
      token_read = clock::now();
    }
    return token;
  }

  static size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* c = static_cast<call*>(user);
    std::string_view line(data, size * n);
    // A new status line (after a 100 Continue or a redirect) starts the headers over.
    if (line.substr(0, 5) == "HTTP/") c->resp.content_type.clear();
    constexpr std::string_view ct = "content-type:";
    if (line.size() > ct.size()) {
      std::string head(line.substr(0, ct.size()));
      for (auto& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (head == ct) {
        auto v = line.substr(ct.size());
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
        c->resp.content_type = std::string(v);
      }
    }
    return size * n;
  }

  static size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* c = static_cast<call*>(user);
    size_t len = size * n;
    if (!c->headers_seen) {
      c->headers_seen = true;
      long code = 0;
      curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &code);
      c->resp.status = static_cast<int>(code);
      // An error answer to a watch is a Status body, read whole like any other response.
      c->streaming = c->req.stream && code >= 200 && code < 300;
      if (c->streaming && c->cb.on_headers) c->cb.on_headers(c->resp.status, c->resp.content_type);
    }
    if (c->streaming) {
      if (c->cb.on_data) c->cb.on_data(std::string_view(data, len));
    } else {
      c->resp.body.append(data, len);
    }
    return len;
  }

  void launch(std::unique_ptr<call> c) {
    CURL* e = curl_easy_init();
    if (!e) return fail(std::move(c), "cannot create a curl handle");
    c->easy = e;
    auto& r = c->req;
    std::string url = (tls_name_server.empty() ? conn.server : tls_name_server) + r.path;
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    if (connect_to) curl_easy_setopt(e, CURLOPT_CONNECT_TO, connect_to);
    curl_easy_setopt(e, CURLOPT_PRIVATE, c.get());
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &impl::on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, c.get());
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &impl::on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, c.get());
    // HTTP/2 when TLS's ALPN offers it, HTTP/1.1 otherwise; wait for a multiplexable connection
    // rather than opening a second one.
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opts.connect_timeout.count()));
    if (r.timeout.count() > 0) curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
    curl_easy_setopt(e, CURLOPT_USERAGENT, opts.user_agent.c_str());
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    if (r.method == "POST") {
      curl_easy_setopt(e, CURLOPT_POST, 1L);
    } else if (r.method != "GET") {
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    }
    if (r.method != "GET" || !r.body.empty()) {
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
    }
    if (!conn.ca_pem.empty()) {
      curl_blob ca{const_cast<char*>(conn.ca_pem.data()), conn.ca_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &ca);
    }
    if (conn.insecure_skip_tls_verify) {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (!conn.client_cert_pem.empty()) {
      curl_blob cert{const_cast<char*>(conn.client_cert_pem.data()), conn.client_cert_pem.size(), CURL_BLOB_COPY};
      curl_blob key{const_cast<char*>(conn.client_key_pem.data()), conn.client_key_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
      curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
      curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (!r.accept.empty()) c->headers = curl_slist_append(c->headers, ("Accept: " + r.accept).c_str());
    if (!r.content_type.empty()) c->headers = curl_slist_append(c->headers, ("Content-Type: " + r.content_type).c_str());
    // No "Expect: 100-continue" round trip before a body.
    c->headers = curl_slist_append(c->headers, "Expect:");
    if (const auto& t = bearer(); !t.empty()) c->headers = curl_slist_append(c->headers, ("Authorization: Bearer " + t).c_str());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
    if (curl_multi_add_handle(multi, e) != CURLM_OK) return fail(std::move(c), "cannot add the request to curl");
    started++;
    uint64_t id = c->id;
    active.emplace(id, std::move(c));
  }

  void completed(CURL* e, CURLcode rc) {
    call* raw = nullptr;
    curl_easy_getinfo(e, CURLINFO_PRIVATE, reinterpret_cast<char**>(&raw));
    auto it = active.find(raw->id);
    if (it == active.end()) return;
    auto c = std::move(it->second);
    active.erase(it);
    long code = 0, version = 0, conns = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(e, CURLINFO_HTTP_VERSION, &version);
    curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &conns);
    connections += static_cast<uint64_t>(conns);
    c->resp.status = static_cast<int>(code);
    c->resp.http2 = version == CURL_HTTP_VERSION_2_0;
    if (rc != CURLE_OK) {
      std::string why = curl_easy_strerror(rc);
      if (c->errbuf[0] && why != c->errbuf) why += ": " + std::string(c->errbuf);
      return fail(std::move(c), why);
    }
    finish(std::move(c));
  }

  // Token bucket: `burst` tokens at most, `qps` added per second.
  bool take_token() {
    if (opts.qps <= 0) return true;
    auto now = clock::now();
    double cap = std::max(1, opts.burst);
    tokens = std::min(cap, tokens + opts.qps * std::chrono::duration<double>(now - refilled).count());
    refilled = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }

  void run() {
    while (true) {
      std::deque<std::unique_ptr<call>> fresh;
      std::vector<uint64_t> drop;
      bool stop;
      {
        std::lock_guard<std::mutex> lock(mu);
        fresh.swap(submitted);
        drop.swap(cancelled);
        stop = stopping;
      }
      for (auto& c : fresh) throttled.push_back(std::move(c));
      for (auto id : drop) cancel_now(id, "cancelled");
      if (stop) {
        std::vector<uint64_t> ids;
        for (auto& [id, c] : active) ids.push_back(id);
        for (auto id : ids) cancel_now(id, "transport stopped");
        while (!throttled.empty()) {
          auto c = std::move(throttled.front());
          throttled.pop_front();
          fail(std::move(c), "transport stopped");
        }
        return;
      }
      while (!throttled.empty() && take_token()) {
        auto c = std::move(throttled.front());
        throttled.pop_front();
        launch(std::move(c));
      }
      int running = 0;
      curl_multi_perform(multi, &running);
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi, &left))
        if (m->msg == CURLMSG_DONE) completed(m->easy_handle, m->data.result);
      int wait_ms = 1000;
      if (!throttled.empty() && opts.qps > 0) wait_ms = std::max(1, static_cast<int>(1000.0 / opts.qps));
      curl_multi_poll(multi, nullptr, 0, wait_ms, nullptr);
    }
  }

  void cancel_now(uint64_t id, const char* why) {
    if (auto it = active.find(id); it != active.end()) {
      auto c = std::move(it->second);
      active.erase(it);
      return fail(std::move(c), why);
    }
    for (auto it = throttled.begin(); it != throttled.end(); ++it)
      if ((*it)->id == id) {
        auto c = std::move(*it);
        throttled.erase(it);
        return fail(std::move(c), why);
      }
  }
};

result<std::unique_ptr<http_transport>> http_transport::create(const connection_config& conn, transport_options opts) {
  std::string where = conn.source.empty() ? "connection" : conn.source;
  if (conn.server.rfind("https://", 0) != 0 && conn.server.rfind("http://", 0) != 0)
    return error{where + ": server \"" + conn.server + "\" is not an http(s) URL"};
  if (!conn.ca_pem.empty() && count_certificates(conn.ca_pem) == 0)
    return error{where + ": certificate-authority: no PEM certificate in it"};
  if (!conn.client_cert_pem.empty() && count_certificates(conn.client_cert_pem) == 0)
    return error{where + ": client-certificate: no PEM certificate in it"};
  if (!conn.client_key_pem.empty() && !parses_as_key(conn.client_key_pem))
    return error{where + ": client-key: not a PEM private key"};
  if (opts.qps < 0 || opts.burst < 0) return error{"clientConnection: qps and burst must not be negative"};
  global_init();
  auto p = std::make_unique<impl>();
  p->conn = conn;
  // The server URL without a trailing slash: request paths start with one.
  while (!p->conn.server.empty() && p->conn.server.back() == '/') p->conn.server.pop_back();
  p->opts = opts;
  if (!conn.tls_server_name.empty()) {
    // scheme://host[:port] -> host and port (IPv6 hosts stay bracketed, as CONNECT_TO wants them).
    std::string rest = p->conn.server.substr(p->conn.server.find("://") + 3);
    std::string scheme = p->conn.server.substr(0, p->conn.server.find("://"));
    std::string authority = rest.substr(0, rest.find('/'));
    std::string host = authority, port = scheme == "https" ? "443" : "80";
    size_t colon = authority.rfind(':');
    if (colon != std::string::npos && authority.find(']', colon) == std::string::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    std::string path = rest.size() > authority.size() ? rest.substr(authority.size()) : "";
    p->tls_name_server = scheme + "://" + conn.tls_server_name + ":" + port + path;
    p->connect_to = curl_slist_append(nullptr, (conn.tls_server_name + ":" + port + ":" + host + ":" + port).c_str());
  }
  p->token = conn.token;
  p->tokens = std::max(1, opts.burst);
  p->multi = curl_multi_init();
  if (!p->multi) return error{"cannot create a curl multi handle"};
  curl_multi_setopt(p->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  curl_multi_setopt(p->multi, CURLMOPT_MAX_HOST_CONNECTIONS, opts.max_host_connections);
  auto* raw = p.get();
  p->io = std::thread([raw] { raw->run(); });
  return std::unique_ptr<http_transport>(new http_transport(std::move(p)));
}

http_transport::http_transport(std::unique_ptr<impl> p) : p_(std::move(p)) {}

http_transport::~http_transport() {
  {
    std::lock_guard<std::mutex> lock(p_->mu);
    p_->stopping = true;
  }
  curl_multi_wakeup(p_->multi);
  if (p_->io.joinable()) p_->io.join();
}

uint64_t http_transport::start(http_request req, http_callbacks cb) {
  auto c = std::make_unique<impl::call>();
  c->id = ++p_->next_id;
  c->req = std::move(req);
  c->cb = std::move(cb);
  uint64_t id = c->id;
  {
    std::lock_guard<std::mutex> lock(p_->mu);
    p_->submitted.push_back(std::move(c));
  }
  curl_multi_wakeup(p_->multi);
  return id;
}

void http_transport::cancel(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(p_->mu);
    p_->cancelled.push_back(id);
  }
  curl_multi_wakeup(p_->multi);
}

const std::string& http_transport::server() const { return p_->conn.server; }
uint64_t http_transport::started() const { return p_->started; }
uint64_t http_transport::connections_opened() const { return p_->connections; }

}  // namespace kas::api

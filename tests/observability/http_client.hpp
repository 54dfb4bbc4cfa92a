#pragma once
// Test-side HTTP: libcurl for well-formed requests, a raw socket for misbehaving clients.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include <curl/curl.h>

namespace kas::obs::testing {

struct http_reply {
  long code = 0;  // 0 when the transfer failed
  std::string body;
  std::string content_type;
  std::string error;
};

inline size_t append_body(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// method: "GET", "HEAD" or anything else sent as a custom request without a body.
inline http_reply http_request(const std::string& url, const std::string& method = "GET", long timeout_ms = 5000) {
  static const bool init = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  (void)init;
  http_reply r;
  CURL* c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  if (method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  else if (method != "GET") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.code);
    char* ct = nullptr;
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    if (ct) r.content_type = ct;
  } else {
    r.error = curl_easy_strerror(rc);
  }
  curl_easy_cleanup(c);
  return r;
}

// Connected TCP socket to 127.0.0.1:port with a receive timeout; -1 on failure.
inline int raw_connect(uint16_t port, int recv_timeout_ms = 3000) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{recv_timeout_ms / 1000, (recv_timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

inline void raw_send(int fd, const std::string& s) { (void)::send(fd, s.data(), s.size(), MSG_NOSIGNAL); }

// Reads until EOF, error or timeout.
inline std::string raw_read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace kas::obs::testing

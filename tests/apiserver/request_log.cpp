// See request_log.hpp.
#include "tests/apiserver/request_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "messages/codec.hpp"

namespace kas::testapi {

namespace {

int g_fd = -1;

std::string_view header_of(const h2o_req_t* req, const h2o_token_t* token) {
  ssize_t i = h2o_find_header(&req->headers, token, -1);
  if (i < 0) return {};
  const h2o_iovec_t& v = req->headers.entries[i].value;
  return {v.base, v.len};
}

void member(std::string& out, const char* key, std::string_view value) {
  if (out.size() > 1) out += ',';
  codec::append_json_string(out, key);
  out += ':';
  codec::append_json_string(out, value);
}

}  // namespace

bool open_request_log(const std::string& path, std::string& err) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    err = "--request-log " + path + ": " + std::strerror(errno);
    return false;
  }
  g_fd = fd;
  return true;
}

void log_request(const h2o_req_t* req) {
  if (g_fd < 0) return;
  std::string_view full(req->path.base, req->path.len);
  size_t q = req->query_at;
  std::string line = "{";
  member(line, "userAgent", header_of(req, H2O_TOKEN_USER_AGENT));
  member(line, "method", std::string_view(req->method.base, req->method.len));
  member(line, "path", q == SIZE_MAX ? full : full.substr(0, q));
  member(line, "query", q == SIZE_MAX ? std::string_view{} : full.substr(q + 1));
  line += "}\n";
  // One write per line: O_APPEND keeps lines whole. A short write (disk full) is not retried; the
  // checker then fails on the truncated line, which is the honest outcome.
  ssize_t n = ::write(g_fd, line.data(), line.size());
  (void)n;
}

}  // namespace kas::testapi

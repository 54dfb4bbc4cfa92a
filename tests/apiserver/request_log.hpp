#pragma once
// --request-log FILE: one JSON line per request the test apiserver receives, written before it is
// authenticated or routed:
//   {"userAgent":"kube-actor-scheduler","method":"GET","path":"/api/v1/pods","query":"limit=500"}
// tests/deploy/rbac_coverage.py reads these lines, maps each to kube-apiserver's RequestInfo
// (verb, API group, resource, subresource, namespace, name) and checks it against deploy/'s RBAC
// rules. Each line is one write(2) to a file opened with O_APPEND, so the file is complete however
// the server ends (SIGTERM, SIGKILL) and never holds half a line.
#define H2O_USE_LIBUV 0
extern "C" {
#include <h2o.h>
}

#include <string>

namespace kas::testapi {

// Opens (truncates) the log; false with `err` set when it cannot. Without a call nothing is logged.
bool open_request_log(const std::string& path, std::string& err);
// Appends the request's line (no-op when no log is open).
void log_request(const h2o_req_t* req);

}  // namespace kas::testapi

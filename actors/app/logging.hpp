#pragma once
// Logging for the command-line front end: spdlog to stderr (stdout carries the command's output).
//
// Verbosity follows kube-scheduler's -v: 0-1 warnings and errors; 2 scheduling decisions
// ("Successfully bound pod to node", "Unable to schedule pod", at spdlog debug); 4 and more the
// per-extension-point timings (spdlog trace).
//
// --logging-format: "text" (default) or "json": one JSON object per line,
//   {"ts":"2024-05-01T12:00:00.123456Z","level":"debug","msg":"Successfully bound pod to node","pod":"default/a","node":"n1"}
// Messages are written klog-style, `message key="value" key2="value2"`; in JSON the trailing
// key="value" pairs become fields.
#include <string>

namespace kas {

void set_log_verbosity(int v);

// false for a format other than text or json.
bool set_log_format(const std::string& format);

// The JSON line for one message (exposed for tests).
std::string json_log_fields(const std::string& payload);

}  // namespace kas

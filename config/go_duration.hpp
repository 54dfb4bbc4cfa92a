#pragma once
// Go's time.ParseDuration, for the metav1.Duration fields of KubeSchedulerConfiguration
// (leaderElection.leaseDuration, renewDeadline, retryPeriod): a sequence of decimal numbers, each
// with an optional fraction and a unit ("300ms", "1.5h", "2h45m"; units ns, us, µs, ms, s, m, h),
// an optional sign, and "0" alone. Errors carry Go's own text, e.g. `time: missing unit in
// duration "15"`, so a config error reads as kube-scheduler's would.
#include <chrono>
#include <string_view>

#include "messages/result.hpp"

namespace kas {

result<std::chrono::nanoseconds> parse_go_duration(std::string_view text);

}  // namespace kas

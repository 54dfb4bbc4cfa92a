#pragma once
// Sets obs::recording for one test and puts the previous value back when the test ends, failed
// assertions included, so the process-wide switch never leaks into the next test whatever the order.
#include "observability/metrics.hpp"

namespace kas::test {

class recording_guard {
public:
  explicit recording_guard(bool on) : before_(obs::recording()) { obs::set_recording(on); }
  ~recording_guard() { obs::set_recording(before_); }
  recording_guard(const recording_guard&) = delete;
  recording_guard& operator=(const recording_guard&) = delete;

private:
  bool before_;
};

}  // namespace kas::test

#pragma once
// How a cycle ends, shared by every stage that can end one (driver, permit coordinator, binder):
// success reports Scheduled and tells the queue the pod is done; failure undoes what was reserved
// (Unreserve in reverse order, forget the assumed pod), records FailedScheduling and requeues.
#include "actors/handles.hpp"

namespace kas {

struct failure_report {
  queued_pod_ptr pod;
  fw::status result;
  std::string message;  // the FailedScheduling message
  std::set<std::string_view> unschedulable_plugins;
  std::set<std::string_view> pending_plugins;
  uint64_t cycle = 0;
  // When this scheduling attempt started (the pod's pop): scheduler_scheduling_attempt_duration_seconds
  // observes now - started. Left at the epoch, the attempt is counted but its duration is not observed.
  std::chrono::steady_clock::time_point started{};
};

void report_failure(caf::local_actor* self, const pipeline& p, failure_report r);

// Undo Reserve for a pod past assume, then report the failure.
void abort_reserved(caf::local_actor* self, const pipeline& p, cycle_ctx& ctx, const fw::status& s,
                    const std::string& message);

// The binding cycle succeeded (kube's bindingCycle end): counts the attempt as scheduled, observes the
// attempt duration from ctx.started and the SLI from the first attempt, records Scheduled and tells
// the queue the pod is done.
void report_scheduled(caf::local_actor* self, const pipeline& p, const cycle_ctx& ctx);

}  // namespace kas

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
};

void report_failure(caf::local_actor* self, const pipeline& p, failure_report r);

// Undo Reserve for a pod past assume, then report the failure.
void abort_reserved(caf::local_actor* self, const pipeline& p, cycle_ctx& ctx, const fw::status& s,
                    const std::string& message);

void report_scheduled(caf::local_actor* self, const pipeline& p, const cycle_ctx& ctx);

}  // namespace kas

#pragma once
// How a cycle ends, shared by every stage that can end one (driver, permit coordinator, binder):
// success reports Scheduled and tells the queue the pod is done; failure undoes what was reserved
// (Unreserve in reverse order, forget the assumed pod), records FailedScheduling and requeues.
#include "actors/handles.hpp"

namespace kas {

// Counts the failed attempt, records FailedScheduling and hands the failure to the queue.
void report_failure(caf::local_actor* self, const pipeline& p, failure f);

// Undo Reserve for a pod past assume, then report the failure.
void abort_reserved(caf::local_actor* self, const pipeline& p, cycle_ctx& ctx, const fw::status& s,
                    const std::string& message);

// The binding cycle succeeded (kube's bindingCycle end): counts the attempt as scheduled, observes the
// attempt duration from ctx.started and the SLI from the first attempt, records Scheduled and tells
// the queue the pod is done.
void report_scheduled(caf::local_actor* self, const pipeline& p, const cycle_ctx& ctx);

}  // namespace kas

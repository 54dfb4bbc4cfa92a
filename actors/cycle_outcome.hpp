#pragma once
// How a cycle ends, shared by every stage that can end one (driver, permit coordinator, binder):
// success reports Scheduled and tells the queue the pod is done; failure undoes what was reserved
// (Unreserve in reverse order, forget the assumed pod), records FailedScheduling and requeues.
#include "actors/handles.hpp"

namespace kas {

// Counts the failed attempt, records FailedScheduling and hands the failure to the queue.
void report_failure(caf::local_actor* self, const pipeline& p, failure f);

// Where a pod past assume failed: Reserve or Permit in the scheduling cycle, or the binding cycle
// (WaitOnPermit, PreBind, Bind), whose forget also moves the pods the assumed one kept out.
enum class failed_in { scheduling_cycle, binding_cycle };

// Undo Reserve for a pod past assume, then report the failure. `plugins` are added to the plugins
// that rejected it; `gang_rejection` marks a failure the permit coordinator made for a whole gang.
void abort_reserved(caf::local_actor* self, const pipeline& p, cycle_ctx& ctx, const fw::status& s,
                    const std::string& message, failed_in where, std::set<std::string_view> plugins = {},
                    bool gang_rejection = false);

// What a binder's successful binding cycles report, held until the binder's mailbox is empty (or
// `limit` wait) and then sent as one message per receiver: batches bounded by the binder's queue,
// never by a timer. One binding alone is reported at the end of its own handler, as before.
struct binding_reports {
  static constexpr size_t limit = 128;
  std::vector<std::string> finished;  // to the cache: the bindings finished (assumed-pod expiry)
  std::vector<pod_outcome> outcomes;  // to the recorder: Scheduled
  std::vector<std::string> done;      // to the queue: the pods leave it
  bool empty() const { return done.empty(); }
  // Sends what is held and clears it. The recorder hears before the queue, so a quiescent queue
  // means every outcome reached the recorder (the order the bench's collection relies on).
  void send(const pipeline& p);
};

// The binding cycle succeeded (kube's bindingCycle end): counts the attempt as scheduled, observes the
// attempt duration from ctx.started and the SLI from the first attempt, and adds to `out` the
// finished binding, the Scheduled outcome and the pod's done.
void report_scheduled(const pipeline& p, const cycle_ctx& ctx, binding_reports& out);

}  // namespace kas

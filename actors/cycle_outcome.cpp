#include "actors/cycle_outcome.hpp"

#include "spdlog/spdlog.h"

namespace kas {

namespace {

std::chrono::steady_clock::duration since(std::chrono::steady_clock::time_point t) {
  if (t == std::chrono::steady_clock::time_point{}) return std::chrono::steady_clock::duration(-1);
  return std::chrono::steady_clock::now() - t;
}

}  // namespace

void report_failure(caf::local_actor*, const pipeline& p, failure r) {
  const auto& pod = *r.pod->pod;
  bool is_error = r.result.get_code() == fw::code::error;
  // kube's handleSchedulingFailure: a rejected status is "unschedulable", anything else "error".
  p.series->attempt(pod.scheduler_name, is_error ? attempt_result::error : attempt_result::unschedulable,
                    since(r.started));
  pod_outcome o;
  o.ns = pod.ns;
  o.name = pod.name;
  o.uid = pod.uid;
  o.status = is_error ? "Error" : "Unschedulable";
  // A gang member's own failure names its group (a gang's rejection by the coordinator already does).
  if (r.pod->gang && r.pod->gang->group && !r.gang_rejection)
    r.message = "pod group " + r.pod->gang->group->display() + ": " + r.message;
  o.message = r.message;
  o.attempts = r.pod->attempts;
  // kube's log lines: a rejection is "no fit", an error (a failed binding, say) is logged as one.
  if (is_error)
    spdlog::error("Error scheduling pod; retrying err=\"{}\" pod=\"{}/{}\"", r.message, pod.ns, pod.name);
  else
    spdlog::debug("Unable to schedule pod; no fit; waiting pod=\"{}/{}\" err=\"{}\"", pod.ns, pod.name, r.message);
  caf::anon_send(p.recorder, record_atom::value, std::move(o));
  // A gang member's own failure (not one the coordinator made): the coordinator decides the gang.
  // (The gang's turn cannot end meanwhile: its members waiting at Permit are still in flight.)
  if (r.pod->gang && !r.gang_rejection)
    caf::anon_send(p.permit, gang_atom::value,
                   gang_member_failed{r.pod->gang, pod.uid, r.unschedulable_plugins, r.message, r.forgotten != nullptr});
  caf::anon_send(p.queue, requeue_atom::value, std::move(r));
}

void abort_reserved(caf::local_actor* self, const pipeline& p, cycle_ctx& ctx, const fw::status& s,
                    const std::string& message, failed_in where, std::set<std::string_view> plugins,
                    bool gang_rejection) {
  ctx.fwk->run_unreserve(ctx.state, *ctx.assumed, ctx.node);
  // Urgent, as the driver's snapshot requests are: the cache hears the forget before any snapshot
  // asked for by a cycle the freed room let the queue start. (A normal message could be passed by
  // such a request, and that cycle would find the room still taken, with no event left to retry it.)
  caf::anon_send<caf::message_priority::high>(p.cache, forget_atom::value, ctx.assumed->uid);
  failure r;
  r.pod = ctx.queued;
  r.result = s;
  r.message = message;
  r.unschedulable_plugins = std::move(plugins);
  if (s.is_rejected() && !s.plugin().empty()) r.unschedulable_plugins.insert(s.plugin());
  r.gang_rejection = gang_rejection;
  r.cycle = ctx.cycle;
  r.started = ctx.started;
  if (where == failed_in::binding_cycle) r.forgotten = ctx.assumed;
  report_failure(self, p, std::move(r));
}

void binding_reports::send(const pipeline& p) {
  if (!finished.empty()) caf::anon_send(p.cache, finished_atom::value, std::move(finished));
  if (!outcomes.empty()) caf::anon_send(p.recorder, record_atom::value, std::move(outcomes));
  if (!done.empty()) caf::anon_send(p.queue, done_atom::value, std::move(done));
  finished.clear();
  outcomes.clear();
  done.clear();
}

void report_scheduled(const pipeline& p, const cycle_ctx& ctx, binding_reports& out) {
  const auto& pod = *ctx.assumed;
  // kube's bindingCycle, after Bind: PodScheduled, PodSchedulingAttempts, PodSchedulingSLIDuration.
  p.series->attempt(pod.scheduler_name, attempt_result::scheduled, since(ctx.started));
  if (ctx.queued->initial_attempt_ns != 0) {
    auto first = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ctx.queued->initial_attempt_ns));
    p.series->pod_scheduled(ctx.queued->attempts, std::chrono::steady_clock::now() - first);
  } else {
    p.series->kube().pod_scheduling_attempts.observe(static_cast<double>(ctx.queued->attempts));
  }
  pod_outcome o;
  o.ns = pod.ns;
  o.name = pod.name;
  o.uid = pod.uid;
  o.node = ctx.node;
  o.status = "Scheduled";
  o.message = "Successfully assigned " + pod.ns + "/" + pod.name + " to " + ctx.node;
  o.attempts = ctx.queued->attempts;
  spdlog::debug("Successfully bound pod to node pod=\"{}/{}\" node=\"{}\"", pod.ns, pod.name, ctx.node);
  out.finished.push_back(pod.uid);
  out.outcomes.push_back(std::move(o));
  out.done.push_back(pod.uid);
}

}  // namespace kas

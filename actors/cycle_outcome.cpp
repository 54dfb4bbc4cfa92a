#include "actors/cycle_outcome.hpp"

#include "spdlog/spdlog.h"

namespace kas {

void report_failure(caf::local_actor*, const pipeline& p, failure_report r) {
  const auto& pod = *r.pod->pod;
  pod_outcome o;
  o.ns = pod.ns;
  o.name = pod.name;
  o.uid = pod.uid;
  o.status = r.result.get_code() == fw::code::error ? "Error" : "Unschedulable";
  o.message = r.message;
  o.attempts = r.pod->attempts;
  spdlog::debug("FailedScheduling {}/{}: {}", pod.ns, pod.name, r.message);
  caf::anon_send(p.recorder, record_atom::value, std::move(o));
  failure f;
  f.pod = r.pod;
  f.result = r.result;
  f.message = std::move(r.message);
  f.unschedulable_plugins = std::move(r.unschedulable_plugins);
  f.pending_plugins = std::move(r.pending_plugins);
  f.cycle = r.cycle;
  caf::anon_send(p.queue, requeue_atom::value, std::move(f));
}

void abort_reserved(caf::local_actor* self, const pipeline& p, cycle_ctx& ctx, const fw::status& s,
                    const std::string& message) {
  ctx.fwk->run_unreserve(ctx.state, *ctx.assumed, ctx.node);
  caf::anon_send(p.cache, forget_atom::value, ctx.assumed->uid);
  failure_report r;
  r.pod = ctx.queued;
  r.result = s;
  r.message = message;
  if (s.is_rejected() && !s.plugin().empty()) r.unschedulable_plugins.insert(s.plugin());
  r.cycle = ctx.cycle;
  report_failure(self, p, std::move(r));
}

void report_scheduled(caf::local_actor*, const pipeline& p, const cycle_ctx& ctx) {
  const auto& pod = *ctx.assumed;
  pod_outcome o;
  o.ns = pod.ns;
  o.name = pod.name;
  o.uid = pod.uid;
  o.node = ctx.node;
  o.status = "Scheduled";
  o.message = "Successfully assigned " + pod.ns + "/" + pod.name + " to " + ctx.node;
  o.attempts = ctx.queued->attempts;
  spdlog::debug("Scheduled {}/{} on {}", pod.ns, pod.name, ctx.node);
  caf::anon_send(p.recorder, record_atom::value, std::move(o));
  caf::anon_send(p.queue, done_atom::value, pod.uid);
}

}  // namespace kas

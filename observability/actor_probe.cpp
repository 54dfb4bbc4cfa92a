#include "observability/actor_probe.hpp"

namespace kas::obs {

namespace {

family& depth_family(metrics_registry& r) {
  return r.add_family({"actor_mailbox_depth", "Messages waiting in the actor's mailbox, sampled by the actor itself.",
                       metric_kind::gauge, {"actor"}, {}});
}

family& processed_family(metrics_registry& r) {
  return r.add_family({"actor_messages_processed_total", "Messages the actor has handled.", metric_kind::counter,
                       {"actor"}, {}});
}

family& seconds_family(metrics_registry& r) {
  return r.add_family({"actor_message_processing_seconds",
                       "Time the actor spent inside a message handler; timed messages may be sampled 1-in-N and "
                       "weighted by N.",
                       metric_kind::histogram, {"actor"}, actor_processing_buckets()});
}

}  // namespace

std::vector<double> actor_processing_buckets() {
  return {1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3,
          2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5};
}

actor_probe::actor_probe(metrics_registry& r, const std::string& actor, uint32_t timing_sample_every)
    : actor_(actor),
      depth_(depth_family(r).gauge_series({actor})),
      processed_(processed_family(r).counter_series({actor})),
      seconds_(seconds_family(r).histogram_series({actor})),
      every_(timing_sample_every == 0 ? 1 : timing_sample_every),
      countdown_(every_) {}

void actor_probe::record(size_t mailbox_size, std::chrono::steady_clock::duration took) {
  if (!recording()) return;
  depth_.set(static_cast<double>(mailbox_size));
  processed_.inc_single_writer();
  seconds_.observe_duration(took);
}

gauge& pool_workers_gauge(metrics_registry& r, const std::string& pool) {
  return r
      .add_family({"actor_pool_workers", "Workers in the actor pool.", metric_kind::gauge, {"pool"}, {}})
      .gauge_series({pool});
}

}  // namespace kas::obs

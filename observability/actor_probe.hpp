#pragma once
// Per-actor metrics, the ones that show which pipeline stage is the bottleneck:
//   actor_mailbox_depth{actor}               gauge: mailbox size sampled inside the actor's own handler
//                                            (CAF 0.17 allows it nowhere else); a depth that keeps
//                                            growing marks the stage that cannot keep up.
//   actor_messages_processed_total{actor}    counter: every message handled, exact.
//   actor_message_processing_seconds{actor}  histogram: time inside the handler. rate(_sum) is the share
//                                            of one core the actor keeps busy; near 1 means saturated.
//   actor_pool_workers{pool}                 gauge: configured workers of a pool (filter_score_worker-*).
//
// Ownership rule: one actor_probe per actor instance, written only by that actor (CAF never runs one
// actor's handlers concurrently). The scrape thread only reads.
//
// Cost: begin() + ~scope is relaxed loads of the recording switch and two relaxed stores (depth, count:
// the probe has one writer) and, for a timed message, two steady_clock::now() calls plus a histogram
// observe. Measured per message on the 2-core dev VM (-O2): timing every message ~115 ns, 1-in-8
// ~15-19 ns, 1-in-16 ~12 ns, 1-in-64 ~4-6 ns, against ~270 ns for a CAF message; so the default times
// 1 message in 16. A timed message is recorded with weight N, so _count still tracks messages and _sum
// estimates total busy time without bias.
//
// With recording off (obs::set_recording(false)) begin() returns an inert scope after one relaxed load:
// no clock read, no mailbox read, no atomic write, and the 1-in-N countdown stands still.
#include <chrono>
#include <cstdint>
#include <string>

#include "observability/metrics.hpp"

namespace kas::obs {

// 1µs .. 2.5s in 1-2.5-5 steps: a filter kernel takes microseconds, a bind round trip milliseconds.
std::vector<double> actor_processing_buckets();

class actor_probe {
public:
  static constexpr uint32_t default_timing_sample_every = 16;

  // Times one message in `timing_sample_every` (0 is treated as 1; 1 times every message). Registers the
  // series in `r`; the registry must outlive the probe.
  actor_probe(metrics_registry& r, const std::string& actor,
              uint32_t timing_sample_every = default_timing_sample_every);
  actor_probe(const actor_probe&) = delete;
  actor_probe& operator=(const actor_probe&) = delete;

  // Lives for one handler invocation; its destructor counts the message and records the time.
  class scope {
  public:
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    ~scope() {
      if (!p_) return;
      p_->processed_.inc_single_writer();
      if (timed_) p_->seconds_.observe(std::chrono::duration<double>(clock::now() - start_).count(), p_->every_);
    }

  private:
    friend class actor_probe;
    using clock = std::chrono::steady_clock;
    scope() : p_(nullptr), timed_(false) {}  // inert: recording is off
    scope(actor_probe* p, bool timed) : p_(p), timed_(timed) {
      if (timed_) start_ = clock::now();
    }
    actor_probe* p_;
    bool timed_;
    clock::time_point start_{};
  };

  // At the top of a handler: `auto t = probe.begin_handler(self);`. Reads self->mailbox().size() only
  // while recording: in CAF 0.17 that call drains the mailbox's lock-free stack (an atomic exchange).
  template <class SelfPointer>
  [[nodiscard]] scope begin_handler(const SelfPointer& self) {
    if (!recording()) return scope();
    return begin(self->mailbox().size());
  }

  // The same with a mailbox size the caller already has.
  [[nodiscard]] scope begin(size_t mailbox_size) {
    if (!recording()) return scope();
    depth_.set(static_cast<double>(mailbox_size));
    bool timed = --countdown_ == 0;
    if (timed) countdown_ = every_;
    return scope(this, timed);
  }

  // For code paths that measure themselves (e.g. a batch loop); check obs::recording() before reading
  // the clock for it.
  void record(size_t mailbox_size, std::chrono::steady_clock::duration took);

  const std::string& actor() const { return actor_; }

private:
  std::string actor_;
  gauge& depth_;
  counter& processed_;
  histogram& seconds_;
  uint32_t every_;
  uint32_t countdown_;
};

// The actor_pool_workers{pool} series; set it when a pool is (re)sized.
gauge& pool_workers_gauge(metrics_registry& r, const std::string& pool);

}  // namespace kas::obs

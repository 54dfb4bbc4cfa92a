#pragma once
// Metric series and the registry that renders them for Prometheus.
//
// Ownership rule: a series (counter, gauge, histogram) is created once, on the setup path, through
// metrics_registry, and lives as long as the registry. An actor keeps the returned reference and writes it
// on its hot path with relaxed atomics only: no lock, no allocation, no lookup by label. The HTTP thread
// reads every series at scrape time under the family's mutex, which writers never take.
//
// Consistency: a scrape reads each atomic on its own, so a histogram's _sum may trail its buckets by the
// observations in flight. Prometheus tolerates this; every value is monotonic where it must be.
//
// Switch: obs::set_recording(false) turns every write below into a no-op (one relaxed load and a
// predicted branch), for measuring what recording costs and for runs that want none of it. Reads and
// the exposition still work; series simply stop moving. It is process-wide because series are: set it
// before the actors start (ActorRuntimeConfiguration recordMetrics).
//
// Misuse (wrong number of label values, a name that breaks the exposition format, one name declared twice
// with different shapes) is a programming error with constant inputs. It aborts with a message naming the
// family, in release builds too, because a silently wrong exposition would break dashboards unnoticed.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

namespace kas::obs {

namespace detail {
extern std::atomic<bool> recording_on;  // constant-initialized to true
}  // namespace detail

// Whether series record at all (default true). Relaxed: a writer that still sees the old value for a
// moment records or skips one more value, which no reader can tell apart from timing.
inline bool recording() { return detail::recording_on.load(std::memory_order_relaxed); }
void set_recording(bool on);

// A monotonic count. inc() is one relaxed fetch_add, correct with several writers.
class alignas(64) counter {
public:
  void inc(uint64_t n = 1) {
    if (!recording()) return;
    v_.fetch_add(n, std::memory_order_relaxed);
  }
  // For a series with exactly one writer: a relaxed load and store, no locked instruction (~1 ns
  // instead of ~8 ns). Concurrent writers would lose counts; readers still see a valid value.
  void inc_single_writer(uint64_t n = 1) {
    if (!recording()) return;
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

private:
  std::atomic<uint64_t> v_{0};
};

// A value that goes up and down. set() is a plain relaxed store; add() is a CAS loop.
class alignas(64) gauge {
public:
  void set(double v) {
    if (!recording()) return;
    v_.store(v, std::memory_order_relaxed);
  }
  void add(double d);
  double value() const { return v_.load(std::memory_order_relaxed); }

private:
  std::atomic<double> v_{0.0};
};

// Fixed upper bounds (le semantics: v lands in the first bucket whose bound is >= v; +Inf is implicit).
// observe() is a binary search plus two relaxed atomic adds; _count is derived from the buckets at
// scrape time, so buckets and count never disagree.
class alignas(64) histogram {
public:
  // bounds: strictly increasing and finite; a trailing +Inf is dropped. Aborts otherwise.
  explicit histogram(std::vector<double> bounds);
  histogram(const histogram&) = delete;
  histogram& operator=(const histogram&) = delete;

  void observe(double v) { observe(v, 1); }
  // One observation standing for `weight` identical ones (used by 1-in-N sampling, see actor_probe).
  void observe(double v, uint64_t weight);
  void observe_duration(std::chrono::steady_clock::duration d) {
    observe(std::chrono::duration<double>(d).count());
  }

  const std::vector<double>& bounds() const { return bounds_; }
  // Per-bucket (not cumulative) counts; the last entry is the +Inf bucket.
  std::vector<uint64_t> bucket_counts() const;
  uint64_t count() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<double> sum_{0.0};
};

enum class metric_kind { counter, gauge, histogram };

struct family_spec {
  std::string name;
  std::string help;  // rendered verbatim on the # HELP line
  metric_kind kind = metric_kind::counter;
  std::vector<std::string> label_names;
  std::vector<double> buckets;  // histograms only
};

// One metric family: its spec and its series keyed by label values. Series are never removed, so
// references handed out stay valid for the registry's lifetime.
class family {
public:
  explicit family(family_spec spec);
  family(const family&) = delete;
  family& operator=(const family&) = delete;

  const family_spec& spec() const { return spec_; }

  // Returns the series for these label values, creating it on first use (locks; setup path).
  counter& counter_series(const std::vector<std::string>& label_values);
  gauge& gauge_series(const std::vector<std::string>& label_values);
  histogram& histogram_series(const std::vector<std::string>& label_values);

  // The family as Prometheus sees it; empty `metric` when no series exists yet.
  prometheus::MetricFamily collect() const;

private:
  struct slot {
    std::unique_ptr<counter> c;
    std::unique_ptr<gauge> g;
    std::unique_ptr<histogram> h;
  };
  slot& slot_for(metric_kind kind, const std::vector<std::string>& label_values);

  family_spec spec_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, slot> series_;
};

class metrics_registry final : public prometheus::Collectable {
public:
  metrics_registry() = default;
  metrics_registry(const metrics_registry&) = delete;
  metrics_registry& operator=(const metrics_registry&) = delete;

  // Declares a family. Declaring the same name again with an identical spec returns the first family
  // (so two components may both declare it); a different spec under the same name aborts.
  // A family without labels gets its single series at once, so it is exposed as 0 before first use,
  // as kube's Go client does; labelled families appear once a series exists.
  family& add_family(family_spec spec);

  counter& counter_series(family& f, const std::vector<std::string>& label_values) {
    return f.counter_series(label_values);
  }
  gauge& gauge_series(family& f, const std::vector<std::string>& label_values) {
    return f.gauge_series(label_values);
  }
  histogram& histogram_series(family& f, const std::vector<std::string>& label_values) {
    return f.histogram_series(label_values);
  }

  // Families in declaration order, omitting those with no series.
  std::vector<prometheus::MetricFamily> Collect() const override;

  // Text exposition format 0.0.4, as served on /metrics.
  std::string render_text() const;

private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<family>> families_;
};

// The process-wide registry the scheduler's actors and /metrics share. Never destroyed, so actors still
// running during static destruction cannot touch a dead registry. Tests construct their own.
metrics_registry& default_registry();

// ExponentialBuckets(start, factor, count) exactly as Prometheus' Go client computes them (repeated
// multiplication), so bounds print identically to kube-scheduler's.
std::vector<double> exponential_buckets(double start, double factor, int count);

}  // namespace kas::obs

#include "observability/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include <prometheus/text_serializer.h>

namespace kas::obs {

namespace detail {
std::atomic<bool> recording_on{true};
}  // namespace detail

void set_recording(bool on) { detail::recording_on.store(on, std::memory_order_relaxed); }

namespace {

[[noreturn]] void misuse(const std::string& what) {
  std::fprintf(stderr, "kas::obs: %s\n", what.c_str());
  std::abort();
}

bool valid_metric_name(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool valid_label_name(const std::string& s) {
  if (s.empty() || s.rfind("__", 0) == 0) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

void add_double(std::atomic<double>& a, double d) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + d, std::memory_order_relaxed)) {
  }
}

bool same_spec(const family_spec& a, const family_spec& b) {
  return a.name == b.name && a.help == b.help && a.kind == b.kind && a.label_names == b.label_names &&
         a.buckets == b.buckets;
}

const char* kind_name(metric_kind k) {
  switch (k) {
    case metric_kind::counter: return "counter";
    case metric_kind::gauge: return "gauge";
    case metric_kind::histogram: return "histogram";
  }
  return "?";
}

}  // namespace

void gauge::add(double d) {
  if (!recording()) return;
  add_double(v_, d);
}

histogram::histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  if (!bounds_.empty() && std::isinf(bounds_.back()) && bounds_.back() > 0) bounds_.pop_back();
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && !(bounds_[i - 1] < bounds_[i])))
      misuse("histogram bounds must be finite and strictly increasing");
  }
  counts_.reset(new std::atomic<uint64_t>[bounds_.size() + 1]);
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void histogram::observe(double v, uint64_t weight) {
  if (!recording()) return;
  // lower_bound: first bound >= v, i.e. Prometheus' "le"; NaN and values above every bound go to +Inf.
  size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  counts_[i].fetch_add(weight, std::memory_order_relaxed);
  add_double(sum_, v * static_cast<double>(weight));
}

std::vector<uint64_t> histogram::bucket_counts() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  for (size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

uint64_t histogram::count() const {
  uint64_t n = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) n += counts_[i].load(std::memory_order_relaxed);
  return n;
}

family::family(family_spec spec) : spec_(std::move(spec)) {
  if (!valid_metric_name(spec_.name)) misuse("invalid metric name \"" + spec_.name + "\"");
  for (auto& l : spec_.label_names) {
    if (!valid_label_name(l) || (spec_.kind == metric_kind::histogram && l == "le"))
      misuse(spec_.name + ": invalid label name \"" + l + "\"");
  }
  if (spec_.kind != metric_kind::histogram && !spec_.buckets.empty())
    misuse(spec_.name + ": buckets given for a " + kind_name(spec_.kind));
  if (spec_.kind == metric_kind::histogram) histogram{spec_.buckets};  // validates the bounds now
}

family::slot& family::slot_for(metric_kind kind, const std::vector<std::string>& label_values) {
  if (kind != spec_.kind)
    misuse(spec_.name + ": is a " + kind_name(spec_.kind) + ", asked for a " + kind_name(kind) + " series");
  if (label_values.size() != spec_.label_names.size())
    misuse(spec_.name + ": " + std::to_string(spec_.label_names.size()) + " label values expected, got " +
           std::to_string(label_values.size()));
  auto& s = series_[label_values];
  switch (kind) {
    case metric_kind::counter:
      if (!s.c) s.c = std::make_unique<counter>();
      break;
    case metric_kind::gauge:
      if (!s.g) s.g = std::make_unique<gauge>();
      break;
    case metric_kind::histogram:
      if (!s.h) s.h = std::make_unique<histogram>(spec_.buckets);
      break;
  }
  return s;
}

counter& family::counter_series(const std::vector<std::string>& label_values) {
  std::lock_guard lock(mu_);
  return *slot_for(metric_kind::counter, label_values).c;
}

gauge& family::gauge_series(const std::vector<std::string>& label_values) {
  std::lock_guard lock(mu_);
  return *slot_for(metric_kind::gauge, label_values).g;
}

histogram& family::histogram_series(const std::vector<std::string>& label_values) {
  std::lock_guard lock(mu_);
  return *slot_for(metric_kind::histogram, label_values).h;
}

prometheus::MetricFamily family::collect() const {
  prometheus::MetricFamily mf;
  mf.name = spec_.name;
  mf.help = spec_.help;
  switch (spec_.kind) {
    case metric_kind::counter: mf.type = prometheus::MetricType::Counter; break;
    case metric_kind::gauge: mf.type = prometheus::MetricType::Gauge; break;
    case metric_kind::histogram: mf.type = prometheus::MetricType::Histogram; break;
  }
  std::lock_guard lock(mu_);
  mf.metric.reserve(series_.size());
  for (auto& [values, s] : series_) {
    prometheus::ClientMetric m;
    for (size_t i = 0; i < values.size(); ++i) m.label.push_back({spec_.label_names[i], values[i]});
    switch (spec_.kind) {
      case metric_kind::counter: m.counter.value = static_cast<double>(s.c->value()); break;
      case metric_kind::gauge: m.gauge.value = s.g->value(); break;
      case metric_kind::histogram: {
        auto counts = s.h->bucket_counts();
        uint64_t cumulative = 0;
        for (size_t i = 0; i < counts.size(); ++i) {
          cumulative += counts[i];
          double bound = i < s.h->bounds().size() ? s.h->bounds()[i] : std::numeric_limits<double>::infinity();
          m.histogram.bucket.push_back({cumulative, bound});
        }
        m.histogram.sample_count = cumulative;
        m.histogram.sample_sum = s.h->sum();
        break;
      }
    }
    mf.metric.push_back(std::move(m));
  }
  return mf;
}

family& metrics_registry::add_family(family_spec spec) {
  std::lock_guard lock(mu_);
  for (auto& f : families_) {
    if (f->spec().name != spec.name) continue;
    if (!same_spec(f->spec(), spec)) misuse(spec.name + ": declared twice with different help, type, labels or buckets");
    return *f;
  }
  families_.push_back(std::make_unique<family>(std::move(spec)));
  family& f = *families_.back();
  if (f.spec().label_names.empty()) {
    switch (f.spec().kind) {
      case metric_kind::counter: f.counter_series({}); break;
      case metric_kind::gauge: f.gauge_series({}); break;
      case metric_kind::histogram: f.histogram_series({}); break;
    }
  }
  return f;
}

std::vector<prometheus::MetricFamily> metrics_registry::Collect() const {
  std::vector<const family*> fams;
  {
    std::lock_guard lock(mu_);
    for (auto& f : families_) fams.push_back(f.get());
  }
  std::vector<prometheus::MetricFamily> out;
  out.reserve(fams.size());
  for (auto* f : fams) {
    auto mf = f->collect();
    if (!mf.metric.empty()) out.push_back(std::move(mf));
  }
  return out;
}

std::string metrics_registry::render_text() const {
  return prometheus::TextSerializer{}.Serialize(Collect());
}

metrics_registry& default_registry() {
  static auto* r = new metrics_registry();
  return *r;
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  if (count < 1 || start <= 0 || factor <= 1) misuse("exponential_buckets: need count >= 1, start > 0, factor > 1");
  std::vector<double> b(static_cast<size_t>(count));
  for (auto& x : b) {
    x = start;
    start *= factor;
  }
  return b;
}

}  // namespace kas::obs

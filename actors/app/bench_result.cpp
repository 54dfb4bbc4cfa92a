#include "actors/app/bench_result.hpp"

#include <algorithm>
#include <numeric>

namespace kas {

namespace {

// scheduler_perf's throughputCollector: throughputs[int(math.Ceil(float64(length*P)/100))-1].
// In integers, so a 100-sample set never lands one rank off through rounding.
double nearest_rank(const std::vector<double>& sorted, size_t pct) {
  size_t rank = (sorted.size() * pct + 99) / 100;  // ceil(len*P/100), >= 1 for len, P >= 1
  return sorted[rank - 1];
}

}  // namespace

percentiles summarize(std::vector<double>& v) {
  percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.samples = v.size();
  p.avg = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  p.p50 = nearest_rank(v, 50);
  p.p90 = nearest_rank(v, 90);
  p.p95 = nearest_rank(v, 95);
  p.p99 = nearest_rank(v, 99);
  p.max = v.back();
  return p;
}

}  // namespace kas

#include "plugins/volume_binding/scorer.hpp"

#include <cmath>

namespace kas::plugins {

namespace {
constexpr int64_t max_utilization = 100;
constexpr int64_t score_scale = 100 / 10;  // MaxNodeScore / MaxCustomPriorityScore
}  // namespace

volume_capacity_scorer::volume_capacity_scorer(const std::vector<volume_shape_point>& shape) {
  for (const auto& p : shape) points_.emplace_back(p.utilization, int64_t{p.score} * score_scale);
}

int64_t volume_capacity_scorer::shape_value(int64_t p) const {
  if (points_.empty()) return 0;
  for (size_t i = 0; i < points_.size(); ++i) {
    if (p > points_[i].first) continue;
    if (i == 0) return points_[0].second;
    const auto& [x0, y0] = points_[i - 1];
    const auto& [x1, y1] = points_[i];
    // Integer division truncating toward zero, as Go's.
    return y0 + (y1 - y0) * (p - x0) / (x1 - x0);
  }
  return points_.back().second;
}

int64_t volume_capacity_scorer::score(const class_resource_map& classes) const {
  int64_t sum = 0, weight = 0;
  for (const auto& [cls, r] : classes) {
    (void)cls;
    // Over-committed or unknown capacity counts as fully used.
    const int64_t util = r.capacity == 0 || r.requested > r.capacity ? max_utilization
                                                                      : r.requested * max_utilization / r.capacity;
    sum += shape_value(util);
    ++weight;  // every class weighs the same
  }
  if (weight == 0) return 0;
  return static_cast<int64_t>(std::llround(static_cast<double>(sum) / static_cast<double>(weight)));
}

}  // namespace kas::plugins

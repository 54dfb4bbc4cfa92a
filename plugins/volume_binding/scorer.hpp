#pragma once
// VolumeBinding's capacity scorer (kube's volumebinding/scorer.go with helper's broken linear
// function): per storage class, utilization = requested * 100 / capacity is mapped through the
// configured shape, and the node's score is the rounded mean over the classes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "plugins/volume_binding/args.hpp"

namespace kas::plugins {

struct storage_resource {
  int64_t requested = 0;
  int64_t capacity = 0;
};

// Keyed by storage class name.
using class_resource_map = std::map<std::string, storage_resource>;

class volume_capacity_scorer {
public:
  // `shape` as configured (scores in [0, 10]); scaled to [0, 100] here.
  explicit volume_capacity_scorer(const std::vector<volume_shape_point>& shape);
  // kube's BuildBrokenLinearFunction over the scaled shape.
  int64_t shape_value(int64_t utilization) const;
  int64_t score(const class_resource_map& classes) const;

private:
  std::vector<std::pair<int64_t, int64_t>> points_;  // (utilization, score in [0, 100])
};

}  // namespace kas::plugins

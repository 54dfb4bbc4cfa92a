#pragma once
// VolumeBindingArgs: decoded, defaulted (kube's v1 SetDefaults_VolumeBindingArgs) and validated
// (ValidateVolumeBindingArgsWithOptions) at the edge. Errors name the field path under `path`.
//
// `shape` belongs to the StorageCapacityScoring feature gate (alpha in v1.36, off by default):
// with the gate off, kube rejects a configured shape so that it cannot silently take effect when
// the gate flips; with it on, an absent shape defaults to {0: 10, 100: 0} (prefer free capacity).
#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"

namespace kas::plugins {

// Feature gates VolumeBinding reads (kube's feature.Features subset), at v1.36's defaults.
struct volume_binding_features {
  bool storage_capacity_scoring = false;  // StorageCapacityScoring: alpha, off
};

struct volume_shape_point {
  int32_t utilization = 0;  // [0, 100]
  int32_t score = 0;        // [0, 10], scaled to [0, 100] when scoring
};

struct volume_binding_args {
  int64_t bind_timeout_seconds = 600;
  std::vector<volume_shape_point> shape;  // empty unless StorageCapacityScoring is on
};

result<volume_binding_args> parse_volume_binding_args(const YAML::Node& args, const std::string& path,
                                                      const volume_binding_features& features = {});

}  // namespace kas::plugins

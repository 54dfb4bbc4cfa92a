#pragma once
// kube's fwk.VolumesSigner, shared by the volume plugins' SignPod: a pod is signed by its volume
// sources, so pods that differ only in their name or in the order they list their volumes share a
// signature (and a batch).
#include <algorithm>
#include <string>
#include <vector>

#include "cache/pod_info.hpp"

namespace kas::plugins::helper {

// The pod's volume sources, each written by `encode(volume)`, sorted (the order a pod lists them
// in does not matter). A volume `encode` writes as "" is left out: sources of kinds the protos do
// not declare (configMap, secret, projected, downwardAPI, ...) decode empty, and no plugin reads
// them, so pods that differ only there still sign alike.
template <class Encode>
std::vector<std::string> sorted_volume_sources(const pod_info& pod, Encode&& encode) {
  std::vector<std::string> parts;
  if (!pod.pod) return parts;
  for (const auto& v : pod.pod->spec().volumes()) {
    std::string part = encode(v);
    if (!part.empty()) parts.push_back(std::move(part));
  }
  std::sort(parts.begin(), parts.end());
  return parts;
}

// VolumeZone's and VolumeRestrictions' fragment: each volume source as JSON, followed by '\x1e'
// (JSON escapes control characters, so the separator never occurs inside a source).
void sign_volumes(const pod_info& pod, std::string& out);

}  // namespace kas::plugins::helper

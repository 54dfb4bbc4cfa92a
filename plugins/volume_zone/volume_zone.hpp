#pragma once
// VolumeZone (kube-scheduler's plugins/volumezone): a pod whose claims are bound to zonal
// PersistentVolumes may only go to nodes in those zones.
// - PreFilter: the pod's persistentVolumeClaim volumes -> their bound PVs' zone and region labels
//   (GA and beta keys; a value may list several zones joined by "__"). Unbound claims of
//   WaitForFirstConsumer classes are skipped (VolumeBinding places them); any other unbound or
//   missing object rejects the pod as unresolvable. Skip when no PV carries a topology label.
// - Filter: a node with none of the topology labels passes (single-zone clusters); otherwise each
//   PV label must be matched by the node's label of the same key, or of its GA key for a beta one.
// - QueueingHints: a WaitForFirstConsumer StorageClass added, one of the pod's claims added or
//   updated, a PV added or its topology labels changed; nodes added or relabelled.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"

namespace kas::plugins {

// One topology label of a PersistentVolume: its key and the zones (or regions) its value lists.
struct pv_topology {
  std::string pv_name;
  std::string key;
  std::vector<std::string> values;  // sorted, unique
  bool operator==(const pv_topology& o) const { return pv_name == o.pv_name && key == o.key && values == o.values; }
  bool operator!=(const pv_topology& o) const { return !(*this == o); }
};

// kube's LabelZonesToSet: the value split on "__", each part trimmed; nullopt when a part is empty.
std::optional<std::vector<std::string>> label_zones_to_set(std::string_view value);

// The PV's zone/region labels in kube's order (beta zone, beta region, GA zone, GA region); a
// label whose value does not parse is left out, as kube ignores it.
std::vector<pv_topology> pv_topologies(const pv_info& pv);

class volume_zone final : public fw::pre_filter_plugin,
                          public fw::filter_plugin,
                          public fw::enqueue_extensions,
                          public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "VolumeZone";
  static constexpr std::string_view pre_filter_key = "PreFilterVolumeZone";
  static constexpr std::string_view err_reason_conflict = "node(s) had no available volume zone";
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);

  std::string_view name() const override { return plugin_name; }
  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  std::string explain(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;
};

}  // namespace kas::plugins

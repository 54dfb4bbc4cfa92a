#pragma once
// VolumeBinding (kube-scheduler's plugins/volumebinding):
// - PreFilter: Skip for a pod without claims; every claim must exist (not Lost, not being deleted,
//   an ephemeral one owned by the pod), and no claim may be an unbound Immediate one. Sorts the
//   claims into the cycle state.
// - Filter: bound claims' volumes must exist and their node affinity admit the node; each
//   WaitForFirstConsumer claim needs a matching available volume on the node or a class that can
//   provision there (allowedTopologies, CSIStorageCapacity). The per-node choice goes into the
//   cycle state.
// - PreScore/Score: the capacity shape, only with StorageCapacityScoring (off in v1.36).
// - Reserve: turns the chosen node's plan into the PV/PVC objects to write (assumed()), so the
//   pipeline can assume them in its cache; Unreserve drops them. The plugin itself keeps nothing
//   between cycles: there is no process-wide assume cache.
// - PreBind: writes them through cluster_client::bind_volumes and waits, asynchronously, bounded
//   by bindTimeoutSeconds.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "plugins/framework/handle.hpp"
#include "plugins/framework/interfaces.hpp"
#include "plugins/volume_binding/args.hpp"
#include "plugins/volume_binding/scorer.hpp"

namespace kas::plugins {

// The API writes Reserve decided for the chosen node: what PreBind sends and what the pipeline
// assumes in its cache until the informers catch up.
struct volume_bindings {
  std::string node;
  // Volumes with spec.claimRef set to their claim (static binding).
  std::vector<std::shared_ptr<const k8s::core::PersistentVolume>> pvs;
  // Claims with volume.kubernetes.io/selected-node set (dynamic provisioning).
  std::vector<std::shared_ptr<const k8s::core::PersistentVolumeClaim>> claims;
  // The same objects compiled, ready for the cache's volume tables.
  std::vector<pv_info_ptr> compiled_pvs;
  std::vector<pvc_info_ptr> compiled_claims;
  // Names (in the pod's namespace) of the claims PreBind waits for.
  std::vector<std::string> wait_for;
};

class volume_binding final : public fw::pre_filter_plugin,
                             public fw::filter_plugin,
                             public fw::pre_score_plugin,
                             public fw::score_plugin,
                             public fw::reserve_plugin,
                             public fw::pre_bind_plugin,
                             public fw::enqueue_extensions,
                             public fw::sign_plugin {
public:
  static constexpr std::string_view plugin_name = "VolumeBinding";
  static constexpr std::string_view state_key = "VolumeBinding";

  // v1.36's feature gates.
  static result<std::shared_ptr<fw::plugin>> make(const YAML::Node& args, const std::string& path,
                                                  const fw::handle& h);
  static result<std::shared_ptr<fw::plugin>> make_with_features(const YAML::Node& args, const std::string& path,
                                                                const fw::handle& h,
                                                                const volume_binding_features& features);
  volume_binding(volume_binding_args args, volume_binding_features features, fw::handle h);

  // The objects Reserve decided to write for this cycle's pod; null when there is nothing to
  // write (all claims bound, not reserved yet, or unreserved).
  static const volume_bindings* assumed(const fw::cycle_state& state);

  std::string_view name() const override { return plugin_name; }
  fw::status pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                        fw::pre_filter_result& result) const override;
  fw::status filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const override;
  fw::status pre_score(fw::cycle_state& state, const pod_info& pod,
                       const std::vector<const node_info*>& nodes) const override;
  fw::status score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                   int64_t& out) const override;
  fw::status reserve(fw::cycle_state& state, const pod_info& pod, const std::string& node) const override;
  void unreserve(fw::cycle_state& state, const pod_info& pod, const std::string& node) const override;
  fw::status pre_bind_pre_flight(fw::cycle_state& state, const pod_info& pod, const std::string& node) const override;
  fw::status pre_bind(fw::cycle_state& state, const pod_info& pod, const std::string& node) const override;
  fw::status pre_bind_async(fw::cycle_state& state, const pod_info& pod, const std::string& node,
                            std::function<void(fw::status)> done) const override;
  std::vector<fw::cluster_event_with_hint> events_to_register() const override;
  bool sign_pod(const pod_info& pod, std::string& out) const override;

  const volume_binding_args& args() const { return args_; }

private:
  // Configuration, immutable after make(); no per-cycle state.
  volume_binding_args args_;
  volume_binding_features features_;
  std::optional<volume_capacity_scorer> scorer_;  // set only with StorageCapacityScoring
  fw::handle handle_;
};

}  // namespace kas::plugins

#pragma once
// What a plugin may reach outside its own cycle: the cluster (to bind or delete pods) and the
// waiting pods of the permit coordinator. Implemented by actor adapters in actors/; plugins see only
// these interfaces, so they never include CAF.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cache/pod_info.hpp"
#include "messages/k8s/core.pb.h"
#include "plugins/framework/plugin_metrics.hpp"
#include "plugins/framework/status.hpp"

namespace kas::fw {

class cluster_client {
public:
  virtual ~cluster_client() = default;
  // Posts a Binding (pods/binding subresource). `done` is called once, from any thread.
  virtual void bind(const pod_info& pod, const std::string& node, std::function<void(status)> done) = 0;
  // Deletes a pod (preemption victims). `reason` becomes the victim's Event message ("Preempted by
  // ns/pod on node n1"). `done` is called once, from any thread.
  virtual void delete_pod(const pod_info& pod, const std::string& reason, std::function<void(status)> done) = 0;
  // Sets status.nominatedNodeName (empty clears it). `done` is called once, from any thread.
  virtual void set_nominated_node(const pod_info& pod, const std::string& node, std::function<void(status)> done) = 0;
  // VolumeBinding's PreBind (kube's BindPodVolumes): writes each PersistentVolume in `pvs` (the
  // claimRef set, or for a WaitForFirstConsumer claim, the binding chosen at Reserve) and each
  // claim in `claims` (the volume.kubernetes.io/selected-node annotation for dynamic provisioning),
  // then calls `done` once every claim named in `wait_for` (in the pod's namespace) is bound (the PV controller's work), or with
  // an error naming the claims after `timeout`. `done` is called once, from any thread.
  virtual void bind_volumes(const pod_info& pod, std::vector<std::shared_ptr<const k8s::core::PersistentVolume>> pvs,
                            std::vector<std::shared_ptr<const k8s::core::PersistentVolumeClaim>> claims,
                            std::vector<std::string> wait_for, std::chrono::milliseconds timeout,
                            std::function<void(status)> done) {
    (void)pod, (void)pvs, (void)claims, (void)wait_for, (void)timeout;
    // Clients that never bind volumes (tests of other plugins) need not implement it.
    done(status::error("this cluster client does not bind volumes"));
  }
};

class waiting_pods {
public:
  virtual ~waiting_pods() = default;
  // Allow from `plugin`; the pod leaves Permit once every waiting plugin allowed it.
  virtual void allow(const std::string& uid, std::string_view plugin) = 0;
  virtual void reject(const std::string& uid, std::string_view plugin, const std::string& message) = 0;
};

// A client the caller keeps alive itself (tests): a shared_ptr that does not own it.
inline std::shared_ptr<cluster_client> unowned_client(cluster_client* c) { return {std::shared_ptr<void>{}, c}; }

struct handle {
  // Shared by every plugin that writes to the cluster (DefaultBinder, DefaultPreemption): a binder
  // still inside a plugin when the command tears down keeps the client alive.
  std::shared_ptr<cluster_client> client;
  waiting_pods* waiting = nullptr;
  // Receives plugin execution times of sampled cycles; null records nothing. Must outlive the framework.
  const plugin_metrics_sink* plugin_metrics = nullptr;
};

}  // namespace kas::fw

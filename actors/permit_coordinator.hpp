#pragma once
// permit_coordinator: owns waitingPods — pods whose Permit returned Wait. Each waits for every
// waiting plugin to Allow it; a Reject or the earliest plugin timeout fails it (Unreserve, forget,
// requeue). Allowed pods go on to the binder pool.
#include "actors/handles.hpp"

namespace kas {

permit_actor spawn_permit_coordinator(caf::actor_system& sys, std::shared_ptr<const pipeline> wiring);

// fw::waiting_pods for plugins: forwards Allow/Reject to the coordinator as messages.
class permit_handle : public fw::waiting_pods {
public:
  explicit permit_handle(std::shared_ptr<const pipeline> wiring) : wiring_(std::move(wiring)) {}
  void allow(const std::string& uid, std::string_view plugin) override;
  void reject(const std::string& uid, std::string_view plugin, const std::string& message) override;

private:
  std::shared_ptr<const pipeline> wiring_;
};

}  // namespace kas

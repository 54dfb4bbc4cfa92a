#pragma once
// embedded_client: fw::cluster_client over the embedded cluster. Bind, Delete and the nomination
// PATCH become messages to the cluster actor.
#include <functional>
#include <string>

#include "actors/embedded_cluster.hpp"

namespace kas {

// fw::cluster_client over the embedded cluster: Bind and Delete become messages to it.
class embedded_client : public fw::cluster_client {
public:
  explicit embedded_client(cluster_actor c) : cluster_(std::move(c)) {}
  void bind(const pod_info& pod, const std::string& node, std::function<void(fw::status)> done) override;
  void delete_pod(const pod_info& pod, const std::string& reason, std::function<void(fw::status)> done) override;
  void set_nominated_node(const pod_info& pod, const std::string& node, std::function<void(fw::status)> done) override;

private:
  cluster_actor cluster_;
};

}  // namespace kas

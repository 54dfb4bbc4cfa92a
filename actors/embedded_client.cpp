#include "actors/embedded_client.hpp"

namespace kas {

void embedded_client::bind(const pod_info& pod, const std::string& node, std::function<void(fw::status)> done) {
  caf::anon_send(cluster_, bind_atom::value, pod.uid, node, std::move(done));
}

void embedded_client::delete_pod(const pod_info& pod, const std::string& reason, std::function<void(fw::status)> done) {
  caf::anon_send(cluster_, delete_atom::value, pod.uid, reason, std::move(done));
}

void embedded_client::set_nominated_node(const pod_info& pod, const std::string& node,
                                         std::function<void(fw::status)> done) {
  caf::anon_send(cluster_, status_atom::value, pod.uid, node, std::move(done));
}

}  // namespace kas

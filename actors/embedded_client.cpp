#include "actors/embedded_client.hpp"

namespace kas {

namespace {

// No actor is running the plugin: a one-shot actor makes the request and ends with the reply.
template <class... Ts>
void request_once(const cluster_actor& cluster, std::function<void(fw::status)> done, Ts... xs) {
  cluster->home_system().spawn([cluster, done = std::move(done), xs...](caf::event_based_actor* self) {
    auto [on_reply, on_error] = status_reply_handlers(done);
    self->request(cluster, cluster_request_timeout, xs...)
      .then([self, on_reply = on_reply](const fw::status& s) { on_reply(s), self->quit(); },
            [self, on_error = on_error](const caf::error& e) { on_error(e), self->quit(); });
  });
}

}  // namespace

cluster_requester*& current_cluster_requester() {
  static thread_local cluster_requester* current = nullptr;
  return current;
}

void embedded_client::bind(const pod_info& pod, const std::string& node, std::function<void(fw::status)> done) {
  if (auto* r = current_cluster_requester()) return r->bind(cluster_, pod.uid, node, std::move(done));
  request_once(cluster_, std::move(done), bind_atom::value, pod.uid, node);
}

void embedded_client::delete_pod(const pod_info& pod, const std::string& reason, std::function<void(fw::status)> done) {
  if (auto* r = current_cluster_requester()) return r->evict(cluster_, pod.uid, reason, std::move(done));
  request_once(cluster_, std::move(done), evict_atom::value, pod.uid, reason);
}

void embedded_client::set_nominated_node(const pod_info& pod, const std::string& node,
                                         std::function<void(fw::status)> done) {
  if (auto* r = current_cluster_requester()) return r->nominate(cluster_, pod.uid, node, std::move(done));
  request_once(cluster_, std::move(done), nominate_atom::value, pod.uid, node);
}

void embedded_client::bind_volumes(const pod_info& pod, std::vector<std::shared_ptr<const k8s::core::PersistentVolume>> pvs,
                                   std::vector<std::shared_ptr<const k8s::core::PersistentVolumeClaim>> claims,
                                   std::vector<std::string> wait_for, std::chrono::milliseconds timeout,
                                   std::function<void(fw::status)> done) {
  auto w = std::make_shared<volume_write>();
  w->pod_key = pod.key();
  w->ns = pod.ns;
  w->pvs = std::move(pvs);
  w->claims = std::move(claims);
  w->wait_for = std::move(wait_for);
  w->timeout = timeout;
  volume_write_ptr write = std::move(w);
  if (auto* r = current_cluster_requester()) return r->write_volumes(cluster_, std::move(write), std::move(done));
  request_once(cluster_, std::move(done), bind_atom::value, std::move(write));
}

}  // namespace kas

#pragma once
// embedded_client: fw::cluster_client over the embedded cluster. Plugins are not actors, so the
// plugin API keeps its callback; underneath, every call is a typed CAF request to the cluster whose
// reply (fw::status) or error reaches `done`.
//
// Who makes the request: the actor that is running the plugin. That actor opens a
// requester_scope around the plugin call (the binder around run_bind, the cycle driver around
// run_post_filter); the client finds it through a thread-local and the request becomes an ordinary
// pending response of that actor, answered in its mailbox, in order with its other messages. With
// no scope open (tests calling a plugin directly), a one-shot actor makes the request.
#include <chrono>
#include <functional>
#include <string>

#include "actors/embedded_cluster.hpp"

namespace kas {

// Requests to the cluster carry no timeout. The cluster is in-process and answers every request in
// the handler that receives it; if it is down, or goes down with requests in its mailbox, CAF
// answers each of them with an error (request_receiver_down), which reaches `done`. A timeout
// would register a timer with CAF's clock thread, and wake it, for every binding: on 30000
// bindings that was about 50k more context switches and ~10 % of the throughput. The API client
// of a real cluster bounds its requests itself (HTTP timeouts).
inline constexpr caf::infinite_t cluster_request_timeout{};

// The actor currently running plugin code on this thread, as the client needs it.
class cluster_requester {
public:
  virtual ~cluster_requester() = default;
  virtual void bind(const cluster_actor& c, const std::string& uid, const std::string& node,
                    std::function<void(fw::status)> done) = 0;
  virtual void evict(const cluster_actor& c, const std::string& uid, const std::string& reason,
                     std::function<void(fw::status)> done) = 0;
  virtual void nominate(const cluster_actor& c, const std::string& uid, const std::string& node,
                        std::function<void(fw::status)> done) = 0;
  virtual void write_volumes(const cluster_actor& c, volume_write_ptr w, std::function<void(fw::status)> done) = 0;
};

// The requester of the current thread (null: none open).
cluster_requester*& current_cluster_requester();

// The reply, or the error converted into an Error status.
inline auto status_reply_handlers(std::function<void(fw::status)> done) {
  return std::make_pair([done](const fw::status& s) { done(s); },
                        [done](const caf::error& e) { done(fw::status::error("cluster request failed: " + to_string(e))); });
}

// Opened by an actor around plugin calls: `requester_scope scope{self};`. Requests made through the
// client while it is open are requests of `self`. Scopes nest; closing restores the previous one.
template <class Self>
class requester_scope final : public cluster_requester {
public:
  explicit requester_scope(Self self) : self_(self), prev_(current_cluster_requester()) {
    current_cluster_requester() = this;
  }
  ~requester_scope() override { current_cluster_requester() = prev_; }
  requester_scope(const requester_scope&) = delete;
  requester_scope& operator=(const requester_scope&) = delete;

  void bind(const cluster_actor& c, const std::string& uid, const std::string& node,
            std::function<void(fw::status)> done) override {
    call(c, std::move(done), bind_atom::value, uid, node);
  }
  void evict(const cluster_actor& c, const std::string& uid, const std::string& reason,
             std::function<void(fw::status)> done) override {
    call(c, std::move(done), evict_atom::value, uid, reason);
  }
  void nominate(const cluster_actor& c, const std::string& uid, const std::string& node,
                std::function<void(fw::status)> done) override {
    call(c, std::move(done), nominate_atom::value, uid, node);
  }
  void write_volumes(const cluster_actor& c, volume_write_ptr w, std::function<void(fw::status)> done) override {
    call(c, std::move(done), bind_atom::value, std::move(w));
  }

private:
  template <class... Ts>
  void call(const cluster_actor& c, std::function<void(fw::status)> done, const Ts&... xs) {
    auto [on_reply, on_error] = status_reply_handlers(std::move(done));
    self_->request(c, cluster_request_timeout, xs...).then(std::move(on_reply), std::move(on_error));
  }
  Self self_;
  cluster_requester* prev_;
};

// fw::cluster_client over the embedded cluster: Bind, Delete (eviction) and the nomination PATCH
// become requests to it.
class embedded_client : public fw::cluster_client {
public:
  explicit embedded_client(cluster_actor c) : cluster_(std::move(c)) {}
  void bind(const pod_info& pod, const std::string& node, std::function<void(fw::status)> done) override;
  void delete_pod(const pod_info& pod, const std::string& reason, std::function<void(fw::status)> done) override;
  void set_nominated_node(const pod_info& pod, const std::string& node, std::function<void(fw::status)> done) override;
  void bind_volumes(const pod_info& pod, std::vector<std::shared_ptr<const k8s::core::PersistentVolume>> pvs,
                    std::vector<std::shared_ptr<const k8s::core::PersistentVolumeClaim>> claims,
                    std::vector<std::string> wait_for, std::chrono::milliseconds timeout,
                    std::function<void(fw::status)> done) override;

private:
  cluster_actor cluster_;
};

}  // namespace kas

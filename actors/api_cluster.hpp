#pragma once
// api_cluster: the cluster source of `run` — a Kubernetes apiserver behind the same cluster_actor
// interface the embedded cluster serves, so the scheduler does not know which one it watches (this
// is the design's api_watcher).
//
// Owns: the HTTP transport (libcurl on its own I/O thread), one reflector per kind (list in pages,
// then watch; relist on 410 Gone), the objects as the informers last saw them, the scheduler's
// watchers (watch_fanout: credit-based flow, changes coalesced per object while a watcher is
// behind) and the writes in flight.
//
// Reads: reflector deltas are compiled at the edge (compile_node, compile_pod, compile_pdb) into the
// cluster_changes the embedded cluster emits; `synced` follows once every reflector has listed.
// A paginated relist asks for the next page only after this actor has handled the previous one, and
// watchers that fall behind see per-object coalesced state, so a 100k-pod relist is bounded by the
// number of objects, not by the rate of change.
//
// Writes: bind (POST pods/binding), evict (the DisruptionTarget condition, then DELETE with a uid
// precondition), nominate and conditions (PATCH pods/status), Events (events.k8s.io/v1), and the
// creates and deletes of `bench --kubeconfig`. Each request's reply is the apiserver's answer,
// delivered when it arrives (a response promise): 201 is ok, anything else an Error status that
// carries the apiserver's Status text, which the binder handles as kube-scheduler does (forget,
// Unreserve, requeue with backoff). Writes go in two lanes, the scheduler's and the workload's
// (`bench`'s creates), each with at most `max_writes_in_flight` at once; the rest wait in order.
#include <chrono>
#include <string>

#include <caf/all.hpp>

#include "actors/embedded_cluster.hpp"
#include "client/api_wire.hpp"
#include "client/http_transport.hpp"
#include "client/kubeconfig.hpp"

namespace kas {

struct api_cluster_options {
  connection_config connection;
  api::transport_options transport;
  api::encoding encoding = api::encoding::protobuf;  // clientConnection.contentType
  uint32_t page_size = 500;                          // list pages
  size_t max_writes_in_flight = 1024;
  // kube-scheduler's pod informer: terminal pods are neither scheduled nor counted.
  std::string pod_field_selector = "status.phase!=Succeeded,status.phase!=Failed";
  std::string instance = "kube-actor-scheduler";  // Event reportingInstance
  // Actor metrics ("api_cluster"); null = obs::default_registry(). Must outlive the actor.
  obs::metrics_registry* metrics = nullptr;
  size_t watch_window = 512, watch_batch = 256, watch_fold_after = 32768;
};

// Checks the connection (a PEM that does not parse fails here, naming the field) and spawns the
// source; it starts listing at once.
result<cluster_actor> spawn_api_cluster(caf::actor_system& sys, const api_cluster_options& opts);

}  // namespace kas

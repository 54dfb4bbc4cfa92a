#pragma once
// The scheduler's writes to the apiserver, as HTTP requests: what kube-scheduler sends for a
// binding, an eviction, a status condition, a nomination and an Event. Pure functions (no I/O), so
// the bodies are tested byte for byte; http_transport sends them.
//
// Bodies: the Binding (the hot path, one per pod) goes in the connection's encoding; patches are
// JSON (merge or strategic merge, as kube-scheduler sends them: there is no protobuf patch);
// DeleteOptions and Events are JSON, which every apiserver accepts whatever it serves.
#include <cstdint>
#include <string>

#include "client/api_wire.hpp"
#include "client/http_transport.hpp"

namespace kas::api {

// The object a write is about.
struct object_ref {
  std::string ns, name, uid;
  // The kind, for an Event's `regarding` (a Pod unless said otherwise: the leader elector's Events
  // are about its Lease).
  std::string kind = "Pod", api_version = "v1";
};

// A write whose body is a whole object in the connection's encoding (`kind` and `api_version` go
// into the protobuf envelope or the JSON's first members); Accept asks for the same encoding.
http_request object_write(std::string method, std::string path, const google::protobuf::Message& obj,
                          const std::string& api_version, const std::string& kind, encoding e);

// POST /api/v1/namespaces/{ns}/pods/{name}/binding with a core/v1 Binding (target: the node). The
// apiserver answers 201, 404 when the pod is gone, 409 when it is already bound.
http_request binding_request(const object_ref& pod, const std::string& node, encoding e);

// DELETE the pod with a uid precondition (a pod recreated under the same name is not deleted).
http_request delete_pod_request(const object_ref& pod);
// GET of one pod, in the encoding given.
http_request get_pod_request(const object_ref& pod, encoding e);

// One condition of status.conditions, as a strategic merge patch of pods/status (conditions merge
// by type). `transition_rfc3339` is its lastTransitionTime.
struct condition_patch {
  std::string type, status, reason, message, transition_rfc3339;
};
http_request condition_patch_request(const object_ref& pod, const condition_patch& c);

// status.nominatedNodeName, a merge patch of pods/status ("" clears it: null).
http_request nominated_node_request(const object_ref& pod, const std::string& node);

// An events.k8s.io/v1 Event about a pod. `name` is unique per occurrence series
// (kube: "<pod>.<hex nanoseconds>"); `count` > 1 adds a series.
struct event_fields {
  std::string name;
  std::string type;    // Normal | Warning
  std::string reason;  // Scheduled | FailedScheduling | Preempted
  std::string action;  // Binding | Scheduling | Preempting
  std::string note;
  std::string event_time_rfc3339;  // MicroTime, 6 fraction digits
  std::string reporting_controller = "kube-actor-scheduler";
  std::string reporting_instance;
  int32_t count = 1;
  std::string last_observed_rfc3339;  // with count > 1
};
http_request event_request(const object_ref& regarding, const event_fields& ev);

// A repeat of a stored Event: a merge patch of its series (count, lastObservedTime).
http_request event_series_request(const std::string& ns, const std::string& name, int32_t count,
                                  const std::string& last_observed_rfc3339);

// The response of a write as one line for a status message: the apiserver's Status text when the
// body is one, else the transport error or the HTTP code.
std::string describe_failure(const http_response& r);

// Path segments and query values, percent-encoded (RFC 3986 unreserved kept).
std::string url_escape(const std::string& s);

}  // namespace kas::api

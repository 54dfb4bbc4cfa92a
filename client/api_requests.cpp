#include "client/api_requests.hpp"

#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"

namespace kas::api {

namespace {

std::string pod_path(const object_ref& pod) {
  return "/api/v1/namespaces/" + url_escape(pod.ns) + "/pods/" + url_escape(pod.name);
}

http_request json_request(std::string method, std::string path, std::string body, std::string content_type) {
  http_request r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  r.accept = "application/json";
  return r;
}

// `"key":"value"` with the value escaped; `comma` first when not the first member.
void member(std::string& out, const char* key, const std::string& value, bool comma = true) {
  if (comma) out += ',';
  codec::append_json_string(out, key);
  out += ':';
  codec::append_json_string(out, value);
}

}  // namespace

std::string url_escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

http_request object_write(std::string method, std::string path, const google::protobuf::Message& obj,
                          const std::string& api_version, const std::string& kind, encoding e) {
  http_request r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.content_type = std::string(media_type(e));
  r.accept = r.content_type;
  if (e == encoding::protobuf) {
    r.body = codec::encode_protobuf(obj, api_version, kind);
  } else {
    std::string body = codec::encode_json(obj);  // {"metadata":..,...}
    r.body = "{\"kind\":";
    codec::append_json_string(r.body, kind);
    r.body += ",\"apiVersion\":";
    codec::append_json_string(r.body, api_version);
    r.body += body.size() > 2 ? "," + body.substr(1) : "}";
  }
  return r;
}

http_request binding_request(const object_ref& pod, const std::string& node, encoding e) {
  k8s::core::Binding b;
  b.mutable_metadata()->set_name(pod.name);
  b.mutable_metadata()->set_namespace_(pod.ns);
  if (!pod.uid.empty()) b.mutable_metadata()->set_uid(pod.uid);
  b.mutable_target()->set_kind("Node");
  b.mutable_target()->set_name(node);
  return object_write("POST", pod_path(pod) + "/binding", b, "v1", "Binding", e);
}

http_request delete_pod_request(const object_ref& pod) {
  std::string body = R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{)";
  member(body, "uid", pod.uid, false);
  body += "}}";
  return json_request("DELETE", pod_path(pod), std::move(body), "application/json");
}

http_request get_pod_request(const object_ref& pod, encoding e) {
  http_request r;
  r.method = "GET";
  r.path = pod_path(pod);
  r.accept = std::string(media_type(e));
  return r;
}

http_request condition_patch_request(const object_ref& pod, const condition_patch& c) {
  std::string cond = "{";
  member(cond, "type", c.type, false);
  member(cond, "status", c.status);
  if (!c.reason.empty()) member(cond, "reason", c.reason);
  if (!c.message.empty()) member(cond, "message", c.message);
  cond += ",\"lastProbeTime\":null";
  if (!c.transition_rfc3339.empty()) member(cond, "lastTransitionTime", c.transition_rfc3339);
  cond += "}";
  std::string body = "{\"status\":{\"$setElementOrder/conditions\":[{";
  member(body, "type", c.type, false);
  body += "}],\"conditions\":[" + cond + "]}}";
  return json_request("PATCH", pod_path(pod) + "/status", std::move(body), "application/strategic-merge-patch+json");
}

http_request nominated_node_request(const object_ref& pod, const std::string& node) {
  std::string body = "{\"status\":{\"nominatedNodeName\":";
  if (node.empty()) body += "null";
  else codec::append_json_string(body, node);
  body += "}}";
  return json_request("PATCH", pod_path(pod) + "/status", std::move(body), "application/merge-patch+json");
}

http_request event_request(const object_ref& regarding, const event_fields& ev) {
  std::string body = R"({"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{)";
  member(body, "name", ev.name, false);
  member(body, "namespace", regarding.ns);
  body += "}";
  member(body, "eventTime", ev.event_time_rfc3339);
  if (ev.count > 1) {
    body += ",\"series\":{\"count\":" + std::to_string(ev.count);
    member(body, "lastObservedTime", ev.last_observed_rfc3339);
    body += "}";
  }
  member(body, "reportingController", ev.reporting_controller);
  member(body, "reportingInstance", ev.reporting_instance);
  member(body, "action", ev.action);
  member(body, "reason", ev.reason);
  body += ",\"regarding\":{";
  member(body, "kind", regarding.kind, false);
  member(body, "apiVersion", regarding.api_version);
  member(body, "namespace", regarding.ns);
  member(body, "name", regarding.name);
  if (!regarding.uid.empty()) member(body, "uid", regarding.uid);
  body += "}";
  member(body, "note", ev.note);
  member(body, "type", ev.type);
  body += "}";
  return json_request("POST", "/apis/events.k8s.io/v1/namespaces/" + url_escape(regarding.ns) + "/events",
                      std::move(body), "application/json");
}

http_request event_series_request(const std::string& ns, const std::string& name, int32_t count,
                                  const std::string& last_observed_rfc3339) {
  std::string body = "{\"series\":{\"count\":" + std::to_string(count);
  member(body, "lastObservedTime", last_observed_rfc3339);
  body += "}}";
  return json_request("PATCH", "/apis/events.k8s.io/v1/namespaces/" + url_escape(ns) + "/events/" + url_escape(name),
                      std::move(body), "application/merge-patch+json");
}

std::string describe_failure(const http_response& r) {
  if (!r.error.empty()) return r.error;
  auto enc = encoding_of(r.content_type).value_or(encoding::json);
  return to_string(decode_status(r.status, r.body, enc));
}

}  // namespace kas::api

// REST routing of the test apiserver fixture (server.hpp): /api/v1/... and /apis/{group}/{version}/...
// onto the store, with request bodies decoded by Content-Type and responses encoded by Accept.
#include <cstring>
#include <memory>

#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "tests/apiserver/auth_reviews.hpp"
#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/server.hpp"

namespace kas::testapi {

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string seg = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!seg.empty()) out.push_back(seg);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

bool is_protobuf(const std::string& ct) { return ct.rfind("application/vnd.kubernetes.protobuf", 0) == 0; }

// The request body as a tree: JSON (or YAML), or protobuf into `proto` then JSON.
result<YAML::Node> body_tree(const request& r, const google::protobuf::Message* proto) {
  if (r.body.empty()) return error{"the request body is empty"};
  if (!is_protobuf(r.content_type)) return parse_json_object(r.body);
  if (!proto) return error{"this resource does not accept protobuf bodies; send application/json"};
  std::unique_ptr<google::protobuf::Message> m(proto->New());
  auto d = codec::decode_protobuf(r.body, *m);
  if (!d) return error{"the protobuf body does not decode: " + d.err().message};
  return parse_json_object(codec::encode_json(*m));
}

bool wants_table(const std::string& accept) { return accept.find("as=Table") != std::string::npos; }

api_error method_not_allowed(const std::string& method) {
  return {405, "MethodNotAllowed", "the server does not allow this method on the requested resource (" + method + ")",
          "", "", ""};
}

}  // namespace

void server::handle(request& r) {
  // TokenReview and SubjectAccessReview, from --auth-table (auth_reviews.hpp).
  if (auto review = answer_review(r.method, r.path, r.body)) return respond(r.req, review->status, "application/json", review->body);
  if (handle_discovery(r)) return;
  auto seg = split_path(r.path);
  wire_format f = negotiate(r.accept, nullptr);
  std::string group, version;
  size_t i = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    version = seg[1];
    i = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    group = seg[1];
    version = seg[2];
    i = 3;
  } else {
    respond_error(r.req, {404, "NotFound", "the server could not find the requested resource", "", "", ""}, f);
    return;
  }
  std::string ns;
  if (seg.size() >= i + 3 && seg[i] == "namespaces" && !(seg.size() == i + 3 && (seg[i + 2] == "status" || seg[i + 2] == "finalize"))) {
    ns = seg[i + 1];
    i += 2;
  }
  if (seg.size() <= i || seg.size() > i + 3) {
    respond_error(r.req, {404, "NotFound", "the server could not find the requested resource", "", "", ""}, f);
    return;
  }
  const std::string& resource = seg[i];
  if (resource == "bindings" && group.empty() && seg.size() == i + 1 && r.method == "POST") {
    route_binding(r, ns, "", f);
    return;
  }
  const kind_info* k = find_kind(group, version, resource);
  if (!k) {
    respond_error(r.req, {404, "NotFound", "the server could not find the requested resource", "", "", ""}, f);
    return;
  }
  route_resource(r, *k, ns, seg.size() > i + 1 ? seg[i + 1] : "", seg.size() > i + 2 ? seg[i + 2] : "");
}

void server::route_resource(request& r, const kind_info& k, const std::string& ns, const std::string& name,
                            const std::string& sub) {
  wire_format f = negotiate(r.accept, &k);
  if (!k.namespaced && !ns.empty()) {
    respond_error(r.req, {404, "NotFound", "the server could not find the requested resource", "", "", ""}, f);
    return;
  }
  bool write = r.method != "GET";
  if (write && roll(options().faults.write_500_percent)) {
    ++faults_.write_500;
    respond_error(r.req, {500, "InternalError", "injected fault: --fault-write-500-percent", "", "", ""}, f);
    return;
  }
  if (write && k.resource == "leases")
    for (const auto& h : partitioned_holders_)
      if (r.body.find(h) != std::string_view::npos) {  // the identity's bytes, in JSON or protobuf alike
        ++faults_.lease_writes_refused;
        respond_error(r.req, {503, "ServiceUnavailable", "injected fault: the holder " + h + " is partitioned", "", "", ""},
                      f);
        return;
      }
  if (name.empty())
    route_collection(r, k, ns, f);
  else
    route_object(r, k, ns, name, sub, f);
}

void server::respond_object(request& r, int status, const op_result<object_ptr>& res, wire_format f) {
  if (!res.ok()) {
    respond_error(r.req, res.err, f);
    return;
  }
  respond(r.req, status, content_type(f), object_body(**res.value, f));
}

void server::route_collection(request& r, const kind_info& k, const std::string& ns, wire_format f) {
  if (r.method == "GET") {
    std::string w = r.param("watch");
    if (w == "1" || w == "true") {
      start_watch(r, k, ns, f, wants_table(r.accept));
      return;
    }
    list_request lr;
    lr.label_selector = r.param("labelSelector");
    lr.field_selector = r.param("fieldSelector");
    lr.continue_token = r.param("continue");
    std::string limit = r.param("limit");
    if (!limit.empty()) lr.limit = std::strtoll(limit.c_str(), nullptr, 10);
    auto res = store_.list(k, ns, lr);
    if (!res.ok()) return respond_error(r.req, res.err, f);
    if (wants_table(r.accept))
      return respond(r.req, 200, "application/json",
                     table_body(k, res.value->items, res.value->rv, res.value->continue_token));
    return respond(r.req, 200, content_type(f), list_body(k, *res.value, f));
  }
  if (r.method == "POST") {
    if (!r.body.empty() && !is_protobuf(r.content_type)) return respond_object(r, 201, store_.create_json(k, ns, r.body), f);
    // A protobuf body is stored as JSON (the store's form), through the same tree-less path.
    if (!r.body.empty() && k.prototype) {
      std::unique_ptr<google::protobuf::Message> m(k.prototype->New());
      if (auto d = codec::decode_protobuf(r.body, *m); !d)
        return respond_error(r.req, bad_request("the protobuf body does not decode: " + d.err().message), f);
      return respond_object(r, 201, store_.create_json(k, ns, codec::encode_json(*m)), f);
    }
    auto body = body_tree(r, k.prototype);
    if (!body) return respond_error(r.req, bad_request(body.err().message), f);
    return respond_object(r, 201, store_.create(k, ns, *body), f);
  }
  respond_error(r.req, method_not_allowed(r.method), f);
}

namespace {

result<delete_preconditions> parse_delete_options(const request& r) {
  delete_preconditions pre;
  if (r.body.empty()) return pre;
  auto tree = body_tree(r, nullptr);
  if (!tree) return error{"DeleteOptions: " + tree.err().message};
  YAML::Node p = at(*tree, "preconditions");
  if (at(p, "uid").IsScalar()) pre.uid = at(p, "uid").Scalar();
  if (at(p, "resourceVersion").IsScalar()) pre.resource_version = at(p, "resourceVersion").Scalar();
  return pre;
}

}  // namespace

void server::route_object(request& r, const kind_info& k, const std::string& ns, const std::string& name,
                          const std::string& sub, wire_format f) {
  if (sub == "binding" && k.resource == "pods" && k.group.empty()) return route_binding(r, ns, name, f);
  if (!sub.empty() && !(sub == "status" && k.has_status))
    return respond_error(r.req, {404, "NotFound", "the server could not find the requested resource", "", "", ""}, f);
  bool status_only = sub == "status";
  if (r.method == "GET") {
    auto res = store_.get(k, ns, name);
    if (res.ok() && wants_table(r.accept))
      return respond(r.req, 200, "application/json", table_body(k, {*res.value}, (*res.value)->rv, ""));
    return respond_object(r, 200, res, f);
  }
  if (r.method == "PUT") {
    auto body = body_tree(r, k.prototype);
    if (!body) return respond_error(r.req, bad_request(body.err().message), f);
    return respond_object(r, 200, store_.update(k, ns, name, *body, status_only), f);
  }
  if (r.method == "PATCH") {
    patch_kind pk;
    if (r.content_type.rfind("application/merge-patch+json", 0) == 0) pk = patch_kind::merge;
    else if (r.content_type.rfind("application/strategic-merge-patch+json", 0) == 0) pk = patch_kind::strategic;
    else
      return respond_error(r.req, {415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                   "accepted media types include: application/merge-patch+json, "
                                   "application/strategic-merge-patch+json", "", "", ""}, f);
    if (pk == patch_kind::strategic && !k.prototype) pk = patch_kind::merge;
    auto p = parse_json_object(r.body);
    if (!p) return respond_error(r.req, bad_request("the patch does not parse: " + p.err().message), f);
    return respond_object(r, 200, store_.patch(k, ns, name, pk, *p, status_only), f);
  }
  if (r.method == "DELETE" && !status_only) {
    auto pre = parse_delete_options(r);
    if (!pre) return respond_error(r.req, bad_request(pre.err().message), f);
    return respond_object(r, 200, store_.remove(k, ns, name, *pre), f);
  }
  respond_error(r.req, method_not_allowed(r.method), f);
}

void server::route_binding(request& r, const std::string& ns, const std::string& name, wire_format f) {
  if (r.method != "POST") return respond_error(r.req, method_not_allowed(r.method), f);
  auto body = parse_binding(r.body, is_protobuf(r.content_type));
  if (!body) return respond_error(r.req, bad_request("Binding: " + body.err().message), f);
  std::string pod = name.empty() ? body->name : name;
  if (pod.empty()) return respond_error(r.req, bad_request("Binding: metadata.name is required"), f);
  if (roll(options().faults.binding_409_percent)) {
    ++faults_.binding_409;
    return respond_error(r.req, {409, "Conflict", "Operation cannot be fulfilled on pods/binding \"" + pod +
                                 "\": injected fault: --fault-binding-409-percent", pod, "", "pods/binding"}, f);
  }
  auto res = store_.bind(ns, pod, *body);
  if (!res.ok()) return respond_error(r.req, res.err, f);
  respond(r.req, 201, content_type(f), success_status_body(201, f));
}

}  // namespace kas::testapi

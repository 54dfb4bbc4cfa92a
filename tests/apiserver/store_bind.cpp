// pods/binding (store.hpp), the scheduler's hot write: the Binding body is read with simdjson (or
// decoded from protobuf) and the stored pod's JSON is edited as text (json_edit.hpp) — nodeName,
// annotations, the PodScheduled condition and resourceVersion — so a binding builds no tree.
#include <cstring>

#include "messages/codec.hpp"
#include "messages/k8s/core.pb.h"
#include "tests/apiserver/json_edit.hpp"
#include "tests/apiserver/store.hpp"

namespace kas::testapi {

namespace {

using R = op_result<object_ptr>;

std::string string_or_empty(const std::optional<simdjson::dom::element>& e) {
  std::string_view v;
  return e && e->get_string().get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
}

result<binding_request> binding_from_proto(std::string_view body) {
  k8s::core::Binding b;
  auto d = codec::decode_protobuf(std::string(body), b);
  if (!d) return error{"the protobuf body does not decode: " + d.err().message};
  binding_request out;
  out.name = b.metadata().name();
  out.uid = b.metadata().uid();
  out.target = b.target().name();
  for (const auto& [k, v] : b.metadata().annotations()) out.annotations.emplace_back(k, v);
  return out;
}

// The PodScheduled=True condition after the pod's other conditions (an old PodScheduled is dropped).
std::string scheduled_conditions(const json_doc& pod, const std::string& now) {
  std::string out = "[";
  if (auto conds = pod.find({"status", "conditions"})) {
    simdjson::dom::array arr;
    if (conds->get_array().get(arr) == simdjson::SUCCESS)
      for (auto c : arr) {
        std::string_view type;
        if (c["type"].get_string().get(type) == simdjson::SUCCESS && type == "PodScheduled") continue;
        append_element(out, c);
        out += ',';
      }
  }
  out += R"({"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":)";
  out += json_quote(now);
  return out + "}]";
}

// The same binding applied to the pod's protobuf form, when the old pod has one (it was served in
// protobuf, e.g. to a watch): the bound pod's watch frame then needs no JSON-to-protobuf conversion,
// which cost most of this fixture's time under a scheduler binding thousands of pods a second. It
// must equal what converting the edited JSON gives (store_test checks that).
std::string bound_proto(const std::string& old_raw, uint64_t rv, const binding_request& b, const std::string& now) {
  k8s::core::Pod p;
  if (!p.ParseFromString(old_raw)) return {};
  p.mutable_metadata()->set_resource_version(std::to_string(rv));
  for (const auto& [k, v] : b.annotations) (*p.mutable_metadata()->mutable_annotations())[k] = v;
  p.mutable_spec()->set_node_name(b.target);
  auto* conds = p.mutable_status()->mutable_conditions();
  for (int i = conds->size() - 1; i >= 0; --i)
    if (conds->Get(i).type() == "PodScheduled") conds->DeleteSubrange(i, 1);
  auto* c = conds->Add();
  c->set_type("PodScheduled");
  c->set_status("True");
  int64_t secs = 0;
  int32_t nanos = 0;
  if (!codec::parse_rfc3339(now, secs, nanos)) return {};
  c->mutable_last_transition_time()->set_seconds(secs);
  c->mutable_last_transition_time()->set_nanos(nanos);
  return p.SerializeAsString();
}

}  // namespace

result<binding_request> parse_binding(std::string_view body, bool protobuf) {
  if (body.empty()) return error{"the request body is empty"};
  if (protobuf) return binding_from_proto(body);
  static json_doc doc;
  if (!doc.parse(body)) return error{"the request body is not a JSON object"};
  binding_request out;
  out.name = string_or_empty(doc.find({"metadata", "name"}));
  out.uid = string_or_empty(doc.find({"metadata", "uid"}));
  out.target = string_or_empty(doc.find({"target", "name"}));
  if (auto ann = doc.find({"metadata", "annotations"})) {
    simdjson::dom::object obj;
    if (ann->get_object().get(obj) == simdjson::SUCCESS)
      for (auto field : obj) {
        std::string_view v;
        if (field.value.get_string().get(v) != simdjson::SUCCESS)
          return error{"metadata.annotations." + std::string(field.key) + ": expected a string"};
        out.annotations.emplace_back(std::string(field.key), std::string(v));
      }
  }
  return out;
}

R store::bind(const std::string& ns, const std::string& pod, const binding_request& b) {
  static const kind_info* pods = find_kind("", "v1", "pods");
  if (b.target.empty())
    return R::fail({422, "Invalid", "Binding.core \"" + pod + "\" is invalid: target.name: Required value", pod, "", "Binding"});
  auto cur = get(*pods, ns, pod);
  if (!cur.ok()) return cur;
  const object_ptr& obj = *cur.value;
  std::string node = obj->field("spec.nodeName");
  api_error conflict_err{409, "Conflict", "", pod, "", "pods/binding"};
  if (!node.empty()) {
    conflict_err.message = "Operation cannot be fulfilled on pods/binding \"" + pod + "\": pod " + pod +
                           " is already assigned to node \"" + node + "\"";
    return R::fail(conflict_err);
  }
  if (!b.uid.empty() && b.uid != obj->uid) {
    conflict_err.message = "Operation cannot be fulfilled on pods/binding \"" + pod +
                           "\": Precondition failed: UID in precondition: " + b.uid + ", UID in object meta: " + obj->uid;
    return R::fail(conflict_err);
  }
  static json_doc doc;
  if (!doc.parse(obj->json)) return R::fail({500, "InternalError", "the stored pod does not parse", pod, "", "pods"});
  uint64_t rv = current_rv() + 1;
  std::vector<json_edit> edits;
  edits.push_back({{"metadata", "resourceVersion"}, json_quote(std::to_string(rv))});
  for (const auto& [k, v] : b.annotations) edits.push_back({{"metadata", "annotations", k}, json_quote(v)});
  edits.push_back({{"spec", "nodeName"}, json_quote(b.target)});
  const std::string now = now_rfc3339();
  edits.push_back({{"status", "conditions"}, scheduled_conditions(doc, now)});
  auto fields = obj->fields;
  bool had = false;
  for (auto& [path, value] : fields)
    if (path == "spec.nodeName") value = b.target, had = true;
  if (!had) fields.emplace_back("spec.nodeName", b.target);
  std::string raw = obj->proto_raw_cache.empty() ? std::string() : bound_proto(obj->proto_raw_cache, rv, b, now);
  return commit_json(edit_json(doc.root(), edits), rv, obj, std::move(fields), std::move(raw));
}

R store::commit_json(std::string json, uint64_t rv, const object_ptr& prev,
                     std::vector<std::pair<std::string, std::string>> fields, std::string proto_raw) {
  auto obj = std::make_shared<stored_object>();
  obj->proto_raw_cache = std::move(proto_raw);
  obj->kind = prev->kind;
  obj->rv = ++rv_;
  if (obj->rv != rv) return R::fail({500, "InternalError", "resourceVersion moved during a write", prev->name, "", ""});
  obj->json = std::move(json);
  obj->ns = prev->ns;
  obj->name = prev->name;
  obj->uid = prev->uid;
  obj->labels = prev->labels;
  obj->fields = std::move(fields);
  object_ptr ptr = obj;
  objects(*obj->kind)[object_key(obj->ns, obj->name)] = ptr;
  record(change{obj->rv, change_type::modified, ptr, prev});
  return R::good(ptr);
}

}  // namespace kas::testapi

// create from JSON text without a tree (store.hpp, create_json): the body is parsed once with
// simdjson, checked against the kind's proto by a conservative type check, and written back with
// the metadata the store stamps (json_edit.hpp). Only the plain success case goes this way: any
// body the check is unsure of (a type mismatch, bytes, RawExtension, YAML-flavoured text, a
// namespace's defaults) or any request that fails takes the tree path, so the errors and their
// messages are the tree path's. Pods get the pod strategy's create changes as edits.
#include <google/protobuf/descriptor.h>

#include <limits>

#include "messages/codec.hpp"
#include "messages/quantity.hpp"
#include "tests/apiserver/event_views.hpp"
#include "tests/apiserver/json_edit.hpp"
#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/pod_strategy.hpp"
#include "tests/apiserver/selectors.hpp"
#include "tests/apiserver/store.hpp"

namespace kas::testapi {

namespace {

using R = op_result<object_ptr>;
namespace dom = simdjson::dom;
namespace pb = google::protobuf;
using FD = pb::FieldDescriptor;

// The type check below doubles as a decoder: with `out` set, what fits is also written into the
// message (wire.cpp's protobuf form of a stored object). Decoding is stricter than checking: a value
// whose text a proto field would keep as written (a number in a string or Quantity field) is
// refused, and the caller converts through the tree instead.
bool fits_message(const pb::Descriptor* d, dom::element e, pb::Message* out, int depth);

bool fits_special(const std::string& type, dom::element e, pb::Message* out) {
  std::string_view s;
  bool is_string = e.get_string().get(s) == simdjson::SUCCESS;
  auto* r = out ? out->GetReflection() : nullptr;
  auto field = [&](int n) { return out->GetDescriptor()->FindFieldByNumber(n); };
  if (type == "k8s.meta.Quantity") {
    if (!is_string || !parse_quantity(s).ok()) return false;
    if (out) r->SetString(out, field(1), std::string(s));
    return true;
  }
  if (type == "k8s.meta.Time" || type == "k8s.meta.MicroTime") {
    int64_t secs = 0;
    int32_t nanos = 0;
    if (!is_string || !codec::parse_rfc3339(s, secs, nanos)) return false;
    if (out) r->SetInt64(out, field(1), secs), r->SetInt32(out, field(2), nanos);
    return true;
  }
  if (type == "k8s.meta.IntOrString") {
    // All three fields set, as the codec (and Go's wire form) does.
    int64_t v = 0;
    if (!is_string && (e.get_int64().get(v) != simdjson::SUCCESS || v < std::numeric_limits<int32_t>::min() ||
                       v > std::numeric_limits<int32_t>::max()))
      return false;
    if (out) {
      r->SetInt64(out, field(1), is_string ? 1 : 0);
      r->SetInt32(out, field(2), is_string ? 0 : static_cast<int32_t>(v));
      r->SetString(out, field(3), is_string ? std::string(s) : std::string());
    }
    return true;
  }
  return false;  // RawExtension and anything else: the tree path decides
}

// One non-null value of field f (an element of it when repeated or a map value), written into
// `out` (the message that holds f) when set.
bool fits_value(const FD* f, dom::element e, pb::Message* out, int depth) {
  auto t = e.type();
  auto* r = out ? out->GetReflection() : nullptr;
  bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FD::CPPTYPE_MESSAGE: {
      pb::Message* sub = out ? (rep ? r->AddMessage(out, f) : r->MutableMessage(out, f)) : nullptr;
      return fits_message(f->message_type(), e, sub, depth + 1);
    }
    case FD::CPPTYPE_STRING: {
      if (f->type() == FD::TYPE_BYTES || t == dom::element_type::OBJECT || t == dom::element_type::ARRAY) return false;
      if (!out) return true;
      std::string_view v;
      if (e.get_string().get(v) != simdjson::SUCCESS) return false;
      rep ? r->AddString(out, f, std::string(v)) : r->SetString(out, f, std::string(v));
      return true;
    }
    case FD::CPPTYPE_BOOL: {
      if (t != dom::element_type::BOOL) return false;
      if (out) rep ? r->AddBool(out, f, e.get_bool().value_unsafe()) : r->SetBool(out, f, e.get_bool().value_unsafe());
      return true;
    }
    case FD::CPPTYPE_INT32: {
      int64_t v = 0;
      if (e.get_int64().get(v) != simdjson::SUCCESS || v < std::numeric_limits<int32_t>::min() ||
          v > std::numeric_limits<int32_t>::max())
        return false;
      if (out) rep ? r->AddInt32(out, f, static_cast<int32_t>(v)) : r->SetInt32(out, f, static_cast<int32_t>(v));
      return true;
    }
    case FD::CPPTYPE_INT64: {
      if (t != dom::element_type::INT64) return false;
      if (out) rep ? r->AddInt64(out, f, e.get_int64().value_unsafe()) : r->SetInt64(out, f, e.get_int64().value_unsafe());
      return true;
    }
    case FD::CPPTYPE_UINT32: {
      uint64_t v = 0;
      if (e.get_uint64().get(v) != simdjson::SUCCESS || v > std::numeric_limits<uint32_t>::max()) return false;
      if (out) rep ? r->AddUInt32(out, f, static_cast<uint32_t>(v)) : r->SetUInt32(out, f, static_cast<uint32_t>(v));
      return true;
    }
    case FD::CPPTYPE_UINT64: {
      if (t != dom::element_type::INT64 || e.get_int64().value_unsafe() < 0) return false;
      auto v = static_cast<uint64_t>(e.get_int64().value_unsafe());
      if (out) rep ? r->AddUInt64(out, f, v) : r->SetUInt64(out, f, v);
      return true;
    }
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT: {
      if (t != dom::element_type::INT64 && t != dom::element_type::UINT64 && t != dom::element_type::DOUBLE) return false;
      if (!out) return true;
      double v = t == dom::element_type::DOUBLE ? e.get_double().value_unsafe()
                 : t == dom::element_type::INT64 ? static_cast<double>(e.get_int64().value_unsafe())
                                                 : static_cast<double>(e.get_uint64().value_unsafe());
      if (f->cpp_type() == FD::CPPTYPE_FLOAT)
        rep ? r->AddFloat(out, f, static_cast<float>(v)) : r->SetFloat(out, f, static_cast<float>(v));
      else
        rep ? r->AddDouble(out, f, v) : r->SetDouble(out, f, v);
      return true;
    }
    default: return false;  // enums: the tree path decides
  }
}

bool fits_field(const FD* f, dom::element v, pb::Message* out, int depth) {
  if (v.is_null()) return true;  // null leaves a field unset
  if (f->is_map()) {
    dom::object obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS) return false;
    const FD* kf = f->message_type()->FindFieldByNumber(1);
    const FD* vf = f->message_type()->FindFieldByNumber(2);
    for (auto kv : obj) {
      pb::Message* entry = out ? out->GetReflection()->AddMessage(out, f) : nullptr;
      if (entry) entry->GetReflection()->SetString(entry, kf, std::string(kv.key));
      // A null map value keeps an entry with a default value (as the codec does).
      if (!kv.value.is_null() && !fits_value(vf, kv.value, entry, depth)) return false;
    }
    return true;
  }
  if (f->is_repeated()) {
    dom::array arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS) return false;
    for (auto e : arr) {
      if (e.is_null() && f->cpp_type() == FD::CPPTYPE_MESSAGE) {
        if (out) out->GetReflection()->AddMessage(out, f);
        continue;
      }
      if (!fits_value(f, e, out, depth)) return false;
    }
    return true;
  }
  return fits_value(f, v, out, depth);
}

const FD* by_json_name(const pb::Descriptor* d, std::string_view key) {
  for (int i = 0; i < d->field_count(); ++i)
    if (d->field(i)->json_name() == key) return d->field(i);
  return nullptr;
}

bool fits_message(const pb::Descriptor* d, dom::element e, pb::Message* out, int depth) {
  if (depth > 100) return false;
  const std::string& name = d->full_name();
  if (name.rfind("k8s.meta.", 0) == 0 && (name == "k8s.meta.Quantity" || name == "k8s.meta.Time" ||
                                          name == "k8s.meta.MicroTime" || name == "k8s.meta.IntOrString" ||
                                          name == "k8s.meta.RawExtension"))
    return fits_special(name, e, out);
  if (e.is_null()) return true;
  dom::object obj;
  if (e.get_object().get(obj) != simdjson::SUCCESS) return false;
  if (name == "k8s.core.Volume" || name == "k8s.core.PersistentVolumeSpec") return false;  // inline structs
  for (auto kv : obj)
    if (const FD* f = by_json_name(d, kv.key); f && !fits_field(f, kv.value, out, depth)) return false;
  return true;
}

std::string_view member_string(dom::element e, std::initializer_list<std::string_view> path, bool& ok) {
  dom::element cur = e;
  for (auto key : path) {
    dom::object obj;
    if (cur.get_object().get(obj) != simdjson::SUCCESS || obj.at_key(key).get(cur) != simdjson::SUCCESS) return {};
  }
  std::string_view s;
  if (cur.get_string().get(s) != simdjson::SUCCESS) ok = false;
  return s;
}

// resources.requests/limits of every container and init container, for the QoS class; false when a
// value is not a string or number (the tree path decides then).
bool pod_resources(const json_doc& doc, std::vector<container_resources>& out) {
  for (std::string_view list : {"containers", "initContainers"}) {
    auto containers = doc.find({"spec", list});
    dom::array arr;
    if (!containers || containers->get_array().get(arr) != simdjson::SUCCESS) continue;
    for (auto c : arr) {
      container_resources cr;
      for (auto [which, dest] : {std::pair{"requests", &cr.requests}, std::pair{"limits", &cr.limits}}) {
        dom::object obj;
        if (c["resources"][which].get_object().get(obj) != simdjson::SUCCESS) continue;
        for (auto kv : obj) {
          std::string text;
          std::string_view sv;
          if (kv.value.get_string().get(sv) == simdjson::SUCCESS) text = sv;
          else if (kv.value.is_number()) append_element(text, kv.value);
          else return false;
          dest->emplace_back(std::string(kv.key), std::move(text));
        }
      }
      out.push_back(std::move(cr));
    }
  }
  return true;
}

// What the pod strategy changes on create (pod_strategy.hpp), as edits.
bool pod_create_edits(const json_doc& doc, std::vector<json_edit>& edits) {
  std::vector<container_resources> resources;
  if (!pod_resources(doc, resources)) return false;
  std::string_view scheduler;
  auto s = doc.find({"spec", "schedulerName"});
  if (s && s->get_string().get(scheduler) != simdjson::SUCCESS && !s->is_null()) return false;
  if (scheduler.empty()) edits.push_back({{"spec", "schedulerName"}, "\"default-scheduler\""});
  edits.push_back({{"status"}, R"({"phase":"Pending","qosClass":)" + json_quote(qos_class_of(resources)) + "}"});
  return true;
}

}  // namespace

bool json_to_proto_fast(std::string_view json, pb::Message& out) {
  static json_doc doc;
  return doc.parse(json) && fits_message(out.GetDescriptor(), doc.root(), &out, 0);
}

R store::create_json(const kind_info& k, const std::string& ns, std::string_view text) {
  std::optional<std::string> converted;
  if (k.is_view()) {
    static json_doc doc;
    bool ok = doc.parse(text);
    std::string_view kind = ok ? member_string(doc.root(), {"kind"}, ok) : "";
    std::string_view av = ok ? member_string(doc.root(), {"apiVersion"}, ok) : "";
    if (ok && (kind.empty() || kind == k.kind) && (av.empty() || av == k.api_version()))
      converted = events_json_to_core(text);
  }
  const kind_info& sk = *k.storage;
  std::string_view body = converted ? std::string_view(*converted) : text;
  if (!k.is_view() || converted)
    if (auto fast = create_plain(sk, ns, body)) return as_view(k, std::move(*fast));
  auto tree = parse_json_object(body);
  if (!tree) return R::fail(bad_request(tree.err().message));
  if (!converted) return create(k, ns, *tree);
  return as_view(k, create_stored(sk, ns, *tree, true));
}

std::optional<R> store::create_plain(const kind_info& k, const std::string& ns, std::string_view text) {
  bool pod = k.resource == "pods" && k.group.empty();
  if (k.resource == "namespaces" || !k.prototype) return std::nullopt;  // defaults of their own
  if (k.resource == "podgroups") return std::nullopt;  // validated (store_write.cpp's validate_spec)
  static json_doc doc;
  if (!doc.parse(text)) return std::nullopt;
  bool ok = true;
  std::string_view kind = member_string(doc.root(), {"kind"}, ok), av = member_string(doc.root(), {"apiVersion"}, ok);
  std::string name(member_string(doc.root(), {"metadata", "name"}, ok));
  std::string_view body_ns = member_string(doc.root(), {"metadata", "namespace"}, ok);
  std::string_view generate = member_string(doc.root(), {"metadata", "generateName"}, ok);
  if (!ok || (!kind.empty() && kind != k.kind) || (!av.empty() && av != k.api_version())) return std::nullopt;
  if (!body_ns.empty() && (!k.namespaced || body_ns != ns)) return std::nullopt;
  if (name.empty() && generate.empty()) return std::nullopt;
  if (check_namespace(k, ns)) return std::nullopt;
  if (!fits_message(k.prototype->GetDescriptor(), doc.root(), nullptr, 0)) return std::nullopt;
  std::map<std::string, std::string> labels;
  if (auto l = doc.find({"metadata", "labels"}); l && !l->is_null()) {
    dom::object obj;
    if (l->get_object().get(obj) != simdjson::SUCCESS) return std::nullopt;
    for (auto kv : obj) {
      std::string_view v;
      if (kv.value.get_string().get(v) != simdjson::SUCCESS) return std::nullopt;
      labels.emplace(std::string(kv.key), std::string(v));
    }
  }
  if (name.empty()) name = std::string(generate) + generated_name_suffix();
  if (objects(k).count(object_key(k.namespaced ? ns : "", name))) return std::nullopt;
  auto obj = std::make_shared<stored_object>();
  obj->kind = &k;
  obj->name = name;
  obj->ns = k.namespaced ? ns : "";
  obj->uid = random_uuid();
  obj->labels = std::move(labels);
  std::vector<json_edit> edits = {{{"kind"}, json_quote(k.kind)}, {{"apiVersion"}, json_quote(k.api_version())},
                                  {{"metadata", "name"}, json_quote(name)}};
  if (k.namespaced) edits.push_back({{"metadata", "namespace"}, json_quote(ns)});
  edits.push_back({{"metadata", "uid"}, json_quote(obj->uid)});
  edits.push_back({{"metadata", "creationTimestamp"}, json_quote(now_rfc3339())});
  edits.push_back({{"metadata", "resourceVersion"}, json_quote(std::to_string(rv_ + 1))});
  if (pod && !pod_create_edits(doc, edits)) return std::nullopt;
  if (pod && opts_.priority_admission_plugin) {
    std::string_view class_name, policy;
    auto c = doc.find({"spec", "priorityClassName"});
    if (c && c->get_string().get(class_name) != simdjson::SUCCESS && !c->is_null()) return std::nullopt;
    auto pp = doc.find({"spec", "preemptionPolicy"});
    if (pp && pp->get_string().get(policy) != simdjson::SUCCESS && !pp->is_null()) return std::nullopt;
    std::optional<int64_t> given;
    if (auto p = doc.find({"spec", "priority"}); p && !p->is_null()) {
      int64_t v = 0;
      if (p->get_int64().get(v) != simdjson::SUCCESS) return std::nullopt;  // the tree path says why
      given = v;
    }
    auto a = admit_priority(name, std::string(class_name), given, std::string(policy));
    if (!a.ok()) return R::fail(a.err);
    if (!a.value->class_name.empty()) edits.push_back({{"spec", "priorityClassName"}, json_quote(a.value->class_name)});
    edits.push_back({{"spec", "priority"}, std::to_string(a.value->priority)});
    edits.push_back({{"spec", "preemptionPolicy"}, json_quote(a.value->preemption_policy)});
  }
  obj->json = edit_json(doc.root(), edits);
  if (!doc.parse(obj->json)) return std::nullopt;  // selectable fields as stored (after defaults)
  obj->fields = string_fields(doc, selectable_fields(k));
  obj->rv = ++rv_;
  object_ptr ptr = obj;
  objects(k)[object_key(obj->ns, obj->name)] = ptr;
  record(change{obj->rv, change_type::added, ptr, nullptr});
  return R::good(ptr);
}

}  // namespace kas::testapi

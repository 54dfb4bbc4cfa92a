// Wire encodings (wire.hpp).
#include "tests/apiserver/wire.hpp"

#include "messages/codec.hpp"
#include "messages/k8s/meta.pb.h"
#include "tests/apiserver/json_tree.hpp"

namespace kas::testapi {

namespace {

void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void append_bytes_field(std::string& out, int field, const std::string& bytes) {
  append_varint(out, static_cast<uint64_t>(field) << 3 | 2);
  append_varint(out, bytes.size());
  out += bytes;
}

k8s::meta::Status make_status(const api_error& e) {
  k8s::meta::Status s;
  s.mutable_metadata();
  s.set_status("Failure");
  s.set_message(e.message);
  s.set_reason(e.reason);
  s.set_code(e.code);
  if (!e.name.empty() || !e.kind.empty()) {
    auto* d = s.mutable_details();
    if (!e.name.empty()) d->set_name(e.name);
    if (!e.group.empty()) d->set_group(e.group);
    if (!e.kind.empty()) d->set_kind(e.kind);
  }
  return s;
}

// encode_json output with kind and apiVersion put first, as kube writes them.
std::string with_type_meta(const std::string& kind, const std::string& api_version, const std::string& json) {
  std::string out = "{\"kind\":\"" + kind + "\",\"apiVersion\":\"" + api_version + "\"";
  if (json.size() > 2) out += "," + json.substr(1); else out += "}";
  return out;
}

}  // namespace

wire_format negotiate(const std::string& accept, const kind_info* kind) {
  if (kind && (!kind->prototype || kind->json_only)) return wire_format::json;
  return accept.find("application/vnd.kubernetes.protobuf") != std::string::npos ? wire_format::protobuf
                                                                                  : wire_format::json;
}

const char* content_type(wire_format f, bool watch) {
  if (f == wire_format::protobuf)
    return watch ? "application/vnd.kubernetes.protobuf;stream=watch" : "application/vnd.kubernetes.protobuf";
  return "application/json";
}

const std::string& object_json(const stored_object& o) {
  return o.json;
}

const std::string& object_proto_raw(const stored_object& o) {
  if (o.proto_raw_cache.empty() && o.kind->prototype) {
    std::unique_ptr<google::protobuf::Message> m(o.kind->prototype->New());
    // Validated when stored. The codec's yaml-cpp scanner cost most of this fixture's time under a
    // protobuf watch of thousands of new pods a second; simdjson goes first.
    if (!json_to_proto_fast(o.json, *m)) {
      m->Clear();
      (void)codec::decode_json(o.json, *m);
    }
    m->SerializeToString(&o.proto_raw_cache);
  }
  return o.proto_raw_cache;
}

std::string envelope(const std::string& api_version, const std::string& kind, const std::string& raw) {
  k8s::meta::Unknown u;
  u.mutable_type_meta()->set_api_version(api_version);
  u.mutable_type_meta()->set_kind(kind);
  u.set_raw(raw);
  u.set_content_encoding("");
  u.set_content_type("");
  std::string out("k8s\0", 4);
  u.AppendToString(&out);
  return out;
}

const std::string& object_proto_body(const stored_object& o) {
  if (o.proto_body_cache.empty()) o.proto_body_cache = envelope(o.kind->api_version(), o.kind->kind, object_proto_raw(o));
  return o.proto_body_cache;
}

std::string object_body(const stored_object& o, wire_format f) {
  return f == wire_format::protobuf ? object_proto_body(o) : object_json(o);
}

std::string list_body(const kind_info& k, const list_result& l, wire_format f) {
  k8s::meta::ListMeta lm;
  lm.set_resource_version(std::to_string(l.rv));
  if (!l.continue_token.empty()) {
    lm.set_continue_(l.continue_token);
    if (l.remaining >= 0) lm.set_remaining_item_count(l.remaining);
  }
  if (f == wire_format::protobuf) {
    std::string raw;
    append_bytes_field(raw, 1, lm.SerializeAsString());
    for (const auto& o : l.items) append_bytes_field(raw, 2, object_proto_raw(*o));
    return envelope(k.api_version(), k.kind + "List", raw);
  }
  std::string out = "{\"kind\":\"" + k.kind + "List\",\"apiVersion\":\"" + k.api_version() + "\",\"metadata\":";
  out += codec::encode_json(lm);
  out += ",\"items\":[";
  for (size_t i = 0; i < l.items.size(); ++i) {
    if (i) out += ',';
    out += object_json(*l.items[i]);
  }
  out += "]}";
  return out;
}

std::string status_body(const api_error& e, wire_format f) {
  auto s = make_status(e);
  if (f == wire_format::protobuf) return codec::encode_protobuf(s, "v1", "Status");
  return with_type_meta("Status", "v1", codec::encode_json(s));
}

std::string success_status_body(int code, wire_format f) {
  k8s::meta::Status s;
  s.mutable_metadata();
  s.set_status("Success");
  s.set_code(code);
  if (f == wire_format::protobuf) return codec::encode_protobuf(s, "v1", "Status");
  return with_type_meta("Status", "v1", codec::encode_json(s));
}

std::string watch_frame(const char* type, const std::string& object, wire_format f) {
  if (f == wire_format::protobuf) {
    k8s::meta::WatchEvent ev;
    ev.set_type(type);
    ev.mutable_object()->set_raw(object);
    std::string body = ev.SerializeAsString();
    std::string out(4, '\0');
    uint32_t n = static_cast<uint32_t>(body.size());
    out[0] = static_cast<char>(n >> 24);
    out[1] = static_cast<char>(n >> 16);
    out[2] = static_cast<char>(n >> 8);
    out[3] = static_cast<char>(n);
    return out + body;
  }
  return std::string("{\"type\":\"") + type + "\",\"object\":" + object + "}\n";
}

std::string watch_object_frame(const char* type, const stored_object& o, wire_format f) {
  return watch_frame(type, f == wire_format::protobuf ? object_proto_body(o) : object_json(o), f);
}

std::string watch_error_frame(const api_error& e, wire_format f) {
  return watch_frame("ERROR", status_body(e, f), f);
}

std::string watch_bookmark_frame(const kind_info& k, uint64_t rv, wire_format f) {
  if (f == wire_format::protobuf && k.prototype) {
    std::string meta_raw;
    append_bytes_field(meta_raw, 6, std::to_string(rv));  // ObjectMeta.resourceVersion
    std::string raw;
    append_bytes_field(raw, 1, meta_raw);  // every kind's metadata is field 1
    return watch_frame("BOOKMARK", envelope(k.api_version(), k.kind, raw), f);
  }
  std::string obj = "{\"kind\":\"" + k.kind + "\",\"apiVersion\":\"" + k.api_version() +
                    "\",\"metadata\":{\"resourceVersion\":\"" + std::to_string(rv) +
                    "\"}}";
  return watch_frame("BOOKMARK", obj, f);
}

}  // namespace kas::testapi

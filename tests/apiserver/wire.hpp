#pragma once
// What the test apiserver writes on the wire: objects, Lists, metav1.Status and watch frames, in
// JSON or protobuf (the "k8s\0" envelope of runtime.Unknown), shaped as kube-apiserver shapes them
// (client/api_wire.hpp is the reader they must satisfy). Encodings of a stored object are cached
// on it, so a change fanned out to many watches is encoded once per encoding.
#include <string>
#include <vector>

#include "tests/apiserver/store.hpp"

namespace kas::testapi {

enum class wire_format { json, protobuf };

// Protobuf when the Accept header lists the kube protobuf media type and the kind has a proto.
wire_format negotiate(const std::string& accept, const kind_info* kind);
// The Content-Type of a body in this format (watch streams add ";stream=watch").
const char* content_type(wire_format f, bool watch = false);

const std::string& object_json(const stored_object& o);
// The object's protobuf fields without the envelope (empty for JSON-only kinds).
const std::string& object_proto_raw(const stored_object& o);
// A whole protobuf body ("k8s\0" + runtime.Unknown).
const std::string& object_proto_body(const stored_object& o);
std::string object_body(const stored_object& o, wire_format f);

std::string list_body(const kind_info& k, const list_result& l, wire_format f);
std::string status_body(const api_error& e, wire_format f);
// The Success Status kube-apiserver answers pods/binding and some deletes with.
std::string success_status_body(int code, wire_format f);

std::string envelope(const std::string& api_version, const std::string& kind, const std::string& raw);

// One watch frame: JSON `{"type":..,"object":..}\n`, or a 4-byte big-endian length and a raw
// metav1.WatchEvent whose object.raw is a whole protobuf body.
std::string watch_frame(const char* type, const std::string& object_json_or_body, wire_format f);
std::string watch_object_frame(const char* type, const stored_object& o, wire_format f);
std::string watch_error_frame(const api_error& e, wire_format f);
// A BOOKMARK carries an object of the watched kind with only metadata.resourceVersion set.
std::string watch_bookmark_frame(const kind_info& k, uint64_t rv, wire_format f);

}  // namespace kas::testapi

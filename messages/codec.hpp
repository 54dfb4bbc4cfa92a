#pragma once
// Decoders between the Kubernetes wire shapes (protobuf envelope, JSON, YAML) and the generated
// messages in messages/k8s/*.proto. JSON/YAML decoding is reflection-driven: each proto field's
// json_name is the upstream JSON key, so one decoder serves every kind.
#include <string>
#include <string_view>

#include <google/protobuf/message.h>
#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"

namespace kas::codec {

// Decode a YAML/JSON tree into a proto message by reflection using each field's json_name.
// Unknown keys are skipped (as protobuf skips unknown fields). `path` prefixes error text, e.g.
// "spec.containers[0]".
// Special wire shapes: k8s.meta.Quantity <- scalar string/number ("100m", 4), validated with
// kas::parse_quantity but stored as written; Time/MicroTime <- RFC3339 string (fractional secs ->
// nanos); IntOrString <- int or string; RawExtension <- any node (its compact JSON text in `raw`);
// maps <- objects; null -> field left unset. Inlined upstream structs (Volume.volumeSource,
// PersistentVolumeSpec.persistentVolumeSource) take their keys from the enclosing object.
// Type mismatches are errors naming the full path: "spec.priority: expected an integer, got \"abc\"".
kas::status_or_error decode_node(const YAML::Node& node, google::protobuf::Message& out,
                                 const std::string& path = "");
// Errors give line/column (1-based).
kas::status_or_error decode_json(std::string_view text, google::protobuf::Message& out);
kas::status_or_error decode_yaml(std::string_view text, google::protobuf::Message& out);

// The apiserver's protobuf body: 4 magic bytes "k8s\0" then runtime.Unknown{typeMeta, raw};
// decodes raw into out and discards fields the protos do not declare. Errors for missing magic, bad envelope, content encoding, or a kind/group
// that does not match out's message type (an empty envelope kind, as in watch frames, is accepted).
kas::status_or_error decode_protobuf(std::string_view bytes, google::protobuf::Message& out);
// Inverse of decode_protobuf.
std::string encode_protobuf(const google::protobuf::Message& msg, std::string_view api_version,
                            std::string_view kind);
// Kubernetes JSON shape (quantities as strings, Time as RFC3339 seconds, MicroTime with 6 fraction
// digits, IntOrString as int or string, map keys sorted). Compact, no trailing newline.
std::string encode_json(const google::protobuf::Message& msg);
// Appends `s` as a quoted, escaped JSON string.
void append_json_string(std::string& out, std::string_view s);

// RFC3339 helpers shared with callers that build events/leases by hand.
bool parse_rfc3339(std::string_view text, int64_t& seconds, int32_t& nanos);
std::string format_rfc3339(int64_t seconds, int32_t nanos, int fraction_digits);

}  // namespace kas::codec

#pragma once
// Strict field checking of Kubernetes objects, as the apiserver does it with
// `fieldValidation=Strict` ("strict decoding error: unknown field \"spec.nodeselector\""): the keys of
// a YAML/JSON object that its type does not declare, each named by its path. The decoder
// (codec::decode_node) skips such keys, as protobuf skips unknown fields, so a typo like
// `nodeselector:` or `resources: {request: ...}` would otherwise leave the pod unconstrained without a
// word.
//
// The schema is generated at build time from messages/schema/k8s-fields.tsv (every field of the
// upstream generated.proto files of core/v1, coordination/v1, events/v1, policy/v1, scheduling/v1 and
// v1beta1, storage/v1 and apimachinery's meta/v1) by gen_k8s_schema.py; see that script for the types
// that JSON spells differently from proto (Quantity, IntOrString, Time... are scalars; RawExtension and
// FieldsV1 hold anything; `json:",inline"` structs such as Volume's volumeSource).
//
// JSON reaches this as YAML does: the manifest loader parses JSON with yaml-cpp (JSON is YAML's flow
// subset), so one YAML::Node serves both.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"

namespace kas::schema {

// Only objects and lists of objects count as nodes (not scalars, nor what is under a map of scalars):
// a real object has a few hundred, a `kind: List` dump of a large cluster may reach max_nodes, so a
// loader that splits Lists checks each item on its own.
struct strict_limits {
  int max_depth = 100;                // nested mappings and sequences below the object
  std::uint64_t max_nodes = 1000000;  // nodes visited, counting a node once per alias that reaches it
};

// The proto message the schema checks `kind` of `api_version` against, e.g. "k8s.io.api.core.v1.Pod";
// empty when the schema does not know that kind in that API version (apps/v1 is not in the TSV).
// An empty api_version picks the kind's version "v1" (core's first), or its only version.
std::string_view schema_type(std::string_view api_version, std::string_view kind);

// The paths of the keys of `object` that its kind does not declare, in document order:
// "spec.nodeselector", "spec.containers[0].resources.request", "metadata.lables".
// - apiVersion and kind are allowed at the top, and inside every type that embeds TypeMeta (the items
//   of a typed list such as PodList may carry their own);
// - the keys of map fields (labels, annotations, nodeSelector, resources.requests) are free-form;
// - `kind: List` items (what `kubectl get -o yaml` prints) are each checked by their own apiVersion
//   and kind, their paths prefixed "items[N]."; an item of a kind the schema does not know is not
//   checked;
// - a kind the schema does not know (schema_type is empty): nothing is checked, the result is empty;
// - a value of the wrong shape (a list where an object belongs, a non-string key) is not looked
//   into: that is the decoder's error to report.
// Errors: the walk goes deeper than limits.max_depth, or visits more than limits.max_nodes nodes
// (aliases can make a small file expand exponentially). The message says which and where, e.g.
// "strict field check: more than 1000000 nodes to visit (YAML aliases?) at items[3].spec.containers[7]".
kas::result<std::vector<std::string>> unknown_fields(const YAML::Node& object, std::string_view api_version,
                                                     std::string_view kind, const strict_limits& limits = {});

}  // namespace kas::schema

#pragma once
// The generic object tree of the test apiserver: every stored object is a JSON document held as a
// YAML::Node (yaml-cpp parses JSON, keeps key order and, through tags, whether a scalar was quoted),
// so fields the generated protos do not declare survive a round trip, as they do in etcd. This file
// parses request bodies into trees, writes trees back as compact JSON, and applies JSON merge patches
// (RFC 7386) and the subset of strategic merge patches that the scheduler and kubectl send.
//
// yaml-cpp nodes have reference semantics: a tree reachable from a stored object is never mutated;
// writers work on clone() copies.
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"

namespace kas::testapi {

// Parses JSON text into a tree; the root must be an object. Strict JSON goes through simdjson (its
// scanner is several times faster than yaml-cpp's; one static parser, so loop thread only); other
// text (YAML-flavoured JSON) through yaml-cpp, guarded by kas::load_yaml when deep or aliased.
// Errors give the parser's line/column.
result<YAML::Node> parse_json_object(std::string_view text);
// Compact JSON of a tree (quoted scalars stay strings; plain ones that look like numbers, booleans or
// null are written bare).
std::string to_json(const YAML::Node& node);
void append_json(const YAML::Node& node, std::string& out);
// A string scalar that stays a string when written (e.g. resourceVersion "12").
YAML::Node str_node(const std::string& s);
inline YAML::Node clone(const YAML::Node& n) { return YAML::Clone(n); }
// Read-only child lookup that never throws and never inserts: the value at `key`, or an Undefined
// node (IsDefined() false, every Is*() false) when n is not a map or has no such key. yaml-cpp's
// const operator[] returns an invalid node instead, on which Is*() throws.
YAML::Node at(const YAML::Node& n, const std::string& key);

// The string at a dotted path ("spec.nodeName"), or nullopt when absent or not a scalar.
std::optional<std::string> string_at(const YAML::Node& root, std::string_view dotted);

// RFC 7386 merge patch: returns the patched copy of target (target itself is not changed).
YAML::Node merge_patch(const YAML::Node& target, const YAML::Node& patch);
// Strategic merge patch, for the lists this fixture knows merge keys of (pod status.conditions by
// type, containers/volumes/env by name, ...); every other field behaves as a merge patch. The
// $setElementOrder/$retainKeys directives kubectl adds are accepted and ignored, `$patch: delete`
// in a keyed list element removes it, `$patch: replace` in a map replaces the map.
YAML::Node strategic_merge_patch(const YAML::Node& target, const YAML::Node& patch);

}  // namespace kas::testapi

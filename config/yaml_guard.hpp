#pragma once
// Every YAML (or JSON) file config/ reads comes from a user: cluster manifests, --config, workload
// files and their templates. A few bytes of such input can make yaml-cpp 0.7, or the recursive
// decoders behind it, loop, exhaust memory or overflow the stack, so all of them load through
// load_yaml, which bounds what one file can make them do:
//
// - A document that consumes no input. For a stray `,` yaml-cpp 0.7 returns an empty document
//   without consuming the comma, and LoadAll asks for the next document at the same place forever,
//   allocating as it goes (yaml-cpp issue #1040, fixed upstream after 0.7). Documents are first
//   parsed one at a time with YAML::Parser; one that starts where the previous one started stops
//   the load with an error at that line and column.
// - Size. A file is read up to max_file_bytes and refused past it; a document over
//   max_document_bytes is refused (3 MiB: what the apiserver accepts as one object's request).
// - Nesting depth, counted through aliases: the decoders and checks recurse over the tree.
// - Alias expansion. A node reached through an alias is walked once per alias, so nine anchors of
//   nine aliases each are 387 million nodes in 761 bytes. A document may gain through aliases at most
//   max_alias_nodes nodes, or as many as it writes out itself when that is more (so cost stays in
//   proportion to the file); an alias inside the node it names (a cycle) is refused outright.
//
// The checks watch yaml-cpp's parse events and build no tree. Only a stream that passes them is
// handed to YAML::LoadAll, which parses it the same way and so ends too.
#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"

namespace kas {

// What the apiserver accepts as one object (its request body limit).
inline constexpr std::size_t max_object_bytes = std::size_t{3} << 20;
// One input file: room for a `kubectl get -o yaml` dump of a large cluster, which is one List.
inline constexpr std::size_t max_input_file_bytes = std::size_t{64} << 20;

struct yaml_limits {
  std::size_t max_file_bytes = max_input_file_bytes;
  std::size_t max_document_bytes = max_object_bytes;  // 0: no limit (the manifest loader limits each object)
  int max_depth = 100;                                 // nested mappings and sequences
  std::uint64_t max_alias_nodes = 100000;              // see above
};

// How errors read, by what the file holds.
enum class yaml_input {
  stream,  // multi-document YAML: "f.yaml: document 2: line 3, column 4: invalid YAML: ..."
  json,    // one JSON value: "f.json: line 3, column 4: invalid JSON: ..."
  single,  // one YAML document (a workload): "w.yaml: line 3: invalid YAML: ..."
};

struct yaml_document {
  YAML::Node root;
  std::size_t begin = 0, end = 0;  // byte offsets: the document's first token to the next document's
};

// Reads `in` to its end into `text`; refuses (naming `file`) a stream of more than `max` bytes
// without reading past max + 1 of them, so a huge file or a device costs no more than that.
status_or_error read_bounded(std::istream& in, const std::string& file, std::size_t max, std::string& text);

// Parses every document of `text` (the contents of `file`, which errors name) under `limits`.
result<std::vector<yaml_document>> load_yaml(const std::string& file, const std::string& text, yaml_input input,
                                             const yaml_limits& limits = {});

// "3 MiB", "3.5 MiB": sizes in limit errors.
std::string mebibytes(std::size_t bytes);

}  // namespace kas

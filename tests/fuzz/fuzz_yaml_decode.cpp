// Fuzz target: Kubernetes objects as YAML (messages/codec.hpp decode_yaml: YAML::Load, then the
// reflection decoder decode_node), into Pod and into the type the text's `kind` names. The tree is
// also given to decode_node directly under a path prefix, as the manifest and workload loaders do.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "messages/codec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {
bool decode_as(std::string_view text, const google::protobuf::Message& prototype) {
  std::unique_ptr<google::protobuf::Message> msg(prototype.New());
  if (!kas::codec::decode_yaml(text, *msg)) return false;
  kas_fuzz::exercise_encoders(*msg);
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto& picked = kas_fuzz::pick_type(text);
  bool ok = decode_as(text, k8s::core::Pod::default_instance());
  if (picked.GetDescriptor() != k8s::core::Pod::descriptor()) ok = decode_as(text, picked) || ok;
  if (!ok) return 0;
  // decode_yaml parsed it, so YAML::Load will again; decode_node must not throw either.
  YAML::Node root = YAML::Load(std::string(text));
  std::unique_ptr<google::protobuf::Message> msg(picked.New());
  (void)kas::codec::decode_node(root, *msg, "items[0]");
  return 0;
}

// Fuzz target: Kubernetes objects as JSON (messages/codec.hpp decode_json), into Pod and into the
// type the text's `kind` names (kas_fuzz::pick_type).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "messages/codec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {
void decode_as(std::string_view text, const google::protobuf::Message& prototype) {
  std::unique_ptr<google::protobuf::Message> msg(prototype.New());
  if (kas::codec::decode_json(text, *msg)) kas_fuzz::exercise_encoders(*msg);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto& picked = kas_fuzz::pick_type(text);
  decode_as(text, k8s::core::Pod::default_instance());
  if (picked.GetDescriptor() != k8s::core::Pod::descriptor()) decode_as(text, picked);
  return 0;
}

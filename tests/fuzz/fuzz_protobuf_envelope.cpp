// Fuzz target: the apiserver's protobuf body, the "k8s\0" magic + runtime.Unknown envelope
// (messages/codec.hpp decode_protobuf). Every input is offered to every message type: the
// envelope's kind picks the one that decodes (an empty kind, as in watch frames, fits all).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "messages/codec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (auto& t : kas_fuzz::message_types()) {
    std::unique_ptr<google::protobuf::Message> msg(t.prototype->New());
    if (kas::codec::decode_protobuf(bytes, *msg)) kas_fuzz::exercise_encoders(*msg);
  }
  return 0;
}

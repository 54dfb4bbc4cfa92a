// Fuzz target: an apiserver response body (client/api_wire.hpp): a List, as the informers' list
// calls read it, and the metav1.Status of an error response. The first byte picks the encoding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client/api_wire.hpp"
#include "messages/k8s/core.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace kas::api;
  encoding e = (data[0] & 1) ? encoding::protobuf : encoding::json;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  k8s::core::PodList pods;
  (void)decode_body(body, e, pods);
  k8s::core::NodeList nodes;
  (void)decode_body(body, e, nodes);
  (void)to_string(decode_status(500, body, e));
  (void)encoding_of(body.substr(0, 64));
  return 0;
}

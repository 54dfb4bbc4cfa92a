// Fuzz target: a watch stream as the apiserver sends it (client/api_wire.hpp watch_decoder). The
// first byte picks the encoding (bit 0: protobuf or JSON) and the size of the pieces the rest is
// fed in (the transport cuts streams anywhere); every event's object is then decoded as a Pod, or
// as a Status for ERROR events, as the informers do.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "client/api_wire.hpp"
#include "messages/k8s/core.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace kas::api;
  encoding e = (data[0] & 1) ? encoding::protobuf : encoding::json;
  size_t piece = 1 + (data[0] >> 1) * 8;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  watch_decoder d(e, 1u << 20);
  std::vector<watch_event> events;
  for (size_t at = 0; at < rest.size(); at += piece)
    if (!d.feed(rest.substr(at, piece), events)) break;
  (void)d.finish();
  for (auto& ev : events) {
    if (ev.type == watch_event_type::error) {
      (void)to_string(decode_status(0, ev.object, e));
      continue;
    }
    k8s::core::Pod pod;
    (void)decode_body(ev.object, e, pod);
  }
  return 0;
}

#include "plugins/helper/volumes_signer.hpp"

#include "messages/codec.hpp"

namespace kas::plugins::helper {

void sign_volumes(const pod_info& pod, std::string& out) {
  auto parts = sorted_volume_sources(pod, [](const k8s::core::Volume& v) {
    std::string json = codec::encode_json(v.volume_source());
    return json == "{}" ? std::string() : json;
  });
  for (const auto& p : parts) {
    out += p;
    out += '\x1e';
  }
}

}  // namespace kas::plugins::helper

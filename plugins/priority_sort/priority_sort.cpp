#include "plugins/priority_sort/priority_sort.hpp"

namespace kas::plugins {

result<std::shared_ptr<fw::plugin>> priority_sort::make(const YAML::Node&, const std::string&, const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<priority_sort>());
}

bool priority_sort::less(const fw::queued_pod_info& a, const fw::queued_pod_info& b) const {
  int32_t pa = a.pod ? a.pod->priority : 0;
  int32_t pb = b.pod ? b.pod->priority : 0;
  return pa > pb || (pa == pb && a.timestamp_ns < b.timestamp_ns);
}

}  // namespace kas::plugins

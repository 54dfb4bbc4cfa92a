#include "plugins/priority_sort/priority_sort.hpp"

namespace kas::plugins {

result<std::shared_ptr<fw::plugin>> priority_sort::make(const YAML::Node&, const std::string&, const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<priority_sort>());
}

namespace {

// A member of a pod group is ordered by its group's priority when the group sets one.
int32_t queue_priority(const fw::queued_pod_info& q) {
  if (q.group && q.group->priority) return *q.group->priority;
  return q.pod ? q.pod->priority : 0;
}

int64_t order_ns(const fw::queued_pod_info& q) { return q.group ? q.group_order_ns : q.timestamp_ns; }

// -1, 0, 1 as the groups' names order ("" for a pod in no group, so it comes first).
int compare_groups(const fw::queued_pod_info& a, const fw::queued_pod_info& b) {
  if (a.group == b.group) return 0;
  if (!a.group || !b.group) return a.group ? 1 : -1;
  if (int c = a.group->ns.compare(b.group->ns)) return c;
  if (int c = a.group->name.compare(b.group->name)) return c;
  return static_cast<int>(a.group->api) - static_cast<int>(b.group->api);
}

}  // namespace

bool priority_sort::less(const fw::queued_pod_info& a, const fw::queued_pod_info& b) const {
  int32_t pa = queue_priority(a), pb = queue_priority(b);
  if (pa != pb) return pa > pb;
  int64_t ta = order_ns(a), tb = order_ns(b);
  if (ta != tb) return ta < tb;
  if (int c = compare_groups(a, b)) return c < 0;
  return a.timestamp_ns < b.timestamp_ns;
}

}  // namespace kas::plugins

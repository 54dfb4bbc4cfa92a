// Coscheduling's minResources: a PodGroup that sets it is not tried until the cluster has that
// much free (scheduler-plugins' PodGroupManager.PreFilter and CheckClusterResource).
#include "plugins/gang_scheduling/min_resources.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "cache/snapshot.hpp"

namespace kas::plugins {

namespace {

// What is still missing, one entry per resource, in kube's resource names and quantity notation
// ("cpu 500m, memory 10Gi"; extended resources as plain counts).
std::string describe_gap(const resource_list& gap) {
  std::string out;
  auto add = [&](std::string_view name, const std::string& amount) {
    out += (out.empty() ? "" : ", ") + std::string(name) + " " + amount;
  };
  if (gap.milli_cpu > 0) add(res_cpu, format_milli_quantity(gap.milli_cpu));
  if (gap.memory > 0) add(res_memory, format_byte_quantity(gap.memory));
  if (gap.ephemeral_storage > 0) add(res_ephemeral_storage, format_byte_quantity(gap.ephemeral_storage));
  if (gap.allowed_pod_number > 0) add(res_pods, std::to_string(gap.allowed_pod_number));
  for (auto& [name, v] : gap.scalar)
    if (v > 0) add(name, is_hugepages_resource_name(name) ? format_byte_quantity(v) : std::to_string(v));
  return out;
}

bool covered(const resource_list& gap) {
  if (gap.milli_cpu > 0 || gap.memory > 0 || gap.ephemeral_storage > 0 || gap.allowed_pod_number > 0) return false;
  for (auto& kv : gap.scalar)
    if (kv.second > 0) return false;
  return true;
}

}  // namespace

bool has_min_resources(const pod_group& g) {
  const resource_list& r = g.min_resources;
  return r.milli_cpu > 0 || r.memory > 0 || r.ephemeral_storage > 0 || r.allowed_pod_number > 0 || !r.scalar.empty();
}

fw::status check_min_resources(const pod_group& g, const std::string& group_key, const snapshot& snap) {
  if (!has_min_resources(g)) return fw::status::ok();
  // The gap still to cover; the group needs room for minMember pods whatever minResources says of
  // pods, as upstream sets minResources[pods] = minMember.
  resource_list gap = g.min_resources;
  gap.allowed_pod_number = g.min_count;
  for (size_t i = 0; i < snap.size() && !covered(gap); ++i) {
    const node_info& n = snap.node(i);
    // What the node has left, counting the group's own pods (bound or assumed) as gone: they are
    // part of what the group is placing.
    resource_list used = n.requested;
    int64_t pods = static_cast<int64_t>(n.pods.size());
    for (const auto& p : n.pods)
      if (p->group_key == group_key) {
        used.sub(p->requests);
        --pods;
      }
    // A resource once covered stays covered (upstream drops it from the request), so an
    // over-committed node cannot open its gap again.
    auto take = [](int64_t& want, int64_t free) {
      if (want > 0) want -= free;
    };
    take(gap.milli_cpu, n.allocatable.milli_cpu - used.milli_cpu);
    take(gap.memory, n.allocatable.memory - used.memory);
    take(gap.ephemeral_storage, n.allocatable.ephemeral_storage - used.ephemeral_storage);
    take(gap.allowed_pod_number, n.allocatable.allowed_pod_number - pods);
    for (auto& [name, v] : gap.scalar) take(v, n.allocatable.get_scalar(name) - used.get_scalar(name));
  }
  if (covered(gap)) return fw::status::ok();
  return fw::status(fw::code::unschedulable_and_unresolvable, fw::intern("resource gap: " + describe_gap(gap)));
}

fw::status permitted_groups::check(const fw::gang_ticket& t, const snapshot& snap) {
  if (!t.group || !has_min_resources(*t.group)) return fw::status::ok();
  clock::time_point now;
  {
    std::lock_guard<std::mutex> lock(mu_);
    now = now_locked();
    auto it = entries_.find(t.key);
    if (it != entries_.end() && current(it->second, t, now)) return fw::status::ok();
  }
  walks_.fetch_add(1, std::memory_order_relaxed);
  fw::status s = check_min_resources(*t.group, t.key, snap);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(t.key);
  if (s.is_success()) {
    auto ttl = t.group->schedule_timeout.count() > 0 ? t.group->schedule_timeout : default_ttl;
    entry e{t.group, t.round, now + std::chrono::duration_cast<clock::duration>(ttl)};
    if (it != entries_.end()) {
      it->second = std::move(e);
      return s;
    }
    if (entries_.size() >= sweep_at_) {
      // go-cache's janitor, run as the map grows: groups that never came back leave.
      for (auto i = entries_.begin(); i != entries_.end();)
        i = now < i->second.expiry ? std::next(i) : entries_.erase(i);
      sweep_at_ = std::max<size_t>(64, 2 * entries_.size());
    }
    entries_.emplace(t.key, std::move(e));
  } else if (it != entries_.end() && !current(it->second, t, now)) {
    entries_.erase(it);  // stale (another attempt, another object, expired); a current one is a
                         // member's pass on another snapshot, which stands, as upstream's would
  }
  return s;
}

bool permitted_groups::permitted(const fw::gang_ticket& t) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(t.key);
  return it != entries_.end() && current(it->second, t, now_locked());
}

size_t permitted_groups::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void permitted_groups::set_clock(std::function<clock::time_point()> now) {
  std::lock_guard<std::mutex> lock(mu_);
  clock_ = std::move(now);
}

}  // namespace kas::plugins

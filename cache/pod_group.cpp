// See pod_group.hpp. Validation follows the apiserver's (scheduling.k8s.io/v1beta1 PodGroup's
// validatePodGroupSchedulingPolicy / validateGangSchedulingPolicy) and, for the Coscheduling CRD,
// what its plugin accepts; the errors read as apimachinery's field errors.
#include "cache/pod_group.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/name_validation.hpp"
#include "messages/quantity.hpp"

namespace kas {
namespace {

error at(const std::string& path, const std::string& msg) { return error{path + ": " + msg}; }

// metadata.creationTimestamp in nanoseconds since the epoch, saturating as compile_pod does (it only
// orders groups).
int64_t creation_ns(const k8s::meta::ObjectMeta& meta) {
  if (!meta.has_creation_timestamp()) return 0;
  constexpr int64_t max_seconds = std::numeric_limits<int64_t>::max() / 1000000000LL - 1;
  int64_t sec = std::clamp<int64_t>(meta.creation_timestamp().seconds(), -max_seconds, max_seconds);
  return sec * 1000000000LL + std::clamp<int64_t>(meta.creation_timestamp().nanos(), 0, 999999999);
}

void fill_meta(const k8s::meta::ObjectMeta& meta, pod_group& g) {
  g.ns = meta.namespace_();
  g.name = meta.name();
  g.uid = meta.uid();
  g.creation_ns = creation_ns(meta);
}

}  // namespace

result<pod_group_ptr> compile_pod_group(const k8s::scheduling::PodGroup& pg, std::optional<int32_t> class_priority) {
  auto g = std::make_shared<pod_group>();
  g->api = pod_group_api::workload;
  fill_meta(pg.metadata(), *g);
  const auto& spec = pg.spec();
  const auto& policy = spec.scheduling_policy();
  const std::string policy_path = "spec.schedulingPolicy";
  // A union: exactly one of basic and gang.
  if (!policy.has_basic() && !policy.has_gang())
    return at(policy_path, "Invalid value: \"\": must specify one of: `basic`, `gang`");
  if (policy.has_basic() && policy.has_gang())
    return at(policy_path, "Invalid value: \"{`basic`, `gang`}\": exactly one of `basic`, `gang` is required, but "
                           "multiple fields are set");
  if (policy.has_gang()) {
    const int32_t min = policy.gang().min_count();
    if (min == 0) return at(policy_path + ".gang.minCount", "Required value");
    if (min < 0) return at(policy_path + ".gang.minCount", "Invalid value: " + std::to_string(min) + ": must be greater than zero");
    g->gang = true;
    g->min_count = min;
  }
  std::set<std::string> keys;
  const auto& topology = spec.scheduling_constraints().topology();
  for (int i = 0; i < topology.size(); ++i) {
    const std::string path = "spec.schedulingConstraints.topology[" + std::to_string(i) + "].key";
    const std::string& key = topology.Get(i).key();
    if (key.empty()) return at(path, "Required value");
    if (auto why = qualified_name_problem(key); !why.empty()) return at(path, "Invalid value: \"" + key + "\": " + why);
    if (!keys.insert(key).second) return at(path, "Duplicate value: \"" + key + "\"");
    g->topology_keys.push_back(key);
  }
  g->priority_class_name = spec.priority_class_name();
  if (!g->priority_class_name.empty())
    if (auto why = dns1123_subdomain_problem(g->priority_class_name); !why.empty())
      return at("spec.priorityClassName", "Invalid value: \"" + g->priority_class_name + "\": " + why);
  if (spec.has_priority())
    g->priority = spec.priority();
  else if (!g->priority_class_name.empty())
    g->priority = class_priority;
  return pod_group_ptr(std::move(g));
}

result<pod_group_ptr> compile_pod_group(const k8s::coscheduling::PodGroup& pg) {
  auto g = std::make_shared<pod_group>();
  g->api = pod_group_api::coscheduling;
  fill_meta(pg.metadata(), *g);
  const auto& spec = pg.spec();
  g->gang = true;
  const int32_t min = spec.min_member();
  if (min < 0)
    return at("spec.minMember", "Invalid value: " + std::to_string(min) + ": must be greater than or equal to 0");
  // minMember is `omitempty` and the CRD sets no minimum: 0 is what an omitted field reads as. The
  // Coscheduling plugin compares member counts against it (PreFilter: fewer pods than minMember;
  // Permit: assigned+1 >= minMember), so a 0 lets every pod through on its own: exactly a gang of 1.
  g->min_count = std::max<int32_t>(1, min);
  if (spec.has_schedule_timeout_seconds()) {
    const int32_t t = spec.schedule_timeout_seconds();
    if (t < 0)
      return at("spec.scheduleTimeoutSeconds",
                "Invalid value: " + std::to_string(t) + ": must be greater than or equal to 0");
    g->schedule_timeout = std::chrono::seconds(t);  // 0: the plugin's default, as pod_group says
  }
  // A ResourceList as NodeResourcesFit reads one: cpu in millicores, names that are not resources
  // the scheduler counts are dropped, as framework.Resource.Add drops them. Sorted for a stable
  // scalar order.
  std::map<std::string, std::string> sorted;
  for (const auto& [name, q] : spec.min_resources()) sorted.emplace(name, q.string());
  for (const auto& [name, text] : sorted) {
    const std::string path = "spec.minResources." + name;
    auto parsed = parse_quantity(text);
    if (!parsed) return at(path, parsed.err().message);
    if (parsed->negative()) return at(path, "Invalid value: \"" + text + "\": must be greater than or equal to 0");
    resource_list& r = g->min_resources;
    if (name == res_cpu) r.milli_cpu += parsed->milli_value();
    else if (name == res_memory) r.memory += parsed->value();
    else if (name == res_ephemeral_storage) r.ephemeral_storage += parsed->value();
    else if (name == res_pods) r.allowed_pod_number += parsed->value();
    else if (is_scalar_resource_name(name)) r.add_scalar(name, parsed->value());
  }
  return pod_group_ptr(std::move(g));
}

void to_api_object(const pod_group& g, k8s::scheduling::PodGroup& out) {
  out.Clear();
  out.mutable_metadata()->set_name(g.name);
  out.mutable_metadata()->set_namespace_(g.ns);
  auto* spec = out.mutable_spec();
  if (g.gang) spec->mutable_scheduling_policy()->mutable_gang()->set_min_count(g.min_count);
  else spec->mutable_scheduling_policy()->mutable_basic();
  for (auto& key : g.topology_keys) spec->mutable_scheduling_constraints()->add_topology()->set_key(key);
  if (!g.priority_class_name.empty()) spec->set_priority_class_name(g.priority_class_name);
  if (g.priority) spec->set_priority(*g.priority);
}

void to_api_object(const pod_group& g, k8s::coscheduling::PodGroup& out) {
  out.Clear();
  out.mutable_metadata()->set_name(g.name);
  out.mutable_metadata()->set_namespace_(g.ns);
  auto* spec = out.mutable_spec();
  spec->set_min_member(g.min_count);
  if (g.schedule_timeout.count() > 0) spec->set_schedule_timeout_seconds(static_cast<int32_t>(g.schedule_timeout.count()));
  const resource_list& r = g.min_resources;
  auto& min = *spec->mutable_min_resources();
  if (r.milli_cpu > 0) min[std::string(res_cpu)].set_string(format_milli_quantity(r.milli_cpu));
  if (r.memory > 0) min[std::string(res_memory)].set_string(format_byte_quantity(r.memory));
  if (r.ephemeral_storage > 0) min[std::string(res_ephemeral_storage)].set_string(format_byte_quantity(r.ephemeral_storage));
  if (r.allowed_pod_number > 0) min[std::string(res_pods)].set_string(std::to_string(r.allowed_pod_number));
  for (auto& [name, v] : r.scalar)
    min[name].set_string(is_hugepages_resource_name(name) ? format_byte_quantity(v) : std::to_string(v));
}

}  // namespace kas

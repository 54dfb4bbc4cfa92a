#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.hpp"

#include "plugins/helper/args.hpp"

#include <cmath>
#include <set>

#include "plugins/node_resources_fit/resource_allocation.hpp"

namespace kas::plugins {

namespace {

using helper::check_keys;
using helper::quoted;
using helper::scalar;

struct pre_score_state final : fw::state_data {
  std::vector<int64_t> pod_requests;  // one per configured resource
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_score_state>(*this); }
};

bool best_effort(const std::vector<int64_t>& requests) {
  for (auto r : requests)
    if (r != 0) return false;
  return true;
}


}  // namespace

result<balanced_allocation_args> parse_balanced_allocation_args(const YAML::Node& args, const std::string& path) {
  balanced_allocation_args out;
  if (!args || args.IsNull()) return out;
  if (!args.IsMap()) return error{path + ": expected an object (NodeResourcesBalancedAllocationArgs)"};
  if (auto r = check_keys(args, path, {"apiVersion", "kind", "resources"}); !r) return r.err();
  YAML::Node res = args["resources"];
  if (!res || res.IsNull() || (res.IsSequence() && res.size() == 0)) return out;  // v1 default: cpu, memory
  if (!res.IsSequence()) return error{path + ".resources: expected a list"};
  out.resources.clear();
  std::set<std::string> seen;
  for (size_t i = 0; i < res.size(); ++i) {
    std::string p = path + ".resources[" + std::to_string(i) + "]";
    if (!res[i].IsMap()) return error{p + ": expected an object {name, weight}"};
    resource_spec r;
    r.weight = 0;
    for (auto it = res[i].begin(); it != res[i].end(); ++it) {
      auto key = it->first.as<std::string>();
      if (key == "name") {
        auto s = scalar<std::string>(it->second, p + ".name", "a string");
        if (!s) return s.err();
        r.name = *s;
      } else if (key == "weight") {
        auto w = scalar<int64_t>(it->second, p + ".weight", "an integer");
        if (!w) return w.err();
        r.weight = *w;
      } else {
        return error{p + "." + key + ": unknown field"};
      }
    }
    if (r.weight == 0) r.weight = 1;  // v1 defaulting
    if (!seen.insert(r.name).second) return error{p + ".name: Duplicate value: \"" + r.name + "\""};
    if (r.weight != 1) return error{p + ".weight: Invalid value: " + std::to_string(r.weight) + ": must be 1"};
    out.resources.push_back(std::move(r));
  }
  return out;
}

int64_t balanced_resource_score(const resource_values& requested, const resource_values& allocatable) {
  // The fractions of the resources the node has (allocatable 0 is left out), capped at 1.
  auto fraction = [&](size_t i) {
    double f = static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]);
    return f > 1 ? 1.0 : f;
  };
  double total = 0;
  size_t count = 0;
  double first = 0, second = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    double f = fraction(i);
    if (count == 0) first = f;
    if (count == 1) second = f;
    total += f;
    ++count;
  }
  double std_dev = 0;
  if (count == 2) {
    std_dev = std::abs((first - second) / 2);
  } else if (count > 2) {
    double mean = total / static_cast<double>(count);
    double sum = 0;
    for (size_t i = 0; i < requested.size(); ++i)
      if (allocatable[i] != 0) sum += (fraction(i) - mean) * (fraction(i) - mean);
    std_dev = std::sqrt(sum / static_cast<double>(count));
  }
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(fw::max_node_score));
}

result<std::shared_ptr<fw::plugin>> node_resources_balanced_allocation::make(const YAML::Node& args,
                                                                             const std::string& path,
                                                                             const fw::handle&) {
  auto parsed = parse_balanced_allocation_args(args, path);
  if (!parsed) return parsed.err();
  return std::shared_ptr<fw::plugin>(std::make_shared<node_resources_balanced_allocation>(std::move(*parsed)));
}

std::vector<int64_t> node_resources_balanced_allocation::pod_requests(const pod_info& pod) const {
  // The shared helper gives the non-zero cpu/memory requests; this plugin scores the real ones.
  auto out = pod_score_requests(pod, args_.resources);
  for (size_t i = 0; i < args_.resources.size(); ++i) {
    if (args_.resources[i].name == res_cpu) out[i] = pod.requests.milli_cpu;
    if (args_.resources[i].name == res_memory) out[i] = pod.requests.memory;
  }
  return out;
}

int64_t node_resources_balanced_allocation::score_requests(const node_info& node,
                                                           const std::vector<int64_t>& pod_requests) const {
  resource_values requested(pod_requests.size()), allocatable(pod_requests.size());
  for (size_t i = 0; i < pod_requests.size(); ++i) {
    const resource_spec& r = args_.resources[i];
    allocatable_and_requested(node, r, pod_requests[i], allocatable[i], requested[i]);
    // This plugin balances the real requests, not the non-zero defaults.
    if (r.kind == resource_kind::cpu) requested[i] = node.requested.milli_cpu + pod_requests[i];
    if (r.kind == resource_kind::memory) requested[i] = node.requested.memory + pod_requests[i];
  }
  return balanced_resource_score(requested, allocatable);
}

fw::status node_resources_balanced_allocation::pre_score(fw::cycle_state& state, const pod_info& pod,
                                                         const std::vector<const node_info*>&) const {
  auto s = std::make_shared<pre_score_state>();
  s->pod_requests = pod_requests(pod);
  if (best_effort(s->pod_requests)) return fw::status::skip();
  state.write(pre_score_key, std::move(s));
  return fw::status::ok();
}

fw::status node_resources_balanced_allocation::score(const fw::cycle_state& state, const pod_info& pod,
                                                     const node_info& node, int64_t& out) const {
  if (auto* s = state.read_as<pre_score_state>(pre_score_key)) {
    out = score_requests(node, s->pod_requests);
    return fw::status::ok();
  }
  // kube recomputes the requests when PreScore did not run, and scores a best-effort pod 0.
  auto requests = pod_requests(pod);
  out = best_effort(requests) ? 0 : score_requests(node, requests);
  return fw::status::ok();
}

bool node_resources_balanced_allocation::sign_pod(const pod_info& pod, std::string& out) const {
  out += std::to_string(pod.requests.milli_cpu) + "," + std::to_string(pod.requests.memory) + "," +
         std::to_string(pod.requests.ephemeral_storage);
  for (auto& [n, v] : pod.requests.scalar) out += "," + n + "=" + std::to_string(v);
  out += ';';
  return true;
}

// Over CPU and memory (the default resources), node_hot holds what the score reads.
bool node_resources_balanced_allocation::score_hot(const fw::cycle_state& state, const pod_info&,
                                                   const node_hot* const* hot, size_t n, int64_t* out) const {
  const auto* s = state.read_as<pre_score_state>(pre_score_key);
  const size_t k = args_.resources.size();
  if (!s || !hot_resources_only(args_.resources)) return false;
  if (k == 2) {
    // The default resources (cpu and memory): balanced_resource_score's steps for two fractions,
    // inlined per node, the same floating point operations in the same order.
    const bool cpu0 = args_.resources[0].kind == resource_kind::cpu;
    const bool cpu1 = args_.resources[1].kind == resource_kind::cpu;
    const int64_t pod0 = s->pod_requests[0], pod1 = s->pod_requests[1];
    recent_hot_scores recent;  // as in hot_allocated_scores
    for (size_t i = 0; i < n; ++i) {
      const node_hot& h = *hot[i];
      if (const int64_t* known = recent.find(h.alloc_cpu, h.alloc_mem, h.req_cpu, h.req_mem)) {
        out[i] = *known;
        continue;
      }
      const int64_t a0 = cpu0 ? h.alloc_cpu : h.alloc_mem, a1 = cpu1 ? h.alloc_cpu : h.alloc_mem;
      const int64_t r0 = (cpu0 ? h.req_cpu : h.req_mem) + pod0, r1 = (cpu1 ? h.req_cpu : h.req_mem) + pod1;
      double std_dev = 0;
      if (a0 != 0 && a1 != 0) {
        double f0 = static_cast<double>(r0) / static_cast<double>(a0);
        double f1 = static_cast<double>(r1) / static_cast<double>(a1);
        f0 = f0 > 1 ? 1.0 : f0;
        f1 = f1 > 1 ? 1.0 : f1;
        std_dev = std::abs((f0 - f1) / 2);
      }
      out[i] = static_cast<int64_t>((1 - std_dev) * static_cast<double>(fw::max_node_score));
      recent.add(h.alloc_cpu, h.alloc_mem, h.req_cpu, h.req_mem, out[i]);
    }
    return true;
  }
  resource_values requested(k), allocatable(k);
  for (size_t i = 0; i < n; ++i) {
    hot_allocatable_and_requested(args_.resources, *hot[i], s->pod_requests, false, requested, allocatable);
    out[i] = balanced_resource_score(requested, allocatable);
  }
  return true;
}

fw::status node_resources_balanced_allocation::score_nodes(const fw::cycle_state& state, const pod_info& pod,
                                                          const node_info* const* nodes, size_t n,
                                                          int64_t* out) const {
  const auto* s = state.read_as<pre_score_state>(pre_score_key);
  if (!s) return fw::score_plugin::score_nodes(state, pod, nodes, n, out);
  for (size_t i = 0; i < n; ++i) out[i] = score_requests(*nodes[i], s->pod_requests);
  return fw::status::ok();
}

}  // namespace kas::plugins

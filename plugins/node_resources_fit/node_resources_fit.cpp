#include "plugins/node_resources_fit/node_resources_fit.hpp"

#include "plugins/node_resources_fit/resource_allocation.hpp"

namespace kas::plugins {

namespace {

struct pre_filter_state final : fw::state_data {
  resource_list request;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_filter_state>(*this); }
};

struct pre_score_state final : fw::state_data {
  std::vector<int64_t> pod_requests;  // one per configured scoring resource
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_score_state>(*this); }
};

bool requests_nothing(const resource_list& r) {
  return r.milli_cpu == 0 && r.memory == 0 && r.ephemeral_storage == 0 && r.scalar.empty();
}

std::string_view insufficient_reason(std::string_view resource) {
  if (resource == res_cpu) return "Insufficient cpu";
  if (resource == res_memory) return "Insufficient memory";
  if (resource == res_ephemeral_storage) return "Insufficient ephemeral-storage";
  return fw::intern("Insufficient " + std::string(resource));
}


}  // namespace

void fits_request(const resource_list& request, const resource_list& allocatable, const resource_list& requested,
                  size_t pod_count, const std::set<std::string, std::less<>>& ignored,
                  const std::set<std::string, std::less<>>& ignored_groups, std::vector<insufficient_resource>& out) {
  if (static_cast<int64_t>(pod_count) + 1 > allocatable.allowed_pod_number) out.push_back({"Too many pods", false});
  if (requests_nothing(request)) return;

  auto check = [&](std::string_view name, int64_t want, int64_t alloc, int64_t used) {
    if (want > 0 && want > alloc - used) out.push_back({insufficient_reason(name), want > alloc});
  };
  check(res_cpu, request.milli_cpu, allocatable.milli_cpu, requested.milli_cpu);
  check(res_memory, request.memory, allocatable.memory, requested.memory);
  check(res_ephemeral_storage, request.ephemeral_storage, allocatable.ephemeral_storage, requested.ephemeral_storage);
  for (auto& [name, want] : request.scalar) {
    if (want == 0) continue;
    if (is_extended_resource_name(name)) {
      if (ignored.count(name)) continue;
      if (!ignored_groups.empty()) {
        auto slash = name.find('/');
        if (ignored_groups.count(std::string_view(name).substr(0, slash))) continue;
      }
    }
    check(name, want, allocatable.get_scalar(name), requested.get_scalar(name));
  }
}

result<std::shared_ptr<fw::plugin>> node_resources_fit::make(const YAML::Node& args, const std::string& path,
                                                             const fw::handle&) {
  auto parsed = parse_node_resources_fit_args(args, path);
  if (!parsed) return parsed.err();
  return std::shared_ptr<fw::plugin>(std::make_shared<node_resources_fit>(std::move(*parsed)));
}

fw::status node_resources_fit::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot&,
                                          fw::pre_filter_result&) const {
  auto s = std::make_shared<pre_filter_state>();
  s->request = pod.requests;
  state.write(pre_filter_key, std::move(s));
  return fw::status::ok();
}

fw::status node_resources_fit::filter(const fw::cycle_state& state, const pod_info& pod, const node_info& node) const {
  // Without PreFilter state (a re-check outside the cycle) the compiled pod carries the same request.
  auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  const resource_list& request = s ? s->request : pod.requests;
  std::vector<insufficient_resource> short_of;
  fits_request(request, node.allocatable, node.requested, node.pods.size(), args_.ignored_resources,
               args_.ignored_resource_groups, short_of);
  if (short_of.empty()) return fw::status::ok();
  std::vector<std::string_view> reasons;
  reasons.reserve(short_of.size());
  auto c = fw::code::unschedulable;
  for (auto& r : short_of) {
    reasons.push_back(r.reason);
    if (r.unresolvable) c = fw::code::unschedulable_and_unresolvable;
  }
  return fw::status(c, std::move(reasons));
}

// node_hot holds the pod count, CPU and memory: a pod that asks for nothing else is checked there.
bool node_resources_fit::hot_filter(const fw::cycle_state& state, const pod_info& pod, fw::hot_filter& out) const {
  auto* s = state.read_as<pre_filter_state>(pre_filter_key);
  const resource_list& request = s ? s->request : pod.requests;
  if (request.ephemeral_storage != 0) return false;
  for (auto& kv : request.scalar)
    if (kv.second != 0) return false;
  out.check_fit = true;
  out.cpu = request.milli_cpu;
  out.mem = request.memory;
  return true;
}

fw::status node_resources_fit::pre_score(fw::cycle_state& state, const pod_info& pod,
                                         const std::vector<const node_info*>&) const {
  auto s = std::make_shared<pre_score_state>();
  s->pod_requests = pod_score_requests(pod, args_.resources);
  state.write(pre_score_key, std::move(s));
  return fw::status::ok();
}

int64_t node_resources_fit::score_requests(const node_info& node, const std::vector<int64_t>& pod_requests) const {
  const size_t n = args_.resources.size();
  resource_values requested(n), allocatable(n);
  for (size_t i = 0; i < n; ++i)
    allocatable_and_requested(node, args_.resources[i], pod_requests[i], allocatable[i], requested[i]);
  return score_values(requested, allocatable);
}

int64_t node_resources_fit::score_values(const resource_values& requested, const resource_values& allocatable) const {
  switch (args_.type) {
    case scoring_strategy_type::least_allocated: return least_allocated_score(args_.resources, requested, allocatable);
    case scoring_strategy_type::most_allocated: return most_allocated_score(args_.resources, requested, allocatable);
    case scoring_strategy_type::requested_to_capacity_ratio:
      return requested_to_capacity_ratio_score(args_.resources, args_.shape, requested, allocatable);
  }
  return 0;
}

fw::status node_resources_fit::score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                                     int64_t& out) const {
  if (args_.resources.empty()) return fw::status::error("resources not found");
  if (auto* s = state.read_as<pre_score_state>(pre_score_key)) {
    out = score_requests(node, s->pod_requests);
  } else {
    // kube recomputes the requests when PreScore did not run.
    out = score_requests(node, pod_score_requests(pod, args_.resources));
  }
  return fw::status::ok();
}

namespace {

bool pod_fits_empty_node(const pod_info& pod, const node_info& node) {
  std::vector<insufficient_resource> short_of;
  static const std::set<std::string, std::less<>> none;
  fits_request(pod.requests, node.allocatable, resource_list{}, 0, none, none, short_of);
  return short_of.empty();
}

// kube's haveAnyRequestedResourcesIncreased: did the update grow an allocatable the pod needs?
bool requested_allocatable_increased(const pod_info& pod, const node_info& old_n, const node_info& new_n) {
  const resource_list& r = pod.requests;
  const resource_list& a0 = old_n.allocatable;
  const resource_list& a1 = new_n.allocatable;
  if (a1.allowed_pod_number > a0.allowed_pod_number) return true;
  if (requests_nothing(r)) return false;
  if ((r.milli_cpu > 0 && a1.milli_cpu > a0.milli_cpu) || (r.memory > 0 && a1.memory > a0.memory) ||
      (r.ephemeral_storage > 0 && a1.ephemeral_storage > a0.ephemeral_storage))
    return true;
  for (auto& [name, q] : r.scalar)
    if (q != 0 && a1.get_scalar(name) > a0.get_scalar(name)) return true;
  return false;
}

// kube's isSchedulableAfterPodScaleDown: did a scheduled pod shrink a request the target needs?
bool scaled_down_relevant(const pod_info& target, const pod_info& old_p, const pod_info& new_p) {
  if (new_p.uid == target.uid) return true;
  if (new_p.node_name.empty()) return false;
  const resource_list& t = target.requests;
  const resource_list& o = old_p.requests;
  const resource_list& m = new_p.requests;
  if (t.milli_cpu != 0 && o.milli_cpu > m.milli_cpu) return true;
  if (t.memory != 0 && o.memory > m.memory) return true;
  if (t.ephemeral_storage != 0 && o.ephemeral_storage > m.ephemeral_storage) return true;
  for (auto& [name, q] : t.scalar)
    if (q != 0 && is_scalar_resource_name(name) && o.get_scalar(name) > m.get_scalar(name)) return true;
  return false;
}

}  // namespace

std::vector<fw::cluster_event_with_hint> node_resources_fit::events_to_register() const {
  // QueueingHints and InPlacePodVerticalScaling on (both GA): Pod Delete|UpdatePodScaleDown and
  // Node Add|UpdateNodeAllocatable.
  auto pod_hint = [](const pod_info& pod, const fw::event_objects& o) {
    if (!o.new_pod) {
      if (!o.old_pod) return fw::queueing_hint::queue;
      return o.old_pod->node_name.empty() ? fw::queueing_hint::skip : fw::queueing_hint::queue;
    }
    if (!o.old_pod) return fw::queueing_hint::skip;
    return scaled_down_relevant(pod, *o.old_pod, *o.new_pod) ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  };
  auto node_hint = [](const pod_info& pod, const fw::event_objects& o) {
    if (!o.new_node) return fw::queueing_hint::queue;
    if (!pod_fits_empty_node(pod, *o.new_node)) return fw::queueing_hint::skip;
    if (!o.old_node) return fw::queueing_hint::queue;
    return requested_allocatable_increased(pod, *o.old_node, *o.new_node) ? fw::queueing_hint::queue
                                                                           : fw::queueing_hint::skip;
  };
  return {
    {{fw::event_resource::pod, fw::act_delete | fw::act_update_pod_scale_down, "PodDelete|PodScaleDown"}, pod_hint},
    {{fw::event_resource::node, fw::act_add | fw::act_update_node_allocatable, "NodeAdd|NodeAllocatableChange"},
     node_hint},
  };
}

bool node_resources_fit::sign_pod(const pod_info& pod, std::string& out) const {
  auto put = [&out](const resource_list& r) {
    out += std::to_string(r.milli_cpu) + "," + std::to_string(r.memory) + "," + std::to_string(r.ephemeral_storage);
    for (auto& [n, v] : r.scalar) out += "," + n + "=" + std::to_string(v);
    out += ';';
  };
  put(pod.requests);
  put(pod.non_zero_requests);
  return true;
}

// The scoring strategies over CPU and memory (the default resources) read node_hot.
bool node_resources_fit::score_hot(const fw::cycle_state& state, const pod_info&, const node_hot* const* hot, size_t n,
                                   int64_t* out) const {
  const auto* s = state.read_as<pre_score_state>(pre_score_key);
  const size_t k = args_.resources.size();
  if (!s || k == 0 || !hot_resources_only(args_.resources)) return false;
  if (args_.type != scoring_strategy_type::requested_to_capacity_ratio &&
      hot_allocated_scores(args_.type == scoring_strategy_type::most_allocated, args_.resources, s->pod_requests,
                           hot, n, out))
    return true;
  resource_values requested(k), allocatable(k);
  for (size_t i = 0; i < n; ++i) {
    hot_allocatable_and_requested(args_.resources, *hot[i], s->pod_requests, true, requested, allocatable);
    out[i] = score_values(requested, allocatable);
  }
  return true;
}

fw::status node_resources_fit::score_nodes(const fw::cycle_state& state, const pod_info& pod,
                                           const node_info* const* nodes, size_t n, int64_t* out) const {
  const auto* s = state.read_as<pre_score_state>(pre_score_key);
  if (!s || args_.resources.empty()) return fw::score_plugin::score_nodes(state, pod, nodes, n, out);
  for (size_t i = 0; i < n; ++i) out[i] = score_requests(*nodes[i], s->pod_requests);
  return fw::status::ok();
}

}  // namespace kas::plugins

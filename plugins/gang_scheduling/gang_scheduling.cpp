#include "plugins/gang_scheduling/gang_scheduling.hpp"

#include <algorithm>
#include <map>

namespace kas::plugins {

namespace {

// The gang ticket of a member whose group has a topology constraint, or null.
const fw::gang_ticket* topology_gang(const fw::cycle_state& state) {
  auto* t = state.gang;
  return t && t->group && t->group->gang && !t->group->topology_keys.empty() ? t : nullptr;
}

// How many more pods like `pod` fit on the node, by CPU, memory and pod count.
int64_t room_for(const pod_info& pod, const node_hot& h) {
  int64_t n = std::max<int64_t>(0, h.alloc_pods - h.pods);
  if (pod.requests.milli_cpu > 0) n = std::min(n, std::max<int64_t>(0, h.alloc_cpu - h.req_cpu) / pod.requests.milli_cpu);
  if (pod.requests.memory > 0) n = std::min(n, std::max<int64_t>(0, h.alloc_mem - h.req_mem) / pod.requests.memory);
  return n;
}

std::string display_keys(const pod_group& g) {
  std::string out;
  for (auto& k : g.topology_keys) out += (out.empty() ? "" : ",") + k;
  return out;
}

}  // namespace

std::string topology_domain(const pod_group& g, const node_info& node) {
  std::string d;
  for (size_t i = 0; i < g.topology_keys.size(); ++i) {
    const std::string* v = node.labels.get(g.topology_keys[i]);
    if (!v) return {};
    if (i) d += '\x1f';
    d += *v;
  }
  return d;
}

fw::status gang_scheduling::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                       fw::pre_filter_result&) const {
  const fw::gang_ticket* t = topology_gang(state);
  if (!t) return fw::status::skip();
  if (!state.gang_domain.empty()) return fw::status::ok();  // an earlier member of the attempt chose it
  // The first member of the attempt: the domain with the most room for the members still to place,
  // counted in pods like this one (a gang's members are usually alike).
  const pod_group& g = *t->group;
  std::map<std::string, int64_t> room;
  for (size_t i = 0; i < snap.size(); ++i) {
    std::string d = topology_domain(g, snap.node(i));
    if (!d.empty()) room[d] += room_for(pod, snap.hot(i));
  }
  size_t bound = t->bound ? t->bound->size() : 0;
  int64_t need = std::max<int64_t>(1, static_cast<int64_t>(g.min_count) - static_cast<int64_t>(bound));
  auto tried = [&](const std::string& d) {
    return state.gang_tried && std::find(state.gang_tried->begin(), state.gang_tried->end(), d) != state.gang_tried->end();
  };
  const std::string* best = nullptr;
  int64_t best_room = -1;
  for (bool skip_tried : {true, false}) {
    for (auto& [d, r] : room)
      if (r >= need && r > best_room && !(skip_tried && tried(d))) best = &d, best_room = r;
    if (best) break;
  }
  if (!best)
    return fw::status(fw::code::unschedulable_and_unresolvable,
                      fw::intern("no single " + display_keys(g) + " domain has room for " + std::to_string(need) +
                                 " members of the pod group"));
  state.gang_domain = *best;
  return fw::status::ok();
}

fw::status gang_scheduling::filter(const fw::cycle_state& state, const pod_info&, const node_info& node) const {
  const fw::gang_ticket* t = topology_gang(state);
  if (!t || state.gang_domain.empty()) return fw::status::ok();
  if (topology_domain(*t->group, node) == state.gang_domain) return fw::status::ok();
  return fw::status::unresolvable(wrong_domain);
}

bool gang_scheduling::sign_pod(const pod_info& pod, std::string& out) const {
  out = pod.group_key;
  return true;
}

result<std::shared_ptr<fw::plugin>> gang_scheduling::make(const YAML::Node&, const std::string&, const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<gang_scheduling>());
}

fw::status gang_scheduling::pre_enqueue(const pod_info& pod, const fw::group_directory& groups) const {
  if (!pod.in_group()) return fw::status::ok();
  const pod_group* g = groups.group(pod.group_key);
  if (!g)
    return fw::status(fw::code::unschedulable_and_unresolvable,
                      fw::intern("waiting for pod's pod group \"" + pod.group_name + "\" to appear in scheduling queue"));
  if (!g->gang) return fw::status::ok();
  if (groups.members(pod.group_key) < static_cast<size_t>(g->min_count))
    return fw::status(fw::code::unschedulable_and_unresolvable,
                      "waiting for minCount pods from a gang to appear in scheduling queue");
  return fw::status::ok();
}

fw::status gang_scheduling::permit(fw::cycle_state& state, const pod_info&, const std::string&,
                                   std::chrono::milliseconds& timeout) const {
  // The queue gives a ticket only to members of an existing gang group.
  if (!state.gang || !state.gang->group || !state.gang->group->gang) return fw::status::ok();
  auto t = state.gang->group->schedule_timeout;
  timeout = t.count() > 0 ? std::chrono::duration_cast<std::chrono::milliseconds>(t)
                          : std::chrono::duration_cast<std::chrono::milliseconds>(default_timeout);
  return fw::status(fw::code::wait, wait_message);
}

std::vector<fw::cluster_event_with_hint> gang_scheduling::events_to_register() const {
  // A pod joining the group (unscheduled or bound) may complete its quorum: kube's
  // isSchedulableAfterPodAdded. (PodGroup adds and updates re-run PreEnqueue in the queue, which
  // sees the objects change.)
  auto same_group = [](const pod_info& pod, const fw::event_objects& o) {
    const pod_info* added = o.new_pod;
    if (!pod.in_group() || !added || !added->in_group()) return fw::queueing_hint::skip;
    return added->group_key == pod.group_key ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  };
  return {
    {{fw::event_resource::unscheduled_pod, fw::act_add, "UnscheduledPodAdd"}, same_group},
    {{fw::event_resource::assigned_pod, fw::act_add, "AssignedPodAdd"}, same_group},
  };
}

std::string gang_failure_message(const pod_group& g, size_t placed, size_t members) {
  return "pod group " + g.display() + ": " + std::to_string(placed) + "/" + std::to_string(members) +
         " members could be placed (minCount " + std::to_string(g.min_count) + ")";
}

}  // namespace kas::plugins

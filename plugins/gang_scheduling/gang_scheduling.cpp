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

// The domains of one set of topology keys over a snapshot's nodes: for each node its domain, and
// for each domain (in order of the joined values, as kube's maps iterate) its nodes' snapshot
// indexes, ascending, shared with the PreFilterResults that hand them out. Built once with a string
// per node; then brought up to date with each snapshot by comparing node pointers: a node whose
// object changed (a pod was added, say) keeps its domain unless its name or the keys' values
// changed, which rebuilds the index. Holding the node pointers keeps those objects alive, so an
// equal pointer is the same, unchanged node.
struct gang_scheduling::domain_index {
  std::vector<std::string> keys;
  std::vector<node_info_ptr> nodes;  // the nodes of the snapshot it is up to date with
  std::vector<int32_t> domain_of;    // node index -> domain id; -1: the node lacks a key
  std::vector<std::string> domains;  // id -> the keys' values joined by '\x1f', sorted
  std::vector<std::shared_ptr<const std::vector<uint32_t>>> members;  // id -> its nodes' indexes

  bool same_values(const node_info& a, const node_info& b) const {
    if (a.labels.identity() == b.labels.identity()) return true;
    for (auto& k : keys) {
      const std::string* x = a.labels.get(k);
      const std::string* y = b.labels.get(k);
      if ((x == nullptr) != (y == nullptr) || (x && *x != *y)) return false;
    }
    return true;
  }

  void rebuild(const snapshot& snap) {
    pod_group g;  // topology_domain reads only the keys
    g.topology_keys = keys;
    std::map<std::string, std::vector<uint32_t>> by_domain;
    std::vector<std::string> of(snap.size());
    nodes.assign(snap.size(), nullptr);
    for (size_t i = 0; i < snap.size(); ++i) {
      nodes[i] = snap.node_ptr(i);
      of[i] = topology_domain(g, *nodes[i]);
      if (!of[i].empty()) by_domain[of[i]].push_back(static_cast<uint32_t>(i));
    }
    domains.clear();
    members.clear();
    domain_of.assign(snap.size(), -1);
    for (auto& [d, in_domain] : by_domain) {
      auto id = static_cast<int32_t>(domains.size());
      domains.push_back(d);
      for (uint32_t i : in_domain) domain_of[i] = id;
      members.push_back(std::make_shared<const std::vector<uint32_t>>(std::move(in_domain)));
    }
  }

  void update(const snapshot& snap) {
    if (nodes.size() != snap.size()) return rebuild(snap);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const node_info_ptr& p = snap.node_ptr(i);
      if (p == nodes[i]) continue;
      if (p->name != nodes[i]->name || !same_values(*p, *nodes[i])) return rebuild(snap);
      nodes[i] = p;
    }
  }

  // The id of a domain, or -1 when no node of the snapshot is in it.
  long find(std::string_view domain) const {
    auto it = std::lower_bound(domains.begin(), domains.end(), domain,
                               [](const std::string& a, std::string_view b) { return a < b; });
    return it != domains.end() && *it == domain ? static_cast<long>(it - domains.begin()) : -1;
  }
};

gang_scheduling::gang_scheduling() = default;
gang_scheduling::~gang_scheduling() = default;

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

bool in_topology_domain(const pod_group& g, const node_info& node, std::string_view domain) {
  if (domain.empty() || g.topology_keys.empty()) return false;
  size_t pos = 0;
  for (size_t i = 0; i < g.topology_keys.size(); ++i) {
    const std::string* v = node.labels.get(g.topology_keys[i]);
    if (!v) return false;
    if (i) {
      if (pos >= domain.size() || domain[pos] != '\x1f') return false;
      ++pos;
    }
    if (domain.substr(pos, v->size()) != *v) return false;
    pos += v->size();
  }
  return pos == domain.size();
}

fw::status gang_scheduling::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                       fw::pre_filter_result& result) const {
  // Coscheduling's minResources: checked once per attempt of the group, not per member.
  if (state.gang && state.gang->group && has_min_resources(*state.gang->group))
    if (auto s = permitted_.check(*state.gang, snap); !s.is_success()) return s;
  const fw::gang_ticket* t = topology_gang(state);
  if (!t) return fw::status::skip();
  const pod_group& g = *t->group;
  std::lock_guard<std::mutex> lock(index_mu_);
  auto it = std::find_if(indexes_.begin(), indexes_.end(), [&](auto& ix) { return ix->keys == g.topology_keys; });
  if (it == indexes_.end()) {
    // A few key sets at most in a cluster; beyond that the oldest index goes.
    constexpr size_t max_indexes = 8;
    if (indexes_.size() >= max_indexes) indexes_.erase(indexes_.begin());
    indexes_.push_back(std::make_unique<domain_index>());
    indexes_.back()->keys = g.topology_keys;
    it = std::prev(indexes_.end());
  }
  domain_index& ix = **it;
  ix.update(snap);
  long chosen = -1;
  if (!state.gang_domain.empty()) {
    chosen = ix.find(state.gang_domain);  // an earlier member of the attempt chose it
  } else {
    // The first member of the attempt: the domain with the most room for the members still to
    // place, counted in pods like this one (a gang's members are usually alike).
    std::vector<int64_t> room(ix.domains.size(), 0);
    for (size_t i = 0; i < snap.size(); ++i)
      if (int32_t d = ix.domain_of[i]; d >= 0) room[static_cast<size_t>(d)] += room_for(pod, snap.hot(i));
    std::vector<bool> tried(ix.domains.size(), false);
    if (state.gang_tried)
      for (auto& d : *state.gang_tried)
        if (long id = ix.find(d); id >= 0) tried[static_cast<size_t>(id)] = true;
    size_t bound = t->bound ? t->bound->size() : 0;
    int64_t need = std::max<int64_t>(1, static_cast<int64_t>(g.min_count) - static_cast<int64_t>(bound));
    int64_t best_room = -1;
    for (bool skip_tried : {true, false}) {
      for (size_t d = 0; d < room.size(); ++d)
        if (room[d] >= need && room[d] > best_room && !(skip_tried && tried[d]))
          chosen = static_cast<long>(d), best_room = room[d];
      if (chosen >= 0) break;
    }
    if (chosen < 0)
      return fw::status(fw::code::unschedulable_and_unresolvable,
                        fw::intern("no single " + display_keys(g) + " domain has room for " + std::to_string(need) +
                                   " members of the pod group"));
    state.gang_domain = ix.domains[static_cast<size_t>(chosen)];
  }
  // The domain's nodes, as indexes of this snapshot (the index is up to date with it): shared, not
  // copied. Empty when the chosen domain has no node left in this snapshot: the framework then
  // rejects the pod naming this plugin.
  static const auto no_nodes = std::make_shared<const std::vector<uint32_t>>();
  result.node_indexes = chosen >= 0 ? ix.members[static_cast<size_t>(chosen)] : no_nodes;
  return fw::status::ok();
}

fw::status gang_scheduling::filter(const fw::cycle_state& state, const pod_info&, const node_info& node) const {
  const fw::gang_ticket* t = topology_gang(state);
  if (!t || state.gang_domain.empty()) return fw::status::ok();
  if (in_topology_domain(*t->group, node, state.gang_domain)) return fw::status::ok();
  return fw::status::unresolvable(wrong_domain);
}

bool gang_scheduling::hot_filter(const fw::cycle_state&, const pod_info&, fw::hot_filter&) const {
  // Without a domain Filter passes everywhere; with one, PreFilter's result holds only the
  // domain's nodes, the only candidates the hot path sees.
  return true;
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
  // Room that frees or appears may fit a gang that no single topology domain, or the cluster's
  // free resources (Coscheduling's minResources), had room for.
  auto room = [](const pod_info&, const fw::event_objects&) { return fw::queueing_hint::queue; };
  return {
    {{fw::event_resource::unscheduled_pod, fw::act_add, "UnscheduledPodAdd"}, same_group},
    {{fw::event_resource::assigned_pod, fw::act_add, "AssignedPodAdd"}, same_group},
    {{fw::event_resource::assigned_pod, fw::act_delete, "AssignedPodDelete"}, room},
    {{fw::event_resource::node, fw::act_add | fw::act_update_node_allocatable | fw::act_update_node_label,
      "NodeAdd|NodeAllocatableChange|NodeLabelChange"},
     room},
  };
}

std::string gang_failure_message(const pod_group& g, size_t placed, size_t members) {
  return "pod group " + g.display() + ": " + std::to_string(placed) + "/" + std::to_string(members) +
         " members could be placed (minCount " + std::to_string(g.min_count) + ")";
}

}  // namespace kas::plugins

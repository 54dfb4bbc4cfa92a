// Preemption on behalf of a gang PodGroup (issue #16): no member's victims are evicted unless the
// whole group can then fit.
//
// kube v1.36 (KEP-5710, alpha) runs a PodGroupPostFilter in its workload scheduling cycle: every
// lower-priority victim is removed from the cluster, the pod group is scheduled, then victims are
// reprieved one by one while every member still fits. This scheduler has no workload cycle: a
// gang's members go through pod cycles one by one, so the group's dry run runs in the PostFilter
// of the member that failed Filter:
//   - The members still to place are minCount minus the members bound (the ticket's `bound`), and
//     they are taken to be pods like this one. GangScheduling's topology choice assumes the same
//     (a gang's members are alike: one pod template); a gang of unlike members is planned as if
//     each were this pod.
//   - This gang's members that are only assumed or waiting at Permit lose their places when this
//     attempt fails (the permit coordinator rejects them all), so the dry run counts their
//     resources as free and places them again. Nominations of this gang's members are left out
//     too: the dry run places every member itself.
//   - The members are placed one after another on a working copy of the snapshot: a member goes to
//     a node the dry run already changed where it fits as it is, else to kube's choice among the
//     nodes where SelectVictimsOnNode makes it fit (only lower-priority victims, PDBs respected,
//     the minimal set per node, candidates visited from an offset and picked by kube's ordering);
//     its victims leave the working node, the member joins it, and the PreFilter extensions see
//     both, so the next member is filtered against the cluster as it would then be. PDB budgets
//     are charged as victims are chosen, so two members do not both spend the last disruption.
//   - With a topology constraint every member lands in one domain: each domain is planned in
//     turn, and among those where the whole gang fits, kube's candidate ordering over each
//     domain's victims picks one (kube v1.36 does not preempt for a constrained group at all:
//     "not supported with topology constraints").
//   - If every member fits, the victims of all of them are evicted and this pod is nominated to
//     its planned node; if not, nobody is evicted.
// The offset comes from the group's key, not the pod's uid: members of one attempt that fail in
// the same snapshot plan the same evictions, so a second member's PostFilter evicts nothing new.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "plugins/default_preemption/default_preemption.hpp"
#include "plugins/framework/groups.hpp"
#include "plugins/gang_scheduling/gang_scheduling.hpp"

namespace kas::plugins {

namespace {

void ignore_result(fw::status) {}

fw::status group_status(fw::code c, const std::string& msg) {
  return fw::status(c, fw::intern(std::string(default_preemption::group_prefix) + msg));
}

// FNV-1a of the group key: the same start for every member of the group, in every replay.
int32_t group_offset(const std::string& key, size_t n) {
  if (n == 0) return 0;
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ULL;
  return static_cast<int32_t>(h % n);
}

bool bound_member(const fw::gang_ticket& t, const std::string& uid) {
  return t.bound && std::find(t.bound->begin(), t.bound->end(), uid) != t.bound->end();
}

// The dry run's nodes: the snapshot's, overlaid by changed copies. A copy made from a parent's
// overlay is this overlay's own before it is changed (the parent's stay as they were).
struct working_nodes {
  std::unordered_map<std::string, std::shared_ptr<node_info>> changed;
  std::unordered_set<std::string> owned;

  const node_info& get(const node_info& orig) const {
    auto it = changed.find(orig.name);
    return it == changed.end() ? orig : *it->second;
  }
  bool is_changed(const std::string& name) const { return changed.count(name) > 0; }
  node_info& mut(const node_info& orig) {
    if (owned.insert(orig.name).second) changed[orig.name] = get(orig).clone();
    return *changed[orig.name];
  }
  working_nodes child() const {
    working_nodes w;
    w.changed = changed;
    return w;
  }
};

// Each victim that a PDB counts spends one of its disruptions (kube's filterPodsWithPDBViolation
// matching), so later members see what is left.
void charge_pdbs(snapshot& work, const std::vector<pod_info_ptr>& victims) {
  if (work.objects().pdbs.empty()) return;
  std::shared_ptr<cluster_objects> copy;
  for (const auto& v : victims) {
    if (v->labels.empty()) continue;
    const auto& pdbs = (copy ? *copy : work.objects()).pdbs;
    for (size_t i = 0; i < pdbs.size(); ++i) {
      const auto& pdb = pdbs[i];
      if (pdb.ns != v->ns || pdb.selector.nothing || pdb.selector.requirements.empty() ||
          !pdb.selector.matches(v->labels))
        continue;
      if (std::find(pdb.disrupted_pods.begin(), pdb.disrupted_pods.end(), v->name) != pdb.disrupted_pods.end())
        continue;
      if (!copy) copy = std::make_shared<cluster_objects>(work.objects());
      --copy->pdbs[i].disruptions_allowed;
    }
  }
  if (copy) work = work.with_objects(std::move(copy), work.generation());
}

// One domain's dry run.
struct gang_trial {
  bool fits = false;
  std::vector<std::string> members;
  std::vector<preemption_candidate> evictions;
  int64_t num_pdb_violations = 0;
  std::string error;
};

}  // namespace

gang_preemption_plan default_preemption::plan_gang_preemption(const fw::cycle_state& state, const pod_info& pod,
                                                              const snapshot& snap,
                                                              const fw::node_to_status& filtered,
                                                              const fw::framework_ops& fwk) const {
  gang_preemption_plan out;
  const fw::gang_ticket& t = *state.gang;
  const pod_group& g = *t.group;
  const size_t bound = t.bound ? t.bound->size() : 0;
  out.need = static_cast<size_t>(std::max<int64_t>(1, static_cast<int64_t>(g.min_count) - static_cast<int64_t>(bound)));

  // Nodes where removing pods may help: kube's rule, except that GangScheduling's own rejections
  // (the wrong domain, or no domain with room) are what the dry run is about to change.
  std::vector<const node_info*> potential;
  for (size_t i = 0; i < snap.size(); ++i) {
    const node_info& n = snap.node(i);
    const fw::status* s = filtered.get(n.name);
    if (!s) continue;
    if (s->get_code() == fw::code::unschedulable_and_unresolvable && s->plugin() != gang_scheduling::plugin_name)
      continue;
    potential.push_back(&n);
  }
  bool any_lower = false;
  for (const node_info* n : potential)
    for (const auto& p : n->pods) any_lower = any_lower || (p->priority < pod.priority && p->group_key != t.key);
  if (!any_lower) {
    out.no_victims = true;
    return out;
  }

  // The working snapshot: without this gang's nominations.
  snapshot work = snap;
  {
    bool own = false;
    for (const auto& [node, pods] : snap.nominated())
      for (const auto& p : pods) own = own || p->group_key == t.key;
    if (own) {
      auto m = std::make_shared<snapshot::nominated_map>();
      for (const auto& [node, pods] : snap.nominated())
        for (const auto& p : pods)
          if (p->group_key != t.key) (*m)[node].push_back(p);
      work = snap.with_nominated(std::move(m), snap.generation());
    }
  }
  // This gang's members not bound hold places only until this attempt fails: free them.
  fw::cycle_state base_state = state.clone();
  working_nodes base;
  for (size_t i = 0; i < snap.size(); ++i) {
    const node_info& n = snap.node(i);
    std::vector<pod_info_ptr> mine;
    for (const auto& p : n.pods)
      if (p->group_key == t.key && p->uid != pod.uid && !bound_member(t, p->uid)) mine.push_back(p);
    for (const auto& p : mine) {
      node_info& w = base.mut(n);
      w.remove_pod(p->uid);
      if (auto s = fwk.run_pre_filter_remove_pod(base_state, pod, *p, w); !s.is_success()) {
        out.error = s.message();
        return out;
      }
    }
  }

  // The members: this pod first, then copies of it under their own uids.
  std::vector<pod_info_ptr> members;
  members.push_back(std::make_shared<pod_info>(pod));
  for (size_t k = 1; k < out.need; ++k) {
    auto m = std::make_shared<pod_info>(pod);
    m->uid = pod.uid + "/gang-dry-run-" + std::to_string(k);
    m->name = pod.name + "-gang-dry-run-" + std::to_string(k);
    members.push_back(std::move(m));
  }

  auto plan_domain = [&](const std::string& domain, const std::vector<const node_info*>& nodes) {
    gang_trial tr;
    fw::cycle_state ws = base_state.clone();
    if (!domain.empty()) ws.gang_domain = domain;
    working_nodes wn = base.child();
    snapshot wsnap = work;
    const size_t n = nodes.size();
    const int32_t offset = group_offset(t.key, n);
    const int32_t num_candidates = calculate_num_candidates(static_cast<int32_t>(n));
    for (const auto& member : members) {
      const node_info* target = nullptr;
      // A node the dry run changed (freed members, evicted victims) may take it as it is.
      for (size_t i = 0; i < n && !target; ++i) {
        const node_info* o = nodes[(static_cast<size_t>(offset) + i) % n];
        if (wn.is_changed(o->name) && fwk.run_filter_with_nominated_pods(ws, *member, wn.get(*o), wsnap).is_success())
          target = o;
      }
      std::vector<pod_info_ptr> victims;
      if (!target) {
        std::vector<const node_info*> current;
        current.reserve(n);
        for (const node_info* o : nodes) current.push_back(&wn.get(*o));
        std::string as_is;
        auto dr = dry_run_preemption(ws, *member, current, wsnap, fwk, offset, num_candidates, &as_is);
        const preemption_candidate* best = as_is.empty() ? pick_one_node_for_preemption(dr.candidates) : nullptr;
        const std::string name = !as_is.empty() ? as_is : best ? best->node : std::string();
        if (name.empty()) {
          tr.error = dr.error;
          return tr;  // this member fits nowhere, even with preemption
        }
        for (const node_info* o : nodes)
          if (o->name == name) target = o;
        if (best) {
          victims = best->victims;
          tr.num_pdb_violations += best->num_pdb_violations;
        }
      }
      node_info& w = wn.mut(*target);
      for (const auto& v : victims) {
        w.remove_pod(v->uid);
        if (auto s = fwk.run_pre_filter_remove_pod(ws, pod, *v, w); !s.is_success()) {
          tr.error = s.message();
          return tr;
        }
      }
      charge_pdbs(wsnap, victims);
      w.add_pod(member);
      if (auto s = fwk.run_pre_filter_add_pod(ws, pod, *member, w); !s.is_success()) {
        tr.error = s.message();
        return tr;
      }
      tr.members.push_back(target->name);
      if (!victims.empty()) {
        auto it = std::find_if(tr.evictions.begin(), tr.evictions.end(),
                               [&](const preemption_candidate& c) { return c.node == target->name; });
        if (it == tr.evictions.end()) {
          tr.evictions.push_back({target->name, {}, 0});
          it = std::prev(tr.evictions.end());
        }
        it->victims.insert(it->victims.end(), victims.begin(), victims.end());
        std::stable_sort(it->victims.begin(), it->victims.end(),
                         [](const pod_info_ptr& a, const pod_info_ptr& b) { return more_important_pod(*a, *b); });
      }
    }
    tr.fits = true;
    return tr;
  };

  // The domains, in the order GangScheduling would try them: the attempt's own first, then the
  // others by name, the ones the gang failed in before last.
  std::vector<std::string> domains;
  std::unordered_map<std::string, std::vector<const node_info*>> by_domain;
  if (g.topology_keys.empty()) {
    domains.push_back("");
    by_domain[""] = potential;
  } else {
    for (const node_info* n : potential) {
      std::string d = topology_domain(g, *n);
      if (d.empty()) continue;
      auto& v = by_domain[d];
      if (v.empty()) domains.push_back(d);
      v.push_back(n);
    }
    auto tried = [&](const std::string& d) {
      return state.gang_tried && std::find(state.gang_tried->begin(), state.gang_tried->end(), d) != state.gang_tried->end();
    };
    std::sort(domains.begin(), domains.end(), [&](const std::string& a, const std::string& b) {
      auto rank = [&](const std::string& d) { return d == state.gang_domain ? 0 : tried(d) ? 2 : 1; };
      return std::make_pair(rank(a), a) < std::make_pair(rank(b), b);
    });
  }

  std::vector<gang_trial> fitting;
  std::vector<std::string> fitting_domains;
  for (const auto& d : domains) {
    auto tr = plan_domain(d, by_domain[d]);
    if (!tr.fits) {
      if (out.error.empty()) out.error = tr.error;
      continue;
    }
    fitting.push_back(std::move(tr));
    fitting_domains.push_back(d);
  }
  if (fitting.empty()) return out;
  out.error.clear();
  // kube's candidate ordering over each domain's victims; a domain needing none wins outright.
  size_t chosen = 0;
  bool none_needed = false;
  for (size_t i = 0; i < fitting.size() && !none_needed; ++i)
    if (fitting[i].evictions.empty()) chosen = i, none_needed = true;
  if (!none_needed && fitting.size() > 1) {
    std::vector<preemption_candidate> per_domain;
    for (size_t i = 0; i < fitting.size(); ++i) {
      preemption_candidate c;
      c.node = std::to_string(i);
      c.num_pdb_violations = fitting[i].num_pdb_violations;
      for (const auto& e : fitting[i].evictions) c.victims.insert(c.victims.end(), e.victims.begin(), e.victims.end());
      std::stable_sort(c.victims.begin(), c.victims.end(),
                       [](const pod_info_ptr& a, const pod_info_ptr& b) { return more_important_pod(*a, *b); });
      per_domain.push_back(std::move(c));
    }
    chosen = static_cast<size_t>(std::stoul(pick_one_node_for_preemption(per_domain)->node));
  }
  out.fits = true;
  out.members = std::move(fitting[chosen].members);
  out.evictions = std::move(fitting[chosen].evictions);
  out.domain = fitting_domains[chosen];
  return out;
}

fw::status default_preemption::gang_post_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                                const fw::node_to_status& filtered, const fw::framework_ops& fwk,
                                                fw::post_filter_result& result) const {
  const fw::gang_ticket& t = *state.gang;
  // kube's preemptorEligibleToPreemptOthers for a pod group: preemptionPolicy, and a member's
  // nominated node where a lower-priority victim is still terminating (an earlier preemption for
  // the group is under way).
  if (pod.preemption == preemption_policy::never)
    return group_status(fw::code::unschedulable, "not eligible due to preemptionPolicy=Never.");
  std::unordered_set<std::string> nominated_nodes;
  std::unordered_map<std::string, size_t> nominated_members;  // this gang's other members, per node
  if (!pod.nominated_node_name.empty()) nominated_nodes.insert(pod.nominated_node_name);
  for (const auto& [node, pods] : snap.nominated())
    for (const auto& p : pods)
      if (p->group_key == t.key) {
        nominated_nodes.insert(node);
        if (p->uid != pod.uid) ++nominated_members[node];
      }
  for (const auto& name : nominated_nodes)
    if (const node_info* n = snap.find(name))
      for (const auto& p : n->pods)
        if (p->priority < pod.priority && pod_terminating_by_preemption(*p))
          return group_status(fw::code::unschedulable, "not eligible due to a terminating pod on the nominated node.");

  auto plan = plan_gang_preemption(state, pod, snap, filtered, fwk);
  if (!plan.fits) {
    if (!plan.error.empty()) return fw::status::error(std::string(group_prefix) + plan.error);
    // kube clears the nomination of a pod whose preemption failed.
    result.nominated_node_name.clear();
    if (!pod.nominated_node_name.empty() && handle_.client) handle_.client->set_nominated_node(pod, "", ignore_result);
    if (plan.no_victims) return group_status(fw::code::unschedulable, std::string(group_no_victims_reason));
    return group_status(fw::code::unschedulable, "the pod group's " + std::to_string(plan.need) +
                                                   " members cannot all fit even with preemption");
  }
  if (plan.victim_count() == 0)
    return group_status(fw::code::unschedulable,
                        "the pod group's " + std::to_string(plan.need) + " members fit without preemption");

  // This pod's node: the first planned place no other member of the gang is nominated to already.
  std::string node = plan.members.front();
  for (const auto& m : plan.members) {
    auto it = nominated_members.find(m);
    if (it == nominated_members.end() || it->second == 0) {
      node = m;
      break;
    }
    --it->second;
  }
  if (handle_.client) {
    handle_.client->set_nominated_node(pod, node, ignore_result);
    for (const auto& e : plan.evictions)
      if (const auto* nominated = snap.nominated_pods(e.node))
        for (const auto& p : *nominated)
          if (p->uid != pod.uid && p->priority < pod.priority) handle_.client->set_nominated_node(*p, "", ignore_result);
    for (const auto& e : plan.evictions) {
      const std::string message = "Preempted by pod " + pod.uid + " on node " + e.node;
      for (const auto& v : e.victims) {
        if (v->pod && v->pod->metadata().has_deletion_timestamp()) continue;
        handle_.client->delete_pod(*v, message, ignore_result);
      }
    }
  }
  result.nominated_node_name = node;
  result.victims.clear();
  for (const auto& e : plan.evictions) result.victims.insert(result.victims.end(), e.victims.begin(), e.victims.end());
  return fw::status::ok();
}

}  // namespace kas::plugins

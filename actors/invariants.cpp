#include "actors/invariants.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "cache/csi_translation.hpp"

namespace kas {

namespace {

bool tolerates_all(const pod_info& p, const node_info& n) {
  for (auto& t : n.taints) {
    if (t.effect != taint_effect::no_schedule && t.effect != taint_effect::no_execute) continue;
    bool ok = false;
    for (auto& tol : p.tolerations) ok |= tol.tolerates(t);
    if (!ok) return false;
  }
  return true;
}

bool selector_matches(const pod_info& p, const node_info& n) {
  for (auto& [k, v] : p.node_selector.entries()) {
    auto* got = n.labels.get(k);
    if (!got || *got != v) return false;
  }
  return !p.required_node_affinity || p.required_node_affinity->matches(n.labels, n.name);
}

struct placed {
  const pod_info* pod;
  const node_info* node;
};

class checker {
public:
  checker(const std::vector<node_info_ptr>& nodes, const std::vector<pod_info_ptr>& pods, const cluster_objects* objs,
          invariant_options opts)
      : objs_(objs), opts_(opts) {
    for (auto& n : nodes) by_name_[n->name] = n.get();
    for (auto& p : pods) {
      if (p->node_name.empty()) continue;
      auto it = by_name_.find(p->node_name);
      if (it == by_name_.end()) {
        violation(p->key() + " is bound to unknown node " + p->node_name);
        continue;
      }
      placed_.push_back({p.get(), it->second});
    }
  }

  invariant_report run() {
    resources_and_ports();
    node_constraints();
    inter_pod();
    if (opts_.check_spread) spread();
    if (objs_) {
      volume_node_affinity();
      csi_attach_limits();
      gangs();
    }
    return std::move(rep_);
  }

private:
  void violation(std::string s) { rep_.violations.push_back(std::move(s)); }
  bool check(bool ok) {
    ++rep_.checks;
    return ok;
  }
  const label_map* ns_labels(const std::string& ns) const { return objs_ ? objs_->namespace_labels_of(ns) : nullptr; }

  void resources_and_ports() {
    struct usage {
      int64_t cpu = 0, mem = 0, count = 0;
      std::set<std::pair<std::string, int32_t>> ports;
    };
    std::unordered_map<const node_info*, usage> used;
    for (auto& pl : placed_) {
      auto& u = used[pl.node];
      u.cpu += pl.pod->requests.milli_cpu;
      u.mem += pl.pod->requests.memory;
      u.count++;
      for (auto& hp : pl.pod->host_ports)
        if (!check(u.ports.insert({hp.protocol, hp.port}).second))
          violation("host port " + std::to_string(hp.port) + " used twice on " + pl.node->name + " (" + pl.pod->key() + ")");
    }
    for (auto& [node, u] : used) {
      const auto& a = node->allocatable;
      if (!check(u.cpu <= a.milli_cpu))
        violation(node->name + " cpu overcommitted: " + std::to_string(u.cpu) + "m > " + std::to_string(a.milli_cpu) + "m");
      if (!check(u.mem <= a.memory)) violation(node->name + " memory overcommitted");
      if (!check(u.count <= a.allowed_pod_number)) violation(node->name + " pod count overcommitted");
    }
  }

  void node_constraints() {
    for (auto& pl : placed_) {
      if (!check(selector_matches(*pl.pod, *pl.node)))
        violation(pl.pod->key() + " violates its node selector/affinity on " + pl.node->name);
      if (!check(tolerates_all(*pl.pod, *pl.node)))
        violation(pl.pod->key() + " does not tolerate a taint of " + pl.node->name);
    }
  }

  // Pods per (topology key, value), built on demand per key.
  const std::unordered_map<std::string, std::vector<const pod_info*>>& domains(const std::string& key) {
    auto it = domains_.find(key);
    if (it != domains_.end()) return it->second;
    auto& m = domains_[key];
    for (auto& pl : placed_)
      if (auto* v = pl.node->labels.get(key)) m[*v].push_back(pl.pod);
    return m;
  }

  void inter_pod() {
    for (auto& pl : placed_) {
      const pod_info& p = *pl.pod;
      for (auto& t : p.required_anti_affinity) {
        auto* v = pl.node->labels.get(t.topology_key);
        if (!v) continue;
        auto& d = domains(t.topology_key);
        auto it = d.find(*v);
        if (it == d.end()) continue;
        for (auto* q : it->second) {
          if (q == &p) continue;
          if (!check(!t.matches(*q, ns_labels(q->ns))))
            violation(p.key() + " on " + pl.node->name + " shares " + t.topology_key + "=" + *v + " with " + q->key() +
                      ", which its required anti-affinity excludes");
        }
      }
      for (auto& t : p.required_affinity) {
        auto* v = pl.node->labels.get(t.topology_key);
        bool ok = false;
        if (v) {
          auto& d = domains(t.topology_key);
          auto it = d.find(*v);
          if (it != d.end())
            for (auto* q : it->second) ok |= t.matches(*q, ns_labels(q->ns));
        }
        if (!check(ok))
          violation(p.key() + " on " + pl.node->name + ": no pod in its " + t.topology_key +
                    " domain satisfies its required pod affinity");
      }
    }
  }

  void spread() {
    // Pods made from one template share namespace, labels and constraints: check each shape once.
    std::set<std::string> done;
    for (auto& pl : placed_) {
      const pod_info& p = *pl.pod;
      for (size_t ci = 0; ci < p.spread_constraints.size(); ++ci) {
        const auto& c = p.spread_constraints[ci];
        if (!c.do_not_schedule) continue;
        std::string shape = p.ns + "\n" + std::to_string(ci) + "\n";
        for (auto& [k, v] : p.labels.entries()) shape += k + "=" + v + ",";
        if (!done.insert(shape).second) continue;
        std::map<std::string, int64_t> count;
        for (auto& [name, node] : by_name_) {
          auto* v = node->labels.get(c.topology_key);
          if (!v) continue;
          if (c.node_affinity_policy == node_inclusion_policy::honor && !selector_matches(p, *node)) continue;
          count.emplace(*v, 0);
        }
        for (auto& q : placed_) {
          if (q.pod->ns != p.ns || !c.selector.matches(q.pod->labels)) continue;
          auto* v = q.node->labels.get(c.topology_key);
          if (v && count.count(*v)) count[*v]++;
        }
        if (count.empty()) continue;
        int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0;
        for (auto& [v, n] : count) lo = std::min(lo, n), hi = std::max(hi, n);
        if (static_cast<int32_t>(count.size()) < c.min_domains) lo = 0;
        if (!check(hi - lo <= c.max_skew))
          violation("topology spread of " + p.ns + " pods like " + p.name + " over " + c.topology_key + ": skew " +
                    std::to_string(hi - lo) + " > maxSkew " + std::to_string(c.max_skew));
      }
    }
  }

  // The volume bound to claim `claim_name` of pod p: null when the claim or the volume is missing
  // or the claim is not bound.
  const pv_info* bound_volume(const pod_info& p, const std::string& claim_name) const {
    const pvc_info* claim = objs_->volumes.claim(p.ns, claim_name);
    if (!claim || claim->volume_name.empty()) return nullptr;
    return objs_->volumes.volume(claim->volume_name);
  }

  void volume_node_affinity() {
    for (auto& pl : placed_) {
      for (auto& v : pl.pod->volumes) {
        if (v.claim_name.empty()) continue;
        const pv_info* pv = bound_volume(*pl.pod, v.claim_name);
        if (!pv) continue;
        // As VolumeBinding checks it: against the node's labels alone, as its CSI translation where
        // the node's CSINode migrates the volume's in-tree plugin.
        const std::optional<node_selector>* affinity = &pv->node_affinity;
        auto plugin = csi_migration::in_tree_plugin(pv->source.kind);
        if (pv->csi_node_affinity && csi_migration::migrated_on_node(objs_->volumes.csi_node(pl.node->name), plugin))
          affinity = &pv->csi_node_affinity;
        if (!*affinity) continue;
        static const std::string no_name;
        if (!check((*affinity)->matches(pl.node->labels, no_name)))
          violation(pl.pod->key() + " on " + pl.node->name + " uses volume " + pv->name + " (claim " + v.claim_name +
                    "), whose node affinity excludes the node");
      }
    }
  }

  // The CSI driver and handle volume `v` of pod p counts under on a node with CSINode `csi_node`
  // (null: the node has none), or nothing.
  std::optional<std::pair<std::string, std::string>> attached_as(const pod_info& p, const pod_volume& v,
                                                                 const csi_node_info* csi_node) const {
    namespace mig = csi_migration;
    const volume_source* src = &v.inline_source;
    const pv_info* pv = nullptr;
    if (!v.claim_name.empty()) {
      pv = bound_volume(p, v.claim_name);
      if (!pv) return std::nullopt;
      src = &pv->source;
      if (src->kind == volume_source::csi) {
        if (src->driver.empty() || src->id.empty()) return std::nullopt;
        return std::make_pair(src->driver, src->id);
      }
    }
    auto plugin = mig::in_tree_plugin(src->kind);
    if (plugin.empty() || !mig::migration_on(csi_node, plugin)) return std::nullopt;
    auto handle = pv ? mig::pv_volume_handle(*pv) : mig::inline_volume_handle(*src);
    if (!handle || handle->empty()) return std::nullopt;
    return std::make_pair(std::string(mig::csi_driver_of(plugin)), std::move(*handle));
  }

  void csi_attach_limits() {
    std::unordered_map<const node_info*, std::map<std::string, std::set<std::string>>> attached;
    for (auto& pl : placed_) {
      const csi_node_info* csi_node = objs_->volumes.csi_node(pl.node->name);
      if (!csi_node) continue;  // no CSINode: no limit reported, in-tree volumes not migrated
      for (auto& v : pl.pod->volumes)
        if (auto a = attached_as(*pl.pod, v, csi_node)) attached[pl.node][a->first].insert(std::move(a->second));
    }
    for (auto& [node, by_driver] : attached) {
      const csi_node_info* csi_node = objs_->volumes.csi_node(node->name);
      for (auto& [driver, handles] : by_driver) {
        const csi_node_driver* d = csi_node->driver(driver);
        if (!d || !d->allocatable_count) continue;
        if (!check(static_cast<int64_t>(handles.size()) <= *d->allocatable_count))
          violation(node->name + " has " + std::to_string(handles.size()) + " unique " + driver +
                    " volumes attached, over its CSINode's allocatable count " + std::to_string(*d->allocatable_count));
      }
    }
  }

  // Every gang PodGroup: 0 or at least minCount members bound (never part of a gang), and the bound
  // members of a gang with topology keys in one domain of each key (a node without the key is in
  // no domain).
  void gangs() {
    std::unordered_map<std::string, std::vector<const placed*>> members;
    for (auto& pl : placed_)
      if (pl.pod->in_group()) members[pl.pod->group_key].push_back(&pl);
    std::vector<std::pair<std::string, const pod_group*>> groups;
    for (auto& [key, g] : objs_->pod_groups)
      if (g && g->gang) groups.emplace_back(key, g.get());
    std::sort(groups.begin(), groups.end());  // violations in a stable order
    for (auto& [key, g] : groups) {
      auto it = members.find(key);
      size_t bound = it == members.end() ? 0 : it->second.size();
      if (!check(bound == 0 || bound >= static_cast<size_t>(g->min_count)))
        violation("pod group " + g->display() + " is partly bound: " + std::to_string(bound) + " members bound, minCount " +
                  std::to_string(g->min_count));
      if (bound == 0) continue;
      for (auto& tk : g->topology_keys) {
        std::map<std::string, size_t> domains;  // domain -> members bound there ("" = node without the key)
        for (auto* pl : it->second) {
          auto* v = pl->node->labels.get(tk);
          domains[v ? *v : std::string()]++;
        }
        if (check(domains.size() == 1 && !domains.count(std::string()))) continue;
        std::string where;
        for (auto& [d, n] : domains)
          where += (where.empty() ? "" : ", ") + (d.empty() ? std::string("<no ") + tk + " label>" : d) + ": " +
                   std::to_string(n);
        violation("pod group " + g->display() + " spans " + std::to_string(domains.size()) + " domains of " + tk +
                  " (" + where + ")");
      }
    }
  }

  const cluster_objects* objs_;
  invariant_options opts_;
  invariant_report rep_;
  std::unordered_map<std::string, const node_info*> by_name_;
  std::vector<placed> placed_;
  std::unordered_map<std::string, std::unordered_map<std::string, std::vector<const pod_info*>>> domains_;
};

}  // namespace

invariant_report check_nothing_reserved(const snapshot& snap, const std::vector<pod_info_ptr>& pods) {
  invariant_report rep;
  std::unordered_map<std::string, const pod_info*> live;
  for (auto& p : pods) live[p->uid] = p.get();
  for (size_t i = 0; i < snap.size(); ++i) {
    const node_info& n = snap.node(i);
    for (const auto& p : n.pods) {
      ++rep.checks;
      auto it = live.find(p->uid);
      if (it == live.end()) continue;  // deleted: the cache has not seen the deletion yet
      if (it->second->node_name == n.name) continue;
      rep.violations.push_back(p->key() + " is still reserved on " + n.name + " by the scheduler cache" +
                               (it->second->node_name.empty() ? std::string(" but not bound")
                                                              : " but bound to " + it->second->node_name));
    }
  }
  return rep;
}

invariant_report check_competing_gangs(const std::vector<competing_gangs>& sets, const std::vector<pod_info_ptr>& pods,
                                       const cluster_objects& objects, competing_outcome* outcome) {
  invariant_report rep;
  competing_outcome out;
  std::unordered_map<std::string, std::pair<size_t, size_t>> members;  // group key -> {members, bound}
  for (auto& p : pods) {
    if (!p->in_group()) continue;
    auto& m = members[p->group_key];
    m.first++;
    if (!p->node_name.empty()) m.second++;
  }
  for (auto& set : sets) {
    ++rep.checks;
    ++out.sets;
    size_t whole = 0, partly = 0;
    std::string got, missing;
    for (auto& key : set.group_keys) {
      const pod_group* g = objects.pod_group_of(key);
      if (!g) {
        missing += (missing.empty() ? "" : ", ") + key;
        continue;
      }
      auto it = members.find(key);
      size_t n = it == members.end() ? 0 : it->second.first, bound = it == members.end() ? 0 : it->second.second;
      if (bound > 0 && bound >= static_cast<size_t>(g->min_count)) ++whole;
      else if (bound > 0) ++partly;
      got += (got.empty() ? "" : ", ") + g->display() + " " + std::to_string(bound) + "/" + std::to_string(n) +
             " bound (minCount " + std::to_string(g->min_count) + ")";
    }
    if (!missing.empty()) {
      rep.violations.push_back("competing set " + set.name + ": no pod group " + missing);
      continue;
    }
    size_t losers_bound = partly + (whole > 0 ? whole - 1 : 0);
    if (whole == 1 && losers_bound == 0) {
      ++out.settled;
      continue;
    }
    std::string why = whole == 0 ? "no gang bound whole (a deadlock, or capacity for none)"
                      : whole > 1 ? std::to_string(whole) + " gangs bound whole (the capacity was not contested)"
                                  : "a losing gang is partly placed";
    rep.violations.push_back("competing set " + set.name + ": " + why + ": " + got);
  }
  if (outcome) *outcome = out;
  return rep;
}

invariant_report check_placement(const std::vector<node_info_ptr>& nodes, const std::vector<pod_info_ptr>& pods,
                                 const cluster_objects* objects, const invariant_options& opts) {
  return checker(nodes, pods, objects, opts).run();
}

}  // namespace kas

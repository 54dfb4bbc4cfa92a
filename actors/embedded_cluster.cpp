#include "actors/embedded_cluster.hpp"

#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "actors/event_correlator.hpp"
#include "observability/actor_probe.hpp"

namespace kas {

namespace {

// A simulated kubelet for a shard of the nodes: like a kubelet, it watches pods whose nodeName is
// one of its nodes, takes each into a pod worker and reports it Running. It never schedules.
struct node_agent_state {
  cluster_actor cluster;
  size_t shard = 0, shards = 1;
  std::unordered_set<std::string> running;  // uids already started
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "node_agent";
};

watcher_actor::behavior_type node_agent(watcher_actor::stateful_pointer<node_agent_state> self, cluster_actor cluster,
                                        size_t shard, size_t shards, obs::metrics_registry* metrics) {
  self->state.cluster = cluster;
  self->state.shard = shard;
  self->state.shards = shards;
  self->state.probe = std::make_unique<obs::actor_probe>(*metrics, "node_agent-" + std::to_string(shard));
  return {
    [=](event_atom, const cluster_change_ptr& ch) {
      auto& st = self->state;
      auto probe_scope = st.probe->begin_handler(self);
      if (ch->type == cluster_event_type::pod_delete) {
        if (ch->old_pod) st.running.erase(ch->old_pod->uid);
        return;
      }
      if (ch->type != cluster_event_type::pod_add && ch->type != cluster_event_type::pod_update) return;
      const auto& p = ch->new_pod;
      if (!p || p->node_name.empty()) return;
      if (std::hash<std::string>{}(p->node_name) % st.shards != st.shard) return;
      if (p->phase == "Running" || p->phase == "Succeeded" || p->phase == "Failed") return;
      if (!st.running.insert(p->uid).second) return;
      self->send(st.cluster, status_atom::value, p->uid, std::string("Running"));
    },
  };
}

struct cluster_state {
  std::unordered_map<std::string, node_info_ptr> nodes;
  std::map<uint64_t, std::string> nodes_created;
  std::unordered_map<std::string, uint64_t> node_seq;
  std::unordered_map<std::string, pod_info_ptr> pods;  // by uid
  // Creation order, so a new watcher lists pods as they were created (a replayed manifest keeps
  // its order, and with it PrioritySort's FIFO among equal priorities).
  std::map<uint64_t, std::string> created;
  std::unordered_map<std::string, uint64_t> created_seq;
  uint64_t next_seq = 0;
  std::vector<watcher_actor> watchers;
  std::vector<cluster_event_record> events;
  cluster_objects_ptr objects = std::make_shared<const cluster_objects>();
  uint64_t rv = 0;
  size_t bound = 0, running = 0, conflicts = 0;
  event_correlator correlator;
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "embedded_cluster";
};

using cluster_self = cluster_actor::stateful_pointer<cluster_state>;

void emit(cluster_self self, cluster_change ch) {
  ch.resource_version = ++self->state.rv;
  auto ptr = std::make_shared<const cluster_change>(std::move(ch));
  for (auto& w : self->state.watchers) self->send(w, event_atom::value, ptr);
}

// Stores a changed copy of a pod (status update) and emits the update.
void replace_pod(cluster_self self, pod_info_ptr& stored, pod_info_ptr updated) {
  cluster_change ch;
  ch.type = cluster_event_type::pod_update;
  ch.old_pod = stored;
  ch.new_pod = updated;
  stored = std::move(updated);
  emit(self, std::move(ch));
}

fw::status delete_pod(cluster_self self, const std::string& uid) {
  auto& st = self->state;
  auto it = st.pods.find(uid);
  if (it == st.pods.end()) return fw::status::error("pods \"" + uid + "\" not found");
  cluster_change ch;
  ch.type = cluster_event_type::pod_delete;
  ch.old_pod = it->second;
  if (!it->second->node_name.empty()) st.bound--;
  st.created.erase(st.created_seq[uid]);
  st.created_seq.erase(uid);
  st.pods.erase(it);
  emit(self, std::move(ch));
  return fw::status::ok();
}

// Stores an Event through the correlator: a new Event, a count increment on a stored one, or nothing.
void record_event(cluster_self self, const cluster_event_record& ev) {
  auto& st = self->state;
  auto v = st.correlator.correlate(ev, event_correlator::clock::now(), st.events.size());
  if (v.what == event_correlator::verdict::create) st.events.push_back(std::move(v.event));
  else if (v.what == event_correlator::verdict::update) st.events[v.index] = std::move(v.event);
}

}  // namespace

cluster_actor spawn_embedded_cluster(caf::actor_system& sys, const cluster_options& opts) {
  size_t shards = std::max<size_t>(1, opts.node_agents);
  obs::metrics_registry* metrics = opts.metrics ? opts.metrics : &obs::default_registry();
  obs::pool_workers_gauge(*metrics, "node_agent").set(static_cast<double>(shards));
  return sys.spawn([shards, metrics](cluster_self self) -> cluster_actor::behavior_type {
    // The node agents (kubelets) are linked: they go down with their cluster. They watch from the
    // start, so they see every pod.
    auto me = caf::actor_cast<cluster_actor>(self);
    self->state.probe = std::make_unique<obs::actor_probe>(*metrics, "embedded_cluster");
    for (size_t i = 0; i < shards; ++i)
      self->state.watchers.push_back(self->spawn<caf::linked>(node_agent, me, i, shards, metrics));
    return {
      [=](watch_atom, watcher_actor w) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        // List: objects (namespaces, selectors, PDBs), nodes, then pods, as the informers' initial
        // syncs deliver them.
        {
          cluster_change ch;
          ch.type = cluster_event_type::objects;
          ch.objects = st.objects;
          ch.resource_version = st.rv;
          self->send(w, event_atom::value, std::make_shared<const cluster_change>(std::move(ch)));
        }
        for (auto& [seq, name] : st.nodes_created) {
          cluster_change ch;
          ch.type = cluster_event_type::node_add;
          ch.new_node = st.nodes.at(name);
          ch.resource_version = st.rv;
          self->send(w, event_atom::value, std::make_shared<const cluster_change>(std::move(ch)));
        }
        for (auto& [seq, uid] : st.created) {
          cluster_change ch;
          ch.type = cluster_event_type::pod_add;
          ch.new_pod = st.pods.at(uid);
          ch.resource_version = st.rv;
          self->send(w, event_atom::value, std::make_shared<const cluster_change>(std::move(ch)));
        }
        cluster_change synced;
        synced.type = cluster_event_type::synced;
        synced.resource_version = st.rv;
        self->send(w, event_atom::value, std::make_shared<const cluster_change>(std::move(synced)));
        st.watchers.push_back(std::move(w));
      },
      [=](create_atom, node_info_ptr n) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        cluster_change ch;
        auto it = st.nodes.find(n->name);
        if (it == st.nodes.end()) {
          ch.type = cluster_event_type::node_add;
          st.nodes_created.emplace(++st.next_seq, n->name);
          st.node_seq[n->name] = st.next_seq;
        } else {
          ch.type = cluster_event_type::node_update;
          ch.old_node = it->second;
        }
        ch.new_node = n;
        st.nodes[n->name] = n;
        emit(self, std::move(ch));
      },
      [=](create_atom, pod_info_ptr p) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        if (st.pods.count(p->uid)) return;  // AlreadyExists; the loader rejects duplicates first
        st.pods[p->uid] = p;
        st.created.emplace(++st.next_seq, p->uid);
        st.created_seq[p->uid] = st.next_seq;
        if (!p->node_name.empty()) st.bound++;
        cluster_change ch;
        ch.type = cluster_event_type::pod_add;
        ch.new_pod = p;
        emit(self, std::move(ch));
      },
      [=](create_atom, cluster_objects_ptr objs) {
        auto probe_scope = self->state.probe->begin_handler(self);
        self->state.objects = objs;
        cluster_change ch;
        ch.type = cluster_event_type::objects;
        ch.objects = std::move(objs);
        emit(self, std::move(ch));
      },
      [=](delete_atom, const std::string& uid, const std::function<void(fw::status)>& done) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto s = delete_pod(self, uid);
        if (done) done(s);
      },
      [=](delete_atom, const std::string& uid, const std::string& message, const std::function<void(fw::status)>& done) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto it = self->state.pods.find(uid);
        pod_info_ptr victim = it == self->state.pods.end() ? nullptr : it->second;
        auto s = delete_pod(self, uid);
        if (s.is_success()) {
          // The Event kube-scheduler records on a preemption victim.
          cluster_event_record ev;
          ev.type = "Normal";
          ev.reason = "Preempted";
          ev.pod_uid = uid;
          ev.pod_key = victim->ns + "/" + victim->name;
          ev.message = message;
          ev.node = victim->node_name;
          record_event(self, ev);
        }
        if (done) done(s);
      },
      [=](status_atom, const std::string& uid, const std::string& node, const std::function<void(fw::status)>& done) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.pods.find(uid);
        if (it == st.pods.end()) {
          if (done) done(fw::status::error("pods \"" + uid + "\" not found"));
          return;
        }
        if (it->second->nominated_node_name != node) {
          auto updated = std::make_shared<pod_info>(*it->second);
          updated->nominated_node_name = node;
          replace_pod(self, it->second, std::move(updated));
        }
        if (done) done(fw::status::ok());
      },
      [=](delete_atom, const std::string& node) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.nodes.find(node);
        if (it == st.nodes.end()) return;
        cluster_change ch;
        ch.type = cluster_event_type::node_delete;
        ch.old_node = it->second;
        st.nodes_created.erase(st.node_seq[node]);
        st.node_seq.erase(node);
        st.nodes.erase(it);
        emit(self, std::move(ch));
      },
      [=](bind_atom, const std::string& uid, const std::string& node, const std::function<void(fw::status)>& done) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.pods.find(uid);
        if (it == st.pods.end()) {
          done(fw::status::error("pods \"" + uid + "\" not found"));
          return;
        }
        if (!it->second->node_name.empty()) {
          // The apiserver answers 409 Conflict for a pod that is already bound.
          st.conflicts++;
          done(fw::status::error("Operation cannot be fulfilled on pods/binding \"" + it->second->name +
                                 "\": pod " + it->second->name + " is already assigned to node \"" +
                                 it->second->node_name + "\""));
          return;
        }
        if (!st.nodes.count(node)) {
          done(fw::status::error("node \"" + node + "\" not found"));
          return;
        }
        // The binding subresource also sets PodScheduled=True.
        auto bound = std::make_shared<pod_info>(*it->second);
        bound->node_name = node;
        pod_condition scheduled{"PodScheduled", "True", "", ""};
        bool replaced = false;
        for (auto& x : bound->conditions)
          if (x.type == scheduled.type) x = scheduled, replaced = true;
        if (!replaced) bound->conditions.push_back(scheduled);
        cluster_change ch;
        ch.type = cluster_event_type::pod_update;
        ch.old_pod = it->second;
        ch.new_pod = bound;
        it->second = bound;
        st.bound++;
        emit(self, std::move(ch));
        done(fw::status::ok());
      },
      [=](status_atom, const std::string& uid, const std::string& phase) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.pods.find(uid);
        if (it == st.pods.end() || it->second->phase == phase) return;
        auto updated = std::make_shared<pod_info>(*it->second);
        updated->phase = phase;
        if (phase == "Running") st.running++;
        replace_pod(self, it->second, std::move(updated));
      },
      [=](record_atom, const cluster_event_record& ev) {
        auto probe_scope = self->state.probe->begin_handler(self);
        record_event(self, ev);
      },
      [=](status_atom, const std::string& uid, const pod_condition& c) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        auto it = st.pods.find(uid);
        // A failure report can arrive after a later attempt's binding landed (the recorder and the
        // binder reach the cluster on different paths); a bound pod keeps PodScheduled=True.
        if (it == st.pods.end() || (c.status == "False" && !it->second->node_name.empty())) return;
        const pod_condition* cur = it->second->condition(c.type);
        if (cur && *cur == c) return;
        auto updated = std::make_shared<pod_info>(*it->second);
        bool replaced = false;
        for (auto& x : updated->conditions)
          if (x.type == c.type) x = c, replaced = true;
        if (!replaced) updated->conditions.push_back(c);
        cluster_change ch;
        ch.type = cluster_event_type::pod_update;
        ch.old_pod = it->second;
        ch.new_pod = updated;
        ch.conditions_only = true;
        it->second = std::move(updated);
        emit(self, std::move(ch));
      },
      [=](list_atom, const cluster_event_record&) {
        auto probe_scope = self->state.probe->begin_handler(self);
        return self->state.events;
      },
      [=](stats_atom) {
        auto probe_scope = self->state.probe->begin_handler(self);
        auto& st = self->state;
        cluster_stats s;
        s.nodes = st.nodes.size();
        s.pods = st.pods.size();
        s.bound = st.bound;
        s.running = st.running;
        s.events = st.events.size();
        s.resource_version = st.rv;
        s.bind_conflicts = st.conflicts;
        return s;
      },
      [=](list_atom) {
        auto probe_scope = self->state.probe->begin_handler(self);
        std::vector<pod_info_ptr> out;
        out.reserve(self->state.pods.size());
        for (auto& [uid, p] : self->state.pods) out.push_back(p);
        return out;
      },
    };
  });
}

}  // namespace kas

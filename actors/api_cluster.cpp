// See api_cluster.hpp. Reads (reflectors -> cluster_changes -> watchers) are in this file's first
// half; writes (the cluster_actor requests -> HTTP) in the second.
#include "actors/api_cluster.hpp"

#include <deque>
#include <unordered_map>
#include <unordered_set>

#include <google/protobuf/util/message_differencer.h>
#include <spdlog/spdlog.h>

#include "actors/watch_fanout.hpp"
#include "actors/storage_informers.hpp"
#include "cache/volume_objects.hpp"
#include "client/api_requests.hpp"
#include "client/reflector.hpp"
#include "config/manifest_objects.hpp"
#include "messages/codec.hpp"
#include "messages/k8s/apps.pb.h"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/meta.pb.h"
#include "messages/k8s/policy.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "observability/actor_probe.hpp"

namespace kas {

namespace {

// Posts closures to the actor through its mailbox; callable from any thread (the transport's I/O
// thread). Holds the actor weakly: once it is gone, posts are dropped.
class mailbox_executor final : public api::executor {
public:
  explicit mailbox_executor(caf::weak_actor_ptr self) : self_(std::move(self)) {}
  void post(std::function<void()> fn) override {
    if (auto h = caf::actor_cast<cluster_actor>(self_.lock())) caf::anon_send(h, run_atom::value, source_task{std::move(fn)});
  }
  void post_after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    if (auto h = caf::actor_cast<cluster_actor>(self_.lock()))
      caf::delayed_anon_send(h, delay, run_atom::value, source_task{std::move(fn)});
  }

private:
  caf::weak_actor_ptr self_;
};

// A write waiting for a slot.
struct queued_write {
  api::http_request req;
  std::function<void(api::http_response)> done;
};

struct api_state {
  api_cluster_options opts;
  // Declared in this order so the reflectors go first, then the transport (which completes what is
  // in flight through the executor), then the executor.
  std::unique_ptr<mailbox_executor> exec;
  std::unique_ptr<api::http_transport> transport;
  // bench --kubeconfig's creates and deletes: a connection of their own, as scheduler_perf's
  // workload is another client (created at the first workload write).
  std::unique_ptr<api::http_transport> workload_transport;
  std::vector<std::unique_ptr<api::reflector>> reflectors;
  std::unique_ptr<watch_fanout> watchers;
  // The informers' view, compiled.
  std::unordered_map<std::string, node_info_ptr> nodes;  // by name
  std::unordered_map<std::string, pod_info_ptr> pods;    // by uid
  std::unordered_map<std::string, std::string> uid_by_key;  // namespace/name -> uid
  // bench --kubeconfig: namespaces this source created, the creates (pods, PodGroups) waiting for
  // theirs, and the PodGroups it created (by pod_group_key).
  std::unordered_set<std::string> namespaces_created;
  std::unordered_map<std::string, std::vector<std::function<void()>>> awaiting_namespace;
  std::unordered_set<std::string> pod_groups_created;
  std::map<std::string, std::shared_ptr<const k8s::core::Namespace>> namespaces;  // by name
  std::map<std::string, std::shared_ptr<const k8s::policy::PodDisruptionBudget>> pdbs;  // by ns/name
  std::map<std::string, workload_selector> workloads;  // by kind/ns/name; compiled when they change
  // PodGroups of both APIs, compiled when they change (by pod_group_key); a group that does not
  // compile is logged and left out.
  std::map<std::string, pod_group_ptr> pod_groups;
  cluster_objects_ptr objects = std::make_shared<const cluster_objects>();
  bool objects_dirty = false;  // a namespace, workload or PDB changed in the batch being handled
  bool synced = false;
  uint64_t resource_version = 0;
  // Writes.
  // Two lanes of writes, each with its own limit and FIFO: the scheduler's (bindings, Events,
  // status) and the workload's (bench's creates and deletes), so a bench that creates 10000 pods
  // does not queue the bindings behind its own creates (scheduler_perf's creates are another client).
  struct write_lane {
    size_t in_flight = 0;
    std::deque<queued_write> waiting;
  };
  write_lane scheduler_writes, workload_writes;
  std::vector<cluster_event_record> events;  // recorded, as sent
  event_correlator correlator;
  std::unordered_map<size_t, std::string> event_names;  // stored index -> Event name
  size_t bound = 0, bind_conflicts = 0;
  // VolumeBinding PreBinds waiting, after their writes, for the informer to see their claims bound.
  struct volume_waiter {
    volume_write_ptr write;
    caf::typed_response_promise<fw::status> rp;
  };
  std::map<uint64_t, volume_waiter> volume_waiters;
  uint64_t next_waiter = 0;
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "api_cluster";
};

using api_self = cluster_actor::stateful_pointer<api_state>;

uint64_t parse_rv(const std::string& rv) {
  uint64_t v = 0;
  for (char c : rv) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// The source's resourceVersion follows the newest object seen.
void observe_rv(api_self self, const std::string& rv) {
  if (uint64_t v = parse_rv(rv); v > self->state.resource_version) self->state.resource_version = v;
}

cluster_change_ptr make_change(api_self self, cluster_change ch, const std::string& rv) {
  observe_rv(self, rv);
  ch.resource_version = self->state.resource_version;
  return std::make_shared<const cluster_change>(std::move(ch));
}

// kube's queue ignores pod updates that change only status.conditions (and metadata bookkeeping).
// Runs for every pod update from the API, so it compares in place: a differencer that skips
// resourceVersion, generation and status.conditions, no copies of the pods.
bool only_conditions_changed(const k8s::core::Pod& a, const k8s::core::Pod& b) {
  static const auto* meta = k8s::meta::ObjectMeta::descriptor();
  static const auto* status = k8s::core::PodStatus::descriptor();
  thread_local google::protobuf::util::MessageDifferencer diff;
  thread_local bool configured = [] {
    diff.IgnoreField(meta->FindFieldByName("resource_version"));
    diff.IgnoreField(meta->FindFieldByName("generation"));
    diff.IgnoreField(status->FindFieldByName("conditions"));
    return true;
  }();
  (void)configured;
  return diff.Compare(a, b);
}

void on_pod_delta(api_self self, const api::delta& d, std::vector<cluster_change_ptr>& out) {
  auto& st = self->state;
  auto obj = std::static_pointer_cast<const k8s::core::Pod>(d.object);
  const auto& meta = obj->metadata();
  if (d.type == api::delta_type::deleted) {
    auto it = st.pods.find(meta.uid());
    if (it == st.pods.end()) return;
    cluster_change ch;
    ch.type = cluster_event_type::pod_delete;
    ch.old_pod = it->second;
    st.uid_by_key.erase(it->second->key());
    st.pods.erase(it);
    out.push_back(make_change(self, std::move(ch), meta.resource_version()));
    return;
  }
  auto compiled = compile_pod(obj);
  if (!compiled) {
    // Never silent: the pod stays out of the cache, and says why, every time it changes.
    spdlog::error("api_cluster: pod {}/{} cannot be scheduled or counted: {}", meta.namespace_(), meta.name(),
                  compiled.err().message);
    return;
  }
  cluster_change ch;
  auto& slot = st.pods[meta.uid()];
  ch.type = slot ? cluster_event_type::pod_update : cluster_event_type::pod_add;
  ch.old_pod = slot;
  ch.new_pod = *compiled;
  if (slot && slot->pod) ch.conditions_only = only_conditions_changed(*slot->pod, *obj);
  slot = *compiled;
  st.uid_by_key[slot->key()] = meta.uid();
  out.push_back(make_change(self, std::move(ch), meta.resource_version()));
}

void on_node_delta(api_self self, const api::delta& d, std::vector<cluster_change_ptr>& out) {
  auto& st = self->state;
  auto obj = std::static_pointer_cast<const k8s::core::Node>(d.object);
  const auto& meta = obj->metadata();
  cluster_change ch;
  if (d.type == api::delta_type::deleted) {
    auto it = st.nodes.find(meta.name());
    if (it == st.nodes.end()) return;
    ch.type = cluster_event_type::node_delete;
    ch.old_node = it->second;
    st.nodes.erase(it);
    out.push_back(make_change(self, std::move(ch), meta.resource_version()));
    return;
  }
  auto compiled = compile_node(obj);
  if (!compiled) {
    spdlog::error("api_cluster: node {} is left out of the cache: {}", meta.name(), compiled.err().message);
    return;
  }
  auto& slot = st.nodes[meta.name()];
  ch.type = slot ? cluster_event_type::node_update : cluster_event_type::node_add;
  ch.old_node = slot;
  ch.new_node = *compiled;
  slot = *compiled;
  out.push_back(make_change(self, std::move(ch), meta.resource_version()));
}

// Namespaces, workloads and PDBs are folded into one cluster_objects, published whole once per batch of
// deltas that changed any of them (a relist of 1000 namespaces rebuilds once per page, not once per
// namespace).
void rebuild_objects(api_self self, std::vector<cluster_change_ptr>& out) {
  auto& st = self->state;
  if (!st.objects_dirty) return;
  st.objects_dirty = false;
  auto objs = std::make_shared<cluster_objects>();
  objs->volumes = st.objects->volumes;  // the storage informers change these one object at a time
  for (auto& [name, ns] : st.namespaces) objs->namespace_labels.emplace(name, namespace_labels(*ns));
  for (auto& [key, w] : st.workloads)
    if (!w.selector.nothing) objs->workloads.push_back(w);
  objs->pod_groups.insert(st.pod_groups.begin(), st.pod_groups.end());
  std::vector<pod_info_ptr> pods;
  for (auto& [uid, p] : st.pods) pods.push_back(p);
  for (auto& [key, pdb] : st.pdbs) {
    auto b = compile_pdb(*pdb, pods);
    if (!b) {
      spdlog::error("api_cluster: PodDisruptionBudget {} is ignored: {}", key, b.err().message);
      continue;
    }
    objs->pdbs.push_back(std::move(*b));
  }
  st.objects = objs;
  cluster_change ch;
  ch.type = cluster_event_type::objects;
  ch.objects = st.objects;
  out.push_back(make_change(self, std::move(ch), ""));
}

template <class T>
void on_object_delta(api_self self, std::map<std::string, std::shared_ptr<const T>>& store, const api::delta& d,
                     std::vector<cluster_change_ptr>&) {
  auto obj = std::static_pointer_cast<const T>(d.object);
  const auto& meta = obj->metadata();
  std::string key = meta.namespace_().empty() ? meta.name() : meta.namespace_() + "/" + meta.name();
  if (d.type == api::delta_type::deleted) store.erase(key);
  else store[key] = obj;
  self->state.objects_dirty = true;
  observe_rv(self, meta.resource_version());
}

// A Service, ReplicationController, ReplicaSet or StatefulSet: only its selector is kept.
template <class T>
void on_workload_delta(api_self self, const api::delta& d, std::vector<cluster_change_ptr>&) {
  auto& st = self->state;
  auto obj = std::static_pointer_cast<const T>(d.object);
  const auto& meta = obj->metadata();
  std::string kind = T::descriptor()->name();
  std::string key = kind + "/" + meta.namespace_() + "/" + meta.name();
  st.objects_dirty = true;
  observe_rv(self, meta.resource_version());
  if (d.type == api::delta_type::deleted) {
    st.workloads.erase(key);
    return;
  }
  auto w = compile_workload(*obj);
  if (!w) {
    spdlog::error("api_cluster: {} {}/{} is ignored by topology spreading's default constraints: {}", kind,
                  meta.namespace_(), meta.name(), w.err().message);
    st.workloads.erase(key);
    return;
  }
  st.workloads.insert_or_assign(std::move(key), std::move(*w));
}

// A PodGroup of either API: compiled when it changes. One that does not compile is logged and left
// out (its pods then wait for their group as if it did not exist), as a bad PDB is; its previous
// state is dropped too, since the object the user wrote is no longer that one.
template <class T>
void on_pod_group_delta(api_self self, const api::delta& d, std::vector<cluster_change_ptr>&) {
  auto& st = self->state;
  auto obj = std::static_pointer_cast<const T>(d.object);
  const auto& meta = obj->metadata();
  constexpr bool cosched = std::is_same_v<T, k8s::coscheduling::PodGroup>;
  const std::string key =
    pod_group_key(cosched ? pod_group_api::coscheduling : pod_group_api::workload, meta.namespace_(), meta.name());
  st.objects_dirty = true;
  observe_rv(self, meta.resource_version());
  if (d.type == api::delta_type::deleted) {
    st.pod_groups.erase(key);
    return;
  }
  // PriorityClasses are not watched here: a priorityClassName without spec.priority leaves the
  // group's priority unset (its members' own priorities, which admission resolved, order it).
  auto g = compile_pod_group(*obj);
  if (!g) {
    spdlog::error("api_cluster: PodGroup {}/{} ({}) is ignored: {}", meta.namespace_(), meta.name(),
                  cosched ? "scheduling.x-k8s.io/v1alpha1" : "scheduling.k8s.io/v1beta1", g.err().message);
    st.pod_groups.erase(key);
    return;
  }
  st.pod_groups.insert_or_assign(key, std::move(*g));
}

// Answers the PreBinds whose claims the informer now sees bound.
void wake_volume_waiters(api_self self) {
  auto& st = self->state;
  for (auto it = st.volume_waiters.begin(); it != st.volume_waiters.end();) {
    const auto& w = *it->second.write;
    if (!claims_bound(st.objects->volumes, w.ns, w.wait_for)) {
      ++it;
      continue;
    }
    it->second.rp.deliver(fw::status::ok());
    it = st.volume_waiters.erase(it);
  }
}

// A storage object's delta: applied to the objects, and a `volume` change for the watchers.
template <volume_change::kind_t Kind>
void on_storage_delta(api_self self, const api::delta& d, std::vector<cluster_change_ptr>& out) {
  auto& st = self->state;
  auto ch = storage_delta(st.objects->volumes, Kind, d.type == api::delta_type::deleted, d.object);
  const std::string& rv = storage_resource_version(*d.object);
  if (!ch) {
    spdlog::error("api_cluster: {} is ignored by the volume plugins: {}", ch.err().message,
                  "its previous state, if any, stays");
    observe_rv(self, rv);
    return;
  }
  if (!*ch) return observe_rv(self, rv);
  auto objs = std::make_shared<cluster_objects>(*st.objects);
  apply_volume_change(objs->volumes, **ch);
  st.objects = std::move(objs);
  cluster_change c;
  c.type = cluster_event_type::volume;
  c.volume = std::make_shared<const volume_change>(std::move(**ch));
  out.push_back(make_change(self, std::move(c), rv));
  wake_volume_waiters(self);
}

// Every reflector has listed once: the watchers get `synced` (an informer's HasSynced).
void check_synced(api_self self, std::vector<cluster_change_ptr>& out) {
  auto& st = self->state;
  if (st.synced) return;
  for (auto& r : st.reflectors)
    if (!r->synced()) return;
  st.synced = true;
  cluster_change ch;
  ch.type = cluster_event_type::synced;
  out.push_back(make_change(self, std::move(ch), ""));
  spdlog::info("api_cluster: informers synced ({} nodes, {} pods)", st.nodes.size(), st.pods.size());
}

using delta_handler = void (*)(api_self, const api::delta&, std::vector<cluster_change_ptr>&);

void add_reflector(api_self self, api::resource_ref ref, delta_handler handle, bool json_only = false) {
  auto& st = self->state;
  api::reflector_options ro;
  ro.enc = json_only ? api::encoding::json : st.opts.encoding;
  // An optional API that is not served: said once at info, the kind is empty (never silently).
  ro.on_notice = [](const std::string& msg) { spdlog::info("api_cluster: {}", msg); };
  ro.page_size = st.opts.page_size;
  auto kind = ref.kind;
  auto sink = [self, handle](std::vector<api::delta> deltas) {
    std::vector<cluster_change_ptr> out;
    for (auto& d : deltas)
      if (d.type != api::delta_type::synced) handle(self, d, out);
    rebuild_objects(self, out);
    check_synced(self, out);
    self->state.watchers->route(out);
  };
  auto on_error = [kind](const std::string& msg) { spdlog::warn("api_cluster: {} informer: {}", kind, msg); };
  st.reflectors.push_back(
    std::make_unique<api::reflector>(*st.transport, std::move(ref), ro, *st.exec, std::move(sink), std::move(on_error)));
}

void start_informers(api_self self) {
  auto& st = self->state;
  add_reflector(self,
                {"/api/v1/nodes", "Node", &k8s::core::Node::default_instance(),
                 &k8s::core::NodeList::default_instance(), "", ""},
                on_node_delta);
  add_reflector(self,
                {"/api/v1/namespaces", "Namespace", &k8s::core::Namespace::default_instance(),
                 &k8s::core::NamespaceList::default_instance(), "", ""},
                [](api_self s, const api::delta& d, std::vector<cluster_change_ptr>& out) {
                  on_object_delta(s, s->state.namespaces, d, out);
                });
  add_reflector(self,
                {"/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudget",
                 &k8s::policy::PodDisruptionBudget::default_instance(),
                 &k8s::policy::PodDisruptionBudgetList::default_instance(), "", ""},
                [](api_self s, const api::delta& d, std::vector<cluster_change_ptr>& out) {
                  on_object_delta(s, s->state.pdbs, d, out);
                });
  // PodGroups (gang scheduling): either API may be missing from a cluster, so both are optional.
  // The Coscheduling PodGroup is a CRD, which the apiserver serves as JSON only.
  {
    api::resource_ref ref{"/apis/scheduling.k8s.io/v1beta1/podgroups", "PodGroup",
                          &k8s::scheduling::PodGroup::default_instance(),
                          &k8s::scheduling::PodGroupList::default_instance(), "", ""};
    ref.optional = true;
    add_reflector(self, std::move(ref), on_pod_group_delta<k8s::scheduling::PodGroup>);
    api::resource_ref cref{"/apis/scheduling.x-k8s.io/v1alpha1/podgroups", "PodGroup (scheduling.x-k8s.io)",
                           &k8s::coscheduling::PodGroup::default_instance(),
                           &k8s::coscheduling::PodGroupList::default_instance(), "", ""};
    cref.optional = true;
    add_reflector(self, std::move(cref), on_pod_group_delta<k8s::coscheduling::PodGroup>, true);
  }
  add_reflector(self,
                {"/api/v1/services", "Service", &k8s::core::Service::default_instance(),
                 &k8s::core::ServiceList::default_instance(), "", ""},
                on_workload_delta<k8s::core::Service>);
  add_reflector(self,
                {"/api/v1/replicationcontrollers", "ReplicationController",
                 &k8s::core::ReplicationController::default_instance(),
                 &k8s::core::ReplicationControllerList::default_instance(), "", ""},
                on_workload_delta<k8s::core::ReplicationController>);
  add_reflector(self,
                {"/apis/apps/v1/replicasets", "ReplicaSet", &k8s::apps::ReplicaSet::default_instance(),
                 &k8s::apps::ReplicaSetList::default_instance(), "", ""},
                on_workload_delta<k8s::apps::ReplicaSet>);
  add_reflector(self,
                {"/apis/apps/v1/statefulsets", "StatefulSet", &k8s::apps::StatefulSet::default_instance(),
                 &k8s::apps::StatefulSetList::default_instance(), "", ""},
                on_workload_delta<k8s::apps::StatefulSet>);
  for (const auto& k : storage_kinds()) {
    delta_handler h = nullptr;
    switch (k.kind) {
      case volume_change::pv: h = on_storage_delta<volume_change::pv>; break;
      case volume_change::pvc: h = on_storage_delta<volume_change::pvc>; break;
      case volume_change::storage_class: h = on_storage_delta<volume_change::storage_class>; break;
      case volume_change::csi_node: h = on_storage_delta<volume_change::csi_node>; break;
      case volume_change::csi_driver: h = on_storage_delta<volume_change::csi_driver>; break;
      case volume_change::csi_storage_capacity: h = on_storage_delta<volume_change::csi_storage_capacity>; break;
      case volume_change::volume_attachment: h = on_storage_delta<volume_change::volume_attachment>; break;
    }
    add_reflector(self, {k.path, k.name, k.item, k.list, "", ""}, h);
  }
  // Pods last: by the time they list, their nodes are usually known.
  add_reflector(self,
                {"/api/v1/pods", "Pod", &k8s::core::Pod::default_instance(), &k8s::core::PodList::default_instance(),
                 st.opts.pod_field_selector, ""},
                on_pod_delta);
  for (auto& r : st.reflectors) r->start();
}

// The current state for a new watcher: objects, nodes, pods, then `synced` once it holds.
std::vector<cluster_change_ptr> current_state(api_self self) {
  auto& st = self->state;
  std::vector<cluster_change_ptr> out;
  auto add = [&](cluster_change ch) {
    ch.resource_version = st.resource_version;
    out.push_back(std::make_shared<const cluster_change>(std::move(ch)));
  };
  cluster_change objs;
  objs.type = cluster_event_type::objects;
  objs.objects = st.objects;
  add(std::move(objs));
  for (auto& [name, n] : st.nodes) {
    cluster_change ch;
    ch.type = cluster_event_type::node_add;
    ch.new_node = n;
    add(std::move(ch));
  }
  for (auto& [uid, p] : st.pods) {
    cluster_change ch;
    ch.type = cluster_event_type::pod_add;
    ch.new_pod = p;
    add(std::move(ch));
  }
  if (st.synced) {
    cluster_change ch;
    ch.type = cluster_event_type::synced;
    add(std::move(ch));
  }
  return out;
}

// --- writes ----------------------------------------------------------------------------------------

enum class lane { scheduler, workload };

// Sends a request now, or queues it while max_writes_in_flight of its lane are out. `done` runs in
// the actor.
void write(api_self self, api::http_request req, std::function<void(api::http_response)> done,
           lane which = lane::scheduler) {
  auto& st = self->state;
  auto& l = which == lane::scheduler ? st.scheduler_writes : st.workload_writes;
  if (l.in_flight >= st.opts.max_writes_in_flight) {
    l.waiting.push_back({std::move(req), std::move(done)});
    return;
  }
  ++l.in_flight;
  if (req.timeout.count() == 0) req.timeout = std::chrono::seconds(30);
  api::http_callbacks cb;
  auto* exec = st.exec.get();
  cb.on_done = [exec, self, which, done = std::move(done)](api::http_response r) mutable {
    exec->post([self, which, done = std::move(done), r = std::move(r)]() mutable {
      auto& st = self->state;
      auto& l = which == lane::scheduler ? st.scheduler_writes : st.workload_writes;
      --l.in_flight;
      done(std::move(r));
      while (l.in_flight < st.opts.max_writes_in_flight && !l.waiting.empty()) {
        auto next = std::move(l.waiting.front());
        l.waiting.pop_front();
        write(self, std::move(next.req), std::move(next.done), which);
      }
    });
  };
  api::http_transport* t = st.transport.get();
  if (which == lane::workload) {
    if (!st.workload_transport) {
      if (auto w = api::http_transport::create(st.opts.connection, st.opts.transport))
        st.workload_transport = std::move(*w);
      else
        spdlog::warn("api_cluster: the workload's own connection: {}; its writes share the scheduler's", w.err().message);
    }
    if (st.workload_transport) t = st.workload_transport.get();
  }
  t->start(std::move(req), std::move(cb));
}

api::object_ref ref_of(const pod_info& p) { return {p.ns, p.name, p.uid}; }

std::string now_rfc3339(int digits) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return codec::format_rfc3339(ns / 1000000000, static_cast<int32_t>(ns % 1000000000), digits);
}

// The reply of a write that answers its requester: ok on 2xx, else the apiserver's Status text.
fw::status status_of(const api::http_response& r) {
  return r.ok() ? fw::status::ok() : fw::status::error(api::describe_failure(r));
}

using status_promise = caf::typed_response_promise<fw::status>;

// A pod by uid, or by namespace/name (what `bench` knows of the pods it created: the apiserver
// chose their uids); null if the informer does not have it.
const pod_info* find_pod(const api_state& st, const std::string& id) {
  auto it = st.pods.find(id);
  if (it != st.pods.end()) return it->second.get();
  auto k = st.uid_by_key.find(id);
  if (k == st.uid_by_key.end()) return nullptr;
  it = st.pods.find(k->second);
  return it == st.pods.end() ? nullptr : it->second.get();
}

// find_pod, or null after answering `rp` that the pod is not known.
const pod_info* find_pod_or_answer(const api_state& st, const std::string& id, status_promise& rp) {
  const pod_info* pod = find_pod(st, id);
  if (!pod) rp.deliver(fw::status::error("pod \"" + id + "\" not found"));
  return pod;
}

// A write about a pod the informer knows, answered through a response promise.
status_promise pod_write(api_self self, const std::string& uid,
                         const std::function<api::http_request(const pod_info&)>& build,
                         std::function<void(const api::http_response&)> after = nullptr) {
  auto rp = self->make_response_promise<fw::status>();
  const pod_info* pod = find_pod_or_answer(self->state, uid, rp);
  if (!pod) return rp;
  write(self, build(*pod), [rp, after = std::move(after)](api::http_response r) mutable {
    if (after) after(r);
    rp.deliver(status_of(r));
  });
  return rp;
}

// How often, and how far apart, a binding without an answer is read back while the read itself gets
// none: an apiserver restart refuses connections for a while, and a read that fails the same way
// says nothing about the binding.
constexpr int bind_read_backs = 8;
constexpr std::chrono::milliseconds bind_read_back_delay{250};

// Reads a pod back after its binding to `node` got no answer, and tells whether the binding landed;
// `failed` (the binding's own failure) when it did not, or when no read got an answer either.
void read_back_binding(api_self self, api::object_ref ref, std::string node, api::encoding enc, fw::status failed,
                       int reads_left, std::function<void(fw::status)> done) {
  write(self, api::get_pod_request(ref, enc), [self, ref, node, enc, failed, reads_left, done](api::http_response g) mutable {
    if (g.status == 0 && reads_left > 1) {
      self->state.exec->post_after(bind_read_back_delay, [self, ref, node, enc, failed, reads_left, done]() mutable {
        read_back_binding(self, std::move(ref), std::move(node), enc, std::move(failed), reads_left - 1, std::move(done));
      });
      return;
    }
    k8s::core::Pod p;
    bool landed = g.ok() && api::decode_body(g.body, enc, p) && p.metadata().uid() == ref.uid && p.spec().node_name() == node;
    if (landed)
      spdlog::info("api_cluster: the binding of {}/{} to {} lost its answer ({}) but was applied", ref.ns, ref.name, node,
                   failed.message());
    done(landed ? fw::status::ok() : failed);
  });
}

// POST pods/binding. A binding whose connection broke below HTTP (an apiserver restart, say) may
// have been applied without an answer: the pod is read back before the binding counts as failed
// (again, a little later, while the read gets no answer either), so a landed binding is not retried
// (409) or reported PodScheduled=False over its True.
status_promise bind_pod(api_self self, const std::string& uid, const std::string& node) {
  auto rp = self->make_response_promise<fw::status>();
  const pod_info* pod = find_pod_or_answer(self->state, uid, rp);
  if (!pod) return rp;
  auto ref = ref_of(*pod);
  auto enc = self->state.opts.encoding;
  auto count = [self](const fw::status& s, int http_status) {
    if (s.is_success()) ++self->state.bound;
    else if (http_status == 409) ++self->state.bind_conflicts;
  };
  write(self, api::binding_request(ref, node, enc), [self, rp, ref, node, enc, count](api::http_response r) mutable {
    if (r.status != 0) {
      auto s = status_of(r);
      count(s, r.status);
      rp.deliver(std::move(s));
      return;
    }
    read_back_binding(self, ref, node, enc, status_of(r), bind_read_backs, [rp, count](fw::status s) mutable {
      count(s, 0);
      rp.deliver(std::move(s));
    });
  });
  return rp;
}

void log_failed(const char* what, const api::http_response& r) {
  if (!r.ok()) spdlog::warn("api_cluster: {} failed: {}", what, api::describe_failure(r));
}

const char* action_of(const std::string& reason) {
  if (reason == "Scheduled") return "Binding";
  if (reason == "Preempted") return "Preempting";
  return "Scheduling";
}

// An Event through the correlator: a new one is created (events.k8s.io/v1), a repeat patches the
// stored one's series.
void record_event(api_self self, const cluster_event_record& ev) {
  auto& st = self->state;
  auto v = st.correlator.correlate(ev, event_correlator::clock::now(), st.events.size());
  if (v.what == event_correlator::verdict::skip) return;
  auto slash = v.event.pod_key.find('/');
  api::object_ref regarding{v.event.pod_key.substr(0, slash), v.event.pod_key.substr(slash + 1), v.event.pod_uid};
  api::event_fields f;
  f.type = v.event.type;
  f.reason = v.event.reason;
  f.action = action_of(v.event.reason);
  f.note = v.event.message;
  f.event_time_rfc3339 = now_rfc3339(6);
  f.reporting_instance = st.opts.instance;
  if (v.what == event_correlator::verdict::create) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(ns.count()));
    f.name = regarding.name + "." + hex;
    st.event_names[st.events.size()] = f.name;
    st.events.push_back(v.event);
    write(self, api::event_request(regarding, f), [](const api::http_response& r) { log_failed("an Event", r); });
    return;
  }
  st.events[v.index] = v.event;
  f.name = st.event_names[v.index];
  f.count = v.event.count;
  f.last_observed_rfc3339 = f.event_time_rfc3339;
  // As client-go's event recorder: a series update whose Event is gone (its create failed, or it
  // was deleted or expired) creates it again, series included.
  write(self, api::event_series_request(regarding.ns, f.name, f.count, f.last_observed_rfc3339),
        [self, regarding, f](const api::http_response& r) {
          if (r.status != 404) return log_failed("an Event series update", r);
          write(self, api::event_request(regarding, f), [](const api::http_response& c) { log_failed("an Event", c); });
        });
}

// Preemption: the DisruptionTarget condition first, then the delete with a uid precondition, and a
// Preempted Event on the victim, as kube's preemption does.
status_promise evict(api_self self, const std::string& uid, const std::string& message) {
  auto rp = self->make_response_promise<fw::status>();
  const pod_info* pod = find_pod_or_answer(self->state, uid, rp);
  if (!pod) return rp;
  auto ref = ref_of(*pod);
  api::condition_patch c{"DisruptionTarget", "True", "PreemptionByScheduler",
                         "kube-actor-scheduler: preempting to accommodate a higher priority pod", now_rfc3339(0)};
  write(self, api::condition_patch_request(ref, c), [self, rp, ref, message, node = pod->node_name](
                                                      const api::http_response& r) mutable {
    if (!r.ok() && r.status != 404) log_failed("the DisruptionTarget condition", r);
    write(self, api::delete_pod_request(ref), [self, rp, ref, message, node](const api::http_response& d) mutable {
      if (d.ok()) {
        cluster_event_record ev;
        ev.type = "Normal";
        ev.reason = "Preempted";
        ev.pod_uid = ref.uid;
        ev.pod_key = ref.ns + "/" + ref.name;
        ev.message = message;
        ev.node = node;
        record_event(self, ev);
      }
      rp.deliver(status_of(d));
    });
  });
  return rp;
}

// VolumeBinding's PreBind: PUT each volume, then each claim, in order (kube's BindPodVolumes);
// the first failure answers. Then wait until the informer sees every claim of `wait_for` bound.
void put_volume_objects(api_self self, volume_write_ptr w, size_t next, caf::typed_response_promise<fw::status> rp) {
  auto& st = self->state;
  if (next == w->pvs.size() + w->claims.size()) {
    uint64_t id = ++st.next_waiter;
    st.volume_waiters.emplace(id, api_state::volume_waiter{w, rp});
    self->delayed_send(self, w->timeout, timeout_atom::value, id);
    return wake_volume_waiters(self);
  }
  api::http_request req;
  req.method = "PUT";
  req.content_type = std::string(api::media_type(st.opts.encoding));
  req.accept = req.content_type;
  bool protobuf = st.opts.encoding == api::encoding::protobuf;
  if (next < w->pvs.size()) {
    const auto& pv = *w->pvs[next];
    req.path = "/api/v1/persistentvolumes/" + api::url_escape(pv.metadata().name());
    req.body = protobuf ? codec::encode_protobuf(pv, "v1", "PersistentVolume") : codec::encode_json(pv);
  } else {
    const auto& pvc = *w->claims[next - w->pvs.size()];
    req.path = "/api/v1/namespaces/" + api::url_escape(w->ns) + "/persistentvolumeclaims/" +
               api::url_escape(pvc.metadata().name());
    req.body = protobuf ? codec::encode_protobuf(pvc, "v1", "PersistentVolumeClaim") : codec::encode_json(pvc);
  }
  write(self, std::move(req), [self, w, next, rp](const api::http_response& r) mutable {
    if (!r.ok()) {
      rp.deliver(status_of(r));
      return;
    }
    put_volume_objects(self, w, next + 1, rp);
  });
}

template <class T>
void create_object(api_self self, const T& obj, const std::string& path, const char* kind,
                   std::function<void()> after = nullptr, const char* api_version = "v1", bool json = false) {
  api::http_request req;
  req.method = "POST";
  req.path = path;
  auto enc = json ? api::encoding::json : self->state.opts.encoding;
  req.content_type = std::string(api::media_type(enc));
  req.accept = req.content_type;
  if (enc == api::encoding::protobuf) {
    req.body = codec::encode_protobuf(obj, api_version, kind);
  } else {
    // apiVersion and kind first, as kubectl sends them: a custom resource's decoder needs them.
    std::string fields = codec::encode_json(obj);
    req.body = "{\"apiVersion\":";
    codec::append_json_string(req.body, api_version);
    req.body += ",\"kind\":";
    codec::append_json_string(req.body, kind);
    if (fields.size() > 2) req.body += ",";
    req.body.append(fields, 1, std::string::npos);
  }
  write(
    self, std::move(req),
    [kind, after = std::move(after)](const api::http_response& r) {
      if (r.status != 409) log_failed(kind, r);
      if (after) after();
    },
    lane::workload);
}

// The pod as the API object: pod_info's namespace and name are authoritative (a workload's pods share
// one template object); the apiserver assigns the uid.
void post_pod(api_self self, const pod_info& p) {
  k8s::core::Pod obj = *p.pod;
  obj.mutable_metadata()->set_name(p.name);
  obj.mutable_metadata()->set_namespace_(p.ns);
  obj.mutable_metadata()->clear_uid();
  obj.mutable_metadata()->clear_generate_name();
  if (!p.node_name.empty()) obj.mutable_spec()->set_node_name(p.node_name);
  create_object(self, obj, "/api/v1/namespaces/" + api::url_escape(p.ns) + "/pods", "Pod");
}

// `bench --kubeconfig` creates its namespaces through the API before their pods and PodGroups (the
// apiserver refuses an object in a namespace that does not exist): a create whose namespace is not
// known yet waits until the namespace's POST is answered (201, or 409 when it exists already).
void in_namespace(api_self self, const std::string& name, const label_map* labels, std::function<void()> create) {
  auto& st = self->state;
  if (st.namespaces.count(name) || st.namespaces_created.count(name)) {
    if (create) create();
    return;
  }
  bool asked = st.awaiting_namespace.count(name) > 0;
  auto& waiting = st.awaiting_namespace[name];
  if (create) waiting.push_back(std::move(create));
  if (asked) return;
  k8s::core::Namespace ns;
  ns.mutable_metadata()->set_name(name);
  if (labels)
    for (auto& [k, v] : labels->entries()) (*ns.mutable_metadata()->mutable_labels())[k] = v;
  create_object(self, ns, "/api/v1/namespaces", "Namespace", [self, name] {
    auto& st = self->state;
    st.namespaces_created.insert(name);
    auto waiting = std::move(st.awaiting_namespace[name]);
    st.awaiting_namespace.erase(name);
    for (auto& create : waiting) create();
  });
}

void create_pod(api_self self, pod_info_ptr p) {
  if (!p->pod) return;
  std::string ns = p->ns;
  in_namespace(self, ns, nullptr, [self, p = std::move(p)] { post_pod(self, *p); });
}

// The workload's namespaces, with their labels, and its PodGroups (each created once; the
// Coscheduling form is a CRD, which the apiserver takes as JSON only). Workload selectors and PDBs
// are not API objects here.
void create_namespaces(api_self self, const cluster_objects& objs) {
  for (auto& [name, labels] : objs.namespace_labels) in_namespace(self, name, &labels, nullptr);
  for (auto& [key, g] : objs.pod_groups) {
    if (!self->state.pod_groups_created.insert(key).second) continue;
    in_namespace(self, g->ns, nullptr, [self, g = g] {
      const std::string in = "/namespaces/" + api::url_escape(g->ns) + "/podgroups";
      if (g->api == pod_group_api::coscheduling) {
        k8s::coscheduling::PodGroup pg;
        to_api_object(*g, pg);
        create_object(self, pg, "/apis/scheduling.x-k8s.io/v1alpha1" + in, "PodGroup", nullptr,
                      "scheduling.x-k8s.io/v1alpha1", /*json=*/true);
      } else {
        k8s::scheduling::PodGroup pg;
        to_api_object(*g, pg);
        create_object(self, pg, "/apis/scheduling.k8s.io/v1beta1" + in, "PodGroup", nullptr, "scheduling.k8s.io/v1beta1");
      }
    });
  }
  if (!objs.workloads.empty() || !objs.pdbs.empty())
    spdlog::warn("api_cluster: workload selectors and PodDisruptionBudgets are not created through the API");
}

cluster_stats stats_of(const api_state& st) {
  cluster_stats s;
  s.nodes = st.nodes.size();
  s.pods = st.pods.size();
  for (auto& [uid, p] : st.pods) {
    s.bound += !p->node_name.empty();
    s.running += p->phase == "Running";
  }
  s.events = st.events.size();
  s.resource_version = st.resource_version;
  s.bind_conflicts = st.bind_conflicts;
  for (auto* l : {&st.scheduler_writes, &st.workload_writes}) s.writes_in_flight += l->in_flight + l->waiting.size();
  return s;
}

cluster_actor::behavior_type api_behavior(api_self self) {
  auto begin = [self] { return self->state.probe->begin_handler(self); };
  return {
    [=](watch_atom, watcher_actor w) {
      auto probe_scope = begin();
      auto handle = w;
      if (self->state.watchers->add(std::move(w), current_state(self))) self->monitor(handle);
    },
    [=](credit_atom, uint64_t n) {
      auto probe_scope = begin();
      self->state.watchers->credited(caf::actor_cast<caf::actor_addr>(self->current_sender()), n);
    },
    [=](create_atom, node_info_ptr n) {
      auto probe_scope = begin();
      if (n->node) create_object(self, *n->node, "/api/v1/nodes", "Node");
    },
    [=](create_atom, pod_info_ptr p) {
      auto probe_scope = begin();
      create_pod(self, std::move(p));
    },
    [=](create_atom, cluster_objects_ptr objs) {
      auto probe_scope = begin();
      create_namespaces(self, *objs);
    },
    [=](delpod_atom, const std::string& uid) {
      auto probe_scope = begin();
      return pod_write(self, uid, [](const pod_info& p) { return api::delete_pod_request(ref_of(p)); });
    },
    [=](evict_atom, const std::string& uid, const std::string& message) {
      auto probe_scope = begin();
      return evict(self, uid, message);
    },
    [=](nominate_atom, const std::string& uid, const std::string& node) {
      auto probe_scope = begin();
      return pod_write(self, uid, [node](const pod_info& p) { return api::nominated_node_request(ref_of(p), node); });
    },
    [=](delete_atom, const std::string& node) {
      auto probe_scope = begin();
      api::http_request req;
      req.method = "DELETE";
      req.path = "/api/v1/nodes/" + api::url_escape(node);
      req.accept = "application/json";
      write(self, std::move(req), [](const api::http_response& r) { log_failed("a node delete", r); }, lane::workload);
    },
    [=](bind_atom, const std::string& uid, const std::string& node) {
      auto probe_scope = begin();
      return bind_pod(self, uid, node);
    },
    [=](bind_atom, const volume_write_ptr& w) {
      auto probe_scope = begin();
      auto rp = self->make_response_promise<fw::status>();
      put_volume_objects(self, w, 0, rp);
      return rp;
    },
    [=](timeout_atom, uint64_t id) {
      auto probe_scope = begin();
      auto it = self->state.volume_waiters.find(id);
      if (it == self->state.volume_waiters.end()) return;
      it->second.rp.deliver(fw::status::error("binding volumes: context deadline exceeded"));
      self->state.volume_waiters.erase(it);
    },
    [=](create_atom, const volume_change_ptr& ch) {
      // bench --kubeconfig's volumes and claims: created through the API like its pods.
      auto probe_scope = begin();
      if (ch->new_pv) create_object(self, *ch->new_pv->pv, "/api/v1/persistentvolumes", "PersistentVolume");
      if (ch->new_pvc)
        create_object(self, *ch->new_pvc->pvc,
                      "/api/v1/namespaces/" + api::url_escape(ch->new_pvc->ns) + "/persistentvolumeclaims",
                      "PersistentVolumeClaim");
      if (ch->new_class)
        create_object(self, *ch->new_class->sc, "/apis/storage.k8s.io/v1/storageclasses", "StorageClass", nullptr,
                      "storage.k8s.io/v1");
      if (ch->new_csi_node)
        create_object(self, *ch->new_csi_node->csi_node, "/apis/storage.k8s.io/v1/csinodes", "CSINode", nullptr,
                      "storage.k8s.io/v1");
    },
    [=](status_atom, const std::string&, const std::string&) {
      // Pod phases come from the kubelets of a real cluster; nothing here reports them.
    },
    [=](status_atom, const std::vector<std::string>&, const std::string&) {},
    [=](record_atom, const cluster_event_record& ev) { auto probe_scope = begin(); record_event(self, ev); },
    [=](record_atom, const std::vector<cluster_event_record>& evs) {
      auto probe_scope = begin();
      for (auto& ev : evs) record_event(self, ev);
    },
    [=](status_atom, const std::string& uid, const pod_condition& c) {
      auto probe_scope = begin();
      auto it = self->state.pods.find(uid);
      if (it == self->state.pods.end()) return;
      // A failure report can arrive after a later attempt's binding landed, or after a binding that
      // was read back as failed landed all the same: a pod the informer holds bound keeps the
      // PodScheduled=True its binding set (the embedded cluster does the same).
      if (c.status == "False" && !it->second->node_name.empty()) return;
      api::condition_patch p{c.type, c.status, c.reason, c.message, now_rfc3339(0)};
      write(self, api::condition_patch_request(ref_of(*it->second), p),
            [](const api::http_response& r) { log_failed("a pod condition", r); });
    },
    [=](list_atom, const cluster_event_record&) { auto probe_scope = begin(); return self->state.events; },
    [=](stats_atom) { auto probe_scope = begin(); return stats_of(self->state); },
    [=](list_atom) {
      auto probe_scope = begin();
      std::vector<pod_info_ptr> out;
      for (auto& [uid, p] : self->state.pods) out.push_back(p);
      return out;
    },
    [=](run_atom, const source_task& t) { auto probe_scope = begin(); t.fn(); },
  };
}

}  // namespace

result<cluster_actor> spawn_api_cluster(caf::actor_system& sys, const api_cluster_options& opts) {
  auto transport = api::http_transport::create(opts.connection, opts.transport);
  if (!transport) return transport.err();
  obs::metrics_registry* metrics = opts.metrics ? opts.metrics : &obs::default_registry();
  auto shared_transport = std::make_shared<std::unique_ptr<api::http_transport>>(std::move(*transport));
  return sys.spawn([opts, metrics, shared_transport](api_self self) -> cluster_actor::behavior_type {
    auto& st = self->state;
    st.opts = opts;
    st.probe = std::make_unique<obs::actor_probe>(*metrics, "api_cluster");
    st.exec = std::make_unique<mailbox_executor>(caf::actor_cast<caf::weak_actor_ptr>(self));
    st.transport = std::move(*shared_transport);
    st.watchers = std::make_unique<watch_fanout>(
      fanout_options{opts.watch_window, opts.watch_batch, opts.watch_fold_after},
      [self](const watcher_actor& w, cluster_change_batch_ptr b) { self->send(w, event_atom::value, std::move(b)); });
    self->set_down_handler([self](const caf::down_msg& dm) {
      if (self->state.watchers->remove(dm.source))
        spdlog::warn("api_cluster: a watch ended: {}", self->system().render(dm.reason));
    });
    spdlog::info("api_cluster: {}", opts.connection.describe());
    start_informers(self);
    return api_behavior(self);
  });
}

}  // namespace kas

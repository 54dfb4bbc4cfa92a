// See cluster_store.hpp for the design note.
#include "actors/cluster_store.hpp"

namespace kas {

namespace {

fw::status pod_not_found(const std::string& uid) { return fw::status::error("pods \"" + uid + "\" not found"); }

// Sets (or replaces) one condition on a pod copy.
void put_condition(pod_info& p, const pod_condition& c) {
  for (auto& x : p.conditions)
    if (x.type == c.type) {
      x = c;
      return;
    }
  p.conditions.push_back(c);
}

}  // namespace

// --- cluster_store -------------------------------------------------------------------------------

void cluster_store::emit(outcome& out, cluster_change ch) {
  ch.resource_version = ++rv_;
  out.changes.push_back(std::make_shared<const cluster_change>(std::move(ch)));
}

void cluster_store::replace_pod(outcome& out, pod_info_ptr& stored, pod_info_ptr updated, bool conditions_only) {
  cluster_change ch;
  ch.type = cluster_event_type::pod_update;
  ch.old_pod = stored;
  ch.new_pod = updated;
  ch.conditions_only = conditions_only;
  stored = std::move(updated);
  emit(out, std::move(ch));
}

pod_info_ptr* cluster_store::find_pod(const std::string& uid) {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second;
}

cluster_store::outcome cluster_store::put_node(node_info_ptr n) {
  outcome out;
  cluster_change ch;
  auto it = nodes_.find(n->name);
  if (it == nodes_.end()) {
    ch.type = cluster_event_type::node_add;
    nodes_created_.emplace(++next_seq_, n->name);
    node_seq_[n->name] = next_seq_;
  } else {
    ch.type = cluster_event_type::node_update;
    ch.old_node = it->second;
  }
  ch.new_node = n;
  nodes_[n->name] = std::move(n);
  emit(out, std::move(ch));
  return out;
}

cluster_store::outcome cluster_store::remove_node(const std::string& name) {
  outcome out;
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return out;
  cluster_change ch;
  ch.type = cluster_event_type::node_delete;
  ch.old_node = it->second;
  nodes_created_.erase(node_seq_[name]);
  node_seq_.erase(name);
  nodes_.erase(it);
  emit(out, std::move(ch));
  return out;
}

cluster_store::outcome cluster_store::create_pod(pod_info_ptr p) {
  outcome out;
  if (pods_.count(p->uid)) return out;
  pods_[p->uid] = p;
  pods_created_.emplace(++next_seq_, p->uid);
  pod_seq_[p->uid] = next_seq_;
  if (!p->node_name.empty()) bound_++;
  cluster_change ch;
  ch.type = cluster_event_type::pod_add;
  ch.new_pod = std::move(p);
  emit(out, std::move(ch));
  return out;
}

cluster_store::outcome cluster_store::set_objects(cluster_objects_ptr objects) {
  outcome out;
  objects_ = objects;
  cluster_change ch;
  ch.type = cluster_event_type::objects;
  ch.objects = std::move(objects);
  emit(out, std::move(ch));
  volume_work_.rebuild(objects_->volumes);
  sync_volumes(out);  // claims of the new objects the PV controller binds at once
  return out;
}

void cluster_store::store_volume(outcome& out, volume_change vc) {
  auto objs = std::make_shared<cluster_objects>(*objects_);
  apply_volume_change(objs->volumes, vc);
  objects_ = std::move(objs);
  volume_work_.note(vc);
  cluster_change ch;
  ch.type = cluster_event_type::volume;
  ch.volume = std::make_shared<const volume_change>(std::move(vc));
  emit(out, std::move(ch));
}

void cluster_store::sync_volumes(outcome& out) {
  auto node_of = [this](const std::string& name) -> const node_info* {
    auto it = nodes_.find(name);
    return it == nodes_.end() ? nullptr : it->second.get();
  };
  // Each round binds or provisions; a provisioned volume binds in the next. Bounded: every round
  // either binds a claim for good or creates the one volume of a claim.
  for (size_t round = 0; round < 2 * objects_->volumes.pvcs.size() + 2; ++round) {
    auto writes = pv_controller_sync(objects_->volumes, node_of, &volume_work_);
    if (writes.empty()) return;
    for (auto& w : writes) store_volume(out, std::move(w));
  }
}

cluster_store::outcome cluster_store::apply_volume(volume_change vc) {
  outcome out;
  store_volume(out, std::move(vc));
  sync_volumes(out);
  return out;
}

namespace {

// One PreBind write: the stored object it replaces (the apiserver's 404 when there is none), and
// the change to the new object, compiled (its 422 when that fails).
template <class Proto, class Info>
result<volume_change> replace_stored(const object_table<Info>& table, const std::string& key,
                                     const std::shared_ptr<const Proto>& obj,
                                     result<std::shared_ptr<const Info>> (*compile)(std::shared_ptr<const Proto>),
                                     volume_change (*change)(std::shared_ptr<const Info>, std::shared_ptr<const Info>),
                                     const char* resource) {
  const std::string& name = obj->metadata().name();
  auto stored = table.get(key);
  if (!stored) return error{std::string(resource) + " \"" + name + "\" not found"};
  auto compiled = compile(obj);
  if (!compiled) return error{Proto::descriptor()->name() + " \"" + name + "\" is invalid: " + compiled.err().message};
  return change(stored, *compiled);
}

// Two pods' PreBinds choosing one volume: the second write finds it reserved for another claim.
// The apiserver refuses it by resourceVersion; this store keeps none for volumes, so it refuses the
// same write by what changed.
bool claimed_by_another(const volume_change& ch) {
  const auto& was = ch.old_pv->claim_ref;
  const auto& now = ch.new_pv->claim_ref;
  return was && now && (was->ns != now->ns || was->name != now->name);
}

}  // namespace

cluster_store::outcome cluster_store::write_volumes(
  const std::vector<std::shared_ptr<const k8s::core::PersistentVolume>>& pvs,
  const std::vector<std::shared_ptr<const k8s::core::PersistentVolumeClaim>>& claims) {
  outcome out;
  std::vector<volume_change> writes;
  const auto& v = objects_->volumes;
  for (const auto& obj : pvs) {
    auto w = replace_stored(v.pvs, obj->metadata().name(), obj, &compile_pv, &pv_change, "persistentvolumes");
    if (w && claimed_by_another(*w))
      w = error{"Operation cannot be fulfilled on persistentvolumes \"" + obj->metadata().name() +
                "\": the object has been modified; please apply your changes to the latest version and try again"};
    if (!w) {
      out.status = fw::status::error(w.err().message);
      return out;
    }
    writes.push_back(std::move(*w));
  }
  for (const auto& obj : claims) {
    std::string ns = obj->metadata().namespace_().empty() ? "default" : obj->metadata().namespace_();
    auto w = replace_stored(v.pvcs, ns + "/" + obj->metadata().name(), obj, &compile_pvc, &pvc_change,
                            "persistentvolumeclaims");
    if (!w) {
      out.status = fw::status::error(w.err().message);
      return out;
    }
    writes.push_back(std::move(*w));
  }
  for (auto& w : writes) store_volume(out, std::move(w));
  sync_volumes(out);
  return out;
}

bool cluster_store::claims_bound(const std::string& ns, const std::vector<std::string>& names) const {
  return kas::claims_bound(objects_->volumes, ns, names);
}

cluster_store::outcome cluster_store::delete_pod(const std::string& uid) {
  outcome out;
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    out.status = pod_not_found(uid);
    return out;
  }
  cluster_change ch;
  ch.type = cluster_event_type::pod_delete;
  ch.old_pod = it->second;
  if (!it->second->node_name.empty()) bound_--;
  pods_created_.erase(pod_seq_[uid]);
  pod_seq_.erase(uid);
  pods_.erase(it);
  emit(out, std::move(ch));
  return out;
}

cluster_store::outcome cluster_store::evict_pod(const std::string& uid, const std::string& message) {
  pod_info_ptr* stored = find_pod(uid);
  pod_info_ptr victim = stored ? *stored : nullptr;
  auto out = delete_pod(uid);
  if (!out.status.is_success()) return out;
  // The Event kube-scheduler records on a preemption victim.
  cluster_event_record ev;
  ev.type = "Normal";
  ev.reason = "Preempted";
  ev.pod_uid = uid;
  ev.pod_key = victim->ns + "/" + victim->name;
  ev.message = message;
  ev.node = victim->node_name;
  record_event(ev);
  return out;
}

cluster_store::outcome cluster_store::nominate(const std::string& uid, const std::string& node) {
  outcome out;
  pod_info_ptr* stored = find_pod(uid);
  if (!stored) {
    out.status = pod_not_found(uid);
    return out;
  }
  if ((*stored)->nominated_node_name != node) {
    auto updated = std::make_shared<pod_info>(**stored);
    updated->nominated_node_name = node;
    replace_pod(out, *stored, std::move(updated));
  }
  return out;
}

cluster_store::outcome cluster_store::bind(const std::string& uid, const std::string& node) {
  outcome out;
  pod_info_ptr* stored = find_pod(uid);
  if (!stored) {
    out.status = pod_not_found(uid);
    return out;
  }
  const pod_info& p = **stored;
  if (!p.node_name.empty()) {
    // The apiserver answers 409 Conflict for a pod that is already bound.
    conflicts_++;
    out.status = fw::status::error("Operation cannot be fulfilled on pods/binding \"" + p.name + "\": pod " + p.name +
                                   " is already assigned to node \"" + p.node_name + "\"");
    return out;
  }
  if (!nodes_.count(node)) {
    out.status = fw::status::error("node \"" + node + "\" not found");
    return out;
  }
  // The binding subresource also sets PodScheduled=True.
  auto bound = std::make_shared<pod_info>(p);
  bound->node_name = node;
  put_condition(*bound, pod_condition{"PodScheduled", "True", "", ""});
  bound_++;
  replace_pod(out, *stored, std::move(bound));
  return out;
}

cluster_store::outcome cluster_store::set_phase(const std::string& uid, const std::string& phase) {
  outcome out;
  pod_info_ptr* stored = find_pod(uid);
  if (!stored || (*stored)->phase == phase) return out;
  auto updated = std::make_shared<pod_info>(**stored);
  updated->phase = phase;
  if (phase == "Running") running_++;
  replace_pod(out, *stored, std::move(updated));
  return out;
}

cluster_store::outcome cluster_store::set_condition(const std::string& uid, const pod_condition& c) {
  outcome out;
  pod_info_ptr* stored = find_pod(uid);
  // A failure report can arrive after a later attempt's binding landed (the recorder and the
  // binder reach the cluster on different paths); a bound pod keeps PodScheduled=True.
  if (!stored || (c.status == "False" && !(*stored)->node_name.empty())) return out;
  const pod_condition* cur = (*stored)->condition(c.type);
  if (cur && *cur == c) return out;
  auto updated = std::make_shared<pod_info>(**stored);
  put_condition(*updated, c);
  replace_pod(out, *stored, std::move(updated), true);
  return out;
}

void cluster_store::record_event(const cluster_event_record& ev, event_correlator::clock::time_point now) {
  auto v = correlator_.correlate(ev, now, events_.size());
  if (v.what == event_correlator::verdict::create) events_.push_back(std::move(v.event));
  else if (v.what == event_correlator::verdict::update) events_[v.index] = std::move(v.event);
}

std::vector<cluster_change_ptr> cluster_store::list() const {
  // Objects (namespaces, selectors, PDBs), nodes, then pods, as the informers' initial syncs
  // deliver them.
  std::vector<cluster_change_ptr> out;
  out.reserve(nodes_.size() + pods_.size() + 2);
  auto add = [&](cluster_change ch) {
    ch.resource_version = rv_;
    out.push_back(std::make_shared<const cluster_change>(std::move(ch)));
  };
  cluster_change objs;
  objs.type = cluster_event_type::objects;
  objs.objects = objects_;
  add(std::move(objs));
  for (auto& [seq, name] : nodes_created_) {
    cluster_change ch;
    ch.type = cluster_event_type::node_add;
    ch.new_node = nodes_.at(name);
    add(std::move(ch));
  }
  for (auto& [seq, uid] : pods_created_) {
    cluster_change ch;
    ch.type = cluster_event_type::pod_add;
    ch.new_pod = pods_.at(uid);
    add(std::move(ch));
  }
  cluster_change synced;
  synced.type = cluster_event_type::synced;
  add(std::move(synced));
  return out;
}

cluster_stats cluster_store::stats() const {
  cluster_stats s;
  s.nodes = nodes_.size();
  s.pods = pods_.size();
  s.bound = bound_;
  s.running = running_;
  s.events = events_.size();
  s.resource_version = rv_;
  s.bind_conflicts = conflicts_;
  return s;
}

std::vector<pod_info_ptr> cluster_store::pods() const {
  std::vector<pod_info_ptr> out;
  out.reserve(pods_.size());
  for (auto& [uid, p] : pods_) out.push_back(p);
  return out;
}

// --- change_coalescer ------------------------------------------------------------------------------

change_coalescer::object_key change_coalescer::key_of(const cluster_change& ch) {
  using t = cluster_event_type;
  switch (ch.type) {
    case t::pod_add:
    case t::pod_update: return {'p', ch.new_pod->uid};
    case t::pod_delete: return {'p', ch.old_pod->uid};
    case t::node_add:
    case t::node_update: return {'n', ch.new_node->name};
    case t::node_delete: return {'n', ch.old_node->name};
    case t::objects: return {'o', {}};
    case t::volume: return {'v', ch.volume->key};
    case t::synced: break;
  }
  return {};
}

// The object an entry is about, viewed in the state the entry holds.
change_coalescer::object_key change_coalescer::key_of(const entry& e) {
  if (!e.folded) return key_of(*e.first);
  if (e.last_pod) return {'p', e.last_pod->uid};
  if (e.last_node) return {'n', e.last_node->name};
  if (e.first_volume) return {'v', e.first_volume->key};
  return {'o', {}};
}

void change_coalescer::push(cluster_change_ptr ch) {
  if (!folding_ && plain_.size() < fold_after_) {
    plain_.push_back(std::move(ch));
    live_++;
    return;
  }
  folding_ = true;
  push_folded(std::move(ch));
}

void change_coalescer::push_folded(cluster_change_ptr ch) {
  object_key key = key_of(*ch);
  uint64_t hash = std::hash<std::string_view>{}(key.id) * 31 + static_cast<unsigned char>(key.kind);
  bool index_it = false;
  if (key.kind != 0) {
    auto it = index_.find(hash);
    if (it == index_.end()) {
      index_it = true;
    } else if (entry& e = entries_[it->second - base_]; key_of(e) == key) {
      fold(e, *ch);
      bool volume_gone = e.merged.volume && !e.merged.volume->has_new();
      if (e.folded && !e.seen && !e.merged.new_pod && !e.merged.new_node &&
          (e.merged.type == cluster_event_type::volume ? volume_gone : !e.merged.objects)) {
        // Created and deleted while waiting: the watcher never hears of it.
        e.cancelled = true;
        live_--;
        index_.erase(it);
      }
      return;
    }
    // else: another object with the same hash holds the slot; this change waits on its own.
  }
  if (index_it) index_.emplace(hash, base_ + entries_.size());
  entry e;
  e.hash = hash;
  e.indexed = index_it;
  e.seen = ch->old_pod || ch->old_node || (ch->volume && ch->volume->has_old());
  e.first = std::move(ch);
  entries_.push_back(std::move(e));
  live_++;
}

void change_coalescer::fold(entry& e, const cluster_change& ch) {
  if (!e.folded) {
    e.merged = *e.first;
    e.last_pod = e.merged.new_pod ? e.merged.new_pod : e.merged.old_pod;
    e.last_node = e.merged.new_node ? e.merged.new_node : e.merged.old_node;
    if (e.merged.type == cluster_event_type::pod_delete) e.merged.new_pod = nullptr;
    if (e.merged.type == cluster_event_type::node_delete) e.merged.new_node = nullptr;
    e.first_volume = e.merged.volume;
    e.first = nullptr;
    e.folded = true;
  }
  auto& m = e.merged;
  m.resource_version = ch.resource_version;
  m.conditions_only = m.conditions_only && ch.conditions_only;
  using t = cluster_event_type;
  switch (ch.type) {
    case t::pod_delete: m.new_pod = nullptr, e.last_pod = ch.old_pod; break;
    case t::pod_add:
    case t::pod_update: m.new_pod = e.last_pod = ch.new_pod; break;
    case t::node_delete: m.new_node = nullptr, e.last_node = ch.old_node; break;
    case t::node_add:
    case t::node_update: m.new_node = e.last_node = ch.new_node; break;
    case t::objects: m.objects = ch.objects; break;
    case t::volume:
      m.volume = std::make_shared<const volume_change>(fold_volume_changes(*e.first_volume, *ch.volume));
      break;
    case t::synced: break;
  }
}

cluster_change_ptr change_coalescer::materialize(entry& e) {
  if (!e.folded) return std::move(e.first);
  auto& m = e.merged;
  using t = cluster_event_type;
  bool pod = m.type == t::pod_add || m.type == t::pod_update || m.type == t::pod_delete;
  bool node = m.type == t::node_add || m.type == t::node_update || m.type == t::node_delete;
  if (pod) {
    if (!e.seen) m.type = t::pod_add, m.conditions_only = false;
    else if (!m.new_pod) m.type = t::pod_delete, m.old_pod = e.last_pod;
    else m.type = t::pod_update;
  } else if (node) {
    if (!e.seen) m.type = t::node_add;
    else if (!m.new_node) m.type = t::node_delete, m.old_node = e.last_node;
    else m.type = t::node_update;
  }
  if (m.type != t::pod_update) m.conditions_only = false;
  return std::make_shared<const cluster_change>(std::move(m));
}

std::vector<cluster_change_ptr> change_coalescer::take(size_t max) {
  std::vector<cluster_change_ptr> out;
  out.reserve(std::min(max, live_));
  while (!plain_.empty() && out.size() < max) {
    out.push_back(std::move(plain_.front()));
    plain_.pop_front();
    live_--;
  }
  while (!entries_.empty() && out.size() < max) {
    entry& e = entries_.front();
    if (!e.cancelled) {
      if (e.indexed) index_.erase(e.hash);
      out.push_back(materialize(e));
      live_--;
    }
    entries_.pop_front();
    base_++;
  }
  if (live_ == 0) folding_ = false;
  return out;
}

}  // namespace kas

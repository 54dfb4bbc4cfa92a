// See scheduler_cache.hpp for the pod state machine. Ownership: every node_info stored here is
// either published in snap_ (shared, immutable) or a ghost in ghosts_; a change always copies the
// node first (mutable_copy), so readers of earlier snapshots never see it move.
#include "cache/scheduler_cache.hpp"

#include <algorithm>

#include "cache/attachable_volumes.hpp"

namespace kas {
namespace {

error fail(const std::string& msg) { return error{msg}; }

}  // namespace

std::shared_ptr<node_info> scheduler_cache::mutable_copy(const std::string& name, long& at) const {
  at = snap_.index_of(name);
  if (at >= 0) return snap_.node(static_cast<size_t>(at)).clone();
  auto g = ghosts_.find(name);
  if (g != ghosts_.end()) return g->second->clone();
  return nullptr;
}

bool scheduler_cache::put_node(std::shared_ptr<node_info> n, long i) {
  n->generation = ++generation_;
  if (i >= 0) {
    snap_.set_node(static_cast<size_t>(i), std::move(n), generation_);
    published_.reset();
    return true;
  }
  if (n->pods.empty())
    ghosts_.erase(n->name);
  else
    ghosts_[n->name] = std::move(n);
  return false;
}

void scheduler_cache::track_constraints(const pod_info& p) {
  if (p.spread_constraints.empty() && p.required_anti_affinity.empty()) return;
  topology_.track(snap_.mutable_topology(), p, [&](auto&& f) {
    for (size_t i = 0; i < snap_.size(); ++i) f(snap_.node(i));
  });
}

void scheduler_cache::add_or_update_node(std::shared_ptr<node_info> compiled) {
  long i = -1;
  if (auto existing = mutable_copy(compiled->name, i)) {
    compiled->pods = std::move(existing->pods);
    compiled->requested = existing->requested;
    compiled->non_zero_requested = existing->non_zero_requested;
    compiled->used_ports = std::move(existing->used_ports);
    compiled->pods_with_affinity = std::move(existing->pods_with_affinity);
    compiled->pods_with_required_anti_affinity = std::move(existing->pods_with_required_anti_affinity);
    compiled->volume_usage = std::move(existing->volume_usage);
    compiled->volume_usage_current = existing->volume_usage_current;
    compiled->has_csi_node = existing->has_csi_node;
  } else {
    compiled->pods.clear();
    compiled->requested = {};
    compiled->non_zero_requested = {};
    compiled->used_ports.clear();
    compiled->pods_with_affinity.clear();
    compiled->pods_with_required_anti_affinity.clear();
    // Its CSINode or attachments may have come first.
    compiled->volume_usage = nullptr;
    compiled->volume_usage_current = false;
    refresh_volume_usage(*compiled);
  }
  ghosts_.erase(compiled->name);
  compiled->generation = ++generation_;
  // The node as the snapshot held it (a ghost was not in it, so its pods enter the index now).
  node_info_ptr before = i >= 0 ? snap_.node_ptr(static_cast<size_t>(i)) : nullptr;
  const node_info* after = compiled.get();
  if (i >= 0)
    snap_.set_node(static_cast<size_t>(i), std::move(compiled), generation_);
  else
    snap_.add_node(std::move(compiled), generation_);
  topology_.node_changed(snap_.mutable_topology(), before.get(), after);
  published_.reset();
  log_structural();
}

void scheduler_cache::remove_node(const std::string& name) {
  long at = snap_.index_of(name);
  if (at < 0) return;
  node_info_ptr gone = snap_.node_ptr(static_cast<size_t>(at));  // alive for node_changed below
  const node_info* n = gone.get();
  if (!n->pods.empty()) {
    // Pods still reference it: keep their accounting until they go, out of the snapshot.
    auto ghost = n->clone();
    ghost->node = nullptr;
    ghost->generation = generation_ + 1;
    ghosts_[name] = std::move(ghost);
  } else if (n->volume_usage) {
    reindex_volume_usage(name, n->volume_usage->read, {});  // nothing will refresh it again
  }
  snap_ = snap_.without_node(name, ++generation_);
  topology_.node_changed(snap_.mutable_topology(), n, nullptr);
  published_.reset();
  log_structural();
}

size_t scheduler_cache::place(const pod_info_ptr& p) {
  long at = -1;
  auto n = mutable_copy(p->node_name, at);
  if (!n) {
    n = std::make_shared<node_info>();
    n->name = p->node_name;
  }
  n->add_pod(p);
  refresh_volume_usage(*n);
  size_t slot = n->pods.size() - 1;
  auto* node = n.get();
  if (put_node(std::move(n), at)) topology_.pod_changed(snap_.mutable_topology(), *node, *p, 1);
  log_pod(true, p);
  return slot;
}

void scheduler_cache::remove_at(node_info& n, size_t at) {
  n.remove_pod_at(at);
  // On a node of one chunk or less a stale slot costs a scan of at most 64 pointers, less than
  // the lookup that would keep the moved pod's slot right.
  if (at >= n.pods.size() || n.pods.size() <= pod_list::chunk_size) return;
  const pod_info_ptr& moved = n.pods[at];
  auto it = pods_.find(moved->uid);
  if (it != pods_.end() && it->second.pod.get() == moved.get()) it->second.slot = at;
}

void scheduler_cache::unplace(const pod_info_ptr& p, size_t slot) {
  long at = -1;
  auto n = mutable_copy(p->node_name, at);
  if (!n) return;
  long pos = n->position_of(p, slot);
  if (pos < 0) return;
  remove_at(*n, static_cast<size_t>(pos));
  refresh_volume_usage(*n);
  auto* node = n.get();
  if (put_node(std::move(n), at)) topology_.pod_changed(snap_.mutable_topology(), *node, *p, -1);
  log_pod(false, p);
}

size_t scheduler_cache::replace(const pod_info_ptr& old_p, size_t slot, const pod_info_ptr& new_p) {
  long at = -1;
  auto n = old_p->node_name == new_p->node_name ? mutable_copy(new_p->node_name, at) : nullptr;
  if (!n) {
    unplace(old_p, slot);
    return place(new_p);
  }
  long pos = n->position_of(old_p, slot);
  bool removed = pos >= 0;
  if (removed) remove_at(*n, static_cast<size_t>(pos));
  n->add_pod(new_p);
  refresh_volume_usage(*n);
  size_t new_slot = n->pods.size() - 1;
  auto* node = n.get();
  if (put_node(std::move(n), at)) {
    if (removed) topology_.pod_changed(snap_.mutable_topology(), *node, *old_p, -1);
    topology_.pod_changed(snap_.mutable_topology(), *node, *new_p, 1);
  }
  if (removed) log_pod(false, old_p);
  log_pod(true, new_p);
  return new_slot;
}

void scheduler_cache::log_pod(bool added, const pod_info_ptr& p) {
  changes_.push_back({generation_, added, p});
  if (changes_.size() > change_log_limit) {
    changes_floor_ = changes_.front().generation;
    changes_.pop_front();
  }
}

bool scheduler_cache::pod_changes_since(uint64_t since, std::vector<const pod_change*>& out) const {
  out.clear();
  if (since < changes_floor_ || structural_ > since) return false;
  // Changes are in generation order: walk back to the first one after `since`.
  auto it = changes_.end();
  while (it != changes_.begin() && std::prev(it)->generation > since) --it;
  for (; it != changes_.end(); ++it) out.push_back(&*it);
  return true;
}

void scheduler_cache::drop_pod(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  unplace(it->second.pod, it->second.slot);
  pods_.erase(it);
}

status_or_error scheduler_cache::add_pod(const pod_info_ptr& p) {
  if (p->node_name.empty()) return fail("pod " + p->key() + " has no node, so it can't be added to the cache");
  track_constraints(*p);
  auto it = pods_.find(p->uid);
  if (it == pods_.end()) {
    // Never assumed, or assumed and expired: add it.
    size_t slot = place(p);
    pod_state st{p};
    st.slot = slot;
    pods_.emplace(p->uid, std::move(st));
    return ok_t{};
  }
  if (!it->second.assumed) return fail("pod " + p->key() + " was already in added state");
  if (same_placement(*it->second.pod, *p)) {
    // The binding seen back, with nothing any reader of the node looks at changed: the assumed
    // object stays placed and is now the added pod. Replacing it copied the node and its snapshot
    // chunk for every pod (one of three node changes per scheduled pod).
    pod_state st{it->second.pod};
    st.slot = it->second.slot;
    it->second = std::move(st);
    return ok_t{};
  }
  // Confirmation: the cluster's version replaces the assumed one (possibly on another node).
  size_t slot = replace(it->second.pod, it->second.slot, p);
  it->second = pod_state{p};
  it->second.slot = slot;
  return ok_t{};
}

status_or_error scheduler_cache::update_pod(const pod_info_ptr& old_p, const pod_info_ptr& new_p) {
  auto it = pods_.find(old_p->uid);
  if (it == pods_.end() || it->second.assumed)
    return fail("pod " + old_p->key() + " is not added to scheduler cache, so cannot be updated");
  if (it->second.pod->node_name != old_p->node_name)
    return fail("pod " + old_p->key() + " updated on a different node than previously added to");
  if (new_p->node_name.empty()) {
    unplace(it->second.pod, it->second.slot);
    pods_.erase(it);
    return ok_t{};
  }
  size_t slot = replace(it->second.pod, it->second.slot, new_p);
  it->second = pod_state{new_p};
  it->second.slot = slot;
  return ok_t{};
}

status_or_error scheduler_cache::remove_pod(const pod_info_ptr& p) {
  auto it = pods_.find(p->uid);
  if (it == pods_.end()) return fail("pod " + p->key() + " is not found in scheduler cache, so cannot be removed from it");
  // An empty node name happens when a Delete was missed and the last known state is replayed.
  if (!p->node_name.empty() && it->second.pod->node_name != p->node_name)
    return fail("pod " + p->key() + " was added to node " + it->second.pod->node_name + ", not " + p->node_name);
  drop_pod(p->uid);
  return ok_t{};
}

status_or_error scheduler_cache::assume_pod(const pod_info_ptr& p, const std::string& node) {
  if (pods_.count(p->uid)) return fail("pod " + p->key() + " is in the cache, so can't be assumed");
  track_constraints(*p);
  auto bound = with_node_name(*p, node);
  set_nomination(p->uid, nullptr, "");  // kube's assume deletes the nominated pod, if any
  pod_state st{bound};
  st.slot = place(bound);
  st.assumed = true;
  pods_.emplace(p->uid, std::move(st));
  return ok_t{};
}

void scheduler_cache::finish_binding(const std::string& uid, clock::time_point now) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || !it->second.assumed) return;
  it->second.binding_finished = true;
  it->second.deadline = now + ttl_;
}

status_or_error scheduler_cache::forget_pod(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return fail("pod " + uid + " is not in the cache, so it can't be forgotten");
  if (!it->second.assumed) return fail("pod " + it->second.pod->key() + " wasn't assumed so cannot be forgotten");
  drop_pod(uid);
  restore_volumes(uid);
  return ok_t{};
}

std::vector<std::string> scheduler_cache::cleanup_expired(clock::time_point now) {
  std::vector<std::string> expired;
  if (ttl_.count() == 0) return expired;
  for (auto& [uid, st] : pods_)
    if (st.assumed && st.binding_finished && now > st.deadline) expired.push_back(uid);
  for (auto& uid : expired) drop_pod(uid);
  return expired;
}

bool scheduler_cache::is_assumed(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it != pods_.end() && it->second.assumed;
}

size_t scheduler_cache::assumed_count() const {
  size_t n = 0;
  for (auto& kv : pods_) n += kv.second.assumed ? 1 : 0;
  return n;
}

void scheduler_cache::set_objects(cluster_objects_ptr objects) {
  snap_ = snap_.with_objects(std::move(objects), ++generation_);
  published_.reset();
  log_structural();
}

void scheduler_cache::publish_volume(const volume_change& ch) {
  auto objs = std::make_shared<cluster_objects>(snap_.objects());
  apply_volume_change(objs->volumes, ch);
  set_objects(std::move(objs));
  storage_changed_ = generation_;
  // The nodes whose volume usage read this object, resolved again against the new objects: a
  // CSINode's node, an attachment's node, the readers of a claim, volume or class.
  std::vector<std::string> nodes;
  if (ch.kind == volume_change::csi_node) {
    nodes.push_back((ch.new_csi_node ? ch.new_csi_node : ch.old_csi_node)->name);
  } else if (ch.kind == volume_change::volume_attachment) {
    if (ch.old_attachment) nodes.push_back(ch.old_attachment->node_name);
    if (ch.new_attachment && (!ch.old_attachment || ch.old_attachment->node_name != ch.new_attachment->node_name))
      nodes.push_back(ch.new_attachment->node_name);
  }
  if (auto readers = volume_readers_.find(ch.key); readers != volume_readers_.end())
    nodes.insert(nodes.end(), readers->second.begin(), readers->second.end());  // refresh edits the index
  for (const auto& name : nodes) {
    long at = -1;
    auto n = mutable_copy(name, at);
    if (!n) continue;
    n->volume_usage_current = false;
    refresh_volume_usage(*n);
    put_node(std::move(n), at);
  }
}

void scheduler_cache::refresh_volume_usage(node_info& n) {
  if (n.volume_usage_current) return;
  n.volume_usage_current = true;
  auto before = std::move(n.volume_usage);
  n.volume_usage = volume_usage_of(n.name, n.pods, snap_.objects().volumes);
  n.has_csi_node = n.volume_usage && n.volume_usage->csi_node;
  static const storage_keys none;
  reindex_volume_usage(n.name, before ? before->read : none, n.volume_usage ? n.volume_usage->read : none);
}

void scheduler_cache::reindex_volume_usage(const std::string& node, const storage_keys& old_keys,
                                           const storage_keys& new_keys) {
  // Both lists are sorted: move the node's entries by their difference.
  auto o = old_keys.begin(), k = new_keys.begin();
  while (o != old_keys.end() || k != new_keys.end()) {
    if (k == new_keys.end() || (o != old_keys.end() && *o < *k)) {
      auto it = volume_readers_.find(*o++);
      if (it == volume_readers_.end()) continue;
      auto& names = it->second;
      names.erase(std::remove(names.begin(), names.end(), node), names.end());
      if (names.empty()) volume_readers_.erase(it);
    } else if (o == old_keys.end() || *k < *o) {
      volume_readers_[*k++].push_back(node);
    } else {
      ++o, ++k;
    }
  }
}

void scheduler_cache::apply_volume(const volume_change& ch) {
  // The cluster's version supersedes an assumption: forgetting that pod must not put back an
  // older version over it.
  if (auto it = storage_owner_.find(ch.key); it != storage_owner_.end()) {
    auto& mine = assumed_storage_[it->second];
    mine.erase(std::remove_if(mine.begin(), mine.end(), [&](const volume_change& a) { return a.key == ch.key; }),
               mine.end());
    if (mine.empty()) assumed_storage_.erase(it->second);
    storage_owner_.erase(it);
  }
  publish_volume(ch);
}

void scheduler_cache::assume_volumes(const std::string& uid, const std::vector<volume_change>& assumed) {
  for (const auto& a : assumed) {
    // What the cache holds now: the cluster's version, to put back if the pod is forgotten, unless
    // another pod's assumption holds it (then that one's original stays the one to restore).
    volume_change now = a;
    const auto& v = snap_.objects().volumes;
    now.old_pv = a.new_pv ? v.pvs.get(a.new_pv->name) : nullptr;
    now.old_pvc = a.new_pvc ? v.pvcs.get(a.new_pvc->key()) : nullptr;
    publish_volume(now);
    auto [owner, fresh] = storage_owner_.try_emplace(a.key, uid);
    if (!fresh) {
      // Re-assumed (a second pod's cycle chose it on an old snapshot): the first owner's original
      // is the cluster's version; it moves to this pod.
      auto& theirs = assumed_storage_[owner->second];
      for (auto it = theirs.begin(); it != theirs.end(); ++it)
        if (it->key == a.key) {
          assumed_storage_[uid].push_back(std::move(*it));
          theirs.erase(it);
          break;
        }
      if (theirs.empty()) assumed_storage_.erase(owner->second);
      owner->second = uid;
      continue;
    }
    // Kept as the change that puts the original back: old = the assumed object, new = original.
    volume_change undo = now;
    std::swap(undo.old_pv, undo.new_pv);
    std::swap(undo.old_pvc, undo.new_pvc);
    assumed_storage_[uid].push_back(std::move(undo));
  }
}

void scheduler_cache::restore_volumes(const std::string& uid) {
  auto it = assumed_storage_.find(uid);
  if (it == assumed_storage_.end()) return;
  auto undo = std::move(it->second);
  assumed_storage_.erase(it);
  for (auto& u : undo) {
    storage_owner_.erase(u.key);
    publish_volume(u);
  }
}

void scheduler_cache::update_nominated(const pod_info_ptr& old_p, const pod_info_ptr& new_p) {
  if (!new_p) {
    if (!old_p) return;
    unbound_.erase(old_p->uid);
    return set_nomination(old_p->uid, nullptr, "");
  }
  const std::string& uid = new_p->uid;
  if (!new_p->node_name.empty()) {
    unbound_.erase(uid);
    return set_nomination(uid, nullptr, "");
  }
  unbound_.insert(uid);
  const std::string* node = &new_p->nominated_node_name;
  if (node->empty() && old_p && old_p->nominated_node_name.empty()) {
    // The update may predate the write of a nomination made in memory: keep that one.
    auto it = nominated_node_.find(uid);
    if (it == nominated_node_.end()) return;
    node = &it->second;
  }
  set_nomination(uid, new_p, std::string(*node));
}

bool scheduler_cache::nominate(const pod_info_ptr& p, const std::string& node) {
  if (!unbound_.count(p->uid) || pods_.count(p->uid)) return false;
  set_nomination(p->uid, p, node);
  return true;
}

void scheduler_cache::set_nomination(const std::string& uid, const pod_info_ptr& p, const std::string& node) {
  auto at = nominated_node_.find(uid);
  if (at == nominated_node_.end() && node.empty()) return;
  // Copy-on-write: a changed nominated map is a new map; snapshots already handed out keep theirs.
  static const std::string none;
  renominate(nominated_, uid, p, node, at != nominated_node_.end() ? &at->second : &none);
  if (node.empty())
    nominated_node_.erase(uid);
  else
    nominated_node_[uid] = node;
  snap_ = snap_.with_nominated(std::make_shared<const snapshot::nominated_map>(nominated_), ++generation_);
  published_.reset();
}

snapshot_ptr scheduler_cache::current() {
  if (!published_) published_ = std::make_shared<const snapshot>(snap_);
  return published_;
}

}  // namespace kas

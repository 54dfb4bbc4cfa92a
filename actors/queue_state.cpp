#include "actors/queue_state.hpp"

#include <algorithm>
#include <unordered_set>

#include "observability/kube_metrics.hpp"

namespace kas {

const char* to_string(queue_location l) {
  switch (l) {
    case queue_location::active: return "active";
    case queue_location::backoff: return "backoff";
    case queue_location::unschedulable: return "unschedulable";
    case queue_location::gated: return "gated";
    case queue_location::in_flight: return "in-flight";
    case queue_location::none: break;
  }
  return "";
}

queue_state::queue_state(std::vector<fw::framework_ptr> frameworks, queue_options opts)
  : frameworks_(std::move(frameworks)),
    opts_(opts),
    active_(active_less{this}),
    backoff_(backoff_less{this}),
    error_backoff_(backoff_less{this}) {
  for (auto& f : frameworks_) by_scheduler_.emplace(f->scheduler_name(), f.get());
}

bool queue_state::active_less::operator()(const active_entry& a, const active_entry& b) const {
  const auto& fwk = *q->frameworks_.front();
  if (fwk.queue_less(*a.first, *b.first)) return true;
  if (fwk.queue_less(*b.first, *a.first)) return false;
  return a.second < b.second;
}

bool queue_state::backoff_less::operator()(const backoff_entry& a, const backoff_entry& b) const {
  if (a.expiry != b.expiry) return a.expiry < b.expiry;
  return active_less{q}(a.pod, b.pod);
}

queue_state::clock::time_point queue_state::align_to_window(clock::time_point t) const {
  if (!opts_.pop_from_backoff) return t;
  auto since = t.time_since_epoch();
  return clock::time_point(since - since % std::chrono::duration_cast<clock::duration>(ordering_window));
}

bool queue_state::backing_off(clock::time_point expiry, clock::time_point now) const {
  // kube's isPodBackingoff: with windows, a pod whose expiry lies in the current window still waits.
  return opts_.pop_from_backoff ? expiry >= align_to_window(now) : expiry > now;
}

void queue_state::push_backoff(qpod p, clock::time_point expiry) {
  location_[p->pod->uid] = queue_location::backoff;
  auto& heap = failed_with_error(*p) ? error_backoff_ : backoff_;
  insert_backoff(heap, backoff_entry{expiry, {std::move(p), insertion_seq_++}});
}

void queue_state::insert_backoff(backoff_set& heap, backoff_entry e) {
  const pod_info& pod = *e.pod.first->pod;
  count_member(backoff_members_, pod, +1);
  std::string uid = pod.uid;
  backoff_index_[std::move(uid)] = {&heap, heap.insert(std::move(e)).first};
}

queue_state::backoff_entry queue_state::erase_backoff(backoff_set& heap, backoff_set::iterator it) {
  backoff_entry e = *it;
  heap.erase(it);
  // The entry's own pod object: the one insert_backoff counted (an update replaces it only through
  // an erase and an insert).
  const pod_info& pod = *e.pod.first->pod;
  count_member(backoff_members_, pod, -1);
  backoff_index_.erase(pod.uid);
  return e;
}

std::optional<queue_state::backoff_entry> queue_state::erase_backoff(const std::string& uid) {
  auto at = backoff_index_.find(uid);
  if (at == backoff_index_.end()) return std::nullopt;
  auto [heap, it] = at->second;
  return erase_backoff(*heap, it);
}

queue_state::backoff_set* queue_state::first_backoff() {
  if (backoff_.empty()) return error_backoff_.empty() ? nullptr : &error_backoff_;
  if (error_backoff_.empty()) return &backoff_;
  return backoff_less{this}(*error_backoff_.begin(), *backoff_.begin()) ? &error_backoff_ : &backoff_;
}

const fw::framework* queue_state::framework_for(const pod_info& p) const {
  auto it = by_scheduler_.find(p.scheduler_name);
  return it == by_scheduler_.end() ? nullptr : it->second;
}

queue_state::qpod queue_state::stamp_group(qpod p) const {
  if (!p->pod->in_group()) {
    if (!p->group) return p;
    // It left its group (an update dropped the label): it sorts as a pod of no group again.
    auto copy = std::make_shared<fw::queued_pod_info>(*p);
    copy->group = nullptr;
    copy->group_order_ns = 0;
    return copy;
  }
  pod_group_ptr g = groups_.group_ptr(p->pod->group_key);
  int64_t order = g && g->creation_ns > 0 ? g->creation_ns - wall_minus_steady_ns_ : p->timestamp_ns;
  if (g == p->group && order == p->group_order_ns) return p;
  auto copy = std::make_shared<fw::queued_pod_info>(*p);
  copy->group = std::move(g);
  copy->group_order_ns = order;
  return copy;
}

void queue_state::push_active(qpod p, std::string_view event) {
  p = stamp_group(std::move(p));
  active_entry e{p, insertion_seq_++};
  active_index_[p->pod->uid] = e;
  count_active(*p->pod, +1);
  active_.insert(std::move(e));
  location_[p->pod->uid] = queue_location::active;
  incoming(queue_location::active, event);
}

void queue_state::add(const pod_info_ptr& p, clock::time_point now) {
  auto* fwk = framework_for(*p);
  if (!fwk || contains(p->uid)) return;
  auto q = std::make_shared<fw::queued_pod_info>();
  q->pod = p;
  q->timestamp_ns = to_ns(now);
  auto s = fwk->run_pre_enqueue(*p, groups_, obs::sample_plugin_metrics(sample_rng_));
  if (!s.is_success()) {
    q->gated_by = s.plugin();
    gated_[p->uid] = q;
    location_[p->uid] = queue_location::gated;
    incoming(queue_location::unschedulable, "PodAdd");
    return;
  }
  push_active(std::move(q), "PodAdd");
}

void queue_state::update(const pod_info_ptr& old_p, const pod_info_ptr& new_p, clock::time_point now) {
  const std::string& uid = new_p->uid;
  auto loc = where(uid);
  if (loc == queue_location::none) {
    add(new_p, now);
    return;
  }
  // Replace the pod object wherever it is; an update may lift a gate or make it schedulable.
  auto replace = [&](qpod& q) {
    auto copy = std::make_shared<fw::queued_pod_info>(*q);
    copy->pod = new_p;
    q = copy;
  };
  if (loc == queue_location::gated) {
    auto q = gated_[uid];
    replace(q);
    auto* fwk = framework_for(*new_p);
    if (fwk && fwk->run_pre_enqueue(*new_p, groups_, obs::sample_plugin_metrics(sample_rng_)).is_success()) {
      gated_.erase(uid);
      q->gated_by = {};
      push_active(q, "PodUpdate");
    } else {
      gated_[uid] = q;
    }
  } else if (loc == queue_location::active) {
    // Out and back in, counted again and restamped: the update may change the pod's priority, or
    // its group (the pod-group label).
    auto e = active_index_[uid];
    active_.erase(e);
    count_active(*e.first->pod, -1);
    replace(e.first);
    e.first = stamp_group(std::move(e.first));
    count_active(*e.first->pod, +1);
    active_index_[uid] = e;
    active_.insert(e);
  } else if (loc == queue_location::unschedulable) {
    auto q = unschedulable_[uid];
    replace(q);
    unschedulable_.erase(uid);
    // kube: an update of an unschedulable pod is an UnscheduledPodUpdate event for it.
    fw::event_objects objs;
    objs.old_pod = old_p.get();
    objs.new_pod = new_p.get();
    fw::cluster_event ev{fw::event_resource::unscheduled_pod, fw::act_update, "UnscheduledPodUpdate"};
    if (pod_wants_event(*q, ev, objs)) {
      move_to_active_or_backoff(q, now, ev.label);
    } else {
      unschedulable_[uid] = q;
    }
  } else if (loc == queue_location::backoff) {
    // Its priority may change, and backoffQ is ordered by it: out and back in (same heap: the
    // update leaves the failure that chose it as it was), counted again: its group may change.
    if (auto e = erase_backoff(uid)) {
      replace(e->pod.first);
      auto& heap = failed_with_error(*e->pod.first) ? error_backoff_ : backoff_;
      insert_backoff(heap, std::move(*e));
    }
  } else if (loc == queue_location::in_flight) {
    replace(in_flight_[uid].pod);
  }
}

void queue_state::remove(const std::string& uid) {
  auto loc = where(uid);
  if (loc == queue_location::active) {
    count_active(*active_index_[uid].first->pod, -1);
    active_.erase(active_index_[uid]);
    active_index_.erase(uid);
  } else if (loc == queue_location::gated) {
    gated_.erase(uid);
  } else if (loc == queue_location::unschedulable) {
    unschedulable_.erase(uid);
  } else if (loc == queue_location::backoff) {
    erase_backoff(uid);
  } else if (loc == queue_location::in_flight) {
    // The cycle's owner reports done/failure later; forget the pod so it is not requeued. A gang
    // member's cycle may still reach the permit coordinator: its gang is not idle before it reports.
    if (auto& g = in_flight_[uid].pod->gang) deleted_in_flight_[uid] = g->key;
    left_flight(in_flight_[uid]);
    in_flight_.erase(uid);
    prune_event_log();
  }
  location_.erase(uid);
}

std::vector<std::shared_ptr<const fw::queued_pod_info>> queue_state::pop(size_t n, clock::time_point now) {
  std::vector<std::shared_ptr<const fw::queued_pod_info>> out;
  for (auto it = active_.begin(); out.size() < n && it != active_.end();) {
    if (!may_pop(*it->first, true)) {
      ++it;  // another gang's member: it waits for that gang's turn
      continue;
    }
    auto e = *it;
    it = active_.erase(it);
    active_index_.erase(e.first->pod->uid);
    count_active(*e.first->pod, -1);
    out.push_back(mark_in_flight(e.first, now));
  }
  while (out.size() < n)
    if (auto q = take_from_backoff()) out.push_back(mark_in_flight(q, now));
    else break;
  return out;
}

queue_state::qpod queue_state::mark_in_flight(const qpod& q, clock::time_point now) {
  auto copy = std::make_shared<fw::queued_pod_info>(*q);
  copy->attempts++;
  if (copy->initial_attempt_ns == 0) copy->initial_attempt_ns = to_ns(now);
  ++cycle_;
  if (const std::string* key = gang_of(*copy->pod)) {
    // may_pop gave this gang the turn.
    auto t = std::make_shared<fw::gang_ticket>();
    t->group = groups_.group_ptr(*key);
    t->key = *key;
    t->round = turn_.round;
    t->members = groups_.members(*key);
    t->bound = groups_.bound(*key);
    copy->gang = std::move(t);
    ++turn_.in_flight;
    ++flying_members_[*key];
    ++unreported_[*key];
  } else {
    copy->gang = nullptr;
  }
  in_flight_[copy->pod->uid] = in_flight_entry{copy, cycle_, event_seq_};
  location_[copy->pod->uid] = queue_location::in_flight;
  return copy;
}

// kube's popBackoff: the first pod of podBackoffQ (podErrorBackoffQ's pods wait out their backoff).
queue_state::qpod queue_state::take_from_backoff() {
  if (!opts_.pop_from_backoff || backoff_.empty()) return nullptr;
  if (!may_pop(*backoff_.begin()->pod.first, true)) return nullptr;
  return erase_backoff(backoff_, backoff_.begin()).pod.first;
}

bool queue_state::can_pop() const {
  auto* self = const_cast<queue_state*>(this);
  for (auto& e : active_)
    if (self->may_pop(*e.first, false)) return true;
  return opts_.pop_from_backoff && !backoff_.empty() && self->may_pop(*backoff_.begin()->pod.first, false);
}

void queue_state::done(const std::string& uid) {
  cycle_reported(uid);
  auto it = in_flight_.find(uid);
  if (it != in_flight_.end()) left_flight(it->second);
  if (in_flight_.erase(uid)) {
    location_.erase(uid);
    prune_event_log();
  }
}

void queue_state::add_unschedulable(const fw::queued_pod_info& info, uint64_t cycle, bool is_error,
                                    clock::time_point now) {
  const std::string& uid = info.pod->uid;
  cycle_reported(uid);
  auto it = in_flight_.find(uid);
  if (it == in_flight_.end()) return;  // deleted while in flight
  (void)cycle;
  uint64_t since = it->second.event_seq;
  // The last member of a gang's turn failing ends the turn unadmitted: the gang's members still
  // in activeQ cannot make it whole either, and go back with this one (below).
  std::string failed_gang;
  if (auto& t = it->second.pod->gang; t && turn_.key == t->key && turn_.round == t->round && turn_.in_flight == 1)
    failed_gang = t->key;
  left_flight(it->second);
  in_flight_.erase(it);
  auto q = std::make_shared<fw::queued_pod_info>(info);
  q->timestamp_ns = to_ns(now);
  bool moved = is_error;
  for (auto& e : events_) {
    if (moved) break;
    if (e.seq > since && (e.except_group.empty() || e.except_group != q->pod->group_key) &&
        pod_wants_event(*q, e.ev, e.objs))
      moved = true;
  }
  prune_event_log();
  if (moved) {
    push_backoff(q, backoff_expiry(*q));
    incoming(queue_location::backoff, "ScheduleAttemptFailure");
  } else {
    unschedulable_[uid] = q;
    location_[uid] = queue_location::unschedulable;
    incoming(queue_location::unschedulable, "ScheduleAttemptFailure");
  }
  if (!failed_gang.empty() && !moved) park_gang(failed_gang, *q);
}

void queue_state::park_stuck_gangs() {
  std::vector<std::string> stuck;
  for (auto& [key, n] : active_members_) {
    const pod_group* g = groups_.group(key);
    if (!g || !g->gang || key == turn_.key) continue;
    auto flying = flying_members_.find(key);
    size_t ready = n + (flying == flying_members_.end() ? 0 : flying->second) + groups_.bound(key)->size();
    // A gang whose missing members are backing off is not stuck: they return to activeQ when their
    // backoff ends (10 s at most) and the gang's turn starts then. (A member that preempted for its
    // gang backs off while the others wait in activeQ.) Counting them as ready for a turn instead
    // would pop them before their backoff ends, and gangs competing for one room would then retry
    // each other without pause.
    if (ready < static_cast<size_t>(g->min_count) && ready + backoff_members(key) < static_cast<size_t>(g->min_count))
      stuck.push_back(key);
  }
  for (auto& key : stuck) park_active_members(key, nullptr);
}

void queue_state::park_gang(const std::string& key, const fw::queued_pod_info& failed) {
  for (auto& q : park_active_members(key, &failed)) parked_.push_back(q);
}

std::vector<queue_state::qpod> queue_state::park_active_members(const std::string& key,
                                                                const fw::queued_pod_info* failed) {
  std::vector<active_entry> members;
  for (auto& e : active_)
    if (e.first->pod->group_key == key) members.push_back(e);
  std::vector<qpod> out;
  for (auto& e : members) {
    active_.erase(e);
    active_index_.erase(e.first->pod->uid);
    count_active(*e.first->pod, -1);
    auto q = e.first;
    if (failed) {
      // Rejected as the failed member was, so the gang comes back on the same events.
      q = std::make_shared<fw::queued_pod_info>(*e.first);
      q->unschedulable_plugins = failed->unschedulable_plugins;
      q->pending_plugins = failed->pending_plugins;
    }
    unschedulable_[q->pod->uid] = q;
    location_[q->pod->uid] = queue_location::unschedulable;
    incoming(queue_location::unschedulable, "ScheduleAttemptFailure");
    out.push_back(std::move(q));
  }
  return out;
}

// --- gangs ----------------------------------------------------------------------------------------

const std::string* queue_state::gang_of(const pod_info& p) const {
  if (!p.in_group()) return nullptr;
  const pod_group* g = groups_.group(p.group_key);
  return g && g->gang ? &p.group_key : nullptr;
}

bool queue_state::may_pop(const fw::queued_pod_info& q, bool start_turn) {
  const std::string* key = gang_of(*q.pod);
  if (!key) return true;
  if (!turn_.key.empty()) return turn_.key == *key;
  // A turn starts only when the gang can reach its quorum from what is poppable, in flight or bound.
  auto count = [](const std::unordered_map<std::string, size_t>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? size_t{0} : it->second;
  };
  size_t ready = count(active_members_, *key) + count(flying_members_, *key) + groups_.bound(*key)->size();
  if (ready < static_cast<size_t>(groups_.group(*key)->min_count)) return false;
  if (start_turn) {
    turn_.key = *key;
    turn_.round = ++last_round_;
    turn_.in_flight = 0;
  }
  return true;
}

void queue_state::left_flight(const in_flight_entry& e) {
  if (!e.pod->gang) return;
  const auto& t = *e.pod->gang;
  auto f = flying_members_.find(t.key);
  if (f != flying_members_.end() && --f->second == 0) flying_members_.erase(f);
  if (turn_.key == t.key && turn_.round == t.round && turn_.in_flight > 0 && --turn_.in_flight == 0) turn_ = {};
}

void queue_state::cycle_reported(const std::string& uid) {
  std::string key;
  if (auto it = in_flight_.find(uid); it != in_flight_.end()) {
    if (!it->second.pod->gang) return;
    key = it->second.pod->gang->key;
  } else if (auto d = deleted_in_flight_.find(uid); d != deleted_in_flight_.end()) {
    key = std::move(d->second);
    deleted_in_flight_.erase(d);
  } else {
    return;  // not popped, or already reported
  }
  auto n = unreported_.find(key);
  if (n == unreported_.end() || --n->second > 0) return;
  unreported_.erase(n);
  idle_gangs_.push_back(std::move(key));
}

void queue_state::gang_admitted(const std::string& key, uint64_t round) {
  if (turn_.key == key && turn_.round == round) turn_ = {};
}

void queue_state::count_member(member_counts& m, const pod_info& p, int delta) {
  if (!p.in_group()) return;
  if (delta > 0) {
    ++m[p.group_key];
    return;
  }
  auto it = m.find(p.group_key);
  if (it != m.end() && --it->second == 0) m.erase(it);
}

std::string queue_state::audit_member_counts() const {
  std::string out;
  auto compare = [&](const char* what, const member_counts& kept, const member_counts& recounted) {
    for (auto& [key, n] : recounted)
      if (count_of(kept, key) != n)
        out += std::string(what) + " " + key + ": kept " + std::to_string(count_of(kept, key)) + ", recounted " +
               std::to_string(n) + "\n";
    for (auto& [key, n] : kept)
      if (!recounted.count(key))
        out += std::string(what) + " " + key + ": kept " + std::to_string(n) + ", recounted 0\n";
  };
  member_counts active, backoff, flying, unreported;
  for (auto& e : active_) count_member(active, *e.first->pod, +1);
  size_t indexed = 0;
  for (const backoff_set* heap : {&backoff_, &error_backoff_})
    for (auto it = heap->begin(); it != heap->end(); ++it) {
      count_member(backoff, *it->pod.first->pod, +1);
      auto at = backoff_index_.find(it->pod.first->pod->uid);
      if (at != backoff_index_.end() && at->second.first == heap && at->second.second == it) ++indexed;
    }
  for (auto& [uid, e] : in_flight_)
    if (e.pod->gang) ++flying[e.pod->gang->key];
  unreported = flying;
  for (auto& [uid, key] : deleted_in_flight_) ++unreported[key];
  compare("active", active_members_, active);
  compare("backoff", backoff_members_, backoff);
  compare("in flight", flying_members_, flying);
  compare("unreported", unreported_, unreported);
  if (indexed != backoff_size() || backoff_index_.size() != backoff_size())
    out += "backoff index: " + std::to_string(backoff_index_.size()) + " entries, " + std::to_string(indexed) +
           " of the heaps' " + std::to_string(backoff_size()) + " pods indexed where they are\n";
  return out;
}

void queue_state::set_objects(cluster_objects_ptr objects, clock::time_point now) {
  auto changed = groups_.set_objects(std::move(objects));
  if (changed.empty()) return;
  // Members already in activeQ take their group's new priority and creation time (the set's
  // order must not change under it: out, restamped, back in).
  std::unordered_set<std::string> keys;
  for (auto& k : changed)
    if (active_members_.count(k)) keys.insert(k);
  if (!keys.empty()) {
    std::vector<active_entry> stale;
    for (auto& e : active_)
      if (e.first->pod->in_group() && keys.count(e.first->pod->group_key)) stale.push_back(e);
    for (auto& e : stale) {
      qpod fresh = stamp_group(e.first);
      if (fresh == e.first) continue;
      active_.erase(e);
      e.first = fresh;
      active_index_[fresh->pod->uid] = e;
      active_.insert(e);
    }
  }
  for (auto& key : changed) recheck_gated(key, now);
}

void queue_state::track_group_member(const pod_info* old_p, const pod_info* new_p, clock::time_point now) {
  auto grown = groups_.track(old_p, new_p);
  if (grown.empty()) return;
  const pod_group* g = groups_.group(grown);
  if (g && groups_.members(grown) >= static_cast<size_t>(g->min_count)) recheck_gated(grown, now);
}

void queue_state::recheck_gated(const std::string& group_key, clock::time_point) {
  std::vector<qpod> ungated;
  for (auto it = gated_.begin(); it != gated_.end();) {
    const auto& p = *it->second->pod;
    auto* fwk = p.group_key == group_key ? framework_for(p) : nullptr;
    if (fwk && fwk->run_pre_enqueue(p, groups_, obs::sample_plugin_metrics(sample_rng_)).is_success()) {
      ungated.push_back(it->second);
      it = gated_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& q : ungated) {
    q->gated_by = {};
    push_active(q, "PodGroupReady");
  }
}

bool queue_state::pod_wants_event(const fw::queued_pod_info& p, const fw::cluster_event& ev,
                                  const fw::event_objects& objs) const {
  auto* fwk = framework_for(*p.pod);
  if (!fwk) return false;
  // A pod rejected by no plugin (an Error) is retried on any event.
  if (p.unschedulable_plugins.empty() && p.pending_plugins.empty()) return true;
  for (auto& [plugin, reg] : fwk->queueing_hints()) {
    bool rejected_by = p.unschedulable_plugins.count(plugin) || p.pending_plugins.count(plugin);
    if (!rejected_by || !reg.event.matches(ev)) continue;
    if (!reg.hint || reg.hint(*p.pod, objs) == fw::queueing_hint::queue) return true;
  }
  return false;
}

void queue_state::on_event(const fw::cluster_event& ev, const fw::event_objects& objs,
                           std::shared_ptr<const void> keepalive, clock::time_point now,
                           std::string_view except_uid, std::string_view except_group) {
  if (!in_flight_.empty())
    events_.push_back(logged_event{++event_seq_, ev, objs, std::move(keepalive), std::string(except_group)});
  std::vector<qpod> moved;
  for (auto it = unschedulable_.begin(); it != unschedulable_.end();) {
    if (it->first != except_uid && (except_group.empty() || it->second->pod->group_key != except_group) &&
        pod_wants_event(*it->second, ev, objs)) {
      moved.push_back(it->second);
      it = unschedulable_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& q : moved) move_to_active_or_backoff(q, now, ev.label);
  // Gated pods: re-run PreEnqueue when the gating plugin registered for this event.
  std::vector<qpod> ungated;
  for (auto it = gated_.begin(); it != gated_.end();) {
    auto* fwk = framework_for(*it->second->pod);
    bool relevant = false;
    for (auto& [plugin, reg] : fwk->queueing_hints())
      if (plugin == it->second->gated_by && reg.event.matches(ev) &&
          (!reg.hint || reg.hint(*it->second->pod, objs) == fw::queueing_hint::queue))
        relevant = true;
    if (relevant && fwk->run_pre_enqueue(*it->second->pod, groups_, obs::sample_plugin_metrics(sample_rng_)).is_success()) {
      ungated.push_back(it->second);
      it = gated_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& q : ungated) push_active(q, ev.label);
}

std::chrono::nanoseconds queue_state::backoff_duration(int attempts) const {
  auto d = opts_.initial_backoff;
  for (int i = 1; i < attempts; ++i) {
    if (d > opts_.max_backoff - d) return opts_.max_backoff;
    d += d;
  }
  return std::min(d, opts_.max_backoff);
}

queue_state::clock::time_point queue_state::backoff_expiry(const fw::queued_pod_info& p) const {
  return align_to_window(clock::time_point(std::chrono::nanoseconds(p.timestamp_ns)) +
                         backoff_duration(std::max(1, p.attempts)));
}

void queue_state::move_to_active_or_backoff(qpod q, clock::time_point now, std::string_view event) {
  auto expiry = backoff_expiry(*q);
  if (backing_off(expiry, now)) {
    push_backoff(std::move(q), expiry);
    incoming(queue_location::backoff, event);
  } else {
    push_active(q, event);
  }
}

void queue_state::flush(clock::time_point now) {
  for (auto* heap = first_backoff(); heap && !backing_off(heap->begin()->expiry, now); heap = first_backoff())
    push_active(erase_backoff(*heap, heap->begin()).pod.first, "BackoffComplete");
  std::vector<qpod> stale;
  for (auto it = unschedulable_.begin(); it != unschedulable_.end();) {
    auto since = clock::time_point(std::chrono::nanoseconds(it->second->timestamp_ns));
    if (now - since > opts_.max_in_unschedulable) {
      stale.push_back(it->second);
      it = unschedulable_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& q : stale) move_to_active_or_backoff(q, now, "UnschedulableTimeout");
}

void queue_state::flush_backoff_now(int max_attempts) {
  for (auto* heap = first_backoff(); heap; heap = first_backoff()) {
    auto q = erase_backoff(*heap, heap->begin()).pod.first;
    if (q->attempts >= max_attempts) {
      unschedulable_[q->pod->uid] = q;
      location_[q->pod->uid] = queue_location::unschedulable;
      incoming(queue_location::unschedulable, "ScheduleAttemptFailure");
    } else {
      push_active(q, "BackoffComplete");
    }
  }
}

std::optional<queue_state::clock::time_point> queue_state::next_backoff_expiry() const {
  const auto* heap = first_backoff();
  if (!heap) return std::nullopt;
  return heap->begin()->expiry;
}

bool queue_state::contains(const std::string& uid) const { return location_.count(uid) != 0; }

queue_location queue_state::where(const std::string& uid) const {
  auto it = location_.find(uid);
  return it == location_.end() ? queue_location::none : it->second;
}

void queue_state::prune_event_log() {
  if (in_flight_.empty()) {
    events_.clear();
    return;
  }
  uint64_t oldest = UINT64_MAX;
  for (auto& [uid, e] : in_flight_) oldest = std::min(oldest, e.event_seq);
  while (!events_.empty() && events_.front().seq <= oldest) events_.pop_front();
}

}  // namespace kas

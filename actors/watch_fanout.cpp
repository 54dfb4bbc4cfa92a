#include "actors/watch_fanout.hpp"

#include <algorithm>

namespace kas {

watch_fanout::watch_fanout(fanout_options opts, sender send) : opts_(opts), send_(std::move(send)) {
  opts_.window = std::max<size_t>(1, opts_.window);
  opts_.batch = std::max<size_t>(1, opts_.batch);
}

cluster_change_batch_ptr watch_fanout::make_batch(std::vector<cluster_change_ptr> changes) const {
  auto b = std::make_shared<cluster_change_batch>();
  b->changes = std::move(changes);
  b->ack_every = std::max<uint64_t>(1, opts_.window / 4);
  return b;
}

// Sends batches while the watcher has credit.
void watch_fanout::pump(slot& w) {
  while (w.in_flight < opts_.window && !w.pending.empty()) {
    auto b = make_batch(w.pending.take(std::min<uint64_t>(opts_.batch, opts_.window - w.in_flight)));
    w.in_flight += b->changes.size();
    send_(w.handle, std::move(b));
  }
}

bool watch_fanout::add(watcher_actor w, std::vector<cluster_change_ptr> initial) {
  auto addr = w.address();
  if (watchers_.count(addr)) return false;
  auto& s = watchers_.emplace(addr, slot{std::move(w), change_coalescer(opts_.fold_after), 0}).first->second;
  for (auto& ch : initial) s.pending.push(std::move(ch));
  pump(s);
  return true;
}

bool watch_fanout::remove(const caf::actor_addr& addr) { return watchers_.erase(addr) > 0; }

void watch_fanout::credited(const caf::actor_addr& addr, uint64_t n) {
  auto it = watchers_.find(addr);
  if (it == watchers_.end()) return;
  auto& w = it->second;
  w.in_flight -= std::min(n, w.in_flight);
  pump(w);
}

void watch_fanout::route(const std::vector<cluster_change_ptr>& changes) {
  if (changes.empty()) return;
  cluster_change_batch_ptr shared;
  for (auto& [addr, w] : watchers_) {
    // A watcher that keeps up (credit left, nothing waiting) gets the changes as they are, in one
    // batch object shared by every such watcher: nothing to fold them into, nothing to copy.
    if (w.pending.empty() && w.in_flight + changes.size() <= opts_.window && changes.size() <= opts_.batch) {
      if (!shared) shared = make_batch(changes);
      w.in_flight += changes.size();
      send_(w.handle, shared);
      continue;
    }
    for (auto& ch : changes) w.pending.push(ch);
    pump(w);
  }
}

}  // namespace kas

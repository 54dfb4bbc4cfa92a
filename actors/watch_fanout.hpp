#pragma once
// watch_fanout: a cluster source's watchers and the flow control towards each, as plain data. Both
// cluster sources (embedded_cluster, api_cluster) own one; the actor hands it each change in order
// and it decides what each watcher is sent and when.
//
// Credit, counted in changes: at most `window` changes sent and not yet credited per watcher, in
// batches of at most `batch`. A watcher returns credit cumulatively (watch_credit in
// embedded_cluster.hpp). Changes waiting for credit coalesce per object (change_coalescer), so a
// slow watcher receives the latest state of each object, and the source's memory is bounded by the
// number of objects, not by the rate of change.
#include <functional>
#include <unordered_map>
#include <vector>

#include "actors/cluster_store.hpp"
#include "actors/embedded_cluster.hpp"

namespace kas {

struct fanout_options {
  size_t window = 512;       // changes in flight per watcher
  size_t batch = 256;        // changes per batch, at most
  size_t fold_after = 32768;  // waiting changes kept as they are before they fold per object
};

class watch_fanout {
public:
  // `send` delivers one batch to one watcher (the actor's send).
  using sender = std::function<void(const watcher_actor&, cluster_change_batch_ptr)>;
  watch_fanout(fanout_options opts, sender send);

  // A new watcher; `initial` (the current state, then `synced`) goes first. False if it already
  // watches.
  bool add(watcher_actor w, std::vector<cluster_change_ptr> initial);
  // The watcher at `addr` went down: it gets nothing more. False if it was not watching.
  bool remove(const caf::actor_addr& addr);
  // The watcher at `addr` applied n more changes.
  void credited(const caf::actor_addr& addr, uint64_t n);
  // Changes, in order, for every watcher.
  void route(const std::vector<cluster_change_ptr>& changes);
  size_t size() const { return watchers_.size(); }

private:
  struct slot {
    watcher_actor handle;
    change_coalescer pending;
    uint64_t in_flight = 0;
  };
  cluster_change_batch_ptr make_batch(std::vector<cluster_change_ptr> changes) const;
  void pump(slot& w);

  fanout_options opts_;
  sender send_;
  // By address: a credit message names its watcher by its sender.
  std::unordered_map<caf::actor_addr, slot> watchers_;
};

}  // namespace kas

#pragma once
// filter_score_worker: runs the Filter and Score plugins of one pod over a range of nodes. Owns
// nothing between messages: everything it reads (snapshot, cycle state, framework) arrives as
// immutable shared values, so any number of workers run in parallel on different ranges.
#include <random>

#include "actors/handles.hpp"

namespace kas {

// `seed` is the worker's number + 1 (its RNG seed); with a registry it reports its actor metrics
// as "filter_score_worker-<number>".
worker_actor spawn_filter_score_worker(caf::actor_system& sys, uint64_t seed = 1,
                                       obs::metrics_registry* registry = nullptr);

// The kernels, callable without actors (the bench's raw-kernel loop and the tests use them).
filtered_range run_filter_work(const filter_work& w);
scored_range run_score_work(const score_work& w);
cycle_reply_ptr run_cycle_work(const cycle_work& w, std::mt19937_64& rng);

}  // namespace kas

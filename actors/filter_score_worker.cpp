#include "actors/filter_score_worker.hpp"

namespace kas {

// Each kernel is one range of the scheduling algorithm's steps (plugins/framework/runtime/schedule_one.hpp).
filtered_range run_filter_work(const filter_work& w) {
  filtered_range rep;
  rep.cycle = w.cycle;
  rep.range = w.range;
  fw::find_nodes_that_pass_filters(*w.fwk, *w.state, *w.pod, *w.snap, *w.candidates, w.begin, w.end, w.want, w.explain,
                                   rep.nodes);
  return rep;
}

scored_range run_score_work(const score_work& w) {
  scored_range rep;
  rep.cycle = w.cycle;
  rep.range = w.range;
  std::vector<const node_info*> nodes;
  std::vector<const node_hot*> hot;
  nodes.reserve(w.nodes.size());
  hot.reserve(w.nodes.size());
  for (auto idx : w.nodes) {
    nodes.push_back(&w.snap->node(idx));
    hot.push_back(&w.snap->hot(idx));
  }
  rep.error = fw::score_step(*w.fwk, *w.state, *w.pod, nodes, rep.raw, hot.data());
  return rep;
}

cycle_reply_ptr run_cycle_work(const cycle_work& w, std::mt19937_64& rng) {
  auto rep = std::make_shared<cycle_reply>();
  rep->state = std::make_shared<fw::cycle_state>();
  rep->state->set_snapshot(w.snap);
  rep->state->record_plugin_metrics = w.record_plugin_metrics;
  rep->state->gang = w.gang.get();  // the driver's queued pod keeps the ticket alive
  rep->state->gang_domain = w.gang_domain;
  rep->state->gang_tried = w.gang_tried;
  rep->cycle = w.cycle;
  rep->res = fw::schedule_one(*w.fwk, *rep->state, *w.pod, *w.snap, w.start, rng, w.ranked ? &rep->ranked : nullptr,
                              w.nominated);
  return rep;
}

namespace {
struct worker_state {
  std::mt19937_64 rng;  // selectHost's tie-breaking, when whole pods run here
  std::unique_ptr<obs::actor_probe> probe;
  static inline const char* name = "filter_score_worker";
};
}  // namespace

worker_actor spawn_filter_score_worker(caf::actor_system& sys, uint64_t seed, obs::metrics_registry* registry) {
  return sys.spawn([seed, registry](worker_actor::stateful_pointer<worker_state> self) -> worker_actor::behavior_type {
    self->state.rng.seed(seed);
    self->state.probe = std::make_unique<obs::actor_probe>(registry ? *registry : obs::default_registry(),
                                                           "filter_score_worker-" + std::to_string(seed - 1));
    return {
      [self](work_atom, const filter_work_ptr& w) {
        auto s = self->state.probe->begin_handler(self);
        return run_filter_work(*w);
      },
      [self](work_atom, const score_work_ptr& w) {
        auto s = self->state.probe->begin_handler(self);
        return run_score_work(*w);
      },
      [self](work_atom, const cycle_work_ptr& w) {
        auto s = self->state.probe->begin_handler(self);
        return run_cycle_work(*w, self->state.rng);
      },
    };
  });
}

}  // namespace kas

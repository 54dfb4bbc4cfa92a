#include "actors/filter_score_worker.hpp"

namespace kas {

filter_reply run_filter_work(const filter_work& w) {
  filter_reply rep;
  rep.feasible.reserve(std::min(w.nodes.size(), w.want_feasible ? w.want_feasible : w.nodes.size()));
  for (uint32_t off = 0; off < w.nodes.size(); ++off) {
    if (!w.explain && w.want_feasible && rep.feasible.size() >= w.want_feasible) break;
    const node_info& node = w.snap->node(w.nodes[off]);
    ++rep.examined;
    if (w.explain) rep.verdicts.emplace_back(off, w.fwk->explain_filter(*w.state, *w.pod, node));
    // kube filters with nominated pods counted (RunFilterPluginsWithNominatedPods); the plain path
    // is taken when no pod is nominated anywhere.
    auto s = w.snap->has_nominated_pods() ? w.fwk->run_filter_with_nominated_pods(*w.state, *w.pod, node, *w.snap)
                                          : w.fwk->run_filter(*w.state, *w.pod, node);
    if (s.is_success()) {
      rep.feasible.push_back(off);
    } else if (s.get_code() == fw::code::error) {
      rep.error = s;
      break;
    } else {
      rep.failed.emplace_back(off, std::move(s));
    }
  }
  return rep;
}

score_reply run_score_work(const score_work& w) {
  score_reply rep;
  size_t k = w.fwk->score_plugin_count();
  rep.nodes = w.nodes;
  rep.raw.resize(w.nodes.size() * k);
  for (size_t i = 0; i < w.nodes.size(); ++i) {
    auto s = w.fwk->score_node(*w.state, *w.pod, w.snap->node(w.nodes[i]), rep.raw.data() + i * k);
    if (!s.is_success()) {
      rep.error = s;
      break;
    }
  }
  return rep;
}

cycle_reply_ptr run_cycle_work(const cycle_work& w, std::mt19937_64& rng) {
  auto rep = std::make_shared<cycle_reply>();
  rep->state = std::make_shared<fw::cycle_state>();
  rep->state->set_snapshot(w.snap);
  rep->state->record_plugin_metrics = w.record_plugin_metrics;
  rep->res = fw::schedule_one(*w.fwk, *rep->state, *w.pod, *w.snap, w.start, rng, w.ranked ? &rep->ranked : nullptr);
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

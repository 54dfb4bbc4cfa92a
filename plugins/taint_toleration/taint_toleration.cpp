#include "plugins/taint_toleration/taint_toleration.hpp"

#include <algorithm>

#include "plugins/helper/normalize.hpp"

namespace kas::plugins {

namespace {

// Tolerations with effect PreferNoSchedule or empty (all effects), as kube's
// getAllTolerationPreferNoSchedule.
struct pre_score_state final : fw::state_data {
  std::vector<toleration> prefer_no_schedule;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_score_state>(*this); }
};

std::vector<toleration> prefer_no_schedule_tolerations(const pod_info& pod) {
  std::vector<toleration> out;
  for (auto& t : pod.tolerations)
    if (t.effect == taint_effect::none || t.effect == taint_effect::prefer_no_schedule) out.push_back(t);
  return out;
}

int64_t count_intolerable_prefer_no_schedule(const std::vector<taint>& taints,
                                             const std::vector<toleration>& tolerations) {
  int64_t n = 0;
  for (auto& t : taints)
    if (t.effect == taint_effect::prefer_no_schedule && !tolerations_tolerate(tolerations, t)) ++n;
  return n;
}

}  // namespace

bool tolerations_tolerate(const std::vector<toleration>& tolerations, const taint& t) {
  for (auto& tol : tolerations)
    if (tol.tolerates(t)) return true;
  return false;
}

const taint* find_untolerated_do_not_schedule_taint(const std::vector<taint>& taints,
                                                     const std::vector<toleration>& tolerations) {
  for (auto& t : taints) {
    if (t.effect != taint_effect::no_schedule && t.effect != taint_effect::no_execute) continue;
    if (!tolerations_tolerate(tolerations, t)) return &t;
  }
  return nullptr;
}

std::string sign_tolerations(const std::vector<toleration>& tolerations) {
  std::vector<std::string> parts;
  parts.reserve(tolerations.size());
  for (auto& t : tolerations) {
    std::string s = t.key;
    s += t.op_exists ? "|E|" : "|=|";
    s += t.value;
    s += '|';
    s += std::to_string(static_cast<int>(t.effect));
    parts.push_back(std::move(s));
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (auto& p : parts) {
    out += p;
    out += ';';
  }
  return out;
}

result<std::shared_ptr<fw::plugin>> taint_toleration::make(const YAML::Node&, const std::string&,
                                                           const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<taint_toleration>());
}

fw::status taint_toleration::filter(const fw::cycle_state&, const pod_info& pod, const node_info& node) const {
  if (!find_untolerated_do_not_schedule_taint(node.taints, pod.tolerations)) return fw::status::ok();
  return fw::status::unresolvable(err_reason);
}

std::string taint_toleration::explain(const fw::cycle_state&, const pod_info& pod, const node_info& node) const {
  const taint* t = find_untolerated_do_not_schedule_taint(node.taints, pod.tolerations);
  if (!t) return {};
  return "untolerated taint {" + t->key + ": " + t->value + "} (" +
         (t->effect == taint_effect::no_execute ? "NoExecute" : "NoSchedule") + ")";
}

fw::status taint_toleration::pre_score(fw::cycle_state& state, const pod_info& pod,
                                       const std::vector<const node_info*>&) const {
  auto s = std::make_shared<pre_score_state>();
  s->prefer_no_schedule = prefer_no_schedule_tolerations(pod);
  state.write(pre_score_key, std::move(s));
  return fw::status::ok();
}

fw::status taint_toleration::score(const fw::cycle_state& state, const pod_info&, const node_info& node,
                                   int64_t& out) const {
  auto* s = state.read_as<pre_score_state>(pre_score_key);
  if (!s) return fw::status::error("failed to read \"PreScoreTaintToleration\" from cycleState: not found");
  out = count_intolerable_prefer_no_schedule(node.taints, s->prefer_no_schedule);
  return fw::status::ok();
}

// An untainted node passes Filter and counts no intolerable taint; a tainted one needs its taints.
bool taint_toleration::hot_filter(const fw::cycle_state&, const pod_info&, fw::hot_filter& out) const {
  out.reject_tainted = true;
  return true;
}

bool taint_toleration::score_hot(const fw::cycle_state& state, const pod_info&, const node_hot* const* hot, size_t n,
                                 int64_t* out) const {
  if (!state.read_as<pre_score_state>(pre_score_key)) return false;
  for (size_t i = 0; i < n; ++i)
    if (hot[i]->has(node_hot::tainted)) return false;
  std::fill(out, out + n, int64_t{0});
  return true;
}

fw::status taint_toleration::normalize_score(const fw::cycle_state&, const pod_info&,
                                             std::vector<fw::node_score>& scores) const {
  helper::default_normalize_score(fw::max_node_score, true, scores);
  return fw::status::ok();
}

fw::status taint_toleration::normalize_row(const fw::cycle_state&, const pod_info&, const node_info* const*, size_t n,
                                 int64_t* scores) const {
  helper::default_normalize_score(fw::max_node_score, true, scores, n);
  return fw::status::ok();
}

std::vector<fw::cluster_event_with_hint> taint_toleration::events_to_register() const {
  // QueueingHints on (kube's default): Node Add|UpdateNodeTaint and Pod UpdatePodToleration.
  auto node_hint = [](const pod_info& pod, const fw::event_objects& o) {
    if (!o.new_node) return fw::queueing_hint::queue;
    bool was_untolerated =
      !o.old_node || find_untolerated_do_not_schedule_taint(o.old_node->taints, pod.tolerations) != nullptr;
    bool is_untolerated = find_untolerated_do_not_schedule_taint(o.new_node->taints, pod.tolerations) != nullptr;
    return was_untolerated && !is_untolerated ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  };
  auto pod_hint = [](const pod_info& pod, const fw::event_objects& o) {
    return o.new_pod && o.new_pod->uid == pod.uid ? fw::queueing_hint::queue : fw::queueing_hint::skip;
  };
  return {
    {{fw::event_resource::node, fw::act_add | fw::act_update_node_taint, "NodeAdd|NodeTaintChange"}, node_hint},
    {{fw::event_resource::pod, fw::act_update_pod_toleration, "PodTolerationChange"}, pod_hint},
  };
}

bool taint_toleration::sign_pod(const pod_info& pod, std::string& out) const {
  out += sign_tolerations(pod.tolerations);
  return true;
}

fw::status taint_toleration::score_nodes(const fw::cycle_state& state, const pod_info& pod,
                                         const node_info* const* nodes, size_t n, int64_t* out) const {
  auto* s = state.read_as<pre_score_state>(pre_score_key);
  if (!s) return fw::score_plugin::score_nodes(state, pod, nodes, n, out);
  for (size_t i = 0; i < n; ++i) out[i] = count_intolerable_prefer_no_schedule(nodes[i]->taints, s->prefer_no_schedule);
  return fw::status::ok();
}

}  // namespace kas::plugins

// InterPodAffinity: args, the shared term helpers, EnqueueExtensions and SignPod (kube's
// interpodaffinity/plugin.go). PreFilter/Filter are in filtering.cpp, PreScore/Score in scoring.cpp.
#include "plugins/inter_pod_affinity/inter_pod_affinity.hpp"

#include <algorithm>

#include "plugins/helper/args.hpp"

#include "plugins/inter_pod_affinity/terms.hpp"

namespace kas::plugins {

namespace ipa {

const label_map& no_labels() {
  static const label_map empty;
  return empty;
}

bool pod_matches_all_terms(const std::vector<affinity_term>& terms, const pod_info& pod) {
  if (terms.empty()) return false;
  for (const auto& t : terms)
    if (!t.matches(pod, &no_labels())) return false;
  return true;
}

affinity_term merge_namespaces(const affinity_term& t, const cluster_objects& objects) {
  affinity_term out = t;
  if (!out.namespace_selector) return out;
  const label_selector& sel = *out.namespace_selector;
  // Empty selector = labels.Everything(): kube leaves it, and it matches every namespace.
  if (!sel.nothing && sel.requirements.empty()) return out;
  if (!sel.nothing)
    for (const auto& [ns, labels] : objects.namespace_labels)
      if (sel.matches(labels)) out.namespaces.push_back(ns);
  out.namespace_selector.reset();  // labels.Nothing()
  // A selector may resolve to many namespaces, and every existing pod is checked against them.
  std::sort(out.namespaces.begin(), out.namespaces.end());
  out.namespaces.erase(std::unique(out.namespaces.begin(), out.namespaces.end()), out.namespaces.end());
  out.namespaces_sorted = true;
  return out;
}

std::vector<affinity_term> merge_namespaces(const std::vector<affinity_term>& terms, const cluster_objects& objects) {
  std::vector<affinity_term> out;
  out.reserve(terms.size());
  for (const auto& t : terms) out.push_back(merge_namespaces(t, objects));
  return out;
}

std::vector<weighted_affinity_term> merge_namespaces(const std::vector<weighted_affinity_term>& terms,
                                                     const cluster_objects& objects) {
  std::vector<weighted_affinity_term> out;
  out.reserve(terms.size());
  for (const auto& t : terms) out.push_back({merge_namespaces(t.term, objects), t.weight});
  return out;
}

void topology_counts::update(const label_map& node_labels, const std::string& key, int64_t delta) {
  const std::string* value = node_labels.get(key);
  if (value) add(key, *value, delta);
}

void topology_counts::add(const std::string& key, std::string_view value, int64_t delta) {
  auto outer = std::find_if(keys_.begin(), keys_.end(), [&](const per_key& k) { return k.key == key; });
  if (outer == keys_.end()) outer = keys_.insert(keys_.end(), per_key{key, {}});
  auto& inner = outer->values;
  auto it = inner.find(value);
  if (it == inner.end()) {
    storage_.emplace_back(value);
    it = inner.emplace(std::string_view(storage_.back()), 0).first;
  }
  it->second += delta;
  // The value can go negative through RemovePod; kube deletes the entry only when it reaches 0.
  if (it->second == 0) {
    inner.erase(it);
    if (inner.empty()) keys_.erase(outer);
  }
}

int64_t topology_counts::get(std::string_view key, std::string_view value) const {
  for (const auto& k : keys_) {
    if (k.key != key) continue;
    auto it = k.values.find(value);
    return it == k.values.end() ? 0 : it->second;
  }
  return 0;
}

void topology_counts::copy_from(const topology_counts& o) {
  keys_.clear();
  storage_.clear();
  keys_.reserve(o.keys_.size());
  for (const auto& k : o.keys_) {
    per_key copy{k.key, {}};
    copy.values.reserve(k.values.size());
    for (const auto& [v, n] : k.values) {
      storage_.emplace_back(v);
      copy.values.emplace(std::string_view(storage_.back()), n);
    }
    keys_.push_back(std::move(copy));
  }
}

}  // namespace ipa

namespace {

std::string quoted(const YAML::Node& n) { return "\"" + YAML::Dump(n) + "\""; }

fw::queueing_hint hint(bool queue) { return queue ? fw::queueing_hint::queue : fw::queueing_hint::skip; }

// kube's isSchedulableAfterPodChange (v1.36). Terms are the pod's own, unmerged, matched with nil
// namespace labels, as kube's hint does.
fw::queueing_hint after_pod_change(const pod_info& pod, const fw::event_objects& o) {
  const pod_info* old_pod = o.old_pod;
  const pod_info* new_pod = o.new_pod;
  // The rejected pod itself was relabelled: its own affinity may now be satisfiable.
  if (old_pod && new_pod && new_pod->uid == pod.uid) return hint(!(old_pod->labels == new_pod->labels));
  if ((new_pod && new_pod->node_name.empty()) || (old_pod && old_pod->node_name.empty()))
    return fw::queueing_hint::skip;
  const auto& terms = pod.required_affinity;
  const auto& anti_terms = pod.required_anti_affinity;
  // One existing pod must satisfy every affinity term, so the terms are checked together.
  if (old_pod && new_pod) {
    if (!ipa::pod_matches_all_terms(terms, *old_pod) && ipa::pod_matches_all_terms(terms, *new_pod))
      return fw::queueing_hint::queue;
    return hint(ipa::pod_matches_all_terms(anti_terms, *old_pod) && !ipa::pod_matches_all_terms(anti_terms, *new_pod));
  }
  if (new_pod) return hint(ipa::pod_matches_all_terms(terms, *new_pod));
  if (!old_pod) return fw::queueing_hint::queue;
  // Deleted: it matched the pod's anti-affinity, or its own anti-affinity repelled the pod.
  return hint(ipa::pod_matches_all_terms(anti_terms, *old_pod) ||
              ipa::pod_matches_all_terms(old_pod->required_anti_affinity, pod));
}

// kube's isSchedulableAfterNodeChange (v1.36): an affinity topology key that appears or changes
// value; an anti-affinity topology key that disappears or changes value; any new node when the
// pod has anti-affinity (a node without the key satisfies it).
fw::queueing_hint after_node_change(const pod_info& pod, const fw::event_objects& o) {
  if (!o.new_node) return fw::queueing_hint::queue;
  const label_map& now = o.new_node->labels;
  for (const auto& t : pod.required_affinity) {
    const std::string* after = now.get(t.topology_key);
    if (!o.old_node) {
      if (after) return fw::queueing_hint::queue;
      continue;
    }
    const std::string* before = o.old_node->labels.get(t.topology_key);
    if (after && (!before || *before != *after)) return fw::queueing_hint::queue;
  }
  for (const auto& t : pod.required_anti_affinity) {
    if (!o.old_node) return fw::queueing_hint::queue;
    const std::string* before = o.old_node->labels.get(t.topology_key);
    const std::string* after = now.get(t.topology_key);
    if (before && (!after || *before != *after)) return fw::queueing_hint::queue;
  }
  return fw::queueing_hint::skip;
}

}  // namespace

result<inter_pod_affinity_args> parse_inter_pod_affinity_args(const YAML::Node& args, const std::string& path) {
  inter_pod_affinity_args out;
  if (!args || args.IsNull()) return out;
  if (!args.IsMap()) return error{path + ": expected an object (InterPodAffinityArgs)"};
  if (auto r = helper::check_keys(args, path, {"apiVersion", "kind", "hardPodAffinityWeight",
                                               "ignorePreferredTermsOfExistingPods"});
      !r)
    return r.err();
  if (YAML::Node w = args["hardPodAffinityWeight"]; w && !w.IsNull()) {
    const std::string wpath = path + ".hardPodAffinityWeight";
    int64_t v = 0;
    try {
      v = w.as<int64_t>();
    } catch (const YAML::Exception&) {
      return error{wpath + ": expected an integer, got " + quoted(w)};
    }
    // kube's validateHardPodAffinityWeight.
    if (v < 0 || v > 100)
      return error{wpath + ": Invalid value: " + std::to_string(v) + ": not in valid range [0, 100]"};
    out.hard_pod_affinity_weight = static_cast<int32_t>(v);
  }
  if (YAML::Node b = args["ignorePreferredTermsOfExistingPods"]; b && !b.IsNull()) {
    try {
      out.ignore_preferred_terms_of_existing_pods = b.as<bool>();
    } catch (const YAML::Exception&) {
      return error{path + ".ignorePreferredTermsOfExistingPods: expected a boolean, got " + quoted(b)};
    }
  }
  return out;
}

result<std::shared_ptr<fw::plugin>> inter_pod_affinity::make(const YAML::Node& args, const std::string& path,
                                                             const fw::handle&) {
  auto parsed = parse_inter_pod_affinity_args(args, path);
  if (!parsed) return parsed.err();
  return std::shared_ptr<fw::plugin>(std::make_shared<inter_pod_affinity>(*parsed));
}

std::vector<fw::cluster_event_with_hint> inter_pod_affinity::events_to_register() const {
  // With queueing hints on (kube's default), UpdateNodeTaint is not registered: it only covered
  // NodeAdd events that preCheck dropped.
  return {
    {{fw::event_resource::pod, fw::act_add | fw::act_update_pod_label | fw::act_delete, "Pod"}, after_pod_change},
    {{fw::event_resource::node, fw::act_add | fw::act_update_node_label, "NodeAdd|NodeLabelChange"}, after_node_change},
  };
}

bool inter_pod_affinity::sign_pod(const pod_info& pod, std::string&) const {
  // Inter-pod affinity is not local to a pod and a node: such pods are not signable. kube checks
  // that spec.affinity.podAffinity / podAntiAffinity are set, even when they hold no terms.
  if (pod.has_pod_affinity()) return false;
  if (pod.pod && pod.pod->spec().has_affinity()) {
    const auto& a = pod.pod->spec().affinity();
    if (a.has_pod_affinity() || a.has_pod_anti_affinity()) return false;
  }
  return true;
}

}  // namespace kas::plugins

#include "plugins/node_affinity/node_affinity.hpp"

#include "messages/codec.hpp"
#include "plugins/helper/normalize.hpp"

namespace kas::plugins {

namespace {

constexpr std::string_view object_name_field = "metadata.name";

bool selector_matches(const node_selector& sel, const label_map& labels, const std::string& node_name) {
  // A required affinity with no terms matches nothing (kube's NodeSelector.Match).
  return !sel.terms.empty() && sel.matches(labels, node_name);
}

int64_t preferred_score(const std::vector<preferred_scheduling_term>& terms, const node_info& node) {
  int64_t sum = 0;
  for (auto& t : terms)
    if (t.weight != 0 && t.preference.matches(node.labels, node.name)) sum += t.weight;
  return sum;
}

// The metadata.name In values of one term, intersected over its matchFields; nullopt when the term
// has no such requirement (it may match any node).
std::optional<std::set<std::string>> term_node_names(const node_selector_term& t) {
  std::optional<std::set<std::string>> names;
  for (auto& r : t.match_fields) {
    if (r.key != object_name_field || r.op != selector_op::in) continue;
    std::set<std::string> s(r.values.begin(), r.values.end());
    if (!names) {
      names = std::move(s);
    } else {
      std::set<std::string> both;
      for (auto& n : *names)
        if (s.count(n)) both.insert(n);
      names = std::move(both);
    }
  }
  return names;
}

// kube validates addedAffinity with nodeaffinity.NewNodeSelector, which rejects a requirement the
// pod path would merely treat as a non-match (compiled with `invalid`).
status_or_error validate_term(const node_selector_term& t, const std::string& path) {
  for (size_t j = 0; j < t.match_expressions.size(); ++j)
    if (t.match_expressions[j].invalid)
      return error{path + ".matchExpressions[" + std::to_string(j) + "]: Invalid value: \"" +
                   t.match_expressions[j].key + "\": not a valid node selector requirement"};
  for (size_t j = 0; j < t.match_fields.size(); ++j)
    if (t.match_fields[j].invalid)
      return error{path + ".matchFields[" + std::to_string(j) + "]: Invalid value: \"" + t.match_fields[j].key +
                   "\": not a valid node selector requirement (only metadata.name In/NotIn with one value)"};
  return ok_t{};
}

}  // namespace

bool pod_matches_node_selector_and_affinity(const pod_info& pod, const label_map& labels,
                                            const std::string& node_name) {
  for (auto& [k, v] : pod.node_selector.entries()) {
    const std::string* have = labels.get(k);
    if (!have || *have != v) return false;
  }
  if (pod.required_node_affinity && !selector_matches(*pod.required_node_affinity, labels, node_name))
    return false;
  return true;
}

result<node_affinity_args> parse_node_affinity_args(const YAML::Node& args, const std::string& path) {
  node_affinity_args out;
  if (!args || args.IsNull()) return out;
  if (!args.IsMap()) return error{path + ": expected an object (NodeAffinityArgs)"};
  for (auto it = args.begin(); it != args.end(); ++it) {
    auto key = it->first.as<std::string>();
    if (key != "addedAffinity" && key != "apiVersion" && key != "kind")
      return error{path + "." + key + ": unknown field"};
  }
  YAML::Node added = args["addedAffinity"];
  if (!added || added.IsNull()) return out;
  const std::string apath = path + ".addedAffinity";
  k8s::core::NodeAffinity na;
  if (auto st = codec::decode_node(added, na, apath); !st) return st.err();
  if (na.has_required_during_scheduling_ignored_during_execution()) {
    auto sel = compile_node_selector(na.required_during_scheduling_ignored_during_execution(),
                                     apath + ".requiredDuringSchedulingIgnoredDuringExecution");
    if (!sel) return sel.err();
    for (size_t i = 0; i < sel->terms.size(); ++i)
      if (auto st = validate_term(sel->terms[i], apath + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[" +
                                                   std::to_string(i) + "]");
          !st)
        return st.err();
    out.added_required = std::move(*sel);
  }
  const auto& pref = na.preferred_during_scheduling_ignored_during_execution();
  for (int i = 0; i < pref.size(); ++i) {
    auto term = compile_node_selector_term(
      pref[i].preference(),
      apath + ".preferredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "].preference");
    if (!term) return term.err();
    if (auto st = validate_term(*term, apath + ".preferredDuringSchedulingIgnoredDuringExecution[" +
                                         std::to_string(i) + "].preference");
        !st)
      return st.err();
    out.added_preferred.push_back({pref[i].weight(), std::move(*term)});
  }
  return out;
}

result<std::shared_ptr<fw::plugin>> node_affinity::make(const YAML::Node& args, const std::string& path,
                                                        const fw::handle&) {
  auto parsed = parse_node_affinity_args(args, path);
  if (!parsed) return parsed.err();
  return std::shared_ptr<fw::plugin>(std::make_shared<node_affinity>(std::move(*parsed)));
}

fw::status node_affinity::pre_filter(fw::cycle_state&, const pod_info& pod, const snapshot&,
                                     fw::pre_filter_result& result) const {
  // The compiled pod already holds the parsed selector and terms, so there is nothing to store in
  // the cycle state; Filter reads them from the pod.
  const bool no_required = !pod.required_node_affinity.has_value();
  if (no_required && !args_.added_required && pod.node_selector.empty()) return fw::status::skip();
  if (no_required || pod.required_node_affinity->terms.empty()) return fw::status::ok();

  std::optional<std::set<std::string>> names;
  for (auto& t : pod.required_node_affinity->terms) {
    auto term_names = term_node_names(t);
    // A term without a metadata.name pin may match any node: the terms are ORed.
    if (!term_names) return fw::status::ok();
    if (!names) names.emplace();
    names->insert(term_names->begin(), term_names->end());
  }
  if (names && names->empty()) return fw::status::unresolvable(err_reason_conflict);
  if (names) result.node_names = std::move(names);
  return fw::status::ok();
}

fw::status node_affinity::filter(const fw::cycle_state&, const pod_info& pod, const node_info& node) const {
  if (args_.added_required && !selector_matches(*args_.added_required, node.labels, node.name))
    return fw::status::unresolvable(err_reason_enforced);
  if (!pod_matches_node_selector_and_affinity(pod, node.labels, node.name))
    return fw::status::unresolvable(err_reason_pod);
  return fw::status::ok();
}

namespace {

const char* op_name(selector_op op) {
  switch (op) {
    case selector_op::in: return "In";
    case selector_op::not_in: return "NotIn";
    case selector_op::exists: return "Exists";
    case selector_op::does_not_exist: return "DoesNotExist";
    case selector_op::gt: return "Gt";
    case selector_op::lt: return "Lt";
  }
  return "?";
}

std::string describe(const selector_requirement& r) {
  std::string s = r.key + " " + op_name(r.op);
  if (r.op == selector_op::gt || r.op == selector_op::lt) return s + " " + std::to_string(r.number);
  if (r.values.empty()) return s;
  s += " [";
  for (size_t i = 0; i < r.values.size(); ++i) s += (i ? ", " : "") + r.values[i];
  return s + "]";
}

// The first requirement of `term` the node fails, described.
std::string first_unmatched(const node_selector_term& term, const label_map& labels, const std::string& node_name) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return "an empty term matches nothing";
  for (auto& r : term.match_expressions)
    if (!requirement_matches(r, labels)) return describe(r);
  for (auto& r : term.match_fields) {
    bool equal = !r.values.empty() && r.values.front() == node_name;
    if (r.invalid || (r.op == selector_op::in ? !equal : equal)) return "metadata.name " + describe(r).substr(r.key.size() + 1);
  }
  return {};
}

}  // namespace

std::string node_affinity::explain(const fw::cycle_state&, const pod_info& pod, const node_info& node) const {
  for (auto& [key, want] : pod.node_selector.entries()) {
    const std::string* have = node.labels.get(key);
    if (!have) return "nodeSelector {" + key + ": " + want + "}: the node has no label " + key;
    if (*have != want) return "nodeSelector {" + key + ": " + want + "}: the node has " + key + "=" + *have;
  }
  if (pod.required_node_affinity && !pod.required_node_affinity->matches(node.labels, node.name)) {
    const auto& terms = pod.required_node_affinity->terms;
    std::string s = "no required nodeSelectorTerm matched";
    for (size_t i = 0; i < terms.size(); ++i)
      s += "; term " + std::to_string(i) + ": " + first_unmatched(terms[i], node.labels, node.name);
    return s;
  }
  if (args_.added_required && !selector_matches(*args_.added_required, node.labels, node.name))
    return "the profile's addedAffinity did not match";
  return {};
}

fw::status node_affinity::pre_score(fw::cycle_state&, const pod_info& pod,
                                    const std::vector<const node_info*>&) const {
  if (pod.preferred_node_affinity.empty() && args_.added_preferred.empty()) return fw::status::skip();
  return fw::status::ok();
}

fw::status node_affinity::score(const fw::cycle_state&, const pod_info& pod, const node_info& node,
                                int64_t& out) const {
  out = preferred_score(args_.added_preferred, node) + preferred_score(pod.preferred_node_affinity, node);
  return fw::status::ok();
}

fw::status node_affinity::normalize_score(const fw::cycle_state&, const pod_info&,
                                          std::vector<fw::node_score>& scores) const {
  helper::default_normalize_score(fw::max_node_score, false, scores);
  return fw::status::ok();
}

fw::status node_affinity::normalize_row(const fw::cycle_state&, const pod_info&, const node_info* const*, size_t n,
                                 int64_t* scores) const {
  helper::default_normalize_score(fw::max_node_score, false, scores, n);
  return fw::status::ok();
}

std::vector<fw::cluster_event_with_hint> node_affinity::events_to_register() const {
  // Copies the added selector into the hint so the hint does not depend on this plugin's lifetime.
  auto added = args_.added_required;
  auto hint = [added](const pod_info& pod, const fw::event_objects& o) {
    if (!o.new_node) return fw::queueing_hint::queue;
    const node_info& n = *o.new_node;
    if (added && !selector_matches(*added, n.labels, n.name)) return fw::queueing_hint::skip;
    if (!pod_matches_node_selector_and_affinity(pod, n.labels, n.name)) return fw::queueing_hint::skip;
    if (!o.old_node) return fw::queueing_hint::queue;
    // An update matters only when it turns a non-matching node into a matching one.
    return pod_matches_node_selector_and_affinity(pod, o.old_node->labels, o.old_node->name)
             ? fw::queueing_hint::skip
             : fw::queueing_hint::queue;
  };
  std::vector<fw::cluster_event_with_hint> out(1);
  out[0].event.resource = fw::event_resource::node;
  out[0].event.actions = fw::act_add | fw::act_update_node_label;
  out[0].event.label = "NodeAdd|NodeLabelChange";
  out[0].hint = std::move(hint);
  return out;
}

bool node_affinity::sign_pod(const pod_info& pod, std::string& out) const {
  for (auto& [k, v] : pod.node_selector.entries()) {
    out += k;
    out += '=';
    out += v;
    out += ',';
  }
  out += '|';
  // NodeAffinity has no map fields, so its wire form is deterministic.
  if (pod.pod && pod.pod->spec().has_affinity() && pod.pod->spec().affinity().has_node_affinity())
    out += pod.pod->spec().affinity().node_affinity().SerializeAsString();
  return true;
}

}  // namespace kas::plugins

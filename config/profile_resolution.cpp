// Stage 2 of KubeSchedulerConfiguration handling: a decoded profile's plugin sets -> the per-point
// plugin lists, weights and args the framework runs (the algorithm is described in
// kube_scheduler_config.hpp).
#include <map>
#include <set>

#include "messages/field_path.hpp"

#include "config/kube_scheduler_config.hpp"

namespace kas {

namespace {


// kube's mergePluginSet: defaults merged with a custom set.
std::vector<plugin_ref> merge_plugin_set(const std::vector<plugin_ref>& defaults, const plugin_set& custom) {
  std::vector<plugin_ref> out;
  std::set<size_t> replaced;
  if (!custom.disables("*")) {
    for (const auto& d : defaults) {
      if (custom.disables(d.name)) continue;
      // The last custom entry of that name replaces it (kube keeps custom plugins in a map); an
      // earlier one is appended below and rejected as a duplicate.
      size_t last = custom.enabled.size();
      for (size_t i = 0; i < custom.enabled.size(); ++i)
        if (custom.enabled[i].name == d.name) last = i;
      if (last < custom.enabled.size()) {
        out.push_back(custom.enabled[last]);
        replaced.insert(last);
      } else {
        out.push_back(d);
      }
    }
  }
  // A duplicate custom plugin is appended too; the framework rejects it.
  for (size_t i = 0; i < custom.enabled.size(); ++i)
    if (!replaced.count(i)) out.push_back(custom.enabled[i]);
  return out;
}

class resolver {
public:
  resolver(const kube_profile& p, const plugin_catalog& c, const std::string& where)
    : prof_(p), cat_(c), where_(where) {}

  result<profile_config> run(std::optional<int32_t> global_percentage) {
    profile_config out;
    out.scheduler_name = prof_.scheduler_name;
    out.percentage_of_nodes_to_score =
      prof_.percentage_of_nodes_to_score ? prof_.percentage_of_nodes_to_score : global_percentage;

    std::vector<plugin_ref> defaults;
    for (const auto& d : upstream_default_plugins())
      if (cat_.points(d.name)) defaults.push_back(plugin_ref{d.name, d.weight, ""});
    multi_ = merge_plugin_set(defaults, prof_.plugins[static_cast<size_t>(ext_point::multi_point)]);
    for (const auto& ref : multi_)
      if (!cat_.points(ref.name)) return fail(ref.path + ".name", "unknown plugin " + quoted(ref.name));

    for (size_t i = 0; i < num_ext_points; ++i) {
      auto st = expand(static_cast<ext_point>(i), point_list(out, static_cast<ext_point>(i)));
      if (!st) return st.err();
    }
    if (auto st = weights(out); !st) return st.err();
    if (auto st = args(out); !st) return st.err();

    const std::string plugins = prof_.path + ".plugins.";
    if (out.queue_sort.size() != 1)
      return fail(plugins + "queueSort", "only one queue sort plugin required for profile with scheduler name " +
                                           quoted(out.scheduler_name) + ", but got " +
                                           std::to_string(out.queue_sort.size()));
    if (out.bind.empty())
      return fail(plugins + "bind",
                  "at least one bind plugin is needed for profile with scheduler name " + quoted(out.scheduler_name));
    return out;
  }

private:
  error fail(const std::string& path, const std::string& what) const { return error{where_ + ": " + path + ": " + what}; }

  bool implements(const std::string& name, ext_point point) const {
    auto pts = cat_.points(name);
    return pts && (*pts & point_bit(point));
  }

  // The framework's per-point list, then expandMultiPointPlugins for that point.
  status_or_error expand(ext_point point, std::vector<std::string>& list) {
    const auto& set = prof_.plugins[static_cast<size_t>(point)];
    const std::string point_name = ext_point_names[static_cast<size_t>(point)];
    std::vector<std::string> explicit_list;
    for (const auto& ref : set.enabled) {
      if (!cat_.points(ref.name)) return fail(ref.path + ".name", "unknown plugin " + quoted(ref.name));
      if (!implements(ref.name, point))
        return fail(ref.path + ".name", "plugin " + quoted(ref.name) + " does not extend " + point_name);
      for (auto& n : explicit_list)
        if (n == ref.name) return fail(ref.path + ".name", "Duplicate value: " + quoted(ref.name));
      explicit_list.push_back(ref.name);
    }
    if (set.disables("*")) {
      list = explicit_list;
      return ok_t{};
    }
    std::set<std::string> overrides;
    std::vector<std::string> from_multi;
    for (const auto& ref : multi_) {
      if (!implements(ref.name, point) || set.disables(ref.name)) continue;
      bool is_explicit = false;
      for (auto& n : explicit_list) is_explicit = is_explicit || n == ref.name;
      if (is_explicit) {
        overrides.insert(ref.name);
        continue;
      }
      for (auto& n : from_multi)
        if (n == ref.name)
          return fail((ref.path.empty() ? prof_.path + ".plugins.multiPoint" : ref.path + ".name"),
                      "Duplicate value: " + quoted(ref.name) + " (already enabled at " + point_name + ")");
      from_multi.push_back(ref.name);
    }
    list.clear();
    for (auto& n : explicit_list)
      if (overrides.count(n)) list.push_back(n);
    for (auto& n : from_multi) list.push_back(n);
    for (auto& n : explicit_list)
      if (!overrides.count(n)) list.push_back(n);
    return ok_t{};
  }

  // kube's getScoreWeights: score.enabled first, then multiPoint; the first mention wins; 0 means 1.
  status_or_error weights(profile_config& out) const {
    std::set<std::string> enabled(out.score.begin(), out.score.end());
    auto take = [&](const plugin_ref& ref) {
      if (!implements(ref.name, ext_point::score) || out.score_weights.count(ref.name)) return;
      out.score_weights[ref.name] = ref.weight == 0 ? 1 : ref.weight;
    };
    for (const auto& ref : prof_.plugins[static_cast<size_t>(ext_point::score)].enabled) take(ref);
    for (const auto& ref : multi_) take(ref);
    for (auto it = out.score_weights.begin(); it != out.score_weights.end();)
      it = enabled.count(it->first) ? std::next(it) : out.score_weights.erase(it);
    return ok_t{};
  }

  // pluginConfig: every known plugin's args are validated (kube validates them whether or not the
  // plugin is enabled); args of plugins the catalog does not know are ignored, as kube does.
  status_or_error args(profile_config& out) const {
    for (const auto& e : prof_.plugin_config) {
      if (!cat_.points(e.name)) continue;
      std::string path = where_ + ": " + e.path + ".args";
      if (auto st = cat_.check_args(e.name, e.args, path); !st) return st;
      out.plugin_args[e.name] = e.args;
      out.plugin_args_path[e.name] = path;
    }
    return ok_t{};
  }

  const kube_profile& prof_;
  const plugin_catalog& cat_;
  const std::string& where_;
  std::vector<plugin_ref> multi_;
};

class default_catalog final : public plugin_catalog {
public:
  default_catalog() {
    auto p = default_profile();
    for (size_t i = 0; i < num_ext_points; ++i)
      for (auto& n : point_list(p, static_cast<ext_point>(i))) points_[n] |= 1u << i;
  }
  std::optional<uint32_t> points(std::string_view name) const override {
    auto it = points_.find(std::string(name));
    if (it == points_.end()) return std::nullopt;
    return it->second;
  }

private:
  std::map<std::string, uint32_t> points_;
};

}  // namespace

std::vector<std::string>& point_list(profile_config& p, ext_point point) {
  std::vector<std::string>* lists[] = {&p.pre_enqueue, &p.queue_sort, &p.pre_filter, &p.filter,
                                       &p.post_filter, &p.pre_score,  &p.score,      &p.reserve,
                                       &p.permit,      &p.pre_bind,   &p.bind,       &p.post_bind};
  return *lists[static_cast<size_t>(point) % num_ext_points];
}

const std::vector<std::string>& point_list(const profile_config& p, ext_point point) {
  return point_list(const_cast<profile_config&>(p), point);
}

status_or_error plugin_catalog::check_args(std::string_view, const YAML::Node&, const std::string&) const {
  return ok_t{};
}

const plugin_catalog& default_plugin_catalog() {
  static const default_catalog c;
  return c;
}

const std::vector<default_plugin>& upstream_default_plugins() {
  // pkg/scheduler/apis/config/v1/default_plugins.go, getDefaultPlugins, with DynamicResources in
  // place (its feature gate is on by default in v1.36), and GangScheduling (PodGroups) before it,
  // as config/default_profile.cpp places it.
  static const std::vector<default_plugin> list = {
    {"SchedulingGates", 0},   {"PrioritySort", 0},     {"NodeUnschedulable", 0},
    {"NodeName", 0},          {"TaintToleration", 3},  {"NodeAffinity", 2},
    {"NodePorts", 0},         {"NodeResourcesFit", 1}, {"VolumeRestrictions", 0},
    {"NodeVolumeLimits", 0},  {"VolumeBinding", 0},    {"VolumeZone", 0},
    {"PodTopologySpread", 2}, {"InterPodAffinity", 2}, {"GangScheduling", 0},
    {"DynamicResources", 0},
    {"DefaultPreemption", 0}, {"NodeResourcesBalancedAllocation", 1}, {"ImageLocality", 1},
    {"DefaultBinder", 0},
  };
  return list;
}

result<profile_config> resolve_profile(const kube_profile& profile, const plugin_catalog& catalog,
                                       std::optional<int32_t> global_percentage, const std::string& where) {
  return resolver(profile, catalog, where).run(global_percentage);
}

result<std::vector<profile_config>> resolve_profiles(const kube_scheduler_configuration& cfg,
                                                     const plugin_catalog& catalog, const std::string& where) {
  std::vector<profile_config> out;
  for (const auto& p : cfg.profiles) {
    auto r = resolve_profile(p, catalog, cfg.percentage_of_nodes_to_score, where);
    if (!r) return r.err();
    // kube's profile validator: one queue sort plugin, the same in every profile.
    if (!out.empty() && r->queue_sort != out.front().queue_sort)
      return error{where + ": " + p.path + ".plugins.queueSort: different queue sort plugins for profile " +
                   quoted(p.scheduler_name) + ": " + quoted(r->queue_sort.front()) + ", first: " +
                   quoted(out.front().queue_sort.front())};
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace kas

#include "plugins/framework/runtime/profile_resolver.hpp"

namespace kas::fw {

uint32_t plugin_points(const plugin& p) {
  uint32_t out = 0;
  auto add = [&out](bool has, ext_point point) {
    if (has) out |= point_bit(point);
  };
  add(dynamic_cast<const pre_enqueue_plugin*>(&p) != nullptr, ext_point::pre_enqueue);
  add(dynamic_cast<const queue_sort_plugin*>(&p) != nullptr, ext_point::queue_sort);
  add(dynamic_cast<const pre_filter_plugin*>(&p) != nullptr, ext_point::pre_filter);
  add(dynamic_cast<const filter_plugin*>(&p) != nullptr, ext_point::filter);
  add(dynamic_cast<const post_filter_plugin*>(&p) != nullptr, ext_point::post_filter);
  add(dynamic_cast<const pre_score_plugin*>(&p) != nullptr, ext_point::pre_score);
  add(dynamic_cast<const score_plugin*>(&p) != nullptr, ext_point::score);
  add(dynamic_cast<const reserve_plugin*>(&p) != nullptr, ext_point::reserve);
  add(dynamic_cast<const permit_plugin*>(&p) != nullptr, ext_point::permit);
  add(dynamic_cast<const pre_bind_plugin*>(&p) != nullptr, ext_point::pre_bind);
  add(dynamic_cast<const bind_plugin*>(&p) != nullptr, ext_point::bind);
  add(dynamic_cast<const post_bind_plugin*>(&p) != nullptr, ext_point::post_bind);
  return out;
}

registry_catalog::registry_catalog(const registry& reg) : reg_(reg) {
  // A plugin whose factory rejects its default args still exists; it implements no point
  // until configured, and its args error surfaces when the framework builds it.
  for (const auto& [name, factory] : reg.all()) {
    auto p = factory(YAML::Node(), name, handle{});
    points_.emplace(name, p ? plugin_points(**p) : 0u);
  }
}

std::optional<uint32_t> registry_catalog::points(std::string_view name) const {
  auto it = points_.find(name);
  if (it == points_.end()) return std::nullopt;
  return it->second;
}

status_or_error registry_catalog::check_args(std::string_view name, const YAML::Node& args,
                                             const std::string& path) const {
  const factory* f = reg_.find(name);
  if (!f) return ok_t{};
  auto p = (*f)(args, path, handle{});
  if (!p) return p.err();
  return ok_t{};
}

result<scheduler_config> load_scheduler_config(const std::string& path, const registry& reg) {
  registry_catalog catalog(reg);
  return kas::load_scheduler_config(path, catalog);
}

}  // namespace kas::fw

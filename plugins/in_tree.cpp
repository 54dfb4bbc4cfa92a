// The single list of in-tree plugins. Each plugin folder provides a factory; nothing registers
// itself. Names are kube-scheduler's, so existing profiles carry over.
#include <cassert>

#include "plugins/default_binder/default_binder.hpp"
#include "plugins/default_preemption/default_preemption.hpp"
#include "plugins/framework/registry.hpp"
#include "plugins/gang_scheduling/gang_scheduling.hpp"
#include "plugins/image_locality/image_locality.hpp"
#include "plugins/inter_pod_affinity/inter_pod_affinity.hpp"
#include "plugins/node_affinity/node_affinity.hpp"
#include "plugins/node_name/node_name.hpp"
#include "plugins/node_ports/node_ports.hpp"
#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.hpp"
#include "plugins/node_resources_fit/node_resources_fit.hpp"
#include "plugins/node_unschedulable/node_unschedulable.hpp"
#include "plugins/pod_topology_spread/pod_topology_spread.hpp"
#include "plugins/priority_sort/priority_sort.hpp"
#include "plugins/scheduling_gates/scheduling_gates.hpp"
#include "plugins/taint_toleration/taint_toleration.hpp"
#include "plugins/node_volume_limits/node_volume_limits.hpp"
#include "plugins/volume_binding/volume_binding.hpp"
#include "plugins/volume_restrictions/volume_restrictions.hpp"
#include "plugins/volume_zone/volume_zone.hpp"

namespace kas::fw {

registry in_tree_registry() {
  using namespace kas::plugins;
  registry r;
  // A duplicate name is a programming error here; registry::add reports it, and the assert keeps
  // it from going unnoticed in tests.
  auto add = [&r](std::string_view name, factory f) {
    [[maybe_unused]] auto st = r.add(name, std::move(f));
    assert(st.ok());
  };
  add(scheduling_gates::plugin_name, &scheduling_gates::make);
  add(priority_sort::plugin_name, &priority_sort::make);
  add(node_unschedulable::plugin_name, &node_unschedulable::make);
  add(node_name::plugin_name, &node_name::make);
  add(taint_toleration::plugin_name, &taint_toleration::make);
  add(node_affinity::plugin_name, &node_affinity::make);
  add(node_ports::plugin_name, &node_ports::make);
  add(node_resources_fit::plugin_name, &node_resources_fit::make);
  add(volume_restrictions::plugin_name, &volume_restrictions::make);
  add(node_volume_limits::plugin_name, &node_volume_limits::make);
  add(volume_binding::plugin_name, &volume_binding::make);
  add(volume_zone::plugin_name, &volume_zone::make);
  add(pod_topology_spread::plugin_name, &pod_topology_spread::make);
  add(inter_pod_affinity::plugin_name, &inter_pod_affinity::make);
  add(gang_scheduling::plugin_name, &gang_scheduling::make);
  add(default_preemption::plugin_name, &default_preemption::make);
  add(node_resources_balanced_allocation::plugin_name, &node_resources_balanced_allocation::make);
  add(image_locality::plugin_name, &image_locality::make);
  add(default_binder::plugin_name, &default_binder::make);
  return r;
}

}  // namespace kas::fw

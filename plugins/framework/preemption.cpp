#include "plugins/framework/preemption.hpp"

namespace kas::fw {

std::vector<const node_info*> nodes_where_preemption_might_help(const snapshot& snap, const node_to_status& m) {
  std::vector<const node_info*> out;
  for (size_t i = 0; i < snap.size(); ++i) {
    const node_info& n = snap.node(i);
    const status* s = m.get(n.name);
    if (!s || s->get_code() == code::unschedulable_and_unresolvable) continue;
    out.push_back(&n);
  }
  return out;
}

}  // namespace kas::fw

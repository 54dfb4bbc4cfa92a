#pragma once
// Preemption helpers shared by PostFilter plugins (DefaultPreemption arrives with issue #3).
#include <vector>

#include "plugins/framework/interfaces.hpp"

namespace kas::fw {

// kube's nodesWherePreemptionMightHelp: the nodes whose Filter failure could be fixed by removing
// pods. A node whose status is UnschedulableAndUnresolvable is excluded (removing pods cannot fix
// e.g. a taint or a node selector), and so is a node with no status at all and no absent status:
// like kube's default NodeToStatus, unexamined nodes count as unresolvable.
std::vector<const node_info*> nodes_where_preemption_might_help(const snapshot& snap, const node_to_status& m);

}  // namespace kas::fw

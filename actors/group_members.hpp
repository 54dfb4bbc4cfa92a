#pragma once
// group_members: the pod groups as the scheduling queue knows them (kube's PodGroupManager): the
// PodGroup objects (from the cluster's objects) and, per group, the pods that belong to it, bound
// or not. CAF-free; the queue owns one, and simulate builds one to explain pods it never popped.
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/pod_info.hpp"
#include "plugins/framework/groups.hpp"

namespace kas {

class group_members final : public fw::group_directory {
public:
  // Returns the keys of the groups whose PodGroup appeared or changed.
  std::vector<std::string> set_objects(cluster_objects_ptr objects);
  // A pod's change (old null: added; new null: deleted). Pods that finished (Succeeded, Failed)
  // leave their group. Returns the key of a group that gained a member, or "".
  std::string track(const pod_info* old_p, const pod_info* new_p);

  const pod_group* group(const std::string& key) const override;
  size_t members(const std::string& key) const override;
  pod_group_ptr group_ptr(const std::string& key) const;
  // The members the cluster shows bound, by uid (shared until the next change of that set).
  std::shared_ptr<const std::vector<std::string>> bound(const std::string& key);

private:
  struct entry {
    std::unordered_set<std::string> all, bound;
    std::shared_ptr<const std::vector<std::string>> bound_list;  // null: rebuild
  };
  cluster_objects_ptr objects_;
  std::unordered_map<std::string, entry> groups_;
};

}  // namespace kas

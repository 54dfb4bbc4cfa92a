#pragma once
// What gang scheduling knows of pod groups beyond one pod's cycle (kube's PodGroupManager): the
// PodGroups and how many pods each has, for PreEnqueue; and the ticket a member carries through
// one attempt of its group, handed out by the queue with the pod.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/pod_group.hpp"

namespace kas::fw {

class group_directory {
public:
  virtual ~group_directory() = default;
  // The PodGroup stored under `key` (pod_info::group_key); null when it does not exist (yet).
  virtual const pod_group* group(const std::string& key) const = 0;
  // Pods of the group the scheduler knows, scheduled or not (pods that finished are not counted).
  virtual size_t members(const std::string& key) const = 0;
};

// A directory with no groups (a caller that has none).
const group_directory& no_groups();

// One attempt of a gang: the queue hands its members out together (one gang at a time), each with
// this ticket; the permit coordinator admits or rejects them together.
struct gang_ticket {
  pod_group_ptr group;  // as the queue knew it when the pod was popped
  std::string key;      // pod_group_key
  uint64_t round = 0;   // the queue's attempt of this group the pod was popped in
  size_t members = 0;   // pods of the group the queue knew then
  // Members the cluster shows bound (by uid), when the pod was popped.
  std::shared_ptr<const std::vector<std::string>> bound;
};

}  // namespace kas::fw

#include "actors/group_members.hpp"

namespace kas {

namespace {

bool finished(const pod_info& p) { return p.phase == "Succeeded" || p.phase == "Failed"; }

}  // namespace

std::vector<std::string> group_members::set_objects(cluster_objects_ptr objects) {
  std::vector<std::string> changed;
  if (objects) {
    for (auto& [key, g] : objects->pod_groups) {
      const pod_group* before = objects_ ? objects_->pod_group_of(key) : nullptr;
      if (before != g.get()) changed.push_back(key);
    }
  }
  objects_ = std::move(objects);
  return changed;
}

std::string group_members::track(const pod_info* old_p, const pod_info* new_p) {
  bool was = old_p && old_p->in_group() && !finished(*old_p);
  bool is = new_p && new_p->in_group() && !finished(*new_p);
  if (was && (!is || old_p->group_key != new_p->group_key)) {
    auto it = groups_.find(old_p->group_key);
    if (it != groups_.end()) {
      it->second.all.erase(old_p->uid);
      if (it->second.bound.erase(old_p->uid)) it->second.bound_list = nullptr;
      if (it->second.all.empty()) groups_.erase(it);
    }
  }
  if (!is) return {};
  auto& e = groups_[new_p->group_key];
  bool added = e.all.insert(new_p->uid).second;
  bool bound_now = !new_p->node_name.empty();
  if (bound_now ? e.bound.insert(new_p->uid).second : e.bound.erase(new_p->uid) > 0) e.bound_list = nullptr;
  return added || bound_now ? new_p->group_key : std::string();
}

const pod_group* group_members::group(const std::string& key) const {
  return objects_ ? objects_->pod_group_of(key) : nullptr;
}

pod_group_ptr group_members::group_ptr(const std::string& key) const {
  if (!objects_) return nullptr;
  auto it = objects_->pod_groups.find(key);
  return it == objects_->pod_groups.end() ? nullptr : it->second;
}

size_t group_members::members(const std::string& key) const {
  auto it = groups_.find(key);
  return it == groups_.end() ? 0 : it->second.all.size();
}

std::shared_ptr<const std::vector<std::string>> group_members::bound(const std::string& key) {
  auto it = groups_.find(key);
  if (it == groups_.end()) return std::make_shared<const std::vector<std::string>>();
  auto& e = it->second;
  if (!e.bound_list) e.bound_list = std::make_shared<const std::vector<std::string>>(e.bound.begin(), e.bound.end());
  return e.bound_list;
}

}  // namespace kas

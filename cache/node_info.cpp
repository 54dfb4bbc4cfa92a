#include "cache/node_info.hpp"

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include <algorithm>

#include "cache/attachable_volumes.hpp"
#include "messages/quantity.hpp"

namespace kas {

namespace {
struct image_names {
  std::shared_mutex mu;
  std::unordered_map<std::string, uint32_t> ids;
};
image_names& names() {
  static image_names* n = new image_names;  // never destroyed: compiled nodes may outlive statics
  return *n;
}
}  // namespace

uint32_t find_image_name(std::string_view name) {
  auto& n = names();
  std::shared_lock<std::shared_mutex> lock(n.mu);
  auto it = n.ids.find(std::string(name));
  return it == n.ids.end() ? no_image_id : it->second;
}

uint32_t intern_image_name(std::string_view name) {
  if (uint32_t id = find_image_name(name); id != no_image_id) return id;
  auto& n = names();
  std::unique_lock<std::shared_mutex> lock(n.mu);
  return n.ids.emplace(std::string(name), static_cast<uint32_t>(n.ids.size())).first->second;
}

namespace {

// Order of pods is not semantic: swap-remove, as kube's removeFromSlice does.
void swap_remove(std::vector<pod_info_ptr>& v, const std::string& uid) {
  auto it = std::find_if(v.begin(), v.end(), [&](const pod_info_ptr& p) { return p->uid == uid; });
  if (it == v.end()) return;
  *it = std::move(v.back());
  v.pop_back();
}

}  // namespace

void node_info::add_pod(pod_info_ptr p) {
  requested.add(p->requests);
  non_zero_requested.add(p->non_zero_requests);
  used_ports.insert(used_ports.end(), p->host_ports.begin(), p->host_ports.end());
  if (p->has_pod_affinity()) pods_with_affinity.push_back(p);
  if (p->has_required_anti_affinity()) pods_with_required_anti_affinity.push_back(p);
  if (!p->volumes.empty() && has_attachable_volumes(*p)) volume_usage_current = false;
  pods.push_back(std::move(p));
  ++generation;
}

long node_info::position_of(const pod_info_ptr& p, size_t hint) const {
  if (hint < pods.size() && pods[hint].get() == p.get()) return static_cast<long>(hint);
  for (size_t i = pods.size(); i-- > 0;)
    if (pods[i].get() == p.get()) return static_cast<long>(i);
  for (size_t i = 0; i < pods.size(); ++i)
    if (pods[i]->uid == p->uid) return static_cast<long>(i);
  return -1;
}

bool node_info::remove_pod(const pod_info_ptr& p) {
  long at = position_of(p);
  if (at < 0) return false;
  remove_pod_at(static_cast<size_t>(at));
  return true;
}

bool node_info::remove_pod(const std::string& uid) {
  size_t at = 0;
  while (at < pods.size() && pods[at]->uid != uid) ++at;
  if (at == pods.size()) return false;
  remove_pod_at(at);
  return true;
}

void node_info::remove_pod_at(size_t at) {
  const pod_info_ptr p = pods[at];
  const std::string& uid = p->uid;
  // Order of pods is not semantic: swap-remove, as kube does.
  pods.erase_at(at);
  requested.sub(p->requests);
  non_zero_requested.sub(p->non_zero_requests);
  // One entry per port of this pod (a multiset: another pod's identical entry survives).
  for (const auto& hp : p->host_ports) {
    auto u = std::find(used_ports.begin(), used_ports.end(), hp);
    if (u != used_ports.end()) used_ports.erase(u);
  }
  swap_remove(pods_with_affinity, uid);
  swap_remove(pods_with_required_anti_affinity, uid);
  if (!p->volumes.empty() && has_attachable_volumes(*p)) volume_usage_current = false;
  ++generation;
}

const pod_info* node_info::find_pod(const std::string& uid) const {
  for (const auto& p : pods)
    if (p->uid == uid) return p.get();
  return nullptr;
}

bool node_info::port_conflicts(const host_port& want) const {
  if (want.port <= 0) return false;
  const std::string protocol = want.protocol.empty() ? "TCP" : want.protocol;
  const std::string ip = want.ip.empty() ? "0.0.0.0" : want.ip;
  for (const auto& u : used_ports) {
    if (u.port != want.port || u.protocol != protocol) continue;
    if (ip == "0.0.0.0" || u.ip == "0.0.0.0" || u.ip == ip) return true;
  }
  return false;
}

namespace {

error at(const std::string& path, const std::string& msg) { return error{path + ": " + msg}; }

template <class Map>
status_or_error fill_allocatable(const Map& m, const std::string& path, resource_list& out) {
  for (auto& [name, q] : m) {
    auto parsed = parse_quantity(q.string());
    if (!parsed) return at(path + "." + name, parsed.err().message);
    if (parsed->negative()) return at(path + "." + name, "must be greater than or equal to 0");
    if (name == res_cpu)
      out.milli_cpu = parsed->milli_value();
    else if (name == res_memory)
      out.memory = parsed->value();
    else if (name == res_ephemeral_storage)
      out.ephemeral_storage = parsed->value();
    else if (name == res_pods)
      out.allowed_pod_number = parsed->value();
    else if (is_scalar_resource_name(name))
      out.set_scalar(name, parsed->value());
  }
  return ok_t{};
}

}  // namespace

result<std::shared_ptr<node_info>> compile_node(std::shared_ptr<const k8s::core::Node> node) {
  auto n = std::make_shared<node_info>();
  n->name = node->metadata().name();
  std::vector<label_map::entry> labels;
  for (auto& [k, v] : node->metadata().labels()) labels.emplace_back(k, v);
  n->labels = label_map(std::move(labels));
  n->unschedulable = node->spec().unschedulable();
  for (int i = 0; i < node->spec().taints_size(); ++i) {
    const auto& t = node->spec().taints(i);
    taint_effect e = parse_taint_effect(t.effect());
    if (e == taint_effect::none)
      return at("spec.taints[" + std::to_string(i) + "].effect",
                "Unsupported value: \"" + t.effect() +
                    "\": supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\"");
    n->taints.push_back(taint{t.key(), t.value(), e});
  }
  // A manifest often carries only capacity; the kubelet would report allocatable = capacity then.
  const auto& status = node->status();
  auto st = status.allocatable().empty() ? fill_allocatable(status.capacity(), "status.capacity", n->allocatable)
                                         : fill_allocatable(status.allocatable(), "status.allocatable", n->allocatable);
  if (!st) return st.err();
  for (const auto& img : status.images())
    for (const auto& name : img.names()) n->images.push_back(image_state{name, img.size_bytes(), intern_image_name(name)});
  n->node = std::move(node);
  return n;
}

}  // namespace kas

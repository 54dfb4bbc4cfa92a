#include "plugins/image_locality/image_locality.hpp"

namespace kas::plugins {

namespace {

struct image_spread {
  std::string name;        // normalized
  int64_t num_nodes = 0;   // snapshot nodes holding it
};

struct pre_filter_state final : fw::state_data {
  std::vector<image_spread> images;  // one per distinct normalized pod image
  int64_t total_nodes = 0;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_filter_state>(*this); }
};

const image_state* find_image(const node_info& node, const std::string& name) {
  for (auto& img : node.images)
    if (img.name == name) return &img;
  return nullptr;
}

int64_t num_containers(const pod_info& pod) {
  if (!pod.pod) return static_cast<int64_t>(pod.images.size());
  return pod.pod->spec().init_containers_size() + pod.pod->spec().containers_size();
}

}  // namespace

std::string normalized_image_name(const std::string& name) {
  auto colon = name.rfind(':');
  auto slash = name.rfind('/');
  // kube compares strings.LastIndex results, where "absent" is -1.
  long c = colon == std::string::npos ? -1 : static_cast<long>(colon);
  long s = slash == std::string::npos ? -1 : static_cast<long>(slash);
  return c <= s ? name + ":latest" : name;
}

int64_t image_priority(int64_t sum_scores, int64_t num_containers) {
  int64_t max_threshold = image_max_container_threshold * num_containers;
  if (sum_scores < image_min_threshold) {
    sum_scores = image_min_threshold;
  } else if (sum_scores > max_threshold) {
    sum_scores = max_threshold;
  }
  return fw::max_node_score * (sum_scores - image_min_threshold) / (max_threshold - image_min_threshold);
}

// Like kube's New, args are ignored: the plugin has none.
result<std::shared_ptr<fw::plugin>> image_locality::make(const YAML::Node&, const std::string&, const fw::handle&) {
  return std::shared_ptr<fw::plugin>(std::make_shared<image_locality>());
}

fw::status image_locality::pre_filter(fw::cycle_state& state, const pod_info& pod, const snapshot& snap,
                                      fw::pre_filter_result&) const {
  if (pod.images.empty()) return fw::status::skip();
  auto s = std::make_shared<pre_filter_state>();
  s->total_nodes = static_cast<int64_t>(snap.size());
  for (auto& img : pod.images) {
    auto n = normalized_image_name(img);
    bool seen = false;
    for (auto& e : s->images) seen = seen || e.name == n;
    if (!seen) s->images.push_back({std::move(n), 0});
  }
  for (size_t i = 0; i < snap.size(); ++i) {
    const node_info& node = snap.node(i);
    if (node.images.empty()) continue;
    for (auto& e : s->images)
      if (find_image(node, e.name)) ++e.num_nodes;
  }
  state.write(state_key, std::move(s));
  return fw::status::skip();
}

fw::status image_locality::score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                                 int64_t& out) const {
  const auto* s = state.read_as<pre_filter_state>(state_key);
  int64_t sum = 0;
  for (auto& img : pod.images) {
    auto n = normalized_image_name(img);
    const image_state* on_node = find_image(node, n);
    if (!on_node) continue;
    double spread = 1.0;
    if (s && s->total_nodes > 0) {
      for (auto& e : s->images)
        if (e.name == n) spread = static_cast<double>(e.num_nodes) / static_cast<double>(s->total_nodes);
    }
    sum += static_cast<int64_t>(static_cast<double>(on_node->size_bytes) * spread);
  }
  out = image_priority(sum, num_containers(pod));
  return fw::status::ok();
}

}  // namespace kas::plugins

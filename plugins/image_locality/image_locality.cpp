#include "plugins/image_locality/image_locality.hpp"

namespace kas::plugins {

namespace {

// One entry per pod image (duplicates kept: kube sums per container).
struct image_spread {
  std::string name;       // normalized
  uint32_t id = no_image_id;  // find_image_name(name): no node reported it when no_image_id
  int64_t num_nodes = 0;  // snapshot nodes holding it
};

struct pre_score_state final : fw::state_data {
  std::vector<image_spread> images;  // aligned with pod_info::images
  int64_t total_nodes = 0;
  std::shared_ptr<fw::state_data> clone() const override { return std::make_shared<pre_score_state>(*this); }
};

const image_state* find_image(const node_info& node, const std::string& name) {
  for (auto& img : node.images)
    if (img.name == name) return &img;
  return nullptr;
}

const image_state* find_image(const node_info& node, uint32_t id) {
  if (id == no_image_id) return nullptr;
  for (auto& img : node.images)
    if (img.id == id) return &img;
  return nullptr;
}

// kube's ImageStateSummary.NumNodes, kept by the snapshot.
int64_t count_nodes_holding(const snapshot& snap, const std::string& name) { return snap.image_num_nodes(name); }

int64_t num_containers(const pod_info& pod) {
  if (!pod.pod) return static_cast<int64_t>(pod.images.size());
  return pod.pod->spec().init_containers_size() + pod.pod->spec().containers_size();
}

// kube's scaledImageScore: the size scaled by the share of nodes holding the image.
int64_t scaled_image_score(int64_t size_bytes, int64_t num_nodes, int64_t total_nodes) {
  double spread = total_nodes > 0 ? static_cast<double>(num_nodes) / static_cast<double>(total_nodes) : 1.0;
  return static_cast<int64_t>(static_cast<double>(size_bytes) * spread);
}

// Score without PreScore's state: the spread of each pod image the node holds, counted over the
// snapshot now, or over the node alone when there is no snapshot.
int64_t sum_image_scores_uncached(const pod_info& pod, const node_info& node, const snapshot* snap) {
  int64_t sum = 0;
  for (auto& img : pod.images) {
    auto n = normalized_image_name(img);
    const image_state* on_node = find_image(node, n);
    if (!on_node) continue;
    if (snap)
      sum += scaled_image_score(on_node->size_bytes, count_nodes_holding(*snap, n), static_cast<int64_t>(snap->size()));
    else
      sum += scaled_image_score(on_node->size_bytes, 1, 1);
  }
  return sum;
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

fw::status image_locality::pre_score(fw::cycle_state& state, const pod_info& pod,
                                      const std::vector<const node_info*>&) const {
  if (pod.images.empty()) return fw::status::skip();
  const snapshot* snap = state.snapshot();
  if (!snap) return fw::status::ok();  // Score falls back to the node alone
  auto s = std::make_shared<pre_score_state>();
  s->total_nodes = static_cast<int64_t>(snap->size());
  s->images.reserve(pod.images.size());
  for (auto& img : pod.images) {
    image_spread e{normalized_image_name(img), no_image_id, -1};
    e.id = find_image_name(e.name);
    for (auto& prev : s->images)
      if (prev.name == e.name) e.num_nodes = prev.num_nodes;  // a duplicate: counted once
    if (e.num_nodes < 0) e.num_nodes = count_nodes_holding(*snap, e.name);
    s->images.push_back(std::move(e));
  }
  state.write(pre_score_key, std::move(s));
  return fw::status::ok();
}

fw::status image_locality::score(const fw::cycle_state& state, const pod_info& pod, const node_info& node,
                                 int64_t& out) const {
  const auto* s = state.read_as<pre_score_state>(pre_score_key);
  int64_t sum = 0;
  if (s && s->images.size() == pod.images.size()) {
    for (auto& e : s->images)
      if (const image_state* on_node = find_image(node, e.id))
        sum += scaled_image_score(on_node->size_bytes, e.num_nodes, s->total_nodes);
  } else {
    sum = sum_image_scores_uncached(pod, node, state.snapshot());
  }
  out = image_priority(sum, num_containers(pod));
  return fw::status::ok();
}

// Nodes that report no images all score what an image sum of 0 scores.
bool image_locality::score_hot(const fw::cycle_state& state, const pod_info& pod, const node_hot* const* hot, size_t n,
                               int64_t* out) const {
  const auto* s = state.read_as<pre_score_state>(pre_score_key);
  if (!s || s->images.size() != pod.images.size()) return false;
  for (size_t i = 0; i < n; ++i)
    if (hot[i]->has(node_hot::has_images)) return false;
  std::fill(out, out + n, image_priority(0, num_containers(pod)));
  return true;
}

fw::status image_locality::score_nodes(const fw::cycle_state& state, const pod_info& pod,
                                       const node_info* const* nodes, size_t n, int64_t* out) const {
  const auto* s = state.read_as<pre_score_state>(pre_score_key);
  if (!s || s->images.size() != pod.images.size()) return fw::score_plugin::score_nodes(state, pod, nodes, n, out);
  const int64_t containers = num_containers(pod);
  for (size_t i = 0; i < n; ++i) {
    const node_info& node = *nodes[i];
    int64_t sum = 0;
    if (!node.images.empty())
      for (auto& e : s->images)
        if (const image_state* on_node = find_image(node, e.id))
          sum += scaled_image_score(on_node->size_bytes, e.num_nodes, s->total_nodes);
    out[i] = image_priority(sum, containers);
  }
  return fw::status::ok();
}

}  // namespace kas::plugins

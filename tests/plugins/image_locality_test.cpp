// ImageLocality, table-driven after kube's image_locality_test.go.
#include <gtest/gtest.h>

#include "cache/snapshot.hpp"
#include "plugins/image_locality/image_locality.hpp"
#include "tests/plugins/fixtures.hpp"

namespace kas {
namespace {

using plugins::image_locality;
using test::node_from_yaml;
using test::pod_from_yaml;

constexpr int64_t mb = 1024 * 1024;

// A node holding images, each {names..., size in MB}.
std::shared_ptr<node_info> node_with_images(const std::string& name,
                                            const std::vector<std::pair<std::vector<std::string>, int64_t>>& images) {
  std::string y = "metadata: {name: " + name + "}\nstatus:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n";
  if (!images.empty()) y += "  images:\n";
  for (auto& [names, size] : images) {
    y += "  - names: [";
    for (size_t i = 0; i < names.size(); ++i) y += (i ? ", " : "") + names[i];
    y += "]\n    sizeBytes: " + std::to_string(size * mb) + "\n";
  }
  return node_from_yaml(y);
}

pod_info_ptr pod_with_images(const std::vector<std::string>& images, const std::vector<std::string>& init = {}) {
  std::string y = "metadata: {name: p, namespace: default, uid: p}\nspec:\n";
  if (!init.empty()) y += "  initContainers:\n";
  for (size_t i = 0; i < init.size(); ++i) y += "  - {name: i" + std::to_string(i) + ", image: \"" + init[i] + "\"}\n";
  y += "  containers:\n";
  for (size_t i = 0; i < images.size(); ++i) y += "  - {name: c" + std::to_string(i) + ", image: \"" + images[i] + "\"}\n";
  return pod_from_yaml(y);
}

// How the plugin is enabled in the profile, and what the cycle_state carries.
enum class mode {
  pre_score_and_score,  // the default profile
  score_only,           // PreScore not enabled: Score scans the snapshot itself
  no_snapshot,          // a cycle_state built by hand, Score only: the node stands alone
};

// Scores `nodes` (all of them feasible, and the whole snapshot) as the framework would: a PreScore
// Skip scores every node 0.
std::vector<int64_t> run(const pod_info& pod, const std::vector<std::shared_ptr<node_info>>& nodes,
                         mode m = mode::pre_score_and_score) {
  auto pl = image_locality::make(YAML::Node(), "args", fw::handle{});
  EXPECT_TRUE(pl);
  snapshot snap;
  uint64_t gen = 0;
  for (auto& n : nodes) snap = snap.with_added_node(n, ++gen);
  fw::cycle_state state;
  if (m != mode::no_snapshot) state.set_snapshot(std::make_shared<const snapshot>(snap));
  std::vector<int64_t> out;
  if (m == mode::pre_score_and_score) {
    std::vector<const node_info*> feasible;
    for (auto& n : nodes) feasible.push_back(n.get());
    auto& ps = dynamic_cast<const fw::pre_score_plugin&>(**pl);
    auto s = ps.pre_score(state, pod, feasible);
    EXPECT_TRUE(s.is_success() || s.is_skip());
    if (s.is_skip()) return std::vector<int64_t>(nodes.size(), 0);
  }
  auto& sc = dynamic_cast<const fw::score_plugin&>(**pl);
  for (auto& n : nodes) {
    int64_t v = -1;
    EXPECT_TRUE(sc.score(state, pod, *n, v).is_success());
    out.push_back(v);
  }
  return out;
}

TEST(ImageLocality, Score) {
  // kube's fixtures: node1 holds the 40, 300 and 2000 MB images, node2 the 250 and 10 MB ones.
  auto node1 = node_with_images("node1", {{{"gcr.io/40:latest", "gcr.io/40:v1"}, 40},
                                          {{"gcr.io/300:latest", "gcr.io/300:v1"}, 300},
                                          {{"gcr.io/2000:latest"}, 2000}});
  auto node2 = node_with_images("node2", {{{"gcr.io/250:latest"}, 250}, {{"gcr.io/10:latest", "gcr.io/10:v1"}, 10}});
  auto node3 = node_with_images("node3", {});
  auto node4 = node_with_images("node4", {{{"gcr.io/10:v1"}, 10}});
  struct tc {
    const char* name;
    pod_info_ptr pod;
    std::vector<std::shared_ptr<node_info>> nodes;
    std::vector<int64_t> want;
  } cases[] = {
    // node1: 40 MB x 1/2 = 20 MB, below the 23 MB floor. node2: 250 MB x 1/2 -> (125-23)*100/(2000-23).
    {"two images, one per node", pod_with_images({"gcr.io/40", "gcr.io/250"}), {node1, node2}, {0, 5}},
    // node1: (40 + 300) x 1/2 = 170 MB -> 7.
    {"two images on one node", pod_with_images({"gcr.io/40", "gcr.io/300"}), {node1, node2}, {7, 0}},
    // node1: 2000 MB x 1/2 = 1000 MB -> 49; node2: 10 MB x 1/2 -> 0.
    {"a large image and a small one", pod_with_images({"gcr.io/10:v1", "gcr.io/2000"}), {node1, node2}, {49, 0}},
    // The 10:v1 image is on node2 and node4 of 4 nodes: 10 MB x 2/4, far below the floor.
    {"spread over nodes scales the size down", pod_with_images({"gcr.io/10:v1"}), {node1, node2, node3, node4},
     {0, 0, 0, 0}},
    // One container: max 1000 MB. 2000 MB x 1/3 = 666 MB -> (666.67-23)*100/(1000-23) = 65.
    {"clamped per container", pod_with_images({"gcr.io/2000:latest"}), {node1, node2, node3}, {65, 0, 0}},
    // 2000 MB x 1/1 = 2000 MB > 1000 MB for one container -> 100.
    {"above the container maximum is 100", pod_with_images({"gcr.io/2000"}), {node1}, {100}},
    // Init containers count, both as images and towards the maximum.
    {"init container images count", pod_with_images({"busybox"}, {"gcr.io/2000"}), {node1, node2}, {49, 0}},
    {"no images at all scores 0", pod_with_images({}), {node1}, {0}},
    // The same image twice: kube sums per container, and the maximum grows with each container.
    // node1: 2 x 2000 MB x 1/2 = 2000 MB of 2000 MB -> 100.
    {"a duplicated image counts per container", pod_with_images({"gcr.io/2000", "gcr.io/2000:latest"}),
     {node1, node2}, {100, 0}},
  };
  for (auto& c : cases) {
    EXPECT_EQ(run(*c.pod, c.nodes), c.want) << c.name;
    // kube's ImageLocality is Score-only: a profile that does not enable our PreScore gets the
    // same scores, Score counting the spread over the snapshot itself.
    EXPECT_EQ(run(*c.pod, c.nodes, mode::score_only), c.want) << c.name << " (enabled only at score)";
  }
}

TEST(ImageLocality, WithoutSnapshotTheNodeStandsAlone) {
  // A cycle_state built by hand carries no snapshot: each image the node holds has spread 1/1.
  auto node1 = node_with_images("node1", {{{"gcr.io/300:latest"}, 300}});
  auto node2 = node_with_images("node2", {{{"gcr.io/300:latest"}, 300}});
  auto pod = pod_with_images({"gcr.io/300"});
  // With the snapshot: 300 MB x 2/2 -> (300-23)*100/(1000-23) = 28.
  EXPECT_EQ(run(*pod, {node1, node2}), (std::vector<int64_t>{28, 28}));
  EXPECT_EQ(run(*pod, {node1, node2}, mode::no_snapshot), (std::vector<int64_t>{28, 28}));
  // Half the nodes hold it: 300 MB x 1/2 = 150 MB -> 12; without the snapshot the spread is unknown.
  auto node3 = node_with_images("node3", {});
  EXPECT_EQ(run(*pod, {node1, node3}), (std::vector<int64_t>{12, 0}));
  EXPECT_EQ(run(*pod, {node1, node3}, mode::no_snapshot), (std::vector<int64_t>{28, 0}));
}

TEST(ImageLocality, ExtensionPoints) {
  // Score-only upstream; PreScore is our precomputation. No PreFilter any more.
  auto pl = image_locality::make(YAML::Node(), "args", fw::handle{});
  ASSERT_TRUE(pl);
  EXPECT_NE(dynamic_cast<const fw::pre_score_plugin*>(pl->get()), nullptr);
  EXPECT_NE(dynamic_cast<const fw::score_plugin*>(pl->get()), nullptr);
  EXPECT_EQ(dynamic_cast<const fw::pre_filter_plugin*>(pl->get()), nullptr);
}

TEST(ImageLocality, NormalizedImageName) {
  struct tc {
    const char* in;
    const char* want;
  } cases[] = {
    {"nginx", "nginx:latest"},
    {"nginx:1.25", "nginx:1.25"},
    {"gcr.io/40", "gcr.io/40:latest"},
    {"localhost:5000/img", "localhost:5000/img:latest"},
    {"localhost:5000/img:v2", "localhost:5000/img:v2"},
  };
  for (auto& c : cases) EXPECT_EQ(plugins::normalized_image_name(c.in), c.want) << c.in;
}

TEST(ImageLocality, CalculatePriority) {
  EXPECT_EQ(plugins::image_priority(0, 1), 0);
  EXPECT_EQ(plugins::image_priority(23 * mb, 1), 0);
  EXPECT_EQ(plugins::image_priority(1000 * mb, 1), 100);
  EXPECT_EQ(plugins::image_priority(5000 * mb, 2), 100);
  EXPECT_EQ(plugins::image_priority(0, 0), 0);
}

}  // namespace
}  // namespace kas

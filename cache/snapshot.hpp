#pragma once
// snapshot: an immutable, generation-numbered view of every node_info.
//
// Structural sharing: nodes live in fixed-size chunks of shared_ptr<const node_info>. Replacing one
// node copies that node and its chunk of pointers (64 pointers), never the whole node list, so a
// snapshot per pod costs O(chunk), and old snapshots stay valid for readers still using them.
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/cluster_objects.hpp"
#include "cache/node_hot.hpp"
#include "cache/node_info.hpp"
#include "cache/topology_index.hpp"

namespace kas {

class snapshot {
public:
  static constexpr size_t chunk_size = 64;
  // A chunk's nodes, and beside them their hot facts (hot[k] is hot_of(*(*this)[k]), kept so by
  // every builder below).
  struct chunk {
    std::vector<node_info_ptr> nodes;
    std::array<node_hot, chunk_size> hot;
    node_info_ptr& operator[](size_t k) { return nodes[k]; }
    const node_info_ptr& operator[](size_t k) const { return nodes[k]; }
    const node_info_ptr& at(size_t k) const { return nodes[k]; }
    size_t size() const { return nodes.size(); }
    bool empty() const { return nodes.empty(); }
  };
  using nominated_map = std::unordered_map<std::string, std::vector<pod_info_ptr>>;

  snapshot()
    : objects_(std::make_shared<const cluster_objects>()),
      nominated_(std::make_shared<const nominated_map>()),
      affinity_nodes_(std::make_shared<const std::vector<uint32_t>>()),
      anti_affinity_nodes_(std::make_shared<const std::vector<uint32_t>>()),
      image_nodes_(std::make_shared<const std::unordered_map<std::string, int64_t>>()) {
    auto shards = std::make_shared<index_shards_t>();
    for (auto& shard : *shards) shard = std::make_shared<const index_map>();
    index_ = std::move(shards);
  }

  // Namespaces, workload selectors, PDBs (never null).
  const cluster_objects& objects() const { return *objects_; }
  const cluster_objects_ptr& objects_ptr() const { return objects_; }
  // Pods nominated to a node (status.nominatedNodeName) and not yet bound, for kube's
  // RunFilterPluginsWithNominatedPods; null when none.
  const std::vector<pod_info_ptr>* nominated_pods(std::string_view node) const {
    auto it = nominated_->find(std::string(node));
    return it == nominated_->end() || it->second.empty() ? nullptr : &it->second;
  }
  bool has_nominated_pods() const { return !nominated_->empty(); }
  const nominated_map& nominated() const { return *nominated_; }
  // Indexes of the nodes that have a pod with inter-pod (anti-)affinity terms, and a pod with a
  // required anti-affinity term (kube's HavePodsWithAffinityList and
  // HavePodsWithRequiredAntiAffinityList), so InterPodAffinity need not visit every node.
  const std::vector<uint32_t>& nodes_with_affinity_pods() const { return *affinity_nodes_; }
  const std::vector<uint32_t>& nodes_with_required_anti_affinity_pods() const { return *anti_affinity_nodes_; }
  // How many nodes hold an image (kube's ImageStateSummary.NumNodes), for ImageLocality.
  int64_t image_num_nodes(const std::string& image) const {
    auto it = image_nodes_->find(image);
    return it == image_nodes_->end() ? 0 : it->second;
  }

  // Pod counts per topology domain (see topology_index.hpp). Only the scheduler_cache fills it;
  // a snapshot built otherwise has no counters, and plugins then count by scanning.
  const topology_index& topology() const { return topology_; }
  // For the owner of a working copy (scheduler_cache's topology_index_writer): the index is shared
  // with published copies part by part, and the writer copies a part before changing it.
  topology_index& mutable_topology() { return topology_; }

  size_t size() const { return size_; }
  uint64_t generation() const { return generation_; }
  const node_info& node(size_t i) const { return *chunks_[i / chunk_size]->at(i % chunk_size); }
  const node_info_ptr& node_ptr(size_t i) const { return chunks_[i / chunk_size]->at(i % chunk_size); }
  // The hot facts of node(i), for loops over many nodes (see node_hot.hpp).
  const node_hot& hot(size_t i) const { return chunks_[i / chunk_size]->hot[i % chunk_size]; }
  // How many nodes from i on have their records contiguous with hot(i) (the rest of its chunk):
  // (&hot(i))[0 .. hot_run(i)) are the records of nodes i, i + 1, ...
  size_t hot_run(size_t i) const { return std::min(chunk_size - i % chunk_size, size_ - i); }
  // Index of a node by name, or -1.
  long index_of(std::string_view name) const;
  const node_info* find(std::string_view name) const {
    long i = index_of(name);
    return i < 0 ? nullptr : &node(static_cast<size_t>(i));
  }

  // Builders: each returns a new snapshot sharing every untouched chunk with this one.
  snapshot with_node(size_t i, node_info_ptr n, uint64_t generation) const;
  snapshot with_added_node(node_info_ptr n, uint64_t generation) const;
  // The same, in place: for the owner of a working copy (scheduler_cache), which must not have
  // handed this object out (published snapshots are copies; they may share the index, and then it
  // is copied).
  void add_node(node_info_ptr n, uint64_t generation);
  // with_node in place: a chunk no published snapshot shares is changed where it is; a shared one
  // is copied first. The cache replaces a node on every pod change, and copying the whole chunk
  // list and a 64-node chunk each time was its largest cost.
  void set_node(size_t i, node_info_ptr n, uint64_t generation);
  // Removal moves the last node into the hole (order is not semantic; the round-robin start index
  // is), so it costs two chunks and an index update.
  snapshot without_node(std::string_view name, uint64_t generation) const;
  snapshot with_objects(cluster_objects_ptr objects, uint64_t generation) const;

  snapshot with_nominated(std::shared_ptr<const nominated_map> nominated, uint64_t generation) const;

private:
  using index_map = std::unordered_map<std::string, size_t>;
  std::vector<std::shared_ptr<const chunk>> chunks_;
  // The name index, sharded by name hash: a node added or removed copies one shard (~nodes/64
  // entries) when a published snapshot shares it, not the whole index. Copying the whole index on
  // every churned node was most of the cache's cost per change at 5000 nodes.
  // The shard array sits behind one pointer: a published snapshot is copied (and later released,
  // often on another core) once per pod, and 64 reference counts more per copy were half its cost.
  // Only node additions and removals write it.
  static constexpr size_t index_shards = 64;
  using index_shards_t = std::array<std::shared_ptr<const index_map>, index_shards>;
  std::shared_ptr<const index_shards_t> index_;
  static size_t shard_of(std::string_view name) { return std::hash<std::string_view>{}(name) % index_shards; }
  index_map& mutable_index(std::string_view name);  // copy-on-write of the name's shard
  cluster_objects_ptr objects_;
  std::shared_ptr<const nominated_map> nominated_;
  // Kept by the builders; copied only when a node's membership changes (or a node is removed).
  std::shared_ptr<const std::vector<uint32_t>> affinity_nodes_, anti_affinity_nodes_;
  // Image name -> nodes holding it; copied only when a node's images change (node add, update or
  // removal), never on a pod change.
  std::shared_ptr<const std::unordered_map<std::string, int64_t>> image_nodes_;
  void update_image_counts(const node_info* before, const node_info* after);
  void update_affinity_lists(uint32_t index, const node_info* before, const node_info& after);
  void rebuild_affinity_lists();
  topology_index topology_;
  size_t size_ = 0;
  uint64_t generation_ = 0;
};

using snapshot_ptr = std::shared_ptr<const snapshot>;

// Moves the pod `uid` to `node` in a nominated map, holding `p` there; an empty `node` removes it.
// `from` is the node it is listed under now, when the caller knows it (null: any node).
void renominate(snapshot::nominated_map& m, const std::string& uid, const pod_info_ptr& p, const std::string& node,
                const std::string* from);

}  // namespace kas

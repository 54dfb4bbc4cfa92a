#include "cache/snapshot.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>

namespace kas {

long snapshot::index_of(std::string_view name) const {
  const index_map& shard = *(*index_)[shard_of(name)];
  // The map has no lookup by string_view (C++17): reuse one key buffer rather than allocate a
  // string per lookup (the framework looks up every name of a PreFilterResult).
  thread_local std::string key;
  key.assign(name.data(), name.size());
  auto it = shard.find(key);
  return it == shard.end() ? -1 : static_cast<long>(it->second);
}

snapshot::index_map& snapshot::mutable_index(std::string_view name) {
  if (index_.use_count() != 1)
    index_ = std::make_shared<index_shards_t>(*index_);
  else
    std::atomic_thread_fence(std::memory_order_acquire);  // as in set_node: the last other holder is done
  auto& shard = const_cast<index_shards_t&>(*index_)[shard_of(name)];
  if (shard.use_count() != 1) shard = std::make_shared<index_map>(*shard);
  return const_cast<index_map&>(*shard);
}

snapshot snapshot::with_node(size_t i, node_info_ptr n, uint64_t generation) const {
  assert(i < size_);
  snapshot out = *this;  // shares every chunk and the index
  const size_t c = i / chunk_size;
  auto replaced = std::make_shared<chunk>(*chunks_[c]);
  const std::string& old_name = (*replaced)[i % chunk_size]->name;
  if (old_name != n->name) {
    out.mutable_index(old_name).erase(old_name);
    out.mutable_index(n->name)[n->name] = i;
  }
  out.update_affinity_lists(static_cast<uint32_t>(i), (*replaced)[i % chunk_size].get(), *n);
  out.update_image_counts((*replaced)[i % chunk_size].get(), n.get());
  replaced->hot[i % chunk_size] = hot_of(*n);
  (*replaced)[i % chunk_size] = std::move(n);
  out.chunks_[c] = std::move(replaced);
  out.generation_ = generation;
  return out;
}

void snapshot::set_node(size_t i, node_info_ptr n, uint64_t generation) {
  assert(i < size_);
  const size_t c = i / chunk_size;
  auto& slot_chunk = chunks_[c];
  if (slot_chunk.use_count() != 1) {
    slot_chunk = std::make_shared<chunk>(*slot_chunk);
  } else {
    // Sole owner: whoever held it last released it (an acq_rel decrement), so its reads are done.
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  auto& mine = const_cast<chunk&>(*slot_chunk);
  node_info_ptr& slot = mine[i % chunk_size];
  if (slot->name != n->name) {
    mutable_index(slot->name).erase(slot->name);
    mutable_index(n->name)[n->name] = i;
  }
  update_affinity_lists(static_cast<uint32_t>(i), slot.get(), *n);
  update_image_counts(slot.get(), n.get());
  mine.hot[i % chunk_size] = hot_of(*n);
  slot = std::move(n);
  generation_ = generation;
}

snapshot snapshot::with_added_node(node_info_ptr n, uint64_t generation) const {
  snapshot out = *this;
  out.add_node(std::move(n), generation);
  return out;
}

void snapshot::add_node(node_info_ptr n, uint64_t generation) {
  assert(index_of(n->name) < 0);
  const size_t i = size_;
  const bool new_chunk = i % chunk_size == 0;
  std::shared_ptr<chunk> tail;
  if (new_chunk) {
    tail = std::make_shared<chunk>();
    tail->nodes.reserve(chunk_size);
  } else {
    tail = std::make_shared<chunk>(*chunks_.back());
  }
  // The name index is extended in place when no other snapshot shares it (the cache adding nodes
  // one by one before publishing); copying it every time made adding n nodes O(n^2).
  mutable_index(n->name)[n->name] = i;
  update_affinity_lists(static_cast<uint32_t>(i), nullptr, *n);
  update_image_counts(nullptr, n.get());
  tail->hot[i % chunk_size] = hot_of(*n);
  tail->nodes.push_back(std::move(n));
  if (new_chunk)
    chunks_.push_back(std::move(tail));
  else
    chunks_.back() = std::move(tail);
  size_ = size_ + 1;
  generation_ = generation;
}

snapshot snapshot::without_node(std::string_view name, uint64_t generation) const {
  long found = index_of(name);
  if (found < 0) {
    snapshot out = *this;
    out.generation_ = generation;
    return out;
  }
  const size_t i = static_cast<size_t>(found);
  const size_t last = size_ - 1;
  snapshot out = *this;
  out.update_image_counts(&node(i), nullptr);
  out.mutable_index(name).erase(std::string(name));
  if (i != last) {
    // Move the last node into the hole.
    const node_info_ptr& moved = node_ptr(last);
    out.mutable_index(moved->name)[moved->name] = i;
    auto hole = std::make_shared<chunk>(*chunks_[i / chunk_size]);
    (*hole)[i % chunk_size] = moved;
    hole->hot[i % chunk_size] = hot(last);
    out.chunks_[i / chunk_size] = std::move(hole);
  }
  // Drop the last slot (the chunk may be the one just copied above).
  auto tail = std::make_shared<chunk>(*out.chunks_[last / chunk_size]);
  tail->nodes.pop_back();
  if (tail->empty())
    out.chunks_.pop_back();
  else
    out.chunks_[last / chunk_size] = std::move(tail);
  out.size_ = last;
  out.generation_ = generation;
  // The last node moved into the hole: indexes changed, so the lists are rebuilt (node removal is
  // rare; O(nodes)).
  out.rebuild_affinity_lists();
  return out;
}

snapshot snapshot::with_objects(cluster_objects_ptr objects, uint64_t generation) const {
  snapshot out = *this;
  out.objects_ = objects ? std::move(objects) : std::make_shared<const cluster_objects>();
  out.generation_ = generation;
  return out;
}

void renominate(snapshot::nominated_map& m, const std::string& uid, const pod_info_ptr& p, const std::string& node,
                const std::string* from) {
  auto drop = [&](snapshot::nominated_map::iterator it) {
    auto& v = it->second;
    v.erase(std::remove_if(v.begin(), v.end(), [&](const pod_info_ptr& q) { return q->uid == uid; }), v.end());
    return v.empty() ? m.erase(it) : std::next(it);
  };
  if (from) {
    if (auto it = m.find(*from); it != m.end()) drop(it);
  } else {
    for (auto it = m.begin(); it != m.end();) it = drop(it);
  }
  if (!node.empty()) m[node].push_back(p);
}

snapshot snapshot::with_nominated(std::shared_ptr<const nominated_map> nominated, uint64_t generation) const {
  snapshot out = *this;
  out.nominated_ = nominated ? std::move(nominated) : std::make_shared<const nominated_map>();
  out.generation_ = generation;
  return out;
}

void snapshot::update_affinity_lists(uint32_t index, const node_info* before, const node_info& after) {
  auto update = [&](std::shared_ptr<const std::vector<uint32_t>>& list, bool had, bool has) {
    if (had == has) return;
    auto v = std::make_shared<std::vector<uint32_t>>(*list);
    if (has) v->push_back(index);
    else v->erase(std::remove(v->begin(), v->end(), index), v->end());
    list = std::move(v);
  };
  update(affinity_nodes_, before && !before->pods_with_affinity.empty(), !after.pods_with_affinity.empty());
  update(anti_affinity_nodes_, before && !before->pods_with_required_anti_affinity.empty(),
         !after.pods_with_required_anti_affinity.empty());
}

void snapshot::update_image_counts(const node_info* before, const node_info* after) {
  static const std::vector<image_state> none;
  const auto& old_images = before ? before->images : none;
  const auto& new_images = after ? after->images : none;
  auto same = [](const std::vector<image_state>& a, const std::vector<image_state>& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k)
      if (a[k].id != b[k].id || a[k].name != b[k].name) return false;
    return true;
  };
  if (same(old_images, new_images)) return;  // pod changes never touch images
  auto m = std::make_shared<std::unordered_map<std::string, int64_t>>(*image_nodes_);
  for (auto& img : old_images)
    if (--(*m)[img.name] <= 0) m->erase(img.name);
  for (auto& img : new_images) ++(*m)[img.name];
  image_nodes_ = std::move(m);
}

void snapshot::rebuild_affinity_lists() {
  auto aff = std::make_shared<std::vector<uint32_t>>();
  auto anti = std::make_shared<std::vector<uint32_t>>();
  for (size_t i = 0; i < size_; ++i) {
    const node_info& n = node(i);
    if (!n.pods_with_affinity.empty()) aff->push_back(static_cast<uint32_t>(i));
    if (!n.pods_with_required_anti_affinity.empty()) anti->push_back(static_cast<uint32_t>(i));
  }
  affinity_nodes_ = std::move(aff);
  anti_affinity_nodes_ = std::move(anti);
}

}  // namespace kas

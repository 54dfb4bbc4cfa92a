#pragma once
// pod_list: the pods of one node_info, as a sequence that copies in O(size / 64).
//
// The cache never changes a published node_info: every pod placed on or removed from a node makes a
// changed copy (node_info::clone). With a plain vector that copy was O(pods on the node), and a node
// holding tens of thousands of pods (scheduler_perf's SchedulingDaemonset puts 30000 on one) made
// scheduling quadratic. Here the pods live in chunks of 64 shared between copies; a change copies
// only the chunk it writes, and only when another list still shares it.
//
// Semantics are a vector's with kube's swap-remove: erase_at moves the last pod into the hole.
// Thread safety: copies may be read concurrently from any thread; a list is written only by its
// owner (the cache building a new node_info), which never writes a chunk another list can see.
//
// Beside each pod the chunk keeps its pod_key: what counting pods by selector reads (interned
// labels, namespace id, terminating), so such loops stream through the chunk instead of touching
// every pod_info and its protobuf object.
#include <atomic>
#include <cstddef>
#include <iterator>
#include <memory>
#include <vector>

#include "cache/pod_info.hpp"

namespace kas {

struct pod_key {
  const void* labels = nullptr;  // pod.labels.identity()
  uint32_t ns = 0;               // intern_namespace(pod.ns)
  bool terminating = false;      // metadata.deletionTimestamp is set
};

inline pod_key pod_key_of(const pod_info& p) {
  return {p.labels.identity(), p.ns_id ? p.ns_id : intern_namespace(p.ns),
          p.pod && p.pod->metadata().has_deletion_timestamp()};
}

class pod_list {
public:
  static constexpr size_t chunk_size = 64;

  pod_list() = default;
  pod_list(const pod_list&) = default;  // shares every chunk
  pod_list& operator=(const pod_list&) = default;
  // A moved-from list is empty (the default would leave its size behind with no chunks).
  pod_list(pod_list&& o) noexcept : chunks_(std::move(o.chunks_)), size_(o.size_) { o.clear(); }
  pod_list& operator=(pod_list&& o) noexcept {
    if (this != &o) {
      chunks_ = std::move(o.chunks_);
      size_ = o.size_;
      o.clear();
    }
    return *this;
  }

  class const_iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = pod_info_ptr;
    using difference_type = std::ptrdiff_t;
    using pointer = const pod_info_ptr*;
    using reference = const pod_info_ptr&;
    const_iterator() = default;
    const_iterator(const pod_list* l, size_t i) : l_(l), i_(i) {}
    reference operator*() const { return (*l_)[i_]; }
    pointer operator->() const { return &(*l_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      auto t = *this;
      ++i_;
      return t;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

  private:
    const pod_list* l_ = nullptr;
    size_t i_ = 0;
  };

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const pod_info_ptr& operator[](size_t i) const { return chunks_[i / chunk_size]->pods[i % chunk_size]; }
  const pod_key& key(size_t i) const { return chunks_[i / chunk_size]->keys[i % chunk_size]; }
  // Calls f(pod_key) for every pod, chunk by chunk.
  template <class F>
  void for_each_key(F&& f) const {
    for (const auto& c : chunks_)
      for (const auto& k : c->keys) f(k);
  }
  const pod_info_ptr& front() const { return (*this)[0]; }
  const pod_info_ptr& back() const { return (*this)[size_ - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

  void push_back(pod_info_ptr p) {
    if (size_ % chunk_size == 0) {
      auto c = std::make_shared<chunk>();
      c->pods.reserve(chunk_size);
      chunks_.push_back(std::move(c));
    }
    chunk& tail = writable(chunks_.size() - 1);
    tail.keys.push_back(pod_key_of(*p));
    tail.pods.push_back(std::move(p));
    ++size_;
  }

  // Moves the last pod into position i and drops the last (kube's NodeInfo.RemovePod order).
  void erase_at(size_t i) {
    const size_t last = size_ - 1;
    if (i != last) {
      chunk& hole = writable(i / chunk_size);
      hole.keys[i % chunk_size] = key(last);
      hole.pods[i % chunk_size] = (*this)[last];
    }
    chunk& tail = writable(last / chunk_size);
    tail.pods.pop_back();
    tail.keys.pop_back();
    if (tail.pods.empty()) chunks_.pop_back();
    --size_;
  }

  void clear() {
    chunks_.clear();
    size_ = 0;
  }

private:
  struct chunk {
    std::vector<pod_info_ptr> pods;
    std::vector<pod_key> keys;  // keys[k] is pod_key_of(*pods[k])
  };
  // The chunk at c, copied first when another list shares it.
  chunk& writable(size_t c) {
    auto& slot = chunks_[c];
    if (slot.use_count() != 1) {
      slot = std::make_shared<chunk>(*slot);
      slot->pods.reserve(chunk_size);
    } else {
      // Sole owner: the last other holder released it with an acq_rel decrement.
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    return *slot;
  }

  std::vector<std::shared_ptr<chunk>> chunks_;
  size_t size_ = 0;
};

}  // namespace kas

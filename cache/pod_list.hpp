#pragma once
// pod_list: the pods of one node_info, as a sequence that copies in O(size / 64).
//
// The cache never changes a published node_info: every pod placed on or removed from a node makes a
// changed copy (node_info::clone). With a plain vector that copy was O(pods on the node), and a node
// holding tens of thousands of pods (scheduler_perf's SchedulingDaemonset puts 30000 on one) made
// scheduling quadratic. Here the pods live in chunks of 64 shared between copies: a change copies
// only the chunk it writes, and only when another list still shares it. The first 64 chunks (4096
// pods, every real node) are listed directly; beyond them chunks are grouped in blocks of 64, also
// shared, so a copy of the daemonset's 30000-pod node takes 64 + 7 references, not 470 (taken and
// dropped for each of the node's two changes per pod). A change past the first 4096 pods also
// copies the block it writes when shared.
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
  static constexpr size_t block_chunks = 64;
  static constexpr size_t block_size = chunk_size * block_chunks;

  pod_list() = default;
  pod_list(const pod_list&) = default;  // shares every chunk and block
  pod_list& operator=(const pod_list&) = default;
  // A moved-from list is empty (the default would leave its size behind with no blocks).
  pod_list(pod_list&& o) noexcept : head_(std::move(o.head_)), blocks_(std::move(o.blocks_)), size_(o.size_) {
    o.clear();
  }
  pod_list& operator=(pod_list&& o) noexcept {
    if (this != &o) {
      head_ = std::move(o.head_);
      blocks_ = std::move(o.blocks_);
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
  const pod_info_ptr& operator[](size_t i) const { return chunk_of(i).pods[i % chunk_size]; }
  const pod_key& key(size_t i) const { return chunk_of(i).keys[i % chunk_size]; }
  // Calls f(i, pod_key, pod) for every pod in order, chunk by chunk: loops over a node's pods
  // (counting them by selector) stream through each chunk instead of locating every index.
  template <class F>
  void for_each(F&& f) const {
    size_t i = 0;
    auto visit = [&](const chunk& c) {
      for (size_t k = 0; k < c.pods.size(); ++k, ++i) f(i, c.keys[k], c.pods[k]);
    };
    for (const auto& c : head_) visit(*c);
    for (const auto& b : blocks_)
      for (const auto& c : b->chunks) visit(*c);
  }
  const pod_info_ptr& front() const { return (*this)[0]; }
  const pod_info_ptr& back() const { return (*this)[size_ - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

  void push_back(pod_info_ptr p) {
    const size_t c = size_ / chunk_size;
    if (size_ % chunk_size == 0) {
      auto fresh = std::make_shared<chunk>();
      fresh->pods.reserve(chunk_size);
      if (c < block_chunks) {
        head_.push_back(std::move(fresh));
      } else {
        const size_t k = c - block_chunks;
        if (k % block_chunks == 0) blocks_.push_back(std::make_shared<block>());
        writable_block(k / block_chunks).chunks.push_back(std::move(fresh));
      }
    }
    chunk& tail = writable_chunk(chunk_slot(c));
    tail.keys.push_back(pod_key_of(*p));
    tail.pods.push_back(std::move(p));
    ++size_;
  }

  // Moves the last pod into position i and drops the last (kube's NodeInfo.RemovePod order).
  void erase_at(size_t i) {
    const size_t last = size_ - 1;
    if (i != last) {
      chunk& hole = writable_chunk(chunk_slot(i / chunk_size));
      hole.keys[i % chunk_size] = key(last);
      hole.pods[i % chunk_size] = (*this)[last];
    }
    const size_t c = last / chunk_size;
    chunk& tail = writable_chunk(chunk_slot(c));
    tail.pods.pop_back();
    tail.keys.pop_back();
    if (tail.pods.empty()) {
      if (c < block_chunks) {
        head_.pop_back();
      } else {
        block& b = writable_block((c - block_chunks) / block_chunks);
        b.chunks.pop_back();
        if (b.chunks.empty()) blocks_.pop_back();
      }
    }
    --size_;
  }

  void clear() {
    head_.clear();
    blocks_.clear();
    size_ = 0;
  }

private:
  struct chunk {
    std::vector<pod_info_ptr> pods;
    std::vector<pod_key> keys;  // keys[k] is pod_key_of(*pods[k])
  };
  struct block {
    std::vector<std::shared_ptr<chunk>> chunks;  // at most block_chunks
  };

  const chunk& chunk_of(size_t i) const {
    size_t c = i / chunk_size;
    if (c < block_chunks) return *head_[c];
    c -= block_chunks;
    return *blocks_[c / block_chunks]->chunks[c % block_chunks];
  }
  // Where chunk c is held (its block copied first when shared).
  std::shared_ptr<chunk>& chunk_slot(size_t c) {
    if (c < block_chunks) return head_[c];
    c -= block_chunks;
    return writable_block(c / block_chunks).chunks[c % block_chunks];
  }

  // `slot`'s object, copied first when another list shares it; a copy gets room for one more
  // element (`room`), as every change of a shared list is one push or one erase.
  template <class T, class Room>
  static T& unshared(std::shared_ptr<T>& slot, Room&& room) {
    if (slot.use_count() != 1) {
      auto copy = std::make_shared<T>();
      room(*copy, *slot);
      *copy = *slot;
      slot = std::move(copy);
    } else {
      // Sole owner: the last other holder released it with an acq_rel decrement.
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    return *slot;
  }
  block& writable_block(size_t b) {
    return unshared(blocks_[b], [](block& to, const block& from) { to.chunks.reserve(from.chunks.size() + 1); });
  }
  chunk& writable_chunk(std::shared_ptr<chunk>& slot) {
    return unshared(slot, [](chunk& to, const chunk&) { to.pods.reserve(chunk_size); });
  }

  std::vector<std::shared_ptr<chunk>> head_;  // the chunks of the first block_size pods
  std::vector<std::shared_ptr<block>> blocks_;  // the chunks after them, block_chunks per block
  size_t size_ = 0;
};

}  // namespace kas

#include "cache/topology_index.hpp"

#include <cassert>

namespace kas {

namespace {

bool hard_tainted(const node_info* n) {
  if (!n) return false;
  for (auto& t : n->taints)
    if (t.effect == taint_effect::no_schedule || t.effect == taint_effect::no_execute) return true;
  return false;
}

}  // namespace

std::string selector_text(const label_selector& s) {
  // Separators that label keys and values cannot contain (they are DNS-ish names).
  std::string out = s.nothing ? "!" : "";
  for (auto& r : s.requirements) {
    out += r.key;
    out += '\x1f';
    out += static_cast<char>('0' + static_cast<int>(r.op));
    out += r.invalid ? '!' : '.';
    if (r.op == selector_op::gt || r.op == selector_op::lt) out += std::to_string(r.number);
    for (auto& v : r.values) {
      out += '\x1f';
      out += v;
    }
    out += '\x1e';
  }
  return out;
}

const topology_index::table* topology_index::find_table(std::string_view topology_key) const {
  for (auto& t : tables_)
    if (t->topology_key == topology_key) return t.get();
  return nullptr;
}

const topology_index::counter* topology_index::find(uint32_t ns, std::string_view selector,
                                                    std::string_view topology_key) const {
  for (auto& c : counters_) {
    const auto& k = *c->key;
    if (k.ns == ns && k.topology_key == topology_key && k.selector_text == selector) return c.get();
  }
  return nullptr;
}

size_t topology_index_writer::table_index(const topology_index& ix, std::string_view key) const {
  for (size_t t = 0; t < ix.tables_.size(); ++t)
    if (ix.tables_[t]->topology_key == key) return t;
  return ix.tables_.size();
}

topology_index::table& topology_index_writer::mutable_table(topology_index& ix, size_t t) {
  auto& slot = ix.tables_[t];
  if (slot.use_count() != 1) slot = std::make_shared<topology_index::table>(*slot);
  else std::atomic_thread_fence(std::memory_order_acquire);
  return const_cast<topology_index::table&>(*slot);
}

topology_index::counter& topology_index_writer::mutable_counter(topology_index& ix, size_t c) {
  auto& slot = ix.counters_[c];
  if (slot.use_count() != 1) slot = std::make_shared<topology_index::counter>(*slot);
  else std::atomic_thread_fence(std::memory_order_acquire);
  return const_cast<topology_index::counter&>(*slot);
}

uint32_t topology_index_writer::domain_id(topology_index& ix, size_t t, const std::string& value) {
  auto& tab = mutable_table(ix, t);
  auto& ids = ids_[tab.topology_key];
  auto [it, fresh] = ids.ids.emplace(value, 0);
  if (fresh) {
    if (!ids.free.empty()) {
      it->second = ids.free.back();
      ids.free.pop_back();
    } else {
      it->second = static_cast<uint32_t>(tab.ids++);
    }
    tab.values.mut(it->second) = value;
  }
  ++tab.nodes.mut(it->second);
  ++tab.nodes_with_key;
  return it->second;
}

void topology_index_writer::release_node(topology_index& ix, size_t t, const std::string& value) {
  auto& tab = mutable_table(ix, t);
  auto& ids = ids_[tab.topology_key];
  auto it = ids.ids.find(value);
  assert(it != ids.ids.end());
  --tab.nodes_with_key;
  if (--tab.nodes.mut(it->second) == 0) {
    // No node holds the domain, so no counter counts a pod in it (pods are counted on their node):
    // the id can serve another value.
    ids.free.push_back(it->second);
    ids.ids.erase(it);
  }
}

bool topology_index_writer::matches(size_t c, const topology_index::counter_key& k, const pod_key& pk,
                                    const label_map& labels) {
  // kube's countPodsMatchSelector: same namespace, terminating pods bypassed, empty selector none.
  if (k.counts_nothing || pk.ns != k.ns || pk.terminating) return false;
  auto& use = uses_[c];
  if (pk.labels && use.memo_labels.identity() == pk.labels) return use.memo_verdict;
  const bool ok = k.selector.matches(labels);
  use.memo_labels = labels;
  use.memo_verdict = ok;
  return ok;
}

void topology_index_writer::add_node_pods(topology_index& ix, size_t c, const node_info& n, uint32_t id,
                                          int delta) {
  const auto key = ix.counters_[c]->key;
  if (key->counts_nothing) return;
  int total = 0;
  for (size_t i = 0; i < n.pods.size(); ++i)
    if (matches(c, *key, n.pods.key(i), n.pods[i]->labels)) ++total;
  if (total != 0) mutable_counter(ix, c).counts.mut(id) += delta * total;
}

void topology_index_writer::node_changed(topology_index& ix, const node_info* before, const node_info* after) {
  ix.hard_tainted_nodes_ += (hard_tainted(after) ? 1 : 0) - (hard_tainted(before) ? 1 : 0);
  for (size_t t = 0; t < ix.tables_.size(); ++t) {
    const std::string& key = ix.tables_[t]->topology_key;
    const std::string* bv = before ? before->labels.get(key) : nullptr;
    const std::string* av = after ? after->labels.get(key) : nullptr;
    // Same pods before and after (the contract), so an unchanged domain changes no count.
    if (before && after && (bv == nullptr) == (av == nullptr) && (!bv || *bv == *av)) continue;
    if (bv) {
      const uint32_t id = ids_[key].ids.at(*bv);
      for (size_t c = 0; c < ix.counters_.size(); ++c)
        if (ix.counters_[c]->key->topology_key == key) add_node_pods(ix, c, *before, id, -1);
      release_node(ix, t, *bv);
    }
    if (av) {
      const uint32_t id = domain_id(ix, t, *av);
      for (size_t c = 0; c < ix.counters_.size(); ++c)
        if (ix.counters_[c]->key->topology_key == key) add_node_pods(ix, c, *after, id, 1);
    }
  }
}

void topology_index_writer::pod_changed(topology_index& ix, const node_info& node, const pod_info& p, int delta) {
  if (ix.counters_.empty()) return;
  const pod_key pk = pod_key_of(p);
  if (pk.terminating) return;
  for (size_t c = 0; c < ix.counters_.size(); ++c) {
    const auto& k = *ix.counters_[c]->key;
    const std::string* v = node.labels.get(k.topology_key);
    if (!v || !matches(c, k, pk, p.labels)) continue;
    const uint32_t id = ids_[k.topology_key].ids.at(*v);
    mutable_counter(ix, c).counts.mut(id) += delta;
  }
}

bool topology_index_writer::ensure(topology_index& ix, const std::string& ns, const label_selector& selector,
                                   const std::string& topology_key) {
  ++clock_;
  const uint32_t ns_id = intern_namespace(ns);
  std::string text = selector_text(selector);
  for (size_t c = 0; c < ix.counters_.size(); ++c) {
    const auto& k = *ix.counters_[c]->key;
    if (k.ns == ns_id && k.topology_key == topology_key && k.selector_text == text) {
      uses_[c].last_used = clock_;
      return false;
    }
  }
  if (max_counters_ == 0) return false;
  if (ix.counters_.size() >= max_counters_) {
    size_t lru = 0;
    for (size_t c = 1; c < uses_.size(); ++c)
      if (uses_[c].last_used < uses_[lru].last_used) lru = c;
    evict(ix, lru);
  }
  auto key = std::make_shared<topology_index::counter_key>();
  key->ns = ns_id;
  key->selector_text = std::move(text);
  key->selector = selector;
  key->counts_nothing = !selector.nothing && selector.requirements.empty();
  key->topology_key = topology_key;
  auto c = std::make_shared<topology_index::counter>();
  c->key = std::move(key);
  ix.counters_.push_back(std::move(c));
  uses_.emplace_back();
  uses_.back().last_used = clock_;
  pending_table_ = table_index(ix, topology_key) == ix.tables_.size();
  if (pending_table_) {
    auto t = std::make_shared<topology_index::table>();
    t->topology_key = topology_key;
    ix.tables_.push_back(std::move(t));
    ids_[topology_key] = table_ids{};
  }
  return true;
}

void topology_index_writer::count_new(topology_index& ix, const node_info& n) {
  const size_t c = ix.counters_.size() - 1;
  const std::string& key = ix.counters_[c]->key->topology_key;
  const std::string* v = n.labels.get(key);
  if (!v) return;
  const size_t t = table_index(ix, key);
  const uint32_t id = pending_table_ ? domain_id(ix, t, *v) : ids_[key].ids.at(*v);
  add_node_pods(ix, c, n, id, 1);
}

void topology_index_writer::evict(topology_index& ix, size_t i) {
  const std::string key = ix.counters_[i]->key->topology_key;
  ix.counters_.erase(ix.counters_.begin() + static_cast<std::ptrdiff_t>(i));
  uses_.erase(uses_.begin() + static_cast<std::ptrdiff_t>(i));
  for (auto& c : ix.counters_)
    if (c->key->topology_key == key) return;
  // The last counter of its key: its table goes too.
  ix.tables_.erase(ix.tables_.begin() + static_cast<std::ptrdiff_t>(table_index(ix, key)));
  ids_.erase(key);
}

}  // namespace kas

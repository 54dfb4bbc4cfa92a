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

bool same_requirement(const selector_requirement& a, const selector_requirement& b) {
  return a.key == b.key && a.op == b.op && a.values == b.values && a.number == b.number && a.invalid == b.invalid;
}

bool same_selector(const label_selector& a, const label_selector& b) {
  if (a.nothing != b.nothing || a.requirements.size() != b.requirements.size()) return false;
  for (size_t i = 0; i < a.requirements.size(); ++i)
    if (!same_requirement(a.requirements[i], b.requirements[i])) return false;
  return true;
}

// The namespaces an affinity term matches without namespace labels: a namespaceSelector that is
// empty matches every namespace, a nil ("nothing") one none beyond the list. nullopt when a
// non-empty namespaceSelector makes it depend on namespace labels.
std::optional<std::pair<bool, std::vector<std::string>>> term_namespaces(const affinity_term& t) {
  bool all = false;
  if (t.namespace_selector) {
    const auto& sel = *t.namespace_selector;
    if (!sel.nothing && !sel.requirements.empty()) return std::nullopt;
    all = !sel.nothing;
  }
  std::vector<std::string> ns;
  if (!all) {
    ns = t.namespaces;
    std::sort(ns.begin(), ns.end());
    ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  }
  return std::make_pair(all, std::move(ns));
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

std::string spread_text(uint32_t ns, const label_selector& selector, std::string_view topology_key) {
  return "s\x1d" + std::to_string(ns) + "\x1d" + selector_text(selector) + "\x1d" + std::string(topology_key);
}

std::optional<std::string> term_text(const affinity_term& merged) {
  auto ns = term_namespaces(merged);
  if (!ns) return std::nullopt;
  std::string out = "t\x1d";
  if (ns->first) {
    out += "*";
  } else {
    for (auto& n : ns->second) {
      out += n;
      out += '\x1f';
    }
  }
  return out + "\x1d" + selector_text(merged.selector) + "\x1d" + merged.topology_key;
}

std::string held_text(const affinity_term& t) {
  std::string out = "h\x1d";
  for (auto& n : t.namespaces) {
    out += n;
    out += '\x1f';
  }
  out += "\x1d";
  out += t.namespace_selector ? "+" + selector_text(*t.namespace_selector) : "-";
  return out + "\x1d" + selector_text(t.selector) + "\x1d" + t.topology_key;
}

bool same_term(const affinity_term& a, const affinity_term& b) {
  if (a.topology_key != b.topology_key || a.namespaces != b.namespaces || !same_selector(a.selector, b.selector))
    return false;
  if (a.namespace_selector.has_value() != b.namespace_selector.has_value()) return false;
  return !a.namespace_selector || same_selector(*a.namespace_selector, *b.namespace_selector);
}

std::shared_ptr<const topology_index::counter_key> spread_key(const std::string& ns, const spread_constraint& c) {
  auto k = std::make_shared<topology_index::counter_key>();
  k->what = topology_index::kind::spread;
  k->ns = intern_namespace(ns);
  k->text = spread_text(k->ns, c.selector, c.topology_key);
  k->selector = c.selector;
  k->counts_nothing = !c.selector.nothing && c.selector.requirements.empty();
  k->topology_key = c.topology_key;
  return k;
}

std::shared_ptr<const topology_index::counter_key> term_key(const affinity_term& t) {
  auto text = term_text(t);
  if (!text) return nullptr;
  auto ns = term_namespaces(t);
  auto k = std::make_shared<topology_index::counter_key>();
  k->what = topology_index::kind::term;
  k->text = std::move(*text);
  k->all_namespaces = ns->first;
  k->namespaces = std::move(ns->second);
  k->selector = t.selector;
  k->topology_key = t.topology_key;
  return k;
}

std::shared_ptr<const topology_index::counter_key> held_key(const affinity_term& t) {
  auto k = std::make_shared<topology_index::counter_key>();
  k->what = topology_index::kind::held;
  k->text = held_text(t);
  k->held = t;
  k->topology_key = t.topology_key;
  return k;
}

const topology_index::table* topology_index::find_table(std::string_view topology_key) const {
  for (auto& t : tables_)
    if (t->topology_key == topology_key) return t.get();
  return nullptr;
}

std::shared_ptr<const topology_index::table> topology_index::find_table_shared(std::string_view topology_key) const {
  for (auto& t : tables_)
    if (t->topology_key == topology_key) return t;
  return nullptr;
}

std::shared_ptr<const topology_index::counter> topology_index::find(std::string_view text) const {
  for (auto& c : counters_)
    if (c->key->text == text) return c;
  return nullptr;
}

bool topology_index::held_complete() const {
  int64_t refs = 0;
  for (auto& c : counters_)
    if (c->key->what == kind::held) refs += c->refs;
  return refs == held_terms_;
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

namespace {

// The shard of `value` in tab.by_value, copied first when a published table shares it.
topology_index::id_map& mutable_shard(topology_index::table& tab, std::string_view value) {
  auto& slot = tab.by_value[topology_index::table::shard_of(value)];
  if (!slot || slot.use_count() != 1) {
    slot = slot ? std::make_shared<topology_index::id_map>(*slot) : std::make_shared<topology_index::id_map>();
  } else {
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  return const_cast<topology_index::id_map&>(*slot);
}

}  // namespace

long topology_index_writer::known_id(const topology_index& ix, const std::string& key, const std::string& value) const {
  // Every domain of a node in the snapshot has an id (node_changed and count_new give them).
  const long id = ix.tables_[table_index(ix, key)]->id_of(value);
  assert(id >= 0);
  return id;
}

uint32_t topology_index_writer::domain_id(topology_index& ix, size_t t, const std::string& value) {
  auto& tab = mutable_table(ix, t);
  long found = tab.id_of(value);
  uint32_t id;
  if (found >= 0) {
    id = static_cast<uint32_t>(found);
  } else {
    auto& free = free_ids_[tab.topology_key];
    if (!free.empty()) {
      id = free.back();
      free.pop_back();
    } else {
      id = static_cast<uint32_t>(tab.ids++);
    }
    mutable_shard(tab, value)[value] = id;
    tab.values.mut(id) = value;
  }
  ++tab.nodes.mut(id);
  ++tab.nodes_with_key;
  return id;
}

void topology_index_writer::release_node(topology_index& ix, size_t t, const std::string& value) {
  auto& tab = mutable_table(ix, t);
  const long id = tab.id_of(value);
  assert(id >= 0);
  --tab.nodes_with_key;
  if (--tab.nodes.mut(static_cast<size_t>(id)) == 0) {
    // No node holds the domain, so no counter counts a pod in it (pods are counted on their node):
    // the id can serve another value.
    free_ids_[tab.topology_key].push_back(static_cast<uint32_t>(id));
    mutable_shard(tab, value).erase(value);
  }
}

int topology_index_writer::weight(size_t c, const topology_index::counter_key& k, const pod_key& pk,
                                  const pod_info& p) {
  using kind = topology_index::kind;
  if (k.what == kind::held) {
    // kube adds one per term of the existing pod (filtering.go's updateWithPod).
    int n = 0;
    for (auto& t : p.required_anti_affinity) n += same_term(t, k.held) ? 1 : 0;
    return n;
  }
  if (k.what == kind::spread) {
    // kube's countPodsMatchSelector: same namespace, terminating pods bypassed, empty selector none.
    if (k.counts_nothing || pk.ns != k.ns || pk.terminating) return 0;
  } else {
    // AffinityTerm.Matches with the merged namespaces; terminating pods count.
    if (!k.all_namespaces && !std::binary_search(k.namespaces.begin(), k.namespaces.end(), p.ns)) return 0;
  }
  auto& use = uses_[c];
  if (pk.labels && use.memo_labels.identity() == pk.labels) return use.memo_verdict ? 1 : 0;
  const bool ok = k.selector.matches(p.labels);
  use.memo_labels = p.labels;
  use.memo_verdict = ok;
  return ok ? 1 : 0;
}

void topology_index_writer::add_node_pods(topology_index& ix, size_t c, const node_info& n, long id, int delta,
                                          bool refs) {
  const auto key = ix.counters_[c]->key;
  if (key->counts_nothing) return;
  int total = 0;
  if (key->what == topology_index::kind::held) {
    for (auto& p : n.pods_with_required_anti_affinity) total += weight(c, *key, pod_key{}, *p);
  } else {
    n.pods.for_each([&](size_t, const pod_key& k, const pod_info_ptr& p) { total += weight(c, *key, k, *p); });
  }
  if (total == 0) return;
  auto& counter = mutable_counter(ix, c);
  if (refs) counter.refs += delta * total;
  if (id >= 0) {
    counter.counts.mut(static_cast<size_t>(id)) += delta * total;
    counter.total += delta * total;
  }
}

namespace {

bool has_scoring_terms(const pod_info& p) {
  return !p.required_affinity.empty() || !p.preferred_affinity.empty() || !p.preferred_anti_affinity.empty();
}

int64_t scoring_pods(const node_info* n) {
  int64_t pods = 0;
  if (n)
    for (auto& p : n->pods_with_affinity) pods += has_scoring_terms(*p) ? 1 : 0;
  return pods;
}

int64_t anti_terms(const node_info* n) {
  int64_t terms = 0;
  if (n)
    for (auto& p : n->pods_with_required_anti_affinity) terms += static_cast<int64_t>(p->required_anti_affinity.size());
  return terms;
}

}  // namespace

void topology_index_writer::node_changed(topology_index& ix, const node_info* before, const node_info* after) {
  using kind = topology_index::kind;
  ix.hard_tainted_nodes_ += (hard_tainted(after) ? 1 : 0) - (hard_tainted(before) ? 1 : 0);
  if (!before || !after) {
    // A node entering or leaving takes its pods' terms with it, whatever its labels.
    ix.held_terms_ += anti_terms(after) - anti_terms(before);
    ix.scoring_pods_ += scoring_pods(after) - scoring_pods(before);
    for (size_t c = 0; c < ix.counters_.size(); ++c)
      if (ix.counters_[c]->key->what == kind::held) add_node_pods(ix, c, before ? *before : *after, -1, before ? -1 : 1, true);
  }
  for (size_t t = 0; t < ix.tables_.size(); ++t) {
    const std::string& key = ix.tables_[t]->topology_key;
    const std::string* bv = before ? before->labels.get(key) : nullptr;
    const std::string* av = after ? after->labels.get(key) : nullptr;
    // Same pods before and after (the contract), so an unchanged domain changes no count.
    if (before && after && (bv == nullptr) == (av == nullptr) && (!bv || *bv == *av)) continue;
    if (bv) {
      const long id = ix.tables_[t]->id_of(*bv);
      for (size_t c = 0; c < ix.counters_.size(); ++c)
        if (ix.counters_[c]->key->topology_key == key) add_node_pods(ix, c, *before, id, -1, false);
      release_node(ix, t, *bv);
    }
    if (av) {
      const uint32_t id = domain_id(ix, t, *av);
      for (size_t c = 0; c < ix.counters_.size(); ++c)
        if (ix.counters_[c]->key->topology_key == key) add_node_pods(ix, c, *after, id, 1, false);
    }
  }
}

void topology_index_writer::pod_changed(topology_index& ix, const node_info& node, const pod_info& p, int delta) {
  ix.held_terms_ += delta * static_cast<int64_t>(p.required_anti_affinity.size());
  ix.scoring_pods_ += has_scoring_terms(p) ? delta : 0;
  if (ix.counters_.empty()) return;
  const pod_key pk = pod_key_of(p);
  for (size_t c = 0; c < ix.counters_.size(); ++c) {
    const auto& k = *ix.counters_[c]->key;
    const int w = weight(c, k, pk, p);
    if (w == 0) continue;
    const std::string* v = node.labels.get(k.topology_key);
    const bool held = k.what == topology_index::kind::held;
    if (!v && !held) continue;
    auto& counter = mutable_counter(ix, c);
    if (held) counter.refs += delta * w;
    const long id = v ? known_id(ix, k.topology_key, *v) : -1;
    if (id >= 0) {
      counter.counts.mut(static_cast<size_t>(id)) += delta * w;
      counter.total += delta * w;
    }
  }
}

bool topology_index_writer::ensure(topology_index& ix, std::shared_ptr<const topology_index::counter_key> key) {
  ++clock_;
  for (size_t c = 0; c < ix.counters_.size(); ++c) {
    if (ix.counters_[c]->key->text == key->text) {
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
  const std::string topology_key = key->topology_key;
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
    free_ids_[topology_key].clear();
  }
  return true;
}

void topology_index_writer::count_new(topology_index& ix, const node_info& n) {
  const size_t c = ix.counters_.size() - 1;
  const std::string& key = ix.counters_[c]->key->topology_key;
  const std::string* v = n.labels.get(key);
  long id = -1;
  if (v) id = pending_table_ ? domain_id(ix, table_index(ix, key), *v) : known_id(ix, key, *v);
  const bool held = ix.counters_[c]->key->what == topology_index::kind::held;
  if (id >= 0 || held) add_node_pods(ix, c, n, id, 1, held);
}

void topology_index_writer::evict(topology_index& ix, size_t i) {
  const std::string key = ix.counters_[i]->key->topology_key;
  ix.counters_.erase(ix.counters_.begin() + static_cast<std::ptrdiff_t>(i));
  uses_.erase(uses_.begin() + static_cast<std::ptrdiff_t>(i));
  for (auto& c : ix.counters_)
    if (c->key->topology_key == key) return;
  // The last counter of its key: its table goes too.
  ix.tables_.erase(ix.tables_.begin() + static_cast<std::ptrdiff_t>(table_index(ix, key)));
  free_ids_.erase(key);
}

}  // namespace kas

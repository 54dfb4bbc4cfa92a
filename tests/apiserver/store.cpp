// The store's reads, watch history and shared helpers (store.hpp); writes are in store_write.cpp.
#include "tests/apiserver/store.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "messages/codec.hpp"
#include "tests/apiserver/event_views.hpp"
#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/selectors.hpp"

namespace kas::testapi {

YAML::Node stored_object::tree() const { return *parse_json_object(json); }

std::string stored_object::field(const std::string& path) const {
  for (const auto& [p, v] : fields)
    if (p == path) return v;
  return "";
}

std::string object_key(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}

api_error not_found(const kind_info& k, const std::string& name) {
  return {404, "NotFound", k.qualified() + " \"" + name + "\" not found", name, k.group, k.resource};
}

api_error bad_request(const std::string& message) { return {400, "BadRequest", message, "", "", ""}; }

api_error conflict(const kind_info& k, const std::string& name, const std::string& why) {
  return {409, "Conflict", "Operation cannot be fulfilled on " + k.qualified() + " \"" + name + "\": " + why, name,
          k.group, k.resource};
}

api_error expired(const std::string& message) { return {410, "Expired", message, "", "", ""}; }

uint64_t fast_random() {
  static uint64_t s[4] = {0, 0, 0, 0};
  static bool seeded = false;
  if (!seeded) {
    if (RAND_bytes(reinterpret_cast<unsigned char*>(s), sizeof s) != 1 || (s[0] | s[1] | s[2] | s[3]) == 0)
      s[0] = static_cast<uint64_t>(std::time(nullptr)) | 1;
    seeded = true;
  }
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

std::string random_uuid() {
  unsigned char b[16];
  uint64_t r[2] = {fast_random(), fast_random()};
  std::memcpy(b, r, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  static const char* hex = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += hex[b[i] >> 4];
    s += hex[b[i] & 15];
  }
  return s;
}

std::string now_rfc3339() { return codec::format_rfc3339(static_cast<int64_t>(std::time(nullptr)), 0, 0); }

namespace {

// Continue tokens: base64 of {"v":"meta.k8s.io/v1","rv":N,"start":"<last key>"}, like upstream's.
std::string make_continue(uint64_t rv, const std::string& last_key) {
  std::string json = "{\"v\":\"meta.k8s.io/v1\",\"rv\":" + std::to_string(rv) + ",\"start\":";
  codec::append_json_string(json, last_key + std::string(1, '\0'));
  json += "}";
  std::string out(4 * ((json.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(json.data()), static_cast<int>(json.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

bool parse_continue(const std::string& token, uint64_t& rv, std::string& start) {
  std::string raw(token.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(raw.data()),
                          reinterpret_cast<const unsigned char*>(token.data()), static_cast<int>(token.size()));
  if (n < 0) return false;
  raw.resize(static_cast<size_t>(n));
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();  // base64 padding
  auto tree = parse_json_object(raw);
  if (!tree) return false;
  YAML::Node rv_node = at(*tree, "rv"), start_node = at(*tree, "start");
  if (!rv_node.IsScalar() || !start_node.IsScalar()) return false;
  try {
    rv = rv_node.as<uint64_t>();
  } catch (const YAML::Exception&) {
    return false;
  }
  start = start_node.Scalar();
  if (!start.empty() && start.back() == '\0') start.pop_back();
  return true;
}

}  // namespace


const store::object_map* store::objects_or_null(const kind_info& k) const {
  auto it = objects_.find(k.storage);
  return it == objects_.end() ? nullptr : &it->second;
}

op_result<object_ptr> store::get(const kind_info& k, const std::string& ns, const std::string& name) const {
  const object_map* m = objects_or_null(k);
  if (m) {
    auto it = m->find(object_key(k.namespaced ? ns : "", name));
    if (it != m->end()) return op_result<object_ptr>::good(view_of(it->second, k));
  }
  return op_result<object_ptr>::fail(not_found(k, name));
}

op_result<list_result> store::list(const kind_info& k, const std::string& ns, const list_request& req) const {
  using R = op_result<list_result>;
  auto ls = label_selector::parse(req.label_selector);
  if (!ls) return R::fail(bad_request("unable to parse requirement: " + ls.err().message));
  auto fs = field_selector::parse(req.field_selector, k);
  if (!fs) return R::fail(bad_request(fs.err().message));
  list_result out;
  out.rv = rv_;
  std::string start;
  if (!req.continue_token.empty()) {
    uint64_t rv = 0;
    if (!parse_continue(req.continue_token, rv, start))
      return R::fail(bad_request("continue key is not valid: " + req.continue_token));
    if (rv < compacted_rv_)
      return R::fail(expired("The provided continue parameter is too old to display a consistent list result. "
                             "You can start a new list without the continue parameter."));
    out.rv = rv;
  }
  const object_map* m = objects_or_null(k);
  if (!m) return R::good(std::move(out));
  std::string prefix = k.namespaced && !ns.empty() ? ns + "/" : "";
  auto it = start.empty() ? m->lower_bound(prefix) : m->upper_bound(start);
  int64_t remaining = 0;
  for (; it != m->end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    object_ptr obj = view_of(it->second, k);
    if (!ls->matches(obj->labels) || !fs->matches(*obj)) continue;
    if (req.limit > 0 && static_cast<int64_t>(out.items.size()) >= req.limit) {
      ++remaining;
      continue;
    }
    out.items.push_back(obj);
  }
  if (remaining > 0) {
    out.continue_token = make_continue(out.rv, object_key(out.items.back()->ns, out.items.back()->name));
    out.remaining = remaining;
  }
  return R::good(std::move(out));
}

std::vector<object_ptr> store::snapshot(const kind_info& k, const std::string& ns) const {
  std::vector<object_ptr> out;
  const object_map* m = objects_or_null(k);
  if (!m) return out;
  for (const auto& [key, obj] : *m)
    if (!k.namespaced || ns.empty() || obj->ns == ns) out.push_back(view_of(obj, k));
  return out;
}

op_result<std::vector<const change*>> store::changes_since(const kind_info& k, uint64_t from_rv) const {
  using R = op_result<std::vector<const change*>>;
  if (from_rv < oldest_watchable_rv())
    return R::fail(expired("too old resource version: " + std::to_string(from_rv) + " (" +
                           std::to_string(oldest_watchable_rv()) + ")"));
  std::vector<const change*> out;
  auto it = std::upper_bound(ring_.begin(), ring_.end(), from_rv,
                             [](uint64_t rv, const change& c) { return rv < c.rv; });
  for (; it != ring_.end(); ++it)
    if (it->obj->kind == k.storage) out.push_back(&*it);
  return R::good(std::move(out));
}

void store::compact() {
  compacted_rv_ = rv_;
  ring_.clear();
}

void store::restart_watch_cache() {
  watch_cache_start_rv_ = rv_;
  ring_.clear();
}

void store::record(change c) {
  ring_.push_back(std::move(c));
  while (ring_.size() > opts_.history) {
    compacted_rv_ = ring_.front().rv;
    ring_.pop_front();
  }
  if (listener_) listener_(ring_.back());
}

}  // namespace kas::testapi

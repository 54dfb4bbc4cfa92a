// Strict field checking against the generated schema table (see strict_fields.hpp).
//
// The table (k8s_schema_table.inc, written by gen_k8s_schema.py at build time) is four constant
// arrays: one string pool, every message's fields sorted by name, the messages, and the kinds. A field
// names its value's type by message index, or by one of two codes: a scalar in JSON (string, number,
// Quantity, Time, ...) or an opaque value (RawExtension, FieldsV1: anything goes below it).
//
// yaml-cpp note: map iteration yields a temporary pair; its nodes are copied by value before use,
// never bound to a const reference (a reference to `it->second` outlives the temporary).
#include "messages/schema/strict_fields.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <utility>

namespace kas::schema::gen {
struct str_ref {
  std::uint32_t off;
  std::uint8_t len;
};
struct field_entry {
  std::uint32_t name_off;
  std::uint8_t name_len;
  std::uint8_t shape;      // shape_*
  std::uint8_t is_inline;  // a Go `json:",inline"` struct: its members are keys of the enclosing object
  std::uint16_t type;      // message index, type_scalar or type_opaque
};
struct message_entry {
  std::uint32_t name_off;
  std::uint8_t name_len;
  std::uint16_t first_field;
  std::uint16_t field_count;
  std::uint8_t flags;  // flag_*
};
struct kind_entry {
  str_ref kind, group, version;
  std::uint16_t message;
};
}  // namespace kas::schema::gen

#include "messages/schema/k8s_schema_table.inc"

namespace kas::schema {
namespace {

constexpr std::uint16_t type_scalar = 0xFFFF;
constexpr std::uint16_t type_opaque = 0xFFFE;
constexpr std::uint8_t shape_one = 0, shape_list = 1, shape_map = 2;
constexpr std::uint8_t flag_type_meta = 1;  // embeds TypeMeta: apiVersion and kind are its keys
constexpr std::uint8_t flag_has_inline = 2;

constexpr std::size_t message_count = sizeof(gen::messages) / sizeof(gen::messages[0]);
static_assert(message_count < type_opaque, "message indexes must not collide with the type codes");

std::string_view str(std::uint32_t off, std::uint8_t len) { return {gen::names + off, len}; }
std::string_view str(const gen::str_ref& r) { return str(r.off, r.len); }
std::string_view name_of(const gen::field_entry& f) { return str(f.name_off, f.name_len); }
std::string_view name_of(std::uint16_t message) {
  return str(gen::messages[message].name_off, gen::messages[message].name_len);
}

// The field `key` of `message`, looking through inline structs; the inline field's own name is not
// a key (Go's JSON has no "volumeSource" key in a Volume).
const gen::field_entry* find_field(std::uint16_t message, std::string_view key) {
  const gen::message_entry& m = gen::messages[message];
  const gen::field_entry* begin = gen::fields + m.first_field;
  const gen::field_entry* end = begin + m.field_count;
  const gen::field_entry* it = std::lower_bound(
      begin, end, key, [](const gen::field_entry& f, std::string_view k) { return name_of(f) < k; });
  if (it != end && name_of(*it) == key && !it->is_inline) return it;
  if (m.flags & flag_has_inline) {
    for (const gen::field_entry* f = begin; f != end; ++f)
      if (f->is_inline)
        if (const gen::field_entry* g = find_field(f->type, key)) return g;
  }
  return nullptr;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// meta/v1 List and core/v1 List: items are objects of any kind, each naming its own.
bool is_generic_list(std::uint16_t message) { return ends_with(name_of(message), ".List"); }

constexpr int no_message = -1;

int find_kind(std::string_view api_version, std::string_view kind) {
  auto range = std::equal_range(std::begin(gen::kinds), std::end(gen::kinds), kind,
                                [](const auto& a, const auto& b) {
                                  auto key = [](const auto& x) -> std::string_view {
                                    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, gen::kind_entry>)
                                      return str(x.kind);
                                    else
                                      return x;
                                  };
                                  return key(a) < key(b);
                                });
  if (range.first == range.second) return no_message;
  if (api_version.empty()) {  // the loader assumes the kind's default version; "v1" is the default of every kind it reads
    for (auto it = range.first; it != range.second; ++it)
      if (str(it->version) == "v1") return it->message;
    return std::distance(range.first, range.second) == 1 ? range.first->message : no_message;
  }
  std::string_view group, version = api_version;
  if (auto slash = api_version.find('/'); slash != std::string_view::npos) {
    group = api_version.substr(0, slash);
    version = api_version.substr(slash + 1);
  }
  for (auto it = range.first; it != range.second; ++it)
    if (str(it->group) == group && str(it->version) == version) return it->message;
  return no_message;
}

// A scalar value of `map`'s key `key`, "" when absent. Iterates: operator[] on a non-const node
// would add the key.
std::string scalar_value(const YAML::Node& map, std::string_view key) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    YAML::Node k = it->first;
    YAML::Node v = it->second;
    if (k.IsScalar() && k.Scalar() == key) return v.IsScalar() ? v.Scalar() : std::string{};
  }
  return {};
}

class walker {
public:
  explicit walker(const strict_limits& limits) : limits_(limits) {}

  // `n` holds an object of `message`; `top`: apiVersion and kind are allowed whatever the type.
  bool object(const YAML::Node& n, std::uint16_t message, bool top, int depth) {
    if (!visit(depth)) return false;
    if (!n.IsMap()) return true;
    const std::uint8_t flags = gen::messages[message].flags;
    const std::size_t base = path_.size();
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node key = it->first;
      YAML::Node value = it->second;
      if (!key.IsScalar()) continue;  // the decoder refuses non-string keys
      const std::string& k = key.Scalar();
      append_key(k);
      const gen::field_entry* f = find_field(message, k);
      if (f == nullptr) {
        bool type_meta = k == "apiVersion" || k == "kind";
        if (!(type_meta && (top || (flags & flag_type_meta)))) found.push_back(path_);
      } else if (f->type == type_opaque) {
        if (f->shape == shape_list && k == "items" && is_generic_list(message) && !list_items(value, depth + 1))
          return false;
      } else if (f->type != type_scalar && !field_value(value, *f, depth + 1)) {
        return false;
      }
      path_.resize(base);
    }
    return true;
  }

  std::vector<std::string> found;
  std::string error;

private:
  // A message-typed field's value.
  bool field_value(const YAML::Node& v, const gen::field_entry& f, int depth) {
    if (f.shape == shape_one) return object(v, f.type, false, depth);
    if (!visit(depth)) return false;
    const std::size_t base = path_.size();
    if (f.shape == shape_list) {
      if (!v.IsSequence()) return true;
      std::size_t i = 0;
      for (auto it = v.begin(); it != v.end(); ++it, ++i) {
        YAML::Node e = *it;
        append_index(i);
        if (!object(e, f.type, false, depth + 1)) return false;
        path_.resize(base);
      }
      return true;
    }
    if (!v.IsMap()) return true;  // shape_map: keys are free-form, values are checked
    for (auto it = v.begin(); it != v.end(); ++it) {
      YAML::Node key = it->first;
      YAML::Node value = it->second;
      if (!key.IsScalar()) continue;
      append_key(key.Scalar());
      if (!object(value, f.type, false, depth + 1)) return false;
      path_.resize(base);
    }
    return true;
  }

  // The items of a `kind: List`, each checked by its own apiVersion and kind.
  bool list_items(const YAML::Node& v, int depth) {
    if (!visit(depth)) return false;
    if (!v.IsSequence()) return true;
    const std::size_t base = path_.size();
    std::size_t i = 0;
    for (auto it = v.begin(); it != v.end(); ++it, ++i) {
      YAML::Node item = *it;
      append_index(i);
      if (item.IsMap()) {
        int message = find_kind(scalar_value(item, "apiVersion"), scalar_value(item, "kind"));
        if (message != no_message && !object(item, static_cast<std::uint16_t>(message), true, depth + 1))
          return false;
      }
      path_.resize(base);
    }
    return true;
  }

  bool visit(int depth) {
    if (++visited_ > limits_.max_nodes) {
      error = "strict field check: more than " + std::to_string(limits_.max_nodes) +
              " nodes to visit (YAML aliases?) at " + (path_.empty() ? std::string("the top") : path_);
      return false;
    }
    if (depth > limits_.max_depth) {
      error = "strict field check: " + path_ + ": nested deeper than " + std::to_string(limits_.max_depth) +
              " levels";
      return false;
    }
    return true;
  }

  void append_key(const std::string& k) {
    if (!path_.empty()) path_ += '.';
    path_ += k;
  }
  void append_index(std::size_t i) {
    path_ += '[';
    path_ += std::to_string(i);
    path_ += ']';
  }

  const strict_limits& limits_;
  std::uint64_t visited_ = 0;
  std::string path_;
};

}  // namespace

std::string_view schema_type(std::string_view api_version, std::string_view kind) {
  int m = find_kind(api_version, kind);
  return m == no_message ? std::string_view{} : name_of(static_cast<std::uint16_t>(m));
}

kas::result<std::vector<std::string>> unknown_fields(const YAML::Node& object, std::string_view api_version,
                                                     std::string_view kind, const strict_limits& limits) {
  int m = find_kind(api_version, kind);
  if (m == no_message || !object.IsDefined()) return std::vector<std::string>{};
  walker w(limits);
  try {
    if (!w.object(object, static_cast<std::uint16_t>(m), true, 0)) return kas::error{w.error};
  } catch (const YAML::Exception& e) {  // a node yaml-cpp refuses to walk; the decoder will say more
    return kas::error{std::string("strict field check: ") + e.what()};
  }
  return std::move(w.found);
}

}  // namespace kas::schema

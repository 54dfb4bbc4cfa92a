// JSON <-> tree and patches (json_tree.hpp).
#include "tests/apiserver/json_tree.hpp"

#include <charconv>
#include <cstring>

#include <simdjson.h>
#include <vector>

#include "config/yaml_guard.hpp"
#include "messages/codec.hpp"

namespace kas::testapi {

namespace {

bool is_json_number(const std::string& s) {
  if (s.empty()) return false;
  size_t i = 0;
  if (s[i] == '-') ++i;
  if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  bool digits_only = true;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) continue;
    if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') { digits_only = false; continue; }
    return false;
  }
  (void)digits_only;
  return true;
}

void append_scalar(const YAML::Node& n, std::string& out) {
  const std::string& s = n.Scalar();
  if (n.Tag() != "!") {
    if (s == "true" || s == "false" || s == "null" || is_json_number(s)) {
      out += s;
      return;
    }
  }
  codec::append_json_string(out, s);
}

// True when `text` is plain JSON-looking input yaml-cpp can parse without a guard: nesting at most
// 100 deep and no YAML anchors, aliases or tags outside strings (a crafted body could otherwise
// overflow the stack or expand aliases without bound). Anything else goes through kas::load_yaml.
bool plain_and_shallow(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') { if (++depth > 100) return false; }
    else if (c == '}' || c == ']') --depth;
    else if (c == '&' || c == '*' || c == '!' || c == '\'') return false;
  }
  return true;
}

// Strict JSON through simdjson (several times faster than yaml-cpp's scanner), built into a tree.
YAML::Node from_simdjson(simdjson::dom::element e) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::OBJECT: {
      YAML::Node m(YAML::NodeType::Map);
      simdjson::dom::object obj;
      if (e.get_object().get(obj) != simdjson::SUCCESS) return m;
      for (auto field : obj) m[std::string(field.key)] = from_simdjson(field.value);
      return m;
    }
    case T::ARRAY: {
      YAML::Node s(YAML::NodeType::Sequence);
      simdjson::dom::array arr;
      if (e.get_array().get(arr) != simdjson::SUCCESS) return s;
      for (auto v : arr) s.push_back(from_simdjson(v));
      return s;
    }
    case T::STRING: return str_node(std::string(e.get_string().value_unsafe()));
    case T::INT64: return YAML::Node(std::to_string(e.get_int64().value_unsafe()));
    case T::UINT64: return YAML::Node(std::to_string(e.get_uint64().value_unsafe()));
    case T::DOUBLE: {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, e.get_double().value_unsafe());
      return YAML::Node(std::string(buf, r.ptr));
    }
    case T::BOOL: return YAML::Node(e.get_bool().value_unsafe() ? "true" : "false");
    case T::NULL_VALUE: return YAML::Node(YAML::NodeType::Null);
  }
  return YAML::Node(YAML::NodeType::Null);
}

}  // namespace

result<YAML::Node> parse_json_object(std::string_view text) {
  if (text.size() <= max_object_bytes) {
    static simdjson::dom::parser parser(max_object_bytes + simdjson::SIMDJSON_PADDING);
    simdjson::padded_string padded(text);
    simdjson::dom::element root;
    if (parser.parse(padded).get(root) == simdjson::SUCCESS && root.type() == simdjson::dom::element_type::OBJECT) {
      if (plain_and_shallow(text)) return from_simdjson(root);
    }
  }
  if (text.size() > max_object_bytes) return error{"the request body is larger than " + mebibytes(max_object_bytes)};
  if (!plain_and_shallow(text)) {
    auto docs = load_yaml("request body", std::string(text), yaml_input::json);
    if (!docs) return docs.err();
    if (docs->size() != 1 || !(*docs)[0].root.IsMap()) return error{"the request body is not a JSON object"};
    return (*docs)[0].root;
  }
  try {
    YAML::Node n = YAML::Load(std::string(text));
    if (!n.IsMap()) return error{"the request body is not a JSON object"};
    return n;
  } catch (const YAML::Exception& e) {
    return error{"invalid JSON at line " + std::to_string(e.mark.line + 1) + ", column " +
                 std::to_string(e.mark.column + 1) + ": " + e.msg};
  }
}

void append_json(const YAML::Node& n, std::string& out) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      append_scalar(n, out);
      return;
    case YAML::NodeType::Sequence: {
      out += '[';
      bool first = true;
      for (const auto& e : n) {
        if (!first) out += ',';
        first = false;
        append_json(e, out);
      }
      out += ']';
      return;
    }
    case YAML::NodeType::Map: {
      out += '{';
      bool first = true;
      for (const auto& kv : n) {
        if (!first) out += ',';
        first = false;
        codec::append_json_string(out, kv.first.Scalar());
        out += ':';
        append_json(kv.second, out);
      }
      out += '}';
      return;
    }
    default:
      out += "null";
  }
}

std::string to_json(const YAML::Node& node) {
  std::string out;
  out.reserve(512);
  append_json(node, out);
  return out;
}

YAML::Node at(const YAML::Node& n, const std::string& key) {
  if (n.IsDefined() && n.IsMap()) {
    const YAML::Node& c = n;
    YAML::Node v = c[key];
    if (v.IsDefined()) return v;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node str_node(const std::string& s) {
  YAML::Node n(s);
  n.SetTag("!");
  return n;
}

std::optional<std::string> string_at(const YAML::Node& root, std::string_view dotted) {
  YAML::Node cur = root;  // a handle, not a copy of the tree
  size_t start = 0;
  while (start <= dotted.size()) {
    size_t dot = dotted.find('.', start);
    std::string key(dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (!cur.IsMap()) return std::nullopt;
    const YAML::Node& ccur = cur;
    YAML::Node next = ccur[key];
    if (!next.IsDefined()) return std::nullopt;
    cur.reset(next);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (!cur.IsScalar()) return std::nullopt;
  return cur.Scalar();
}

YAML::Node merge_patch(const YAML::Node& target, const YAML::Node& patch) {
  if (!patch.IsMap()) return clone(patch);
  YAML::Node out = target.IsMap() ? clone(target) : YAML::Node(YAML::NodeType::Map);
  for (const auto& kv : patch) {
    const std::string key = kv.first.Scalar();
    if (kv.second.IsNull()) {
      out.remove(key);
      continue;
    }
    const YAML::Node& cout = out;
    YAML::Node existing = cout[key];
    out[key] = merge_patch(existing.IsDefined() ? existing : YAML::Node(), kv.second);
  }
  return out;
}

namespace {

const char* merge_key_of(const std::string& field) {
  static const std::pair<const char*, const char*> keys[] = {
      {"conditions", "type"},      {"containers", "name"},       {"initContainers", "name"},
      {"ephemeralContainers", "name"}, {"volumes", "name"},     {"env", "name"},
      {"volumeMounts", "mountPath"}, {"ports", "containerPort"}, {"addresses", "type"},
      {"imagePullSecrets", "name"}, {"ownerReferences", "uid"}, {"resourceClaims", "name"}};
  for (const auto& [f, k] : keys)
    if (field == f) return k;
  return nullptr;
}

const YAML::Node* find_by_key(const std::vector<YAML::Node>& items, const char* key, const std::string& value) {
  for (const auto& it : items) {
    const YAML::Node& c = it;
    if (c.IsMap() && c[key].IsDefined() && c[key].IsScalar() && c[key].Scalar() == value) return &it;
  }
  return nullptr;
}

YAML::Node merge_keyed_list(const YAML::Node& target, const YAML::Node& patch, const char* key) {
  std::vector<YAML::Node> items;
  if (target.IsSequence())
    for (const auto& e : target) items.push_back(clone(e));
  for (const auto& p : patch) {
    const YAML::Node& cp = p;
    if (!cp.IsMap() || !cp[key].IsDefined() || !cp[key].IsScalar()) {
      items.push_back(clone(p));
      continue;
    }
    const std::string value = cp[key].Scalar();
    bool del = cp["$patch"].IsDefined() && cp["$patch"].Scalar() == "delete";
    const YAML::Node* hit = find_by_key(items, key, value);
    if (del) {
      if (hit) items.erase(items.begin() + (hit - items.data()));
      continue;
    }
    if (hit)
      items[static_cast<size_t>(hit - items.data())] = strategic_merge_patch(*hit, p);
    else
      items.push_back(strategic_merge_patch(YAML::Node(), p));
  }
  YAML::Node out(YAML::NodeType::Sequence);
  for (auto& i : items) out.push_back(i);
  return out;
}

}  // namespace

YAML::Node strategic_merge_patch(const YAML::Node& target, const YAML::Node& patch) {
  if (!patch.IsMap()) return clone(patch);
  const YAML::Node& cpatch = patch;
  bool replace = cpatch["$patch"].IsDefined() && cpatch["$patch"].Scalar() == "replace";
  YAML::Node out = (target.IsMap() && !replace) ? clone(target) : YAML::Node(YAML::NodeType::Map);
  for (const auto& kv : patch) {
    const std::string key = kv.first.Scalar();
    if (!key.empty() && key[0] == '$') continue;
    if (kv.second.IsNull()) {
      out.remove(key);
      continue;
    }
    const YAML::Node& cout = out;
    YAML::Node existing = cout[key];
    const char* mk = merge_key_of(key);
    if (mk && kv.second.IsSequence())
      out[key] = merge_keyed_list(existing.IsDefined() ? existing : YAML::Node(), kv.second, mk);
    else
      out[key] = strategic_merge_patch(existing.IsDefined() ? existing : YAML::Node(), kv.second);
  }
  return out;
}

}  // namespace kas::testapi

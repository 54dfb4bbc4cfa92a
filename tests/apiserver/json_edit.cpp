// JSON text edits through simdjson's DOM (json_edit.hpp).
#include "tests/apiserver/json_edit.hpp"

#include <charconv>

#include "messages/codec.hpp"

namespace kas::testapi {

namespace dom = simdjson::dom;

json_doc::json_doc() = default;

bool json_doc::parse(std::string_view text) {
  // Reuse the padded buffer: a copy of the text is needed for simdjson's padding anyway.
  if (buffer_.size() < text.size() || buffer_.size() > 4 * text.size() + 65536)
    buffer_ = simdjson::padded_string(text.size() + 4096);
  std::memcpy(buffer_.data(), text.data(), text.size());
  std::memset(buffer_.data() + text.size(), ' ', buffer_.size() - text.size());
  if (parser_.parse(buffer_.data(), buffer_.size(), false).get(root_) != simdjson::SUCCESS) return false;
  return root_.type() == dom::element_type::OBJECT;
}

std::optional<dom::element> json_doc::find(std::initializer_list<std::string_view> path) const {
  dom::element cur = root_;
  for (std::string_view key : path) {
    dom::object obj;
    if (cur.get_object().get(obj) != simdjson::SUCCESS) return std::nullopt;
    if (obj.at_key(key).get(cur) != simdjson::SUCCESS) return std::nullopt;
  }
  return cur;
}

std::vector<std::pair<std::string, std::string>> string_fields(const json_doc& doc,
                                                             const std::vector<std::string>& paths) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& path : paths) {
    dom::element cur = doc.root();
    std::string_view rest = path;
    bool ok = true;
    while (ok) {
      size_t dot = rest.find('.');
      dom::object obj;
      ok = cur.get_object().get(obj) == simdjson::SUCCESS && obj.at_key(rest.substr(0, dot)).get(cur) == simdjson::SUCCESS;
      if (dot == std::string_view::npos) break;
      rest.remove_prefix(dot + 1);
    }
    if (!ok) continue;
    std::string_view v;
    auto t = cur.type();
    if (t == dom::element_type::STRING && cur.get_string().get(v) == simdjson::SUCCESS) {
      out.emplace_back(path, std::string(v));
    } else if (t != dom::element_type::OBJECT && t != dom::element_type::ARRAY && t != dom::element_type::NULL_VALUE) {
      std::string text;  // numbers and booleans, as their JSON text (what a selector compares)
      append_element(text, cur);
      out.emplace_back(path, std::move(text));
    }
  }
  return out;
}

std::string json_quote(std::string_view s) {
  std::string out;
  codec::append_json_string(out, s);
  return out;
}

void append_element(std::string& out, dom::element e) {
  char buf[64];
  switch (e.type()) {
    case dom::element_type::OBJECT: {
      out += '{';
      bool first = true;
      for (auto field : dom::object(e.get_object().value_unsafe())) {
        if (!first) out += ',';
        first = false;
        codec::append_json_string(out, field.key);
        out += ':';
        append_element(out, field.value);
      }
      out += '}';
      return;
    }
    case dom::element_type::ARRAY: {
      out += '[';
      bool first = true;
      for (auto v : dom::array(e.get_array().value_unsafe())) {
        if (!first) out += ',';
        first = false;
        append_element(out, v);
      }
      out += ']';
      return;
    }
    case dom::element_type::STRING:
      codec::append_json_string(out, e.get_string().value_unsafe());
      return;
    case dom::element_type::INT64:
      out.append(buf, std::to_chars(buf, buf + sizeof buf, e.get_int64().value_unsafe()).ptr);
      return;
    case dom::element_type::UINT64:
      out.append(buf, std::to_chars(buf, buf + sizeof buf, e.get_uint64().value_unsafe()).ptr);
      return;
    case dom::element_type::DOUBLE:
      out.append(buf, std::to_chars(buf, buf + sizeof buf, e.get_double().value_unsafe()).ptr);
      return;
    case dom::element_type::BOOL:
      out += e.get_bool().value_unsafe() ? "true" : "false";
      return;
    case dom::element_type::NULL_VALUE:
      out += "null";
      return;
  }
}

namespace {

using edit_list = std::vector<const json_edit*>;

// Members for edits nobody matched at this depth: grouped by key, in the order first named.
void append_new_members(std::string& out, const edit_list& edits, size_t depth, bool first) {
  std::vector<bool> done(edits.size());
  for (size_t i = 0; i < edits.size(); ++i) {
    if (done[i]) continue;
    const std::string& key = edits[i]->path[depth];
    edit_list same;
    const json_edit* exact = nullptr;
    for (size_t j = i; j < edits.size(); ++j)
      if (!done[j] && edits[j]->path[depth] == key) {
        done[j] = true;
        if (edits[j]->path.size() == depth + 1) exact = edits[j]; else same.push_back(edits[j]);
      }
    if (!first) out += ',';
    first = false;
    codec::append_json_string(out, key);
    out += ':';
    if (exact) {
      out += exact->value;
    } else {
      out += '{';
      append_new_members(out, same, depth + 1, true);
      out += '}';
    }
  }
}

void append_edited(std::string& out, dom::object obj, const edit_list& edits, size_t depth) {
  out += '{';
  bool first = true;
  std::vector<bool> used(edits.size());
  for (auto field : obj) {
    if (!first) out += ',';
    first = false;
    codec::append_json_string(out, field.key);
    out += ':';
    const json_edit* exact = nullptr;
    edit_list deeper;
    for (size_t i = 0; i < edits.size(); ++i)
      if (edits[i]->path[depth] == field.key) {
        used[i] = true;
        if (edits[i]->path.size() == depth + 1) exact = edits[i]; else deeper.push_back(edits[i]);
      }
    dom::object child;
    if (exact) {
      out += exact->value;
    } else if (deeper.empty()) {
      append_element(out, field.value);
    } else if (field.value.get_object().get(child) == simdjson::SUCCESS) {
      append_edited(out, child, deeper, depth + 1);
    } else {  // a non-object where an object member is set: replaced by an object
      out += '{';
      append_new_members(out, deeper, depth + 1, true);
      out += '}';
    }
  }
  edit_list missing;
  for (size_t i = 0; i < edits.size(); ++i)
    if (!used[i]) missing.push_back(edits[i]);
  append_new_members(out, missing, depth, first);
  out += '}';
}

}  // namespace

std::string edit_json(dom::element root, const std::vector<json_edit>& edits) {
  std::string out;
  out.reserve(2048);
  edit_list list;
  for (const auto& e : edits)
    if (!e.path.empty()) list.push_back(&e);
  dom::object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) return out;
  append_edited(out, obj, list, 0);
  return out;
}

}  // namespace kas::testapi

#pragma once
// Edits of stored JSON text without a tree: the hot writes (pods/binding above all) parse the stored
// object with simdjson's DOM and write it back compactly with a few members set, instead of building
// a yaml-cpp tree of the whole object (thousands of small allocations per pod) and encoding it again.
// Member order is kept; a member that is set replaces the old value in place, a new one (and any
// missing parent object) is added at the end of its object.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

namespace kas::testapi {

// One member to set: its path of keys from the root (keys may contain dots) and its JSON text.
struct json_edit {
  std::vector<std::string> path;
  std::string value;
};

// A parsed document. One parser per instance, reused across parse() calls; elements stay valid
// until the next parse.
class json_doc {
public:
  json_doc();
  // False when `text` is not a JSON object.
  bool parse(std::string_view text);
  simdjson::dom::element root() const { return root_; }
  // The member at `path`, if every step is an object member.
  std::optional<simdjson::dom::element> find(std::initializer_list<std::string_view> path) const;

private:
  simdjson::dom::parser parser_;
  simdjson::padded_string buffer_;
  simdjson::dom::element root_;
};

// Compact JSON of an element (as encode would write it: strings escaped, numbers as parsed).
void append_element(std::string& out, simdjson::dom::element e);
// The object `root` written compactly with `edits` applied.
std::string edit_json(simdjson::dom::element root, const std::vector<json_edit>& edits);
// The values at dotted paths ("spec.nodeName") that are set and scalar (strings as their value,
// numbers and booleans as their JSON text).
std::vector<std::pair<std::string, std::string>> string_fields(const json_doc& doc, const std::vector<std::string>& paths);
// A JSON string literal.
std::string json_quote(std::string_view s);

}  // namespace kas::testapi

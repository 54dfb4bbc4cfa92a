// Selector parsing and matching (selectors.hpp).
#include "tests/apiserver/selectors.hpp"

#include <algorithm>

#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/resources.hpp"
#include "tests/apiserver/store.hpp"

namespace kas::testapi {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Splits on commas that are not inside parentheses.
std::vector<std::string> split_terms(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

std::vector<std::string> split_values(const std::string& inner) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t c = inner.find(',', start);
    out.push_back(trim(inner.substr(start, c == std::string::npos ? std::string::npos : c - start)));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

bool valid_key(const std::string& k) {
  if (k.empty()) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

}  // namespace

result<label_selector> label_selector::parse(const std::string& text) {
  label_selector sel;
  for (const auto& t : split_terms(text)) {
    if (t.empty()) return error{"labelSelector \"" + text + "\": empty term"};
    term tm;
    size_t p;
    if (t[0] == '!') {
      tm.key = trim(t.substr(1));
      tm.o = op::absent;
    } else if ((p = t.find("!=")) != std::string::npos) {
      tm.key = trim(t.substr(0, p));
      tm.o = op::ne;
      tm.values = {trim(t.substr(p + 2))};
    } else if ((p = t.find("==")) != std::string::npos) {
      tm.key = trim(t.substr(0, p));
      tm.values = {trim(t.substr(p + 2))};
    } else if ((p = t.find('=')) != std::string::npos) {
      tm.key = trim(t.substr(0, p));
      tm.values = {trim(t.substr(p + 1))};
    } else if ((p = t.find(" in ")) != std::string::npos || (p = t.find(" notin ")) != std::string::npos) {
      bool notin = t.compare(p, 7, " notin ") == 0;
      tm.key = trim(t.substr(0, p));
      tm.o = notin ? op::notin : op::in;
      std::string rest = trim(t.substr(p + (notin ? 7 : 4)));
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')')
        return error{"labelSelector term \"" + t + "\": expected a parenthesised value list"};
      tm.values = split_values(rest.substr(1, rest.size() - 2));
    } else {
      tm.key = trim(t);
      tm.o = op::exists;
    }
    if (!valid_key(tm.key)) return error{"labelSelector term \"" + t + "\": invalid label key \"" + tm.key + "\""};
    sel.terms_.push_back(std::move(tm));
  }
  return sel;
}

bool label_selector::matches(const std::map<std::string, std::string>& labels) const {
  for (const auto& t : terms_) {
    std::optional<std::string> v;
    auto it = labels.find(t.key);
    if (it != labels.end()) v = it->second;
    bool in_values = v && std::find(t.values.begin(), t.values.end(), *v) != t.values.end();
    switch (t.o) {
      case op::eq: case op::in: if (!in_values) return false; break;
      case op::ne: case op::notin: if (in_values) return false; break;
      case op::exists: if (!v) return false; break;
      case op::absent: if (v) return false; break;
    }
  }
  return true;
}

namespace {

bool field_supported(const std::string& path, const kind_info& kind) {
  if (path == "metadata.name" || path == "metadata.namespace") return true;
  if (kind.resource == "pods")
    return path == "spec.nodeName" || path == "status.phase" || path == "spec.schedulerName" ||
           path == "spec.serviceAccountName" || path == "status.nominatedNodeName";
  if (kind.resource == "events")
    return path.rfind("involvedObject.", 0) == 0 || path == "reason" || path == "type" || path == "source" ||
           path.rfind("regarding.", 0) == 0 || path == "reportingController" || path == "reportingComponent";
  if (kind.resource == "nodes") return path == "spec.unschedulable";
  if (kind.resource == "namespaces") return path == "status.phase";
  return false;
}

}  // namespace

result<field_selector> field_selector::parse(const std::string& text, const kind_info& kind) {
  field_selector sel;
  for (const auto& t : split_terms(text)) {
    if (t.empty()) return error{"fieldSelector \"" + text + "\": empty term"};
    term tm;
    size_t p;
    if ((p = t.find("!=")) != std::string::npos) {
      tm.path = trim(t.substr(0, p));
      tm.equal = false;
      tm.value = trim(t.substr(p + 2));
    } else if ((p = t.find("==")) != std::string::npos) {
      tm.path = trim(t.substr(0, p));
      tm.value = trim(t.substr(p + 2));
    } else if ((p = t.find('=')) != std::string::npos) {
      tm.path = trim(t.substr(0, p));
      tm.value = trim(t.substr(p + 1));
    } else {
      return error{"invalid selector: '" + t + "'; can't understand '" + t + "'"};
    }
    if (!field_supported(tm.path, kind))
      return error{"field label not supported: " + tm.path};
    sel.terms_.push_back(std::move(tm));
  }
  return sel;
}

const std::vector<std::string>& selectable_fields(const kind_info& k) {
  static const std::vector<std::string> pods = {"spec.nodeName", "status.phase", "spec.schedulerName",
                                                "spec.serviceAccountName", "status.nominatedNodeName"};
  static const std::vector<std::string> events = {
      "reason", "type", "source", "reportingController", "reportingComponent", "regarding.kind", "regarding.name",
      "regarding.namespace", "regarding.uid", "involvedObject.kind",
      "involvedObject.name", "involvedObject.namespace", "involvedObject.uid", "involvedObject.apiVersion",
      "involvedObject.resourceVersion", "involvedObject.fieldPath"};
  static const std::vector<std::string> nodes = {"spec.unschedulable"};
  static const std::vector<std::string> namespaces = {"status.phase"};
  static const std::vector<std::string> none;
  if (k.resource == "pods") return pods;
  if (k.resource == "events") return events;
  if (k.resource == "nodes") return nodes;
  if (k.resource == "namespaces") return namespaces;
  return none;
}

bool field_selector::matches(const stored_object& object) const {
  for (const auto& t : terms_) {
    // An absent field compares as the empty string (spec.nodeName= selects unbound pods).
    std::string v = t.path == "metadata.name"        ? object.name
                    : t.path == "metadata.namespace" ? object.ns
                                                     : object.field(t.path);
    if (t.path == "spec.unschedulable" && v.empty()) v = "false";
    if ((v == t.value) != t.equal) return false;
  }
  return true;
}

}  // namespace kas::testapi

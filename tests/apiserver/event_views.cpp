// Conversion between the two views of Events (event_views.hpp).
#include "tests/apiserver/event_views.hpp"

#include "messages/codec.hpp"
#include "tests/apiserver/json_edit.hpp"
#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/selectors.hpp"

namespace kas::testapi {

namespace {

// Fields whose name differs between the views: {events.k8s.io name, core name}.
const std::pair<const char*, const char*> kRenamed[] = {
    {"regarding", "involvedObject"},        {"note", "message"},
    {"reportingController", "reportingComponent"}, {"deprecatedSource", "source"},
    {"deprecatedCount", "count"},           {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"}};

const char* rename(const std::string& key, bool to_core) {
  for (const auto& [ev, core] : kRenamed)
    if (key == (to_core ? ev : core)) return to_core ? core : ev;
  return nullptr;
}

// Copies every field of `in` into a new map under its name in the other view (order kept).
YAML::Node renamed_copy(const YAML::Node& in, bool to_core, const char* api_version) {
  YAML::Node out(YAML::NodeType::Map);
  out["kind"] = str_node("Event");
  out["apiVersion"] = str_node(api_version);
  if (!in.IsMap()) return out;
  for (const auto& kv : in) {
    const std::string key = kv.first.Scalar();
    if (key == "kind" || key == "apiVersion") continue;
    const char* other = rename(key, to_core);
    out[other ? other : key] = clone(kv.second);
  }
  return out;
}

std::string scalar(const YAML::Node& n, const char* key) {
  YAML::Node v = at(n, key);
  return v.IsScalar() ? v.Scalar() : "";
}

std::string_view string_member(const json_doc& doc, std::string_view key) {
  std::string_view v;
  if (auto e = doc.find({key}); e && e->get_string().get(v) == simdjson::SUCCESS) return v;
  return {};
}

// True when `source` holds exactly {component, host} as given (empty ones absent).
bool source_is(simdjson::dom::element source, std::string_view component, std::string_view host) {
  simdjson::dom::object obj;
  if (source.get_object().get(obj) != simdjson::SUCCESS) return false;
  size_t expected = static_cast<size_t>(!component.empty()) + static_cast<size_t>(!host.empty()), seen = 0;
  for (auto field : obj) {
    std::string_view v;
    if (field.value.get_string().get(v) != simdjson::SUCCESS) return false;
    if (!((field.key == "component" && v == component && !v.empty()) || (field.key == "host" && v == host && !v.empty())))
      return false;
    ++seen;
  }
  return seen == expected;
}

// The text conversion: renamed members in order, then the source made from the reporting fields.
std::optional<std::string> convert_json(std::string_view text, bool to_core) {
  static json_doc doc;
  if (!doc.parse(text)) return std::nullopt;
  std::string_view component = string_member(doc, to_core ? "reportingController" : "reportingComponent");
  std::string_view host = string_member(doc, "reportingInstance");
  std::string out = to_core ? R"({"kind":"Event","apiVersion":"v1")" : R"({"kind":"Event","apiVersion":"events.k8s.io/v1")";
  out.reserve(text.size() + 96);
  bool has_source = false;
  for (auto field : simdjson::dom::object(doc.root().get_object().value_unsafe())) {
    std::string key(field.key);
    if (key == "kind" || key == "apiVersion") continue;
    const char* other = rename(key, to_core);
    std::string_view name = other ? std::string_view(other) : std::string_view(key);
    if (name == (to_core ? "source" : "deprecatedSource")) {
      has_source = true;
      if (!to_core && source_is(field.value, component, host)) continue;
    }
    out += ',';
    codec::append_json_string(out, name);
    out += ':';
    append_element(out, field.value);
  }
  if (to_core && !has_source && (!component.empty() || !host.empty())) {
    out += R"(,"source":{)";
    if (!component.empty()) out += R"("component":)" + json_quote(component);
    if (!host.empty()) out += std::string(component.empty() ? "" : ",") + R"("host":)" + json_quote(host);
    out += '}';
  }
  return out + "}";
}

}  // namespace

std::optional<std::string> events_json_to_core(std::string_view text) { return convert_json(text, true); }
std::optional<std::string> core_json_to_events(std::string_view text) { return convert_json(text, false); }

YAML::Node events_to_core(const YAML::Node& ev) {
  YAML::Node core = renamed_copy(ev, true, "v1");
  if (!at(core, "source").IsMap()) {
    std::string component = scalar(core, "reportingComponent"), host = scalar(core, "reportingInstance");
    if (!component.empty() || !host.empty()) {
      YAML::Node src(YAML::NodeType::Map);
      if (!component.empty()) src["component"] = str_node(component);
      if (!host.empty()) src["host"] = str_node(host);
      core["source"] = src;
    }
  }
  return core;
}

YAML::Node core_to_events(const YAML::Node& core) {
  YAML::Node ev = renamed_copy(core, false, "events.k8s.io/v1");
  YAML::Node src = at(ev, "deprecatedSource");
  if (src.IsMap()) {
    std::string component = scalar(src, "component"), host = scalar(src, "host");
    size_t fields = src.size();
    if (component == scalar(ev, "reportingController") && host == scalar(ev, "reportingInstance") &&
        fields == static_cast<size_t>(!component.empty()) + static_cast<size_t>(!host.empty()))
      ev.remove("deprecatedSource");
  }
  return ev;
}

YAML::Node to_storage(const kind_info& view, const YAML::Node& body) {
  return view.is_view() ? events_to_core(body) : body;
}

YAML::Node to_view(const kind_info& view, const YAML::Node& stored) {
  return view.is_view() ? core_to_events(stored) : stored;
}

op_result<object_ptr> as_view(const kind_info& k, op_result<object_ptr> r) {
  if (r.ok()) {
    r.value = view_of(*r.value, k);
  } else if (k.is_view() && r.err.kind == k.storage->resource && r.err.group == k.storage->group) {
    // Errors name the resource that was asked for ("events.events.k8s.io \"x\" already exists").
    r.err.group = k.group;
    const std::string from = k.storage->qualified() + " \"", to = k.qualified() + " \"";
    if (r.err.message.rfind(from, 0) == 0) r.err.message = to + r.err.message.substr(from.size());
  }
  return r;
}

object_ptr view_of(const object_ptr& o, const kind_info& view) {
  if (!o || o->kind == &view) return o;
  if (o->view_cache && o->view_cache->kind == &view) return o->view_cache;
  auto v = std::make_shared<stored_object>();
  auto text = view.is_view() ? core_json_to_events(o->json) : events_json_to_core(o->json);
  v->json = text ? std::move(*text) : to_json(to_view(view, o->tree()));
  v->kind = &view;
  v->ns = o->ns;
  v->name = o->name;
  v->uid = o->uid;
  v->rv = o->rv;
  v->labels = o->labels;
  static json_doc doc;
  if (doc.parse(v->json)) v->fields = string_fields(doc, selectable_fields(view));
  o->view_cache = v;
  return v;
}

}  // namespace kas::testapi

// Conversion between the two views of Events (event_views.hpp).
#include "tests/apiserver/event_views.hpp"

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

}  // namespace

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

object_ptr view_of(const object_ptr& o, const kind_info& view) {
  if (!o || o->kind == &view) return o;
  if (o->view_cache && o->view_cache->kind == &view) return o->view_cache;
  auto v = std::make_shared<stored_object>();
  YAML::Node tree = to_view(view, o->tree());
  v->kind = &view;
  v->ns = o->ns;
  v->name = o->name;
  v->uid = o->uid;
  v->rv = o->rv;
  v->labels = o->labels;
  for (const auto& path : selectable_fields(view))
    if (auto s = string_at(tree, path)) v->fields.emplace_back(path, *s);
  v->json = to_json(tree);
  o->view_cache = v;
  return v;
}

}  // namespace kas::testapi

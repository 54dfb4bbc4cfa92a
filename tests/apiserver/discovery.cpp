// Discovery (/version, /api, /apis, APIResourceLists), health endpoints, /debug/faults and
// /debug/restart, and the meta.k8s.io/v1 Table kubectl asks for with `Accept: ...;as=Table`
// (server-side printing): the columns follow kube-apiserver's printers for pods, nodes and events;
// other kinds get Name and Age.
#include <algorithm>
#include <ctime>
#include <set>

#include "messages/codec.hpp"
#include "tests/apiserver/event_views.hpp"
#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/server.hpp"

namespace kas::testapi {

namespace {

const char* kVerbs = R"(["create","delete","get","list","patch","update","watch"])";

std::string quoted(const std::string& s) {
  std::string out;
  codec::append_json_string(out, s);
  return out;
}

std::string resource_entry(const std::string& name, const std::string& singular, bool namespaced,
                           const std::string& kind, const std::string& verbs, const std::vector<std::string>& shorts) {
  std::string out = "{\"name\":" + quoted(name) + ",\"singularName\":" + quoted(singular) +
                    ",\"namespaced\":" + (namespaced ? "true" : "false") + ",\"kind\":" + quoted(kind) +
                    ",\"verbs\":" + verbs;
  if (!shorts.empty()) {
    out += ",\"shortNames\":[";
    for (size_t i = 0; i < shorts.size(); ++i) out += (i ? "," : "") + quoted(shorts[i]);
    out += "]";
  }
  return out + "}";
}

std::string resource_list(const std::string& group, const std::string& version) {
  std::string gv = group.empty() ? version : group + "/" + version;
  std::string out = "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":" + quoted(gv) + ",\"resources\":[";
  bool first = true;
  auto add = [&](const std::string& e) {
    out += (first ? "" : ",") + e;
    first = false;
  };
  for (const auto& k : all_kinds()) {
    if (k.group != group || k.version != version) continue;
    add(resource_entry(k.resource, k.singular, k.namespaced, k.kind, kVerbs, k.short_names));
    if (k.has_status)
      add(resource_entry(k.resource + "/status", "", k.namespaced, k.kind, R"(["get","patch","update"])", {}));
    if (k.resource == "pods" && group.empty())
      add(resource_entry("pods/binding", "", true, "Binding", R"(["create"])", {}));
  }
  if (group.empty()) add(resource_entry("bindings", "binding", true, "Binding", R"(["create"])", {}));
  return out + "]}";
}

// The versions a group serves, in table order (scheduling.k8s.io: v1, then v1beta1 for PodGroup).
std::vector<std::string> versions_of(const std::string& g) {
  std::vector<std::string> out;
  for (const auto& k : all_kinds())
    if (k.group == g && std::find(out.begin(), out.end(), k.version) == out.end()) out.push_back(k.version);
  return out;
}

std::string group_entry(const std::string& g) {
  auto gv = [&](const std::string& v) {
    return "{\"groupVersion\":" + quoted(g + "/" + v) + ",\"version\":" + quoted(v) + "}";
  };
  auto vs = versions_of(g);
  std::string list;
  for (size_t i = 0; i < vs.size(); ++i) list += (i ? "," : "") + gv(vs[i]);
  return "{\"name\":" + quoted(g) + ",\"versions\":[" + list + "],\"preferredVersion\":" + gv(vs.front()) + "}";
}

std::vector<std::string> groups() {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& k : all_kinds())
    if (!k.group.empty() && seen.insert(k.group).second) out.push_back(k.group);
  return out;
}

// OpenAPI v3, only as much as kubectl reads: a PATCH operation per kind that declares the
// fieldValidation query parameter, so `kubectl apply` validates on the server (fieldValidation=Strict)
// instead of downloading schemas for client-side validation. No schemas are served.
std::string openapi_gv(const std::string& group, const std::string& version) {
  std::string out = R"J({"openapi":"3.0.0","info":{"title":"Kubernetes (kube-actor test apiserver)","version":"v1.32.0"},"paths":{)J";
  bool first = true;
  for (const auto& k : all_kinds()) {
    if (k.group != group || k.version != version) continue;
    std::string prefix = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
    std::string path = prefix + (k.namespaced ? "/namespaces/{namespace}/" : "/") + k.resource + "/{name}";
    out += (first ? "" : ",") + quoted(path) +
           R"(:{"patch":{"x-kubernetes-group-version-kind":{"group":)" + quoted(k.group) + ",\"version\":" +
           quoted(k.version) + ",\"kind\":" + quoted(k.kind) +
           R"(},"parameters":[{"name":"fieldValidation","in":"query","schema":{"type":"string"}}],"responses":{}}})";
    first = false;
  }
  return out + R"(},"components":{"schemas":{}}})";
}

std::string openapi_root() {
  std::string out = R"({"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=0"})";
  for (const auto& g : groups())
    for (const auto& v : versions_of(g))
      out += ",\"apis/" + g + "/" + v + "\":{\"serverRelativeURL\":\"/openapi/v3/apis/" + g + "/" + v + "?hash=0\"}";
  return out + "}}";
}

}  // namespace

bool server::handle_discovery(request& r) {
  const std::string& p = r.path;
  // Resource paths (the hot ones: /api/v1/namespaces/..., /apis/g/v/...) are never discovery.
  if (std::count(p.begin(), p.end(), '/') > 3 && p.rfind("/openapi/", 0) != 0) return false;
  auto json = [&](const std::string& body) { respond(r.req, 200, "application/json", body); };
  if (p == "/healthz" || p == "/readyz" || p == "/livez") {
    respond(r.req, 200, "text/plain", "ok");
    return true;
  }
  if (p == "/version") {
    json(R"({"major":"1","minor":"32","gitVersion":"v1.32.0-kube-actor-test-apiserver","gitCommit":"","gitTreeState":"clean",)"
         R"("buildDate":"1970-01-01T00:00:00Z","goVersion":"none","compiler":"none","platform":"linux/amd64"})");
    return true;
  }
  if (p == "/debug/faults") {
    const auto& f = faults_;
    json("{\"watchClosed\":" + std::to_string(f.watch_closed) + ",\"write500\":" + std::to_string(f.write_500) +
         ",\"binding409\":" + std::to_string(f.binding_409) + ",\"slowed\":" + std::to_string(f.slowed) +
         ",\"compactions\":" + std::to_string(f.compactions) + ",\"watchExpired\":" + std::to_string(f.watch_expired) +
         ",\"restarts\":" + std::to_string(f.restarts) +
         ",\"restartCutConnections\":" + std::to_string(f.restart_cut_connections) +
         ",\"leaseWritesRefused\":" + std::to_string(f.lease_writes_refused) +
         ",\"resourceVersion\":" + std::to_string(store_.current_rv()) + "}");
    return true;
  }
  if (p == "/debug/restart") {
    if (r.method != "POST") {
      respond_error(r.req, {405, "MethodNotAllowed", "POST /debug/restart restarts the apiserver", "", "", ""},
                    wire_format::json);
      return true;
    }
    // Answered first: the restart runs once the loop has written this answer, then cuts its
    // connection with the others.
    json("{\"restarts\":" + std::to_string(faults_.restarts + 1) + "}");
    restart_soon();
    return true;
  }
  if (p == "/debug/partition-lease-holder") {
    std::string holder = r.param("holder");
    if (r.method != "POST" || holder.empty()) {
      respond_error(r.req, {400, "BadRequest", "POST /debug/partition-lease-holder?holder=ID", "", "", ""},
                    wire_format::json);
      return true;
    }
    partitioned_holders_.push_back(holder);
    json("{\"partitioned\":" + std::to_string(partitioned_holders_.size()) + "}");
    return true;
  }
  if (p == "/openapi/v3") {
    json(openapi_root());
    return true;
  }
  if (p == "/openapi/v3/api/v1") {
    json(openapi_gv("", "v1"));
    return true;
  }
  for (const auto& g : groups())
    for (const auto& v : versions_of(g))
      if (p == "/openapi/v3/apis/" + g + "/" + v) {
        json(openapi_gv(g, v));
        return true;
      }
  if (p == "/api" || p == "/api/") {
    json(R"({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":")" +
         opts_.host + "\"}]}");
    return true;
  }
  if (p == "/api/v1" || p == "/api/v1/") {
    json(resource_list("", "v1"));
    return true;
  }
  if (p == "/apis" || p == "/apis/") {
    std::string out = "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[";
    auto gs = groups();
    for (size_t i = 0; i < gs.size(); ++i) out += (i ? "," : "") + group_entry(gs[i]);
    json(out + "]}");
    return true;
  }
  for (const auto& g : groups()) {
    if (p == "/apis/" + g || p == "/apis/" + g + "/") {
      json("{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\"," + group_entry(g).substr(1));
      return true;
    }
    for (const auto& v : versions_of(g))
      if (p == "/apis/" + g + "/" + v || p == "/apis/" + g + "/" + v + "/") {
        json(resource_list(g, v));
        return true;
      }
  }
  return false;
}

namespace {

// Age since an RFC 3339 time (Time or MicroTime), as kubectl's duration printer writes it.
std::string age_since(const std::optional<std::string>& ts) {
  int64_t secs = 0;
  int32_t nanos = 0;
  if (!ts || ts->empty() || !codec::parse_rfc3339(*ts, secs, nanos)) return "<unknown>";
  int64_t d = static_cast<int64_t>(std::time(nullptr)) - secs;
  if (d < 0) d = 0;
  auto s = [](int64_t v) { return std::to_string(v); };
  if (d < 120) return s(d) + "s";
  if (d < 600) return s(d / 60) + "m" + (d % 60 ? s(d % 60) + "s" : "");
  if (d < 3 * 3600) return s(d / 60) + "m";
  if (d < 8 * 3600) return s(d / 3600) + "h" + (d % 3600 / 60 ? s(d % 3600 / 60) + "m" : "");
  if (d < 48 * 3600) return s(d / 3600) + "h";
  if (d < 8 * 86400) return s(d / 86400) + "d" + (d % 86400 / 3600 ? s(d % 86400 / 3600) + "h" : "");
  return s(d / 86400) + "d";
}

std::string human_age(const YAML::Node& tree) { return age_since(string_at(tree, "metadata.creationTimestamp")); }

std::string or_none(const std::optional<std::string>& v) { return v && !v->empty() ? *v : "<none>"; }

struct column {
  const char* name;
  const char* type;
  int priority;
};

std::vector<column> columns_for(const kind_info& k) {
  if (k.resource == "pods")
    return {{"Name", "string", 0}, {"Ready", "string", 0}, {"Status", "string", 0}, {"Restarts", "string", 0},
            {"Age", "string", 0}, {"IP", "string", 1}, {"Node", "string", 1}, {"Nominated Node", "string", 1},
            {"Readiness Gates", "string", 1}};
  if (k.resource == "nodes")
    return {{"Name", "string", 0}, {"Status", "string", 0}, {"Roles", "string", 0}, {"Age", "string", 0},
            {"Version", "string", 0}, {"Internal-IP", "string", 1}, {"External-IP", "string", 1},
            {"OS-Image", "string", 1}, {"Kernel-Version", "string", 1}, {"Container-Runtime", "string", 1}};
  if (k.resource == "events")
    return {{"Last Seen", "string", 0}, {"Type", "string", 0}, {"Reason", "string", 0}, {"Object", "string", 0},
            {"Message", "string", 0}};
  if (k.resource == "namespaces") return {{"Name", "string", 0}, {"Status", "string", 0}, {"Age", "string", 0}};
  return {{"Name", "string", 0}, {"Age", "string", 0}};
}

std::vector<std::string> pod_cells(const YAML::Node& t) {
  YAML::Node containers = at(at(t, "spec"), "containers");
  size_t total = containers.IsSequence() ? containers.size() : 0, ready = 0;
  YAML::Node statuses = at(at(t, "status"), "containerStatuses");
  if (statuses.IsSequence())
    for (const auto& s : statuses)
      if (at(s, "ready").IsScalar() && at(s, "ready").Scalar() == "true") ++ready;
  std::string status = string_at(t, "metadata.deletionTimestamp") ? "Terminating"
                       : string_at(t, "status.reason")            ? *string_at(t, "status.reason")
                                                                  : string_at(t, "status.phase").value_or("Pending");
  return {*string_at(t, "metadata.name"), std::to_string(ready) + "/" + std::to_string(total), status, "0",
          human_age(t), or_none(string_at(t, "status.podIP")), or_none(string_at(t, "spec.nodeName")),
          or_none(string_at(t, "status.nominatedNodeName")), "<none>"};
}

std::vector<std::string> node_cells(const YAML::Node& t) {
  std::string status = "Unknown";
  YAML::Node conds = at(at(t, "status"), "conditions");
  if (conds.IsSequence())
    for (const auto& c : conds)
      if (string_at(c, "type") == std::string("Ready"))
        status = string_at(c, "status") == std::string("True") ? "Ready" : "NotReady";
  if (string_at(t, "spec.unschedulable") == std::string("true")) status += ",SchedulingDisabled";
  std::string roles;
  YAML::Node labels = at(at(t, "metadata"), "labels");
  if (labels.IsMap())
    for (const auto& kv : labels) {
      const std::string key = kv.first.Scalar();
      const std::string prefix = "node-role.kubernetes.io/";
      if (key.rfind(prefix, 0) == 0) roles += (roles.empty() ? "" : ",") + key.substr(prefix.size());
    }
  std::string internal, external;
  YAML::Node addrs = at(at(t, "status"), "addresses");
  if (addrs.IsSequence())
    for (const auto& a : addrs) {
      std::string type = string_at(a, "type").value_or("");
      std::string addr = string_at(a, "address").value_or("");
      if (type == "InternalIP" && internal.empty()) internal = addr;
      if (type == "ExternalIP" && external.empty()) external = addr;
    }
  return {*string_at(t, "metadata.name"), status, roles.empty() ? "<none>" : roles, human_age(t),
          or_none(string_at(t, "status.nodeInfo.kubeletVersion")), or_none(internal), or_none(external),
          or_none(string_at(t, "status.nodeInfo.osImage")), or_none(string_at(t, "status.nodeInfo.kernelVersion")),
          or_none(string_at(t, "status.nodeInfo.containerRuntimeVersion"))};
}

std::vector<std::string> event_cells(const YAML::Node& t) {
  std::string obj = string_at(t, "involvedObject.kind").value_or("");
  for (auto& c : obj) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  obj += "/" + string_at(t, "involvedObject.name").value_or("");
  // LAST SEEN as kube's event printer picks it: lastTimestamp, else the first time (firstTimestamp,
  // else eventTime); a series' lastObservedTime wins.
  auto first = string_at(t, "firstTimestamp");
  if (!first) first = string_at(t, "eventTime");
  auto last = string_at(t, "lastTimestamp");
  if (!last) last = first;
  if (auto observed = string_at(t, "series.lastObservedTime")) last = observed;
  return {age_since(last), string_at(t, "type").value_or(""), string_at(t, "reason").value_or(""), obj,
          string_at(t, "message").value_or("")};
}

std::vector<std::string> cells_for(const kind_info& k, const YAML::Node& t) {
  if (k.resource == "pods") return pod_cells(t);
  if (k.resource == "nodes") return node_cells(t);
  if (k.resource == "events") return event_cells(k.is_view() ? events_to_core(t) : t);
  if (k.resource == "namespaces")
    return {string_at(t, "metadata.name").value_or(""), string_at(t, "status.phase").value_or(""), human_age(t)};
  return {string_at(t, "metadata.name").value_or(""), human_age(t)};
}

}  // namespace

std::string server::table_body(const kind_info& k, const std::vector<object_ptr>& items, uint64_t rv,
                               const std::string& cont) const {
  std::string out = "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"resourceVersion\":\"" +
                    std::to_string(rv) + "\"";
  if (!cont.empty()) out += ",\"continue\":" + quoted(cont);
  out += "},\"columnDefinitions\":[";
  auto cols = columns_for(k);
  for (size_t i = 0; i < cols.size(); ++i)
    out += std::string(i ? "," : "") + "{\"name\":" + quoted(cols[i].name) + ",\"type\":\"" + cols[i].type +
           "\",\"format\":\"" + (i == 0 && std::string(cols[i].name) == "Name" ? "name" : "") +
           "\",\"description\":\"\",\"priority\":" + std::to_string(cols[i].priority) + "}";
  out += "],\"rows\":[";
  for (size_t i = 0; i < items.size(); ++i) {
    const YAML::Node t = items[i]->tree();
    auto cells = cells_for(k, t);
    out += i ? ",{\"cells\":[" : "{\"cells\":[";
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) out += ',';
      if (k.resource == "pods" && c == 3) out += cells[c]; else out += quoted(cells[c]);
    }
    out += "],\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":";
    out += to_json(at(t, "metadata")) + "}}";
  }
  return out + "]}";
}

}  // namespace kas::testapi

// The store's writes (store.hpp): create, update, patch, delete, pods/binding, and commit, which
// stamps the resourceVersion and records the change for watches.
#include "tests/apiserver/store.hpp"

#include "cache/pod_group.hpp"
#include "messages/k8s/scheduling.pb.h"
#include "messages/codec.hpp"
#include "tests/apiserver/event_views.hpp"
#include "tests/apiserver/json_edit.hpp"
#include "tests/apiserver/json_tree.hpp"
#include "tests/apiserver/pod_strategy.hpp"
#include "tests/apiserver/selectors.hpp"

namespace kas::testapi {

namespace {

using R = op_result<object_ptr>;

YAML::Node child(const YAML::Node& n, const char* key) { return at(n, key); }

std::string scalar_or_empty(const YAML::Node& n) { return n.IsDefined() && n.IsScalar() ? n.Scalar() : ""; }

}  // namespace

std::string generated_name_suffix() {
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t r = fast_random();
  std::string s;
  for (int i = 0; i < 5; ++i, r >>= 8) s += alphabet[(r & 0xff) % (sizeof alphabet - 1)];
  return s;
}

namespace {

// Bodies of proto kinds must decode into their message (types checked by the codec).
std::optional<api_error> validate_types(const kind_info& k, const YAML::Node& tree) {
  if (!k.prototype) return std::nullopt;
  std::unique_ptr<google::protobuf::Message> m(k.prototype->New());
  auto r = codec::decode_node(tree, *m);
  if (!r) return bad_request(k.kind + " in version \"" + k.version + "\" cannot be handled: " + r.err().message);
  return std::nullopt;
}

// What the apiserver's validation refuses in a PodGroup (scheduling.k8s.io/v1beta1), as a 422
// naming the field: the scheduler's own compiler holds the same rules (cache/pod_group.hpp). The
// Coscheduling CRD's schema checks only the types (validate_types): its minimum-free fields are the
// scheduler's to refuse, as on a real cluster.
std::optional<api_error> validate_spec(const kind_info& k, const YAML::Node& tree) {
  if (k.resource != "podgroups" || k.group != "scheduling.k8s.io") return std::nullopt;
  k8s::scheduling::PodGroup pg;
  if (!codec::decode_node(tree, pg)) return std::nullopt;  // validate_types has answered
  auto g = compile_pod_group(pg);
  if (g) return std::nullopt;
  return api_error{422, "Invalid", k.kind + "." + k.group + " \"" + pg.metadata().name() + "\" is invalid: " + g.err().message,
                   pg.metadata().name(), k.group, k.kind};
}

std::optional<api_error> check_type_meta(const kind_info& k, const YAML::Node& body) {
  std::string kind = scalar_or_empty(child(body, "kind"));
  std::string av = scalar_or_empty(child(body, "apiVersion"));
  if ((!kind.empty() && kind != k.kind) || (!av.empty() && av != k.api_version()))
    return bad_request("the body's kind \"" + av + "/" + kind + "\" does not match the resource " + k.api_version() +
                       "/" + k.resource);
  return std::nullopt;
}

void apply_defaults(const kind_info& k, YAML::Node& tree) {
  if (k.resource == "pods" && k.group.empty()) {
    prepare_pod_for_create(tree);
  } else if (k.resource == "namespaces") {
    if (!child(tree, "status").IsMap()) tree["status"] = YAML::Node(YAML::NodeType::Map);
    YAML::Node status = tree["status"];
    if (scalar_or_empty(child(status, "phase")).empty()) status["phase"] = str_node("Active");
  }
}


// What a view's body must pass before it is converted to the storage's shape.
std::optional<api_error> check_view_body(const kind_info& k, const YAML::Node& body) {
  if (!body.IsMap()) return bad_request("the request body is not a JSON object");
  if (auto e = check_type_meta(k, body)) return e;
  return validate_types(k, body);
}

}  // namespace

store::store(store_options opts) : opts_(opts) {
  const kind_info* ns = find_kind("", "v1", "namespaces");
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    YAML::Node body(YAML::NodeType::Map);
    body["metadata"]["name"] = str_node(name);
    create(*ns, "", body);
  }
}

std::optional<api_error> store::check_namespace(const kind_info& k, const std::string& ns) const {
  if (!k.namespaced) return std::nullopt;
  if (ns.empty()) return bad_request("a namespace is required for " + k.qualified());
  static const kind_info* nsk = find_kind("", "v1", "namespaces");
  if (!get(*nsk, "", ns).ok()) return not_found(*nsk, ns);
  return std::nullopt;
}

op_result<priority_admission> store::admit_priority(const std::string& name, const std::string& class_name,
                                                    std::optional<int64_t> given_priority,
                                                    const std::string& given_policy) const {
  using A = op_result<priority_admission>;
  auto forbidden = [&](const std::string& why) {
    return A::fail({403, "Forbidden", "pods \"" + name + "\" is forbidden: " + why, name, "", "pods"});
  };
  // The classes every kube-apiserver creates at start.
  static const std::map<std::string, int64_t> system_classes = {{"system-cluster-critical", 2000000000},
                                                                {"system-node-critical", 2000001000}};
  static const kind_info* pck = find_kind("scheduling.k8s.io", "v1", "priorityclasses");
  auto read = [](const object_ptr& pc) {
    YAML::Node t = pc->tree();
    priority_admission a;
    a.class_name = pc->name;
    a.priority = std::strtoll(scalar_or_empty(at(t, "value")).c_str(), nullptr, 10);
    a.preemption_policy = scalar_or_empty(at(t, "preemptionPolicy"));
    if (a.preemption_policy.empty()) a.preemption_policy = "PreemptLowerPriority";
    return a;
  };
  priority_admission a;
  a.preemption_policy = "PreemptLowerPriority";
  const object_map* classes = objects_or_null(*pck);
  if (class_name.empty()) {
    // The global default; with several, the one of lowest value (as upstream). None: priority 0.
    bool found = false;
    if (classes)
      for (const auto& [key, pc] : *classes) {
        if (scalar_or_empty(at(pc->tree(), "globalDefault")) != "true") continue;
        auto c = read(pc);
        if (!found || c.priority < a.priority) a = c;
        found = true;
      }
  } else if (auto it = classes ? classes->find(object_key("", class_name)) : object_map::const_iterator();
             classes && it != classes->end()) {
    a = read(it->second);
  } else if (auto sys = system_classes.find(class_name); sys != system_classes.end()) {
    a.class_name = class_name;
    a.priority = sys->second;
  } else {
    return forbidden("no PriorityClass with name " + class_name + " was found");
  }
  if (given_priority && *given_priority != a.priority)
    return forbidden("the integer value of priority (" + std::to_string(*given_priority) +
                     ") must not be provided in pod spec; priority admission controller computed " +
                     std::to_string(a.priority) + " from the given PriorityClass name");
  if (!given_policy.empty() && given_policy != a.preemption_policy)
    return forbidden("the string value of PreemptionPolicy (" + given_policy +
                     ") must not be provided in pod spec; priority admission controller computed " +
                     a.preemption_policy + " from the given PriorityClass name");
  return A::good(std::move(a));
}

R store::create(const kind_info& k, const std::string& ns, const YAML::Node& body) {
  if (!k.is_view()) return create_stored(k, ns, body, false);
  if (auto e = check_view_body(k, body)) return R::fail(*e);
  return as_view(k, create_stored(*k.storage, ns, to_storage(k, body), true));
}

R store::create_stored(const kind_info& k, const std::string& ns, const YAML::Node& body, bool owned) {
  if (!body.IsMap()) return R::fail(bad_request("the request body is not a JSON object"));
  if (auto e = check_type_meta(k, body)) return R::fail(*e);
  YAML::Node tree = owned ? body : clone(body);
  if (!at(tree, "metadata").IsMap()) tree["metadata"] = YAML::Node(YAML::NodeType::Map);
  YAML::Node meta = tree["metadata"];
  std::string body_ns = scalar_or_empty(child(meta, "namespace"));
  if (k.namespaced && !body_ns.empty() && body_ns != ns)
    return R::fail(bad_request("the namespace of the provided object does not match the namespace sent on the request"));
  std::string name = scalar_or_empty(child(meta, "name"));
  if (name.empty()) {
    std::string gen = scalar_or_empty(child(meta, "generateName"));
    if (gen.empty())
      return R::fail({422, "Invalid", k.kind + " \"\" is invalid: metadata.name: Required value: name or generateName is required",
                      "", k.group, k.kind});
    name = gen + generated_name_suffix();
  }
  if (auto e = check_namespace(k, ns)) return R::fail(*e);
  if (objects(k).count(object_key(k.namespaced ? ns : "", name)))
    return R::fail({409, "AlreadyExists", k.qualified() + " \"" + name + "\" already exists", name, k.group, k.resource});
  meta["name"] = str_node(name);
  if (k.namespaced) meta["namespace"] = str_node(ns); else meta.remove("namespace");
  meta["uid"] = str_node(random_uuid());
  meta["creationTimestamp"] = str_node(now_rfc3339());
  tree["kind"] = str_node(k.kind);
  tree["apiVersion"] = str_node(k.api_version());
  apply_defaults(k, tree);
  if (auto e = validate_types(k, tree)) return R::fail(*e);
  if (auto e = validate_spec(k, tree)) return R::fail(*e);
  if (k.resource == "pods" && k.group.empty() && opts_.priority_admission_plugin) {
    YAML::Node spec = tree["spec"];
    std::optional<int64_t> given;
    if (YAML::Node p = at(spec, "priority"); p.IsScalar()) given = std::strtoll(p.Scalar().c_str(), nullptr, 10);
    auto a = admit_priority(name, scalar_or_empty(at(spec, "priorityClassName")), given,
                            scalar_or_empty(at(spec, "preemptionPolicy")));
    if (!a.ok()) return R::fail(a.err);
    if (!a.value->class_name.empty()) spec["priorityClassName"] = str_node(a.value->class_name);
    spec["priority"] = a.value->priority;
    spec["preemptionPolicy"] = str_node(a.value->preemption_policy);
  }
  return commit(k, change_type::added, tree, nullptr);
}

R store::commit(const kind_info& k, change_type t, YAML::Node tree, object_ptr prev) {
  auto obj = std::make_shared<stored_object>();
  obj->kind = &k;
  obj->rv = ++rv_;
  tree["metadata"]["resourceVersion"] = str_node(std::to_string(obj->rv));
  YAML::Node meta = at(tree, "metadata");
  obj->name = scalar_or_empty(at(meta, "name"));
  obj->ns = k.namespaced ? scalar_or_empty(at(meta, "namespace")) : "";
  obj->uid = scalar_or_empty(at(meta, "uid"));
  YAML::Node labels = at(meta, "labels");
  if (labels.IsMap())
    for (const auto& kv : labels)
      if (kv.second.IsScalar()) obj->labels[kv.first.Scalar()] = kv.second.Scalar();
  for (const auto& path : selectable_fields(k))
    if (auto v = string_at(tree, path)) obj->fields.emplace_back(path, *v);
  obj->json = to_json(tree);
  object_ptr ptr = obj;
  std::string key = object_key(obj->ns, obj->name);
  if (t == change_type::deleted)
    objects(k).erase(key);
  else
    objects(k)[key] = ptr;
  record(change{obj->rv, t, ptr, std::move(prev)});
  return R::good(ptr);
}

R store::replace_checked(const kind_info& k, const object_ptr& cur, YAML::Node next, bool status_only) {
  if (!next.IsMap()) return R::fail(bad_request("the request body is not a JSON object"));
  if (status_only) {
    YAML::Node keep = cur->tree();
    YAML::Node st = child(next, "status");
    if (st.IsDefined()) keep["status"] = clone(st); else keep.remove("status");
    next = keep;
  } else if (k.has_status) {
    YAML::Node st = child(cur->tree(), "status");
    if (st.IsDefined()) next["status"] = clone(st); else next.remove("status");
  }
  if (!at(next, "metadata").IsMap()) next["metadata"] = YAML::Node(YAML::NodeType::Map);
  YAML::Node meta = next["metadata"];
  std::string name = scalar_or_empty(child(meta, "name"));
  if (!name.empty() && name != cur->name)
    return R::fail(bad_request("the name of the object (" + name + ") does not match the name on the URL (" + cur->name + ")"));
  std::string ns = scalar_or_empty(child(meta, "namespace"));
  if (k.namespaced && !ns.empty() && ns != cur->ns)
    return R::fail(bad_request("the namespace of the provided object does not match the namespace sent on the request"));
  std::string rv = scalar_or_empty(child(meta, "resourceVersion"));
  if (!rv.empty() && rv != std::to_string(cur->rv))
    return R::fail(conflict(k, cur->name, "the object has been modified; please apply your changes to the latest version and try again"));
  YAML::Node created = at(at(cur->tree(), "metadata"), "creationTimestamp");
  meta["name"] = str_node(cur->name);
  if (k.namespaced) meta["namespace"] = str_node(cur->ns);
  meta["uid"] = str_node(cur->uid);
  if (created.IsDefined()) meta["creationTimestamp"] = clone(created);
  meta["resourceVersion"] = str_node(std::to_string(cur->rv));
  next["kind"] = str_node(k.kind);
  next["apiVersion"] = str_node(k.api_version());
  if (auto e = validate_types(k, next)) return R::fail(*e);
  if (auto e = validate_spec(k, next)) return R::fail(*e);
  if (to_json(next) == cur->json) return R::good(cur);  // a no-op write keeps its resourceVersion
  return commit(k, change_type::modified, next, cur);
}

R store::update(const kind_info& k, const std::string& ns, const std::string& name, const YAML::Node& body,
                bool status_only) {
  if (k.is_view()) {
    if (auto e = check_view_body(k, body)) return R::fail(*e);
    if (auto cur = get(k, ns, name); !cur.ok()) return cur;
    return as_view(k, update(*k.storage, ns, name, to_storage(k, body), status_only));
  }
  if (!body.IsMap()) return R::fail(bad_request("the request body is not a JSON object"));
  if (auto e = check_type_meta(k, body)) return R::fail(*e);
  auto cur = get(k, ns, name);
  if (!cur.ok()) return cur;
  return replace_checked(k, *cur.value, clone(body), status_only);
}

R store::patch(const kind_info& k, const std::string& ns, const std::string& name, patch_kind pk,
               const YAML::Node& p, bool status_only) {
  if (!p.IsMap()) return R::fail(bad_request("the patch is not a JSON object"));
  const kind_info& sk = *k.storage;
  auto cur = get(sk, ns, name);
  if (!cur.ok()) return k.is_view() ? R::fail(not_found(k, name)) : cur;
  YAML::Node base = to_view(k, (*cur.value)->tree());
  YAML::Node next = pk == patch_kind::merge ? merge_patch(base, p) : strategic_merge_patch(base, p);
  if (!k.is_view()) return replace_checked(k, *cur.value, next, status_only);
  if (auto e = check_view_body(k, next)) return R::fail(*e);
  return as_view(k, replace_checked(sk, *cur.value, to_storage(k, next), status_only));
}

R store::remove(const kind_info& k, const std::string& ns, const std::string& name, const delete_preconditions& pre) {
  if (k.is_view()) {
    if (!get(k, ns, name).ok()) return R::fail(not_found(k, name));
    return as_view(k, remove(*k.storage, ns, name, pre));
  }
  auto cur = get(k, ns, name);
  if (!cur.ok()) return cur;
  const object_ptr& obj = *cur.value;
  if (pre.uid && *pre.uid != obj->uid)
    return R::fail(conflict(k, name, "Precondition failed: UID in precondition: " + *pre.uid +
                                         ", UID in object meta: " + obj->uid));
  if (pre.resource_version && *pre.resource_version != std::to_string(obj->rv))
    return R::fail(conflict(k, name, "Precondition failed: ResourceVersion in precondition: " + *pre.resource_version +
                                         ", ResourceVersion in object meta: " + std::to_string(obj->rv)));
  return commit(k, change_type::deleted, obj->tree(), obj);
}

}  // namespace kas::testapi

// Loading `simulate` manifests. Design note:
//
// load_manifests is a pure function of the file contents: file -> documents (yaml-cpp, through
// load_yaml's limits on hostile input; JSON is YAML's flow subset) -> objects (a `kind: List` or
// typed `*List` is flattened into its items) -> typed protos (codec::decode_node). The first
// problem stops the load and comes back as one error that names the file, the document (and List
// item) and the field path, so a user can fix the manifest without guessing. Kinds the scheduler
// does not read are skipped with a warning; nothing is dropped silently. The namespace of a
// cluster-scoped kind is dropped, as the apiserver drops it on create.
//
// compile_cluster does what the apiserver and its admission chain would have done before the
// scheduler saw the objects: namespace defaulting (at load), Priority admission
// (priorityClassName -> spec.priority), uniqueness of names, the existence of the node a bound
// pod runs on, and the cluster objects plugins read (manifest_objects.cpp: namespaces, workload
// selectors, PDBs, the storage objects). Terminal pods (Succeeded/Failed) are invisible to
// kube-scheduler's informer, so they are left out here too.
#include "config/cluster_manifests.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include <yaml-cpp/yaml.h>

#include "config/manifest_objects.hpp"
#include "config/object_validation.hpp"
#include "config/yaml_guard.hpp"
#include "messages/codec.hpp"
#include "messages/schema/strict_fields.hpp"

namespace kas {

std::string manifest_origin::describe() const {
  std::string s = file + ": document " + std::to_string(document);
  if (item >= 0) s += " item " + std::to_string(item);
  if (!kind.empty()) {
    s += " (" + kind;
    if (!name.empty()) s += " " + (ns.empty() ? name : ns + "/" + name);
    s += ")";
  }
  return s;
}

namespace {

// The kinds the scheduler reads. `group` is the API group apiVersion must name ("" = core "v1").
struct kind_spec {
  std::string_view kind;
  std::string_view group;
  std::string_view default_api_version;
  bool namespaced;
};

constexpr kind_spec known_kinds[] = {
  {"Node", "", "v1", false},
  {"Pod", "", "v1", true},
  {"Namespace", "", "v1", false},
  {"PriorityClass", "scheduling.k8s.io", "scheduling.k8s.io/v1", false},
  {"PodDisruptionBudget", "policy", "policy/v1", true},
  // Two APIs declare a PodGroup: upstream's and the Coscheduling CRD (see pod_group_api_versions).
  {"PodGroup", "scheduling.k8s.io", "scheduling.k8s.io/v1beta1", true},
  {"Service", "", "v1", true},
  {"ReplicationController", "", "v1", true},
  {"ReplicaSet", "apps", "apps/v1", true},
  {"StatefulSet", "apps", "apps/v1", true},
  {"PersistentVolume", "", "v1", false},
  {"PersistentVolumeClaim", "", "v1", true},
  {"StorageClass", "storage.k8s.io", "storage.k8s.io/v1", false},
  {"CSINode", "storage.k8s.io", "storage.k8s.io/v1", false},
  {"CSIDriver", "storage.k8s.io", "storage.k8s.io/v1", false},
  {"CSIStorageCapacity", "storage.k8s.io", "storage.k8s.io/v1", true},
  {"VolumeAttachment", "storage.k8s.io", "storage.k8s.io/v1", false},
};

const kind_spec* find_kind(std::string_view kind) {
  for (auto& k : known_kinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

// The API versions of kind PodGroup the scheduler reads; the group picks the form. A version of
// either group that the scheduler does not know is refused, since its fields may mean other things.
constexpr std::string_view pod_group_v1beta1 = "scheduling.k8s.io/v1beta1";
constexpr std::string_view pod_group_coscheduling = "scheduling.x-k8s.io/v1alpha1";

bool is_list_kind(std::string_view kind) {
  return kind.size() >= 4 && kind.substr(kind.size() - 4) == "List";
}

std::string_view api_group(std::string_view api_version) {
  auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

const char* node_type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return "a scalar";
    default: return "null";
  }
}

// A scalar child of a mapping, or "" when absent or not a scalar.
std::string scalar_child(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap()) return {};  // a missing key is a "zombie" node that throws on use
  YAML::Node v = map[key];
  return v && v.IsScalar() ? v.Scalar() : std::string{};
}

error fail(const std::string& where, const std::string& what) { return error{where + ": " + what}; }

bool looks_like_json(const std::string& file, const std::string& text) {
  if (file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0) return true;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' || c == '[';
  }
  return false;
}

// A manifest file's documents may be large (a `kubectl get -o yaml` dump is one List), so the
// guard limits the file, and the loader limits each object: a document, or an item of a List.
yaml_limits manifest_limits() {
  yaml_limits l;
  l.max_document_bytes = 0;
  return l;
}

// yaml-cpp keeps the last of two equal keys; kubectl rejects such a manifest ("key already set in
// map"), and so do we: the first value would otherwise be dropped without a word. The walk goes
// through aliases, once per use: load_yaml has bounded how many nodes that can add up to.
status_or_error check_duplicate_keys(const YAML::Node& n, const std::string& path) {
  if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) {
      auto s = check_duplicate_keys(n[i], path + "[" + std::to_string(i) + "]");
      if (!s) return s;
    }
  } else if (n.IsMap()) {
    std::unordered_set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string{};
      std::string child = path.empty() ? key : path + "." + key;
      if (it->first.IsScalar() && !seen.insert(key).second)
        return error{(path.empty() ? std::string{} : path + ": ") + "line " +
                     std::to_string(it->first.Mark().line + 1) + ": key \"" + key +
                     "\" already set in map"};
      auto s = check_duplicate_keys(it->second, child);
      if (!s) return s;
    }
  }
  return ok_t{};
}

template <class T>
constexpr bool is_storage_kind =
  std::is_same_v<T, k8s::core::PersistentVolume> || std::is_same_v<T, k8s::core::PersistentVolumeClaim> ||
  std::is_same_v<T, k8s::storage::StorageClass> || std::is_same_v<T, k8s::storage::CSINode> ||
  std::is_same_v<T, k8s::storage::CSIDriver> || std::is_same_v<T, k8s::storage::CSIStorageCapacity> ||
  std::is_same_v<T, k8s::storage::VolumeAttachment>;

class loader {
public:
  loader(cluster_manifests& out, const manifest_options& opts) : out_(out), strict_(opts.strict) {}

  status_or_error load_file(const std::string& file) {
    auto docs = read_manifest_documents(file);
    if (!docs) return docs.err();
    for (size_t i = 0; i < docs->size(); ++i) {
      manifest_origin o;
      o.file = file == "-" ? "<stdin>" : file;
      o.document = static_cast<int>(i) + 1;
      try {
        auto s = load_document((*docs)[i], o);
        if (!s) return s;
      } catch (const YAML::Exception& e) {  // a shape yaml-cpp refuses to walk: still one clear error
        return fail(o.describe(), e.what());
      }
    }
    return ok_t{};
  }

private:
  status_or_error load_document(const yaml_document& d, manifest_origin o) {
    const YAML::Node& doc = d.root;
    if (!doc || doc.IsNull()) return ok_t{};  // empty document, e.g. a trailing `---`
    if (!doc.IsMap())
      return fail(o.describe(), std::string("expected a Kubernetes object (a mapping), got ") +
                                  node_type_name(doc));
    std::string kind = scalar_child(doc, "kind");
    if (kind.empty() && doc["ops"] && doc["name"])
      return fail(o.describe(), "this is a bench workload file (name, ops), not a manifest: run it with "
                                "`bench --workload`");
    if (kind.empty()) return fail(o.describe(), "kind: required field is missing");
    if (is_list_kind(kind)) return load_list(d, o, kind);
    return load_object(doc, o, kind, false, d.end - d.begin);
  }

  // `kind: List` (what kubectl prints) holds any kinds, each item naming its own; a typed list
  // (`PodList`, as the apiserver returns it) holds items of one kind that may omit kind/apiVersion.
  status_or_error load_list(const yaml_document& d, const manifest_origin& o, const std::string& kind) {
    const YAML::Node& doc = d.root;
    manifest_origin lo = o;  // the list itself; its items get their own kind below
    lo.kind = kind;
    std::string item_kind = kind == "List" ? std::string{} : kind.substr(0, kind.size() - 4);
    if (!item_kind.empty() && !find_kind(item_kind)) {
      warn(lo.describe() + ": kind " + kind + " is not used by the scheduler; skipped");
      return ok_t{};
    }
    YAML::Node items = doc["items"];
    if (!items || items.IsNull()) return ok_t{};
    if (!items.IsSequence())
      return fail(lo.describe(), std::string("items: expected a list, got ") + node_type_name(items));
    for (size_t i = 0; i < items.size(); ++i) {
      manifest_origin io = o;
      io.item = static_cast<int>(i) + 1;
      YAML::Node it = items[i];
      if (!it.IsMap())
        return fail(io.describe(), std::string("expected a Kubernetes object (a mapping), got ") +
                                     node_type_name(it));
      std::string k = scalar_child(it, "kind");
      if (k.empty() && item_kind.empty()) return fail(io.describe(), "kind: required field is missing");
      if (k.empty()) k = item_kind;
      if (is_list_kind(k)) return fail(io.describe(), "kind " + k + ": a List inside a List is not supported");
      auto s = load_object(it, io, k, !item_kind.empty(), item_bytes(d, items, i),
                           item_kind.empty() ? std::string{} : scalar_child(doc, "apiVersion"));
      if (!s) return s;
    }
    return ok_t{};
  }

  // Decision on apiVersion: `kind` is required (without it we cannot know what the object is), but
  // a missing apiVersion only warns: hand-written manifests often omit it and typed list items never
  // carry it. An apiVersion of the wrong API group (`apps/v1` on a Pod) is an error.
  // `list_api_version`: a typed list's own apiVersion, which its items may omit.
  status_or_error load_object(const YAML::Node& n, manifest_origin o, const std::string& kind,
                              bool in_typed_list, size_t bytes, const std::string& list_api_version = {}) {
    o.kind = kind;
    YAML::Node meta = n["metadata"];
    o.name = scalar_child(meta, "name");
    o.ns = scalar_child(meta, "namespace");
    const kind_spec* spec = find_kind(kind);
    if (spec && spec->namespaced && o.ns.empty()) o.ns = "default";
    if (spec && !spec->namespaced) o.ns.clear();
    // Even a kind that is skipped: the apiserver would not have stored it.
    if (bytes > max_object_bytes)
      return fail(o.describe(), "the object is " + std::to_string(bytes) + " bytes, more than the " +
                                  mebibytes(max_object_bytes) + " the apiserver accepts for one object");
    if (!spec) {
      warn(o.describe() + ": kind " + kind + " is not used by the scheduler; skipped");
      return ok_t{};
    }
    std::string api_version = scalar_child(n, "apiVersion");
    if (api_version.empty() && !in_typed_list)
      warn(o.describe() + ": apiVersion is missing; assuming " + std::string(spec->default_api_version));
    if (kind == "PodGroup") return load_pod_group(n, o, api_version.empty() ? list_api_version : api_version);
    if (!api_version.empty() && api_group(api_version) != spec->group)
      return fail(o.describe(), "apiVersion: \"" + api_version + "\" is not an API version of kind " +
                                  kind + " (expected " + std::string(spec->default_api_version) + ")");
    if (o.name.empty()) return fail(o.describe(), "metadata.name: required field is missing");
    if (auto s = check_duplicate_keys(n, ""); !s) return fail(o.describe(), s.err().message);
    if (auto s = check_unknown_fields(n, o, api_version, kind); !s) return s;
    if (kind == "Node") return decode_into(n, o, out_.nodes);
    if (kind == "Pod") return decode_into(n, o, out_.pods);
    if (kind == "Namespace") return decode_into(n, o, out_.namespaces);
    if (kind == "PriorityClass") return decode_into(n, o, out_.priority_classes);
    if (kind == "PodDisruptionBudget") return decode_into(n, o, out_.pdbs);
    if (kind == "PersistentVolume") return decode_into(n, o, out_.pvs);
    if (kind == "PersistentVolumeClaim") return decode_into(n, o, out_.pvcs);
    if (kind == "StorageClass") return decode_into(n, o, out_.storage_classes);
    if (kind == "CSINode") return decode_into(n, o, out_.csi_nodes);
    if (kind == "CSIDriver") return decode_into(n, o, out_.csi_drivers);
    if (kind == "CSIStorageCapacity") return decode_into(n, o, out_.csi_storage_capacities);
    if (kind == "VolumeAttachment") return decode_into(n, o, out_.volume_attachments);
    return decode_workload(n, o);
  }

  // PodGroup: scheduling.k8s.io/v1beta1 (also when apiVersion is missing) or the Coscheduling CRD.
  status_or_error load_pod_group(const YAML::Node& n, const manifest_origin& o, const std::string& api_version) {
    const bool coscheduling = api_version == pod_group_coscheduling;
    if (!api_version.empty() && api_version != pod_group_v1beta1 && !coscheduling)
      return fail(o.describe(), "apiVersion: \"" + api_version + "\" is not an API version of kind PodGroup (expected " +
                                  std::string(pod_group_v1beta1) + " or " + std::string(pod_group_coscheduling) + ")");
    if (o.name.empty()) return fail(o.describe(), "metadata.name: required field is missing");
    if (auto s = check_duplicate_keys(n, ""); !s) return fail(o.describe(), s.err().message);
    // The CRD is not in the upstream schema: its unknown fields are not checked (schema_type is "").
    if (auto s = check_unknown_fields(n, o, api_version, "PodGroup"); !s) return s;
    if (coscheduling) return decode_into(n, o, out_.coscheduling_pod_groups);
    return decode_into(n, o, out_.pod_groups);
  }

  // Fields the Kubernetes schema does not have: kubectl's strict decoding would refuse the object
  // ("strict decoding error: unknown field"); the decoder below would drop them without a word.
  status_or_error check_unknown_fields(const YAML::Node& n, const manifest_origin& o, const std::string& api_version,
                                       const std::string& kind) {
    auto unknown = schema::unknown_fields(n, api_version, kind);
    if (!unknown) return fail(o.describe(), unknown.err().message);
    for (const auto& path : *unknown) {
      if (strict_) return fail(o.describe(), path + ": unknown field (--strict)");
      warn(o.describe() + ": " + path + ": unknown field");
    }
    return ok_t{};
  }

  // Service / ReplicationController / ReplicaSet / StatefulSet: only the selector (see
  // manifest_objects.hpp).
  status_or_error decode_workload(const YAML::Node& n, const manifest_origin& o) {
    auto w = kas::decode_workload(n, o.kind, o.ns);
    if (!w) return fail(o.describe(), w.err().message);
    out_.workloads.emplace_back(std::move(*w), o);
    return ok_t{};
  }

  template <class T>
  status_or_error decode_into(const YAML::Node& n, const manifest_origin& o,
                              std::vector<std::pair<std::shared_ptr<const T>, manifest_origin>>& out) {
    auto msg = std::make_shared<T>();
    auto s = codec::decode_node(n, *msg, "");
    if (!s) return fail(o.describe(), s.err().message);
    // What the apiserver would refuse (names, labels, containers); the namespace is checked as
    // written, before the default applies. The storage kinds' own fields are checked when they
    // are compiled (compile_pv, ...).
    if constexpr (is_storage_kind<T>) {
      if (auto v = validate_storage_object(*msg); !v) return fail(o.describe(), v.err().message);
    } else if (auto v = validate_object(*msg); !v) {
      return fail(o.describe(), v.err().message);
    }
    // Namespaced objects without a namespace land in "default", as `kubectl apply` puts them.
    if constexpr (std::is_same_v<T, k8s::core::Pod> || std::is_same_v<T, k8s::policy::PodDisruptionBudget> ||
                  std::is_same_v<T, k8s::scheduling::PodGroup> || std::is_same_v<T, k8s::coscheduling::PodGroup> ||
                  std::is_same_v<T, k8s::core::PersistentVolumeClaim> ||
                  std::is_same_v<T, k8s::storage::CSIStorageCapacity>)
      msg->mutable_metadata()->set_namespace_(o.ns);
    else if constexpr (is_storage_kind<T>)
      msg->mutable_metadata()->clear_namespace_();
    out.emplace_back(std::move(msg), o);
    return ok_t{};
  }

  // The bytes of List item i: from where it starts to where the next one does (or the document
  // ends). An item that is an alias starts where its anchor does; it is then measured to the end.
  static size_t item_bytes(const yaml_document& d, const YAML::Node& items, size_t i) {
    auto begin = static_cast<size_t>(std::max(items[i].Mark().pos, 0));
    size_t end = d.end;
    if (i + 1 < items.size()) {
      auto next = static_cast<size_t>(std::max(items[i + 1].Mark().pos, 0));
      if (next > begin) end = next;
    }
    return end > begin ? end - begin : 0;
  }

  void warn(std::string w) { out_.warnings.push_back(std::move(w)); }

  cluster_manifests& out_;
  bool strict_ = false;
};

// ---- compile_cluster helpers ----

// Two objects of one kind with one name are two writes of the same API object: the apiserver would
// keep only the second. Refusing is kinder than guessing which one the user meant.
class uniqueness {
public:
  // `kind_key`: the kind's identity when its name is not enough (the two PodGroup APIs are two kinds).
  status_or_error add(const manifest_origin& o, const std::string& kind_key = {}) {
    std::string key = (kind_key.empty() ? o.kind : kind_key) + "\n" + o.ns + "/" + o.name;
    auto [it, inserted] = seen_.emplace(key, o);
    if (inserted) return ok_t{};
    std::string what = o.kind == "Node" ? "node" : o.kind == "Pod" ? "pod" : o.kind;
    std::string id = o.ns.empty() ? "\"" + o.name + "\"" : o.ns + "/" + o.name;
    return fail(o.describe(), what + " " + id + " is already defined in " + it->second.describe());
  }

private:
  std::unordered_map<std::string, manifest_origin> seen_;
};

struct priority_class_info {
  int32_t value = 0;
  std::string preemption_policy;
};

// The Priority admission plugin's view: the listed classes plus the two built-in system classes.
struct priority_classes {
  std::map<std::string, priority_class_info> by_name{
    {"system-node-critical", {2000001000, "PreemptLowerPriority"}},
    {"system-cluster-critical", {2000000000, "PreemptLowerPriority"}},
  };
  std::string global_default;
};

result<priority_classes> collect_priority_classes(const cluster_manifests& m) {
  priority_classes pcs;
  const manifest_origin* default_origin = nullptr;
  for (auto& [pc, o] : m.priority_classes) {
    pcs.by_name[pc->metadata().name()] = {pc->value(), pc->preemption_policy()};
    if (!pc->global_default()) continue;
    if (default_origin)
      return fail(o.describe(), "globalDefault: PriorityClass " + default_origin->name +
                                  " is already the global default (" + default_origin->describe() + ")");
    default_origin = &o;
    pcs.global_default = pc->metadata().name();
  }
  return pcs;
}

// Fills spec.priority from spec.priorityClassName (or the global default class) when the manifest
// does not carry it, as admission does for every pod the scheduler ever sees. A pod from a dump
// already has spec.priority and is left as it is.
result<std::shared_ptr<const k8s::core::Pod>> admit_priority(std::shared_ptr<const k8s::core::Pod> pod,
                                                             const manifest_origin& o,
                                                             const priority_classes& pcs) {
  if (pod->spec().has_priority()) return pod;
  std::string name = pod->spec().priority_class_name();
  if (name.empty()) name = pcs.global_default;
  if (name.empty()) return pod;
  auto it = pcs.by_name.find(name);
  if (it == pcs.by_name.end())
    return fail(o.describe(), "spec.priorityClassName: no PriorityClass with name " + name + " was found");
  auto copy = std::make_shared<k8s::core::Pod>(*pod);
  copy->mutable_spec()->set_priority_class_name(name);
  copy->mutable_spec()->set_priority(it->second.value);
  if (copy->spec().preemption_policy().empty() && !it->second.preemption_policy.empty())
    copy->mutable_spec()->set_preemption_policy(it->second.preemption_policy);
  return std::shared_ptr<const k8s::core::Pod>(std::move(copy));
}

bool is_terminal(const k8s::core::Pod& p) {
  const std::string& phase = p.status().phase();
  return phase == "Succeeded" || phase == "Failed";
}

template <class Objects>
status_or_error add_all(const Objects& objects, uniqueness& u) {
  for (auto& e : objects)
    if (auto s = u.add(e.second); !s) return s;
  return ok_t{};
}

status_or_error check_unique_storage_objects(const cluster_manifests& m, uniqueness& u) {
  if (auto s = add_all(m.pvs, u); !s) return s;
  if (auto s = add_all(m.pvcs, u); !s) return s;
  if (auto s = add_all(m.storage_classes, u); !s) return s;
  if (auto s = add_all(m.csi_nodes, u); !s) return s;
  if (auto s = add_all(m.csi_drivers, u); !s) return s;
  if (auto s = add_all(m.csi_storage_capacities, u); !s) return s;
  return add_all(m.volume_attachments, u);
}

status_or_error check_unique_objects(const cluster_manifests& m, uniqueness& u) {
  for (auto& e : m.namespaces)
    if (auto s = u.add(e.second); !s) return s;
  for (auto& e : m.priority_classes)
    if (auto s = u.add(e.second); !s) return s;
  for (auto& e : m.pdbs)
    if (auto s = u.add(e.second); !s) return s;
  for (auto& e : m.workloads)
    if (auto s = u.add(e.second); !s) return s;
  for (auto& e : m.pod_groups)
    if (auto s = u.add(e.second, std::string(pod_group_v1beta1)); !s) return s;
  for (auto& e : m.coscheduling_pod_groups)
    if (auto s = u.add(e.second, std::string(pod_group_coscheduling)); !s) return s;
  return check_unique_storage_objects(m, u);
}

status_or_error compile_nodes(const cluster_manifests& m, uniqueness& u, cluster_input& in) {
  for (auto& [node, o] : m.nodes) {
    if (auto s = u.add(o); !s) return s;
    auto ni = compile_node(node);
    if (!ni) return fail(o.describe(), ni.err().message);
    in.nodes.push_back(std::move(*ni));
  }
  return ok_t{};
}

status_or_error compile_pods(const cluster_manifests& m, uniqueness& u, const priority_classes& pcs,
                             cluster_input& in) {
  std::unordered_set<std::string> node_names;
  for (auto& n : in.nodes) node_names.insert(n->name);
  for (auto& [pod, o] : m.pods) {
    if (auto s = u.add(o); !s) return s;
    if (is_terminal(*pod)) continue;
    auto admitted = admit_priority(pod, o, pcs);
    if (!admitted) return admitted.err();
    auto pi = compile_pod(*admitted);
    if (!pi) return fail(o.describe(), pi.err().message);
    const std::string& node = (*admitted)->spec().node_name();
    if (node.empty()) {
      in.pending_pods.push_back(std::move(*pi));
    } else if (!node_names.count(node)) {
      return fail(o.describe(), "spec.nodeName: node \"" + node + "\" does not exist");
    } else {
      in.bound_pods.push_back(std::move(*pi));
    }
  }
  return ok_t{};
}

}  // namespace

result<std::vector<yaml_document>> read_manifest_documents(const std::string& file) {
  yaml_limits limits = manifest_limits();
  std::string text;
  if (file == "-") {
    if (auto s = read_bounded(std::cin, "<stdin>", limits.max_file_bytes, text); !s) return s.err();
    return load_yaml("<stdin>", text, looks_like_json("<stdin>", text) ? yaml_input::json : yaml_input::stream, limits);
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return error{file + ": cannot read file: " + std::strerror(errno)};
  if (auto s = read_bounded(in, file, limits.max_file_bytes, text); !s) return s.err();
  return load_yaml(file, text, looks_like_json(file, text) ? yaml_input::json : yaml_input::stream, limits);
}

namespace {

// A directory's manifest files (.yaml, .yml, .json), in name order, not recursively.
result<std::vector<std::string>> manifest_files_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto ext = it->path().extension().string();
    if ((ext == ".yaml" || ext == ".yml" || ext == ".json") && it->is_regular_file(ec)) out.push_back(it->path().string());
  }
  if (ec) return error{dir + ": cannot list the directory: " + ec.message()};
  if (out.empty()) return error{dir + ": the directory has no .yaml, .yml or .json file"};
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

result<cluster_manifests> load_manifests(const std::vector<std::string>& files, const manifest_options& opts) {
  cluster_manifests out;
  loader l(out, opts);
  for (auto& f : files) {
    std::error_code ec;
    std::vector<std::string> each{f};
    if (f != "-" && std::filesystem::is_directory(f, ec)) {
      auto in_dir = manifest_files_in(f);
      if (!in_dir) return in_dir.err();
      each = std::move(*in_dir);
    }
    for (auto& file : each)
      if (auto s = l.load_file(file); !s) return s.err();
  }
  return out;
}

result<cluster_input> compile_cluster(const cluster_manifests& m) {
  cluster_input in;
  in.warnings = m.warnings;
  uniqueness u;
  if (auto s = check_unique_objects(m, u); !s) return s.err();
  auto pcs = collect_priority_classes(m);
  if (!pcs) return pcs.err();
  if (auto s = compile_nodes(m, u, in); !s) return s.err();
  if (auto s = compile_pods(m, u, *pcs, in); !s) return s.err();
  std::vector<pod_info_ptr> pods = in.bound_pods;
  pods.insert(pods.end(), in.pending_pods.begin(), in.pending_pods.end());
  // PodGroups' priorityClassName resolves as the Priority admission plugin resolves a pod's.
  auto priority_of = [&pcs = *pcs](const std::string& name) -> std::optional<int32_t> {
    auto it = pcs.by_name.find(name);
    if (it == pcs.by_name.end()) return std::nullopt;
    return it->second.value;
  };
  auto objects = compile_objects(m, pods, priority_of);
  if (!objects) return objects.err();
  in.objects = std::move(*objects);
  return in;
}

}  // namespace kas

#pragma once
// The test apiserver's object store: a plain single-threaded class (no HTTP) with kube-apiserver's
// semantics for what the scheduler and kubectl use. It is a test fixture, not a cluster.
//
// Design:
// - One global, monotonically increasing resourceVersion, as etcd's revision.
// - Objects are immutable behind shared_ptr<const stored_object>: a list, a watch event and the ring
//   share them instead of copying. An object is stored as its compact JSON text (yaml-cpp trees cost
//   ~20 KB per pod, text ~1 KB), with its labels and selectable fields extracted at write time so
//   selectors never parse; writes parse the text into a tree (json_tree.hpp), change it and store
//   the new text. The protobuf encoding is made on first use and kept, so N watchers encode once.
// - Per kind, an ordered map keyed "namespace/name" (or "name"): list order, and `continue` tokens
//   that carry the last key and the list's resourceVersion.
// - Watch history: a bounded ring of changes (with the previous object, so field-selector watches
//   can tell when an object stops matching). A watch or continue older than the ring is 410 Expired.
// - Every change is handed to one listener (the HTTP layer fans it out to its watches).
// - A resource that is a view of another's storage (events.k8s.io/v1 events, event_views.hpp) is
//   stored in the storage's shape; its reads and writes are converted at this class's boundary, so
//   every object_ptr it returns is in the shape of the kind asked for. Changes are recorded in the
//   storage's shape (watchers convert them).
// Deletes are immediate (there is no kubelet to finish a graceful deletion).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/result.hpp"
#include "tests/apiserver/resources.hpp"

namespace kas::testapi {

struct stored_object {
  const kind_info* kind = nullptr;
  std::string json;  // the object, compact JSON
  std::string ns, name, uid;
  uint64_t rv = 0;
  std::map<std::string, std::string> labels;
  std::vector<std::pair<std::string, std::string>> fields;  // selectable fields that are set
  // Protobuf encodings, made on first use (the server is single-threaded).
  mutable std::string proto_raw_cache, proto_body_cache;
  // The object as the other API view of its storage shows it (event_views.hpp), made on first use.
  mutable std::shared_ptr<const stored_object> view_cache;
  // A fresh tree of the object (parsed from json; the caller may change it).
  YAML::Node tree() const;
  // A selectable field's value ("" when unset).
  std::string field(const std::string& path) const;
};
using object_ptr = std::shared_ptr<const stored_object>;

// What a failed operation returns: becomes a metav1.Status.
struct api_error {
  int code = 500;
  std::string reason;   // NotFound, AlreadyExists, Conflict, Expired, BadRequest, Invalid ...
  std::string message;
  std::string name;     // details.name
  std::string group;    // details.group
  std::string kind;     // details.kind (the resource, as upstream fills it)
};

template <class T>
struct op_result {
  std::optional<T> value;
  api_error err;
  bool ok() const { return value.has_value(); }
  static op_result fail(api_error e) { op_result r; r.err = std::move(e); return r; }
  static op_result good(T v) { op_result r; r.value = std::move(v); return r; }
};

enum class change_type { added, modified, deleted };

struct change {
  uint64_t rv = 0;
  change_type type = change_type::added;
  object_ptr obj;   // the new object (the last state for deleted)
  object_ptr prev;  // the object before the change (null for added)
};

struct list_request {
  std::string label_selector, field_selector;
  int64_t limit = 0;
  std::string continue_token;
};
struct list_result {
  std::vector<object_ptr> items;
  uint64_t rv = 0;
  std::string continue_token;
  int64_t remaining = -1;  // remainingItemCount when continue is set
};

enum class patch_kind { merge, strategic };

struct delete_preconditions {
  std::optional<std::string> uid, resource_version;
};

// A core/v1 Binding body: what pods/binding uses of it.
struct binding_request {
  std::string name;    // metadata.name (names the pod when POSTed to the bindings collection)
  std::string uid;     // metadata.uid: a precondition on the pod's uid when set
  std::string target;  // target.name: the node
  std::vector<std::pair<std::string, std::string>> annotations;  // copied onto the pod
};
// A stored object's JSON decoded into its proto without a tree (simdjson), as codec::decode_json
// would decode it; false when the text holds anything the fast path leaves to the codec (numbers
// where a proto keeps text, RawExtension, enums, inline structs): then `out` is partial.
bool json_to_proto_fast(std::string_view json, google::protobuf::Message& out);

// Reads a Binding body (JSON, or protobuf when `protobuf`) without building a tree.
result<binding_request> parse_binding(std::string_view body, bool protobuf);

struct store_options {
  size_t history = 200000;  // changes kept for watches
  // kube-apiserver's Priority admission plugin (on by default there, as here; scheduler_perf's
  // apiserver runs without it, so its pod templates set spec.priority directly).
  bool priority_admission_plugin = true;
};

// What the Priority admission plugin decides for a pod being created.
struct priority_admission {
  std::string class_name;         // spec.priorityClassName (the global default's when the pod named none)
  int64_t priority = 0;           // spec.priority
  std::string preemption_policy;  // spec.preemptionPolicy
};

class store {
public:
  explicit store(store_options opts = {});

  op_result<object_ptr> create(const kind_info& k, const std::string& ns, const YAML::Node& body);
  // create() from JSON text: a view's body is converted as text (event_views.hpp); plain bodies are
  // stored without building a tree (store_fast.cpp), others parse once, in the storage's shape.
  op_result<object_ptr> create_json(const kind_info& k, const std::string& ns, std::string_view text);
  op_result<object_ptr> get(const kind_info& k, const std::string& ns, const std::string& name) const;
  op_result<list_result> list(const kind_info& k, const std::string& ns, const list_request& req) const;
  // PUT; `status_only` for the /status subresource.
  op_result<object_ptr> update(const kind_info& k, const std::string& ns, const std::string& name,
                               const YAML::Node& body, bool status_only);
  op_result<object_ptr> patch(const kind_info& k, const std::string& ns, const std::string& name, patch_kind pk,
                              const YAML::Node& patch, bool status_only);
  op_result<object_ptr> remove(const kind_info& k, const std::string& ns, const std::string& name,
                               const delete_preconditions& pre);
  // POST pods/{name}/binding with a core/v1 Binding body.
  // The stored pod's JSON is edited in place of a tree (json_edit.hpp).
  op_result<object_ptr> bind(const std::string& ns, const std::string& pod, const binding_request& binding);

  // Changes of kind k after `from_rv`, or 410 when they are no longer all in the ring.
  op_result<std::vector<const change*>> changes_since(const kind_info& k, uint64_t from_rv) const;
  // Drops the watch history (a compaction): every rv before now is too old to watch from.
  void compact();
  // The watch cache of a restarted apiserver: it starts empty at the current resourceVersion, so
  // every rv before now is too old to watch from; objects, the resourceVersion and continue tokens
  // (etcd's) are kept.
  void restart_watch_cache();

  uint64_t current_rv() const { return rv_; }
  uint64_t oldest_watchable_rv() const { return std::max(compacted_rv_, watch_cache_start_rv_); }
  void set_listener(std::function<void(const change&)> fn) { listener_ = std::move(fn); }

  // Every object of kind k (for watch initial state); ns empty = all namespaces.
  std::vector<object_ptr> snapshot(const kind_info& k, const std::string& ns) const;

private:
  using object_map = std::map<std::string, object_ptr>;
  object_map& objects(const kind_info& k) { return objects_[k.storage]; }
  const object_map* objects_or_null(const kind_info& k) const;
  // create_json's tree-less path (store_fast.cpp): nullopt when the body or request needs the tree
  // path (defaults, anything unusual, any error).
  std::optional<op_result<object_ptr>> create_plain(const kind_info& k, const std::string& ns, std::string_view text);
  // `owned`: body is the caller's to give away (changed in place instead of cloned).
  op_result<object_ptr> create_stored(const kind_info& k, const std::string& ns, const YAML::Node& body, bool owned);
  op_result<object_ptr> commit(const kind_info& k, change_type t, YAML::Node tree, object_ptr prev);
  // Commits new JSON text of `prev` (same name, uid and labels; selectable fields given) as
  // resourceVersion `rv`, which must be the next one; `proto_raw` is its protobuf form when the
  // writer built it (else it is converted from the JSON when first served).
  op_result<object_ptr> commit_json(std::string json, uint64_t rv, const object_ptr& prev,
                                    std::vector<std::pair<std::string, std::string>> fields,
                                    std::string proto_raw = {});
  op_result<object_ptr> replace_checked(const kind_info& k, const object_ptr& cur, YAML::Node next, bool status_only);
  std::optional<api_error> check_namespace(const kind_info& k, const std::string& ns) const;
  // The Priority admission plugin for pod `name`: the class it names (or the global default), the
  // priority and preemption policy the pod must carry; 403 when the class does not exist or the pod
  // gives other values than the class's. `given_*` are empty when the pod leaves them unset.
  op_result<priority_admission> admit_priority(const std::string& name, const std::string& class_name,
                                               std::optional<int64_t> given_priority,
                                               const std::string& given_policy) const;
  void record(change c);

  uint64_t rv_ = 0;
  uint64_t compacted_rv_ = 0;          // oldest rv of the history (a watch or continue before it: 410)
  uint64_t watch_cache_start_rv_ = 0;  // the last restart's rv (a watch before it: 410)
  store_options opts_;
  std::map<const kind_info*, object_map> objects_;
  std::deque<change> ring_;
  std::function<void(const change&)> listener_;
};

// Helpers shared by the store's files and the server.
// A result of the storage kind, shown as resource k (event_views.hpp).
op_result<object_ptr> as_view(const kind_info& k, op_result<object_ptr> r);
std::string object_key(const std::string& ns, const std::string& name);
api_error not_found(const kind_info& k, const std::string& name);
api_error bad_request(const std::string& message);
api_error conflict(const kind_info& k, const std::string& name, const std::string& why);
api_error expired(const std::string& message);
// A fast PRNG (xoshiro256**, seeded once from OpenSSL): uids and generated names only need to be
// unique in a test fixture, and RAND_bytes per uid cost more than the rest of a create.
uint64_t fast_random();
// The 5 characters generateName gets.
std::string generated_name_suffix();
std::string random_uuid();
std::string now_rfc3339();

}  // namespace kas::testapi

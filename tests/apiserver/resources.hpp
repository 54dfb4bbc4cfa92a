#pragma once
// The resource kinds the test apiserver (a test fixture, not a cluster) serves, with what routing,
// discovery and encoding need to know about each: group/version, plural and kind, scope, short
// names, and the generated proto used for protobuf bodies (which carry only the fields the protos
// declare; JSON bodies keep every field as stored).
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

namespace kas::testapi {

struct kind_info {
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string resource; // plural: "pods"
  std::string kind;     // "Pod"
  bool namespaced = true;
  bool has_status = false;  // a /status subresource whose writes touch status only
  std::vector<std::string> short_names;
  std::string singular;
  // A default instance of the generated message, or null for JSON-only kinds.
  const google::protobuf::Message* prototype = nullptr;
  // A custom resource (a CRD): served as JSON only, as kube-apiserver serves CRDs; `prototype`, if
  // any, only checks the body's field types (the CRD's schema).
  bool json_only = false;
  // The kind whose storage this resource shares (itself, except events.k8s.io/v1 events, which are
  // a second view of core/v1 events, as in kube-apiserver). Set by all_kinds().
  const kind_info* storage = this;

  bool is_view() const { return storage != this; }

  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  // "pods", "leases.coordination.k8s.io": how Status messages name the resource.
  std::string qualified() const { return group.empty() ? resource : resource + "." + group; }
};

// Every kind served, in discovery order.
const std::vector<kind_info>& all_kinds();
// The kind for (group, version, resource), or null.
const kind_info* find_kind(const std::string& group, const std::string& version, const std::string& resource);
// The kind named by apiVersion and kind (as in a request body), or null.
const kind_info* find_kind_by_name(const std::string& api_version, const std::string& kind);

}  // namespace kas::testapi

#pragma once
// Events are one resource with two API views, as in kube-apiserver: core/v1 `events` and
// events.k8s.io/v1 `events` share one storage (core/v1 shape here; same names, uids and
// resourceVersions), and each read or write through events.k8s.io/v1 is converted field by field:
//   events.k8s.io/v1           core/v1
//   regarding                  involvedObject
//   note                       message
//   reportingController        reportingComponent
//   reportingInstance          reportingInstance
//   deprecatedSource           source (when absent: {component: reportingController,
//                                      host: reportingInstance}, so `kubectl describe` names it)
//   deprecatedCount            count
//   deprecatedFirstTimestamp   firstTimestamp
//   deprecatedLastTimestamp    lastTimestamp
//   eventTime, series, action, reason, type, related, metadata: the same
// Going back, a source equal to what the reporting fields would give is not shown as
// deprecatedSource, so an Event written through events.k8s.io/v1 reads back as it was written.
//
// A stored object's other view is built on first use and kept on it (objects are immutable), so N
// watchers of the other API convert a change once. Conversions of stored text and of JSON request
// bodies work on the text (simdjson); the tree versions serve patches and non-JSON bodies.
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "tests/apiserver/store.hpp"

namespace kas::testapi {

// events.k8s.io/v1 Event tree -> core/v1 Event tree (a new tree; kind and apiVersion set).
YAML::Node events_to_core(const YAML::Node& ev);
// core/v1 Event tree -> events.k8s.io/v1 Event tree.
YAML::Node core_to_events(const YAML::Node& core);

// The same conversions on JSON text (through simdjson, no tree): what the hot paths use. nullopt
// when `text` is not a JSON object.
std::optional<std::string> events_json_to_core(std::string_view text);
std::optional<std::string> core_json_to_events(std::string_view text);

// A request body of resource `view` in the storage's shape (the body itself when view is not a view).
YAML::Node to_storage(const kind_info& view, const YAML::Node& body);
// A stored tree in the shape of `view`.
YAML::Node to_view(const kind_info& view, const YAML::Node& stored);
// The object as resource `view` shows it: o itself, or its converted copy (made once, kept on o).
object_ptr view_of(const object_ptr& o, const kind_info& view);

}  // namespace kas::testapi

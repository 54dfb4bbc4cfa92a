#pragma once
// Shared by the fuzz targets in tests/fuzz/ (see CMakeLists.txt there):
// - a private scratch directory, for the entry points that only read files (load_manifests,
//   load_scheduler_config, load_workload): each input is written to one file there and the real
//   loader reads it, so the fuzzer exercises exactly what the binary runs;
// - the Kubernetes message types the codec targets decode into, and the choice among them.
#include <google/protobuf/message.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "messages/codec.hpp"
#include "messages/k8s/coordination.pb.h"
#include "messages/k8s/core.pb.h"
#include "messages/k8s/coscheduling.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/k8s/events.pb.h"
#include "messages/k8s/meta.pb.h"
#include "messages/k8s/policy.pb.h"
#include "messages/k8s/scheduling.pb.h"
#include "messages/k8s/storage.pb.h"

namespace kas_fuzz {

// An environment problem (not a finding): say so and stop.
[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "kas-fuzz: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(70);
}

// $TMPDIR/kas-fuzz-XXXXXX, created on first use and removed at exit. Never destroyed itself, so
// the exit handler may still use it.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/kas-fuzz-XXXXXX";
    if (!::mkdtemp(tmpl.data())) die("cannot create a scratch directory from " + tmpl);
    auto* p = new std::filesystem::path(tmpl);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return p;
  }();
  return *dir;
}

// Created before main, so the per-input child processes of a replay (replay_main.cpp) share the
// parent's directory, which the parent removes at exit; a child leaves with _exit and never would.
inline const std::filesystem::path& scratch_dir_at_start = scratch_dir();

// Writes the input to scratch_dir()/name and returns the file's path.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  std::string path = (scratch_dir() / name).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) die("cannot write " + path);
  if (size && std::fwrite(data, 1, size, f) != size) die("cannot write " + path);
  if (std::fclose(f) != 0) die("cannot write " + path);
  return path;
}

// ---- message types for the codec targets ----

struct message_type {
  std::string_view kind;           // the object's `kind`
  std::string_view group;          // its API group ("" = core); tells the two Events apart
  const google::protobuf::Message* prototype;
};

inline const std::vector<message_type>& message_types() {
  static const std::vector<message_type> types = {
    {"Pod", "", &k8s::core::Pod::default_instance()},
    {"PodList", "", &k8s::core::PodList::default_instance()},
    {"Node", "", &k8s::core::Node::default_instance()},
    {"NodeList", "", &k8s::core::NodeList::default_instance()},
    {"Binding", "", &k8s::core::Binding::default_instance()},
    {"Event", "", &k8s::core::Event::default_instance()},
    {"Namespace", "", &k8s::core::Namespace::default_instance()},
    {"PersistentVolumeClaim", "", &k8s::core::PersistentVolumeClaim::default_instance()},
    {"PersistentVolume", "", &k8s::core::PersistentVolume::default_instance()},
    {"PersistentVolumeList", "", &k8s::core::PersistentVolumeList::default_instance()},
    {"PersistentVolumeClaimList", "", &k8s::core::PersistentVolumeClaimList::default_instance()},
    {"WatchEvent", "", &k8s::meta::WatchEvent::default_instance()},
    {"Status", "", &k8s::meta::Status::default_instance()},
    {"Event", "events.k8s.io", &k8s::events::Event::default_instance()},
    {"Lease", "coordination.k8s.io", &k8s::coordination::Lease::default_instance()},
    {"LeaseList", "coordination.k8s.io", &k8s::coordination::LeaseList::default_instance()},
    {"PodDisruptionBudget", "policy", &k8s::policy::PodDisruptionBudget::default_instance()},
    {"PodDisruptionBudgetList", "policy", &k8s::policy::PodDisruptionBudgetList::default_instance()},
    {"PriorityClass", "scheduling.k8s.io", &k8s::scheduling::PriorityClass::default_instance()},
    {"PriorityClassList", "scheduling.k8s.io", &k8s::scheduling::PriorityClassList::default_instance()},
    {"PodGroup", "scheduling.k8s.io", &k8s::scheduling::PodGroup::default_instance()},
    {"PodGroupList", "scheduling.k8s.io", &k8s::scheduling::PodGroupList::default_instance()},
    {"PodGroup", "scheduling.x-k8s.io", &k8s::coscheduling::PodGroup::default_instance()},
    {"PodGroupList", "scheduling.x-k8s.io", &k8s::coscheduling::PodGroupList::default_instance()},
    {"StorageClass", "storage.k8s.io", &k8s::storage::StorageClass::default_instance()},
    {"StorageClassList", "storage.k8s.io", &k8s::storage::StorageClassList::default_instance()},
    {"CSINode", "storage.k8s.io", &k8s::storage::CSINode::default_instance()},
    {"CSINodeList", "storage.k8s.io", &k8s::storage::CSINodeList::default_instance()},
    {"CSIDriver", "storage.k8s.io", &k8s::storage::CSIDriver::default_instance()},
    {"CSIDriverList", "storage.k8s.io", &k8s::storage::CSIDriverList::default_instance()},
    {"CSIStorageCapacity", "storage.k8s.io", &k8s::storage::CSIStorageCapacity::default_instance()},
    {"CSIStorageCapacityList", "storage.k8s.io", &k8s::storage::CSIStorageCapacityList::default_instance()},
    {"VolumeAttachment", "storage.k8s.io", &k8s::storage::VolumeAttachment::default_instance()},
    {"VolumeAttachmentList", "storage.k8s.io", &k8s::storage::VolumeAttachmentList::default_instance()},
  };
  return types;
}

// The type a JSON/YAML text names with its first recognised `kind: X` / "kind": "X" (the caller of
// a real decoder knows the type from the API path; a fuzzer input says it this way, so the
// fixtures of every kind land on their own type). Pod when nothing matches, WatchEvent for a
// kind-less text with an `object` key (a watch frame).
inline const google::protobuf::Message& pick_type(std::string_view s) {
  const auto& types = message_types();
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = s.find("kind"); at != std::string_view::npos; at = s.find("kind", at + 4)) {
    if (at > 0 && ident(s[at - 1])) continue;
    size_t i = at + 4;
    if (i < s.size() && (s[i] == '"' || s[i] == '\'')) ++i;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size() || s[i] != ':') continue;
    ++i;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i < s.size() && (s[i] == '"' || s[i] == '\'')) ++i;
    size_t b = i;
    while (i < s.size() && ident(s[i])) ++i;
    std::string_view word = s.substr(b, i - b);
    // Two kinds of one name, told apart by the group the text names: Event (core, events.k8s.io) and
    // PodGroup (scheduling.k8s.io, the Coscheduling CRD's scheduling.x-k8s.io).
    bool events_group = s.find("events.k8s.io") != std::string_view::npos;
    bool coscheduling_group = s.find("scheduling.x-k8s.io") != std::string_view::npos;
    const bool pod_group = word == "PodGroup" || word == "PodGroupList";
    for (auto& t : types)
      if (t.kind == word && (word != "Event" || (t.group == "events.k8s.io") == events_group) &&
          (!pod_group || (t.group == "scheduling.x-k8s.io") == coscheduling_group))
        return *t.prototype;
  }
  if (s.find("object") != std::string_view::npos) return k8s::meta::WatchEvent::default_instance();
  return k8s::core::Pod::default_instance();
}

// What a decoded object goes through next in the scheduler: its JSON and protobuf encodings (the
// apiserver client writes both). Crashes here are findings. With KAS_FUZZ_STRICT=1 the JSON
// encoding must also decode again (our decoder accepting our own output); a failure aborts.
inline void exercise_encoders(const google::protobuf::Message& msg) {
  static const bool strict = [] {
    const char* s = std::getenv("KAS_FUZZ_STRICT");
    return s && *s && *s != '0';
  }();
  std::string api_version = "v1";
  for (auto& t : message_types())
    if (t.prototype->GetDescriptor() == msg.GetDescriptor() && !t.group.empty())
      api_version = std::string(t.group) + "/v1";
  std::string json = kas::codec::encode_json(msg);
  std::string pb = kas::codec::encode_protobuf(msg, api_version, msg.GetDescriptor()->name());
  if (!strict) return;
  std::unique_ptr<google::protobuf::Message> again(msg.New());
  auto s = kas::codec::decode_json(json, *again);
  if (!s) {
    std::fprintf(stderr, "kas-fuzz: encode_json output does not decode: %s\n%s\n", s.err().message.c_str(),
                 json.c_str());
    std::abort();
  }
  std::unique_ptr<google::protobuf::Message> third(msg.New());
  auto p = kas::codec::decode_protobuf(pb, *third);
  if (!p) {
    std::fprintf(stderr, "kas-fuzz: encode_protobuf output does not decode: %s\n", p.err().message.c_str());
    std::abort();
  }
}

}  // namespace kas_fuzz

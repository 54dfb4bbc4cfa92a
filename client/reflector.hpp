#pragma once
// A reflector for one API resource: it lists the collection (in pages), then watches it from the
// list's resourceVersion, and turns what it reads into deltas for its owner, the way client-go's
// Reflector feeding a DeltaFIFO does.
//
// Design:
// - Not thread-safe and not an actor. Its owner drives it through an `executor` that runs closures
//   one at a time on the owner's context (an actor sends itself a message); every method and every
//   callback (sink, on_error) runs there. Transport callbacks arrive on the curl I/O thread and do
//   nothing but copy what they got into a closure posted to the executor.
// - State lives in an impl held by shared_ptr; posted closures hold it weakly, so a closure that runs
//   after the reflector is gone does nothing. The executor pointer the I/O thread posts through sits
//   behind a small mutex-guarded gate the destructor closes, so a late transport callback neither
//   touches freed memory nor posts to an executor that may be gone.
// - One request at a time. Each request, and each scheduled retry, takes a new generation number;
//   results carrying an older one (a request since cancelled or replaced) are dropped.
// - The reflector keeps the last state it delivered for each object (namespace/name), so every
//   delta is relative to what the sink has seen: a relist (after 410 Gone, a decode failure, or a
//   restart) reconciles against it (new -> added, other resourceVersion -> modified, other uid ->
//   deleted + added, missing -> deleted), and duplicate watch events are dropped.
// - Flow control: the next list page is requested only after the sink returned from the previous
//   page's batch, so memory holds one page at a time however large the collection.
// - Failures back off (jittered exponential, reset once a watch delivers an event); a 410 relists at
//   once unless the previous relist also ended without a healthy watch.
//
// The owner must keep the transport and the executor alive until the reflector is destroyed, and
// must not destroy the reflector from inside its sink or on_error (stop() there is fine).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "client/api_wire.hpp"
#include "client/http_transport.hpp"

namespace kas::api {

// Runs closures on the owner's context, one at a time, in order (an actor sends itself a message).
class executor {
public:
  virtual ~executor() = default;
  virtual void post(std::function<void()> fn) = 0;
  virtual void post_after(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
};

struct resource_ref {
  std::string path;   // collection path: "/api/v1/pods", "/apis/policy/v1/poddisruptionbudgets"
  std::string kind;   // "Pod" (for logs and errors)
  const google::protobuf::Message* item_prototype = nullptr;  // &k8s::core::Pod::default_instance()
  const google::protobuf::Message* list_prototype = nullptr;  // &k8s::core::PodList::default_instance()
  std::string field_selector;  // e.g. "status.phase!=Succeeded,status.phase!=Failed"
  std::string label_selector;
  // The API may not be installed (a CRD, a beta API the cluster does not enable): a 404 on a list
  // is then an empty collection, not an error. The reflector delivers it (deleting what it knew,
  // and `synced` the first time), says so once through reflector_options::on_notice, and lists
  // again every absent_recheck until the resource is served, which it also says once.
  bool optional = false;
};

using object_ptr = std::shared_ptr<const google::protobuf::Message>;

enum class delta_type { added, modified, deleted, synced };

struct delta {
  delta_type type = delta_type::added;
  object_ptr object;  // the new state; for deleted the last state; null for synced
  object_ptr old;     // modified/deleted: the state before (as the reflector last knew it)
};

struct reflector_options {
  encoding enc = encoding::protobuf;
  uint32_t page_size = 500;                        // list limit; 0 = unpaginated
  std::chrono::milliseconds backoff_initial{800}, backoff_max{30000};  // jittered exponential, reset after a healthy watch
  std::chrono::seconds watch_timeout{300};         // timeoutSeconds sent on watch (server closes; we re-watch)
  bool bookmarks = true;                           // allowWatchBookmarks
  std::chrono::milliseconds list_timeout{120000};  // whole-request limit per list page (0 = none; unpaginated lists of big clusters may need it)
  std::chrono::milliseconds absent_recheck{60000};  // resource_ref::optional: how often an absent API is listed again
  // One line when an optional resource turns out not to be served, and when it is served again
  // (for an info log: the owner must not go silent about a kind it treats as empty).
  std::function<void(const std::string&)> on_notice;
};

class reflector {
public:
  // `sink` gets deltas in order, in batches (one batch per list page / per watch chunk); `on_error`
  // gets one line per failure (HTTP errors, decode errors, 410s) for logs — never secrets.
  reflector(http_transport& t, resource_ref r, reflector_options o, executor& ex,
            std::function<void(std::vector<delta>)> sink, std::function<void(const std::string&)> on_error);
  ~reflector();  // cancels what is in flight
  reflector(const reflector&) = delete;
  reflector& operator=(const reflector&) = delete;

  // Lists (reconciling against what was delivered before, if anything), then watches. Idempotent.
  void start();
  // Cancels the request in flight and any scheduled retry; start() again relists.
  void stop();
  bool synced() const;  // the first full list has been delivered (then a `synced` delta was emitted once)
  const std::string& resource_version() const;

  // lists: list runs started (from the first page); relists: those after the first (retries of a
  // failed first list included); pages: pages decoded; watches: watch requests started;
  // watch_events: ADDED/MODIFIED/DELETED events read (duplicates included); gone: 410s (watch, or a
  // continue token); errors: lines given to on_error.
  struct counters {
    uint64_t lists = 0, pages = 0, relists = 0, watches = 0, watch_events = 0, bookmarks = 0, gone = 0, errors = 0;
  };
  const counters& stats() const;
  // Objects as last delivered to the sink.
  size_t known_objects() const;

private:
  struct impl;
  std::shared_ptr<impl> p_;
};

}  // namespace kas::api

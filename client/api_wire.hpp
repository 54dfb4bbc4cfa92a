#pragma once
// The Kubernetes API's wire shapes beyond a single object, as a client reads them: response bodies
// (objects and Lists) in either encoding, metav1.Status error bodies, and watch streams.
//
// Watch streams, as the apiserver writes them:
// - protobuf (`application/vnd.kubernetes.protobuf;stream=watch`): frames of a 4-byte big-endian
//   length followed by a metav1.WatchEvent in plain protobuf (no "k8s\0" envelope: the stream
//   serializer is the raw one). The event's object.raw is the object as a whole protobuf body,
//   envelope included.
// - JSON (`application/json`): a sequence of WatchEvent JSON objects ({"type":..,"object":{..}}),
//   each followed by a newline; readers must not rely on the newline, only on the object's end.
// Bytes arrive in arbitrary pieces (HTTP/2 DATA frames, TLS records); watch_decoder keeps what is
// incomplete and yields each event once it is whole.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message.h>

#include "messages/result.hpp"

namespace kas::api {

enum class encoding { protobuf, json };

// The media type to send in Accept / Content-Type.
std::string_view media_type(encoding e);
// The encoding of a Content-Type header value (parameters such as `;stream=watch` or `;charset=utf-8`
// ignored); nullopt for anything else (an HTML error page from a proxy, for instance).
std::optional<encoding> encoding_of(std::string_view content_type);

// A response body: an object or a List (PodList, NodeList ...). Errors name the encoding and the
// field path (JSON) or the envelope problem (protobuf).
status_or_error decode_body(std::string_view body, encoding e, google::protobuf::Message& out);

// A metav1.Status, or what stands in for one when a response's body is not a Status.
struct api_status {
  int code = 0;            // HTTP status code (Status.code, else the response's)
  std::string reason;      // NotFound, AlreadyExists, Conflict, Expired, Gone, TooManyRequests ...
  std::string message;     // the apiserver's text
  std::string kind, name;  // details: the object's kind and name, when given
  int retry_after_seconds = 0;
  bool from_status = false;  // the body was a metav1.Status
};
// The error body of a non-2xx response (or the object of a watch ERROR event, with http_code 0).
// Never fails: a body that is not a Status gives the HTTP code and the first 200 printable bytes.
api_status decode_status(int http_code, std::string_view body, encoding e);
// One line for logs and errors: `pods "web-0" not found (404 NotFound)`.
std::string to_string(const api_status& s);

enum class watch_event_type { added, modified, deleted, bookmark, error };
std::string_view to_string(watch_event_type t);

struct watch_event {
  watch_event_type type = watch_event_type::added;
  // The embedded object as sent: a whole protobuf body ("k8s\0" envelope) or compact JSON text.
  // Decode it with decode_body into the watched kind (a Status for error events).
  std::string object;
};

class watch_decoder {
public:
  // A frame (one event) larger than max_frame_bytes is an error, not an allocation.
  explicit watch_decoder(encoding e, size_t max_frame_bytes = 64u << 20);

  // Takes the next bytes of the stream and appends every event they complete to `out`. After an
  // error the stream is unusable (the caller closes it and starts a new watch or a relist); the
  // error says which event of the stream (1-based) was bad and why.
  status_or_error feed(std::string_view bytes, std::vector<watch_event>& out);
  // The stream ended: an error if it stopped inside an event.
  status_or_error finish() const;

  uint64_t events() const { return events_; }

private:
  status_or_error feed_protobuf(std::vector<watch_event>& out);
  status_or_error feed_json(std::vector<watch_event>& out);
  status_or_error emit(std::string_view frame, std::vector<watch_event>& out);
  error bad(const std::string& why) const;

  encoding enc_;
  size_t max_frame_;
  std::string buf_;   // bytes not yet consumed
  size_t pos_ = 0;    // start of the unconsumed part of buf_
  uint64_t events_ = 0;
  bool failed_ = false;
  // JSON scanner state, kept across feeds so a long object is scanned once.
  size_t scan_ = 0;  // next byte to scan, relative to pos_
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false, started_ = false;
};

}  // namespace kas::api

#include "client/api_wire.hpp"

#include <algorithm>

#include "messages/codec.hpp"
#include "messages/k8s/meta.pb.h"

namespace kas::api {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::optional<watch_event_type> event_type_of(std::string_view t) {
  if (t == "ADDED") return watch_event_type::added;
  if (t == "MODIFIED") return watch_event_type::modified;
  if (t == "DELETED") return watch_event_type::deleted;
  if (t == "BOOKMARK") return watch_event_type::bookmark;
  if (t == "ERROR") return watch_event_type::error;
  return std::nullopt;
}

// At most `max` bytes of `s`, non-printable bytes as '?', for error text about bodies we could not read.
std::string printable_prefix(std::string_view s, size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace

std::string_view media_type(encoding e) {
  return e == encoding::protobuf ? "application/vnd.kubernetes.protobuf" : "application/json";
}

std::optional<encoding> encoding_of(std::string_view content_type) {
  auto semi = content_type.find(';');
  std::string_view base = trim(content_type.substr(0, semi));
  std::string lower(base);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "application/vnd.kubernetes.protobuf") return encoding::protobuf;
  if (lower == "application/json") return encoding::json;
  return std::nullopt;
}

status_or_error decode_body(std::string_view body, encoding e, google::protobuf::Message& out) {
  auto r = e == encoding::protobuf ? codec::decode_protobuf(body, out) : codec::decode_json(body, out);
  if (!r) return error{std::string(e == encoding::protobuf ? "protobuf" : "JSON") + " response body (" +
                       out.GetDescriptor()->name() + "): " + r.err().message};
  return r;
}

api_status decode_status(int http_code, std::string_view body, encoding e) {
  api_status s;
  s.code = http_code;
  k8s::meta::Status st;
  auto r = e == encoding::protobuf ? codec::decode_protobuf(body, st) : codec::decode_json(body, st);
  // A JSON body of another shape decodes to an empty Status (unknown keys are skipped): only a
  // body that says something Status says counts as one.
  if (r && (st.has_code() || st.has_reason() || st.has_message() || st.has_status())) {
    s.from_status = true;
    if (st.code() != 0) s.code = st.code();
    s.reason = st.reason();
    s.message = st.message();
    if (st.has_details()) {
      s.kind = st.details().kind();
      s.name = st.details().name();
      s.retry_after_seconds = st.details().retry_after_seconds();
    }
    return s;
  }
  s.message = body.empty() ? "empty response body" : "response body is not a metav1.Status: " + printable_prefix(body, 200);
  return s;
}

std::string to_string(const api_status& s) {
  std::string out = s.message.empty() ? "no message" : s.message;
  out += " (" + std::to_string(s.code);
  if (!s.reason.empty()) out += " " + s.reason;
  out += ")";
  return out;
}

std::string_view to_string(watch_event_type t) {
  switch (t) {
    case watch_event_type::added: return "ADDED";
    case watch_event_type::modified: return "MODIFIED";
    case watch_event_type::deleted: return "DELETED";
    case watch_event_type::bookmark: return "BOOKMARK";
    case watch_event_type::error: return "ERROR";
  }
  return "?";
}

watch_decoder::watch_decoder(encoding e, size_t max_frame_bytes) : enc_(e), max_frame_(max_frame_bytes) {}

error watch_decoder::bad(const std::string& why) const {
  return error{std::string(enc_ == encoding::protobuf ? "protobuf" : "JSON") + " watch stream, event " +
               std::to_string(events_ + 1) + ": " + why};
}

status_or_error watch_decoder::feed(std::string_view bytes, std::vector<watch_event>& out) {
  if (failed_) return bad("the stream already failed");
  // Drop what was consumed before appending, so the buffer holds at most one partial event.
  if (pos_ > 0 && (pos_ >= buf_.size() / 2 || pos_ > (1u << 16))) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  buf_.append(bytes.data(), bytes.size());
  auto r = enc_ == encoding::protobuf ? feed_protobuf(out) : feed_json(out);
  if (!r) failed_ = true;
  return r;
}

status_or_error watch_decoder::finish() const {
  if (failed_) return bad("the stream already failed");
  std::string_view rest(buf_.data() + pos_, buf_.size() - pos_);
  if (enc_ == encoding::json)
    while (!rest.empty() && json_space(rest.front())) rest.remove_prefix(1);
  if (!rest.empty())
    return bad("the stream ended inside an event (" + std::to_string(rest.size()) + " bytes of it received)");
  return ok_t{};
}

status_or_error watch_decoder::feed_protobuf(std::vector<watch_event>& out) {
  while (buf_.size() - pos_ >= 4) {
    auto* p = reinterpret_cast<const unsigned char*>(buf_.data() + pos_);
    uint64_t len = (uint64_t{p[0]} << 24) | (uint64_t{p[1]} << 16) | (uint64_t{p[2]} << 8) | uint64_t{p[3]};
    if (len > max_frame_)
      return bad("frame of " + std::to_string(len) + " bytes exceeds the limit of " + std::to_string(max_frame_));
    if (buf_.size() - pos_ - 4 < len) break;
    std::string_view frame(buf_.data() + pos_ + 4, static_cast<size_t>(len));
    pos_ += 4 + static_cast<size_t>(len);
    if (auto r = emit(frame, out); !r) return r;
  }
  return ok_t{};
}

status_or_error watch_decoder::feed_json(std::vector<watch_event>& out) {
  while (true) {
    if (!started_) {
      while (pos_ < buf_.size() && json_space(buf_[pos_])) ++pos_;
      if (pos_ == buf_.size()) return ok_t{};
      if (buf_[pos_] != '{')
        return bad("expected '{' to start an event, got '" + printable_prefix(std::string_view(&buf_[pos_], 1), 1) + "'");
      started_ = true;
      scan_ = 0;
      depth_ = 0;
      in_string_ = escaped_ = false;
    }
    // Scan for the end of the object that starts at pos_: braces outside strings.
    size_t end = 0;
    for (size_t i = pos_ + scan_; i < buf_.size(); ++i) {
      char c = buf_[i];
      if (in_string_) {
        if (escaped_) escaped_ = false;
        else if (c == '\\') escaped_ = true;
        else if (c == '"') in_string_ = false;
        continue;
      }
      if (c == '"') in_string_ = true;
      else if (c == '{' || c == '[') ++depth_;
      else if (c == '}' || c == ']') {
        if (--depth_ == 0) {
          end = i + 1;
          break;
        }
      }
    }
    if (end == 0) {
      scan_ = buf_.size() - pos_;
      if (scan_ > max_frame_)
        return bad("event larger than the limit of " + std::to_string(max_frame_) + " bytes");
      return ok_t{};
    }
    std::string_view frame(buf_.data() + pos_, end - pos_);
    pos_ = end;
    started_ = false;
    if (frame.size() > max_frame_)
      return bad("event of " + std::to_string(frame.size()) + " bytes exceeds the limit of " + std::to_string(max_frame_));
    if (auto r = emit(frame, out); !r) return r;
  }
}

status_or_error watch_decoder::emit(std::string_view frame, std::vector<watch_event>& out) {
  k8s::meta::WatchEvent ev;
  if (enc_ == encoding::protobuf) {
    if (!ev.ParseFromArray(frame.data(), static_cast<int>(frame.size())))
      return bad("malformed metav1.WatchEvent (" + std::to_string(frame.size()) + " bytes)");
  } else if (auto r = codec::decode_json(frame, ev); !r) {
    return bad(r.err().message);
  }
  auto type = event_type_of(ev.type());
  if (!type) return bad("unknown event type \"" + printable_prefix(ev.type(), 40) + "\"");
  if (!ev.has_object() || ev.object().raw().empty()) return bad(std::string(to_string(*type)) + " event without an object");
  ++events_;
  out.push_back(watch_event{*type, std::move(*ev.mutable_object()->mutable_raw())});
  return ok_t{};
}

}  // namespace kas::api

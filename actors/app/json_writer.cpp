#include "actors/app/json_writer.hpp"

#include <cstdio>

namespace kas {

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

void json_writer::comma() {
  if (need_comma_) out_ += ',';
  need_comma_ = true;
}

json_writer& json_writer::begin_object() {
  comma();
  out_ += '{';
  need_comma_ = false;
  return *this;
}
json_writer& json_writer::end_object() {
  out_ += '}';
  need_comma_ = true;
  return *this;
}
json_writer& json_writer::begin_array() {
  comma();
  out_ += '[';
  need_comma_ = false;
  return *this;
}
json_writer& json_writer::end_array() {
  out_ += ']';
  need_comma_ = true;
  return *this;
}
json_writer& json_writer::key(std::string_view k) {
  comma();
  out_ += '"';
  out_ += json_escape(k);
  out_ += "\":";
  need_comma_ = false;
  return *this;
}
json_writer& json_writer::value(std::string_view v) {
  comma();
  out_ += '"';
  out_ += json_escape(v);
  out_ += '"';
  return *this;
}
json_writer& json_writer::value(int64_t v) {
  comma();
  out_ += std::to_string(v);
  return *this;
}
json_writer& json_writer::value(double v) {
  comma();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  out_ += buf;
  return *this;
}
json_writer& json_writer::null() {
  comma();
  out_ += "null";
  return *this;
}

}  // namespace kas

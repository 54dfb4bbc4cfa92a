#include <cmath>
#include "actors/app/json_writer.hpp"

#include <cstdio>

#include "messages/codec.hpp"

namespace kas {

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
  codec::append_json_string(out_, k);
  out_ += ':';
  need_comma_ = false;
  return *this;
}
json_writer& json_writer::value(std::string_view v) {
  comma();
  codec::append_json_string(out_, v);
  return *this;
}
json_writer& json_writer::value(int64_t v) {
  comma();
  out_ += std::to_string(v);
  return *this;
}
json_writer& json_writer::value(bool v) {
  comma();
  out_ += v ? "true" : "false";
  return *this;
}
json_writer& json_writer::value(double v) {
  if (!std::isfinite(v)) return null();
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

#pragma once
// A minimal streaming JSON writer for the CLI's machine-readable output.
#include <cstdint>
#include <string>
#include <string_view>

namespace kas {

class json_writer {
public:
  json_writer& begin_object();
  json_writer& end_object();
  json_writer& begin_array();
  json_writer& end_array();
  json_writer& key(std::string_view k);
  json_writer& value(std::string_view v);
  json_writer& value(const char* v) { return value(std::string_view(v)); }
  json_writer& value(int64_t v);
  json_writer& value(double v);  // non-finite values are written as null
  json_writer& value(bool v);
  json_writer& null();
  const std::string& str() const { return out_; }

private:
  void comma();
  std::string out_;
  bool need_comma_ = false;
};

}  // namespace kas

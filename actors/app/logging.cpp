#include "actors/app/logging.hpp"

#include "messages/codec.hpp"

#include <cctype>
#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

namespace kas {

namespace {

// Position of the first ` key=` (key: letters, digits, '_'), or npos.
size_t first_field(std::string_view s, size_t from) {
  for (size_t i = from; i < s.size(); ++i) {
    if (s[i] != ' ') continue;
    size_t j = i + 1;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
    if (j > i + 1 && j < s.size() && s[j] == '=') return i;
  }
  return std::string_view::npos;
}

class json_payload_flag : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    auto s = json_log_fields(std::string(msg.payload.data(), msg.payload.size()));
    dest.append(s.data(), s.data() + s.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<json_payload_flag>(); }
};

}  // namespace

std::string json_log_fields(const std::string& payload) {
  std::string_view s(payload);
  size_t cut = first_field(s, 0);
  std::string out = "\"msg\":";
  codec::append_json_string(out, s.substr(0, cut));
  size_t i = cut;
  while (i != std::string_view::npos && i < s.size()) {
    size_t eq = s.find('=', i);
    auto key = s.substr(i + 1, eq - i - 1);
    std::string value;
    size_t next;
    if (eq + 1 < s.size() && s[eq + 1] == '"') {
      size_t k = eq + 2;
      while (k < s.size() && s[k] != '"') {
        if (s[k] == '\\' && k + 1 < s.size()) ++k;
        value += s[k++];
      }
      next = first_field(s, std::min(k + 1, s.size()));
    } else {
      next = first_field(s, eq + 1);
      value = std::string(s.substr(eq + 1, (next == std::string_view::npos ? s.size() : next) - eq - 1));
    }
    out += ',';
    codec::append_json_string(out, key);
    out += ':';
    codec::append_json_string(out, value);
    i = next;
  }
  return out;
}

void set_log_verbosity(int v) {
  spdlog::set_level(v >= 4 ? spdlog::level::trace : v >= 2 ? spdlog::level::debug : spdlog::level::warn);
}

bool set_log_format(const std::string& format) {
  if (format == "text") return true;
  if (format != "json") return false;
  auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  f->add_flag<json_payload_flag>('*').set_pattern("{\"ts\":\"%Y-%m-%dT%H:%M:%S.%fZ\",\"level\":\"%l\",%*}");
  spdlog::set_formatter(std::move(f));
  return true;
}

}  // namespace kas

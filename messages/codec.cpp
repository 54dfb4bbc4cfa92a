// Reflection-driven codecs for the Kubernetes object model; see codec.hpp for the contract.
#include "messages/codec.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include "messages/k8s/meta.pb.h"
#include "messages/field_path.hpp"
#include "messages/quantity.hpp"

namespace kas::codec {
namespace {

namespace pb = google::protobuf;
using FD = pb::FieldDescriptor;

constexpr std::string_view kQuantity = "k8s.meta.Quantity";
constexpr std::string_view kTime = "k8s.meta.Time";
constexpr std::string_view kMicroTime = "k8s.meta.MicroTime";
constexpr std::string_view kIntOrString = "k8s.meta.IntOrString";
constexpr std::string_view kRawExtension = "k8s.meta.RawExtension";

kas::error fail(const std::string& path, const std::string& what) {
  return kas::error{path.empty() ? what : path + ": " + what};
}

// Short rendering of a node for error text: scalars quoted, containers by kind.
std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return "\"" + n.Scalar() + "\"";
    case YAML::NodeType::Map: return "an object";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "null";
    default: return "nothing";
  }
}

// yaml-cpp tags plain (unquoted) scalars "?" and quoted ones "!": only plain scalars may be
// numbers/booleans/null in the JSON sense.
bool is_plain(const YAML::Node& n) { return n.Tag() != "!"; }

bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  out = v;
  return true;
}

bool parse_uint(const std::string& s, uint64_t& out) {
  if (s.empty() || s[0] == '-') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  out = v;
  return true;
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

bool is_json_number(const std::string& s) {
  double d;
  return !s.empty() && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) && parse_double(s, d);
}


// Bounds on a RawExtension's JSON text: YAML aliases can make a few bytes expand without end (an
// alias bomb), or refer to themselves (`&a [*a]`), so the walk stops at the apiserver's object size
// or at a depth no real object has.
constexpr std::size_t kRawExtensionMaxBytes = 3 * 1024 * 1024;
constexpr int kRawExtensionMaxDepth = 100;

// Compact JSON for a YAML/JSON subtree, keys in document order (RawExtension keeps the text).
// False when the bounds above are exceeded.
bool node_to_json(const YAML::Node& n, std::string& out, int depth = 0) {
  if (depth > kRawExtensionMaxDepth || out.size() > kRawExtensionMaxBytes) return false;
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      out += '{';
      bool first = true;
      for (const auto& kv : n) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, kv.first.Scalar());
        out += ':';
        if (!node_to_json(kv.second, out, depth + 1)) return false;
      }
      out += '}';
      return true;
    }
    case YAML::NodeType::Sequence: {
      out += '[';
      bool first = true;
      for (const auto& e : n) {
        if (!first) out += ',';
        first = false;
        if (!node_to_json(e, out, depth + 1)) return false;
      }
      out += ']';
      return true;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (is_plain(n) && (s == "true" || s == "false" || s == "null" || is_json_number(s))) {
        out += s;
      } else {
        append_json_string(out, s);
      }
      return out.size() <= kRawExtensionMaxBytes;
    }
    default: out += "null"; return true;
  }
}

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(std::string_view in) {
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kB64[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    const uint32_t v = uint8_t(in[i]) << 16;
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

bool base64_decode(std::string_view in, std::string& out) {
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const char* p = std::strchr(kB64, c);
    if (c == '\0' || p == nullptr) return false;
    acc = (acc << 6) | uint32_t(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return true;
}

// Days since 1970-01-01 for a civil date (Howard Hinnant's algorithm; no timezone involved).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

kas::status_or_error decode_into(const YAML::Node& node, pb::Message& out, const std::string& path);

kas::status_or_error decode_special(const YAML::Node& node, pb::Message& out,
                                    const std::string& path, std::string_view type) {
  auto* refl = out.GetReflection();
  auto* desc = out.GetDescriptor();
  if (type == kRawExtension) {
    std::string json;
    if (!node_to_json(node, json))
      return fail(path, "the embedded object is nested deeper than " + std::to_string(kRawExtensionMaxDepth) +
                          " levels or larger than 3 MiB as JSON (YAML aliases?)");
    refl->SetString(&out, desc->FindFieldByNumber(1), std::move(json));
    return kas::ok_t{};
  }
  if (!node.IsScalar()) {
    const char* want = type == kQuantity      ? "a quantity"
                       : type == kIntOrString ? "an integer or string"
                                              : "an RFC3339 timestamp";
    return fail(path, std::string("expected ") + want + ", got " + describe(node));
  }
  const std::string& s = node.Scalar();
  if (type == kQuantity) {
    auto q = kas::parse_quantity(s);
    if (!q) return fail(path, q.err().message);
    refl->SetString(&out, desc->FindFieldByNumber(1), s);
    return kas::ok_t{};
  }
  if (type == kIntOrString) {
    // Go's wire form always carries all three fields, so set all three to decode identically.
    int64_t v = 0;
    const bool is_int = is_plain(node) && parse_int(s, v);
    if (is_int && (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())) {
      return fail(path, "integer out of range: " + s);
    }
    refl->SetInt64(&out, desc->FindFieldByNumber(1), is_int ? 0 : 1);
    refl->SetInt32(&out, desc->FindFieldByNumber(2), is_int ? static_cast<int32_t>(v) : 0);
    refl->SetString(&out, desc->FindFieldByNumber(3), is_int ? std::string() : s);
    return kas::ok_t{};
  }
  int64_t secs = 0;
  int32_t nanos = 0;
  if (!parse_rfc3339(s, secs, nanos)) {
    return fail(path, "expected an RFC3339 timestamp, got \"" + s + "\"");
  }
  refl->SetInt64(&out, desc->FindFieldByNumber(1), secs);
  refl->SetInt32(&out, desc->FindFieldByNumber(2), nanos);
  return kas::ok_t{};
}

bool is_special(std::string_view full_name) {
  return full_name == kQuantity || full_name == kTime || full_name == kMicroTime ||
         full_name == kIntOrString || full_name == kRawExtension;
}

// A scalar value for a non-message field; `repeated` selects Add* over Set*.
kas::status_or_error decode_scalar(const YAML::Node& node, pb::Message& out, const FD* f,
                                   const std::string& path, bool repeated) {
  auto* r = out.GetReflection();
  if (!node.IsScalar()) {
    const char* want = f->cpp_type() == FD::CPPTYPE_STRING ? "a string"
                       : f->cpp_type() == FD::CPPTYPE_BOOL ? "a boolean"
                                                           : "a number";
    return fail(path, std::string("expected ") + want + ", got " + describe(node));
  }
  const std::string& s = node.Scalar();
  switch (f->cpp_type()) {
    case FD::CPPTYPE_STRING: {
      std::string v = s;
      if (f->type() == FD::TYPE_BYTES && !base64_decode(s, v)) {
        return fail(path, "expected base64 data, got \"" + s + "\"");
      }
      repeated ? r->AddString(&out, f, std::move(v)) : r->SetString(&out, f, std::move(v));
      return kas::ok_t{};
    }
    case FD::CPPTYPE_BOOL: {
      if (s != "true" && s != "false") return fail(path, "expected a boolean, got \"" + s + "\"");
      repeated ? r->AddBool(&out, f, s == "true") : r->SetBool(&out, f, s == "true");
      return kas::ok_t{};
    }
    case FD::CPPTYPE_INT32:
    case FD::CPPTYPE_INT64: {
      int64_t v = 0;
      if (!parse_int(s, v)) return fail(path, "expected an integer, got \"" + s + "\"");
      if (f->cpp_type() == FD::CPPTYPE_INT32) {
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
          return fail(path, "integer out of range for int32: " + s);
        }
        repeated ? r->AddInt32(&out, f, int32_t(v)) : r->SetInt32(&out, f, int32_t(v));
      } else {
        repeated ? r->AddInt64(&out, f, v) : r->SetInt64(&out, f, v);
      }
      return kas::ok_t{};
    }
    case FD::CPPTYPE_UINT32:
    case FD::CPPTYPE_UINT64: {
      uint64_t v = 0;
      if (!parse_uint(s, v)) return fail(path, "expected a non-negative integer, got \"" + s + "\"");
      if (f->cpp_type() == FD::CPPTYPE_UINT32) {
        if (v > std::numeric_limits<uint32_t>::max()) return fail(path, "integer out of range: " + s);
        repeated ? r->AddUInt32(&out, f, uint32_t(v)) : r->SetUInt32(&out, f, uint32_t(v));
      } else {
        repeated ? r->AddUInt64(&out, f, v) : r->SetUInt64(&out, f, v);
      }
      return kas::ok_t{};
    }
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT: {
      double v = 0;
      if (!parse_double(s, v)) return fail(path, "expected a number, got \"" + s + "\"");
      if (f->cpp_type() == FD::CPPTYPE_DOUBLE) {
        repeated ? r->AddDouble(&out, f, v) : r->SetDouble(&out, f, v);
      } else {
        repeated ? r->AddFloat(&out, f, float(v)) : r->SetFloat(&out, f, float(v));
      }
      return kas::ok_t{};
    }
    case FD::CPPTYPE_ENUM: {
      const auto* ev = f->enum_type()->FindValueByName(s);
      if (ev == nullptr) return fail(path, "unknown enum value \"" + s + "\"");
      repeated ? r->AddEnum(&out, f, ev) : r->SetEnum(&out, f, ev);
      return kas::ok_t{};
    }
    default: return fail(path, "unsupported field type");
  }
}

// One value (singular field or one element of a repeated field).
kas::status_or_error decode_value(const YAML::Node& node, pb::Message& out, const FD* f,
                                  const std::string& path, bool repeated) {
  if (f->cpp_type() != FD::CPPTYPE_MESSAGE) return decode_scalar(node, out, f, path, repeated);
  auto* r = out.GetReflection();
  pb::Message* sub = repeated ? r->AddMessage(&out, f) : r->MutableMessage(&out, f);
  return decode_into(node, *sub, path);
}

kas::status_or_error decode_field(const YAML::Node& v, pb::Message& out, const FD* f,
                                  const std::string& path) {
  if (v.IsNull()) return kas::ok_t{};  // null leaves the field unset, as Go's decoders do
  auto* r = out.GetReflection();
  if (f->is_map()) {
    if (!v.IsMap()) return fail(path, "expected an object, got " + describe(v));
    const FD* kf = f->message_type()->FindFieldByNumber(1);
    const FD* vf = f->message_type()->FindFieldByNumber(2);
    for (const auto& kv : v) {
      const std::string key = kv.first.Scalar();
      pb::Message* entry = r->AddMessage(&out, f);
      entry->GetReflection()->SetString(entry, kf, key);
      // A null map value (e.g. a zero Time in disruptedPods) keeps an entry with a default value.
      if (kv.second.IsNull()) continue;
      auto st = decode_value(kv.second, *entry, vf, kas::field_path(path, key), false);
      if (!st) return st;
    }
    return kas::ok_t{};
  }
  if (f->is_repeated()) {
    if (!v.IsSequence()) return fail(path, "expected a list, got " + describe(v));
    std::size_t i = 0;
    for (const auto& e : v) {
      const std::string ep = path + "[" + std::to_string(i++) + "]";
      if (e.IsNull() && f->cpp_type() == FD::CPPTYPE_MESSAGE) {
        r->AddMessage(&out, f);
        continue;
      }
      auto st = decode_value(e, out, f, ep, true);
      if (!st) return st;
    }
    return kas::ok_t{};
  }
  return decode_value(v, out, f, path, false);
}

const FD* find_by_json(const pb::Descriptor* d, const std::string& key) {
  for (int i = 0; i < d->field_count(); ++i) {
    if (d->field(i)->json_name() == key) return d->field(i);
  }
  return nullptr;
}

// Upstream structs embedded with `json:",inline"`: their keys sit in the enclosing object.
const FD* inline_field(const pb::Descriptor* d) {
  const std::string& n = d->full_name();
  if (n == "k8s.core.Volume") return d->FindFieldByName("volume_source");
  if (n == "k8s.core.PersistentVolumeSpec") return d->FindFieldByName("persistent_volume_source");
  return nullptr;
}

kas::status_or_error decode_into(const YAML::Node& node, pb::Message& out, const std::string& path) {
  const pb::Descriptor* d = out.GetDescriptor();
  if (is_special(d->full_name())) return decode_special(node, out, path, d->full_name());
  if (node.IsNull()) return kas::ok_t{};
  if (!node.IsMap()) return fail(path, "expected an object, got " + describe(node));
  const FD* inl = inline_field(d);
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) return fail(path, "object keys must be strings");
    const std::string key = kv.first.Scalar();
    const FD* f = find_by_json(d, key);
    if (f != nullptr) {
      auto st = decode_field(kv.second, out, f, kas::field_path(path, key));
      if (!st) return st;
      continue;
    }
    if (inl != nullptr) {
      const FD* g = find_by_json(inl->message_type(), key);
      if (g != nullptr) {
        pb::Message* sub = out.GetReflection()->MutableMessage(&out, inl);
        auto st = decode_field(kv.second, *sub, g, kas::field_path(path, key));
        if (!st) return st;
      }
    }
    // Unknown keys (apiVersion, kind, fields we do not declare) are skipped.
  }
  return kas::ok_t{};
}

// yaml-cpp accepts much that is not JSON (",,", single quotes, bare words), so decode_json first
// checks strict RFC 8259 syntax and reports the first fault by 1-based line and column.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view s) : s_(s) {}

  std::string check() {
    ws();
    if (!value(0)) return err_;
    ws();
    if (i_ != s_.size()) return fault("unexpected trailing characters");
    return {};
  }

 private:
  std::string fault(const char* what) {
    if (!err_.empty()) return err_;
    std::size_t line = 1, col = 1;
    for (std::size_t k = 0; k < i_ && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    err_ = "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what;
    return err_;
  }
  bool fail_with(const char* what) {
    fault(what);
    return false;
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool lit(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return fail_with("invalid literal");
    i_ += w.size();
    return true;
  }
  bool str() {
    ++i_;  // opening quote
    while (i_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return fail_with("control character in string");
      if (c == '\\') {
        ++i_;
        if (i_ >= s_.size()) break;
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 1; k <= 4; ++k) {
            if (i_ + k >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) {
              return fail_with("bad \\u escape");
            }
          }
          i_ += 4;
        } else if (std::strchr("\"\\/bfnrt", e) == nullptr || e == '\0') {
          return fail_with("bad escape");
        }
      }
      ++i_;
    }
    return fail_with("unterminated string");
  }
  bool number() {
    const std::size_t start = i_;
    auto digits = [&] {
      const std::size_t b = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ > b;
    };
    if (s_[i_] == '-') ++i_;
    if (!digits()) return fail_with("invalid number");
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!digits()) return fail_with("invalid number");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) return fail_with("invalid number");
    }
    return i_ > start;
  }
  bool value(int depth) {
    if (depth > 512) return fail_with("nesting too deep");
    if (i_ >= s_.size()) return fail_with("unexpected end of input");
    const char c = s_[i_];
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == close) {
        ++i_;
        return true;
      }
      for (;;) {
        if (c == '{') {
          if (i_ >= s_.size() || s_[i_] != '"') return fail_with("expected a string key");
          if (!str()) return false;
          ws();
          if (i_ >= s_.size() || s_[i_] != ':') return fail_with("expected ':'");
          ++i_;
          ws();
        }
        if (!value(depth + 1)) return false;
        ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          ws();
          continue;
        }
        if (i_ < s_.size() && s_[i_] == close) {
          ++i_;
          return true;
        }
        return fail_with(c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
    if (c == '"') return str();
    if (c == 't') return lit("true");
    if (c == 'f') return lit("false");
    if (c == 'n') return lit("null");
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    return fail_with("unexpected character");
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::string err_;
};

kas::status_or_error load_and_decode(std::string text, pb::Message& out, const char* what) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return kas::error{std::string("invalid ") + what + " at line " + std::to_string(e.mark.line + 1) +
                      ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg};
  }
  if (!root.IsMap()) {
    return kas::error{std::string("invalid ") + what + ": expected an object at the top level, got " +
                      describe(root)};
  }
  try {
    return decode_into(root, out, "");
  } catch (const YAML::Exception& e) {  // defensive: conversions inside yaml-cpp may throw
    return kas::error{std::string(what) + ": " + e.what()};
  }
}

// Group of an apiVersion ("policy/v1" -> "policy", "v1" -> "").
std::string_view api_group(std::string_view api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

// The API group a generated message belongs to, by proto package; nullptr when any group fits.
const char* group_of_package(const std::string& pkg) {
  if (pkg == "k8s.core") return "";
  if (pkg == "k8s.coordination") return "coordination.k8s.io";
  if (pkg == "k8s.scheduling") return "scheduling.k8s.io";
  if (pkg == "k8s.policy") return "policy";
  if (pkg == "k8s.events") return "events.k8s.io";
  if (pkg == "k8s.storage") return "storage.k8s.io";
  if (pkg == "k8s.coscheduling") return "scheduling.x-k8s.io";
  return nullptr;
}

void encode_message(const pb::Message& m, std::string& out);

void encode_value(const pb::Message& m, const FD* f, int index, std::string& out) {
  const auto* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FD::CPPTYPE_STRING: {
      const std::string s = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      append_json_string(out, f->type() == FD::TYPE_BYTES ? base64_encode(s) : s);
      return;
    }
    case FD::CPPTYPE_BOOL:
      out += (rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false";
      return;
    case FD::CPPTYPE_INT32:
      out += std::to_string(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
      return;
    case FD::CPPTYPE_INT64:
      out += std::to_string(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
      return;
    case FD::CPPTYPE_UINT32:
      out += std::to_string(rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
      return;
    case FD::CPPTYPE_UINT64:
      out += std::to_string(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
      return;
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT: {
      const double d = f->cpp_type() == FD::CPPTYPE_DOUBLE
                           ? (rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f))
                           : (rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      out += buf;
      return;
    }
    case FD::CPPTYPE_ENUM:
      append_json_string(out, (rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f))->name());
      return;
    case FD::CPPTYPE_MESSAGE:
      encode_message(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f), out);
      return;
  }
}

void encode_message(const pb::Message& m, std::string& out) {
  const pb::Descriptor* d = m.GetDescriptor();
  const auto* r = m.GetReflection();
  const std::string& name = d->full_name();
  if (name == kQuantity) {
    append_json_string(out, r->GetString(m, d->FindFieldByNumber(1)));
    return;
  }
  if (name == kTime || name == kMicroTime) {
    // An empty Time is Go's zero time.Time, which marshals as null (e.g. disruptedPods values).
    if (!r->HasField(m, d->FindFieldByNumber(1)) && !r->HasField(m, d->FindFieldByNumber(2))) {
      out += "null";
      return;
    }
    append_json_string(out, format_rfc3339(r->GetInt64(m, d->FindFieldByNumber(1)),
                                           r->GetInt32(m, d->FindFieldByNumber(2)),
                                           name == kTime ? 0 : 6));
    return;
  }
  if (name == kIntOrString) {
    if (r->GetInt64(m, d->FindFieldByNumber(1)) == 0) {
      out += std::to_string(r->GetInt32(m, d->FindFieldByNumber(2)));
    } else {
      append_json_string(out, r->GetString(m, d->FindFieldByNumber(3)));
    }
    return;
  }
  if (name == kRawExtension) {
    const std::string& raw = r->GetString(m, d->FindFieldByNumber(1));
    out += raw.empty() ? "null" : raw;  // raw holds JSON text (see decode_special)
    return;
  }
  const FD* inl = inline_field(d);
  out += '{';
  bool first = true;
  auto key = [&](const FD* f) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, f->json_name());
    out += ':';
  };
  std::vector<const FD*> fields;
  r->ListFields(m, &fields);
  for (const FD* f : fields) {
    if (f == inl) {
      // Splice the inlined struct's members into this object.
      std::string sub;
      encode_message(r->GetMessage(m, f), sub);
      if (sub.size() > 2) {
        if (!first) out += ',';
        first = false;
        out.append(sub, 1, sub.size() - 2);
      }
      continue;
    }
    key(f);
    if (f->is_map()) {
      const FD* kf = f->message_type()->FindFieldByNumber(1);
      const FD* vf = f->message_type()->FindFieldByNumber(2);
      std::vector<std::pair<std::string, const pb::Message*>> entries;
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        const pb::Message& e = r->GetRepeatedMessage(m, f, i);
        entries.emplace_back(e.GetReflection()->GetString(e, kf), &e);
      }
      std::sort(entries.begin(), entries.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      out += '{';
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) out += ',';
        append_json_string(out, entries[i].first);
        out += ':';
        encode_value(*entries[i].second, vf, -1, out);
      }
      out += '}';
    } else if (f->is_repeated()) {
      out += '[';
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        if (i) out += ',';
        encode_value(m, f, i, out);
      }
      out += ']';
    } else {
      encode_value(m, f, -1, out);
    }
  }
  out += '}';
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
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
  out += '"';
}

bool parse_rfc3339(std::string_view s, int64_t& seconds, int32_t& nanos) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto num = [&](std::size_t pos, std::size_t len, int& v) {
    if (pos + len > s.size()) return false;
    v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    return true;
  };
  int y, mo, d, h, mi, se;
  if (!num(0, 4, y) || s.size() < 20 || s[4] != '-' || !num(5, 2, mo) || s[7] != '-' ||
      !num(8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !num(11, 2, h) ||
      s[13] != ':' || !num(14, 2, mi) || s[16] != ':' || !num(17, 2, se)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
  std::size_t pos = 19;
  int32_t frac = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) {
        frac = frac * 10 + (s[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    if (digits == 0) return false;
    for (; digits < 9; ++digits) frac *= 10;
  }
  int offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!num(pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' || !num(pos + 4, 2, om)) {
      return false;
    }
    offset = (oh * 60 + om) * 60 * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return false;
  }
  if (pos != s.size()) return false;
  seconds = days_from_civil(y, unsigned(mo), unsigned(d)) * 86400 + h * 3600 + mi * 60 + se - offset;
  nanos = frac;
  return true;
}

std::string format_rfc3339(int64_t seconds, int32_t nanos, int fraction_digits) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  std::string out = buf;
  if (fraction_digits > 0) {
    char frac[16];
    std::snprintf(frac, sizeof frac, "%09d", nanos);
    out += '.';
    out.append(frac, static_cast<std::size_t>(std::min(fraction_digits, 9)));
  }
  out += 'Z';
  return out;
}

kas::status_or_error decode_node(const YAML::Node& node, pb::Message& out, const std::string& path) {
  try {
    return decode_into(node, out, path);
  } catch (const YAML::Exception& e) {
    return fail(path, e.what());
  }
}

kas::status_or_error decode_json(std::string_view text, pb::Message& out) {
  // JSON allows tabs as whitespace, YAML's block context does not; outside strings a tab can only
  // be whitespace and inside strings JSON forbids raw tabs, so replacing them is lossless.
  std::string problem = JsonChecker(text).check();
  if (!problem.empty()) return kas::error{std::move(problem)};
  std::string copy(text);
  std::replace(copy.begin(), copy.end(), '\t', ' ');
  return load_and_decode(std::move(copy), out, "JSON");
}

kas::status_or_error decode_yaml(std::string_view text, pb::Message& out) {
  return load_and_decode(std::string(text), out, "YAML");
}

kas::status_or_error decode_protobuf(std::string_view bytes, pb::Message& out) {
  static constexpr char kMagic[4] = {'k', '8', 's', '\0'};
  if (bytes.size() < 4 || std::memcmp(bytes.data(), kMagic, 4) != 0) {
    return kas::error{"protobuf body: missing the \"k8s\\0\" magic prefix"};
  }
  k8s::meta::Unknown envelope;
  if (!envelope.ParseFromArray(bytes.data() + 4, static_cast<int>(bytes.size() - 4))) {
    return kas::error{"protobuf body: malformed runtime.Unknown envelope"};
  }
  if (!envelope.content_encoding().empty()) {
    return kas::error{"protobuf body: unsupported contentEncoding \"" + envelope.content_encoding() + "\""};
  }
  const std::string& kind = envelope.type_meta().kind();
  const pb::Descriptor* d = out.GetDescriptor();
  if (!kind.empty()) {
    if (kind != d->name()) {
      return kas::error{"protobuf body: kind " + kind + " (" + envelope.type_meta().api_version() +
                        ") does not match expected " + d->full_name()};
    }
    const char* group = group_of_package(d->file()->package());
    if (group != nullptr && api_group(envelope.type_meta().api_version()) != group) {
      return kas::error{"protobuf body: apiVersion " + envelope.type_meta().api_version() +
                        " does not match expected " + d->full_name()};
    }
  }
  if (!out.ParseFromString(envelope.raw())) {
    return kas::error{"protobuf body: malformed " + d->full_name() + " in raw"};
  }
  // Fields we do not declare would otherwise be kept as unknown-field bytes in every cached object;
  // dropping them makes a protobuf-decoded object equal to its JSON-decoded twin and smaller.
  out.DiscardUnknownFields();
  return kas::ok_t{};
}

std::string encode_protobuf(const pb::Message& msg, std::string_view api_version, std::string_view kind) {
  k8s::meta::Unknown envelope;
  envelope.mutable_type_meta()->set_api_version(std::string(api_version));
  envelope.mutable_type_meta()->set_kind(std::string(kind));
  msg.SerializeToString(envelope.mutable_raw());
  // Go writes the (empty) encoding fields too; keep the bytes identical.
  envelope.set_content_encoding("");
  envelope.set_content_type("");
  std::string out("k8s\0", 4);
  envelope.AppendToString(&out);
  return out;
}

std::string encode_json(const pb::Message& msg) {
  std::string out;
  encode_message(msg, out);
  return out;
}

}  // namespace kas::codec

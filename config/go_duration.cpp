#include "config/go_duration.hpp"

#include <cstdint>
#include <limits>
#include <string>

namespace kas {

namespace {

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Nanoseconds per unit, or 0 when the unit is unknown.
uint64_t unit_ns(std::string_view u) {
  if (u == "ns") return 1;
  if (u == "us" || u == "\xC2\xB5s" || u == "\xCE\xBCs") return 1000;  // "us", U+00B5 and U+03BC micro signs
  if (u == "ms") return 1000 * 1000;
  if (u == "s") return 1000ull * 1000 * 1000;
  if (u == "m") return 60ull * 1000 * 1000 * 1000;
  if (u == "h") return 3600ull * 1000 * 1000 * 1000;
  return 0;
}

}  // namespace

result<std::chrono::nanoseconds> parse_go_duration(std::string_view orig) {
  const error invalid{"time: invalid duration " + quote(orig)};
  std::string_view s = orig;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds{0};
  if (s.empty()) return invalid;
  constexpr uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t total = 0;
  while (!s.empty()) {
    // The integer part.
    uint64_t whole = 0;
    size_t i = 0;
    bool overflow = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (whole > (limit - (s[i] - '0')) / 10) overflow = true;
      else whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
      ++i;
    }
    if (overflow) return invalid;
    bool had_whole = i > 0;
    s.remove_prefix(i);
    // The fraction: its digits scale the unit; digits beyond what int64 holds are dropped, as Go does.
    uint64_t frac = 0, scale = 1;
    bool had_frac = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      size_t j = 0;
      bool dropping = false;
      while (j < s.size() && s[j] >= '0' && s[j] <= '9') {
        if (!dropping) {
          if (frac > (limit - 9) / 10 || scale > limit / 10) dropping = true;
          else frac = frac * 10 + static_cast<uint64_t>(s[j] - '0'), scale *= 10;
        }
        ++j;
      }
      had_frac = j > 0;
      s.remove_prefix(j);
    }
    if (!had_whole && !had_frac) return invalid;
    size_t k = 0;
    while (k < s.size() && s[k] != '.' && !(s[k] >= '0' && s[k] <= '9')) ++k;
    if (k == 0) return error{"time: missing unit in duration " + quote(orig)};
    std::string_view unit = s.substr(0, k);
    s.remove_prefix(k);
    uint64_t per = unit_ns(unit);
    if (per == 0) return error{"time: unknown unit " + quote(unit) + " in duration " + quote(orig)};
    if (whole > limit / per) return invalid;
    uint64_t v = whole * per;
    if (frac > 0) {
      // frac/scale of a unit, without overflowing: per <= 3.6e12 and frac < scale.
      long double part = static_cast<long double>(frac) * static_cast<long double>(per) / static_cast<long double>(scale);
      v += static_cast<uint64_t>(part);
      if (v > limit) return invalid;
    }
    total += v;
    if (total > limit) return invalid;
  }
  auto n = static_cast<int64_t>(total);
  return std::chrono::nanoseconds{neg ? -n : n};
}

}  // namespace kas

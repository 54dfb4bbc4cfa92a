// Kubernetes resource.Quantity parsing (k8s.io/apimachinery/pkg/api/resource/quantity.go).
//
// The scanner follows parseQuantityString: optional sign, digits, optional '.' and digits, then a
// suffix made of [eEinumkKMGTP]* followed by an optional signed integer. The suffix must then be one
// of the binary (Ki..Ei), decimal (n u m "" k M G T P E) or exponent (e<int>/E<int>) forms.
// Deviation, on purpose: upstream's scanner accepts inputs with no digits at all ("Mi", "-", "+") as
// zero although its own error message states a regex requiring [0-9.]+; we enforce that regex.
#include "messages/quantity.hpp"

#include <climits>
#include <string>

namespace kas {
namespace {

using u128 = unsigned __int128;

const char* const kFormatError =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const char* const kSuffixError = "unable to parse quantity's suffix";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_suffix_char(char c) {
  switch (c) {
    case 'e': case 'E': case 'i': case 'n': case 'u': case 'm':
    case 'k': case 'K': case 'M': case 'G': case 'T': case 'P':
      return true;
    default:
      return false;
  }
}

error make_error(std::string_view text, const char* why) {
  return error{"unable to parse quantity \"" + std::string(text) + "\": " + why};
}

// Interprets a suffix as quantitySuffixer.interpret does: binary, then decimal SI, then exponent.
bool interpret_suffix(std::string_view s, int32_t& exp10, int32_t& exp2) {
  exp10 = 0;
  exp2 = 0;
  if (s.size() == 2 && s[1] == 'i') {
    switch (s[0]) {
      case 'K': exp2 = 10; return true;
      case 'M': exp2 = 20; return true;
      case 'G': exp2 = 30; return true;
      case 'T': exp2 = 40; return true;
      case 'P': exp2 = 50; return true;
      case 'E': exp2 = 60; return true;
      default: return false;
    }
  }
  if (s.empty()) return true;
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n': exp10 = -9; return true;
      case 'u': exp10 = -6; return true;
      case 'm': exp10 = -3; return true;
      case 'k': exp10 = 3; return true;
      case 'M': exp10 = 6; return true;
      case 'G': exp10 = 9; return true;
      case 'T': exp10 = 12; return true;
      case 'P': exp10 = 15; return true;
      case 'E': exp10 = 18; return true;
      default: return false;
    }
  }
  if (s[0] != 'e' && s[0] != 'E') return false;
  // Exponent form: strconv.ParseInt(s[1:], 10, 64) with an optional sign.
  std::size_t i = 1;
  bool neg = false;
  if (s[i] == '+' || s[i] == '-') {
    neg = s[i] == '-';
    ++i;
  }
  if (i >= s.size()) return false;
  int64_t e = 0;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i])) return false;
    e = e * 10 + (s[i] - '0');
    if (e > 100000) return false;  // far beyond anything representable; refuse rather than overflow
  }
  exp10 = static_cast<int32_t>(neg ? -e : e);
  return true;
}

// |m| * 10^e10 * 2^e2, rounded away from zero (as upstream's Value()/MilliValue()), saturated.
int64_t scaled(const quantity& q, int32_t scale) {
  if (q.mantissa == 0) return 0;
  const bool neg = q.mantissa < 0;
  u128 m = neg ? static_cast<u128>(-(q.mantissa + 1)) + 1 : static_cast<u128>(q.mantissa);
  const u128 limit = neg ? static_cast<u128>(INT64_MAX) + 1 : static_cast<u128>(INT64_MAX);
  const int64_t sat = neg ? INT64_MIN : INT64_MAX;
  int64_t e10 = static_cast<int64_t>(q.exp10) - scale;
  bool inexact = false;
  // Apply the binary factor first so that "0.5Ki" stays exact; only when the 128-bit product would
  // overflow do we divide a power of ten out early (losing digits that only affect rounding).
  const u128 half = ~static_cast<u128>(0) >> 1;
  for (int32_t b = q.exp2; b > 0;) {
    if (m <= half) {
      m <<= 1;
      --b;
    } else if (e10 < 0) {
      if (m % 10 != 0) inexact = true;
      m /= 10;
      ++e10;
    } else {
      return sat;
    }
  }
  while (e10 < 0 && m != 0) {
    if (m % 10 != 0) inexact = true;
    m /= 10;
    ++e10;
  }
  if (m == 0) return neg ? -1 : 1;  // a nonzero fraction rounds away from zero to +-1
  for (; e10 > 0; --e10) {
    if (m > limit) return sat;
    m *= 10;
  }
  if (inexact) ++m;
  if (m > limit) return sat;
  return neg ? static_cast<int64_t>(-static_cast<__int128>(m)) : static_cast<int64_t>(m);
}

}  // namespace

int64_t quantity::value() const { return scaled(*this, 0); }
int64_t quantity::milli_value() const { return scaled(*this, -3); }
bool quantity::negative() const { return mantissa < 0; }
bool quantity::is_zero() const { return mantissa == 0; }

result<quantity> parse_quantity(std::string_view text) {
  if (text.empty()) return make_error(text, kFormatError);
  std::size_t pos = 0;
  const std::size_t end = text.size();
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    ++pos;
  }
  const std::size_t num_start = pos;
  while (pos < end && is_digit(text[pos])) ++pos;
  const std::string_view whole = text.substr(num_start, pos - num_start);
  std::string_view frac;
  if (pos < end && text[pos] == '.') {
    ++pos;
    const std::size_t f = pos;
    while (pos < end && is_digit(text[pos])) ++pos;
    frac = text.substr(f, pos - f);
  }
  if (pos == num_start) return make_error(text, kFormatError);  // no [0-9.] at all
  const std::size_t suffix_start = pos;
  while (pos < end && is_suffix_char(text[pos])) ++pos;
  if (pos < end && (text[pos] == '+' || text[pos] == '-')) ++pos;
  while (pos < end && is_digit(text[pos])) ++pos;
  if (pos != end) return make_error(text, kFormatError);

  quantity q;
  if (!interpret_suffix(text.substr(suffix_start), q.exp10, q.exp2)) {
    return make_error(text, kSuffixError);
  }
  // Accumulate up to 36 significant digits exactly; beyond that, drop digits and remember that a
  // nonzero digit was dropped so rounding (away from zero) still sees the fraction.
  __int128 m = 0;
  int digits = 0;
  int64_t exp_adjust = 0;
  bool sticky = false;
  auto feed = [&](char c, bool fractional) {
    const int d = c - '0';
    if (digits == 0 && d == 0) {
      if (fractional) --exp_adjust;
      return;
    }
    if (digits < 36) {
      m = m * 10 + d;
      ++digits;
      if (fractional) --exp_adjust;
    } else {
      if (d != 0) sticky = true;
      if (!fractional) ++exp_adjust;
    }
  };
  for (char c : whole) feed(c, false);
  for (char c : frac) feed(c, true);
  if (sticky) m += 1;  // exact enough: only rounding of Value()/MilliValue() can observe it
  int64_t e10 = q.exp10 + exp_adjust;
  if (e10 > INT32_MAX / 2) e10 = INT32_MAX / 2;
  if (e10 < INT32_MIN / 2) e10 = INT32_MIN / 2;
  q.exp10 = static_cast<int32_t>(e10);
  q.mantissa = negative ? -m : m;
  if (m == 0) {
    q.exp10 = 0;
    q.exp2 = 0;
  }
  return q;
}

}  // namespace kas

#pragma once
// Kubernetes resource.Quantity parsing. Values are parsed once, at the edge, into int64.
#include <cstdint>
#include <string_view>

#include "messages/result.hpp"

namespace kas {

// A parsed quantity: exact decimal value is mantissa * 10^exp10 * 2^exp2 (exp2 from binary suffixes).
struct quantity {
  // Value() as kube's resource.Quantity: the value rounded up (toward +inf) to an integer.
  int64_t value() const;
  // MilliValue(): value*1000 rounded up to an integer.
  int64_t milli_value() const;
  bool negative() const;
  bool is_zero() const;

  // internal exact form
  __int128 mantissa = 0;  // signed
  int32_t exp10 = 0;
  int32_t exp2 = 0;
};

// Parses the canonical Kubernetes quantity grammar:
//   <signedNumber><suffix>, suffix in {"", Ki Mi Gi Ti Pi Ei, n u m k M G T P E, e<int>, E<int>}
// Errors ("quantities must match the regular expression ...") for anything else.
result<quantity> parse_quantity(std::string_view text);

}  // namespace kas

// Fuzz target: resource.Quantity parsing (messages/quantity.hpp), with every accessor the cache
// calls on a parsed value (value, milli_value: rounding, exponent scaling, int64 saturation).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "messages/quantity.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = kas::parse_quantity(text);
  if (!q) return 0;
  volatile int64_t sink = q->value();
  sink = q->milli_value();
  sink = q->negative() + q->is_zero();
  (void)sink;
  return 0;
}

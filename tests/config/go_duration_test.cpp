// Go's time.ParseDuration, as the leaderElection durations are read.
#include "config/go_duration.hpp"

#include <gtest/gtest.h>

namespace kas {
namespace {

using std::chrono::nanoseconds;

TEST(GoDuration, ParsesWhatGoParses) {
  struct {
    const char* in;
    int64_t ns;
  } cases[] = {
    {"0", 0},
    {"15s", 15'000'000'000},
    {"1.5s", 1'500'000'000},
    {"500ms", 500'000'000},
    {"2h45m", (2 * 3600 + 45 * 60) * 1'000'000'000LL},
    {"1m30.5s", 90'500'000'000},
    {"-2s", -2'000'000'000},
    {"+3us", 3'000},
    {"3\xC2\xB5s", 3'000},
    {".5s", 500'000'000},
    {"1.s", 1'000'000'000},
    {"100ns", 100},
    {"0.000000001s", 1},
  };
  for (auto& c : cases) {
    auto r = parse_go_duration(c.in);
    ASSERT_TRUE(r) << c.in << ": " << r.err().message;
    EXPECT_EQ(r->count(), c.ns) << c.in;
  }
}

TEST(GoDuration, ErrorsAreGosText) {
  struct {
    const char* in;
    const char* err;
  } cases[] = {
    {"", "time: invalid duration \"\""},
    {"15", "time: missing unit in duration \"15\""},
    {"abc", "time: invalid duration \"abc\""},
    {"3x", "time: unknown unit \"x\" in duration \"3x\""},
    {"1sm", "time: unknown unit \"sm\" in duration \"1sm\""},
    {".s", "time: invalid duration \".s\""},
    {"-", "time: invalid duration \"-\""},
    {"9999999999h", "time: invalid duration \"9999999999h\""},
    {"99999999999999999999s", "time: invalid duration \"99999999999999999999s\""},
  };
  for (auto& c : cases) {
    auto r = parse_go_duration(c.in);
    ASSERT_FALSE(r) << c.in;
    EXPECT_EQ(r.err().message, c.err) << c.in;
  }
}

}  // namespace
}  // namespace kas

// The GLIBC_TUNABLES edit behind main()'s re-exec (app/malloc_tuning.hpp). The re-exec itself is
// checked end to end by bench_cli.run-malloc-tuned.
#include "actors/app/malloc_tuning.hpp"

#include <cstdlib>

#include <gtest/gtest.h>

namespace kas {
namespace {

TEST(MallocTuning, AddsTheTcacheCountWhenUnset) {
  EXPECT_EQ(tunables_with_tcache(nullptr), "glibc.malloc.tcache_count=128");
  EXPECT_EQ(tunables_with_tcache(""), "glibc.malloc.tcache_count=128");
}

TEST(MallocTuning, KeepsTheUsersOtherTunables) {
  EXPECT_EQ(tunables_with_tcache("glibc.malloc.arena_max=2"), "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=128");
}

TEST(MallocTuning, TheUsersTcacheCountWinsAndNoReexecFollows) {
  EXPECT_EQ(tunables_with_tcache("glibc.malloc.tcache_count=7"), "");
  EXPECT_EQ(tunables_with_tcache("glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0"), "");
}

TEST(MallocTuning, ReportsTheLastTcacheSetting) {
  const char* saved = std::getenv("GLIBC_TUNABLES");
  std::string keep = saved ? saved : "";
  unsetenv("GLIBC_TUNABLES");
  EXPECT_EQ(malloc_tcache_setting(), "default");
  setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2", 1);
  EXPECT_EQ(malloc_tcache_setting(), "default");
  setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=64:glibc.malloc.arena_max=2", 1);
  EXPECT_EQ(malloc_tcache_setting(), "64");
  setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=64:glibc.malloc.tcache_count=128", 1);
  EXPECT_EQ(malloc_tcache_setting(), "128");
  if (saved) setenv("GLIBC_TUNABLES", keep.c_str(), 1);
  else unsetenv("GLIBC_TUNABLES");
}

}  // namespace
}  // namespace kas

#pragma once
// glibc malloc's per-thread cache, sized for an actor system.
//
// Actors run on any of CAF's worker threads, and the scheduler's immutable messages (snapshots,
// their chunks, pods, change batches) are built on one thread and released on another. glibc's
// thread cache (tcache) takes such a free without a lock, but it holds only 7 blocks per size by
// default; beyond that the free goes to the block's arena, under that arena's lock, and every
// allocation of a 4 KiB snapshot chunk first consolidates the arena's fastbins. With 128 blocks per
// size the cross-thread frees stay lock-free: SchedulingBasic went from about 26,600 to 33,000
// pods/s on 2 cores, peak RSS +0.5 MiB (bench/RESULTS.md, round four).
//
// glibc 2.36 reads tcache_count only from the GLIBC_TUNABLES environment variable, at process
// start, and has no mallopt for it. So main() re-executes the binary once with the tunable added;
// the pid, arguments and the rest of the environment are unchanged. A tcache_count already in
// GLIBC_TUNABLES means no re-exec (how to run under valgrind, which does not follow an exec).
#include <string>

namespace kas {

inline constexpr const char* tcache_tunable = "glibc.malloc.tcache_count";
inline constexpr unsigned tcache_count = 128;

// GLIBC_TUNABLES (`current`, may be null) with the tcache count appended; empty when `current`
// already sets it (the user's own value wins, and after the re-exec ours is there).
std::string tunables_with_tcache(const char* current);

// Re-executes /proc/self/exe with the tunable when GLIBC_TUNABLES lacks it. Returns only when no
// re-exec was needed (empty string) or it failed (the reason; the process then runs untuned).
std::string reexec_with_malloc_tuning(char** argv);

// The tcache count this process runs with, read back from GLIBC_TUNABLES ("default" when unset),
// for bench's runtime line.
std::string malloc_tcache_setting();

}  // namespace kas

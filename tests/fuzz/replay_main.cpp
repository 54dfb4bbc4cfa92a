// Replays fuzz inputs through a fuzz target without libFuzzer: the regression corpus
// (tests/fuzz/regressions/<target>/) runs as an ordinary ctest in any build, gcc Release included.
//
//   fuzz_replay_<target> PATH...    every regular file under each PATH (recursively, sorted), or PATH itself
//
// Each input runs in its own child process, so one crash or hang does not hide the next: the replay
// names every input with its outcome (ok, CRASH with the signal, TIMEOUT, exit code) and exits 1 if
// any failed. In the child an input that runs longer than KAS_FUZZ_INPUT_TIMEOUT seconds (default
// 10; 0 = no limit) is killed, and the address space is capped at KAS_FUZZ_MEMORY_MB (default 2048;
// 0 = no cap; not applied under AddressSanitizer, which reserves terabytes of address space) so
// runaway memory growth ends in std::bad_alloc instead of the machine's OOM killer.
// KAS_FUZZ_NO_FORK=1 runs the inputs in this process instead (for a debugger); the first failure ends it.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));
// Present when any part of the program was built with AddressSanitizer (this file may not be).
extern "C" void __asan_init() __attribute__((weak));

#if defined(__SANITIZE_ADDRESS__)
#define KAS_REPLAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KAS_REPLAY_ASAN 1
#endif
#endif

namespace {

long env_long(const char* name, long dflt) {
  const char* v = std::getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return end && *end == '\0' && n >= 0 ? n : dflt;
}

void run_input(const std::vector<uint8_t>& bytes) {
  // A copy in its own allocation: reads past the end are caught under ASan as under libFuzzer.
  std::vector<uint8_t> data(bytes);
  static uint8_t empty = 0;
  LLVMFuzzerTestOneInput(data.empty() ? &empty : data.data(), data.size());
}

// Runs one input in a child; returns "" when it returned normally, else what happened.
std::string run_in_child(const std::vector<uint8_t>& bytes, long timeout, long memory_mb) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return "fork failed: " + std::string(std::strerror(errno));
  if (pid == 0) {
#ifndef KAS_REPLAY_ASAN
    if (memory_mb > 0 && !__asan_init) {
      rlimit lim{};
      lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(memory_mb) << 20;
      setrlimit(RLIMIT_AS, &lim);
    }
#else
    (void)memory_mb;
#endif
    std::signal(SIGALRM, SIG_DFL);
    alarm(static_cast<unsigned>(timeout));  // SIGALRM's default action ends the child
    run_input(bytes);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(0);  // not exit(): the parent's atexit handlers (the targets' scratch directory) stay its own
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return "waitpid failed: " + std::string(std::strerror(errno));
  }
  if (WIFEXITED(status))
    return WEXITSTATUS(status) == 0 ? "" : "EXIT " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGALRM) return "TIMEOUT (hang: still running after " + std::to_string(timeout) + " s)";
    return std::string("CRASH (signal ") + std::to_string(sig) + ", " + strsignal(sig) + ")";
  }
  return "unknown wait status " + std::to_string(status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    fs::path p = argv[i];
    if (fs::is_regular_file(p, ec)) {
      inputs.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec))
        if (it->is_regular_file(ec) && it->path().filename().string()[0] != '.') inputs.push_back(it->path());
      if (ec) {
        std::fprintf(stderr, "fuzz replay: cannot list %s: %s\n", argv[i], ec.message().c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "fuzz replay: no such file or directory: %s\n", argv[i]);
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());

  const long timeout = env_long("KAS_FUZZ_INPUT_TIMEOUT", 10);
  const long memory_mb = env_long("KAS_FUZZ_MEMORY_MB", 2048);
  const bool no_fork = env_long("KAS_FUZZ_NO_FORK", 0) != 0;

  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> failed;
  for (auto& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
      std::fprintf(stderr, "fuzz replay: cannot read %s\n", p.c_str());
      return 2;
    }
    std::printf("replay %s (%zu bytes) ... ", p.c_str(), bytes.size());
    std::fflush(stdout);
    auto start = std::chrono::steady_clock::now();
    std::string outcome;
    if (no_fork)
      run_input(bytes);
    else
      outcome = run_in_child(bytes, timeout, memory_mb);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (outcome.empty()) {
      std::printf("ok, %.1f ms\n", ms);
    } else {
      std::printf("%s after %.1f ms\n", outcome.c_str(), ms);
      failed.push_back(p.string() + ": " + outcome);
    }
    std::fflush(stdout);
  }
  if (failed.empty()) {
    std::printf("fuzz replay: %zu input(s) ok\n", inputs.size());
    return 0;
  }
  std::printf("fuzz replay: %zu of %zu input(s) FAILED:\n", failed.size(), inputs.size());
  for (auto& f : failed) std::printf("  %s\n", f.c_str());
  return 1;
}

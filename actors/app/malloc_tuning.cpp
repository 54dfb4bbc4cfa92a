#include "actors/app/malloc_tuning.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <unistd.h>

namespace kas {

std::string tunables_with_tcache(const char* current) {
  std::string v = current ? current : "";
  if (v.find(tcache_tunable) != std::string::npos) return "";
  std::string ours = std::string(tcache_tunable) + "=" + std::to_string(tcache_count);
  return v.empty() ? ours : v + ":" + ours;
}

std::string reexec_with_malloc_tuning(char** argv) {
  const char* before = std::getenv("GLIBC_TUNABLES");
  const std::string original = before ? before : "";
  std::string tunables = tunables_with_tcache(before);
  if (tunables.empty()) return "";
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0)
    return std::string("setenv GLIBC_TUNABLES: ") + std::strerror(errno);
  execv("/proc/self/exe", argv);
  std::string why = std::string("execv /proc/self/exe: ") + std::strerror(errno);
  // Untuned from here on: put the variable back as it was, so it does not claim otherwise.
  if (before) setenv("GLIBC_TUNABLES", original.c_str(), 1);
  else unsetenv("GLIBC_TUNABLES");
  return why;
}

std::string malloc_tcache_setting() {
  const char* env = std::getenv("GLIBC_TUNABLES");
  if (!env) return "default";
  std::string_view v(env);
  // The last setting wins in glibc's parser; scan them all.
  std::string found = "default";
  size_t at = 0;
  while ((at = v.find(tcache_tunable, at)) != std::string_view::npos) {
    at += std::strlen(tcache_tunable);
    if (at < v.size() && v[at] == '=') {
      size_t end = v.find(':', at);
      found = std::string(v.substr(at + 1, end == std::string_view::npos ? std::string_view::npos : end - at - 1));
    }
  }
  return found;
}

}  // namespace kas

// Fuzz target: kubeconfig files (client/kubeconfig.hpp parse_kubeconfig), what --kubeconfig and
// clientConnection.kubeconfig hand the real-cluster mode. parse_kubeconfig is the whole of
// load_kubeconfig but the file read, so the input goes in as text. Relative paths inside resolve
// against a directory that does not exist: inputs cannot reach files through them (absolute paths
// still read whatever they name, regular files only and at most 4 MiB). A kubeconfig that loads is
// described too, as the binary logs it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "client/kubeconfig.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base_dir = (kas_fuzz::scratch_dir() / "no-such-dir").string();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto c = kas::parse_kubeconfig(text, "fuzz.kubeconfig", base_dir);
  if (c) (void)c->describe();
  return 0;
}

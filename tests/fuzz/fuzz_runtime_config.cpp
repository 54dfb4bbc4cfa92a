// Fuzz target: ActorRuntimeConfiguration (config/runtime_config.hpp decode_runtime_config). Its only
// caller is load_scheduler_config, which reads a file, so each input becomes one file and goes
// through config/'s own entry point with the default plugin catalog (which checks no plugin args):
// the document loader, the kind dispatch and decode_runtime_config for every
// ActorRuntimeConfiguration document. Seeded and steered (dicts/config.dict) towards runtime
// documents; fuzz_kube_scheduler_config covers the registry-backed path the binary takes.
#include <cstddef>
#include <cstdint>

#include "config/runtime_config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = kas_fuzz::write_input("runtime.yaml", data, size);
  auto cfg = kas::load_scheduler_config(path);
  (void)cfg;
  return 0;
}

// Fuzz target: `--config FILE` as the binary reads it (run_setup.cpp): fw::load_scheduler_config
// with the in-tree plugin registry, i.e. YAML::LoadAll, KubeSchedulerConfiguration decoding and
// validation (config/kube_scheduler_config.hpp), profile resolution, every pluginConfig's args
// decoded by its plugin, and ActorRuntimeConfiguration documents. The loader only reads files, so
// each input becomes one file.
#include <cstddef>
#include <cstdint>

#include "plugins/framework/registry.hpp"
#include "plugins/framework/runtime/profile_resolver.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kas::fw::registry registry = kas::fw::in_tree_registry();
  std::string path = kas_fuzz::write_input("config.yaml", data, size);
  auto cfg = kas::fw::load_scheduler_config(path, registry);
  (void)cfg;
  return 0;
}

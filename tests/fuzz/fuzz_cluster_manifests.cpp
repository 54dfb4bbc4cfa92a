// Fuzz target: `simulate --cluster FILE`, the cluster manifest loader (config/cluster_manifests.hpp).
// load_manifests only reads files, so each input becomes one file; whatever loads is then compiled
// (compile_cluster: quantities, priorities, selectors, PDBs, and the storage kinds through
// cache/volume_objects.hpp's compile_pv ... compile_csi_storage_capacity), as simulate does next.
#include <cstddef>
#include <cstdint>

#include "config/cluster_manifests.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = kas_fuzz::write_input("cluster.yaml", data, size);
  auto manifests = kas::load_manifests({path});
  if (!manifests) return 0;  // rejected with an error: not a finding
  auto input = kas::compile_cluster(*manifests);
  (void)input;
  return 0;
}

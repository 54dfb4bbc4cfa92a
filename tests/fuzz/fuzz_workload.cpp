// Fuzz target: bench workload files (config/workload.hpp load_workload). The loader reads a file
// and the templates it names relative to that file, so each input becomes scratch/workload.yaml
// beside a `templates` link to the repository's bench/workloads/templates: the shipped workloads
// (the seed corpus) load their real templates. Templates themselves are manifests, fuzzed by
// fuzz_cluster_manifests.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "config/workload.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#ifndef KAS_WORKLOAD_TEMPLATES
#error "KAS_WORKLOAD_TEMPLATES (bench/workloads/templates) must be defined"
#endif

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const auto& dir = kas_fuzz::scratch_dir();
  std::error_code ec;
  std::filesystem::create_directory_symlink(KAS_WORKLOAD_TEMPLATES, dir / "templates", ec);
  if (ec) kas_fuzz::die("cannot link " + (dir / "templates").string() + ": " + ec.message());
  // generateName-only templates are loaded from a named copy in temp_directory_path(): keep those
  // in the scratch directory too.
  setenv("TMPDIR", dir.c_str(), 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = kas_fuzz::write_input("workload.yaml", data, size);
  auto w = kas::load_workload(path);
  (void)w;
  return 0;
}

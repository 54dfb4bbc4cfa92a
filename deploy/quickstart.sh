#!/usr/bin/env bash
# kube-actor-scheduler quickstart: install what is missing (Debian packages only), configure,
# build into build/, then either run the main job on the embedded default or, with `test`, run
# every test.
#   deploy/quickstart.sh        build and run the benchmark (SchedulingBasic, 5000 nodes)
#   deploy/quickstart.sh test   build and run the whole test suite (ctest), then the sanitizer jobs:
#                               the whole suite under ASan+UBSan (tests/sanitizers/run.sh) and the
#                               actor, integration and client tests under TSan against a CAF built
#                               instrumented from Debian's source (tests/sanitizers/tsan.sh).
#                               KAS_SANITIZERS=0 skips those two for a quick local loop; CI runs them.
set -euo pipefail

mode="${1:-run}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

packages=(build-essential cmake libcaf-dev libprotobuf-dev protobuf-compiler libyaml-cpp-dev libspdlog-dev
          prometheus-cpp-dev libgtest-dev googletest libbenchmark-dev libcurl4-openssl-dev libssl-dev
          libsimdjson-dev python3 prometheus dpkg-dev libh2o-evloop-dev python3-yaml openssl)
# prometheus: the server and promtool the observability tests run; dpkg-dev: dpkg-source, with which
# tests/sanitizers/tsan.sh unpacks Debian's CAF source; python3-yaml: tests/deploy reads deploy/'s
# manifests; openssl: the TLS cases make certificates with its command. deploy/Dockerfile's build
# stage installs this same list (ctest deploy.runtime_packages).
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "quickstart: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"

case "$mode" in
  test)
    ctest --test-dir build --output-on-failure -j "$jobs"
    if [ "${KAS_SANITIZERS:-1}" != 0 ]; then
      echo "quickstart: the suite under AddressSanitizer and UndefinedBehaviorSanitizer" >&2
      tests/sanitizers/run.sh
      echo "quickstart: the actor, integration and client tests under ThreadSanitizer" >&2
      tests/sanitizers/tsan.sh
    fi
    ;;
  run)
    ./build/kube-actor-scheduler bench
    ;;
  *)
    echo "usage: deploy/quickstart.sh [test]" >&2
    exit 2
    ;;
esac

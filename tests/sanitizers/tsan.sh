#!/usr/bin/env bash
# ThreadSanitizer job: the actor tests (label "actors"), the end-to-end CLI tests (label
# "integration") and the API client's (label "client": the HTTP transport runs its own I/O thread), built with -fsanitize=thread against a CAF that is instrumented too.
#
# Debian's libcaf_core is not instrumented, so TSan would see none of the ordering CAF's mailboxes
# and scheduler provide, and report every message handed from one worker thread to another as a
# race. This script therefore builds CAF itself from Debian's source package, the very version the
# installed libcaf-dev was built from:
#   1. `apt-get source --download-only actor-framework=<version of libcaf-dev>`, with a private apt
#      state under build-tsan/apt/ (a deb-src entry for the system's suite), so nothing of the
#      system's apt configuration changes and no root is needed. apt checks the files against the
#      signed Sources index.
#   2. `dpkg-source -x` when the Debian part (debian.tar.xz) came too; when a mirror lacks it (seen
#      here) the verified upstream tarball is unpacked as is, and `-include limits` stands in for
#      the one patch the library needs with GCC 12 (io/network/receive_buffer.hpp uses
#      std::numeric_limits without including <limits>).
#   3. CAF core and io built with -fsanitize=thread into build-tsan/caf/ (once; reused afterwards).
#   4. Our tests built against it with -DKAS_SANITIZE=thread and run with tsan.supp.
#   tests/sanitizers/tsan.sh [CTEST_ARGS...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"
build="${KAS_TSAN_BUILD:-$root/build-tsan}"
caf="$build/caf"
mkdir -p "$build"

if [ ! -f "$caf/install/include/caf/all.hpp" ]; then
  version="$(dpkg-query -W -f='${source:Version}' libcaf-dev)"
  suite="$(. /etc/os-release && echo "${VERSION_CODENAME:?}")"
  apt="$build/apt"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$caf/src"
  echo "deb-src http://deb.debian.org/debian $suite main" >"$apt/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/none"
            -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Debug::NoLocking=1"
            -o "APT::Sandbox::User=$(id -un)")
  echo "tsan: fetching Debian's source of actor-framework $version" >&2
  apt-get -qq "${apt_opts[@]}" update
  # A mirror without the Debian part makes apt-get fail after it has fetched the rest.
  (cd "$caf/src" && apt-get -qq "${apt_opts[@]}" source --download-only "actor-framework=$version") ||
    echo "tsan: apt-get source did not fetch every part; using what it verified" >&2
  upstream="${version%-*}"
  orig="$caf/src/actor-framework_${upstream}.orig.tar.gz"
  dsc="$caf/src/actor-framework_${version}.dsc"
  [ -f "$orig" ] && [ -f "$dsc" ] || { echo "tsan: no actor-framework source in $caf/src" >&2; exit 1; }
  # apt verified what it downloaded; check the tarball against the .dsc once more, since it is
  # about to be built without dpkg-source.
  want="$(awk '/^Checksums-Sha256:/{s=1;next} s&&/^ /&&$3 ~ /orig\.tar/{print $1;exit}' "$dsc")"
  got="$(sha256sum "$orig" | cut -d' ' -f1)"
  [ -n "$want" ] && [ "$want" = "$got" ] || { echo "tsan: $orig does not match $dsc" >&2; exit 1; }
  rm -rf "$caf/src/tree"
  if ls "$caf/src"/actor-framework_"$version".debian.tar.* >/dev/null 2>&1 && command -v dpkg-source >/dev/null; then
    dpkg-source -x "$dsc" "$caf/src/tree" >/dev/null
  else
    mkdir -p "$caf/src/tree"
    tar xzf "$orig" -C "$caf/src/tree" --strip-components=1
  fi
  cmake -S "$caf/src/tree" -B "$caf/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="-fsanitize=thread -O1 -g1 -include limits" -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
    -DCAF_NO_EXAMPLES=yes -DCAF_NO_UNIT_TESTS=yes -DCAF_NO_TOOLS=yes -DCAF_NO_PYTHON=yes \
    -DCAF_NO_OPENCL=yes -DCAF_NO_OPENSSL=yes -DCMAKE_INSTALL_PREFIX="$caf/install" >/dev/null
  cmake --build "$caf/build" -j "$jobs"
  cmake --install "$caf/build" >/dev/null
fi

# Our side: everything the actor and integration tests need, against the instrumented CAF
# (CMAKE_PREFIX_PATH puts it before /usr; the build RPATH points the binaries at it).
cmake -S . -B "$build/kas" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DKAS_SANITIZE=thread -DCMAKE_PREFIX_PATH="$caf/install" >/dev/null
grep -q "CAF_CORE_LIBRARY:FILEPATH=$caf/install" "$build/kas/CMakeCache.txt" ||
  { echo "tsan: the build did not pick the instrumented CAF in $caf/install" >&2; exit 1; }
targets=(kube-actor-scheduler queue_state_test pipeline_test observability_wiring_test cluster_store_test
         queue_actor_test cache_actor_test driver_actor_test permit_actor_test cluster_actor_test
         supervision_test client_test kube-actor-test-apiserver)
cmake --build "$build/kas" -j "$jobs" --target "${targets[@]}"
supp="$root/tests/sanitizers"
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp" \
KAS_CLUSTER_TEST_DIVISOR=10 \
  ctest --test-dir "$build/kas" --output-on-failure -j "$jobs" -L 'actors|integration|client' "$@"

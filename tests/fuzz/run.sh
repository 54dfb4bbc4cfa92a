#!/usr/bin/env bash
# Runs one fuzz target (or all of them in turn) for a number of minutes.
#
#   tests/fuzz/run.sh TARGET MINUTES [JOBS]
#   tests/fuzz/run.sh all MINUTES [JOBS]
#   tests/fuzz/run.sh list
#
# Configures build-fuzz/ (clang++, -DKAS_FUZZ=ON, ASan+UBSan, -O1 with asserts) the first time,
# builds fuzz_TARGET if needed, and runs it with -max_total_time, -timeout=5 (a slower input is a
# hang), -rss_limit_mb=2048, seeded from the repository's real inputs (fixtures, bench examples and
# workloads, example configs; linked, not copied) and regressions/TARGET/. libFuzzer runs in fork
# mode with JOBS processes (default 1), so a crash or hang is recorded and fuzzing goes on.
#
# Output in build-fuzz/fuzz-out/TARGET/: corpus/ (grows across runs), findings/ (crash-*, timeout-*,
# oom-*, leak-*: every one belongs in tests/fuzz/regressions/TARGET/ once looked at), fuzz.log.
# Prints execs, coverage (cov/ft: libFuzzer's edge and feature counts at the end) and the findings.
#
# Environment: KAS_FUZZ_BUILD (build directory, default <repo>/build-fuzz), KAS_FUZZ_BUILD_JOBS
# (compile jobs, default nproc), extra libFuzzer flags in KAS_FUZZ_FLAGS.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${KAS_FUZZ_BUILD:-$repo/build-fuzz}
targets=(cluster_manifests protobuf_envelope json_decode yaml_decode quantity kube_scheduler_config
         runtime_config workload kubeconfig watch_stream api_response)

usage() {
  echo "usage: $0 TARGET|all MINUTES [JOBS]   (targets: ${targets[*]})" >&2
  exit 2
}

# The seed inputs of a target, as files of the repository (fixtures of every format and version).
seeds_of() {
  local f=$repo/tests/fixtures api=$repo/tests/fixtures/k8s-api
  case $1 in
    cluster_manifests)
      ls "$repo"/bench/examples/* "$f"/manifests/* "$api"/*/*.yaml "$api"/*/*.json \
         "$repo"/bench/workloads/templates/*.yaml "$repo"/bench/workloads/templates/*/*.yaml "$here"/seeds/storage/* \
         "$here"/seeds/podgroups/* ;;
    protobuf_envelope) ls "$api"/*/*.pb ;;
    json_decode)
      ls "$api"/*/*.json "$repo"/bench/examples/*.json "$f"/manifests/*.json "$here"/seeds/storage/*.json \
         "$here"/seeds/podgroups/*.json ;;
    yaml_decode)
      ls "$api"/*/*.yaml "$repo"/bench/workloads/templates/*.yaml "$repo"/bench/workloads/templates/*/*.yaml \
         "$here"/seeds/storage/*.yaml "$here"/seeds/podgroups/*.yaml ;;
    quantity) ls "$here"/seeds/quantity/* ;;
    kube_scheduler_config | runtime_config) ls "$f"/configs/* "$repo"/bench/configs/* ;;
    workload) ls "$repo"/bench/workloads/*.yaml ;;
    kubeconfig) ls "$here"/seeds/kubeconfig/* ;;
    watch_stream | api_response) ls "$here"/seeds/$1/* ;;
    *) return 1 ;;
  esac 2>/dev/null
}

dict_of() {
  case $1 in
    cluster_manifests | json_decode | yaml_decode | watch_stream | api_response) echo "$here/dicts/k8s.dict" ;;
    quantity) echo "$here/dicts/quantity.dict" ;;
    kube_scheduler_config | runtime_config) echo "$here/dicts/config.dict" ;;
    workload) echo "$here/dicts/workload.dict" ;;
  esac
}

configure_and_build() {
  if [[ ! -f $build/CMakeCache.txt ]]; then
    local gen=() launcher=()
    command -v ninja >/dev/null && gen=(-G Ninja)
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake -S "$repo" -B "$build" "${gen[@]}" "${launcher[@]}" -DKAS_FUZZ=ON \
      -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" >/dev/null
  fi
  cmake --build "$build" -j "${KAS_FUZZ_BUILD_JOBS:-$(nproc)}" --target "$@" >"$build/fuzz-build.log" 2>&1 || {
    tail -40 "$build/fuzz-build.log" >&2
    echo "build failed (log: $build/fuzz-build.log)" >&2
    exit 1
  }
}

run_one() {
  local t=$1 minutes=$2 jobs=$3
  local out=$build/fuzz-out/$t
  mkdir -p "$out/corpus" "$out/findings" "$out/seeds"
  # Seeds: links to the repository's files, renamed after their path (rebuilt every run).
  find "$out/seeds" -mindepth 1 -delete
  local s
  while read -r s; do
    [[ -f $s ]] || continue
    local name=${s#"$repo"/}
    ln -sf "$s" "$out/seeds/${name//\//_}"
  done < <(seeds_of "$t")
  local before
  before=$(ls "$out/findings")
  local args=(-max_total_time=$((minutes * 60)) -timeout=5 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$out/findings/" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1
              -ignore_ooms=1)
  local dict
  dict=$(dict_of "$t")
  [[ -n $dict && -f $dict ]] && args+=(-dict="$dict")
  # shellcheck disable=SC2206
  args+=(${KAS_FUZZ_FLAGS:-})
  echo "== $t: ${minutes} min, $jobs job(s), $(ls "$out/seeds" | wc -l) seeds, $(ls "$out/corpus" | wc -l) corpus"
  # Scratch files (the targets' input files, libFuzzer's fork-mode directories) stay in tmp/, which
  # is emptied here: a child killed by a hang or crash cannot clean up after itself.
  rm -rf "$out/tmp" && mkdir -p "$out/tmp"
  (
    cd "$out"  # fork mode keeps its per-job logs in the working directory
    TMPDIR=$out/tmp ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
      "$build/tests/fuzz/fuzz_$t" "${args[@]}" "$out/corpus" "$out/seeds" "$here/regressions/$t" \
      >"$out/fuzz.log" 2>&1
  ) || true
  # Execs and coverage: the final stats, else the last status line ("#N ... cov: X ft: Y").
  local execs cov ft status otc
  status=$(grep -aE '^#[0-9]+' "$out/fuzz.log" | grep -a 'cov:' | tail -1 || true)
  execs=$(grep -aoE 'stat::number_of_executed_units: [0-9]+' "$out/fuzz.log" | tail -1 | awk '{print $2}' || true)
  [[ -z $execs ]] && execs=$(sed -E 's/^#([0-9]+).*/\1/' <<<"$status")
  cov=$(grep -oE 'cov: [0-9]+' <<<"$status" | awk '{print $2}' || true)
  ft=$(grep -oE 'ft: [0-9]+' <<<"$status" | awk '{print $2}' || true)
  otc=$(grep -oE 'oom/timeout/crash: [0-9/]+' <<<"$status" | awk '{print $2}' || true)
  # Findings of this run; one whose content is already in regressions/ (libFuzzer names artifacts by
  # SHA-1) is a known bug re-found from the seeds, not a new one. Each new one is run once more on
  # its own so its log (sanitizer report, stack) sits beside it as <finding>.log.
  local f known=() fresh=()
  while read -r f; do
    [[ -z $f || $f == *.log ]] && continue
    local sha=${f#*-} match=""
    for r in "$here/regressions/$t"/*; do
      [[ -f $r ]] && [[ $(sha1sum <"$r" | cut -c1-40) == "$sha" ]] && match=${r#"$here"/} && break
    done
    if [[ -n $match ]]; then known+=("$f (= $match)"); else fresh+=("$f"); fi
  done < <(comm -13 <(echo "$before") <(ls "$out/findings"))
  printf '%s: execs=%s cov=%s ft=%s corpus=%s oom/timeout/crash=%s new_findings=%s known_refound=%s\n' "$t" \
    "${execs:-?}" "${cov:-?}" "${ft:-?}" "$(ls "$out/corpus" | wc -l)" "${otc:-?}" "${#fresh[@]}" "${#known[@]}"
  for f in "${known[@]}"; do echo "  known: $f"; done
  for f in "${fresh[@]}"; do
    ( cd "$out" && TMPDIR=$out/tmp timeout 60 "$build/tests/fuzz/fuzz_$t" -timeout=5 -rss_limit_mb=2048 \
        "$out/findings/$f" >"$out/findings/$f.log" 2>&1 ) || true
    echo "  NEW: $out/findings/$f"
    grep -aE '^SUMMARY: |==ERROR|ALARM|out-of-memory' "$out/findings/$f.log" | head -3 | sed 's/^/      /'
    grep -aE '^ +#[0-9]+ ' "$out/findings/$f.log" | grep -avE 'libFuzzer|fuzzer::|__sanitizer|__asan|__ubsan|libc\.so|_start' |
      sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in //; s/\(anonymous namespace\)/(anon)/g; s/std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >/std::string/g' |
      cut -c1-200 | uniq -c | head -6 | sed -E 's/^ +/      /'
  done
  summary+=("$(printf '%-22s execs=%-9s cov=%-6s ft=%-7s oom/timeout/crash=%-8s findings=%s' "$t" "${execs:-?}" \
    "${cov:-?}" "${ft:-?}" "${otc:-?}" "${#fresh[@]} new, ${#known[@]} known")")
}

[[ ${1:-} == list ]] && { printf '%s\n' "${targets[@]}"; exit 0; }
[[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage
jobs=${3:-1}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || usage
if [[ $1 == all ]]; then
  run=("${targets[@]}")
else
  printf '%s\n' "${targets[@]}" | grep -qx -- "$1" || usage
  run=("$1")
fi
configure_and_build "${run[@]/#/fuzz_}"
summary=()
for t in "${run[@]}"; do run_one "$t" "$2" "$jobs"; done
if ((${#run[@]} > 1)); then
  echo "== summary"
  printf '%s\n' "${summary[@]}"
fi

#!/usr/bin/env bash
# What an actor death looks like from outside the binary, one case per invocation:
#   supervision_cli_test.sh BINARY REPO_ROOT CASE
#   supervision_cli_test.sh --list     # the case names, one a line (CMakeLists.txt reads them)
# The death is injected with the test hook KAS_TEST_KILL_ACTOR=<actor> (README, "Metrics and health").
# simulate-* cases: exit code 3, nothing on stdout, "error: actor <name> died: <reason>" on stderr and
# the error log line naming the actor. bench-livez: while bench lingers after the death, /livez and
# /healthz answer 500 naming the failed check, then bench exits 3. No sleeps: the log is followed.
set -u

list_cases() {
  cat <<'CASES'
simulate-cycle_driver-0
simulate-scheduling_queue
simulate-snapshot_cache
simulate-binder-0
simulate-embedded_cluster
bench-livez
CASES
}

source "$(dirname "$0")/cli_checks.sh"  # cli_case_args, fail, show, bad
cli_case_args "$@"
tmp=$(mktemp -d)
bench_pid=
trap '[ -n "$bench_pid" ] && kill "$bench_pid" 2>/dev/null; rm -rf "$tmp"' EXIT


case "$name" in
  simulate-*)
    actor=${name#simulate-}
    KAS_TEST_KILL_ACTOR=$actor timeout 60 "$bin" simulate --cluster "$root/bench/examples/basic.yaml" -o json \
      >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 3 ] || { show; fail "exit code $rc, want 3"; }
    [ ! -s "$tmp/out" ] || { show; fail "stdout must be empty after an actor death"; }
    grep -qxF "error: actor $actor died: exit_reason(kill)" "$tmp/err" || { show; fail "no 'error: actor $actor died' line"; }
    grep -qF "Actor died actor=\"$actor\" reason=\"exit_reason(kill)\"" "$tmp/err" || { show; fail "no error log line"; }
    ;;
  bench-livez)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
    mkfifo "$tmp/log"
    KAS_TEST_KILL_ACTOR=cycle_driver-0 "$bin" bench --workload "$root/bench/workloads/ci-small.yaml" \
      --metrics-bind-address "127.0.0.1:$port" --linger 10 --quiet -o json -v 4 --logging-format json \
      >"$tmp/out" 2>"$tmp/log" &
    bench_pid=$!
    exec 3<"$tmp/log"
    : >"$tmp/err"
    deadline=$((SECONDS + 60))
    seen=
    while [ -z "$seen" ]; do
      left=$((deadline - SECONDS))
      [ "$left" -gt 0 ] && IFS= read -r -t "$left" line <&3 || { show; fail "bench never started lingering"; }
      echo "$line" >>"$tmp/err"
      [[ $line == *'"msg":"Run finished; serving /metrics'* ]] && seen=1
    done
    for path in livez healthz; do
      code=$(curl -s -o "$tmp/$path" -w '%{http_code}' "127.0.0.1:$port/$path")
      [ "$code" = 500 ] || { cat "$tmp/$path" >&2; fail "/$path answered $code, want 500"; }
      grep -qxF '[-]actor/cycle_driver-0 failed: exit_reason(kill)' "$tmp/$path" ||
        { cat "$tmp/$path" >&2; fail "/$path does not name the failed check"; }
      grep -qxF "$path check failed" "$tmp/$path" || { cat "$tmp/$path" >&2; fail "/$path lacks '$path check failed'"; }
    done
    cat <&3 >>"$tmp/err"
    wait "$bench_pid"
    rc=$?
    bench_pid=
    [ "$rc" -eq 3 ] || { show; fail "bench exit code $rc, want 3"; }
    grep -qF 'error: actor cycle_driver-0 died: exit_reason(kill)' "$tmp/err" || { show; fail "no 'error: actor ... died' line"; }
    grep -qF '"msg":"Actor died","actor":"cycle_driver-0"' "$tmp/err" || { show; fail "no JSON error log line"; }
    ;;
  *) fail "unknown case" ;;
esac
echo "ok [$name]"

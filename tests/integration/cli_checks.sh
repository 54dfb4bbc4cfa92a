# Shared by the CLI integration tests (simulate_cli_test.sh, bench_cli_test.sh,
# supervision_cli_test.sh). Source it after defining list_cases; bad() needs run (sets rc, leaves
# $tmp/out and $tmp/err) by the time it is called.

# cli_case_args "$@": every script's arguments. --list prints the cases; otherwise BINARY REPO_ROOT
# CASE set bin, root and name.
cli_case_args() {
  if [ "${1:-}" = "--list" ]; then list_cases; exit 0; fi
  if [ $# -ne 3 ]; then echo "usage: $0 BINARY REPO_ROOT CASE | --list" >&2; exit 64; fi
  bin=$1
  root=$2
  name=$3
}

fail() { echo "FAIL [$name]: $*" >&2; exit 1; }
show() { echo "--- stdout:"; cat "$tmp/out"; echo "--- stderr:"; cat "$tmp/err"; } >&2

# bad "SUBSTRING..." -- ARGS...: the run must fail cleanly: exit 2, empty stdout, and exactly one
# stderr line naming every SUBSTRING.
bad() {
  local want=()
  while [ "$1" != "--" ]; do want+=("$1"); shift; done
  shift
  run "$@"
  [ "$rc" -eq 2 ] || { show; fail "exit code $rc, want 2"; }
  [ ! -s "$tmp/out" ] || { show; fail "stdout must be empty on bad input"; }
  local lines
  lines=$(grep -c . "$tmp/err")
  [ "$lines" -eq 1 ] || { show; fail "stderr has $lines lines, want exactly one"; }
  local w
  for w in "${want[@]}"; do
    grep -qF -- "$w" "$tmp/err" || { show; fail "stderr does not name: $w"; }
  done
}

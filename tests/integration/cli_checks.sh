# Shared by the CLI integration tests (simulate_cli_test.sh, bench_cli_test.sh); source it after
# defining run (sets rc, leaves $tmp/out and $tmp/err), show and fail.

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

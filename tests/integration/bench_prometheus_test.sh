#!/usr/bin/env bash
# A real Prometheus server (Debian's package) scrapes a running `bench` and its HTTP API is queried
# for kube-scheduler series and actor mailbox series with non-zero values; promtool checks the
# exposition. Usage: bench_prometheus_test.sh BINARY REPO_ROOT
#
# Nothing sleeps: bench runs at -v 4 with JSON logs on a FIFO, and the test waits (read -t, with a
# deadline) for the lines that say what happened: the run finished, then Prometheus fetched /metrics
# twice more. Prometheus commits a scrape's samples before it starts the next, so after the second
# fetch the final values are queryable, and each series is queried once.
set -uo pipefail
bin="$1"
root="$2"
command -v prometheus >/dev/null || { echo "FAIL: prometheus not installed (Debian package prometheus)"; exit 1; }
command -v promtool >/dev/null || { echo "FAIL: promtool not installed (Debian package prometheus)"; exit 1; }
work="$(mktemp -d /tmp/kas-prom-$$-XXXX)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
mport="$(free_port)"
pport="$(free_port)"
cleanup() {
  [ -n "${bench_pid:-}" ] && { kill "$bench_pid" 2>/dev/null; wait "$bench_pid" 2>/dev/null; }
  [ -n "${prom_pid:-}" ] && { kill "$prom_pid" 2>/dev/null; wait "$prom_pid" 2>/dev/null; }
  exec 3<&- 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cat > "$work/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
- job_name: kube-actor-scheduler
  static_configs: [{targets: ["127.0.0.1:$mport"]}]
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$pport" >"$work/prom.log" 2>&1 &
prom_pid=$!
mkfifo "$work/log"
"$bin" bench --workload "$root/bench/workloads/ci-small.yaml" --metrics-bind-address "127.0.0.1:$mport" \
  --linger 30 --quiet --output json -v 4 --logging-format json >"$work/bench.json" 2>"$work/log" &
bench_pid=$!
exec 3<"$work/log"

# wait_for PATTERN [COUNT]: reads bench's log until COUNT lines matched PATTERN; fails at the deadline.
deadline=$((SECONDS + 60))
wait_for() {
  local pattern=$1 want=${2:-1} seen=0 line left
  while [ "$seen" -lt "$want" ]; do
    left=$((deadline - SECONDS))
    [ "$left" -gt 0 ] && IFS= read -r -t "$left" line <&3 ||
      { echo "FAIL: waited 60 s for $want line(s) matching $pattern"; tail -5 "$work/prom.log"; exit 1; }
    [[ $line == *$pattern* ]] && seen=$((seen + 1))
  done
}
scrape='"msg":"Served HTTP request","path":"/metrics"'
wait_for '"msg":"Run finished; serving /metrics'
wait_for "$scrape" 2

# promtool on the live exposition.
curl -sf "127.0.0.1:$mport/metrics" -o "$work/metrics.txt" || { echo "FAIL: GET /metrics"; exit 1; }
promtool check metrics <"$work/metrics.txt" || { echo "FAIL: promtool check metrics"; exit 1; }
curl -sf "127.0.0.1:$mport/readyz" >/dev/null || { echo "FAIL: /readyz"; exit 1; }
query() {
  curl -sf "127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(max([float(x["value"][1]) for x in r] or [0]))'
}
need=('scheduler_schedule_attempts_total{result="scheduled"}' 'sum(scheduler_framework_extension_point_duration_seconds_count)'
      'sum(scheduler_plugin_execution_duration_seconds_count)'
      'actor_messages_processed_total{actor="scheduling_queue"}'
      'actor_messages_processed_total{actor="cycle_driver-0"}' 'count(actor_mailbox_depth)')
for q in "${need[@]}"; do
  v="$(query "$q" 2>/dev/null || echo 0)"
  python3 -c "import sys; sys.exit(0 if float('${v:-0}') > 0 else 1)" || { echo "FAIL: $q = '$v', want > 0"; exit 1; }
  echo "ok: $q = $v"
done
# scheduler_pending_pods is 0 at the end of a run: it must exist, not be positive.
[ "$(curl -sf "127.0.0.1:$pport/api/v1/query" --data-urlencode 'query=count(scheduler_pending_pods)' |
     python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))')" = 1 ] ||
  { echo "FAIL: scheduler_pending_pods not scraped"; exit 1; }
echo PASS

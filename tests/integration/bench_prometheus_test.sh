#!/usr/bin/env bash
# A real Prometheus server (Debian's package) scrapes a running `bench` and its HTTP API is queried
# for kube-scheduler series and actor mailbox series with non-zero values; promtool checks the
# exposition. Usage: bench_prometheus_test.sh BINARY REPO_ROOT
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
  [ -n "${bench_pid:-}" ] && kill "$bench_pid" 2>/dev/null
  [ -n "${prom_pid:-}" ] && { kill "$prom_pid" 2>/dev/null; sleep 0.5; kill -9 "$prom_pid" 2>/dev/null; }
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
"$bin" bench --workload "$root/bench/workloads/ci-small.yaml" --metrics-bind-address "127.0.0.1:$mport" \
  --linger 25 --quiet --output json >"$work/bench.json" 2>"$work/bench.err" &
bench_pid=$!
# promtool on the live exposition.
for i in $(seq 1 100); do curl -sf "127.0.0.1:$mport/metrics" -o "$work/metrics.txt" && break; sleep 0.1; done
promtool check metrics <"$work/metrics.txt" || { echo "FAIL: promtool check metrics"; exit 1; }
curl -sf "127.0.0.1:$mport/readyz" >/dev/null || { echo "FAIL: /readyz"; exit 1; }
query() {
  curl -sf "127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(max([float(x["value"][1]) for x in r] or [0]))'
}
deadline=$((SECONDS + 40))
need=('scheduler_schedule_attempts_total{result="scheduled"}' 'sum(scheduler_framework_extension_point_duration_seconds_count)'
      'scheduler_pending_pods' 'actor_messages_processed_total{actor="scheduling_queue"}'
      'actor_messages_processed_total{actor="cycle_driver-0"}' 'count(actor_mailbox_depth)')
for q in "${need[@]}"; do
  while :; do
    v="$(query "$q" 2>/dev/null || echo 0)"
    if python3 -c "import sys; sys.exit(0 if float('$v') > 0 or '$q' == 'scheduler_pending_pods' and '$v' != '' else 1)"; then
      echo "ok: $q = $v"
      break
    fi
    [ $SECONDS -gt $deadline ] && { echo "FAIL: $q has no non-zero sample"; tail -5 "$work/prom.log"; exit 1; }
    sleep 1
  done
done
echo PASS

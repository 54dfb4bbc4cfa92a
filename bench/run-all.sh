#!/usr/bin/env bash
# Runs every scheduler_perf workload in bench/workloads/ through `bench --output json` and prints
# bench/RESULTS.md's table rows (markdown) on stdout; each run's JSON is kept in OUT_DIR.
#
#   bench/run-all.sh [BINARY] [OUT_DIR]
#     BINARY   default build/kube-actor-scheduler
#     OUT_DIR  default bench-results/
#   WORKLOADS="scheduling-basic.yaml topology-spreading.yaml" bench/run-all.sh   # a subset
#   CONFIG=bench/configs/batching.yaml bench/run-all.sh                          # another runtime
#
# A workload that fails (non-zero exit: an invariant violation, a stall, a bad file) is reported in
# its row with the exit code and the last line of its stderr; the script goes on and exits 1 at the
# end. Runs are sequential: the machine's cores are the resource being measured.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/kube-actor-scheduler}
out=${2:-bench-results}
mkdir -p "$out"
[ -x "$bin" ] || { echo "run-all: no executable at $bin (build first, or pass BINARY)" >&2; exit 2; }
workloads=${WORKLOADS:-"scheduling-basic.yaml scheduling-basic-50000.yaml scheduling-daemonset.yaml
  scheduling-secrets.yaml
  scheduling-pod-anti-affinity.yaml scheduling-pod-affinity.yaml scheduling-preferred-pod-affinity.yaml
  scheduling-preferred-pod-anti-affinity.yaml scheduling-required-pod-anti-affinity-with-ns-selector.yaml
  scheduling-node-affinity.yaml mixed-scheduling-base-pod.yaml
  topology-spreading.yaml preferred-topology-spreading.yaml default-topology-spreading.yaml
  scheduling-with-mixed-churn.yaml unschedulable.yaml preemption-basic.yaml preemption-async.yaml
  scheduling-in-tree-pvs.yaml scheduling-migrated-in-tree-pvs.yaml scheduling-csi-pvs.yaml"}
config_args=()
[ -n "${CONFIG:-}" ] && config_args=(--config "$CONFIG")

echo "| workload | avg pods/s | p99 pods/s | scheduler_perf threshold | ratio | raw kernel pods/s | efficiency | peak RSS | scheduled | wall | violations |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
failed=0
for w in $workloads; do
  name=${w%.yaml}
  "$bin" bench --workload "$root/bench/workloads/$w" "${config_args[@]}" --quiet --output json \
    >"$out/$name.json" 2>"$out/$name.err"
  rc=$?
  if [ $rc -ne 0 ] && ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/$name.json" 2>/dev/null; then
    echo "| $name | exit $rc: $(tail -n 1 "$out/$name.err") | | | | | | | | | |"
    failed=1
    continue
  fi
  [ $rc -ne 0 ] && failed=1
  python3 - "$out/$name.json" "$rc" "$w" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["throughput"]
thr = d.get("threshold") or 0
ratio = f'{d["throughput"]["avg"] / thr:.1f}×' if thr else "–"
v = len(d["invariants"]["violations"])
note = "" if sys.argv[2] == "0" else f' (exit {sys.argv[2]})'
print(f'| {d["workload"]} (`{sys.argv[3]}`) | {t["avg"]:,.0f} | {t["p99"]:,.0f} | {thr:g} | {ratio} | {d["rawPodsPerSecond"]:,.0f} | '
      f'{d["efficiency"]:.2f} | {d["peakRssBytes"] / 2**20:.0f} MiB | {d["scheduled"]}/{d["measuredPods"]} | '
      f'{d["wallSeconds"]:.1f} s | {v} of {d["invariants"]["checks"]:,} checks{note} |')
PY
done
exit $failed

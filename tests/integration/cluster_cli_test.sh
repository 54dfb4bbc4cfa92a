#!/usr/bin/env bash
# End-to-end tests of `run` (the real-cluster mode) against the test apiserver fixture:
#   cluster_cli_test.sh --list
#   cluster_cli_test.sh SCHEDULER APISERVER REPO CASE
# Each case starts its own apiserver on a free port with fresh certificates, drives it through the
# API (tests/integration/api_load.py, kubectl) and runs the scheduler against it. Nothing sleeps on
# a clock to decide an outcome: readiness is the apiserver's "listening on" line, progress is
# followed through API watches and the scheduler's log, with a generous deadline that only bounds a
# failure.
set -euo pipefail

cases=(bind-all faults churn orphans tls-token tls-wrong-ca kubectl bench-api bench-api-gangs workloads preemption restart
       event-series volumes leader-failover leader-partition leader-bad-input secure-serving)
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${cases[@]}"
  exit 0
fi
sched="$1" apiserver="$2" repo="$3" case="$4"
shift 4
load="$repo/tests/integration/api_load.py"
# The sanitizer jobs run these cases on a tenth of the objects (KAS_CLUSTER_TEST_DIVISOR=10): the
# instrumented scheduler and fixture are 5-20 times slower, and the cases check behaviour, not size.
div="${KAS_CLUSTER_TEST_DIVISOR:-1}"
n() { echo $(($1 / div > 0 ? $1 / div : 1)); }
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL [$case]: $*" >&2; exit 1; }

# Starts the apiserver with extra flags; sets $server and $certs.
start_apiserver() {
  mkfifo "$work/api.out"
  # KAS_REQUEST_LOG_DIR (ctest sets it): every request the apiserver receives goes to
  # $KAS_REQUEST_LOG_DIR/$case.jsonl, which deploy.rbac_coverage checks against deploy/'s RBAC.
  local request_log=()
  if [ -n "${KAS_REQUEST_LOG_DIR:-}" ]; then
    mkdir -p "$KAS_REQUEST_LOG_DIR"
    request_log=(--request-log "$KAS_REQUEST_LOG_DIR/$case.jsonl")
  fi
  "$apiserver" --listen 127.0.0.1:0 --cert-dir "$work/certs" "${request_log[@]}" "$@" >"$work/api.out" 2>"$work/api.err" &
  pids+=($!)
  exec 3<"$work/api.out"
  local line
  read -r -t 60 line <&3 || fail "the test apiserver did not start: $(cat "$work/api.err")"
  server="${line#listening on }"
  certs="$work/certs"
  # Keep draining its stdout so it never blocks on a full pipe.
  cat <&3 >"$work/api.log" &
  pids+=($!)
}

# Starts `run` against the kubeconfig given; sets $run_pid. Its log is copied to run.err; each cache
# dump (SIGUSR2) is also cut out into dump.N, and "DUMP N" is announced on fd 5 (see next_dump).
start_run() {
  mkfifo "$work/run.fifo" "$work/dumps.fifo"
  local kubeconfig=$1
  shift
  "$sched" run --kubeconfig "$kubeconfig" --metrics-bind-address 0 --secure-port 0 -v 1 "$@" >"$work/run.out" 2>"$work/run.fifo" &
  run_pid=$!
  pids+=("$run_pid")
  python3 "$load" split-log --dir "$work" <"$work/run.fifo" >"$work/dumps.fifo" &
  pids+=($!)
  exec 5<"$work/dumps.fifo"
}

# Sends SIGUSR2 and waits for the dump it causes; prints its file. (fd 5 also carries SYNCED.)
next_dump() {
  kill -USR2 "$run_pid"
  local line
  while read -r -t 60 line <&5; do
    case "$line" in DUMP\ *) echo "$work/dump.${line#DUMP }"; return 0 ;; esac
  done
  fail "no cache dump within 60 s of SIGUSR2"
}

# Waits until the scheduler logs that its informers synced (split-log's SYNCED on fd 5).
await_synced() {
  local line
  while read -r -t 60 line <&5; do
    [ "$line" = SYNCED ] && return 0
  done
  fail "the scheduler's informers did not sync within 60 s: $(tail -5 "$work/run.err")"
}

# Asks for cache dumps until one matches the API (the scheduler may still be applying the last
# watch events; each attempt waits for its own dump), else fails with MESSAGE and the differences.
await_converged() {
  for _ in $(seq 1 50); do
    dump="$(next_dump)"
    python3 "$load" compare --server "$server" --certs "$certs" --dump "$dump" >"$work/compare.out" 2>&1 && return 0
  done
  fail "$1: $(cat "$work/compare.out")"
}

stop_run() {
  kill -TERM "$run_pid"
  local rc=0
  wait "$run_pid" || rc=$?
  [ "$rc" -eq 0 ] || fail "run exited $rc after SIGTERM: $(tail -5 "$work/run.err")"
}

# Leader election cases: replicas of `run` sharing one Lease (lease 4 s, renew deadline 2 s, retry
# 0.5 s), each logging into $work/NAME/run.err. start_replica NAME [ARGS...] sets replica_pid[NAME]
# and opens fd replica_fd[NAME], on which split-log --announce reports "LEADER|STANDBY|LOST|RELEASED
# <log timestamp>" as the replica's log says so; await NAME TAG reads it (a deadline only bounds a
# failure) and sets $at to the wall time it was read and $logged to the log's timestamp.
declare -A replica_pid replica_fd replica_port
le_flags=(--leader-elect-lease-duration 4s --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms)
start_replica() {
  local name=$1
  shift
  mkdir -p "$work/$name"
  mkfifo "$work/$name/log.fifo" "$work/$name/events.fifo"
  replica_port[$name]="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  "$sched" run --kubeconfig "$certs/kubeconfig" --metrics-bind-address "127.0.0.1:${replica_port[$name]}" --secure-port 0 -v 2 \
    "${le_flags[@]}" "$@" >"$work/$name/run.out" 2>"$work/$name/log.fifo" &
  replica_pid[$name]=$!
  pids+=("$!")
  python3 "$load" split-log --dir "$work/$name" --announce <"$work/$name/log.fifo" >"$work/$name/events.fifo" &
  pids+=($!)
  local fd
  exec {fd}<"$work/$name/events.fifo"
  replica_fd[$name]=$fd
}
await() {
  local name=$1 tag=$2 line
  while read -r -t 120 line <&"${replica_fd[$name]}"; do
    if [ "${line%% *}" = "$tag" ]; then
      at="$(date +%s.%N)"
      logged="${line#* }"
      return 0
    fi
  done
  fail "replica $name: no $tag within 120 s: $(tail -5 "$work/$name/run.err")"
}
# The scheduling attempts a replica made (its /metrics).
attempts_of() {
  curl -s "127.0.0.1:${replica_port[$1]}/metrics" |
    awk '/^scheduler_schedule_attempts_total\{/ {n += $2} END {print n + 0}'
}
holder() {
  curl -s --cacert "$certs/ca.crt" --cert "$certs/client.crt" --key "$certs/client.key" \
    "$server/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-actor-scheduler" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"].get("holderIdentity", ""))'
}
seconds_between() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }
within() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)" "$1" "$2"; }

case "$case" in
  bind-all)
    # 1000 nodes and 10000 pods created through the API; run binds every one exactly once.
    start_apiserver
    nodes=$(n 1000) pods=$(n 10000)
    python3 "$load" create --server "$server" --certs "$certs" --nodes "$nodes" --pods "$pods"
    start_run "$certs/kubeconfig"
    secs="$(python3 "$load" wait --server "$server" --certs "$certs" --pods "$pods" --timeout 600)" ||
      fail "not every pod was bound: $(tail -5 "$work/run.err")"
    echo "bound $pods pods on $nodes nodes in ${secs} s"
    stop_run
    python3 "$load" check --server "$server" --certs "$certs" --pods "$pods" --nodes "$nodes" || fail "invariants"
    # kubectl sees the same: every pod listed, none without a node.
    if command -v kubectl >/dev/null; then
      KUBECONFIG="$certs/kubeconfig" kubectl get pods -A --no-headers -o custom-columns=NODE:.spec.nodeName \
        >"$work/kubectl.out" || fail "kubectl get pods: $(tail -3 "$work/kubectl.out")"
      listed="$(wc -l <"$work/kubectl.out")" unbound="$(grep -c '<none>' "$work/kubectl.out" || true)"
      [ "$listed" -eq "$pods" ] && [ "$unbound" -eq 0 ] ||
        fail "kubectl get pods lists $listed pods, $unbound of them without a node (expected $pods, all bound)"
      echo "kubectl get pods: $listed pods, all bound"
    fi
    ;;
  faults)
    # Every fault at once: watches closed every 300 events, 5 % of writes fail with 500, 5 % of
    # bindings get a 409 without binding, 2 ms slower answers, the watch history compacted every
    # 2 s (every open watch gets 410 and the informers relist). No pod lost, none bound twice, no
    # node overcommitted, every pod bound.
    start_apiserver --fault-watch-close-every 300 --fault-write-500-percent 5 --fault-binding-409-percent 5 \
      --fault-slow-ms 2 --fault-compact-every-seconds 2
    nodes=$(n 200) pods=$(n 2000)
    python3 "$load" create --server "$server" --certs "$certs" --nodes "$nodes" --pods "$pods"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    start_run "$certs/kubeconfig" --metrics-bind-address "127.0.0.1:$port"
    python3 "$load" wait --server "$server" --certs "$certs" --pods "$pods" --timeout 600 >/dev/null ||
      fail "not every pod was bound under faults: $(tail -5 "$work/run.err")"
    errors="$(curl -s "127.0.0.1:$port/metrics" | awk '/^scheduler_schedule_attempts_total\{.*result="error"/ {n += $2} END {print n + 0}')"
    stop_run
    python3 "$load" check --server "$server" --certs "$certs" --pods "$pods" --nodes "$nodes" || fail "invariants"
    echo "faults injected: $(python3 "$load" faults --server "$server" --certs "$certs")"
    echo "scheduler recovered: $(grep -c "informer:" "$work/run.err" || true) informer errors (relists and" \
         "re-watches); $errors scheduling attempts ended in an error (failed bindings, requeued and retried)"
    ;;
  churn)
    # Pods created, relabelled and deleted, nodes added, cordoned and removed while run schedules:
    # the scheduler's cache (dumped on SIGUSR2, as kube-scheduler's) ends equal to the API's state.
    start_apiserver
    python3 "$load" create --server "$server" --certs "$certs" --nodes 50 --pods "$(n 500)"
    start_run "$certs/kubeconfig"
    python3 "$load" churn --server "$server" --certs "$certs" --rounds "$(n 15)" || fail "churn"
    python3 "$load" wait --server "$server" --certs "$certs" --pods 0 --timeout 300 >/dev/null ||
      fail "pods left unbound after churn: $(tail -5 "$work/run.err")"
    # churn garbage-collects a removed node's pods once, right after the delete; a binding the
    # scheduler sent before its informer saw the delete can land after that pass (the apiserver binds
    # to any node name), leaving a pod on a node the API no longer has, which kube's pod GC deletes
    # later. Every pod is bound now, so no binding lands any more: one orphan pass is final.
    python3 "$load" gc --server "$server" --certs "$certs" || fail "pod GC"
    # The scheduler may still be applying the last watch events, so ask for dumps until one matches
    # (each attempt waits for its own dump).
    await_converged "the cache did not converge"
    cat "$work/compare.out"
    stop_run
    ;;
  orphans)
    # A pod bound to a node the API no longer has (a binding that landed after the node's delete: the
    # scheduler had not seen it yet), made deterministic: a pod of another scheduler is bound by hand
    # once its node is deleted. The cache keeps the pod off its snapshot (the dump has no node-0);
    # compare names the orphan; once the pod GC deletes it, cache and API agree.
    start_apiserver
    python3 "$load" create --server "$server" --certs "$certs" --nodes 2 --pods 1 --scheduler elsewhere
    start_run "$certs/kubeconfig"
    await_synced
    python3 "$load" orphan --server "$server" --certs "$certs" --node node-0 --pod load/pod-0 || fail "orphan"
    seen=""
    for _ in $(seq 1 50); do
      dump="$(next_dump)"
      python3 "$load" compare --server "$server" --certs "$certs" --dump "$dump" >"$work/compare.out" 2>&1 || true
      if grep -q "node node-0 is not in the API, yet pods are bound to it: \['load/pod-0'\]" "$work/compare.out" &&
         ! grep -q "node-0" "$dump" && grep -q "1 differences" "$work/compare.out"; then
        seen=1
        break
      fi
    done
    [ -n "$seen" ] || fail "compare did not name the orphan: $(cat "$work/compare.out")"
    gc_out="$(python3 "$load" gc --server "$server" --certs "$certs")" || fail "pod GC: $gc_out"
    [ "$gc_out" = "pod GC: 1 orphaned pods deleted: load/pod-0 (on node-0)" ] || fail "pod GC: $gc_out"
    await_converged "the cache did not converge after the pod GC"
    cat "$work/compare.out"
    stop_run
    ;;
  tls-token)
    # A bearer token instead of the client certificate works as well.
    start_apiserver --token s3cret-token
    python3 "$load" create --server "$server" --certs "$certs" --nodes 3 --pods 20
    start_run "$certs/kubeconfig-token"
    python3 "$load" wait --server "$server" --certs "$certs" --pods 20 --timeout 120 >/dev/null ||
      fail "pods not bound with the token: $(tail -5 "$work/run.err")"
    stop_run
    if grep -qs "s3cret-token" "$work/run.err" "$work/run.out"; then fail "the token appears in the logs"; fi
    # A token the apiserver rejects: exit 2, the 401 named, the token not.
    sed "s|s3cret-token|wr0ng-token|" "$certs/kubeconfig-token" >"$work/bad-token"
    rc=0
    "$sched" run --kubeconfig "$work/bad-token" --metrics-bind-address 0 >/dev/null 2>"$work/bad.err" || rc=$?
    [ "$rc" -eq 2 ] || fail "run with a rejected token exited $rc, expected 2: $(cat "$work/bad.err")"
    grep -q "refused the credentials" "$work/bad.err" || fail "unclear error: $(cat "$work/bad.err")"
    if grep -q "wr0ng-token" "$work/bad.err"; then fail "the token appears in the error"; fi
    ;;
  tls-wrong-ca)
    # A kubeconfig that trusts another CA: refused at start with exit code 2 and the reason.
    start_apiserver
    python3 - "$certs/kubeconfig" "$work/wrong-ca" <<'PY'
import base64, subprocess, sys
# A self-signed CA of our own, in place of the fixture's.
subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "/dev/null", "-out", sys.argv[2] + ".crt", "-subj", "/CN=other-ca", "-days", "1"],
               check=True, capture_output=True)
ca = base64.b64encode(open(sys.argv[2] + ".crt", "rb").read()).decode()
out = []
for line in open(sys.argv[1]):
    if "certificate-authority-data:" in line:
        line = line.split("certificate-authority-data:")[0] + "certificate-authority-data: " + ca + "\n"
    out.append(line)
open(sys.argv[2], "w").write("".join(out))
PY
    rc=0
    "$sched" run --kubeconfig "$work/wrong-ca" --metrics-bind-address 0 >"$work/run.out" 2>"$work/run.err" || rc=$?
    [ "$rc" -eq 2 ] || fail "run with a wrong CA exited $rc, expected 2: $(tail -3 "$work/run.err")"
    grep -q "error: TLS with https://" "$work/run.err" || fail "unclear error: $(cat "$work/run.err")"
    grep -qi "certificate" "$work/run.err" || fail "the error does not name the certificate: $(cat "$work/run.err")"
    ;;
  kubectl)
    command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
    start_apiserver
    export KUBECONFIG="$certs/kubeconfig"
    cat >"$work/objs.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: kn-1, labels: {kubernetes.io/hostname: kn-1}}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]
YAML
    kubectl apply -f "$work/objs.yaml" >"$work/apply.out" || fail "kubectl apply: $(cat "$work/apply.out")"
    start_run "$certs/kubeconfig"
    python3 "$load" wait --server "$server" --certs "$certs" --pods 1 --timeout 120 >/dev/null || fail "web not bound"
    kubectl get pods -o wide | grep -E "^web .* kn-1 " >/dev/null || fail "kubectl get pods -o wide: $(kubectl get pods -o wide)"
    # The Scheduled Event follows the binding: watch for it (kubectl get events -w on a FIFO).
    mkfifo "$work/events.fifo"
    kubectl get events -w >"$work/events.fifo" 2>/dev/null &
    watch_pid=$!
    pids+=("$watch_pid")
    exec 6<"$work/events.fifo"
    while IFS= read -r -t 60 line <&6; do [[ $line == *Scheduled* ]] && break; done
    kill "$watch_pid" 2>/dev/null || true
    kubectl get events | grep -q "Successfully assigned default/web to kn-1" || fail "no Scheduled event: $(kubectl get events)"
    stop_run
    kubectl delete pod web >/dev/null || fail "kubectl delete pod"
    [ -z "$(kubectl get pods --no-headers 2>/dev/null)" ] || fail "web still listed after delete"
    ;;
  restart)
    # The apiserver restarts every 2 s with its etcd intact: every connection (watches included) is
    # cut below HTTP, new ones are refused for 0.5 s, and the watch history starts over at the
    # current resourceVersion, so a re-watch from before the restart gets 410 and relists. The
    # scheduler recovers by itself (reflectors relist and re-watch with backoff, failed bindings
    # are retried): every pod bound exactly once, no node overcommitted. Unthrottled, run binds
    # everything within a second, between two restarts; its client is held to $(n 200) requests/s
    # (clientConnection.qps, as kube-scheduler's is, at 50) so that scheduling spans several.
    start_apiserver --fault-restart-every-seconds 2
    nodes=$(n 200) pods=$(n 2000)
    python3 "$load" create --server "$server" --certs "$certs" --nodes "$nodes" --pods "$pods" ||
      fail "creating the objects across restarts"
    cat >"$work/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $certs/kubeconfig
  qps: $(n 200)
  burst: $(n 200)
# A retry period of 2 s would beat in step with the 2 s restarts, so that every retry of a renewal
# could land in an outage; 1.5 s drifts across them.
leaderElection:
  retryPeriod: 1.5s
YAML
    restarts() { python3 "$load" faults --server "$server" --certs "$certs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["restarts"])'; }
    before="$(restarts)"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    start_run "$certs/kubeconfig" --config "$work/config.yaml" --metrics-bind-address "127.0.0.1:$port"
    secs="$(python3 "$load" wait --server "$server" --certs "$certs" --pods "$pods" --timeout 600)" ||
      fail "not every pod was bound across restarts: $(tail -5 "$work/run.err")"
    during=$(($(restarts) - before))
    errors="$(curl -s "127.0.0.1:$port/metrics" | awk '/^scheduler_schedule_attempts_total\{.*result="error"/ {n += $2} END {print n + 0}')"
    stop_run
    [ "$during" -ge 2 ] || fail "only $during restarts while run scheduled (in $secs s): the case tested nothing"
    python3 "$load" check --server "$server" --certs "$certs" --pods "$pods" --nodes "$nodes" || fail "invariants"
    echo "bound $pods pods on $nodes nodes in ${secs} s across $during restarts"
    echo "faults injected: $(python3 "$load" faults --server "$server" --certs "$certs")"
    echo "scheduler recovered: $(grep -c "informer:" "$work/run.err" || true) informer errors," \
         "$(grep -c "relisting" "$work/run.err" || true) of them 410s that relisted;" \
         "$errors scheduling attempts ended in an error (requeued and retried)"
    ;;
  bench-api)
    # bench --kubeconfig: a workload's nodes, namespaces and pods created through the API, every
    # measured pod bound (exit 0: no stall, no invariant violation).
    start_apiserver
    "$sched" bench --kubeconfig "$certs/kubeconfig" --workload "$repo/bench/workloads/ci-small.yaml" --quiet \
      --stall-timeout 120 --output json >"$work/bench.json" 2>"$work/bench.err" ||
      fail "bench through the apiserver: $(tail -5 "$work/bench.err")"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["scheduled"] == 500, r["scheduled"]' \
      "$work/bench.json" || fail "not every measured pod scheduled"
    ;;
  bench-api-gangs)
    # bench --kubeconfig with gangs (bench/workloads/gang-competing-ci.yaml): the PodGroups of both
    # forms are created through the API (the Coscheduling one as JSON, a custom resource), the
    # scheduler's informers see them, and every competing set ends with one gang bound whole and the
    # others wholly pending, as in embedded mode.
    start_apiserver
    "$sched" bench --kubeconfig "$certs/kubeconfig" --workload "$repo/bench/workloads/gang-competing-ci.yaml" \
      --config "$repo/bench/configs/pipeline-depth-16.yaml" --quiet --stall-timeout 120 --output json \
      >"$work/bench.json" 2>"$work/bench.err" || fail "gangs through the apiserver: $(tail -5 "$work/bench.err")"
    python3 "$load" list --server "$server" --certs "$certs" --path /apis/scheduling.x-k8s.io/v1alpha1/podgroups \
      >"$work/cosched.json" || fail "listing the Coscheduling PodGroups"
    python3 - "$work/bench.json" "$work/cosched.json" <<'PY' || fail "bad gang result: $(cat "$work/bench.json")"
import json, sys
r = json.load(open(sys.argv[1]))
g, c = r["gangs"], r["competingSets"]
assert (g["measured"], g["bound"], g["pending"]) == (9, 4, 5), g
assert (c["sets"], c["settled"]) == (4, 4), c
assert (r["scheduled"], r["unschedulable"]) == (32, 40), (r["scheduled"], r["unschedulable"])
assert r["invariants"]["violations"] == [], r["invariants"]
groups = json.load(open(sys.argv[2]))["items"]
assert len(groups) == 3 and all(x["spec"]["minMember"] == 8 for x in groups), groups
PY
    ;;
  workloads)
    # PodTopologySpread's system default constraints through the API: a Service, a ReplicaSet, a
    # ReplicationController (its selector defaulted from the template) and a StatefulSet, each with
    # three pods already on the big node. Each one's new pod goes to the small node (spreading
    # outweighs the big node's free room); a pod of no workload goes to the big one. The informers
    # must have delivered every workload kind's selector for this to hold.
    start_apiserver
    python3 "$load" apply --server "$server" --certs "$certs" --file "$repo/tests/integration/workloads.json" ||
      fail "creating the objects"
    start_run "$certs/kubeconfig"
    python3 "$load" wait --server "$server" --certs "$certs" --pods 0 --timeout 120 >/dev/null ||
      fail "pods left unbound: $(tail -5 "$work/run.err")"
    python3 "$load" placements --server "$server" --certs "$certs" >"$work/placements.json"
    stop_run
    python3 - "$work/placements.json" <<'PY' || fail "placements: $(cat "$work/placements.json")"
import json, sys
got = json.load(open(sys.argv[1]))
want = {"default/%s-new" % w: "small" for w in ("web", "api", "db", "cache")}
want["default/plain-new"] = "big"
bad = {k: got.get(k) for k, v in want.items() if got.get(k) != v}
sys.exit("expected %s, got %s" % ({k: want[k] for k in bad}, bad) if bad else 0)
PY
    ;;
  volumes)
    # The volume plugins through the API (tests/integration/volumes-run.yaml says what each pod
    # shows). Nothing polls: kubectl wait watches each condition, with a deadline that only bounds a
    # failure.
    command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
    start_apiserver
    export KUBECONFIG="$certs/kubeconfig"
    kubectl apply -f "$repo/tests/integration/volumes-run.yaml" >"$work/apply.out" 2>&1 ||
      fail "kubectl apply: $(cat "$work/apply.out")"
    # The PV controller of a real cluster would have marked the volumes Available and bound the
    # pre-bound pair; here the test does it.
    for pv in pv-zonal local-n1; do
      kubectl patch pv "$pv" --subresource=status --type merge -p '{"status":{"phase":"Available"}}' >/dev/null ||
        fail "marking $pv Available"
    done
    kubectl patch pvc data-zonal --subresource=status --type merge -p '{"status":{"phase":"Bound"}}' >/dev/null ||
      fail "marking data-zonal Bound"
    start_run "$certs/kubeconfig"
    kubectl wait --for=jsonpath='{.spec.nodeName}'=n2 pod/zonal --timeout=60s >/dev/null ||
      fail "zonal not bound to n2: $(kubectl get pods -o wide) $(tail -5 "$work/run.err")"
    # PreBind reserves local-n1 for data-local through the API, then waits for the claim to bind.
    kubectl wait --for=jsonpath='{.spec.claimRef.name}'=data-local pv/local-n1 --timeout=60s >/dev/null ||
      fail "PreBind did not write local-n1's claimRef: $(kubectl get pv local-n1 -o yaml) $(tail -5 "$work/run.err")"
    [ -z "$(kubectl get pod local -o jsonpath='{.spec.nodeName}')" ] || fail "local bound before its claim"
    kubectl patch pvc data-local --type merge \
      -p '{"spec":{"volumeName":"local-n1"},"metadata":{"annotations":{"pv.kubernetes.io/bind-completed":"yes"}}}' \
      >/dev/null || fail "binding data-local"
    kubectl wait --for=jsonpath='{.spec.nodeName}'=n1 pod/local --timeout=60s >/dev/null ||
      fail "local not bound to n1 after its claim was: $(kubectl get pods -o wide) $(tail -5 "$work/run.err")"
    kubectl wait --for=jsonpath='{.status.conditions[0].reason}'=Unschedulable pod/orphan --timeout=60s >/dev/null ||
      fail "orphan not reported unschedulable: $(kubectl get pod orphan -o yaml)"
    msg="$(kubectl get pod orphan -o jsonpath='{.status.conditions[0].message}')"
    [[ $msg == *'persistentvolumeclaim "nope" not found'* ]] || fail "orphan's message: $msg"
    [ -z "$(kubectl get pod orphan -o jsonpath='{.spec.nodeName}')" ] || fail "orphan was bound"
    stop_run
    ;;
  preemption)
    # DefaultPreemption through the API: the preemptor (PriorityClass high) does not fit on n1; the
    # scheduler records PodScheduled=False and nominatedNodeName, marks the one victim it needs
    # (victim-0, the lowest priority) with DisruptionTarget and deletes it, keeps victim-1, then binds.
    start_apiserver
    python3 "$load" apply --server "$server" --certs "$certs" --file "$repo/tests/integration/preemption.json" ||
      fail "creating the objects"
    start_run "$certs/kubeconfig"
    python3 "$load" preemption --server "$server" --certs "$certs" --file "$repo/tests/integration/preemptor.json" \
      --node n1 --victim default/victim-0 --survivor default/victim-1 --timeout 120 ||
      fail "preemption through the API: $(tail -5 "$work/run.err")"
    stop_run
    ;;
  event-series)
    # A FailedScheduling Event deleted from the API (expired, or its create failed) and then
    # repeated: the series update gets 404, and the Event is created again with its series, as
    # client-go's recorder does. big (900m) does not fit n1 (600m free); deleting filler-0 requeues
    # it, and it fails again (800m free).
    start_apiserver
    python3 "$load" apply --server "$server" --certs "$certs" --file "$repo/tests/integration/event-series.json" ||
      fail "creating the objects"
    start_run "$certs/kubeconfig"
    python3 "$load" event-recreate --server "$server" --certs "$certs" --pod default/big --delete-pod default/filler-0 \
      --timeout 120 || fail "the repeated Event: $(tail -5 "$work/run.err")"
    stop_run
    ;;
  leader-failover)
    # Issue #15's test 1. Only the leader schedules; SIGKILL the leader and the standby takes over
    # and schedules what was created meanwhile, no pod bound twice; SIGTERM the new leader and it
    # releases the Lease, so a third replica takes over at its next poll. The bounds: client-go's
    # standby polls every retryPeriod x (1 + up to 1.2 jitter), so it sees the last renewal up to
    # one poll late and the expiry up to one poll late: lease + 2 x 2.2 x retry after a kill, and
    # 2.2 x retry after a release; 3 s more for process start under the sanitizers.
    start_apiserver
    python3 "$load" create --server "$server" --certs "$certs" --nodes 10 --pods 0 --namespace batch-a ||
      fail "creating the nodes"
    start_replica a
    await a LEADER
    start_replica b
    await b STANDBY
    python3 "$load" create --server "$server" --certs "$certs" --nodes 0 --pods "$(n 100)" --namespace batch-a ||
      fail "creating batch a"
    python3 "$load" wait --server "$server" --certs "$certs" --pods "$(n 100)" --timeout 300 >/dev/null ||
      fail "batch a not bound by the leader: $(tail -5 "$work/a/run.err")"
    [ "$(attempts_of b)" = 0 ] || fail "the standby b scheduled $(attempts_of b) pods while a led"
    kill -KILL "${replica_pid[a]}"
    killed="$(date +%s.%N)"
    python3 "$load" create --server "$server" --certs "$certs" --nodes 0 --pods "$(n 100)" --namespace batch-b ||
      fail "creating batch b"
    await b LEADER
    kill_takeover="$(seconds_between "$killed" "$at")"
    within "$kill_takeover" "$(python3 -c 'print(4 + 2 * 2.2 * 0.5 + 3)')" ||
      fail "b took $kill_takeover s to lead after a was killed"
    python3 "$load" wait --server "$server" --certs "$certs" --pods "$(n 200)" --timeout 300 >/dev/null ||
      fail "batch b not bound after the failover: $(tail -5 "$work/b/run.err")"
    start_replica c
    await c STANDBY
    [ "$(attempts_of c)" = 0 ] || fail "the standby c scheduled while b led"
    kill -TERM "${replica_pid[b]}"
    termed="$(date +%s.%N)"
    rc=0
    wait "${replica_pid[b]}" || rc=$?
    [ "$rc" -eq 0 ] || fail "b exited $rc after SIGTERM: $(tail -5 "$work/b/run.err")"
    grep -q "released lease" "$work/b/run.err" || fail "b did not release the Lease: $(tail -5 "$work/b/run.err")"
    await c LEADER
    term_takeover="$(seconds_between "$termed" "$at")"
    within "$term_takeover" "$(python3 -c 'print(2.2 * 0.5 + 3)')" ||
      fail "c took $term_takeover s to lead after b released the Lease"
    python3 "$load" create --server "$server" --certs "$certs" --nodes 0 --pods "$(n 100)" --namespace batch-c ||
      fail "creating batch c"
    python3 "$load" wait --server "$server" --certs "$certs" --pods "$(n 300)" --timeout 300 >/dev/null ||
      fail "batch c not bound by c: $(tail -5 "$work/c/run.err")"
    python3 "$load" check --server "$server" --certs "$certs" --pods "$(n 300)" --nodes 10 || fail "invariants"
    # Bound once: a second binding of a bound pod would be refused (409 "already assigned"), and
    # the scheduler would have logged it.
    if grep -h "already assigned" "$work"/*/run.err >/dev/null; then fail "a pod was bound twice"; fi
    became="$(curl -s --cacert "$certs/ca.crt" --cert "$certs/client.crt" --key "$certs/client.key" \
      "$server/apis/events.k8s.io/v1/namespaces/kube-system/events" |
      python3 -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin)["items"] if e.get("reason") == "LeaderElection" and e.get("note","").endswith("became leader")))')"
    [ "$became" -ge 3 ] || fail "$became 'became leader' Events, want 3"
    echo "failover: SIGKILL -> standby leads in $kill_takeover s; SIGTERM -> next leads in $term_takeover s"
    kill -TERM "${replica_pid[c]}"
    wait "${replica_pid[c]}" || fail "c exited $? after SIGTERM"
    ;;
  leader-partition)
    # Issue #15's test 2. The apiserver refuses the leader's Lease writes: it stops scheduling
    # before renewDeadline has passed since its last renewal and exits 1 ("leaderelection lost");
    # the standby leads only after that, and schedules.
    start_apiserver
    python3 "$load" create --server "$server" --certs "$certs" --nodes 10 --pods 0 --namespace batch-a ||
      fail "creating the nodes"
    start_replica a
    await a LEADER
    leader="$(holder)"
    [ -n "$leader" ] || fail "no holder after a led"
    start_replica b
    await b STANDBY
    curl -sf -X POST --cacert "$certs/ca.crt" --cert "$certs/client.crt" --key "$certs/client.key" \
      "$server/debug/partition-lease-holder?holder=$leader" >/dev/null || fail "partitioning $leader"
    cut="$(date +%s.%N)"
    await a LOST
    lost_logged="$logged"
    stopped="$(seconds_between "$cut" "$at")"
    within "$stopped" "$(python3 -c 'print(2 + 0.5 + 3)')" || fail "a stopped leading only $stopped s after the cut"
    rc=0
    wait "${replica_pid[a]}" || rc=$?
    [ "$rc" -eq 1 ] || fail "a exited $rc after losing the Lease, want 1: $(tail -5 "$work/a/run.err")"
    await b LEADER
    taken="$(seconds_between "$cut" "$at")"
    [[ "$logged" > "$lost_logged" ]] || fail "b led at $logged, before a stopped at $lost_logged"
    python3 "$load" create --server "$server" --certs "$certs" --nodes 0 --pods "$(n 100)" --namespace batch-b ||
      fail "creating batch b"
    python3 "$load" wait --server "$server" --certs "$certs" --pods "$(n 100)" --timeout 300 >/dev/null ||
      fail "batch b not bound by b: $(tail -5 "$work/b/run.err")"
    echo "partition: a stopped $stopped s after the cut, b led $taken s after it"
    kill -TERM "${replica_pid[b]}"
    wait "${replica_pid[b]}" || fail "b exited $? after SIGTERM"
    ;;
  leader-bad-input)
    # Bad leader election settings exit 2 before anything starts, with one line naming the flag, or
    # the file and the field.
    start_apiserver
    expect_bad() {
      local want=$1
      shift
      local rc=0
      "$sched" run --kubeconfig "$certs/kubeconfig" --metrics-bind-address 0 "$@" >"$work/bad.out" 2>"$work/bad.err" || rc=$?
      [ "$rc" -eq 2 ] || fail "run $* exited $rc, want 2: $(cat "$work/bad.err")"
      grep -qF -- "$want" "$work/bad.err" || fail "run $*: stderr does not say '$want': $(cat "$work/bad.err")"
    }
    expect_bad '--leader-elect-lease-duration: invalid argument "15": time: missing unit in duration "15"' \
      --leader-elect-lease-duration 15
    expect_bad '--leader-elect: invalid argument "maybe"' --leader-elect=maybe
    expect_bad 'leaderElection.renewDeadline: Invalid value: "3s": renewDeadline must be greater than retryPeriod*JitterFactor (1.2)' \
      --leader-elect-renew-deadline 3s --leader-elect-retry-period 3s
    cat >"$work/le.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $certs/kubeconfig
leaderElection:
  leaseDuration: 10s
  renewDeadline: 10s
YAML
    expect_bad "$work/le.yaml: document 1: leaderElection.leaseDuration: Invalid value: \"10s\": LeaseDuration must be greater than RenewDeadline" \
      --config "$work/le.yaml"
    # The file is validated on its own, then again with the flags over it (kube-scheduler validates
    # only the combination: a flag cannot repair a bad file here).
    sed -i 's/leaseDuration: 10s/leaseDuration: 20s/' "$work/le.yaml"
    expect_bad 'leaderElection.leaseDuration: Invalid value: "10s": LeaseDuration must be greater than RenewDeadline' \
      --config "$work/le.yaml" --leader-elect-lease-duration 10s
    ;;
  secure-serving)
    # run's secure port, as kube-scheduler's 10259: HTTPS, delegated authentication (TokenReview) and
    # authorization (SubjectAccessReview) through the apiserver, here answered from the fixture's
    # --auth-table. Readiness is the "Serving securely on" line; nothing sleeps.
    cat >"$work/auth.json" <<'JSON'
{"tokens": [{"token": "scraper-token", "username": "prometheus", "groups": ["monitoring"]},
            {"token": "nosy-token", "username": "mallory"}],
 "rules": [{"user": "prometheus", "verbs": ["get"], "paths": ["/metrics"]}]}
JSON
    start_apiserver --auth-table "$work/auth.json"
    # Starts run serving securely on 127.0.0.1:$port (a free port found here: --secure-port 0 means
    # "off", as in kube) with the extra flags given, and waits for its "Serving securely" line.
    start_secure() {
      port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
      rm -f "$work/secure.fifo"
      mkfifo "$work/secure.fifo"
      "$sched" run --kubeconfig "$certs/kubeconfig" --metrics-bind-address 0 --bind-address 127.0.0.1 \
        --secure-port "$port" -v 1 "$@" >"$work/run.out" 2>"$work/secure.fifo" &
      run_pid=$!
      pids+=("$run_pid")
      local fd line up=""
      exec {fd}<"$work/secure.fifo"
      while read -r -t 120 line <&"$fd"; do
        echo "$line" >>"$work/run.err"
        if [[ "$line" == *"Serving securely on 127.0.0.1:$port"* ]]; then up=1; break; fi
      done
      [ -n "$up" ] || fail "no \"Serving securely on 127.0.0.1:$port\" line: $(tail -5 "$work/run.err")"
      cat <&"$fd" >>"$work/run.err" &  # keep draining the log
      pids+=($!)
    }
    # GET https://127.0.0.1:$port$1 with curl's remaining arguments; prints the status code, the body
    # goes to $work/body.
    get() {
      local path=$1
      shift
      curl -s --max-time 60 -o "$work/body" -w '%{http_code}' "$@" "https://127.0.0.1:$port$path" || true
    }
    expect() {  # expect CODE BODY-SUBSTRING WHAT -- CURL-ARGS...
      local code=$1 text=$2 what=$3
      shift 4
      local got
      got="$(get "$@")"
      [ "$got" = "$code" ] || fail "$what: got $got, want $code: $(head -c 300 "$work/body")"
      grep -qF -- "$text" "$work/body" || fail "$what: the body does not say '$text': $(head -c 300 "$work/body")"
    }

    # 1. Without --tls-cert-file: a self-signed certificate made at start, in memory.
    start_secure
    grep -q "Generated self-signed cert in-memory" "$work/run.err" || fail "no self-signed certificate logged"
    # No token: system:anonymous, which the SubjectAccessReview denies: 403, as kube-scheduler answers.
    expect 403 'forbidden: User \"system:anonymous\" cannot get path \"/metrics\"' "no token" -- /metrics -k
    # A token the TokenReview rejects: 401.
    expect 401 '"reason":"Unauthorized"' "a rejected token" -- /metrics -k -H "Authorization: Bearer wrong-token"
    # Authenticated, but no rule allows it: 403 naming the user.
    expect 403 'forbidden: User \"mallory\" cannot get path \"/metrics\"' "a user without the permission" -- \
      /metrics -k -H "Authorization: Bearer nosy-token"
    # Allowed: the metrics (asked twice: the second answer comes from the review caches).
    for _ in 1 2; do
      expect 200 "# TYPE scheduler_schedule_attempts_total counter" "an allowed user" -- \
        /metrics -k -H "Authorization: Bearer scraper-token"
    done
    # The always-allowed paths need no token (a probe costs no review).
    expect 200 ok "/healthz without a token" -- /healthz -k
    expect 200 ok "/livez without a token" -- /livez -k
    # The certificate is not one the apiserver's CA signed, so it does not verify against it.
    [ "$(get /healthz --cacert "$certs/ca.crt")" = "000" ] || fail "the self-signed certificate verified against another CA"
    stop_run

    # 2. --tls-cert-file / --tls-private-key-file: that certificate is the one served (it verifies
    # against its CA, for 127.0.0.1).
    command -v openssl >/dev/null || fail "openssl (the command) is needed to make the test certificate"
    (
      cd "$work"
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem \
        -days 1 -subj /CN=secure-serving-test-ca
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout tls.key -out tls.csr -subj /CN=localhost
      printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >tls.ext
      openssl x509 -req -in tls.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out tls.crt -days 1 -extfile tls.ext
    ) >"$work/openssl.log" 2>&1 || fail "openssl: $(cat "$work/openssl.log")"
    start_secure --leader-elect=false --tls-cert-file "$work/tls.crt" --tls-private-key-file "$work/tls.key"
    expect 200 ok "/healthz verified with the given CA" -- /healthz --cacert "$work/ca.pem"
    expect 200 "# TYPE" "/metrics verified with the given CA" -- /metrics --cacert "$work/ca.pem" \
      -H "Authorization: Bearer scraper-token"
    stop_run

    # 3. Bad input exits 2 before anything starts, with one line naming the flag (and file).
    expect_bad() {
      local want=$1
      shift
      local rc=0
      "$sched" run --kubeconfig "$certs/kubeconfig" --metrics-bind-address 0 --leader-elect=false "$@" \
        >"$work/bad.out" 2>"$work/bad.err" || rc=$?
      [ "$rc" -eq 2 ] || fail "run $* exited $rc, want 2: $(cat "$work/bad.err")"
      grep -qF -- "$want" "$work/bad.err" || fail "run $*: stderr does not say '$want': $(cat "$work/bad.err")"
    }
    echo "not a certificate" >"$work/garbage.pem"
    cp "$work/ca.key" "$work/other.key"
    expect_bad "--tls-cert-file=$work/missing.crt: cannot read" \
      --tls-cert-file "$work/missing.crt" --tls-private-key-file "$work/tls.key"
    expect_bad "--tls-cert-file=$work/garbage.pem: no PEM certificate could be read" \
      --tls-cert-file "$work/garbage.pem" --tls-private-key-file "$work/tls.key"
    expect_bad "--tls-private-key-file=$work/garbage.pem: no PEM private key could be read" \
      --tls-cert-file "$work/tls.crt" --tls-private-key-file "$work/garbage.pem"
    expect_bad "--tls-private-key-file=$work/other.key: the private key does not match the certificate" \
      --tls-cert-file "$work/tls.crt" --tls-private-key-file "$work/other.key"
    expect_bad "--tls-cert-file is given without --tls-private-key-file" --tls-cert-file "$work/tls.crt"
    expect_bad '--secure-port: invalid argument "https"' --secure-port https
    expect_bad '--bind-address: invalid argument "localhost": not an IP address' --bind-address localhost
    expect_bad '--authentication-token-webhook-cache-ttl: invalid argument "10"' \
      --authentication-token-webhook-cache-ttl 10
    expect_bad "--authorization-kubeconfig: $work/missing.kubeconfig" --authorization-kubeconfig "$work/missing.kubeconfig"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$case]"

#!/usr/bin/env bash
# End-to-end tests of `kube-actor-scheduler bench`, one case per invocation:
#   bench_cli_test.sh BINARY REPO_ROOT CASE
#   bench_cli_test.sh --list            # the case names, one a line (CMakeLists.txt reads them)
# run-* cases run bench/workloads/ci-small.yaml (run-volumes-*: the 50-node volume workloads of
# tests/fixtures/workloads/) and check the result's shape and invariants: every measured pod
# scheduled, no violation, a throughput and latency per pod. They never assert a time.
# bad-* cases require exit code 2, nothing on stdout, and one line on stderr naming the problem.
set -u

list_cases() {
  cat <<'CASES'
run-json
run-table
run-report
run-metrics-off
run-malloc-tuned
run-malloc-user-tunables
run-volumes-csi
run-volumes-migrated
run-gangs
run-gangs-table
run-gangs-competing
gangs-competing-uncontested-fails
gangs-competing-none-fits-fails
bad-workload-gang-size
nodes-stall-through-kubeconfig
bad-missing-workload
bad-workload-unknown-field
bad-workload-pv-template
bad-manifest-as-workload
template-unknown-field-warns
bad-output-format
bad-batching
bad-window-ms
bad-unknown-flag
stall-is-reported
CASES
}

source "$(dirname "$0")/cli_checks.sh"  # cli_case_args, fail, show, bad
cli_case_args "$@"
workloads=$root/bench/workloads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT


# run ARGS...: bench ARGS; sets rc, leaves $tmp/out and $tmp/err.
run() {
  timeout "${KAS_BENCH_TIMEOUT:-120}" "$bin" bench "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -ne 124 ] || { show; fail "bench did not finish within ${KAS_BENCH_TIMEOUT:-120} s"; }
}

# check_json: $tmp/out is one JSON result of ci-small with every measured pod scheduled.
check_json() {
  python3 - "$tmp/out" <<'PY' || { show; fail "bad JSON result"; }
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit("stdout is not one JSON object: %s" % e)
problems = []
def want(cond, what):
    if not cond:
        problems.append(what)
want(r.get("workload") == "CISmall", "workload == CISmall, got %r" % r.get("workload"))
want(r.get("nodes") == 100, "nodes == 100, got %r" % r.get("nodes"))
want(r.get("initPods") == 50, "initPods == 50, got %r" % r.get("initPods"))
want(r.get("measuredPods") == 500, "measuredPods == 500, got %r" % r.get("measuredPods"))
want(r.get("scheduled") == r.get("measuredPods"), "scheduled == measuredPods, got %r" % r.get("scheduled"))
want(r.get("unschedulable") == 0, "unschedulable == 0, got %r" % r.get("unschedulable"))
want(r.get("invariants", {}).get("violations") == [], "invariants.violations == [], got %r" % r.get("invariants"))
want(r.get("invariants", {}).get("checks", 0) > 0, "invariants.checks > 0")
want(r.get("throughput", {}).get("avg", 0) > 0, "throughput.avg > 0, got %r" % r.get("throughput"))
want(r.get("throughput", {}).get("samples", 0) >= 1, "throughput.samples >= 1")
want(len(r.get("throughputWindows", [])) == r.get("throughput", {}).get("samples"), "one throughput sample per window")
want(r.get("latencyMs", {}).get("samples") == r.get("measuredPods"), "latencyMs.samples == measuredPods, got %r" % r.get("latencyMs"))
want(r.get("rawPodsPerSecond", 0) > 0, "rawPodsPerSecond > 0, got %r" % r.get("rawPodsPerSecond"))
want(r.get("peakRssBytes", 0) > 0, "peakRssBytes > 0")
want(r.get("events", {}).get("Scheduled", 0) >= r.get("measuredPods", 1), "a Scheduled event per pod")
if problems:
    sys.exit("; ".join(problems))
PY
}


ci=$workloads/ci-small.yaml
case "$name" in
  run-json)
    run --workload "$ci" --output json --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    check_json ;;
  run-table)
    run --workload "$ci" --output table --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    for w in "CISmall" "100 nodes, 50 init pods, 500 measured pods" "throughput (pods/s)" "0 violations"; do
      grep -qF -- "$w" "$tmp/out" || { show; fail "table does not show: $w"; }
    done ;;
  run-report)
    run --workload "$ci" --output json --quiet --report "$tmp/report"
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    check_json
    [ -s "$tmp/report/index.html" ] || { show; fail "no $tmp/report/index.html"; }
    svgs=$(grep -o '<svg' "$tmp/report/index.html" | wc -l)
    [ "$svgs" -eq 2 ] || fail "index.html has $svgs <svg elements, want 2 (throughput and latency CDF)" ;;
  run-metrics-off)
    # recordMetrics: false still schedules everything; asking for /metrics too is a warning, not an error.
    cfg=$root/bench/configs/metrics-off.yaml
    run --workload "$ci" --config "$cfg" --metrics-bind-address 127.0.0.1:0 --output json --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    check_json
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["runtime"]["recordMetrics"] is not False)' \
      "$tmp/out" || { show; fail "runtime.recordMetrics is not false"; }
    grep -qF -- "warning: --metrics-bind-address: $cfg sets recordMetrics: false" "$tmp/err" ||
      { show; fail "no warning that /metrics serves zeros"; } ;;
  run-malloc-tuned)
    # The binary re-executes itself with glibc's tcache_count raised (app/malloc_tuning.hpp); the
    # result reports what the measured process ran with.
    GLIBC_TUNABLES= run --workload "$ci" --output json --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    check_json
    python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["runtime"]["mallocTcacheCount"]; sys.exit(None if v == "128" else "mallocTcacheCount is %r, want \"128\"" % v)' \
      "$tmp/out" || { show; fail "the process did not run with the tuned tcache"; } ;;
  run-malloc-user-tunables)
    # A tcache_count the user set wins, and their other tunables are kept.
    GLIBC_TUNABLES=glibc.malloc.tcache_count=7 run --workload "$ci" --output json --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    check_json
    python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["runtime"]["mallocTcacheCount"]; sys.exit(None if v == "7" else "mallocTcacheCount is %r, want \"7\"" % v)' \
      "$tmp/out" || { show; fail "the user's tcache_count was overridden"; } ;;
  run-volumes-csi|run-volumes-migrated)
    # Every pod with its own claim and volume; csi-pvs-small fills every node to its CSINode limit.
    case "$name" in
      run-volumes-csi) wl=csi-pvs-small.yaml want='CSIPVsSmall 50 60 40' ;;
      *) wl=migrated-pvs-small.yaml want='MigratedInTreePVsSmall 50 50 100' ;;
    esac
    run --workload "$root/tests/fixtures/workloads/$wl" --output json --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    python3 - "$tmp/out" $want <<'PY' || { show; fail "bad volume workload result"; }
import json, sys
r = json.load(open(sys.argv[1]))
name, nodes, init, measured = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
got = (r["workload"], r["nodes"], r["initPods"], r["measuredPods"])
assert got == (name, nodes, init, measured), got
assert r["scheduled"] == measured and r["unschedulable"] == 0, (r["scheduled"], r["unschedulable"])
assert r["invariants"]["violations"] == [], r["invariants"]
assert r["invariants"]["checks"] > 0, r["invariants"]
assert r["rawPodsPerSecond"] > 0, r["rawPodsPerSecond"]
assert r["events"]["Scheduled"] >= measured, r["events"]
PY
    ;;
  run-gangs)
    # Gangs of both PodGroup APIs among plain pods (tests/fixtures/workloads/gang-small.yaml): every
    # gang bound whole, gangs/s and the gang latency reported, no invariant violated (no gang partly
    # bound, nothing left reserved in the cache).
    run --workload "$root/tests/fixtures/workloads/gang-small.yaml" --output json --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    python3 - "$tmp/out" <<'PY' || { show; fail "bad gang workload result"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["workload"], r["nodes"], r["initPods"], r["measuredPods"]) == ("GangSmall", 100, 50, 220), r["workload"]
assert r["scheduled"] == 220 and r["unschedulable"] == 0 and not r["stalled"], (r["scheduled"], r["unschedulable"])
g = r["gangs"]
assert (g["measured"], g["bound"]) == (20, 20), g
assert g["gangsPerSecond"] > 0 and g["gangPodsPerSecond"] > 0, g
lat = g["lastCreatedToLastBoundMs"]
assert lat["samples"] == 20 and 0 < lat["p50"] <= lat["p99"] <= lat["max"], lat
assert r["invariants"]["violations"] == [], r["invariants"]
assert r["invariants"]["checks"] > 0, r["invariants"]
PY
    ;;
  run-gangs-table)
    run --workload "$root/tests/fixtures/workloads/gang-small.yaml" --output table --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    for w in "gangs               20/20 bound" "gang latency (ms)" "0 violations"; do
      grep -qF -- "$w" "$tmp/out" || { show; fail "table does not show: $w"; }
    done
    # A workload without gangs prints no gang lines.
    run --workload "$ci" --output table --quiet
    ! grep -qF "gang" "$tmp/out" || { show; fail "a workload without gangs shows gang lines"; } ;;
  run-gangs-competing)
    # Gangs competing for pools that fit one each (bench/workloads/gang-competing-ci.yaml: four sets,
    # both PodGroup APIs, one set of three), 16 pods in flight: every set ends with one gang bound
    # whole and the others wholly pending, reported unschedulable; no deadlock (the barrier, which
    # waits only for the winners, returns; nothing stalls); no violation.
    run --workload "$workloads/gang-competing-ci.yaml" --config "$root/bench/configs/pipeline-depth-16.yaml" \
      --output json --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
    python3 - "$tmp/out" <<'PY' || { show; fail "bad competing gang result"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["workload"], r["nodes"], r["measuredPods"]) == ("GangCompetingCI", 32, 72), (r["workload"], r["nodes"], r["measuredPods"])
assert r["runtime"]["pipelineDepth"] == 16, r["runtime"]
assert not r["stalled"], "stalled"
g = r["gangs"]
assert (g["measured"], g["bound"], g["pending"]) == (9, 4, 5), g
c = r["competingSets"]
assert (c["sets"], c["settled"]) == (4, 4), c
# The winners' 4 x 8 pods bound; every loser's pod pending with a reason.
assert (r["scheduled"], r["unschedulable"]) == (32, 40), (r["scheduled"], r["unschedulable"])
assert r["invariants"]["violations"] == [], r["invariants"]
assert r["invariants"]["checks"] > 0, r["invariants"]
PY
    run --workload "$workloads/gang-competing-ci.yaml" --config "$root/bench/configs/pipeline-depth-16.yaml" \
      --output table --quiet
    [ "$rc" -eq 0 ] || { show; fail "table run: exit code $rc, want 0"; }
    for w in "gangs               4/9 bound, 5 pending" "competing sets      4/4 settled" "0 violations"; do
      grep -qF -- "$w" "$tmp/out" || { show; fail "table does not show: $w"; }
    done ;;
  gangs-competing-uncontested-fails|gangs-competing-none-fits-fails)
    # A competing set whose pool (4 slots a node) fits both gangs (uncontested: 16 slots, gangs of
    # 4) or neither (4 slots, gangs of 8: none bound, as a deadlock would end; the barrier stalls) is
    # a violation on stdout, and the run exits 1.
    t=$workloads/templates
    case "$name" in
      *uncontested*) pool=4 size=4 want="competing set pool-0: 2 gangs bound whole (the capacity was not contested)" ;;
      *) pool=1 size=8 want="competing set pool-0: no gang bound whole (a deadlock, or capacity for none)" ;;
    esac
    printf 'name: X\nops:\n- {opcode: createNodes, count: %s, nodeTemplatePath: %s, labelNodePrepareStrategy: {labelKey: bench.kube-actor-scheduler.io/pool, labelValues: [pool-0]}}\n- {opcode: createPods, count: %s, podTemplatePath: %s, podGroup: {size: %s, competingSet: pool-0}, skipWaitToCompletion: true, collectMetrics: true}\n- {opcode: barrier}\n' \
      "$pool" "$t/node-default.yaml" $((size * 2)) "$t/gang-compete-pool-0.yaml" "$size" >"$tmp/w.yaml"
    run --workload "$tmp/w.yaml" --stall-timeout 1 --output table --quiet
    [ "$rc" -eq 1 ] || { show; fail "exit code $rc, want 1"; }
    grep -qF -- "VIOLATION: $want" "$tmp/out" || { show; fail "stdout does not show: VIOLATION: $want"; } ;;
  bad-workload-gang-size)
    t=$workloads/templates
    printf 'name: X\nops:\n- {opcode: createNodes, count: 1, nodeTemplatePath: %s}\n- {opcode: createPods, count: 10, podTemplatePath: %s, podGroup: {size: 4}, collectMetrics: true}\n' \
      "$t/node-default.yaml" "$t/pod-default.yaml" >"$tmp/w.yaml"
    bad "$tmp/w.yaml: ops[1].podGroup.size: must divide the op's count (10)" -- --workload "$tmp/w.yaml" --quiet ;;
  nodes-stall-through-kubeconfig)
    # An apiserver that is not there: the node creates fail, and the wait for the nodes gives up
    # after --stall-timeout with one line that says so (exit 1), instead of waiting forever.
    printf 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {}}]\n' >"$tmp/kubeconfig"
    run --workload "$root/tests/fixtures/workloads/gang-small.yaml" --kubeconfig "$tmp/kubeconfig" --stall-timeout 1 --quiet
    [ "$rc" -eq 1 ] || { show; fail "exit code $rc, want 1"; }
    grep -qE "^error: .*: 0 of [0-9]+ nodes created reached the cluster's watch, none more in --stall-timeout 1 s" "$tmp/err" ||
      { show; fail "stderr does not say the nodes never came"; } ;;
  bad-missing-workload)
    bad "$tmp/absent.yaml" "cannot read the file" -- --workload "$tmp/absent.yaml" --quiet ;;
  bad-workload-unknown-field)
    printf 'name: X\nthreshhold: 5\nops:\n- opcode: barrier\n' >"$tmp/w.yaml"
    bad "$tmp/w.yaml: threshhold: unknown field" -- --workload "$tmp/w.yaml" --quiet ;;
  bad-workload-pv-template)
    # A pod template where the volume template belongs.
    t=$workloads/templates
    printf 'name: X\nops:\n- {opcode: createNodes, count: 1, nodeTemplatePath: %s}\n- {opcode: createPods, count: 1, podTemplatePath: %s, persistentVolumeTemplatePath: %s, persistentVolumeClaimTemplatePath: %s, collectMetrics: true}\n' \
      "$t/node-default.yaml" "$t/pod-default.yaml" "$t/pod-default.yaml" "$t/pvc.yaml" >"$tmp/w.yaml"
    bad "$tmp/w.yaml: ops[1].persistentVolumeTemplatePath" "a volume template must hold exactly one PersistentVolume" -- \
      --workload "$tmp/w.yaml" --quiet ;;
  bad-manifest-as-workload)
    # The reverse of simulate's bad-workload-as-manifest: a manifest given to --workload.
    bad "$root/bench/examples/basic.yaml" "Kubernetes manifest" "simulate --cluster" -- \
      --workload "$root/bench/examples/basic.yaml" --quiet ;;
  template-unknown-field-warns)
    # A typo in a pod template is reported, as in a manifest, on stderr and in the JSON.
    mkdir -p "$tmp/templates"
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\nspec:\n  containers: [{name: c, image: i, resources: {request: {cpu: "1"}}}]\n' \
      >"$tmp/templates/pod.yaml"
    printf 'name: X\nops:\n- {opcode: createNodes, count: 2, nodeTemplatePath: %s}\n- {opcode: createPods, count: 5, podTemplatePath: templates/pod.yaml, collectMetrics: true}\n' \
      "$workloads/templates/node-default.yaml" >"$tmp/w.yaml"
    run --workload "$tmp/w.yaml" --output json --quiet
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    want="$tmp/w.yaml: ops[1]"
    grep -qF -- "warning: $want" "$tmp/err" && grep -qF "spec.containers[0].resources.request: unknown field" "$tmp/err" ||
      { show; fail "no warning naming the op and the field on stderr"; }
    python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["warnings"]; sys.exit(not any("resources.request: unknown field" in x and "templates/pod.yaml" in x for x in w))' \
      "$tmp/out" || { show; fail "the warning is not in the JSON warnings"; } ;;
  bad-output-format)
    bad "--output" "xml" -- --workload "$ci" --output xml --quiet ;;
  bad-batching)
    bad "--batching" "maybe" -- --workload "$ci" --batching maybe --quiet ;;
  bad-window-ms)
    bad "--window-ms" "\"0\"" -- --workload "$ci" --window-ms 0 --quiet ;;
  bad-unknown-flag)
    # The usage text follows the error line; the first line must name the flag.
    run --workload "$ci" --frobnicate --quiet
    [ "$rc" -eq 2 ] || { show; fail "exit code $rc, want 2"; }
    [ ! -s "$tmp/out" ] || { show; fail "stdout must be empty on bad input"; }
    head -n1 "$tmp/err" | grep -qF -- 'unknown argument "--frobnicate"' || { show; fail "first stderr line does not name --frobnicate"; } ;;
  stall-is-reported)
    # 4 of 20 pods can never bind: the wait stalls after 1 s, and the result says so honestly
    # (the real counts, stalled: true) and the run exits 1, with the report still on stdout.
    run --workload "$root/tests/fixtures/workloads/stall.yaml" --stall-timeout 1 --output json --quiet
    [ "$rc" -eq 1 ] || { show; fail "exit code $rc, want 1"; }
    python3 - "$tmp/out" <<'PY' || { show; fail "stalled result misreported"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["stalled"] is True, r.get("stalled")
assert (r["scheduled"], r["unschedulable"], r["measuredPods"]) == (16, 4, 20), (r["scheduled"], r["unschedulable"])
assert r["boundAtStall"] == 16, r["boundAtStall"]
PY
    grep -qF "4 of 20 measured pods never bound" "$tmp/err" || { show; fail "stderr does not say what stalled"; } ;;
  *)
    fail "unknown case" ;;
esac
exit 0

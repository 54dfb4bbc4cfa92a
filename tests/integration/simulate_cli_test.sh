#!/usr/bin/env bash
# End-to-end tests of `kube-actor-scheduler simulate`, one case per invocation:
#   simulate_cli_test.sh BINARY REPO_ROOT CASE
#   simulate_cli_test.sh --list            # the case names, one a line (CMakeLists.txt reads them)
# example-* cases run a cluster from bench/examples and compare stdout, as JSON with key order
# ignored, to tests/integration/expected/<example>.json (see expected/README.md for how each was
# derived). bad-* cases feed a broken manifest and require: exit code 2, nothing on stdout, and
# exactly one line on stderr naming the file, the document and the field.
set -u

list_cases() {
  cat <<'CASES'
example-basic
example-taints
example-affinity
example-ports
example-resources-extended
example-cluster-dump
example-cluster-list
example-parity-ports
example-parity-resources
example-preemption
example-preemption-pdb
example-pod-affinity
example-topology-spread
example-balanced-images
example-volumes
gangs
bad-missing-file
bad-invalid-yaml
bad-invalid-json
bad-no-kind
bad-not-a-mapping
bad-no-name
bad-wrong-api-version
bad-duplicate-key
bad-wrong-field-type
bad-quantity
bad-negative-request
bad-duplicate-node
bad-duplicate-node-across-files
bad-duplicate-pod
bad-pod-on-unknown-node
bad-unknown-priority-class
explain-json
verbose-keeps-stdout-json
config-runtime
bad-config-unknown-field
bad-config-value
config-metrics-off
bad-config-record-metrics
bad-config-duplicate-profile
bad-config-missing-file
config-multi-profile
bad-config-unknown-plugin
bad-config-weight
bad-config-plugin-args
bad-config-duplicate-plugin-config
bad-config-queue-sort
bad-config-no-bind
bad-output-format
bad-metrics-bind-address
bad-logging-format
logging-json
logging-v4-extension-points
events-summary
other-scheduler-skipped
fail-on-unschedulable
help-and-version
explain-keeps-placements
explain-one-pod-top-nodes
unknown-fields-warn
bad-unknown-fields-strict
cluster-from-stdin
cluster-from-directory
bad-workload-as-manifest
bad-empty-directory
bad-pod-without-containers
bad-label-key
bad-object-name
CASES
}

source "$(dirname "$0")/cli_checks.sh"  # cli_case_args, fail, show, bad
cli_case_args "$@"
examples=$root/bench/examples
fixtures=$root/tests/fixtures/manifests
expected=$root/tests/integration/expected
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT


# run ARGS...: simulate with --output json; sets rc, leaves $tmp/out and $tmp/err.
run() {
  timeout "${KAS_SIMULATE_TIMEOUT:-60}" "$bin" simulate "$@" --output json >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -ne 124 ] || { show; fail "simulate did not finish within ${KAS_SIMULATE_TIMEOUT:-60} s"; }
}


# example NAME: bench/examples/NAME.{yaml,json} against expected/NAME.json.
example() {
  local file=$examples/$1.yaml
  [ -f "$file" ] || file=$examples/$1.json
  [ -f "$file" ] || fail "no example $1"
  run --cluster "$file" "${@:2}"
  [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0"; }
  python3 - "$expected/$1.json" "$tmp/out" <<'PY' || { show; fail "output differs from expected/$1.json"; }
import json, sys
want = json.load(open(sys.argv[1]))
try:
    got = json.load(open(sys.argv[2]))
except ValueError as e:
    sys.exit("stdout is not one JSON object: %s" % e)
# The expected file is the contract: every key it names must match exactly; the output may carry
# more keys (attempts, timings), and the pod list must have the same length and order.
def project(g, w):
    if isinstance(w, dict) and isinstance(g, dict):
        return {k: project(g.get(k), v) for k, v in w.items()}
    if isinstance(w, list) and isinstance(g, list) and len(w) == len(g):
        return [project(x, y) for x, y in zip(g, w)]
    return g
if isinstance(got, dict):
    got = project(got, want)
if got == want:
    sys.exit(0)
wp, gp = want.get("pods", []), got.get("pods", []) if isinstance(got, dict) else []
for i in range(max(len(wp), len(gp))):
    w = wp[i] if i < len(wp) else None
    g = gp[i] if i < len(gp) else None
    if w != g:
        print("pods[%d]:\n  want %s\n  got  %s" % (i, json.dumps(w, sort_keys=True), json.dumps(g, sort_keys=True)),
              file=sys.stderr)
if isinstance(got, dict) and want.get("summary") != got.get("summary"):
    print("summary:\n  want %s\n  got  %s" % (json.dumps(want.get("summary"), sort_keys=True),
                                            json.dumps(got.get("summary"), sort_keys=True)), file=sys.stderr)
sys.exit(1)
PY
}


f=$fixtures
case "$name" in
  example-basic) example basic ;;
  example-taints) example taints ;;
  example-affinity) example affinity ;;
  example-ports) example ports ;;
  example-resources-extended) example resources-extended ;;
  example-cluster-dump) example cluster-dump ;;
  example-cluster-list) example cluster-list ;;
  example-parity-ports) example parity-ports ;;
  example-parity-resources) example parity-resources ;;
  example-preemption) example preemption ;;
  example-preemption-pdb) example preemption-pdb ;;
  example-pod-affinity) example pod-affinity ;;
  example-topology-spread) example topology-spread ;;
  example-balanced-images) example balanced-images ;;
  example-volumes) example volumes ;;
  gangs)
    # bench/examples/gangs.yaml (its header says what each group must do): whole or nothing, one
    # zone, held until the quorum of pods or the group exists; every pending member names its group.
    run --cluster "$examples/gangs.yaml"
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    python3 - "$tmp/out" <<'PY' || { show; fail "gang placements are wrong"; }
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["pods"]}
def group(prefix):
    return [p for n, p in pods.items() if n.startswith(prefix + "-")]
errors = []
for p in group("train"):
    if p["status"] != "Scheduled" or not p["node"].startswith("b"):
        errors.append("train must land whole in zone-b: %s" % p)
for p in group("eval"):
    if p["status"] != "Scheduled":
        errors.append("eval must be placed whole: %s" % p)
for p in group("big"):
    if p["status"] != "Unschedulable" or "pod group default/big" not in p["message"]:
        errors.append("big must be wholly pending, naming its group: %s" % p)
if not any("members could be placed (minCount 6)" in p["message"] for p in group("big")):
    errors.append("no member of big reports the gang's count")
for p in group("short"):
    if p["message"] != "waiting for minCount pods from a gang to appear in scheduling queue":
        errors.append("short must wait for its quorum of pods: %s" % p)
if pods["orphan"]["message"] != 'waiting for pod\'s pod group "ghost" to appear in scheduling queue':
    errors.append("orphan must wait for its group: %s" % pods["orphan"])
if errors:
    sys.exit("\n".join(errors))
PY
    ;;
  bad-missing-file)
    bad "$tmp/absent.yaml" -- --cluster "$tmp/absent.yaml" ;;
  bad-invalid-yaml)
    bad "bad-yaml.yaml: document 2: line 12" "invalid YAML" -- --cluster "$f/bad-yaml.yaml" ;;
  bad-invalid-json)
    bad "bad-json.json: line 6" "invalid JSON" -- --cluster "$f/bad-json.json" ;;
  bad-no-kind)
    bad "no-kind.yaml: document 2" "kind" -- --cluster "$f/no-kind.yaml" ;;
  bad-not-a-mapping)
    bad "not-a-mapping.yaml: document 2" "mapping" -- --cluster "$f/not-a-mapping.yaml" ;;
  bad-no-name)
    bad "no-name.yaml: document 1" "metadata.name" -- --cluster "$f/no-name.yaml" ;;
  bad-wrong-api-version)
    bad "wrong-api-version.yaml: document 1" "apiVersion" "apps/v1" -- --cluster "$f/wrong-api-version.yaml" ;;
  bad-duplicate-key)
    bad "duplicate-key.yaml: document 1" "spec.containers[0]" "image" -- --cluster "$f/duplicate-key.yaml" ;;
  bad-wrong-field-type)
    bad "wrong-type.yaml: document 2" "spec.priority" -- --cluster "$f/wrong-type.yaml" ;;
  bad-quantity)
    bad "bad-quantity.yaml: document 2" "spec.containers[0].resources.requests.cpu" "2 cores" \
      -- --cluster "$f/bad-quantity.yaml" ;;
  bad-negative-request)
    bad "negative-request.yaml: document 2" "shop/web" "spec.containers[0].resources.requests.memory" \
      -- --cluster "$f/negative-request.yaml" ;;
  bad-duplicate-node)
    bad "duplicate-node.yaml: document 3 (Node n1)" "duplicate-node.yaml: document 1 (Node n1)" \
      -- --cluster "$f/duplicate-node.yaml" ;;
  bad-duplicate-node-across-files)
    bad "node-n1.yaml: document 1 (Node n1)" "already defined in" "basic.yaml: document 1 (Node n1)" \
      -- --cluster "$examples/basic.yaml" --cluster "$f/node-n1.yaml" ;;
  bad-duplicate-pod)
    bad "duplicate-pod.yaml: document 1 item 2 (Pod default/web)" "duplicate-pod.yaml: document 1 item 1" \
      -- --cluster "$f/duplicate-pod.yaml" ;;
  bad-pod-on-unknown-node)
    bad "unknown-node.yaml: document 2 (Pod default/x)" "spec.nodeName" "n9" -- --cluster "$f/unknown-node.yaml" ;;
  bad-unknown-priority-class)
    bad "unknown-priority-class.yaml: document 1" "spec.priorityClassName" "gold" \
      -- --cluster "$f/unknown-priority-class.yaml" ;;
  explain-json)
    # --explain: every filter plugin's verdict per node and every score plugin's three scores.
    run --cluster "$examples/taints.yaml" --explain
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    python3 - "$tmp/out" <<'PY' || { show; fail "explain output is incomplete"; }
import json, sys
d = json.load(open(sys.argv[1]))
pods = {p["name"]: p for p in d["pods"]}
plain = pods["plain"]["explain"]
assert set(plain["filters"]) == {"t1", "t2", "t3", "t4", "t5"}, plain["filters"].keys()
assert plain["filters"]["t5"]["NodeUnschedulable"].startswith("UnschedulableAndUnresolvable"), plain["filters"]["t5"]
assert plain["filters"]["t4"]["TaintToleration"] == "Success"
# The verdict names what did not fit: the taint (kube's reason does not).
assert "untolerated taint {dedicated: gpu} (NoSchedule)" in plain["filters"]["t1"]["TaintToleration"], plain["filters"]["t1"]
assert "untolerated taint {maintenance: } (NoExecute)" in plain["filters"]["t2"]["TaintToleration"], plain["filters"]["t2"]
assert plain["selected"] == pods["plain"]["node"]
rows = {r["node"]: r for r in plain["scores"]}
tt = {p["plugin"]: p for p in rows["t3"]["plugins"]}["TaintToleration"]
assert (tt["raw"], tt["normalized"], tt["weighted"]) == (1, 0, 0), tt  # one PreferNoSchedule taint, weight 3
assert all(r["total"] == sum(p["weighted"] for p in r["plugins"]) for r in plain["scores"])
assert pods["too-big"]["explain"]["selected"] is None
PY
    ;;
  verbose-keeps-stdout-json)
    run --cluster "$examples/basic.yaml" -v 4
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" || { show; fail "stdout is not pure JSON under -v 4"; }
    grep -q "Successfully bound pod to node pod=\"default/small\" node=\"n1\"" "$tmp/err" || { show; fail "-v 4 does not log scheduling decisions on stderr"; }
    ;;
  config-runtime)
    # threads/workers/binders/pipelineDepth from an ActorRuntimeConfiguration give the same placements.
    example basic --config "$root/tests/fixtures/configs/runtime.yaml" ;;
  bad-config-unknown-field)
    bad "unknown-field.yaml: document 1" "wokers" "unknown field" -- --cluster "$examples/basic.yaml" \
      --config "$root/tests/fixtures/configs/unknown-field.yaml" ;;
  bad-config-value)
    bad "bad-value.yaml: document 1" "binders" -- --cluster "$examples/basic.yaml" \
      --config "$root/tests/fixtures/configs/bad-value.yaml" ;;
  config-metrics-off)
    # Metric recording off changes no placement.
    example basic --config "$root/bench/configs/metrics-off.yaml" ;;
  bad-config-record-metrics)
    bad "bad-record-metrics.yaml: document 1" "recordMetrics" "expected true or false" "\"maybe\"" -- \
      --cluster "$examples/basic.yaml" --config "$root/tests/fixtures/configs/bad-record-metrics.yaml" ;;
  bad-config-duplicate-profile)
    bad "duplicate-profile.yaml: document 1" "profiles[1].schedulerName" "Duplicate" -- --cluster "$examples/basic.yaml" \
      --config "$root/tests/fixtures/configs/duplicate-profile.yaml" ;;
  bad-config-missing-file)
    bad "$tmp/none.yaml" -- --cluster "$examples/basic.yaml" --config "$tmp/none.yaml" ;;
  config-multi-profile)
    # Pods pick their profile by schedulerName: bin-packing packs onto n1, the default spreads to n2.
    examples=$root/tests/fixtures/configs
    example multi-profile --config "$examples/multi-profile.config.yaml" ;;
  bad-config-unknown-plugin)
    bad "unknown-plugin.yaml: document 1" "profiles[0].plugins.score.enabled[1].name" "unknown plugin \"Foo\"" \
      -- --cluster "$examples/basic.yaml" --config "$root/tests/fixtures/configs/unknown-plugin.yaml" ;;
  bad-config-weight)
    bad "bad-weight.yaml: document 1" "profiles[0].plugins.score.enabled[0].weight" "-1" \
      -- --cluster "$examples/basic.yaml" --config "$root/tests/fixtures/configs/bad-weight.yaml" ;;
  bad-config-plugin-args)
    bad "bad-plugin-args.yaml: document 1" "profiles[0].pluginConfig[1].args.scoringStrategy.type" "Packed" \
      -- --cluster "$examples/basic.yaml" --config "$root/tests/fixtures/configs/bad-plugin-args.yaml" ;;
  bad-config-duplicate-plugin-config)
    bad "duplicate-plugin-config.yaml: document 1" "profiles[0].pluginConfig[1]" "Duplicate" \
      -- --cluster "$examples/basic.yaml" --config "$root/tests/fixtures/configs/duplicate-plugin-config.yaml" ;;
  bad-config-queue-sort)
    bad "queue-sort-differs.yaml: document 1" "profiles[1].plugins.queueSort" "same for all profiles" \
      -- --cluster "$examples/basic.yaml" --config "$root/tests/fixtures/configs/queue-sort-differs.yaml" ;;
  bad-config-no-bind)
    bad "no-bind.yaml: document 1" "profiles[0].plugins.bind" "bind plugin" \
      -- --cluster "$examples/basic.yaml" --config "$root/tests/fixtures/configs/no-bind.yaml" ;;
  bad-output-format)
    "$bin" simulate --cluster "$examples/basic.yaml" --output yaml >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 2 ] || { show; fail "exit code $rc, want 2"; }
    grep -q -- "--output" "$tmp/err" || { show; fail "stderr does not name --output"; }
    ;;
  bad-metrics-bind-address)
    bad "--metrics-bind-address" "garbage" -- --cluster "$examples/basic.yaml" --metrics-bind-address garbage ;;
  bad-logging-format)
    bad "--logging-format" "xml" -- --cluster "$examples/basic.yaml" --logging-format xml ;;
  logging-v4-extension-points)
    # -v 4: one line per extension point a cycle ran, with its duration (kube's per-point timings);
    # -v 2 does not show them.
    run --cluster "$examples/basic.yaml" --logging-format=json -v 4
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    python3 - "$tmp/err" <<'PY' || { show; fail "no per-extension-point timing lines at -v 4"; }
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ep = [l for l in lines if l["msg"] == "Extension point finished"]
points = {(l["pod"], l["extensionPoint"]) for l in ep}
for want in ["PreFilter", "Filter", "Reserve", "Permit"]:
    assert ("default/small", want) in points, (want, sorted(points))
assert ("default/big", "PostFilter") in points, sorted(points)
assert all(l["duration"].endswith("us") and float(l["duration"][:-2]) >= 0 for l in ep), ep
PY
    run --cluster "$examples/basic.yaml" --logging-format=json -v 2
    if grep -q "Extension point finished" "$tmp/err"; then show; fail "-v 2 shows extension point timings"; fi
    ;;
  logging-json)
    # --logging-format=json: every stderr line is one JSON object with ts, level, msg and the fields.
    run --cluster "$examples/basic.yaml" --logging-format=json -v 2
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    python3 - "$tmp/err" <<'PY' || { show; fail "stderr is not JSON lines with the decision fields"; }
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert lines and all({"ts", "level", "msg"} <= set(l) for l in lines), lines
# Binders run in parallel, so bindings log in any order.
bound = [l for l in lines if l["msg"] == "Successfully bound pod to node"]
assert any({"pod": "default/small", "node": "n1"}.items() <= b.items() for b in bound), bound
assert any(l["msg"].startswith("Unable to schedule pod") and l["pod"] == "default/big" for l in lines), lines
PY
    ;;
  events-summary)
    # The summary counts the cluster's Events by reason (an aggregated Event counts its occurrences).
    run --cluster "$examples/basic.yaml"
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["summary"]["events"]; assert e["Scheduled"]==2 and e["FailedScheduling"]>=1, e' \
      "$tmp/out" || { show; fail "summary.events wrong"; }
    ;;
  other-scheduler-skipped)
    # A pod for another scheduler is Skipped and counted apart, not reported unschedulable.
    run --cluster "$f/other-scheduler.yaml" --fail-on-unschedulable
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc, want 0 (a skipped pod is not pending for us)"; }
    python3 - "$tmp/out" <<'PY' || { show; fail "other-scheduler pod not reported as Skipped"; }
import json, sys
d = json.load(open(sys.argv[1]))
pods = {p["name"]: p for p in d["pods"]}
assert pods["ours"]["status"] == "Scheduled", pods["ours"]
assert pods["batch-job"]["status"] == "Skipped", pods["batch-job"]
assert "volcano" in pods["batch-job"]["message"], pods["batch-job"]
s = d["summary"]
assert (s["scheduled"], s["unschedulable"], s["skipped"]) == (1, 0, 1), s
PY
    ;;
  fail-on-unschedulable)
    # For CI use: a pending pod left pending exits 1, with the usual output; without the flag, 0.
    run --cluster "$f/too-big.yaml"
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc without the flag, want 0"; }
    run --cluster "$f/too-big.yaml" --fail-on-unschedulable
    [ "$rc" -eq 1 ] || { show; fail "exit code $rc with --fail-on-unschedulable, want 1"; }
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["summary"]["unschedulable"]==1' "$tmp/out" \
      || { show; fail "the report is still printed"; }
    grep -q "1 pod(s) not scheduled" "$tmp/err" || { show; fail "stderr does not say why it exits 1"; }
    ;;
  help-and-version)
    # --help on every subcommand names every flag; --version prints the version. Both exit 0.
    for sub in simulate bench; do
      "$bin" $sub --help >"$tmp/out" 2>"$tmp/err"; rc=$?
      [ "$rc" -eq 0 ] || { show; fail "$sub --help: exit $rc"; }
      [ ! -s "$tmp/err" ] || { show; fail "$sub --help wrote to stderr"; }
    done
    "$bin" simulate --help >"$tmp/out"
    for flag in --cluster --config --output --explain --explain-top --fail-on-unschedulable --strict --metrics-bind-address \
                --logging-format -v; do
      grep -q -- "$flag" "$tmp/out" || { show; fail "simulate --help does not describe $flag"; }
    done
    "$bin" bench --help >"$tmp/out"
    for flag in --workload --config --output --report --batching --window-ms --stall-timeout --linger --quiet \
                --metrics-bind-address --logging-format -v; do
      grep -q -- "$flag" "$tmp/out" || { show; fail "bench --help does not describe $flag"; }
    done
    "$bin" --version >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ "$rc" -eq 0 ] && grep -Eq '^kube-actor-scheduler [0-9]+\.[0-9]+\.[0-9]+' "$tmp/out" || { show; fail "--version"; }
    ;;
  explain-keeps-placements)
    # Above 100 nodes kube samples nodes (percentageOfNodesToScore); --explain must report every
    # node without examining more of them for the placement: the same node for every pod.
    python3 "$root/bench/gen_cluster.py" --nodes 500 --pods 20 >"$tmp/c.yaml"
    run --cluster "$tmp/c.yaml"
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    cp "$tmp/out" "$tmp/plain.json"
    run --cluster "$tmp/c.yaml" --explain
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc with --explain"; }
    python3 - "$tmp/plain.json" "$tmp/out" <<'PY' || { show; fail "--explain changed placements"; }
import json, sys
plain, expl = (json.load(open(f)) for f in sys.argv[1:3])
a = [(p["name"], p["node"]) for p in plain["pods"]]
b = [(p["name"], p["node"]) for p in expl["pods"]]
diff = [(x, y) for x, y in zip(a, b) if x != y]
assert not diff, "%d of %d differ, e.g. %s" % (len(diff), len(a), diff[:3])
assert all(len(p["explain"]["filters"]) == 500 for p in expl["pods"]), "every node is reported"
PY
    ;;
  explain-one-pod-top-nodes)
    # --explain NS/NAME explains that pod only; --explain-top N lists N nodes, the selected one first.
    run --cluster "$examples/taints.yaml" --explain default/plain --explain-top 2
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    python3 - "$tmp/out" <<'PY' || { show; fail "--explain NS/NAME --explain-top 2"; }
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["pods"]}
assert "explain" not in pods["too-big"], "only the named pod is explained"
e = pods["plain"]["explain"]
assert len(e["filters"]) == 2 and len(e["scores"]) <= 2, e
assert list(e["filters"])[0] == e["selected"] == pods["plain"]["node"], e
totals = [r["total"] for r in e["scores"]]
assert totals == sorted(totals, reverse=True), totals
PY
    bad "--explain-top" "\"x\"" -- --cluster "$examples/taints.yaml" --explain-top x ;;
  unknown-fields-warn)
    # A typo is a warning naming the document and the path, on stderr and in the JSON's warnings.
    run --cluster "$f/typos.yaml"
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    for p in "document 2 (Pod default/web): spec.nodeselector: unknown field" \
             "document 2 (Pod default/web): spec.containers[0].resources.request: unknown field"; do
      grep -qF -- "$p" "$tmp/err" || { show; fail "stderr does not warn: $p"; }
    done
    python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["warnings"]; assert any("spec.nodeselector: unknown field" in x for x in w), w' \
      "$tmp/out" || { show; fail "warnings missing from the JSON"; } ;;
  bad-unknown-fields-strict)
    bad "typos.yaml: document 2 (Pod default/web)" "spec.nodeselector: unknown field" -- --cluster "$f/typos.yaml" --strict ;;
  cluster-from-stdin)
    timeout 60 "$bin" simulate --cluster - --output json <"$examples/basic.yaml" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    cp "$tmp/out" "$tmp/stdin.json"
    run --cluster "$examples/basic.yaml"
    python3 -c 'import json,sys; a,b=(json.load(open(f))["pods"] for f in sys.argv[1:3]); assert [(p["name"],p["node"]) for p in a]==[(p["name"],p["node"]) for p in b]' \
      "$tmp/stdin.json" "$tmp/out" || { show; fail "stdin gave another answer than the file"; } ;;
  cluster-from-directory)
    # Every .yaml/.yml/.json file of the directory, in name order, as kubectl -f DIR.
    mkdir -p "$tmp/d"
    cp "$examples/basic.yaml" "$tmp/d/a.yaml"
    printf 'ignored' >"$tmp/d/notes.txt"
    run --cluster "$tmp/d"
    [ "$rc" -eq 0 ] || { show; fail "exit code $rc"; }
    cp "$tmp/out" "$tmp/dir.json"
    run --cluster "$examples/basic.yaml"
    cmp -s <(python3 -c 'import json,sys; print([(p["name"],p["node"]) for p in json.load(open(sys.argv[1]))["pods"]])' "$tmp/dir.json") \
           <(python3 -c 'import json,sys; print([(p["name"],p["node"]) for p in json.load(open(sys.argv[1]))["pods"]])' "$tmp/out") \
      || { show; fail "the directory gave another answer than its file"; } ;;
  bad-workload-as-manifest)
    bad "ci-small.yaml: document 1" "bench workload file" "bench --workload" -- --cluster "$root/bench/workloads/ci-small.yaml" ;;
  bad-empty-directory)
    mkdir -p "$tmp/empty"
    bad "$tmp/empty" "no .yaml, .yml or .json file" -- --cluster "$tmp/empty" ;;
  bad-pod-without-containers)
    # What the apiserver refuses is refused here too (exit 2), with its field error.
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n' >"$tmp/p.yaml"
    bad "p.yaml: document 1 (Pod default/p)" "spec.containers: Required value" -- --cluster "$tmp/p.yaml" ;;
  bad-label-key)
    printf 'apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {"bad key!": v}}\n' >"$tmp/n.yaml"
    bad "(Node n)" 'metadata.labels: Invalid value: "bad key!": name part must consist' -- --cluster "$tmp/n.yaml" ;;
  bad-object-name)
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: Web_1}\nspec: {containers: [{name: c}]}\n' >"$tmp/p.yaml"
    bad 'metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain' -- --cluster "$tmp/p.yaml" ;;
  *) fail "unknown case (see --list)" ;;
esac
echo "ok [$name]"

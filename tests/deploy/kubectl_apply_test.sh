#!/usr/bin/env bash
# deploy.kubectl_apply: `kubectl apply -f deploy/` against a fresh test apiserver creates every
# object of the manifests; each one reads back with the same kind, namespace, name and content the
# manifest gives (labels, data, spec, rules); a second apply changes nothing.
#   kubectl_apply_test.sh APISERVER REPO
# Readiness is the apiserver's "listening on" line; nothing sleeps.
set -euo pipefail
apiserver="$1" repo="$2"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 77; }
work="$(mktemp -d)"
api_pid=""
cleanup() {
  [ -n "$api_pid" ] && { kill -TERM "$api_pid" 2>/dev/null || true; wait "$api_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkfifo "$work/api.out"
"$apiserver" --listen 127.0.0.1:0 --cert-dir "$work/certs" >"$work/api.out" 2>"$work/api.err" &
api_pid=$!
exec 3<"$work/api.out"
read -r -t 60 line <&3 || fail "the test apiserver did not start: $(cat "$work/api.err")"
cat <&3 >/dev/null &
export KUBECONFIG="$work/certs/kubeconfig"

kubectl apply -f "$repo/deploy/" >"$work/apply1.out" 2>&1 || fail "kubectl apply: $(cat "$work/apply1.out")"
cat "$work/apply1.out"
kubectl get -f "$repo/deploy/" -o json >"$work/got.json" 2>"$work/get.err" || fail "kubectl get -f deploy/: $(cat "$work/get.err")"
kubectl apply -f "$repo/deploy/" >"$work/apply2.out" 2>&1 || fail "second kubectl apply: $(cat "$work/apply2.out")"
python3 - "$repo/deploy" "$work/apply1.out" "$work/got.json" "$work/apply2.out" <<'PY'
import glob, json, os, sys
import yaml
deploy, apply1, got, apply2 = sys.argv[1:5]
want = [d for f in sorted(glob.glob(os.path.join(deploy, "*.yaml"))) for d in yaml.safe_load_all(open(f)) if d]
items = json.load(open(got))["items"]
key = lambda o: (o["apiVersion"], o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
have = {key(o): o for o in items}
problems = []
def subset(w, h, path):
    # Everything the manifest says is in the stored object (the server adds metadata and status).
    if isinstance(w, dict):
        if not isinstance(h, dict):
            return problems.append("%s: want an object, got %r" % (path, h))
        for k, v in w.items():
            if k not in h:
                problems.append("%s.%s: missing" % (path, k))
            else:
                subset(v, h[k], path + "." + k)
    elif isinstance(w, list):
        if not isinstance(h, list) or len(w) != len(h):
            return problems.append("%s: want %r, got %r" % (path, w, h))
        for i, (a, b) in enumerate(zip(w, h)):
            subset(a, b, "%s[%d]" % (path, i))
    elif str(w) != str(h):
        problems.append("%s: want %r, got %r" % (path, w, h))
for w in want:
    k = key(w)
    if k not in have:
        problems.append("not read back: %s %s/%s" % (k[1], k[2], k[3]))
        continue
    subset({x: y for x, y in w.items() if x != "status"}, have[k], "%s/%s" % (k[1], k[3]))
created = [l for l in open(apply1) if l.strip().endswith(" created")]
if len(created) != len(want):
    problems.append("first apply created %d objects, the manifests hold %d" % (len(created), len(want)))
changed = [l for l in open(apply2) if not l.strip().endswith(" unchanged")]
if changed:
    problems.append("second apply changed: %s" % "".join(changed))
for p in problems:
    print("PROBLEM:", p)
if problems:
    sys.exit("%d problem(s)" % len(problems))
print("ok: %d objects created, read back as written, and unchanged by a second apply" % len(want))
PY

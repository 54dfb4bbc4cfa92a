#!/usr/bin/env bash
# kubectl against the test apiserver fixture: discovery, server-side printing (Tables), apply
# (create, then a strategic merge patch), watch, delete and events. Exit 77 (ctest SKIP) when kubectl
# is not installed. Readiness is the server's `listening on` line, read from a coprocess pipe.
set -euo pipefail
bin="$1"
if ! command -v kubectl >/dev/null 2>&1; then
  echo "SKIP: kubectl is not installed"
  exit 77
fi
dir=$(mktemp -d /tmp/kas-kubectl-XXXXXX)
coproc SRV { exec "$bin" --listen 127.0.0.1:0 --kubeconfig-out "$dir/kubeconfig"; }
srv_pid=$SRV_PID
cleanup() { kill "$srv_pid" 2>/dev/null || true; wait "$srv_pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
read -r line <&"${SRV[0]}"
echo "$line"
export KUBECONFIG="$dir/kubeconfig"
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect NAME PATTERN TEXT
  grep -Eq -- "$2" <<<"$3" || fail "$1: expected /$2/ in:"$'\n'"$3"
}

cat >"$dir/objects.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels:
    node-role.kubernetes.io/worker: ""
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True"}
  nodeInfo: {kubeletVersion: v1.32.0}
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  containers:
  - name: c
    image: nginx
YAML

out=$(kubectl apply -f "$dir/objects.yaml" 2>&1); expect "apply (create)" "pod/web created" "$out"
expect "apply (create)" "node/node-a created" "$out"
out=$(kubectl get nodes 2>&1); expect "get nodes" "^NAME +STATUS +ROLES +AGE +VERSION" "$out"
expect "get nodes" "^node-a +Ready +worker +[0-9]+s +v1.32.0" "$out"
out=$(kubectl get pods -o wide 2>&1)
expect "get pods -o wide" "^NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES" "$out"
expect "get pods -o wide" "^web +0/1 +Pending +0 " "$out"
sed -i 's/image: nginx$/image: nginx:1.27/' "$dir/objects.yaml"
out=$(kubectl apply -f "$dir/objects.yaml" 2>&1); expect "apply (patch)" "pod/web configured" "$out"
expect "apply (patch)" "node/node-a unchanged" "$out"
out=$(kubectl get pod web -o jsonpath='{.spec.containers[0].image}'); expect "patched image" "^nginx:1.27$" "$out"
out=$(kubectl get pods -l app=web -o name 2>&1); expect "label selector" "^pod/web$" "$out"

# A watch (kubectl ... -w on a FIFO) must print the pod and then its deletion. watch_wait reads its
# lines as they come, copying them to the watch's file, until PATTERN has matched N times in all;
# the 60 s read timeout only bounds a hang.
start_watch() {  # start_watch FILE kubectl-args...
  watch_file=$1
  shift
  rm -f "$dir/watch.fifo"
  mkfifo "$dir/watch.fifo"
  kubectl "$@" --request-timeout=60s >"$dir/watch.fifo" 2>&1 &
  watch_pid=$!
  exec 7<"$dir/watch.fifo"
  : >"$watch_file"
}
watch_wait() {  # watch_wait PATTERN N
  local line
  until [ "$(grep -cE "$1" "$watch_file")" -ge "$2" ]; do
    IFS= read -r -t 60 line <&7 || break
    printf '%s\n' "$line" >>"$watch_file"
  done
}
stop_watch() {
  kill "$watch_pid" 2>/dev/null || true
  wait "$watch_pid" 2>/dev/null || true
  exec 7<&-
}
start_watch "$dir/watch.out" get pods -w
watch_wait '^web ' 1
out=$(kubectl delete pod web 2>&1); expect "delete pod" 'pod "web" deleted' "$out"
watch_wait '^web ' 2
stop_watch
out=$(cat "$dir/watch.out"); expect "get pods -w" "^web +0/1 +Pending" "$out"
[ "$(grep -c '^web ' <<<"$out")" -ge 2 ] || fail "get pods -w: expected the deletion as a second row:"$'\n'"$out"

kubectl create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Event
metadata: {name: web.1, namespace: default}
involvedObject: {kind: Pod, name: web, namespace: default}
reason: Scheduled
message: Successfully assigned default/web to node-a
type: Normal
YAML
out=$(kubectl get events 2>&1); expect "get events" "Normal +Scheduled +pod/web +Successfully assigned" "$out"

# Events posted through events.k8s.io/v1 (as the scheduler posts them) are the same resource as core
# events: `kubectl get events` lists them, -A across namespaces, -w as they arrive.
sched_event() {  # sched_event NAME NAMESPACE POD REASON TYPE NOTE
  kubectl create -f - >/dev/null <<YAML
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: $1, namespace: $2}
eventTime: "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"
reportingController: kube-actor-scheduler
reportingInstance: kube-actor-scheduler-0
action: Binding
reason: $4
type: $5
note: "$6"
regarding: {kind: Pod, name: $3, namespace: $2}
YAML
}
sched_event web.2 default web Scheduled Normal "Successfully assigned default/web to node-b"
out=$(kubectl get events 2>&1)
expect "get events (events.k8s.io)" "^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE" "$out"
expect "get events (events.k8s.io)" "^[0-9]+s +Normal +Scheduled +pod/web +Successfully assigned default/web to node-b" "$out"
start_watch "$dir/events.out" get events -A -w
watch_wait 'node-b' 1
sched_event api.1 kube-system api FailedScheduling Warning "0/1 nodes are available"
watch_wait 'FailedScheduling' 1
stop_watch
out=$(cat "$dir/events.out")
expect "get events -A -w" "^NAMESPACE +LAST SEEN +TYPE +REASON +OBJECT +MESSAGE" "$out"
expect "get events -A -w" "^default +[0-9]+s +Normal +Scheduled +pod/web +Successfully assigned default/web to node-b" "$out"
expect "get events -A -w" "^kube-system +[0-9]+s +Warning +FailedScheduling +pod/api +0/1 nodes are available" "$out"
out=$(kubectl get events.v1.events.k8s.io web.1 -o jsonpath='{.note}/{.regarding.name}')
expect "core event through events.k8s.io" "^Successfully assigned default/web to node-a/web$" "$out"
out=$(kubectl get pod ghost 2>&1 || true); expect "get missing pod" 'pods "ghost" not found' "$out"
echo "PASS"

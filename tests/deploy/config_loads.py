"""deploy.config_loads: the configuration deploy/10-configmap.yaml embeds loads and schedules.

    config_loads.py SCHEDULER DEPLOY_DIR WORKDIR

Extracts the ConfigMap's config.yaml and runs `simulate --config` with it on a small cluster: every
pod that names the kube-actor-scheduler profile is scheduled, and a pod of another scheduler is left
alone (Skipped: no profile of that name). Also checks that the config names the profile
and the Lease the rest of deploy/ expects, and that `run` accepts deploy/20-deployment.yaml's
command line with it: outside a cluster it gets past the flags and the config and stops at the
in-cluster connection (exit 2, "not running in a Kubernetes cluster").
"""
import json
import os
import subprocess
import sys

import yaml

sched, deploy_dir, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
cms = [d for d in yaml.safe_load_all(open(os.path.join(deploy_dir, "10-configmap.yaml"))) if d and d["kind"] == "ConfigMap"]
assert len(cms) == 1, cms
config = cms[0]["data"]["config.yaml"]
docs = list(yaml.safe_load_all(config))
kinds = [d["kind"] for d in docs]
assert kinds == ["KubeSchedulerConfiguration", "ActorRuntimeConfiguration"], kinds
ksc = docs[0]
assert [p["schedulerName"] for p in ksc["profiles"]] == ["kube-actor-scheduler"], ksc["profiles"]
le = ksc["leaderElection"]
assert le["leaderElect"] is True and le["resourceLock"] == "leases", le
assert (le["resourceNamespace"], le["resourceName"]) == ("kube-system", "kube-actor-scheduler"), le
assert not ksc.get("clientConnection", {}).get("kubeconfig"), "in-cluster config expected (no kubeconfig)"

cfg = os.path.join(work, "config.yaml")
open(cfg, "w").write(config)
cluster = os.path.join(work, "cluster.yaml")
nodes = ["""apiVersion: v1
kind: Node
metadata: {name: n%d, labels: {kubernetes.io/hostname: n%d}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
""" % (i, i) for i in (1, 2)]
pods = ["""apiVersion: v1
kind: Pod
metadata: {name: p%d, namespace: default}
spec:
  schedulerName: kube-actor-scheduler
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "1", memory: 1Gi}}}]
""" % i for i in range(1, 6)]
other = """apiVersion: v1
kind: Pod
metadata: {name: theirs, namespace: default}
spec:
  schedulerName: default-scheduler
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
"""
open(cluster, "w").write("---\n".join(nodes + pods + [other]))
r = subprocess.run([sched, "simulate", "--config", cfg, "--cluster", cluster, "-o", "json", "--fail-on-unschedulable"],
                   capture_output=True, text=True)
if r.returncode != 0:
    sys.exit("simulate exited %d: %s" % (r.returncode, r.stderr[-2000:]))
out = json.loads(r.stdout)
placed = {p["name"]: p["node"] for p in out["pods"] if p["status"] == "Scheduled"}
want = {"p%d" % i for i in range(1, 6)}
assert set(placed) == want, (placed, r.stdout)
theirs = [p for p in out["pods"] if p["name"] == "theirs"]
assert [p["status"] for p in theirs] == ["Skipped"], r.stdout
print("ok: the ConfigMap's config schedules %s" % placed)

# The Deployment's command line, with --config pointing at the extracted file.
dep = [d for d in yaml.safe_load_all(open(os.path.join(deploy_dir, "20-deployment.yaml"))) if d and d["kind"] == "Deployment"][0]
c = dep["spec"]["template"]["spec"]["containers"][0]
argv = [sched] + c["command"][1:] + [("--config=" + cfg) if a.startswith("--config=") else a for a in c["args"]]
env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_SERVICE_") and k != "KUBECONFIG"}
env["HOME"] = work  # no ~/.kube/config
r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
assert r.returncode == 2 and "not running in a Kubernetes cluster" in r.stderr, (argv, r.returncode, r.stderr[-2000:])
print("ok: run accepts the Deployment's flags and config: %s" % " ".join(argv[1:]))

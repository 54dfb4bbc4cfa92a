"""deploy.manifests: the Deployment's hardening and wiring in deploy/.

    check_manifests.py DEPLOY_DIR

Checks what kubectl apply cannot: 2 replicas; the container runs `run` with --config pointing into
the mounted ConfigMap, leader election on and the secure port 10259; liveness /livez and readiness
/readyz over HTTPS on that port; requests and limits; non-root (uid 65532, the Dockerfile's),
read-only root filesystem, no privilege escalation, every capability dropped, seccomp
RuntimeDefault; the ServiceAccount the RBAC binds; the Service and the scrape config on the same
port, over https with the bearer token.
"""
import glob
import os
import sys

import yaml

deploy_dir = sys.argv[1]
objs = {}
for f in sorted(glob.glob(os.path.join(deploy_dir, "*.yaml"))):
    for d in yaml.safe_load_all(open(f)):
        if d:
            objs.setdefault(d["kind"], []).append(d)
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def one(kind):
    got = objs.get(kind, [])
    if len(got) != 1:
        sys.exit("deploy/ must hold exactly one %s, found %d" % (kind, len(got)))
    return got[0]


dep, sa, cm, svc, smon = (one(k) for k in ("Deployment", "ServiceAccount", "ConfigMap", "Service", "ServiceMonitor"))
ns = dep["metadata"]["namespace"]
for o in (sa, cm, svc, smon):
    check(o["metadata"]["namespace"] == ns, "%s %s is not in %s" % (o["kind"], o["metadata"]["name"], ns))
spec = dep["spec"]
check(spec["replicas"] == 2, "replicas %s, want 2" % spec["replicas"])
pod = spec["template"]["spec"]
labels = spec["template"]["metadata"]["labels"]
check(all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items()), "the selector does not select the template")
check(pod.get("serviceAccountName") == sa["metadata"]["name"], "serviceAccountName is not deploy/'s ServiceAccount")
check(pod.get("automountServiceAccountToken", True) is not False, "the service-account token must be mounted (in-cluster config)")
psc = pod.get("securityContext", {})
check(psc.get("runAsNonRoot") is True, "pod securityContext.runAsNonRoot")
check(psc.get("runAsUser") == 65532, "pod runAsUser %s, want 65532 (the image's user)" % psc.get("runAsUser"))
check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "pod seccompProfile RuntimeDefault")
check(not pod.get("hostNetwork") and not pod.get("hostPID"), "no host namespaces")
containers = pod["containers"]
check(len(containers) == 1, "one container")
c = containers[0]
argv = c.get("command", []) + c.get("args", [])
check(argv[:2] == ["/usr/local/bin/kube-actor-scheduler", "run"], "the container runs `kube-actor-scheduler run`: %s" % argv)


def flag(name):
    vals = [a.split("=", 1)[1] for a in argv if a.startswith(name + "=")]
    vals += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == name]
    return vals[0] if vals else None


config = flag("--config")
mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
vols = {v["name"]: v for v in pod.get("volumes", [])}
cm_vol = [n for n, v in vols.items() if v.get("configMap", {}).get("name") == cm["metadata"]["name"]]
check(len(cm_vol) == 1, "a volume of the ConfigMap %s" % cm["metadata"]["name"])
if cm_vol and config:
    m = mounts.get(cm_vol[0])
    check(m is not None and m.get("readOnly") is True, "the config volume is mounted read-only")
    if m:
        key = os.path.relpath(config, m["mountPath"])
        check(key in cm["data"], "--config %s is not a key of the ConfigMap mounted at %s" % (config, m["mountPath"]))
else:
    check(False, "--config is given")
check(flag("--leader-elect") in ("true", None) and ("--leader-elect" in argv or flag("--leader-elect") == "true"),
      "--leader-elect=true")
port = int(flag("--secure-port") or 0)
check(port == 10259, "--secure-port %s, want 10259" % port)
ports = {p["name"]: p for p in c.get("ports", [])}
check(any(p["containerPort"] == port for p in ports.values()), "the secure port is a container port")
port_names = {p["name"] for p in ports.values() if p["containerPort"] == port}
for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
    g = c.get(probe, {}).get("httpGet", {})
    check(g.get("path") == path and g.get("scheme") == "HTTPS" and (g.get("port") in port_names or g.get("port") == port),
          "%s: GET %s over HTTPS on the secure port: %s" % (probe, path, g))
res = c.get("resources", {})
for kind in ("requests", "limits"):
    check(all(res.get(kind, {}).get(r) for r in ("cpu", "memory")), "resources.%s cpu and memory" % kind)
csc = c.get("securityContext", {})
check(csc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem")
check(csc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation false")
check(csc.get("capabilities", {}).get("drop") == ["ALL"] and not csc.get("capabilities", {}).get("add"),
      "capabilities drop [ALL], none added")
check(csc.get("privileged") in (None, False), "not privileged")
check(csc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True, "container runAsNonRoot")
# The runtime config's threads fit the CPU limit.
ksc_docs = list(yaml.safe_load_all(cm["data"][os.path.basename(config or "config.yaml")]))
runtime = [d for d in ksc_docs if d["kind"] == "ActorRuntimeConfiguration"]
cpu = str(res.get("limits", {}).get("cpu", "0"))
cpus = float(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)
check(len(runtime) == 1 and runtime[0].get("threads", 2) <= max(1, cpus),
      "ActorRuntimeConfiguration threads fit the CPU limit (%s)" % cpu)
# Service and scrape config.
check(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), "the Service selects the pods")
svc_ports = [p for p in svc["spec"]["ports"] if p.get("targetPort") in port_names or p.get("targetPort") == port]
check(len(svc_ports) == 1, "the Service exposes the secure port")
for what, ann in (("Service", svc["metadata"].get("annotations", {})),
                  ("pod template", spec["template"]["metadata"].get("annotations", {}))):
    check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/scheme") == "https" and
          ann.get("prometheus.io/port") == str(port) and ann.get("prometheus.io/path") == "/metrics",
          "%s: prometheus.io/* annotations for https on %d" % (what, port))
eps = smon["spec"]["endpoints"]
check(all(labels.get(k) == v for k, v in smon["spec"]["selector"]["matchLabels"].items()) or
      all(svc["metadata"]["labels"].get(k) == v for k, v in smon["spec"]["selector"]["matchLabels"].items()),
      "the ServiceMonitor selects the Service")
check(len(eps) == 1 and eps[0].get("scheme") == "https" and eps[0].get("path") == "/metrics" and
      eps[0].get("port") in {p["name"] for p in svc_ports} and
      eps[0].get("bearerTokenFile") == "/var/run/secrets/kubernetes.io/serviceaccount/token",
      "ServiceMonitor endpoint: https /metrics on the Service's port with the bearer token file: %s" % eps)
for p in problems:
    print("PROBLEM:", p)
if problems:
    sys.exit("%d problem(s)" % len(problems))
print("ok: the Deployment is hardened and wired to its ConfigMap, ServiceAccount, Service and scrape config")

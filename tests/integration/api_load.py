#!/usr/bin/env python3
"""The client side of the real-cluster tests (cluster_cli_test.sh): creates nodes and pods through
the test apiserver's API, waits until the scheduler has bound them, and checks the final state.
HTTP/1.1 over TLS with the client certificate the fixture wrote (--cert-dir), JSON bodies.

  api_load.py create  --server URL --certs DIR --nodes N --pods M [--namespace NS] [--scheduler NAME]
  api_load.py wait    --server URL --certs DIR --pods M [--timeout S]   (prints seconds to all bound)
  api_load.py check   --server URL --certs DIR --pods M --nodes N       (invariants on the final state)
  api_load.py churn   --server URL --certs DIR --rounds R [--seed S]     (pods created, relabelled and
                                                                          deleted; nodes added, cordoned, removed)
  api_load.py compare --server URL --certs DIR --dump FILE               (the scheduler's cache dump, as its
                                                                          SIGUSR2 logs it, against the API)
  api_load.py gc      --server URL --certs DIR                           (kube's pod GC, orphans: deletes the pods
                                                                          bound to a node the API does not have)
  api_load.py orphan  --server URL --certs DIR --node N --pod NS/NAME    (deletes node N, then binds the pod to it,
                                                                          as a scheduler that has not seen the delete)
  api_load.py faults  --server URL --certs DIR                           (the fixture's injected-fault counts)
  api_load.py list    --server URL --certs DIR --path URL                (every object of a list URL, as JSON)
  api_load.py apply   --server URL --certs DIR --file F                  (creates the items of a JSON v1 List)
  api_load.py placements --server URL --certs DIR                        (every pod's node, as JSON)
  api_load.py event-recreate --server URL --certs DIR --pod NS/NAME --delete-pod NS/NAME
                                                                         (the pod's FailedScheduling Event is deleted,
                                                                          then --delete-pod is, which retries the pod:
                                                                          its repeat must create the Event again)
  api_load.py preemption --server URL --certs DIR --file F --node N --victim NS/NAME --survivor NS/NAME
                                                                         (creates the pod in F, then follows the
                                                                          pods' watch until it is bound: checks
                                                                          what kube-scheduler's preemption writes)
  api_load.py split-log --dir DIR [--announce] < LOG                     (the scheduler's log to DIR/run.err,
                                                                          each cache dump to DIR/dump.N; with
                                                                          --announce, leader election moments)

Exit status 0 on success; failures print one line per problem on stderr.
"""
import argparse
import http.client
import json
import os
import random
import ssl
import sys
import threading
import time
import urllib.parse

CPU_MILLI_PER_NODE = 4000
MEM_PER_NODE = 32 * 1024 ** 3
POD_CPU_MILLI = 100
POD_MEM = 500 * 1024 ** 2


class Api:
    def __init__(self, server, certs):
        u = urllib.parse.urlparse(server)
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=certs + "/ca.crt")
        self.ctx.load_cert_chain(certs + "/client.crt", certs + "/client.key")
        self.local = threading.local()

    def conn(self):
        c = getattr(self.local, "c", None)
        if c is None:
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=60)
            self.local.c = c
        return c

    def call(self, method, path, body=None, ctype="application/json"):
        cut = False  # an earlier attempt lost its connection: its write may have been applied
        for attempt in range(5):
            c = self.conn()
            try:
                headers = {"Accept": "application/json"}
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    headers["Content-Type"] = ctype
                c.request(method, path, body=data, headers=headers)
                r = c.getresponse()
                payload = r.read()
                if r.status == 500 and attempt < 4:  # the fixture's injected write failures
                    continue
                resp = json.loads(payload) if payload else {}
                if cut and method == "POST" and r.status == 409 and resp.get("reason") == "AlreadyExists":
                    return 201, resp  # the create cut by a restart had been applied before the cut
                return r.status, resp
            except (http.client.HTTPException, OSError):
                cut = True
                c.close()
                self.local.c = None
                if attempt == 4:
                    raise
                time.sleep(0.1 * 2 ** attempt)  # an apiserver restart refuses connections for a while
        return 0, {}

    def list_all(self, path):
        items, cont = [], ""
        while True:
            q = "?limit=500" + ("&continue=" + urllib.parse.quote(cont) if cont else "")
            st, body = self.call("GET", path + q)
            if st != 200:
                raise RuntimeError("list %s: HTTP %d %s" % (path, st, body.get("message", "")))
            items += body.get("items", [])
            cont = body.get("metadata", {}).get("continue", "")
            if not cont:
                return items


def node(i):
    q = {"cpu": "%dm" % CPU_MILLI_PER_NODE, "memory": str(MEM_PER_NODE), "pods": "110"}
    return {"kind": "Node", "apiVersion": "v1",
            "metadata": {"name": "node-%d" % i, "labels": {"kubernetes.io/hostname": "node-%d" % i,
                                                           "topology.kubernetes.io/zone": "zone-%d" % (i % 3)}},
            "status": {"capacity": q, "allocatable": q,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(ns, i, scheduler):
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "pod-%d" % i, "namespace": ns, "labels": {"app": "load"}},
            "spec": {"schedulerName": scheduler,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "%dm" % POD_CPU_MILLI,
                                                                "memory": str(POD_MEM)}}}]}}


def parallel(api, jobs, threads=4):
    errors = []
    it = iter(jobs)
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                job = next(it, None)
            if job is None:
                return
            method, path, body = job
            try:
                st, resp = api.call(method, path, body)
            except (http.client.HTTPException, OSError) as e:  # a dead worker would lose its jobs silently
                st, resp = 0, {"message": str(e)}
            if st not in (200, 201):
                with lock:
                    errors.append("%s %s: HTTP %d %s" % (method, path, st, resp.get("message", "")))

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errors


def create(api, a):
    jobs = [("POST", "/api/v1/namespaces", {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": a.namespace}})]
    errors = parallel(api, jobs, 1)
    errors = [e for e in errors if "409" not in e]
    jobs = [("POST", "/api/v1/nodes", node(i)) for i in range(a.nodes)]
    jobs += [("POST", "/api/v1/namespaces/%s/pods" % a.namespace, pod(a.namespace, i, a.scheduler)) for i in range(a.pods)]
    errors += parallel(api, jobs)
    for e in errors[:20]:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


def wait(api, a):
    """Until --pods pods are bound; with --pods 0, until every stored pod is. Follows a watch (no
    polling); a watch that ends (a timeout, an injected close, 410 after compaction) relists."""
    t0 = time.monotonic()
    bound, n = {}, 0
    while time.monotonic() - t0 < a.timeout:
        st, body = api.call("GET", "/api/v1/pods")
        if st != 200:
            continue
        bound = {p["metadata"]["namespace"] + "/" + p["metadata"]["name"]: bool(p.get("spec", {}).get("nodeName"))
                 for p in body.get("items", [])}
        rv = body["metadata"]["resourceVersion"]
        for _ in watch_events(api, "/api/v1/pods", rv, t0 + a.timeout, bound):
            n = sum(bound.values())
            if (a.pods and n >= a.pods) or (not a.pods and bound and n == len(bound)):
                print("%.2f" % (time.monotonic() - t0))
                return 0
    print("error: %d of %d pods bound after %d s" % (n, a.pods or len(bound), a.timeout), file=sys.stderr)
    return 1


def watch_events(api, path, rv, deadline, bound):
    """Applies a watch's events to `bound` (key -> has a node), yielding after each (and once at
    the start); returns when the stream ends or fails."""
    yield None
    c = http.client.HTTPSConnection(api.host, api.port, context=api.ctx,
                                    timeout=max(1, deadline - time.monotonic()))
    try:
        c.request("GET", path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv,
                  headers={"Accept": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            return
        for line in r:
            ev = json.loads(line)
            obj = ev.get("object", {})
            if ev.get("type") not in ("ADDED", "MODIFIED", "DELETED"):
                if ev.get("type") == "ERROR":
                    return
                continue
            key = obj["metadata"]["namespace"] + "/" + obj["metadata"]["name"]
            if ev["type"] == "DELETED":
                bound.pop(key, None)
            else:
                bound[key] = bool(obj.get("spec", {}).get("nodeName"))
            yield None
    except (OSError, http.client.HTTPException, ValueError):
        return
    finally:
        c.close()


def quantity_milli(v):
    v = str(v)
    if v.endswith("m"):
        return int(v[:-1])
    return int(float(v) * 1000)


def check(api, a):
    problems = []
    nodes = {n["metadata"]["name"]: n for n in api.list_all("/api/v1/nodes")}
    pods = api.list_all("/api/v1/pods")
    used = {}
    for p in pods:
        key = p["metadata"]["namespace"] + "/" + p["metadata"]["name"]
        nn = p.get("spec", {}).get("nodeName")
        if not nn:
            problems.append("pod %s is not bound" % key)
            continue
        if nn not in nodes:
            problems.append("pod %s is bound to a missing node %s" % (key, nn))
            continue
        conds = {c["type"]: c["status"] for c in p.get("status", {}).get("conditions", [])}
        if conds.get("PodScheduled") != "True":
            problems.append("pod %s has no PodScheduled=True" % key)
        cpu = sum(quantity_milli(c.get("resources", {}).get("requests", {}).get("cpu", "0"))
                  for c in p["spec"].get("containers", []))
        u = used.setdefault(nn, [0, 0])
        u[0] += cpu
        u[1] += 1
    for nn, (cpu, count) in used.items():
        alloc = nodes[nn].get("status", {}).get("allocatable", {})
        if cpu > quantity_milli(alloc.get("cpu", "0")):
            problems.append("node %s is overcommitted: %dm cpu requested" % (nn, cpu))
        if count > int(alloc.get("pods", "110")):
            problems.append("node %s holds %d pods" % (nn, count))
    if a.pods is not None and len(pods) != a.pods:
        problems.append("%d pods stored, %d expected" % (len(pods), a.pods))
    if a.nodes is not None and len(nodes) != a.nodes:
        problems.append("%d nodes stored, %d expected" % (len(nodes), a.nodes))
    for pr in problems[:20]:
        print("error: " + pr, file=sys.stderr)
    print("checked %d pods on %d nodes: %d problems" % (len(pods), len(nodes), len(problems)))
    return 1 if problems else 0


def churn(api, a):
    """Rounds of changes while the scheduler runs: what it must follow to converge."""
    rnd = random.Random(a.seed)
    ns = a.namespace
    next_pod = 100000
    next_node = 100000
    errors = []
    for r in range(a.rounds):
        pods = [p for p in api.list_all("/api/v1/namespaces/%s/pods" % ns)]
        nodes = [n["metadata"]["name"] for n in api.list_all("/api/v1/nodes")]
        jobs = []
        for _ in range(20):
            jobs.append(("POST", "/api/v1/namespaces/%s/pods" % ns, pod(ns, next_pod, a.scheduler)))
            next_pod += 1
        for p in rnd.sample(pods, min(10, len(pods))):
            jobs.append(("DELETE", "/api/v1/namespaces/%s/pods/%s" % (ns, p["metadata"]["name"]), None))
        jobs.append(("POST", "/api/v1/nodes", node(next_node)))
        next_node += 1
        errors += parallel(api, jobs)
        for p in rnd.sample(pods, min(10, len(pods))):
            st, _ = api.call("PATCH", "/api/v1/namespaces/%s/pods/%s" % (ns, p["metadata"]["name"]),
                             {"metadata": {"labels": {"round": str(r)}}}, "application/merge-patch+json")
            if st not in (200, 404):
                errors.append("relabel %s: HTTP %d" % (p["metadata"]["name"], st))
        if len(nodes) > 3:
            victim, cordon = rnd.sample(nodes, 2)
            st, _ = api.call("PATCH", "/api/v1/nodes/" + cordon, {"spec": {"unschedulable": True}},
                             "application/merge-patch+json")
            if st != 200:
                errors.append("cordon %s: HTTP %d" % (cordon, st))
            # A node goes, and its pods with it (what the pod garbage collector does). One pass: a
            # binding the scheduler sent before it saw the node go may land after it (the apiserver
            # accepts a binding to any node name); the pod GC finds those later (`gc`).
            api.call("DELETE", "/api/v1/nodes/" + victim)
            for p in api.list_all("/api/v1/pods"):
                if p.get("spec", {}).get("nodeName") == victim:
                    api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (p["metadata"]["namespace"],
                                                                         p["metadata"]["name"]))
    for e in errors[:20]:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


def parse_dump(path):
    """The last cache dump in a log: node -> set of namespace/name."""
    text = open(path, errors="replace").read()
    at = text.rfind("Dump of cached NodeInfo\n")
    if at < 0:
        raise RuntimeError("no cache dump in " + path)
    nodes, current = {}, None
    for line in text[at:].splitlines()[1:]:
        if line.startswith("Node name: "):
            current = line[len("Node name: "):]
            nodes[current] = set()
        elif line.startswith("name: ") and current is not None:
            fields = dict(f.split(": ", 1) for f in line.split(", ") if ": " in f)
            nodes[current].add(fields["namespace"] + "/" + fields["name"])
        elif line.startswith("Dump of cached NodeInfo ends"):
            break
    return nodes


def compare(api, a):
    cache = parse_dump(a.dump)
    nodes = {n["metadata"]["name"] for n in api.list_all("/api/v1/nodes")}
    want = {n: set() for n in nodes}
    for p in api.list_all("/api/v1/pods"):
        nn = p.get("spec", {}).get("nodeName")
        if nn:
            want.setdefault(nn, set()).add(p["metadata"]["namespace"] + "/" + p["metadata"]["name"])
    problems = []
    for n in sorted(set(cache) | set(want)):
        if n not in nodes and n in want:
            # Pods bound to a node the API does not have (a binding that landed after the node's
            # delete): kube-apiserver accepts it, kube's pod GC deletes the pod later. The cache keeps
            # such pods off its snapshot, so the dump cannot show them.
            problems.append("node %s is not in the API, yet pods are bound to it: %s (orphans: `gc` deletes them)" % (
                n, sorted(want[n])[:3]))
        elif n not in cache:
            problems.append("node %s is in the API, not in the cache" % n)
        elif n not in want:
            problems.append("node %s is in the cache, not in the API" % n)
        elif cache[n] != want[n]:
            problems.append("node %s: cache has %d pods, API %d (only in cache: %s; only in API: %s)" % (
                n, len(cache[n]), len(want[n]), sorted(cache[n] - want[n])[:3], sorted(want[n] - cache[n])[:3]))
    for pr in problems[:20]:
        print("error: " + pr, file=sys.stderr)
    print("compared %d nodes, %d bound pods: %d differences" % (
        len(want), sum(len(v) for v in want.values()), len(problems)))
    return 1 if problems else 0


def gc(api, a):
    """kube's pod garbage collector's orphan pass (gcOrphaned): every pod bound to a node the API does
    not have is deleted; the node is checked once more by name before (its quarantine), so a node
    created since the list keeps its pods. Prints how many went."""
    nodes = {n["metadata"]["name"] for n in api.list_all("/api/v1/nodes")}
    errors, deleted = [], []
    for p in api.list_all("/api/v1/pods"):
        nn = p.get("spec", {}).get("nodeName")
        if not nn or nn in nodes:
            continue
        st, _ = api.call("GET", "/api/v1/nodes/" + nn)
        if st != 404:
            continue
        key = p["metadata"]["namespace"] + "/" + p["metadata"]["name"]
        st, _ = api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (p["metadata"]["namespace"], p["metadata"]["name"]))
        if st == 200:
            deleted.append("%s (on %s)" % (key, nn))
        elif st != 404:  # 404: deleted since the list
            errors.append("delete orphan %s: HTTP %d" % (key, st))
    for e in errors[:20]:
        print("error: " + e, file=sys.stderr)
    print("pod GC: %d orphaned pods deleted%s" % (len(deleted), (": " + ", ".join(deleted[:5])) if deleted else ""))
    return 1 if errors else 0


def orphan(api, a):
    """Deletes node --node, then binds pod --pod (NS/NAME, unbound) to it: what a scheduler whose
    informer had not yet seen the delete does, and kube-apiserver accepts (a binding names any node)."""
    ns, name = a.pod.split("/", 1)
    st, body = api.call("DELETE", "/api/v1/nodes/" + a.node)
    if st != 200:
        print("error: delete node %s: HTTP %d %s" % (a.node, st, body.get("message", "")), file=sys.stderr)
        return 1
    binding = {"kind": "Binding", "apiVersion": "v1", "metadata": {"name": name, "namespace": ns},
               "target": {"kind": "Node", "apiVersion": "v1", "name": a.node}}
    st, body = api.call("POST", "/api/v1/namespaces/%s/pods/%s/binding" % (ns, name), binding)
    if st != 201:
        print("error: bind %s to %s: HTTP %d %s" % (a.pod, a.node, st, body.get("message", "")), file=sys.stderr)
        return 1
    return 0


# With --announce, the leader election moments split-log prints, each once, for a test to wait on.
ANNOUNCE = [("successfully acquired lease", "LEADER"), ("not acquired: lock is held by", "STANDBY"),
            ("leaderelection lost", "LOST"), ("released lease", "RELEASED")]


def split_log(a):
    """Copies the scheduler's log (stdin) to DIR/run.err line by line; each cache dump is also cut
    out into DIR/dump.N, and "DUMP N" is printed once it is whole (the test waits on that);
    "SYNCED" is printed once, when the scheduler logs that its informers synced. With
    --announce, the first line of each leader election moment (ANNOUNCE) prints its tag and the
    line's log timestamp, e.g. "LEADER 2026-12-04 11:04:35.128"."""
    n, dump = 0, None
    announced = set()
    with open(a.dir + "/run.err", "w") as log:
        for line in sys.stdin:
            log.write(line)
            log.flush()
            if a.announce:
                for text, tag in ANNOUNCE:
                    if text in line and tag not in announced:
                        announced.add(tag)
                        print("%s %s" % (tag, line[1:24] if line.startswith("[") else "-"), flush=True)
            if "informers synced" in line and "SYNCED" not in announced:
                announced.add("SYNCED")
                print("SYNCED", flush=True)
            if "Dump of cached NodeInfo ends" in line and dump is not None:
                dump.close()
                os.rename(a.dir + "/dump.tmp", "%s/dump.%d" % (a.dir, n))
                print("DUMP %d" % n, flush=True)
                dump = None
                continue
            if "Dump of cached NodeInfo" in line:
                n += 1
                dump = open(a.dir + "/dump.tmp", "w")
            if dump is not None:
                dump.write(line)
    return 0


# Collection paths of the kinds `apply` creates.
COLLECTIONS = {("v1", "Node"): "/api/v1/nodes", ("v1", "Namespace"): "/api/v1/namespaces",
               ("v1", "Pod"): "/api/v1/namespaces/%s/pods", ("v1", "Service"): "/api/v1/namespaces/%s/services",
               ("v1", "ReplicationController"): "/api/v1/namespaces/%s/replicationcontrollers",
               ("apps/v1", "ReplicaSet"): "/apis/apps/v1/namespaces/%s/replicasets",
               ("apps/v1", "StatefulSet"): "/apis/apps/v1/namespaces/%s/statefulsets",
               ("scheduling.k8s.io/v1", "PriorityClass"): "/apis/scheduling.k8s.io/v1/priorityclasses"}


def apply(api, a):
    """Creates the items of a JSON v1 List in order, one at a time."""
    errors = []
    for item in json.load(open(a.file))["items"]:
        path = COLLECTIONS[(item["apiVersion"], item["kind"])]
        if "%s" in path:
            path %= item["metadata"].get("namespace", "default")
        st, resp = api.call("POST", path, item)
        if st not in (200, 201):
            errors.append("%s %s: HTTP %d %s" % (item["kind"], item["metadata"]["name"], st, resp.get("message", "")))
    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


def placements(api, a):
    pods = api.list_all("/api/v1/pods")
    print(json.dumps({p["metadata"]["namespace"] + "/" + p["metadata"]["name"]: p["spec"].get("nodeName", "")
                      for p in pods}, sort_keys=True))
    return 0


def preemption(api, a):
    """Creates the preemptor (the one Pod in --file), follows the pods' watch from before its creation
    until it is bound, then checks what a kube-scheduler preemption writes, in order: the preemptor's
    PodScheduled=False (Unschedulable) condition and status.nominatedNodeName; the victim's
    DisruptionTarget condition before its deletion; the survivor untouched; the preemptor bound."""
    pre = json.load(open(a.file))
    key = pre["metadata"].get("namespace", "default") + "/" + pre["metadata"]["name"]
    st, body = api.call("GET", "/api/v1/pods")
    if st != 200:
        print("error: list pods: HTTP %d" % st, file=sys.stderr)
        return 1
    # Created before the watch is opened, which starts from the list's resourceVersion and so still
    # sees everything after it (the fixture sends a watch's response headers with its first event).
    st, resp = api.call("POST", "/api/v1/namespaces/%s/pods" % key.split("/")[0], pre)
    if st != 201:
        print("error: create %s: HTTP %d %s" % (key, st, resp.get("message", "")), file=sys.stderr)
        return 1
    seen = []  # (what, detail) in watch order
    bound_to = []

    def note(ev):
        obj = ev.get("object", {})
        meta = obj.get("metadata", {})
        k = meta.get("namespace", "") + "/" + meta.get("name", "")
        conds = {c["type"]: c for c in obj.get("status", {}).get("conditions", [])}
        if k == key:
            ps = conds.get("PodScheduled")
            if ps and ps.get("status") == "False":
                seen.append(("unschedulable", ps.get("reason", "") + ": " + ps.get("message", "")))
            if obj.get("status", {}).get("nominatedNodeName"):
                seen.append(("nominated", obj["status"]["nominatedNodeName"]))
            if obj.get("spec", {}).get("nodeName"):
                bound_to.append(obj["spec"]["nodeName"])
                return True
        elif k == a.victim:
            if "DisruptionTarget" in conds:
                seen.append(("disruption-target", conds["DisruptionTarget"].get("reason", "")))
            if ev["type"] == "DELETED":
                seen.append(("victim-deleted", ""))
        elif k == a.survivor and ev["type"] == "DELETED":
            seen.append(("survivor-deleted", ""))
        return False

    if not watch_until(api, "/api/v1/pods", body["metadata"]["resourceVersion"], a.timeout, note):
        print("error: the pod watch ended before %s was bound" % key, file=sys.stderr)
        return 1
    bound_to = bound_to[0]
    whats = [w for w, _ in seen]
    problems = []
    if bound_to != a.node:
        problems.append("%s bound to %r, expected %s" % (key, bound_to, a.node))
    for need in ("unschedulable", "nominated", "disruption-target", "victim-deleted"):
        if need not in whats:
            problems.append("never saw %s" % need)
    if "nominated" in whats and ("nominated", a.node) not in seen:
        problems.append("nominated to another node: %s" % seen)
    if "disruption-target" in whats and "victim-deleted" in whats and \
            whats.index("disruption-target") > whats.index("victim-deleted"):
        problems.append("the victim was deleted before its DisruptionTarget condition")
    if "survivor-deleted" in whats:
        problems.append("%s was evicted, but one victim was enough" % a.survivor)
    for p in problems:
        print("error: " + p, file=sys.stderr)
    for w, d in seen:
        print("%s %s" % (w, d))
    return 1 if problems else 0


def watch_until(api, path, rv, timeout, match):
    """Follows a watch from rv until match(event) is true; returns that event, or None."""
    c = http.client.HTTPSConnection(api.host, api.port, context=api.ctx, timeout=timeout)
    try:
        c.request("GET", path + "?watch=1&resourceVersion=" + rv, headers={"Accept": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            return None
        for line in r:
            ev = json.loads(line)
            if match(ev):
                return ev
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        c.close()
    return None


def event_recreate(api, a):
    """A repeat of an Event that no longer exists creates it again (client-go's recorder does)."""
    ns, name = a.pod.split("/")
    path = "/apis/events.k8s.io/v1/namespaces/%s/events" % ns

    def failed_for_pod(ev):
        o = ev.get("object", {})
        return ev.get("type") in ("ADDED", "MODIFIED") and o.get("reason") == "FailedScheduling" and \
            o.get("regarding", {}).get("name") == name

    st, body = api.call("GET", path)
    if st != 200:
        print("error: list events: HTTP %d" % st, file=sys.stderr)
        return 1
    first = next((e for e in body.get("items", []) if failed_for_pod({"type": "ADDED", "object": e})), None)
    if first is None:
        ev = watch_until(api, path, body["metadata"]["resourceVersion"], a.timeout, failed_for_pod)
        first = ev and ev["object"]
    if not first:
        print("error: no FailedScheduling Event for %s" % a.pod, file=sys.stderr)
        return 1
    ev_name = first["metadata"]["name"]
    st, resp = api.call("DELETE", path + "/" + ev_name)
    if st != 200:
        print("error: delete Event %s: HTTP %d %s" % (ev_name, st, resp.get("message", "")), file=sys.stderr)
        return 1
    rv = resp["metadata"]["resourceVersion"]
    dns, dname = a.delete_pod.split("/")
    st, resp = api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (dns, dname))
    if st != 200:
        print("error: delete pod %s: HTTP %d" % (a.delete_pod, st), file=sys.stderr)
        return 1
    again = watch_until(api, path, rv, a.timeout,
                        lambda ev: failed_for_pod(ev) and ev["object"]["metadata"]["name"] == ev_name)
    if not again:
        print("error: the repeat of %s did not create the deleted Event again" % ev_name, file=sys.stderr)
        return 1
    print("recreated %s with series %s" % (ev_name, json.dumps(again["object"].get("series"))))
    return 0 if again["object"].get("series", {}).get("count", 1) >= 2 else 1


def faults(api, a):
    st, body = api.call("GET", "/debug/faults")
    if st != 200:
        print("error: /debug/faults: HTTP %d" % st, file=sys.stderr)
        return 1
    print(json.dumps(body, sort_keys=True))
    return 0


def list_objects(api, a):
    """Prints every object under --path (a list URL) as {"items": [...]}."""
    print(json.dumps({"items": api.list_all(a.path)}, sort_keys=True))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["create", "wait", "check", "churn", "compare", "gc", "orphan", "faults",
                                            "split-log", "apply", "placements", "preemption", "event-recreate", "list"])
    ap.add_argument("--server")
    ap.add_argument("--certs")
    ap.add_argument("--dir")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--pods", type=int)
    ap.add_argument("--namespace", default="load")
    ap.add_argument("--scheduler", default="default-scheduler")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dump")
    ap.add_argument("--file")
    ap.add_argument("--node")
    ap.add_argument("--victim")
    ap.add_argument("--survivor")
    ap.add_argument("--pod")
    ap.add_argument("--delete-pod")
    ap.add_argument("--announce", action="store_true")
    ap.add_argument("--path")
    a = ap.parse_args()
    if a.command == "split-log":
        return split_log(a)
    api = Api(a.server, a.certs)
    return {"create": create, "wait": wait, "check": check, "churn": churn, "compare": compare, "gc": gc,
            "orphan": orphan, "faults": faults, "apply": apply, "placements": placements,
            "preemption": preemption, "event-recreate": event_recreate, "list": list_objects}[a.command](api, a)


if __name__ == "__main__":
    sys.exit(main())

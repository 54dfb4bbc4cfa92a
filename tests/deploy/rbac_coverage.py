"""deploy.rbac_coverage: every request the scheduler made during the cluster_cli integration cases is
allowed by deploy/'s RBAC, and every rule deploy/ grants the scheduler was used by some request.

    rbac_coverage.py DEPLOY_DIR LOG_DIR CASE...

LOG_DIR holds one request log per case (CASE.jsonl), written by the test apiserver's --request-log
(tests/integration/cluster_cli_test.sh's start_apiserver, when ctest sets KAS_REQUEST_LOG_DIR): one
JSON object per request with userAgent, method, path and query. Only the scheduler's requests count
(a user agent starting "kube-actor-scheduler": its informers, writes and leader elector); kubectl's
and the test driver's are other clients.

Each request is mapped to kube-apiserver's RequestInfo (k8s.io/apiserver's RequestInfoFactory:
verb from the method, list/watch for a GET of a collection, namespace, resource, subresource, name)
and authorized as kube's RBAC authorizer does (rbac/validation RuleAllows): the rules of the
Roles/ClusterRoles deploy/ binds to its ServiceAccount (a RoleBinding's only in its namespace),
plus the built-in rules every authenticated user has (discovery, /version, health).

"Used" is counted per atom: one verb on one resource (or one non-resource URL) of one rule. An atom
no request used fails the test unless EXCEPTIONS names it with the reason no test can exercise it.
An exception of kind "pending" is for a rule whose client code has not landed yet: once a request
uses it, the test fails until the exception is removed, so the list never goes stale.
"""
import collections
import glob
import json
import os
import sys
import urllib.parse

import yaml

SCHEDULER_AGENT = "kube-actor-scheduler"

# Rules every authenticated user has in kube-apiserver's default RBAC (bootstrap policy: the
# ClusterRoles system:discovery and system:public-info-viewer, bound to system:authenticated). They
# allow requests but are not deploy/'s rules, so they are never "unused".
BUILTIN_AUTHENTICATED = [
    {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
                         "/readyz", "/version", "/version/"], "verbs": ["get"]},
]

# Built-in Roles deploy/ binds by name (kube-apiserver creates them; deploy/ does not define them).
BUILTIN_ROLES = {
    ("Role", "kube-system", "extension-apiserver-authentication-reader"): [
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["extension-apiserver-authentication"],
         "verbs": ["get", "list", "watch"]},
    ],
}

# Cases whose scheduler-agent requests are not the deployed scheduler's: left out, with the reason.
EXCLUDED_CASES = {
    "bench-api": "bench --kubeconfig is also the workload's client: it creates the nodes, namespaces and pods "
                 "of a scheduler_perf workload through the same connection settings and user agent, which a "
                 "deployed scheduler never does; its scheduling requests are the same code as run's, which the "
                 "other cases exercise",
    "bench-api-gangs": "the same as bench-api, with PodGroups of both forms among the objects it creates",
}

# Atoms allowed to stay unused: (group, resource, verb) -> (kind, reason). Kinds: "untestable" (no
# test can exercise it deterministically; never reported stale), "pending" (the code that makes
# the request is not in yet) and "uncovered" (the code is in, no cluster_cli case drives it yet).
# A "pending" or "uncovered" atom that a request uses fails the test until it is removed here.
EXCEPTIONS = {
    ("", "pods", "get"): (
        "untestable",
        "a pod is read back only when its binding lost its answer below HTTP (actors/api_cluster.cpp "
        "read_back_binding); the restart case cuts connections every 2 s, but whether a binding is in "
        "flight at a cut is a matter of timing"),
    ("", "persistentvolumeclaims", "update"): (
        "uncovered",
        "VolumeBinding's PreBind PUTs a claim only to set volume.kubernetes.io/selected-node for dynamic "
        "provisioning (a WaitForFirstConsumer StorageClass with a provisioner); the volumes case binds "
        "pre-provisioned volumes only (PV updates), so a dynamic-provisioning case would exercise it"),
    # kube-scheduler's delegated authentication also reads the client CA and request-header settings
    # from kube-system/extension-apiserver-authentication (client-certificate and front-proxy
    # authentication); this build authenticates bearer tokens only (TokenReview), so nothing reads it
    # yet. The RoleBinding is kept as issue #15 asks, for the day certificate authentication comes.
    ("", "configmaps", "get"): (
        "pending",
        "extension-apiserver-authentication-reader: delegated authentication does not read the client CA "
        "from kube-system/extension-apiserver-authentication (bearer tokens only, by TokenReview)"),
    ("", "configmaps", "list"): (
        "pending",
        "extension-apiserver-authentication-reader (as for get): no client-CA informer"),
    ("", "configmaps", "watch"): (
        "pending",
        "extension-apiserver-authentication-reader (as for get): no client-CA informer"),
}

# kube's RequestInfoFactory defaults.
API_PREFIXES = {"api", "apis"}
GROUPLESS_PREFIXES = {"api"}
SPECIAL_VERBS = {"proxy", "watch"}
NAMESPACE_SUBRESOURCES = {"status", "finalize"}
TRUE = {"1", "t", "T", "true", "TRUE", "True"}  # Go's strconv.ParseBool


def request_info(method, path, query):
    """kube-apiserver's RequestInfo for a request, as a dict."""
    q = urllib.parse.parse_qs(query, keep_blank_values=True)
    info = {"resource_request": False, "path": path, "verb": method.lower(), "group": "", "namespace": "",
            "resource": "", "subresource": "", "name": ""}
    parts = [p for p in path.strip("/").split("/")] if path.strip("/") else []
    if len(parts) < 3 or parts[0] not in API_PREFIXES:
        return info
    prefix, parts = parts[0], parts[1:]
    if prefix not in GROUPLESS_PREFIXES:
        if len(parts) < 3:
            return info
        info["group"], parts = parts[0], parts[1:]
    info["resource_request"] = True
    parts = parts[1:]  # the version
    if parts[0] in SPECIAL_VERBS:
        info["verb"], parts = parts[0], parts[1:]
    else:
        info["verb"] = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                        "DELETE": "delete"}.get(method, "")
    if parts[0] == "namespaces":
        if len(parts) > 1:
            info["namespace"] = parts[1]
            if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
                parts = parts[2:]
    info["resource"] = parts[0]
    if len(parts) >= 2:
        info["name"] = parts[1]
    if len(parts) >= 3:
        info["subresource"] = parts[2]
    if not info["name"] and info["verb"] == "get":
        info["verb"] = "watch" if q.get("watch", [""])[0] in TRUE else "list"
        for sel in q.get("fieldSelector", [""])[0].split(","):
            key, eq, value = sel.partition("=")
            if eq and key == "metadata.name" and value:
                info["name"] = value.lstrip("=")
    if not info["name"] and info["verb"] == "delete":
        info["verb"] = "deletecollection"
    return info


def url_matches(rule_url, path):
    if rule_url == "*" or rule_url == path:
        return True
    return rule_url.endswith("*") and path.startswith(rule_url[:-1])


def rule_allows(rule, info):
    """rbac/validation RuleAllows; returns the atoms of the rule the request uses (empty: denied)."""
    verbs = rule.get("verbs", [])
    if info["verb"] not in verbs and "*" not in verbs:
        return []
    if not info["resource_request"]:
        urls = [u for u in rule.get("nonResourceURLs", []) if url_matches(u, info["path"])]
        return [("nonresource", u, info["verb"]) for u in urls]
    if "nonResourceURLs" in rule and "resources" not in rule:
        return []
    groups = rule.get("apiGroups", [])
    if info["group"] not in groups and "*" not in groups:
        return []
    combined = info["resource"] + ("/" + info["subresource"] if info["subresource"] else "")
    resources = rule.get("resources", [])
    hit = [r for r in resources
           if r in ("*", combined) or (info["subresource"] and r == "*/" + info["subresource"])]
    if not hit:
        return []
    names = rule.get("resourceNames", [])
    if names and info["name"] not in names:
        return []
    return [(info["group"], r, info["verb"]) for r in hit]


def load_manifests(deploy_dir):
    docs = []
    for f in sorted(glob.glob(os.path.join(deploy_dir, "*.yaml")) + glob.glob(os.path.join(deploy_dir, "*.yml"))):
        for d in yaml.safe_load_all(open(f)):
            if d:
                d["_file"] = os.path.basename(f)
                docs.append(d)
    return docs


def grants_of(docs):
    """The rules bound to deploy/'s ServiceAccount: [(label, namespace or None, rule, counted)]."""
    sas = [d for d in docs if d["kind"] == "ServiceAccount"]
    if len(sas) != 1:
        sys.exit("deploy/ must define exactly one ServiceAccount, found %d" % len(sas))
    sa = (sas[0]["metadata"]["namespace"], sas[0]["metadata"]["name"])
    roles = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d
             for d in docs if d["kind"] in ("Role", "ClusterRole")}
    grants, bound = [], set()
    for b in docs:
        if b["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        if not any(s.get("kind") == "ServiceAccount" and (s.get("namespace"), s.get("name")) == sa
                   for s in b.get("subjects", [])):
            continue
        ref = b["roleRef"]
        ns = b["metadata"].get("namespace") if b["kind"] == "RoleBinding" else None
        key = (ref["kind"], ns or "" if ref["kind"] == "Role" else "", ref["name"])
        where = "%s %s -> %s %s" % (b["kind"], b["metadata"]["name"], ref["kind"], ref["name"])
        if key in roles:
            bound.add(key)
            rules = roles[key].get("rules", [])
        elif key in BUILTIN_ROLES:
            rules = BUILTIN_ROLES[key]
            where += " (built-in)"
        else:
            sys.exit("%s: %s %s is neither in deploy/ nor a known built-in role" % (where, ref["kind"], ref["name"]))
        for i, r in enumerate(rules):
            grants.append(("%s, rule %d" % (where, i), ns, r, True))
    for key in sorted(set(roles) - bound):
        print("note: %s %s is not bound to the scheduler's ServiceAccount; not checked" % (key[0], key[2]))
    for r in BUILTIN_AUTHENTICATED:
        grants.append(("built-in (system:discovery, system:public-info-viewer)", None, r, False))
    return grants


def atoms_of(rule):
    if "nonResourceURLs" in rule:
        return [("nonresource", u, v) for u in rule["nonResourceURLs"] for v in rule["verbs"]]
    return [(g, r, v) for g in rule.get("apiGroups", []) for r in rule.get("resources", []) for v in rule["verbs"]]


def describe(info):
    if not info["resource_request"]:
        return "%s %s (non-resource)" % (info["verb"], info["path"])
    res = info["resource"] + ("/" + info["subresource"] if info["subresource"] else "")
    return "%s %s%s%s%s" % (info["verb"], (info["group"] + "/") if info["group"] else "core/", res,
                            " in " + info["namespace"] if info["namespace"] else "",
                            " named " + info["name"] if info["name"] else "")


def self_test():
    """RequestInfo and RuleAllows on the request shapes the scheduler sends (ctest deploy.rbac_request_info)."""
    def ri(method, path, query=""):
        i = request_info(method, path, query)
        if not i["resource_request"]:
            return (i["verb"], i["path"])
        return (i["verb"], i["group"], i["resource"], i["subresource"], i["namespace"], i["name"])
    cases = [
        (("GET", "/api/v1/pods", "limit=500&fieldSelector=status.phase%21%3DSucceeded"), ("list", "", "pods", "", "", "")),
        (("GET", "/api/v1/pods", "watch=1&resourceVersion=5"), ("watch", "", "pods", "", "", "")),
        (("GET", "/api/v1/nodes", "watch=true"), ("watch", "", "nodes", "", "", "")),
        (("GET", "/api/v1/nodes", "watch=false"), ("list", "", "nodes", "", "", "")),
        (("GET", "/api/v1/namespaces", ""), ("list", "", "namespaces", "", "", "")),
        (("GET", "/api/v1/namespaces/kube-system", ""), ("get", "", "namespaces", "", "kube-system", "kube-system")),
        (("PUT", "/api/v1/namespaces/x/finalize", ""), ("update", "", "namespaces", "finalize", "x", "x")),
        (("POST", "/api/v1/namespaces/d/pods/p/binding", ""), ("create", "", "pods", "binding", "d", "p")),
        (("PATCH", "/api/v1/namespaces/d/pods/p/status", ""), ("patch", "", "pods", "status", "d", "p")),
        (("DELETE", "/api/v1/namespaces/d/pods/p", ""), ("delete", "", "pods", "", "d", "p")),
        (("DELETE", "/api/v1/namespaces/d/pods", ""), ("deletecollection", "", "pods", "", "d", "")),
        (("GET", "/api/v1/namespaces/d/pods", "fieldSelector=metadata.name%3Dp"), ("list", "", "pods", "", "d", "p")),
        (("POST", "/apis/events.k8s.io/v1/namespaces/d/events", ""), ("create", "events.k8s.io", "events", "", "d", "")),
        (("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", ""),
         ("get", "coordination.k8s.io", "leases", "", "kube-system", "l")),
        (("PUT", "/api/v1/persistentvolumes/pv1", ""), ("update", "", "persistentvolumes", "", "", "pv1")),
        (("GET", "/apis/storage.k8s.io/v1/csinodes", "limit=500"), ("list", "storage.k8s.io", "csinodes", "", "", "")),
        (("GET", "/version", ""), ("get", "/version")),
        (("GET", "/apis/apps/v1", ""), ("get", "/apis/apps/v1")),
        (("GET", "/api/v1", ""), ("get", "/api/v1")),
    ]
    bad = [(args, ri(*args), want) for args, want in cases if ri(*args) != want]
    pod_rule = {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]}
    named = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["a"], "verbs": ["get"]}
    checks = [
        (pod_rule, ("POST", "/api/v1/namespaces/d/pods/p/binding"), True),
        (pod_rule, ("POST", "/api/v1/namespaces/d/pods"), False),  # pods/binding is not pods
        (named, ("GET", "/apis/coordination.k8s.io/v1/namespaces/n/leases/a"), True),
        (named, ("GET", "/apis/coordination.k8s.io/v1/namespaces/n/leases/b"), False),
        (named, ("GET", "/apis/coordination.k8s.io/v1/namespaces/n/leases"), False),  # list has no name
        ({"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["*"]}, ("PATCH", "/api/v1/nodes/n/status"), True),
        (BUILTIN_AUTHENTICATED[0], ("GET", "/version"), True),
        (BUILTIN_AUTHENTICATED[0], ("GET", "/metrics"), False),
    ]
    for rule, (method, path), want in checks:
        if bool(rule_allows(rule, request_info(method, path, ""))) != want:
            bad.append((rule, (method, path), want))
    for b in bad:
        print("MISMATCH:", b)
    if bad:
        sys.exit("%d mismatch(es)" % len(bad))
    print("ok: %d RequestInfo cases, %d rule checks" % (len(cases), len(checks)))


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    deploy_dir, log_dir, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
    grants = grants_of(load_manifests(deploy_dir))
    used = collections.defaultdict(int)  # (grant label, atom) -> requests
    denied = collections.defaultdict(lambda: [0, set()])
    total, logs = 0, []
    for case in cases:
        path = os.path.join(log_dir, case + ".jsonl")
        if not os.path.exists(path):
            print("note: no request log for %s (skipped, or it starts no apiserver)" % case)
            continue
        if case in EXCLUDED_CASES:
            print("excluded: %s: %s" % (case, EXCLUDED_CASES[case]))
            continue
        logs.append(case)
        for n, line in enumerate(open(path), 1):
            try:
                rec = json.loads(line)
            except ValueError:
                sys.exit("%s:%d: not a JSON line: %r" % (path, n, line[:200]))
            if not rec.get("userAgent", "").startswith(SCHEDULER_AGENT):
                continue
            total += 1
            info = request_info(rec["method"], rec["path"], rec.get("query", ""))
            allowed = False
            for label, ns, rule, counted in grants:
                if ns is not None and info["namespace"] != ns:
                    continue
                if ns is not None and not info["resource_request"]:
                    continue
                atoms = rule_allows(rule, info)
                if atoms:
                    allowed = True
                    for a in atoms:
                        used[(label, a)] += 1
            if not allowed:
                d = denied[describe(info)]
                d[0] += 1
                d[1].add(case)
    if not logs:
        sys.exit("no request logs in %s: run the cluster_cli cases first (ctest pulls them in as the "
                 "cluster_request_logs fixture)" % log_dir)
    if total == 0:
        sys.exit("the logs of %s hold no request of the scheduler (user agent %s*)" % (", ".join(logs), SCHEDULER_AGENT))
    print("%d scheduler requests in the logs of %d cases (%s)" % (total, len(logs), ", ".join(logs)))

    failures = []
    for what, (count, in_cases) in sorted(denied.items()):
        failures.append("DENIED: %s (%d requests, in %s): no rule of deploy/ allows it"
                        % (what, count, ", ".join(sorted(in_cases))))
    for label, ns, rule, counted in grants:
        if not counted:
            continue
        for atom in atoms_of(rule):
            n = used.get((label, atom), 0)
            group, resource, verb = atom
            name = "%s %s%s" % (verb, (group + "/") if group and group != "nonresource" else "", resource)
            exc = EXCEPTIONS.get(atom)
            if n:
                if exc and exc[0] != "untestable":
                    failures.append("STALE EXCEPTION: %s is used now (%d requests): remove it from EXCEPTIONS "
                                    "in tests/deploy/rbac_coverage.py" % (name, n))
                else:
                    print("used: %-60s %7d  [%s]" % (name, n, label))
            elif exc:
                print("unused, excepted (%s): %s [%s]: %s" % (exc[0], name, label, exc[1]))
            else:
                failures.append("UNUSED RULE: %s [%s]: no request of the scheduler used it; drop it from deploy/ "
                                "or, if no test can exercise it, add it to EXCEPTIONS with the reason" % (name, label))
    for f in failures:
        print(f)
    if failures:
        sys.exit("%d problem(s)" % len(failures))
    print("ok: every scheduler request is allowed and every rule is used or excepted")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the hand-written hostile inputs of the regression corpus (files named hostile-*).

    python3 tests/fuzz/regressions/make_hostile.py

Each input is something an attacker or a broken tool could hand a decoder; the decoder must answer
with an error (or decode it) quickly and without crashing. Inputs the fuzzers found are kept beside
these under their libFuzzer names (crash-*, timeout-*, oom-*); see README "Fuzzing".
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

YAML_TARGETS = ["cluster_manifests", "yaml_decode", "kube_scheduler_config", "runtime_config", "workload"]


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "hostile-" + name), "wb") as f:
        f.write(data)


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, wire, payload=b""):
    return varint(num << 3 | wire) + payload


def ld(num, payload):  # length-delimited field
    return field(num, 2, varint(len(payload)) + payload)


def billion_laughs(levels=9, width=10, indent=""):
    """YAML lines defining &l0..&l<levels-1>; l<levels-1> expands to width**levels scalars."""
    lines = [f"{indent}l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"{indent}l{i}: &l{i} [" + ", ".join([f"*l{i-1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def main():
    deep_seq = "[" * 10000 + "]" * 10000 + "\n"
    deep_map = '{"a": ' * 3000 + "1" + "}" * 3000 + "\n"  # past yaml-cpp's 2000 and the JSON checker's 512
    for t in YAML_TARGETS:
        # F2: yaml-cpp 0.7's LoadAll never returns on a lone flow-entry token (memory grows).
        write(t, "comma.yaml", ",")
        write(t, "deep-seq.yaml", deep_seq)
        write(t, "deep-map.yaml", deep_map)
        write(t, "empty.yaml", "")
        write(t, "nul-bytes.yaml", b"kind: Pod\x00\x00\nmetadata: {name: \x00}\n")

    # ---- cluster manifests ----
    # F3: the duplicate-key check walks every alias expansion of an unknown field (10^9 nodes).
    write("cluster_manifests", "alias-bomb.yaml",
          "apiVersion: v1\nkind: Pod\nmetadata: {name: bomb}\nspec:\n  containers: [{name: c}]\nlaughs:\n" +
          billion_laughs(indent="  "))
    # An anchor whose alias sits inside itself makes a cyclic node graph in yaml-cpp.
    write("cluster_manifests", "recursive-alias.yaml",
          "apiVersion: v1\nkind: Pod\nmetadata: {name: loop}\nextra: &a [*a]\n")
    write("cluster_manifests", "recursive-alias-map.yaml",
          "apiVersion: v1\nkind: Node\nmetadata: &m {name: loop, labels: {x: y}, self: *m}\n")
    write("cluster_manifests", "list-item-without-kind.yaml", "apiVersion: v1\nkind: List\nitems:\n- {}\n- []\n")
    write("cluster_manifests", "huge-quantity.yaml",
          "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  allocatable:\n"
          "    cpu: 99999999999999999999999999999999999999999999Ei\n    memory: 1e2147483647\n"
          "    pods: -9223372036854775808\n")
    write("cluster_manifests", "deep-unknown-field.yaml",
          "apiVersion: v1\nkind: Pod\nmetadata: {name: deep}\nextra: " + "[" * 1990 + "]" * 1990 + "\n")

    # ---- cluster manifests: the storage kinds (compiled by cache/volume_objects.hpp) ----
    write("cluster_manifests", "storage-pv-huge-capacity.yaml",
          "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\n"
          "spec: {capacity: {storage: 99999999999999999999999999999999999999999999Ei}, accessModes: [ReadWriteOnce]}\n")
    write("cluster_manifests", "storage-pvc-huge-request.yaml",
          "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n"
          "spec: {resources: {requests: {storage: 1e2147483647}}}\n")
    write("cluster_manifests", "storage-capacity-extreme-quantities.yaml",
          "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c}\nstorageClassName: s\n"
          "capacity: -9223372036854775808\nmaximumVolumeSize: 1e-2147483648\n")
    write("cluster_manifests", "storage-csinode-count-overflow.yaml",
          "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n}\n"
          "spec: {drivers: [{name: d, allocatable: {count: 99999999999}}]}\n")
    write("cluster_manifests", "storage-csinode-migrated-plugins.yaml",
          "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata:\n  name: n\n"
          "  annotations: {storage.alpha.kubernetes.io/migrated-plugins: \"" + ", ," * 2000 + " \"}\n"
          "spec: {drivers: [{name: d, allocatable: {count: 0}}]}\n")
    write("cluster_manifests", "storage-empty-claim-name.yaml",
          "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
          "  volumes: [{name: a, persistentVolumeClaim: {claimName: ''}, ephemeral: {}}]\n")
    # Topology terms multiplied by aliases: 40 terms of 40 requirements of 10 values (under
    # load_yaml's alias expansion limit, so the compiler sees them all).
    write("cluster_manifests", "storage-alias-allowed-topologies.yaml",
          "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: p\n"
          "x-values: &v [" + ", ".join(["z"] * 10) + "]\n"
          "x-exprs: &e [" + ", ".join(["{key: k, values: *v}"] * 40) + "]\n"
          "allowedTopologies: [" + ", ".join(["{matchLabelExpressions: *e}"] * 40) + "]\n")

    # ---- protobuf envelope ----
    pod_raw = ld(1, ld(1, b"p"))  # Pod{metadata{name: "p"}}
    type_meta = ld(1, ld(1, b"v1") + ld(2, b"Pod"))
    write("protobuf_envelope", "magic-only.pb", b"k8s\x00")
    write("protobuf_envelope", "no-magic.pb", b"k8s")
    # runtime.Unknown.raw announcing 4 GiB (and 2^63) but holding 3 bytes
    write("protobuf_envelope", "huge-length-prefix.pb", b"k8s\x00" + type_meta + field(2, 2, varint(0xFFFFFFFF)) + b"abc")
    write("protobuf_envelope", "huge-length-prefix-2.pb", b"k8s\x00" + field(2, 2, varint(2**63 - 1)) + b"abc")
    # a valid envelope whose raw Pod holds a metadata field announcing 2 GiB
    write("protobuf_envelope", "huge-inner-length.pb",
          b"k8s\x00" + type_meta + ld(2, field(1, 2, varint(0x7FFFFFFF)) + b"xyz"))
    # 10000 nested start-group tags of an unknown field (kind empty: every type parses it)
    write("protobuf_envelope", "deep-unknown-groups.pb", b"k8s\x00" + ld(2, field(99, 3) * 10000))
    write("protobuf_envelope", "truncated-varint.pb", b"k8s\x00" + b"\x12\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
    write("protobuf_envelope", "content-encoding.pb", b"k8s\x00" + type_meta + ld(2, pod_raw) + ld(3, b"gzip"))

    # ---- JSON ----
    write("json_decode", "comma.json", ",")
    write("json_decode", "deep-array.json", deep_seq)
    write("json_decode", "deep-object.json", deep_map)
    write("json_decode", "empty.json", "")
    # just under the checker's depth limit, inside a RawExtension (WatchEvent.object) and a Pod
    write("json_decode", "deep-watch-object.json",
          '{"type": "ADDED", "object": ' + "[" * 511 + "]" * 511 + "}")
    write("json_decode", "deep-pod-unknown.json",
          '{"kind": "Pod", "x": ' + "[" * 511 + "]" * 511 + "}")
    write("json_decode", "huge-numbers.json",
          '{"kind": "Pod", "metadata": {"name": "p", "generation": 1e999999},'
          ' "spec": {"priority": 99999999999999999999999999,'
          ' "containers": [{"name": "c", "resources": {"requests": {"cpu": "9999999999999999999999999999999Ei"}}}]}}')
    write("json_decode", "bad-utf8-and-escapes.json",
          b'{"kind": "Pod", "metadata": {"name": "\\u0000\xff\xfe", "labels": {"\\ud800": "\xc0\x80"}}}')
    write("json_decode", "unterminated-escape.json", '{"kind": "Pod", "metadata": {"name": "\\u12')

    # ---- YAML objects ----
    # A billion laughs inside a RawExtension (WatchEvent.object is kept as compact JSON text).
    write("yaml_decode", "alias-bomb-raw-extension.yaml",
          "type: ADDED\nobject:\n" + billion_laughs(indent="  "))
    write("yaml_decode", "alias-bomb-pod.yaml",
          "kind: Pod\nmetadata: {name: bomb}\n" + billion_laughs())
    write("yaml_decode", "recursive-alias-raw-extension.yaml", "type: ADDED\nobject: &a [*a]\n")
    write("yaml_decode", "recursive-alias-pod.yaml", "kind: Pod\nmetadata: &m {name: p, x: *m}\nspec: &s {containers: [*s]}\n")
    write("yaml_decode", "tags-and-merge-keys.yaml",
          "kind: Pod\nmetadata: !!map {<<: {name: p}, labels: !!binary aGVsbG8=}\nspec: {priority: !!float .inf}\n")

    # ---- quantities ----
    q = {
        "long-digits": "9" * 20000,
        "long-fraction": "0." + "0" * 20000 + "1",
        "exp-max": "1e2147483647",
        "exp-min": "1e-2147483648",
        "exp-overflow": "1e99999999999999999999",
        "huge-binary": "99999999999999999999999999999999999999Ei",
        "tiny-nano": "0.000000000000000000000000000000000000001n",
        "int64-min": "-9223372036854775808",
        "int64-max-milli": "9223372036854775807",
        "neg-exa": "-9223372036854775807E",
        "sign-only": "-",
        "dot-only": ".",
        "suffix-only": "Ki",
        "empty": "",
        "many-dots": "1.2.3",
        "e-suffix-no-digits": "1e",
        "nul": "1\x00",
    }
    for name, text in q.items():
        write("quantity", name, text)

    # ---- KubeSchedulerConfiguration ----
    ksc = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    # F1: any plugins map reaches `const YAML::Node& set = it->second` (a temporary); ASan reports
    # stack-use-after-scope.
    write("kube_scheduler_config", "plugins-set.yaml",
          ksc + "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n      enabled:\n"
          "      - {name: NodeResourcesFit, weight: 2}\n      disabled:\n      - {name: '*'}\n")
    write("kube_scheduler_config", "alias-bomb-args.yaml",
          ksc + "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: PrioritySort\n    args:\n" +
          billion_laughs(indent="      ") +
          "- schedulerName: b\n  pluginConfig:\n  - name: PrioritySort\n    args: {}\n")
    write("kube_scheduler_config", "recursive-alias-args.yaml",
          ksc + "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: &a {x: *a}\n")
    write("kube_scheduler_config", "two-docs-and-runtime.yaml",
          ksc + "parallelism: 2147483648\n---\napiVersion: kube-actor-scheduler.io/v1alpha1\n"
          "kind: ActorRuntimeConfiguration\nthreads: 99999999999999999999\n")
    write("kube_scheduler_config", "non-scalar-keys.yaml",
          ksc + "? [a, b]\n: 1\nprofiles:\n- ? {x: y}\n  : z\n")

    # ---- ActorRuntimeConfiguration ----
    arc = "apiVersion: kube-actor-scheduler.io/v1alpha1\nkind: ActorRuntimeConfiguration\n"
    write("runtime_config", "non-scalar-key.yaml", arc + "? [threads]\n: 2\n")
    write("runtime_config", "recursive-alias.yaml", arc + "threads: &a [*a]\nbatching: *a\n")
    write("runtime_config", "huge-ints.yaml",
          arc + "threads: 18446744073709551616\nworkers: -1\nbinders: 1e9\npipelineDepth: 0x7fffffff\n")

    # ---- workloads ----
    write("workload", "recursive-alias-ops.yaml",
          "name: w\nops: &o [*o]\n")
    write("workload", "template-is-directory.yaml",
          "name: w\nops:\n- opcode: createNodes\n  count: 1\n  nodeTemplatePath: templates\n"
          "- opcode: createPods\n  count: 1\n  podTemplatePath: .\n  collectMetrics: true\n")
    write("workload", "missing-template.yaml",
          "name: w\nops:\n- opcode: createPods\n  count: 1\n  podTemplatePath: templates/../no/such.yaml\n"
          "  collectMetrics: true\n")
    write("workload", "huge-counts.yaml",
          "name: w\nops:\n- opcode: createNodes\n  count: 99999999999999999999\n"
          "  nodeTemplatePath: templates/node-default.yaml\n- opcode: churn\n  mode: create\n  number: -1\n"
          "  intervalMilliseconds: 0\n  templatePaths: [templates/pod-default.yaml]\n")


if __name__ == "__main__":
    main()

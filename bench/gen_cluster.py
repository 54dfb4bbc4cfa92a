#!/usr/bin/env python3
"""Writes a synthetic cluster manifest for `simulate`: N nodes shaped like scheduler_perf's
node-default template (4 CPU, 32Gi, 110 pods) and P pending pods shaped like its pod-default
template (100m CPU, 500Mi). Used to time `simulate` at scale:

  bench/gen_cluster.py --nodes 5000 --pods 10000 > /tmp/big.yaml
  build/kube-actor-scheduler simulate --cluster /tmp/big.yaml --output json
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--zones", type=int, default=3)
    a = ap.parse_args()
    out = sys.stdout
    for i in range(a.nodes):
        out.write(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%d\n  labels:\n"
            "    kubernetes.io/hostname: node-%d\n    topology.kubernetes.io/zone: zone-%d\n"
            "status:\n  allocatable: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n"
            "  capacity: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n" % (i, i, i % a.zones))
    for i in range(a.pods):
        out.write(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%d\n  namespace: default\n"
            "spec:\n  containers:\n  - name: pause\n    image: registry.k8s.io/pause:3.10\n"
            "    resources:\n      requests: {cpu: 100m, memory: 500Mi}\n" % i)


if __name__ == "__main__":
    main()

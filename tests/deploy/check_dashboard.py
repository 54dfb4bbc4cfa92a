"""The dashboard charts throughput, attempts by result, extension-point latency, mailbox depth per actor,
messages processed per actor and pending pods by queue, with a Grafana schemaVersion it imports into."""
import json
import sys

d = json.load(open(sys.argv[1]))
assert 30 <= d["schemaVersion"] <= 40, d["schemaVersion"]
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
want = [
    'rate(scheduler_schedule_attempts_total{result="scheduled"}[1m])',
    "sum by (result, profile) (rate(scheduler_schedule_attempts_total[1m]))",
    "histogram_quantile(0.99, sum by (le, extension_point) (rate(scheduler_framework_extension_point_duration_seconds_bucket[1m])))",
    "actor_mailbox_depth",
    "rate(actor_messages_processed_total[1m])",
    "scheduler_pending_pods",
]
missing = [w for w in want if not any(w in e for e in exprs)]
assert not missing, missing
ids = [p["id"] for p in d["panels"]]
assert len(ids) == len(set(ids)), ids
print("ok")

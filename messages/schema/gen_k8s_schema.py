#!/usr/bin/env python3
"""Generates the schema table behind strict field checking (strict_fields.cpp) from k8s-fields.tsv.

    gen_k8s_schema.py k8s-fields.tsv OUT.inc

The TSV lists every field of the upstream generated.proto files: package, message, field, number,
label, type. Kubernetes generates its proto field names from the Go `json:` tags, so a proto field
name is the JSON/YAML key, except where this file says otherwise (INLINE below).

What the table needs beyond the TSV, all listed explicitly here so that a change upstream fails the
build instead of silently loosening the check:
- JSON_SCALAR: messages in proto that are scalars in JSON/YAML (a custom MarshalJSON in Go);
- OPAQUE: messages whose JSON value is free-form (nothing under them is checked);
- INLINE: Go structs embedded with `json:",inline"`: the proto has a field for them (named after the
  type, or as the protobuf tag says: Probe's ProbeHandler is `handler`), but in JSON their members
  sit in the enclosing object and the field's own name is not a key;
- which messages embed TypeMeta (apiVersion/kind are keys of theirs): every message with a
  `metadata` of type ObjectMeta/ListMeta, except the templates in NO_TYPE_META, plus EXTRA_TYPE_META.

Maps are `map<K,V>` types (ObjectMeta.labels, ResourceRequirements.requests): their keys are free-form.
Messages named `...Entry` (ManagedFieldsEntry, PreferAvoidPodsEntry) are ordinary messages with
fields, not proto map entries, and are checked like any other.
"""
import sys

META = "k8s.io.apimachinery.pkg.apis.meta.v1"
CORE = "k8s.io.api.core.v1"

SCALAR_TYPES = {
    "double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32",
    "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes",  # bytes: a base64 string
}

# Messages in proto, scalars in JSON/YAML.
JSON_SCALAR = {
    "k8s.io.apimachinery.pkg.api.resource.Quantity",       # "100m", "4Gi" or a number
    "k8s.io.apimachinery.pkg.api.resource.QuantityValue",  # a Quantity
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString",     # 8080 or "http"
    META + ".Time",       # RFC 3339 "2024-01-01T00:00:00Z"
    META + ".MicroTime",  # RFC 3339 with microseconds
    META + ".Duration",   # Go duration string "30s"
}

# Messages whose JSON value is anything: nothing below them is checked.
OPAQUE = {
    "k8s.io.apimachinery.pkg.runtime.RawExtension",  # an embedded object of any kind (List.items and
                                                     # WatchEvent.object; List items are checked by
                                                     # their own apiVersion/kind in strict_fields.cpp)
    META + ".FieldsV1",  # managedFields' field set: {"f:metadata": {"f:labels": {...}}}
    META + ".Verbs",     # []string in Go, wrapped in a message by go-to-protobuf: a list of strings
}

# Go `json:",inline"` embeddings: (message, field).
INLINE = {
    (CORE, "Volume", "volumeSource"),
    (CORE, "PersistentVolumeSpec", "persistentVolumeSource"),
    (CORE, "EphemeralContainer", "ephemeralContainerCommon"),
    (CORE, "Probe", "handler"),  # Go's ProbeHandler, named `handler` in proto
    (CORE, "ConfigMapEnvSource", "localObjectReference"),
    (CORE, "ConfigMapKeySelector", "localObjectReference"),
    (CORE, "ConfigMapProjection", "localObjectReference"),
    (CORE, "ConfigMapVolumeSource", "localObjectReference"),
    (CORE, "SecretEnvSource", "localObjectReference"),
    (CORE, "SecretKeySelector", "localObjectReference"),
    (CORE, "SecretProjection", "localObjectReference"),
    ("k8s.io.apimachinery.pkg.runtime", "Unknown", "typeMeta"),
}

# Have `metadata` but do not embed TypeMeta.
NO_TYPE_META = {CORE + ".PodTemplateSpec", CORE + ".PersistentVolumeClaimTemplate"}
# Embed TypeMeta without having `metadata` (the API's option and discovery kinds).
EXTRA_TYPE_META = {
    META + "." + n for n in (
        "APIGroup", "APIGroupList", "APIResourceList", "APIVersions", "ApplyOptions", "CreateOptions",
        "DeleteOptions", "GetOptions", "ListOptions", "PatchOptions", "TableOptions", "UpdateOptions")
} | {
    CORE + "." + n for n in (
        "NodeProxyOptions", "PodAttachOptions", "PodExecOptions", "PodLogOptions", "PodPortForwardOptions",
        "PodProxyOptions", "SerializedReference", "ServiceProxyOptions")
}
# Kinds without TypeMeta that still come as top-level documents (a watch stream's events).
EXTRA_KINDS = {META + ".WatchEvent"}

SCALAR_CODE = 0xFFFF
OPAQUE_CODE = 0xFFFE
SHAPE_ONE, SHAPE_LIST, SHAPE_MAP = 0, 1, 2


def fail(msg):
    sys.exit("gen_k8s_schema.py: " + msg)


def api_group_version(package):
    """(group, version) of an API package; None for apimachinery's non-API packages."""
    if package == META:
        return ("", "v1")
    prefix = "k8s.io.api."
    if not package.startswith(prefix):
        return None
    group, _, version = package[len(prefix):].rpartition(".")
    legacy = {"core": "", "apps": "apps", "batch": "batch", "autoscaling": "autoscaling",
              "policy": "policy", "extensions": "extensions"}
    return (legacy[group] if group in legacy else group + ".k8s.io", version)


def main():
    if len(sys.argv) != 3:
        fail("usage: gen_k8s_schema.py k8s-fields.tsv OUT.inc")
    tsv, out_path = sys.argv[1], sys.argv[2]
    messages = {}  # full name -> list of (field, label, type)
    with open(tsv, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines or lines[0].split("\t") != ["package", "message", "field", "number", "label", "type"]:
        fail(tsv + ": unexpected header")
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 6:
            fail("%s:%d: expected 6 columns, got %d" % (tsv, n, len(cols)))
        package, message, field, _number, label, type_ = cols
        if label not in ("optional", "repeated", "map", "required"):
            fail("%s:%d: unknown label %r" % (tsv, n, label))
        messages.setdefault(package + "." + message, []).append((package, field, label, type_))

    for name in JSON_SCALAR | OPAQUE | NO_TYPE_META | EXTRA_TYPE_META | EXTRA_KINDS:
        if name not in messages:
            fail("%s is listed in the generator but not in the TSV" % name)

    def resolve(package, type_):
        """Type code: SCALAR_CODE, OPAQUE_CODE, or a message full name."""
        if type_ in SCALAR_TYPES:
            return SCALAR_CODE
        full = type_[1:] if type_.startswith(".") else package + "." + type_
        if full not in messages:
            # A message without fields has no rows in the TSV (scheduling/v1beta1's
            # `SingleDisruptionMode {}`): in JSON it is `{}`, and any key in it is unknown.
            if not full.startswith("k8s.io.api."):
                fail("unresolved type %r (package %s)" % (type_, package))
            empty_messages.add(full)
        if full in JSON_SCALAR:
            return SCALAR_CODE
        if full in OPAQUE:
            return OPAQUE_CODE
        return full

    empty_messages = set()
    inline_seen = set()
    table = {}  # message -> sorted [(field, shape, type, inline)]
    for name, fields in messages.items():
        rows = []
        for package, field, label, type_ in fields:
            if label == "map":
                if not (type_.startswith("map<") and type_.endswith(">")):
                    fail("%s.%s: map field of type %r" % (name, field, type_))
                key, _, value = type_[4:-1].partition(",")
                if key.strip() != "string":
                    fail("%s.%s: map key %r is not a string" % (name, field, key))
                rows.append((field, SHAPE_MAP, resolve(package, value.strip()), False))
                continue
            shape = SHAPE_LIST if label == "repeated" else SHAPE_ONE
            inline = (package, name[len(package) + 1:], field) in INLINE
            t = resolve(package, type_)
            if inline:
                if shape != SHAPE_ONE or t in (SCALAR_CODE, OPAQUE_CODE):
                    fail("%s.%s: an inline field must be a singular message" % (name, field))
                inline_seen.add((package, name[len(package) + 1:], field))
            rows.append((field, shape, t, inline))
        names = [r[0] for r in rows]
        if len(set(names)) != len(names):
            fail("%s: duplicate field names" % name)
        table[name] = sorted(rows, key=lambda r: r[0].encode())
    for name in empty_messages:
        table[name] = []
    for missing in sorted(INLINE - inline_seen):
        fail("inline field %s.%s.%s is not in the TSV" % missing)

    def has_type_meta(name):
        if name in EXTRA_TYPE_META:
            return True
        if name in NO_TYPE_META:
            return False
        return any(f == "metadata" and t in (META + ".ObjectMeta", META + ".ListMeta")
                   for f, _s, t, _i in table[name])

    order = sorted(table, key=lambda n: n.encode())
    index = {n: i for i, n in enumerate(order)}
    if len(order) >= OPAQUE_CODE:
        fail("too many messages for 16-bit type codes")

    pool = []
    offsets = {}

    def intern(s):
        if len(s) > 255 or not s.isascii() or '"' in s or "\\" in s:
            fail("name %r cannot go in the table" % s)
        if s not in offsets:
            offsets[s] = sum(len(p) for p in pool)
            pool.append(s)
        return offsets[s], len(s)

    field_rows, message_rows = [], []
    for name in order:
        first = len(field_rows)
        flags = 0
        if has_type_meta(name):
            flags |= 1
        for field, shape, t, inline in table[name]:
            code = t if isinstance(t, int) else index[t]
            off, ln = intern(field)
            field_rows.append("{%d,%d,%d,%d,%d}" % (off, ln, shape, 1 if inline else 0, code))
            if inline:
                flags |= 2
        off, ln = intern(name)
        message_rows.append("{%d,%d,%d,%d,%d},  // %s" % (off, ln, first, len(field_rows) - first, flags, name))

    kinds = set()
    for name in order:
        if not (has_type_meta(name) or name in EXTRA_KINDS):
            continue
        package, _, kind = name.rpartition(".")
        gv = api_group_version(package)
        if gv is None:
            continue
        kinds.add((kind, gv[0], gv[1], name))
        if package == META:
            kinds.add((kind, "meta.k8s.io", "v1", name))
    # One entry per (kind, group, version): core/v1 wins over meta/v1 (both declare List).
    by_key = {}
    for kind, group, version, name in sorted(kinds, key=lambda k: (k[3] != CORE + "." + k[0], k)):
        by_key.setdefault((kind, group, version), name)
    kind_rows = []
    for (kind, group, version), name in sorted(by_key.items(), key=lambda kv: tuple(s.encode() for s in kv[0])):
        k, g, v = intern(kind), intern(group), intern(version)
        kind_rows.append("{{%d,%d},{%d,%d},{%d,%d},%d},  // %s %s" % (
            k + g + v + (index[name], (group + "/" + version) if group else version, kind)))

    text = "".join(pool)
    chunks = [text[i:i + 100] for i in range(0, len(text), 100)] or [""]
    out = []
    out.append("// Generated by messages/schema/gen_k8s_schema.py from messages/schema/k8s-fields.tsv.")
    out.append("// Do not edit: edit the TSV or the generator. %d messages, %d fields, %d kinds."
               % (len(message_rows), len(field_rows), len(kind_rows)))
    if empty_messages:
        out.append("// Messages without fields (no rows in the TSV): " + ", ".join(sorted(empty_messages)) + ".")
    out.append("namespace kas::schema::gen {")
    out.append("constexpr char names[] =")
    for c in chunks:
        out.append('    "%s"' % c)
    out.append(";")
    out.append("constexpr field_entry fields[] = {")
    for i in range(0, len(field_rows), 6):
        out.append("    " + ",".join(field_rows[i:i + 6]) + ",")
    out.append("};")
    out.append("constexpr message_entry messages[] = {")
    out.extend("    " + r for r in message_rows)
    out.append("};")
    out.append("constexpr kind_entry kinds[] = {  // sorted by (kind, group, version)")
    out.extend("    " + r for r in kind_rows)
    out.append("};")
    out.append("}  // namespace kas::schema::gen")
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

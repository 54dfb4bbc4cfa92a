#!/usr/bin/env python3
# Writes the seed inputs of the watch_stream and api_response fuzz targets (tests/fuzz/seeds/) from
# the real fixtures: watch streams and List bodies in both encodings, as the apiserver frames them.
# Each input's first byte is the target's selector (bit 0: protobuf). Rerun after fixture changes.
import os, struct, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'regressions'))
from make_hostile import ld as field  # noqa: E402  (protobuf length-delimited field)

here = os.path.dirname(os.path.abspath(__file__))
api = os.path.join(here, '..', '..', 'fixtures', 'k8s-api', 'v1.36.0')

def read(name):
    with open(os.path.join(api, name), 'rb') as f:
        return f.read()

def pb_frame(kind, obj):
    ev = field(1, kind.encode()) + field(2, field(1, obj))
    return struct.pack('>I', len(ev)) + ev

def write(target, name, data):
    with open(os.path.join(here, target, name), 'wb') as f:
        f.write(data)

pod_pb, node_pb = read('core.v1.Pod.pb'), read('core.v1.Node.pb')
pod_json = read('core.v1.Pod.json')
status_json = (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
               b'"message":"too old resource version: 1 (5)","reason":"Expired","code":410}')

write('watch_stream', 'pb-pod-events', b'\x01' + pb_frame('ADDED', pod_pb) + pb_frame('MODIFIED', pod_pb)
      + pb_frame('DELETED', pod_pb))
write('watch_stream', 'pb-small-pieces', b'\x03' + pb_frame('ADDED', pod_pb) + pb_frame('BOOKMARK', node_pb))
write('watch_stream', 'json-pod-events', b'\x00' + b'{"type":"ADDED","object":' + pod_json + b'}\n'
      + b'{"type":"MODIFIED","object":' + pod_json + b'}\n')
write('watch_stream', 'json-error-410', b'\x02' + b'{"type":"ERROR","object":' + status_json + b'}\n')

# A List: the envelope's raw is ListMeta (1) and items (2); protobuf items are plain Pods.
def unwrap(pb):  # the raw object bytes inside a "k8s\0" + runtime.Unknown body
    i, raw = 4, b''
    while i < len(pb):
        key = pb[i]; i += 1
        n = shift = 0
        while True:
            b = pb[i]; i += 1
            n |= (b & 0x7f) << shift; shift += 7
            if not b & 0x80:
                break
        if key >> 3 == 2:
            raw = pb[i:i + n]
        i += n
    return raw

def envelope(api_version, kind, raw):
    return b'k8s\x00' + field(1, field(1, api_version.encode()) + field(2, kind.encode())) + field(2, raw) \
        + field(3, b'') + field(4, b'')

pod_raw = unwrap(pod_pb)
list_raw = field(1, field(2, b'4711') + field(3, b'next')) + field(2, pod_raw) + field(2, pod_raw)
write('api_response', 'pb-pod-list', b'\x01' + envelope('v1', 'PodList', list_raw))
write('api_response', 'json-pod-list', b'\x00' + b'{"kind":"PodList","apiVersion":"v1","metadata":'
      b'{"resourceVersion":"4711","continue":"next"},"items":[' + pod_json + b',' + pod_json + b']}')
write('api_response', 'json-status-404', b'\x00' + b'{"kind":"Status","apiVersion":"v1","metadata":{},'
      b'"status":"Failure","message":"pods \\"x\\" not found","reason":"NotFound","code":404}')
write('api_response', 'html-502', b'\x00<html><body>502 Bad Gateway</body></html>')

# The storage Lists the storage informers read (their items are compiled, cache/volume_objects.hpp):
# the real fixtures in both encodings, and valid CSI objects the compilers accept.
for fixture, api_version, kind in (('core.v1.PersistentVolume', 'v1', 'PersistentVolumeList'),
                                   ('core.v1.PersistentVolumeClaim', 'v1', 'PersistentVolumeClaimList'),
                                   ('storage.k8s.io.v1.StorageClass', 'storage.k8s.io/v1', 'StorageClassList')):
    raw = unwrap(read(fixture + '.pb'))
    name = kind.lower().replace('list', '-list')
    write('api_response', 'pb-' + name, b'\x01' + envelope(api_version, kind, field(1, b'') + field(2, raw)))
    write('api_response', 'json-' + name, b'\x00' + b'{"kind":"' + kind.encode() + b'","apiVersion":"'
          + api_version.encode() + b'","metadata":{},"items":[' + read(fixture + '.json') + b']}')
write('api_response', 'json-csi-lists', b'\x00' + b'{"kind":"CSINodeList","apiVersion":"storage.k8s.io/v1",'
      b'"metadata":{},"items":[{"metadata":{"name":"n1"},"spec":{"drivers":[{"name":"ebs.csi.aws.com",'
      b'"nodeID":"i-1","topologyKeys":["topology.kubernetes.io/zone"],"allocatable":{"count":25}}]}},'
      b'{"metadata":{"name":"ebs.csi.aws.com"},"spec":{"attachRequired":false,"storageCapacity":true}},'
      b'{"metadata":{"name":"cap","namespace":"kube-system"},"storageClassName":"fast","capacity":"100Gi",'
      b'"nodeTopology":{"matchLabels":{"topology.kubernetes.io/zone":"z1"}}}]}')

# The PodGroup Lists (both APIs; their items are compiled, cache/pod_group.hpp): upstream's HEAD
# fixture in both encodings, and the Coscheduling CRD's, which the apiserver serves as JSON only.
head = os.path.join(here, '..', '..', 'fixtures', 'k8s-api', 'HEAD')
with open(os.path.join(head, 'scheduling.k8s.io.v1beta1.PodGroup.pb'), 'rb') as f:
    pg_raw = unwrap(f.read())
with open(os.path.join(head, 'scheduling.k8s.io.v1beta1.PodGroup.json'), 'rb') as f:
    pg_json = f.read()
write('api_response', 'pb-podgroup-list',
      b'\x01' + envelope('scheduling.k8s.io/v1beta1', 'PodGroupList', field(1, b'') + field(2, pg_raw)))
write('api_response', 'json-podgroup-list', b'\x00' + b'{"kind":"PodGroupList","apiVersion":"scheduling.k8s.io/v1beta1",'
      b'"metadata":{},"items":[' + pg_json + b']}')
write('api_response', 'json-coscheduling-podgroup-list', b'\x00' + b'{"kind":"PodGroupList",'
      b'"apiVersion":"scheduling.x-k8s.io/v1alpha1","metadata":{"resourceVersion":"7"},"items":['
      b'{"metadata":{"name":"a","namespace":"n"},"spec":{"minMember":3,"scheduleTimeoutSeconds":30,'
      b'"minResources":{"cpu":"1500m","memory":"2Gi","nvidia.com/gpu":"2"}}},'
      b'{"metadata":{"name":"b","namespace":"n"},"spec":{"minMember":-1}}]}')

#!/usr/bin/env python3
"""A scripted list/watch server for the reflector tests (tests/client/reflector_test.cpp): a small
in-memory pod collection served like the apiserver serves one, over Python's HTTPS server (HTTP/1.1,
keep-alive, chunked watch streams), in JSON or protobuf by the request's Accept header. Prints its
port on the first line of stdout.

  list_watch_peer.py --cert F --key F

Collection: GET /api/v1/pods?limit=N[&continue=T]  and  GET /api/v1/pods?watch=1&resourceVersion=RV
(every object change bumps the collection's resourceVersion and is kept in an event log; a watch
replays the log after RV, then follows it until timeoutSeconds, a close, or the end of the process).

Control (POST, query parameters; answers {"rv": N}):
  /control/put?name=&node=[&ns=][&quiet=1]     create or update (a new uid when created)
  /control/delete?name=[&ns=][&quiet=1]        delete
  /control/recreate?name=[&ns=][&quiet=1]      delete and create again (a new uid)
  quiet=1 changes the collection without logging an event (as if the log were compacted past it)
  /control/compact     forget the event log: watches from an older RV get an ERROR 410 event
  /control/bookmark    a BOOKMARK event at a new RV (as if another resource had changed)
  /control/close       end every open watch stream cleanly
  /control/gone?mode=http|event   the next watch gets HTTP 410, or an ERROR event with a 410 Status
  /control/gone?mode=error        the next watch gets an ERROR event with a 500 Status
  /control/dup         the next watch also resends the last event at its resourceVersion
  /control/expire      every continue token issued so far answers 410 Expired
  /control/fail?what=list|watch&n=N&code=C   the next N such requests answer C with a Status
  /control/garbage?what=list|watch            the next such response carries an undecodable body
  /control/hold, /control/release  list requests wait (arrived, unanswered) until released
  GET /control/stats   counters and the last request paths, as JSON
  /control/await_watches?n=N   the stats once N watch requests have arrived (30 s at most)
"""
import argparse
import http.server
import json
import ssl
import struct
import sys
import threading
import time
import urllib.parse

PROTO = 'application/vnd.kubernetes.protobuf'

# ---- protobuf by hand: just the fields the reflector reads ----


def varint(n):
    out = b''
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def int_field(num, n):
    return varint(num << 3) + varint(n)


def envelope(kind, raw):
    # runtime.Unknown{typeMeta{apiVersion, kind}, raw} after the "k8s\0" magic.
    return b'k8s\x00' + field(1, field(1, 'v1') + field(2, kind)) + field(2, raw)


def pod_pb(o):
    meta = field(1, o['name']) + field(3, o['ns']) + field(5, o['uid']) + field(6, str(o['rv']))
    return field(1, meta) + field(2, field(10, o['node']))


def status_pb(code, reason, message):
    return field(2, 'Failure') + field(3, message) + field(4, reason) + int_field(6, code)


def pod_json(o):
    return {'kind': 'Pod', 'apiVersion': 'v1',
            'metadata': {'name': o['name'], 'namespace': o['ns'], 'uid': o['uid'], 'resourceVersion': str(o['rv'])},
            'spec': {'nodeName': o['node']}}


def status_json(code, reason, message):
    return {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
            'message': message, 'reason': reason, 'code': code}


# ---- the collection ----

class Store:
    def __init__(self):
        self.cv = threading.Condition()
        self.objects = {}        # ns/name -> object dict
        self.rv = 100
        self.uids = 0
        self.log = []            # (rv, type, object snapshot)
        self.compacted = 100     # watches from an RV below this are too old
        self.close_epoch = 0
        self.gone_mode = None
        self.token_epoch = 0
        self.fail = {'list': [], 'watch': []}
        self.garbage = {'list': False, 'watch': False}
        self.hold_lists = False
        self.dup = False
        self.stats = {'lists': 0, 'watches': 0, 'lastList': '', 'lastWatch': '', 'openWatches': 0}

    def change(self, kind, o, quiet):
        self.rv += 1
        o['rv'] = self.rv
        if not quiet:
            self.log.append((self.rv, kind, dict(o)))
        self.cv.notify_all()

    def put(self, ns, name, node, quiet):
        key = ns + '/' + name
        o = self.objects.get(key)
        if o is None:
            self.uids += 1
            o = {'ns': ns, 'name': name, 'uid': 'uid-%d' % self.uids, 'node': node}
            self.objects[key] = o
            self.change('ADDED', o, quiet)
        else:
            o['node'] = node
            self.change('MODIFIED', o, quiet)

    def delete(self, ns, name, quiet):
        o = self.objects.pop(ns + '/' + name, None)
        if o is not None:
            self.change('DELETED', o, quiet)


STORE = Store()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def proto(self):
        return PROTO in self.headers.get('Accept', '')

    def reply(self, code, data, ctype):
        if isinstance(data, str):
            data = data.encode()
        self.send_response(code)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def reply_status(self, code, reason, message):
        if self.proto():
            self.reply(code, envelope('Status', status_pb(code, reason, message)), PROTO)
        else:
            self.reply(code, json.dumps(status_json(code, reason, message)), 'application/json')

    def chunk(self, data):
        self.wfile.write(b'%x\r\n%s\r\n' % (len(data), data))
        self.wfile.flush()

    def event(self, kind, obj=None, status=None):
        if self.proto():
            raw = envelope('Status', status_pb(*status)) if status else envelope('Pod', pod_pb(obj))
            frame = field(1, kind) + field(2, field(1, raw))
            return struct.pack('>I', len(frame)) + frame
        o = status_json(*status) if status else pod_json(obj)
        return (json.dumps({'type': kind, 'object': o}) + '\n').encode()

    # ---- list ----

    def list_pods(self, q):
        s = STORE
        with s.cv:
            s.stats['lists'] += 1
            s.stats['lastList'] = self.path
            s.stats['lastAccept'] = self.headers.get('Accept', '')
            failing = s.fail['list'].pop(0) if s.fail['list'] else None
            garbage, s.garbage['list'] = s.garbage['list'], False
            while s.hold_lists:  # a list in flight, for as long as the test needs one
                s.cv.wait()
        if failing:
            return self.reply_status(failing, 'InternalError', 'failing as asked')
        if garbage:
            return self.reply(200, b'k8s\x00\xff\xff\xff garbage' if self.proto() else '{"items": [ {"metadata": 7',
                              PROTO if self.proto() else 'application/json')
        limit = int(q.get('limit', ['0'])[0])
        cont = q.get('continue', [''])[0]
        with s.cv:
            if cont:
                epoch, offset, rv = (int(x) for x in cont.split(':'))
                if epoch != s.token_epoch:
                    return self.reply_status(410, 'Expired', 'the continue token has expired')
            else:
                offset, rv = 0, s.rv
            # Pages come from the current state; tests do not change the collection mid-list.
            items = [s.objects[k] for k in sorted(s.objects)]
            page = items[offset:offset + limit] if limit else items[offset:]
            nxt = '%d:%d:%d' % (s.token_epoch, offset + len(page), rv) if limit and offset + limit < len(items) else ''
            body = self.list_body(page, rv, nxt)
        self.reply(200, body, PROTO if self.proto() else 'application/json')

    def list_body(self, page, rv, nxt):
        if self.proto():
            meta = field(2, str(rv)) + (field(3, nxt) if nxt else b'')
            return envelope('PodList', field(1, meta) + b''.join(field(2, pod_pb(o)) for o in page))
        meta = {'resourceVersion': str(rv)}
        if nxt:
            meta['continue'] = nxt
        return json.dumps({'kind': 'PodList', 'apiVersion': 'v1', 'metadata': meta,
                           'items': [pod_json(o) for o in page]})

    # ---- watch ----

    def watch_pods(self, q):
        s = STORE
        rv = int(q.get('resourceVersion', ['0'])[0] or 0)
        timeout = int(q.get('timeoutSeconds', ['300'])[0])
        with s.cv:
            s.stats['watches'] += 1
            s.stats['lastWatch'] = self.path
            s.cv.notify_all()  # /control/await_watches
            failing = s.fail['watch'].pop(0) if s.fail['watch'] else None
            garbage, s.garbage['watch'] = s.garbage['watch'], False
            gone, s.gone_mode = s.gone_mode, None
            if s.dup:  # resend the event at rv itself, as a server may at the boundary
                rv, s.dup = rv - 1, False
            epoch = s.close_epoch
        if failing:
            return self.reply_status(failing, 'InternalError', 'failing as asked')
        if gone == 'http':
            return self.reply_status(410, 'Gone', 'too old resource version: %d' % rv)
        self.send_response(200)
        self.send_header('Content-Type', PROTO + ';stream=watch' if self.proto() else 'application/json')
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()
        try:
            if garbage:
                self.chunk(b'\x00\x00\x00\x05\xff\xff\xff\xff\xff' if self.proto() else b'{"type": "ADDED", "object": 5}\n')
            elif gone == 'error':
                self.chunk(self.event('ERROR', status=(500, 'InternalError', 'etcd is sulking')))
            elif gone == 'event' or rv < s.compacted:
                self.chunk(self.event('ERROR', status=(410, 'Expired', 'too old resource version: %d' % rv)))
            else:
                self.follow(rv, epoch, time.monotonic() + timeout)
            self.wfile.write(b'0\r\n\r\n')
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True

    def follow(self, rv, epoch, deadline):
        # Replays the log after rv, then follows it. Bookmarks are for the watches open when they
        # are made, never replayed.
        s = STORE
        with s.cv:
            s.stats['openWatches'] += 1
            i = 0
            first_new = len(s.log)
        try:
            while True:
                with s.cv:
                    while i >= len(s.log) and s.close_epoch == epoch and time.monotonic() < deadline:
                        s.cv.wait(0.05)
                    if s.close_epoch != epoch or time.monotonic() >= deadline:
                        return
                    entries = list(enumerate(s.log[i:], start=i))
                    i = len(s.log)
                data = b''
                for at, (erv, kind, o) in entries:
                    if kind == 'BOOKMARK':
                        if at >= first_new:
                            data += self.event('BOOKMARK', {'ns': '', 'name': '', 'uid': '', 'rv': erv, 'node': ''})
                    elif erv > rv:
                        data += self.event(kind, o)
                if data:
                    self.chunk(data)
        finally:
            with s.cv:
                s.stats['openWatches'] -= 1

    # ---- control ----

    def control(self, path, q):
        s = STORE
        arg = lambda k, d='': q.get(k, [d])[0]
        quiet = arg('quiet') == '1'
        with s.cv:
            if path == 'put':
                s.put(arg('ns', 'default'), arg('name'), arg('node'), quiet)
            elif path == 'delete':
                s.delete(arg('ns', 'default'), arg('name'), quiet)
            elif path == 'recreate':
                s.delete(arg('ns', 'default'), arg('name'), quiet)
                s.put(arg('ns', 'default'), arg('name'), arg('node'), quiet)
            elif path == 'compact':
                s.log = []
                s.compacted = s.rv
                s.close_epoch += 1
            elif path == 'bookmark':
                s.rv += 1  # as if another resource changed: the bookmark moves past every event
                s.log.append((s.rv, 'BOOKMARK', None))
            elif path == 'close':
                s.close_epoch += 1
            elif path == 'gone':
                s.gone_mode = arg('mode', 'event')
            elif path == 'dup':
                s.dup = True
            elif path == 'expire':
                s.token_epoch += 1
            elif path == 'fail':
                s.fail[arg('what')] += [int(arg('code', '500'))] * int(arg('n', '1'))
            elif path == 'garbage':
                s.garbage[arg('what')] = True
            elif path == 'hold':
                s.hold_lists = True
            elif path == 'release':
                s.hold_lists = False
            elif path == 'stats':
                return self.reply(200, json.dumps(s.stats), 'application/json')
            elif path == 'await_watches':
                # The client counts a watch once it has started the request; the peer once the
                # request has arrived. Tests that read the watch's path wait for the latter.
                n = int(arg('n', '1'))
                s.cv.wait_for(lambda: s.stats['watches'] >= n, timeout=30)
                return self.reply(200, json.dumps(s.stats), 'application/json')
            else:
                return self.reply(404, 'no such control', 'text/plain')
            s.cv.notify_all()
            rv = s.rv
        self.reply(200, json.dumps({'rv': rv}), 'application/json')

    def handle_any(self):
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        length = int(self.headers.get('Content-Length') or 0)
        if length:
            self.rfile.read(length)
        if url.path.startswith('/control/'):
            self.control(url.path[len('/control/'):], q)
        elif url.path == '/api/v1/pods' and q.get('watch', [''])[0] in ('1', 'true'):
            self.watch_pods(q)
        elif url.path == '/api/v1/pods':
            self.list_pods(q)
        else:
            self.reply(404, 'no such endpoint', 'text/plain')

    do_GET = do_POST = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cert', required=True)
    ap.add_argument('--key', required=True)
    a = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    srv.daemon_threads = True
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(srv.server_address[1], flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), srv.shutdown()), daemon=True).start()
    srv.serve_forever(poll_interval=0.05)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""The HTTP peer of the transport tests (tests/client/http_transport_test.cpp): Python's own HTTPS
server, HTTP/1.1 with keep-alive, so the client's TLS, authentication and streaming are checked
against an independent implementation. Prints its port on the first line of stdout.

  http_peer.py --cert F --key F [--client-ca F]   (client certificates required when --client-ca)

Endpoints: /echo (the request as JSON), /stream?n=N (N JSON lines, 20 ms apart, chunked),
/forever (a line every 50 ms until the client goes), /status/CODE (a metav1.Status), /sleep?ms=N.
"""
import argparse
import http.server
import json
import ssl
import sys
import threading
import time
import urllib.parse


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def reply(self, code, body, ctype='application/json'):
        data = body.encode()
        self.send_response(code)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def chunk(self, text):
        data = text.encode()
        self.wfile.write(b'%x\r\n%s\r\n' % (len(data), data))
        self.wfile.flush()

    def handle_any(self):
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length).decode() if length else ''
        if url.path == '/echo':
            cert = self.connection.getpeercert() if hasattr(self.connection, 'getpeercert') else None
            cn = ''
            for rdn in (cert or {}).get('subject', ()):
                for k, v in rdn:
                    if k == 'commonName':
                        cn = v
            self.reply(200, json.dumps({
                'method': self.command, 'path': self.path, 'body': body,
                'authorization': self.headers.get('Authorization', ''),
                'contentType': self.headers.get('Content-Type', ''),
                'accept': self.headers.get('Accept', ''),
                'userAgent': self.headers.get('User-Agent', ''),
                'clientCN': cn,
                'connection': id(self.connection),
            }))
        elif url.path in ('/stream', '/forever'):
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Transfer-Encoding', 'chunked')
            self.end_headers()
            n = int(q.get('n', ['5'])[0])
            i = 0
            try:
                while url.path == '/forever' or i < n:
                    self.chunk(json.dumps({'i': i}) + '\n')
                    i += 1
                    time.sleep(0.05 if url.path == '/forever' else 0.02)
                self.wfile.write(b'0\r\n\r\n')
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                self.close_connection = True
        elif url.path.startswith('/status/'):
            code = int(url.path.rsplit('/', 1)[1])
            self.reply(code, json.dumps({'kind': 'Status', 'apiVersion': 'v1', 'metadata': {},
                                         'status': 'Failure', 'message': 'as asked',
                                         'reason': 'NotFound' if code == 404 else 'InternalError',
                                         'code': code}))
        elif url.path == '/sleep':
            time.sleep(int(q.get('ms', ['1000'])[0]) / 1000)
            self.reply(200, '{}')
        else:
            self.reply(404, 'no such endpoint', 'text/plain')

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cert', required=True)
    ap.add_argument('--key', required=True)
    ap.add_argument('--client-ca')
    a = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    if a.client_ca:
        ctx.load_verify_locations(a.client_ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    srv.daemon_threads = True
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(srv.server_address[1], flush=True)
    # Stop when the test closes our stdin (or dies).
    threading.Thread(target=lambda: (sys.stdin.read(), srv.shutdown()), daemon=True).start()
    srv.serve_forever(poll_interval=0.05)


if __name__ == '__main__':
    main()

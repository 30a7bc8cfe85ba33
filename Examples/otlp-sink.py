#!/usr/bin/env python3
"""A stand-in OTLP/HTTP collector for `Examples/run --otlp`: it takes what an exporter
POSTs to /v1/traces (or any /v1/ path), answers 200 with an empty protobuf message, and
keeps each request's path, content type and body in the folder given, for the run to
check. It decodes nothing: the protobuf's strings (span names, attribute keys and
values) are in the bytes as UTF-8, which is what the run looks for.

    otlp-sink.py FOLDER      # writes FOLDER/port once listening, FOLDER/requests, FOLDER/bodies
"""
import http.server
import os
import sys

folder = sys.argv[1]


class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        with open(os.path.join(folder, "requests"), "a") as requests:
            requests.write(f"{self.path} {self.headers.get('Content-Type')} {len(body)}\n")
        with open(os.path.join(folder, "bodies"), "ab") as bodies:
            bodies.write(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
with open(os.path.join(folder, "port.tmp"), "w") as port:
    port.write(str(server.server_address[1]))
os.rename(os.path.join(folder, "port.tmp"), os.path.join(folder, "port"))
server.serve_forever()

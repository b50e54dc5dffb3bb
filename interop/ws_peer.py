"""An independent WebSocket/HTTP peer for the Swift transport tests (Python `websockets`).

Started by the Swift tests (Tests/TransportTests/PythonPeer.swift) as
`.venv/bin/python interop/ws_peer.py`. It makes a throwaway CA and a server certificate for
`localhost` / 127.0.0.1 (with `cryptography`), listens on 127.0.0.1 with ws, wss, http and https,
prints one JSON line {"ws", "wss", "http", "https", "raw", "wss_wrong_host", "ca_der",
"other_ca_der"} (wss_wrong_host: a certificate from the same CA for another host name) and serves until its
standard input closes (so it never outlives the test process).

WebSocket behaviour, chosen by the `params` query item ("mode"):
  first, the server sends a JSON text message describing the handshake it saw
  {"path", "query", "offered", "selected"[, "headers": {lowercased X-* request fields}]}; then, by mode:
  echo (default)      echo every message with its type
  fragment:N          echo every message split into N-byte fragments
  close:CODE:REASON   close with CODE and REASON
  abort               drop the TCP connection without a closing handshake
  silent              send nothing more
  ping                ping, wait for the pong, send text "pong-received", then echo
  closeinfo:MODE      send {"code", "reason"} of the client's close frame on the last connection
                      whose mode was MODE (any other mode echoes, and records how it was closed)
  wrongproto          (handshake) select a subprotocol the client did not offer
  noproto             (handshake) select no subprotocol
  reject:STATUS       (handshake) answer with HTTP STATUS instead of 101
Raw port ("raw": a hand-written server for what `websockets` will not do), by `params`:
  masked      after the upgrade, send a masked binary frame (clients must fail with 1002)
  badutf8     send a text frame that is not UTF-8 (1007)
  huge        send a frame header announcing 2**40 bytes (1009, before any payload)
  noclose     send one binary frame, then never answer a close frame
  noread      never read anything after the upgrade (the client's sends back up)
  extension   answer the upgrade with an extension that was not offered
  badaccept   answer the upgrade with a wrong Sec-WebSocket-Accept
  stall       accept TCP, never answer the upgrade
HTTP POST (any path), by `params`: echo (body back), info (JSON of method, path, query,
authorization, content-type, length), chunked (body back, chunked), status:N (empty body, status N).
"""

import asyncio
import base64
import hashlib
import datetime
import http.server
import json
import os
import shutil
import socket
import ssl
import sys
import tempfile
import threading
import urllib.parse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
import ipaddress

from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.http11 import Response

MAX_SIZE = 64 * 1024 * 1024


def make_ca(name):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_server_cert(ca_key, ca_cert, names=("localhost",), ips=("127.0.0.1",)):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def tls_context(directory):
    ca_key, ca_cert = make_ca("SilentShard test CA")
    _, other_ca = make_ca("Unrelated test CA")
    key, cert = make_server_cert(ca_key, ca_cert)
    paths = {name: os.path.join(directory, name) for name in ("server.pem", "server.key", "ca.der", "other.der")}
    with open(paths["server.pem"], "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.key"], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with open(paths["ca.der"], "wb") as f:
        f.write(ca_cert.public_bytes(serialization.Encoding.DER))
    with open(paths["other.der"], "wb") as f:
        f.write(other_ca.public_bytes(serialization.Encoding.DER))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(paths["server.pem"], paths["server.key"])
    # Same CA, but a certificate for another host: host-name verification must refuse it.
    wrong_key, wrong_cert = make_server_cert(ca_key, ca_cert, names=("other.invalid",), ips=())
    with open(paths["server.pem"], "wb") as f:
        f.write(wrong_cert.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.key"], "wb") as f:
        f.write(wrong_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    wrong_host = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    wrong_host.load_cert_chain(paths["server.pem"], paths["server.key"])
    return context, wrong_host, paths["ca.der"], paths["other.der"]


def mode_of(path):
    query = urllib.parse.urlparse(path).query
    values = urllib.parse.parse_qs(query).get("params", ["echo"])
    return values[0]


def select_subprotocol(connection, offered):
    mode = mode_of(connection.request.path)
    if mode == "wrongproto":
        return "not-" + (offered[0] if offered else "anything")
    if mode == "noproto":
        return None
    return offered[0] if offered else None


def process_request(connection, request):
    mode = mode_of(request.path)
    if mode.startswith("reject:"):
        status = int(mode.split(":", 1)[1])
        return connection.respond(status, "rejected by test peer\n")
    return None


def process_response(connection, request, response):
    # websockets refuses to select an unoffered subprotocol itself; force it for the mismatch test.
    if mode_of(request.path) == "wrongproto" and response.status_code == 101:
        offered = request.headers.get_all("Sec-WebSocket-Protocol")
        del response.headers["Sec-WebSocket-Protocol"]
        response.headers["Sec-WebSocket-Protocol"] = "not-" + (offered[0] if offered else "anything")
    return None


CLOSES = {}


async def handler(connection):
    try:
        await serve_connection(connection)
    finally:
        mode = mode_of(connection.request.path)
        rcvd = connection.protocol.close_rcvd
        CLOSES[mode] = {"code": rcvd.code if rcvd else None, "reason": rcvd.reason if rcvd else None}


async def serve_connection(connection):
    path = connection.request.path
    parsed = urllib.parse.urlparse(path)
    mode = mode_of(path)
    hello = {
        "path": parsed.path,
        "query": parsed.query,
        "offered": connection.request.headers.get_all("Sec-WebSocket-Protocol"),
        "selected": connection.subprotocol,
    }
    # Extra fields a client added to its upgrade request (X-*), only when there are some.
    extra = {name.lower(): value for name, value in connection.request.headers.raw_items() if name.lower().startswith("x-")}
    if extra:
        hello["headers"] = extra
    await connection.send(json.dumps(hello))
    if mode.startswith("close:"):
        _, code, reason = mode.split(":", 2)
        await connection.close(int(code), reason)
        return
    if mode == "abort":
        connection.transport.abort()
        return
    if mode.startswith("closeinfo:"):
        key = mode.split(":", 1)[1]
        for _ in range(100):
            if key in CLOSES:
                break
            await asyncio.sleep(0.01)
        await connection.send(json.dumps(CLOSES.get(key)))
        await connection.wait_closed()
        return
    if mode == "silent":
        await connection.wait_closed()
        return
    if mode == "ping":
        pong = await connection.ping()
        await pong
        await connection.send("pong-received")
    fragment = int(mode.split(":", 1)[1]) if mode.startswith("fragment:") else None
    async for message in connection:
        if fragment:
            chunks = [message[i:i + fragment] for i in range(0, len(message), fragment)] or [message[:0]]
            await connection.send(chunks)
        else:
            await connection.send(message)


async def raw_handler(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1]
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        mode = mode_of(path)
        if mode == "stall":
            await reader.read()
            return
        accept = base64.b64encode(hashlib.sha1((headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        if mode == "badaccept":
            accept = base64.b64encode(b"x" * 20).decode()
        response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        response += f"Sec-WebSocket-Accept: {accept}\r\n"
        if "sec-websocket-protocol" in headers:
            response += f"Sec-WebSocket-Protocol: {headers['sec-websocket-protocol']}\r\n"
        if mode == "extension":
            response += "Sec-WebSocket-Extensions: permessage-deflate\r\n"
        writer.write((response + "\r\n").encode())
        if mode == "masked":
            writer.write(bytes([0x82, 0x82, 1, 2, 3, 4, 1 ^ 9, 2 ^ 9]))
        elif mode == "badutf8":
            writer.write(bytes([0x81, 0x02, 0xC0, 0x80]))
        elif mode == "huge":
            writer.write(bytes([0x82, 127, 0, 0, 1, 0, 0, 0, 0, 0]))
        elif mode == "noclose":
            writer.write(bytes([0x82, 0x01, 0x2A]))
        await writer.drain()
        if mode == "noread":
            # A small fixed receive buffer (no autotuning): the client's sends back up after a few
            # hundred kilobytes whatever the host's tcp_rmem, and stay blocked for the whole test.
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            await asyncio.sleep(600)
            return
        await reader.read()  # until the client closes
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


class PostHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        parsed = urllib.parse.urlparse(self.path)
        mode = mode_of(self.path)
        if mode.startswith("status:"):
            self.send_response(int(mode.split(":", 1)[1]))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "info":
            body = json.dumps({
                "method": self.command,
                "path": parsed.path,
                "query": parsed.query,
                "authorization": self.headers.get("Authorization"),
                "content_type": self.headers.get("Content-Type"),
                "length": length,
            }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if mode == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 1000):
                chunk = body[i:i + 1000]
                self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


def start_http(context):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PostHandler)
    server.daemon_threads = True
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


async def main():
    directory = tempfile.mkdtemp(prefix="ws-peer-")
    context, wrong_host, ca_der, other_der = tls_context(directory)
    options = dict(
        select_subprotocol=select_subprotocol,
        process_request=process_request,
        process_response=process_response,
        compression=None,
        max_size=MAX_SIZE,
        ping_interval=None,
    )
    async with serve(handler, "127.0.0.1", 0, **options) as plain, \
            serve(handler, "127.0.0.1", 0, ssl=context, **options) as secure, \
            serve(handler, "127.0.0.1", 0, ssl=wrong_host, **options) as secure_wrong_host, \
            await asyncio.start_server(raw_handler, "127.0.0.1", 0) as raw:
        ports = {
            "ws": plain.sockets[0].getsockname()[1],
            "wss": secure.sockets[0].getsockname()[1],
            "http": start_http(None),
            "https": start_http(context),
            "raw": raw.sockets[0].getsockname()[1],
            "wss_wrong_host": secure_wrong_host.sockets[0].getsockname()[1],
            "ca_der": ca_der,
            "other_ca_der": other_der,
        }
        print(json.dumps(ports), flush=True)
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, sys.stdin.read)
        finally:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())

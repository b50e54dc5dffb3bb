"""Misbehaving clients against a SilentShard node (used by Tests/CloudNodeServerTests).

usage: node_raw_client.py PORT MAX_MESSAGE_SIZE
Runs each scenario against ws://127.0.0.1:PORT and prints one JSON object: scenario -> outcome
(a short string such as "status 400", "closed 1009", "echo ok", "dropped"). The node is expected to
answer every misbehaviour cleanly and keep serving ("echo ok" at the end).
"""
import asyncio
import base64
import json
import os
import socket
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidHandshake

PORT = int(sys.argv[1])
LIMIT = int(sys.argv[2])
BASE = f"ws://127.0.0.1:{PORT}"


def raw_exchange(payload: bytes, read_after=True) -> str:
    with socket.create_connection(("127.0.0.1", PORT), timeout=300) as s:
        s.sendall(payload)
        if not read_after:
            return "sent"
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                if b"\r\n\r\n" in data and not data.startswith(b"HTTP/1.1 101"):
                    break
                if data.startswith(b"HTTP/1.1 101") and len(data) > data.index(b"\r\n\r\n") + 4:
                    break
        except (ConnectionResetError, socket.timeout):
            pass
        if not data:
            return "dropped"
        line = data.split(b"\r\n", 1)[0].decode("latin-1")
        if line.startswith("HTTP/1.1 101"):
            body = data[data.index(b"\r\n\r\n") + 4:]
            # A server close frame: 0x88, length, code.
            if len(body) >= 4 and body[0] == 0x88:
                return f"closed {int.from_bytes(body[2:4], 'big')}"
            return "upgraded"
        return "status " + line.split(" ")[1] if " " in line else "garbage reply"


def upgrade_request(path: str, protocol: str) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n").encode()


async def ws_outcome(path, protocols, messages, expect_reply=True):
    try:
        async with connect(BASE + path, subprotocols=protocols, max_size=None, compression=None,
                           open_timeout=300, close_timeout=5) as ws:
            for message in messages:
                await ws.send(message)
            if not expect_reply:
                await ws.wait_closed()
                return f"closed {ws.close_code}"
            reply = await asyncio.wait_for(ws.recv(), 300)
            return "echo ok" if reply == messages[-1] else "echo wrong"
    except InvalidStatus as error:
        return f"status {error.response.status_code}"
    except ConnectionClosed as error:
        return f"closed {error.rcvd.code if error.rcvd else 'none'}"
    except InvalidHandshake as error:
        return f"handshake {type(error).__name__}"


async def main():
    results = {}
    results["garbage_bytes"] = raw_exchange(b"\x16\x03\x01garbage\x00\xff" * 50 + b"\r\n\r\n")
    results["bad_http"] = raw_exchange(b"BREW /coffee HTCPCP/1.0\r\n\r\n")
    results["wrong_subprotocol"] = await ws_outcome("/v3/ecdsa/keygen", ["chat"], [b"x"])
    results["foreign_subprotocol"] = await ws_outcome("/v3/ecdsa/keygen", ["trio"], [b"x"])
    results["no_subprotocol"] = await ws_outcome("/v3/trio/sign", None, [b"x"])
    results["unknown_route"] = await ws_outcome("/v3/rsa/keygen", ["duo-instance"], [b"x"])
    results["oversized"] = await ws_outcome("/v3/ecdsa/sign", ["duo-instance"], ["tok", os.urandom(LIMIT + 1)], expect_reply=False)
    # A frame with a reserved opcode (0x3) right after a valid upgrade.
    results["bad_frame"] = raw_exchange(upgrade_request("/v3/eddsa/sign", "duo-instance") + bytes([0x83, 0x80, 1, 2, 3, 4]))
    # Half a frame header, then hang up.
    results["truncated"] = raw_exchange(upgrade_request("/v3/trio/eddsa/sign", "trio") + bytes([0x82, 0xFF]), read_after=False)
    results["good_after"] = await ws_outcome("/v3/trio/eddsa/keygen", ["trio"], ["tok", b"hello node"])
    print(json.dumps(results))


asyncio.run(main())

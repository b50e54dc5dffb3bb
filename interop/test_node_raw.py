"""A raw Python client (`websockets` and plain sockets) against a real `silentshard node` serving the duo
routes: misbehaving clients get clean, spec-conformant rejections and the node keeps serving.

Needs SILENTSHARD_BIN (the `silentshard` binary; scripts/test sets it) and the interop binary (for a
well-formed SETUP). REJECTs are parsed per docs/protocol/session.md §3.1/§4.5 and their node signatures (label
`reject`) checked with `cryptography`'s Ed25519.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import time
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from conftest import REPO_ROOT
from node_process import (KIND_ACCEPT, KIND_REJECT, MALFORMED, REPLAY, UNSUPPORTED_VERSION, WRONG_CLUSTER,
                          NodeProcess, parse_reject, parse_signed_frame, parse_tlv, setup_request)

MAX_MESSAGE = 1 << 20
TIMEOUT = 120
ZEROS = bytes(32)


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    value = os.environ.get("SILENTSHARD_BIN")
    if not value:
        pytest.skip("SILENTSHARD_BIN is not set: point it at the built `silentshard` binary "
                    "(scripts/test sets SILENTSHARD_BIN=$PWD/.build/debug/silentshard)")
    binary = Path(value) if Path(value).is_absolute() else REPO_ROOT / value
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.fail(f"SILENTSHARD_BIN={binary} is not an executable; build it with `swift build --product silentshard`")
    process = NodeProcess(binary, tmp_path_factory.mktemp("node"), MAX_MESSAGE)
    yield process
    assert process.stop() == 0, "the node did not exit cleanly on SIGTERM"


def now_ms() -> int:
    return int(time.time() * 1000)


async def _exchange(base: str, path: str, messages: list, protocols=("duo-instance",), first_only=False):
    """Sends `messages`, then collects what the node sends until it closes (or only its first message).
    Returns (received messages, close code or None)."""
    async with connect(base + path, subprotocols=list(protocols) if protocols else None, max_size=None,
                       compression=None, open_timeout=TIMEOUT, close_timeout=10) as ws:
        received = []
        try:
            for message in messages:
                await ws.send(message)
            while True:
                received.append(await asyncio.wait_for(ws.recv(), TIMEOUT))
                if first_only:
                    return received, None
        except ConnectionClosed:
            pass
        await ws.wait_closed()
        return received, ws.close_code


def exchange(node, path, messages, **options):
    return asyncio.run(_exchange(node.base, path, messages, **options))


def handshake_status(node, path, protocols) -> int:
    try:
        exchange(node, path, [b"x"], protocols=protocols)
    except InvalidStatus as error:
        return error.response.status_code
    return 101


def expect_reject(node, received, close_code, code, instance_id=ZEROS):
    """One signed REJECT frame (session.md §4.5) with `code`, then close 1008."""
    assert len(received) == 1 and isinstance(received[0], bytes), received
    frame, rest = parse_signed_frame(received[0])
    assert rest == b""
    assert (frame.version, frame.kind, frame.sender, frame.receiver, frame.tag, frame.reserved, frame.seq) == \
        (1, KIND_REJECT, 1, 0, 0, 0, 0)
    assert frame.instance_id == instance_id
    reject = parse_reject(frame.payload)
    assert reject.code == code, f"code 0x{reject.code:04x}, expected 0x{code:04x}"
    assert reject.node_key == node.node_key and reject.certificate is None
    assert frame.signed_by(node.node_key, "reject")
    # The signature is over the `reject` label only: the same bytes under another label do not verify.
    assert not frame.signed_by(node.node_key, "accept")
    assert close_code == 1008
    return reject


def raw_upgrade(node, path: str, protocol: str) -> socket.socket:
    key = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{node.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n")
    sock = socket.create_connection(("127.0.0.1", node.port), timeout=TIMEOUT)
    sock.sendall(request.encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, "connection closed during the handshake"
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head[:80]
    return sock


# MARK: - Garbage SETUPs get a signed REJECT, then close 1008

def test_garbage_with_version_1_is_malformed(node):
    garbage = bytes([1, 0x7F]) + os.urandom(200)  # version 1, unknown kind
    received, close = exchange(node, "/v3/ecdsa/keygen", [garbage])
    reject = expect_reject(node, received, close, MALFORMED)
    assert reject.setup_hash == ZEROS and reject.detail == b""


def test_garbage_of_an_unknown_version_is_unsupported_version(node):
    received, close = exchange(node, "/v3/eddsa/sign", [b"GET / HTTP/1.1 garbage " * 8])
    reject = expect_reject(node, received, close, UNSUPPORTED_VERSION)
    # session.md §10 (v3): u8 count ‖ session versions (1) ‖ u8 count ‖ SETUP protocol versions (3)
    assert reject.detail == bytes([1, 1, 1, 3])


def test_setup_header_of_an_unknown_version_gets_its_instance_id_echoed(node):
    # Second security review, finding 12 (session.md §4.5): a SETUP header (frozen kind byte 0x01) of a session version
    # the node does not speak still names its session at offset 16; the signed UNSUPPORTED_VERSION echoes it, so the
    # app can bind the refusal to its own session. Anything else of an unknown version is answered with zeros (above).
    instance_id = bytes(range(1, 33))
    header = bytes([0x7F, 0x01, 0, 0xFF]) + bytes(12) + instance_id
    received, close = exchange(node, "/v3/ecdsa/keygen", [header + bytes(64)])
    reject = expect_reject(node, received, close, UNSUPPORTED_VERSION, instance_id=instance_id)
    assert reject.detail == bytes([1, 1, 1, 3])


def test_truncated_setup_header_is_malformed(node, interop):
    setup = setup_request(interop, node.node_key, now_ms())
    received, close = exchange(node, "/v3/ecdsa/keygen", [setup["frame"][:20]])
    expect_reject(node, received, close, MALFORMED)


def test_setup_cut_after_its_header_is_malformed_and_names_the_session(node, interop):
    setup = setup_request(interop, node.node_key, now_ms())
    received, close = exchange(node, "/v3/ecdsa/keygen", [setup["frame"][:48 + 10]])
    expect_reject(node, received, close, MALFORMED, instance_id=setup["instance_id"])


def test_wrong_cloud_key_is_wrong_cluster(node, interop):
    setup = setup_request(interop, os.urandom(32), now_ms())
    received, close = exchange(node, "/v3/ecdsa/keygen", [setup["frame"]])
    expect_reject(node, received, close, WRONG_CLUSTER, instance_id=setup["instance_id"])


def test_a_reject_of_a_parsed_setup_binds_its_setup_hash(node, interop):
    setup = setup_request(interop, os.urandom(32), now_ms())
    received, close = exchange(node, "/v3/ecdsa/keygen", [setup["frame"]])
    reject = expect_reject(node, received, close, WRONG_CLUSTER, instance_id=setup["instance_id"])
    assert reject.setup_hash == setup["setup_hash"]


# MARK: - Transport-level misbehaviour

def test_oversized_message_closes_1009(node):
    received, close = exchange(node, "/v3/ecdsa/sign", [os.urandom(MAX_MESSAGE + 1)])
    assert received == [] and close == 1009


def test_wrong_or_missing_subprotocol_is_refused_400(node):
    assert handshake_status(node, "/v3/ecdsa/keygen", ["chat"]) == 400
    assert handshake_status(node, "/v3/ecdsa/keygen", ["trio"]) == 400
    assert handshake_status(node, "/v3/eddsa/refresh", None) == 400


def test_unknown_route_is_404(node):
    assert handshake_status(node, "/v3/rsa/keygen", ["duo-instance"]) == 404
    assert handshake_status(node, "/v3/ecdsa/frobnicate", ["duo-instance"]) == 404
    assert handshake_status(node, "/v2/ecdsa/keygen", ["duo-instance"]) == 404


def test_text_after_the_first_message_closes_1002(node):
    # The first text message is the token (auth none accepts it); a second text message is MALFORMED.
    received, close = exchange(node, "/v3/ecdsa/keygen", ["token", "not a frame"])
    assert received == [] and close == 1002


def test_half_a_frame_then_hang_up(node):
    sock = raw_upgrade(node, "/v3/ecdsa/keygen", "duo-instance")
    sock.sendall(bytes([0x82, 0x85]) + os.urandom(4) + b"\x01\x01")  # masked binary frame: 2 of 5 bytes
    sock.close()
    sock = raw_upgrade(node, "/v3/eddsa/keygen", "duo-instance")
    sock.sendall(bytes([0x82, 0xFE]))  # a header cut inside its extended length
    sock.close()
    assert node.alive()


# MARK: - A well-formed SETUP gets a proper answer; the node keeps serving

def accept_for(node, setup) -> None:
    received, _ = exchange(node, "/v3/ecdsa/keygen", [setup["frame"]], first_only=True)
    frame, _ = parse_signed_frame(received[0])  # ACCEPT may share its bundle with the node's round-1 frames
    assert (frame.version, frame.kind, frame.sender, frame.receiver) == (1, KIND_ACCEPT, 1, 0xFF)
    assert frame.instance_id == setup["instance_id"]
    fields = parse_tlv(frame.payload)
    assert fields[0x01] == setup["setup_hash"] and fields[0x02] == node.node_key and len(fields[0x04]) == 64
    assert frame.signed_by(node.node_key, "accept")


def test_a_well_formed_setup_gets_a_signed_accept_and_a_replay_is_refused(node, interop):
    setup = setup_request(interop, node.node_key, now_ms())
    accept_for(node, setup)
    received, close = exchange(node, "/v3/ecdsa/keygen", [setup["frame"]])
    expect_reject(node, received, close, REPLAY, instance_id=setup["instance_id"])


def test_after_all_of_it_the_node_still_serves(node, interop):
    with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/health", timeout=TIMEOUT) as response:
        assert response.status == 200 and response.read().strip() == b"ok"
    accept_for(node, setup_request(interop, node.node_key, now_ms()))
    assert node.alive()
